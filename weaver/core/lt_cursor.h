/* lt_cursor.h - bounded little-endian reads from a byte range in memory.
 *
 * Every read of file data goes through a cursor: a (pointer, length, position)
 * triple.  A read that would pass the end fails with the code chosen by the
 * caller (the `code` argument of lt_cur_init) and leaves the
 * position unchanged, so a parser can report what it was reading.  Offsets are
 * widened to 64 bits before they are added, so no length in a file can wrap.
 */
#ifndef LT_CURSOR_H
#define LT_CURSOR_H

#include <stddef.h>
#include <stdint.h>

struct lt_cur {
	const uint8_t *data; /* first byte of the range (borrowed) */
	size_t len;          /* bytes in the range */
	size_t pos;          /* next byte to read, 0..len */
	int code;            /* lt_code recorded when a read passes the end */
	const char *what;    /* what the range holds, for messages ("#Blob") */
};

/* A cursor over data[0..len); `code` and `what` name failures. */
struct lt_cur lt_cur_init(const uint8_t *data, size_t len, int code, const char *what);

/* Bytes left after the position. */
static inline size_t lt_cur_left(const struct lt_cur *c) { return c->len - c->pos; }

/* Fixed-size little-endian reads.  Return 0, or -1 (error recorded) when
 * fewer bytes than needed are left.  u8, u16 and u32 are inline (below):
 * every IL and table byte goes through them. */
static inline int lt_cur_u8(struct lt_cur *c, uint8_t *out);
static inline int lt_cur_u16(struct lt_cur *c, uint16_t *out);
static inline int lt_cur_u32(struct lt_cur *c, uint32_t *out);
int lt_cur_u64(struct lt_cur *c, uint64_t *out);

/* Record that a read of `need` bytes at c's position passes the end (the
 * error of c's code).  For the inline readers; returns -1. */
int lt_cur_short(const struct lt_cur *c, uint64_t need);

/* Skip n bytes / point *out at the next n bytes (borrowed) and skip them. */
int lt_cur_skip(struct lt_cur *c, size_t n);
int lt_cur_bytes(struct lt_cur *c, size_t n, const uint8_t **out);

/* A cursor over the n bytes at absolute offset `off` of c's range (c's
 * position is not used or moved).  Fails when off + n passes the end. */
int lt_cur_sub(const struct lt_cur *c, uint64_t off, uint64_t n, struct lt_cur *out);

/* Move to absolute offset `off` (0..len). */
int lt_cur_seek(struct lt_cur *c, uint64_t off);

/* Little-endian loads from a pointer the caller has already bounds-checked. */
static inline uint16_t lt_le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t lt_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline void lt_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void lt_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}

/* The next n bytes, the position moved past them; NULL (error recorded,
 * position kept) when fewer are left.  The inline readers' one check. */
static inline const uint8_t *lt_cur_next(struct lt_cur *c, size_t n)
{
	if (lt_cur_left(c) < n) {
		lt_cur_short(c, n);
		return NULL;
	}
	c->pos += n;
	return c->data + c->pos - n;
}

static inline int lt_cur_u8(struct lt_cur *c, uint8_t *out)
{
	const uint8_t *p = lt_cur_next(c, 1);
	return p ? (*out = p[0], 0) : -1;
}

static inline int lt_cur_u16(struct lt_cur *c, uint16_t *out)
{
	const uint8_t *p = lt_cur_next(c, 2);
	return p ? (*out = lt_le16(p), 0) : -1;
}

static inline int lt_cur_u32(struct lt_cur *c, uint32_t *out)
{
	const uint8_t *p = lt_cur_next(c, 4);
	return p ? (*out = lt_le32(p), 0) : -1;
}

#endif
