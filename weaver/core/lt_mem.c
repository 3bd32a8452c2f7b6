/* lt_mem.c - the array grower and the out-of-memory error (see lt_mem.h). */
#include "lt_mem.h"
#include "lt_error.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
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

int lt_nomem(const char *what, ...)
{
	char buf[200];
	va_list ap;

	if (!what)
		return lt_error_set(LT_E_NOMEM, "out of memory");
	va_start(ap, what);
	vsnprintf(buf, sizeof buf, what, ap);
	va_end(ap);
	return lt_error_set(LT_E_NOMEM, "out of memory (%s)", buf);
}

int lt_grow(void *arr, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap > SIZE_MAX / 2 ? SIZE_MAX : *cap ? *cap * 2 : 16;
	void *p, *old;

	if (need <= *cap)
		return 0;
	/* Doubling keeps appends amortized; a larger request gets just what it
	 * asks for (writers that know their size reserve once). */
	if (ncap < need)
		ncap = need;
	if (size && ncap > SIZE_MAX / size)
		return lt_nomem("array past the address space");
	memcpy(&old, arr, sizeof old);
	if (!(p = lt_realloc(old, ncap * size)))
		return lt_nomem("%zu bytes", ncap * size);
	memcpy(arr, &p, sizeof p);
	*cap = ncap;
	return 0;
}
