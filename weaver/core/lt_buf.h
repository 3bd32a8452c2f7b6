/* lt_buf.h - a growable byte buffer for building output (heaps, bodies, images). */
#ifndef LT_BUF_H
#define LT_BUF_H

#include <stddef.h>
#include <stdint.h>

#include "lt_error.h" /* LT_PRINTF */

struct lt_buf {
	uint8_t *data; /* owned; NULL while empty */
	size_t len;    /* bytes written */
	size_t cap;    /* bytes allocated */
};

#define LT_BUF_INIT { NULL, 0, 0 }

/* Append n bytes / a little-endian integer.  Return 0, or -1 with LT_E_NOMEM
 * (the buffer is unchanged) when memory runs out or the size would overflow. */
int lt_buf_put(struct lt_buf *b, const void *p, size_t n);
int lt_buf_u8(struct lt_buf *b, uint8_t v);
int lt_buf_u16(struct lt_buf *b, uint16_t v);
int lt_buf_u32(struct lt_buf *b, uint32_t v);
int lt_buf_u64(struct lt_buf *b, uint64_t v);

/* Append text formatted as by printf (no NUL).  Returns 0, or -1 with LT_E_NOMEM. */
int lt_buf_printf(struct lt_buf *b, const char *fmt, ...) LT_PRINTF(2, 3);

/* Append n zero bytes. */
int lt_buf_zero(struct lt_buf *b, size_t n);

/* Append zero bytes until len is a multiple of `align` (a power of two). */
int lt_buf_align(struct lt_buf *b, size_t align);

/* Ensure room for n more bytes without changing len. */
int lt_buf_reserve(struct lt_buf *b, size_t n);

/* Release the memory; the buffer is empty afterwards.  NULL is a no-op. */
void lt_buf_free(struct lt_buf *b);

#endif
