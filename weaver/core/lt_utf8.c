/* lt_utf8.c - decoding UTF-8 (see lt_utf8.h). */
#include "lt_utf8.h"

int32_t lt_utf8_next(const char *s, size_t *n)
{
	static const uint32_t min[4] = { 0, 0x80, 0x800, 0x10000 };
	const unsigned char *p = (const unsigned char *)s;
	unsigned extra = p[0] >= 0xF0 && p[0] <= 0xF4 ? 3 : p[0] >= 0xE0 && p[0] < 0xF0 ? 2 : p[0] >= 0xC2 && p[0] < 0xE0 ? 1 : 0;
	uint32_t cp = extra ? (uint32_t)(p[0] & (0x3F >> extra)) : p[0];

	*n = 1;
	if (p[0] >= 0x80 && extra == 0)
		return -1;
	/* A NUL ends the string: it is not a continuation byte, so the loop stops there. */
	for (unsigned i = 1; i <= extra; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return -1;
		cp = cp << 6 | (p[i] & 0x3F);
	}
	if (cp < min[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return -1;
	*n = extra + 1;
	return (int32_t)cp;
}

int lt_utf8_valid(const char *s)
{
	size_t n;

	for (; *s; s += n)
		if (lt_utf8_next(s, &n) < 0)
			return 0;
	return 1;
}
