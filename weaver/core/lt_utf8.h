/* lt_utf8.h - decoding UTF-8 (RFC 3629). */
#ifndef LT_UTF8_H
#define LT_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The code point at s (s[0] != 0; the string is NUL-terminated) and, in *n,
 * the bytes it takes; or -1 with *n = 1 for a malformed sequence: a stray
 * continuation byte, a truncated or overlong sequence, a surrogate or a
 * value past U+10FFFF (RFC 3629 section 3). */
int32_t lt_utf8_next(const char *s, size_t *n);

/* Whether the NUL-terminated s is well-formed UTF-8. */
int lt_utf8_valid(const char *s);

#endif
