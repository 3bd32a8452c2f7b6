/* lt_mem.h - the one array grower and the one out-of-memory path of LockTime. */
#ifndef LT_MEM_H
#define LT_MEM_H

#include <stddef.h>

/* Record LT_E_NOMEM, "out of memory" with what was being allocated
 * ("out of memory (<what>)"; what NULL: none), and return -1. */
int lt_nomem(const char *what);

/* Make room for `need` elements of `size` bytes in the array *(void **)arr
 * of *cap elements: the capacity doubles (from 16) until it holds need, the
 * byte count checked against overflow; the elements kept.  Returns 0, or -1
 * with LT_E_NOMEM (*arr and *cap unchanged). */
int lt_grow(void *arr, size_t *cap, size_t need, size_t size);

#endif
