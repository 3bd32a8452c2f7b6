/* lt_mem.c - the array grower and the out-of-memory error (see lt_mem.h). */
#include "lt_mem.h"
#include "lt_error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int lt_nomem(const char *what)
{
	return what ? lt_error_set(LT_E_NOMEM, "out of memory (%s)", what) : lt_error_set(LT_E_NOMEM, "out of memory");
}

int lt_grow(void *arr, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap ? *cap : 16;
	void *p, *old;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return lt_nomem("array past the address space");
		ncap *= 2;
	}
	if (size && ncap > SIZE_MAX / size)
		return lt_nomem("array past the address space");
	memcpy(&old, arr, sizeof old);
	if (!(p = realloc(old, ncap * size)))
		return lt_nomem(NULL);
	memcpy(arr, &p, sizeof p);
	*cap = ncap;
	return 0;
}
