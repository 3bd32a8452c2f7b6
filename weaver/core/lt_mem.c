/* lt_mem.c - the array grower and the out-of-memory error (see lt_mem.h). */
#include "lt_mem.h"
#include "lt_error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Allocations since lt_mem_fail_at, and the one to fail (-1: none). */
static long made, fail_at = -1;

/* Whether this allocation is the one to fail. */
static int failing(void)
{
	return made++ == fail_at;
}

long lt_mem_fail_at(long n)
{
	long was = made;

	made = 0;
	fail_at = n;
	return was;
}

void *lt_malloc(size_t n)
{
	return failing() ? NULL : malloc(n);
}

void *lt_calloc(size_t n, size_t size)
{
	return failing() ? NULL : calloc(n, size);
}

void *lt_realloc(void *p, size_t n)
{
	return failing() ? NULL : realloc(p, n);
}

char *lt_strdup(const char *s)
{
	return failing() ? NULL : strdup(s);
}

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
	if (!(p = lt_realloc(old, ncap * size)))
		return lt_nomem(NULL);
	memcpy(arr, &p, sizeof p);
	*cap = ncap;
	return 0;
}
