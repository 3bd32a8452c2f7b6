/* lt_buf.c - growable byte buffer (see lt_buf.h). */
#include "lt_buf.h"
#include "lt_mem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int lt_buf_reserve(struct lt_buf *b, size_t n)
{
	if (n > SIZE_MAX - b->len)
		return lt_nomem("buffer size overflows");
	return lt_grow(&b->data, &b->cap, b->len + n, 1);
}

int lt_buf_put(struct lt_buf *b, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	if (lt_buf_reserve(b, n) < 0)
		return -1;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

int lt_buf_zero(struct lt_buf *b, size_t n)
{
	if (n == 0)
		return 0;
	if (lt_buf_reserve(b, n) < 0)
		return -1;
	memset(b->data + b->len, 0, n);
	b->len += n;
	return 0;
}

int lt_buf_u8(struct lt_buf *b, uint8_t v) { return lt_buf_put(b, &v, 1); }

int lt_buf_u16(struct lt_buf *b, uint16_t v)
{
	uint8_t p[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	return lt_buf_put(b, p, 2);
}

int lt_buf_u32(struct lt_buf *b, uint32_t v)
{
	uint8_t p[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
	return lt_buf_put(b, p, 4);
}

int lt_buf_u64(struct lt_buf *b, uint64_t v)
{
	if (lt_buf_u32(b, (uint32_t)v) < 0)
		return -1;
	return lt_buf_u32(b, (uint32_t)(v >> 32));
}

int lt_buf_align(struct lt_buf *b, size_t align)
{
	size_t pad = (align - (b->len & (align - 1))) & (align - 1);
	return lt_buf_zero(b, pad);
}

void lt_buf_free(struct lt_buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

int lt_buf_printf(struct lt_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return lt_error_set(LT_E_NOMEM, "text cannot be formatted");
	if (lt_buf_reserve(b, (size_t)n + 1) < 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}
