/* lt_mem.h - the one array grower and the one out-of-memory path of LockTime,
 * and its allocations, which a test can make fail one by one. */
#ifndef LT_MEM_H
#define LT_MEM_H

#include <stddef.h>

#include "lt_error.h"

/* Record LT_E_NOMEM, "out of memory" with what was being allocated
 * ("out of memory (<what>)", what a printf format for the arguments that
 * follow; NULL: plain "out of memory"), and return -1.  The one
 * out-of-memory message of the library. */
int lt_nomem(const char *what, ...) LT_PRINTF(1, 2);

/* Make room for `need` elements of `size` bytes in the array *(void **)arr
 * of *cap elements: the capacity doubles (from 16), or becomes need when
 * that is more, the byte count checked against overflow; the elements kept.  Returns 0, or -1
 * with LT_E_NOMEM (*arr and *cap unchanged). */
int lt_grow(void *arr, size_t *cap, size_t need, size_t size);

/* malloc, calloc, realloc and strdup, through which the library allocates
 * (all but the two strndup calls of lt_file_posix.c; zlib's, libzip's,
 * Mini-XML's and Mbed TLS's own aside), so that a test can fail any
 * one of them (lt_mem_fail_at).  Each returns NULL when its
 * C library function does or when it is the allocation to fail (a
 * realloc then leaves its block as it was). */
void *lt_malloc(size_t n);
void *lt_calloc(size_t n, size_t size);
void *lt_realloc(void *p, size_t n);
char *lt_strdup(const char *s);

/* Tests: the allocation `n` allocations from now (0: the next one) fails,
 * the others succeed; n < 0 fails none (the default).  Returns how many
 * allocations were made since the last call (a test runs its work once with
 * n < 0 to count them). */
long lt_mem_fail_at(long n);

#endif
