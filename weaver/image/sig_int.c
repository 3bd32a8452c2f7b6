/* sig_int.c - compressed integers and TypeDefOrRefOrSpecEncoded tokens of signatures (II.23.2, II.23.2.8). */
#include "sig.h"

#include "lt_error.h"

/* Read the unsigned form and report how many value bits it had (7, 14, 29):
 * the signed reading needs the width to find the sign.  II.23.2:
 *   0xxxxxxx                              7 bits
 *   10xxxxxx xxxxxxxx                     14 bits, big-endian
 *   110xxxxx xxxxxxxx xxxxxxxx xxxxxxxx   29 bits, big-endian
 * 111xxxxx starts no form. */
static int read_form(struct lt_cur *c, uint32_t *out, unsigned *bits)
{
	size_t left = lt_cur_left(c);
	size_t n;

	if (left == 0)
		return lt_error_set(c->code, "%s: compressed integer at offset 0x%zx: no bytes left (II.23.2)",
				    c->what, c->pos);
	const uint8_t *p = c->data + c->pos;
	if ((p[0] & 0x80) == 0) {
		n = 1;
		*bits = 7;
	} else if ((p[0] & 0xC0) == 0x80) {
		n = 2;
		*bits = 14;
	} else if ((p[0] & 0xE0) == 0xC0) {
		n = 4;
		*bits = 29;
	} else {
		return lt_error_set(c->code, "%s: compressed integer at offset 0x%zx: first byte 0x%02X has no form (II.23.2)",
				    c->what, c->pos, p[0]);
	}
	if (n > left)
		return lt_error_set(c->code, "%s: compressed integer at offset 0x%zx: needs %zu bytes, %zu left (II.23.2)",
				    c->what, c->pos, n, left);
	uint32_t v = 0;
	for (size_t i = 0; i < n; i++)
		v = v << 8 | p[i];
	*out = v & ((1u << *bits) - 1);
	c->pos += n;
	return 0;
}

int sig_uint_decode(struct lt_cur *c, uint32_t *out)
{
	unsigned bits;
	return read_form(c, out, &bits);
}

int sig_int_decode(struct lt_cur *c, int32_t *out)
{
	uint32_t u;
	unsigned bits;

	if (read_form(c, &u, &bits) < 0)
		return -1;
	/* II.23.2: the value was rotated left by one within `bits`; bit 0 is
	 * the sign.  Negative: (u >> 1) is the low bits-1 bits of the two's
	 * complement, so subtract 2^(bits-1). */
	int32_t v = (int32_t)(u >> 1);
	if (u & 1)
		v -= (int32_t)1 << (bits - 1);
	*out = v;
	return 0;
}

/* Write the low `n` bytes of the form word w, big-endian. */
static int put_form(struct lt_buf *b, uint32_t w, unsigned n)
{
	uint8_t bytes[4];
	for (unsigned i = 0; i < n; i++)
		bytes[i] = (uint8_t)(w >> (8 * (n - 1 - i)));
	return lt_buf_put(b, bytes, n);
}

int sig_uint_encode(struct lt_buf *b, uint32_t v)
{
	if (v <= 0x7F)
		return put_form(b, v, 1);
	if (v <= 0x3FFF)
		return put_form(b, 0x8000 | v, 2);
	if (v <= SIG_UINT_MAX)
		return put_form(b, 0xC0000000u | v, 4);
	return lt_error_set(LT_E_ENCODE, "compressed unsigned integer 0x%X past 0x1FFFFFFF (II.23.2)", v);
}

int sig_int_encode(struct lt_buf *b, int32_t v)
{
	/* II.23.2: pick the narrowest width whose two's complement range holds
	 * v, then rotate left by one within that width.  The width must come
	 * from the signed range (-2^6..2^6-1, -2^13..2^13-1, -2^28..2^28-1),
	 * not from the magnitude: -8193 needs 29 bits (the bug of cecil PR #958
	 * wrote it in 14). */
	static const unsigned widths[] = { 7, 14, 29 };
	static const uint32_t tags[] = { 0x00, 0x8000, 0xC0000000u };
	static const unsigned sizes[] = { 1, 2, 4 };

	for (unsigned i = 0; i < 3; i++) {
		unsigned bits = widths[i];
		int32_t lo = -((int32_t)1 << (bits - 1)), hi = ((int32_t)1 << (bits - 1)) - 1;
		if (v < lo || v > hi)
			continue;
		uint32_t mask = (1u << bits) - 1;
		uint32_t twos = (uint32_t)v & mask;
		uint32_t rotated = ((twos << 1) | (twos >> (bits - 1))) & mask;
		return put_form(b, tags[i] | rotated, sizes[i]);
	}
	return lt_error_set(LT_E_ENCODE, "compressed signed integer %d outside -2^28..2^28-1 (II.23.2)", v);
}

/* II.23.2.8: tag -> table id (TypeDef 0x02, TypeRef 0x01, TypeSpec 0x1B). */
static const uint8_t token_tables[3] = { 0x02, 0x01, 0x1B };

int sig_token_decode(struct lt_cur *c, uint32_t *out_token)
{
	size_t start = c->pos;
	uint32_t v;

	if (sig_uint_decode(c, &v) < 0)
		return -1;
	uint32_t tag = v & 3, row = v >> 2;
	/* A token holds a 24-bit row (II.24.2.6): a larger one would spill
	 * into the table byte and name another table. */
	if (tag == 3 || row == 0 || row > 0xFFFFFF) {
		c->pos = start;
		return lt_error_set(c->code, "%s: TypeDefOrRefOrSpecEncoded 0x%X at offset 0x%zx: %s (II.23.2.8)",
				    c->what, v, start, tag == 3 ? "tag 3 invalid" : row == 0 ? "row 0" : "row past 0xFFFFFF");
	}
	*out_token = (uint32_t)token_tables[tag] << 24 | row;
	return 0;
}

int sig_token_encode(struct lt_buf *b, uint32_t token)
{
	uint32_t table = token >> 24, row = token & 0xFFFFFF;

	for (uint32_t tag = 0; tag < 3; tag++) {
		/* row <= 0xFFFFFF, so row << 2 | tag <= 0x3FFFFFF fits the 29-bit form. */
		if (token_tables[tag] == table && row != 0)
			return sig_uint_encode(b, row << 2 | tag);
	}
	return lt_error_set(LT_E_ENCODE, "token 0x%08X is not a TypeDef, TypeRef or TypeSpec row (II.23.2.8)", token);
}
