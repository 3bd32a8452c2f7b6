/* lt_cursor.c - bounded reads (see lt_cursor.h). */
#include "lt_cursor.h"
#include "lt_error.h"

#include <string.h>

struct lt_cur lt_cur_init(const uint8_t *data, size_t len, int code, const char *what)
{
	struct lt_cur c = { data, len, 0, code, what ? what : "data" };
	return c;
}

int lt_cur_short(const struct lt_cur *c, uint64_t need)
{
	return lt_error_set(c->code, "%s: need %llu bytes at offset 0x%zx, %zu left",
			    c->what, (unsigned long long)need, c->pos, lt_cur_left(c));
}

int lt_cur_bytes(struct lt_cur *c, size_t n, const uint8_t **out)
{
	if (n > lt_cur_left(c))
		return lt_cur_short(c, n);
	*out = c->data + c->pos;
	c->pos += n;
	return 0;
}

int lt_cur_skip(struct lt_cur *c, size_t n)
{
	const uint8_t *p = NULL;
	return lt_cur_bytes(c, n, &p);
}

int lt_cur_u64(struct lt_cur *c, uint64_t *out)
{
	const uint8_t *p = NULL;
	if (lt_cur_bytes(c, 8, &p) < 0)
		return -1;
	*out = (uint64_t)lt_le32(p) | (uint64_t)lt_le32(p + 4) << 32;
	return 0;
}

int lt_cur_sub(const struct lt_cur *c, uint64_t off, uint64_t n, struct lt_cur *out)
{
	/* off and n come from the file: compare without adding first. */
	if (off > c->len || n > c->len - off)
		return lt_error_set(c->code, "%s: range 0x%llx+0x%llx passes the end (0x%zx bytes)",
				    c->what, (unsigned long long)off, (unsigned long long)n, c->len);
	*out = lt_cur_init(c->data + off, (size_t)n, c->code, c->what);
	return 0;
}

int lt_cur_seek(struct lt_cur *c, uint64_t off)
{
	if (off > c->len)
		return lt_error_set(c->code, "%s: offset 0x%llx passes the end (0x%zx bytes)",
				    c->what, (unsigned long long)off, c->len);
	c->pos = (size_t)off;
	return 0;
}
