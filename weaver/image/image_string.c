/* image_string.c - ldstr tokens for strings the weaver adds: UTF-8 in, UTF-16 in #US. */
#include "image.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "lt_utf8.h"

#include <stdlib.h>
#include <string.h>

/* III.1.9: a string token is 0x70 in the top byte, the #US index below. */
#define US_TOKEN_TABLE 0x70u

int img_string_token(struct img *img, const char *s, uint32_t *out)
{
	const char *p = s;
	size_t len = strlen(s), n = 0, used;
	uint16_t *units = lt_malloc((len ? len : 1) * sizeof *units); /* UTF-16 never needs more units than UTF-8 bytes */
	int rc;

	if (!units)
		return lt_nomem(NULL);
	while (*p) {
		int32_t next = lt_utf8_next(p, &used);
		uint32_t cp = next < 0 ? 0xFFFD : (uint32_t)next; /* one U+FFFD a malformed byte */

		if (cp >= 0x10000) {
			units[n++] = (uint16_t)(0xD800 | (cp - 0x10000) >> 10);
			units[n++] = (uint16_t)(0xDC00 | (cp & 0x3FF));
		} else {
			units[n++] = (uint16_t)cp;
		}
		p += used;
	}
	rc = img_us_token(img, units, (uint32_t)n, out);
	free(units);
	return rc;
}

int img_us_token(struct img *img, const uint16_t *units, uint32_t n, uint32_t *out)
{
	uint32_t ix;

	if (md_add_us(&img->md, units, n, &ix) < 0)
		return -1;
	if (ix > 0xFFFFFF)
		return lt_error_set(LT_E_LIMIT, "#US heap past 16 MiB: string token cannot address index 0x%x (III.1.9)", ix);
	*out = US_TOKEN_TABLE << 24 | ix;
	return 0;
}

int img_string_of_token(const struct img *img, uint32_t token, char *buf, size_t n)
{
	const uint8_t *units;
	uint32_t len, i;
	size_t at = 0;

	if (token >> 24 != US_TOKEN_TABLE || md_us(&img->md, token & 0xFFFFFF, &units, &len) < 0)
		return lt_error_set(LT_E_METADATA, "string token 0x%08x: not a #US entry (III.1.9, II.24.2.4)", token);
	/* II.24.2.4: UTF-16LE code units, then one flag byte. */
	for (i = 0; i + 1 < len && n > 0; i += 2) {
		uint32_t cp = (uint32_t)units[i] | (uint32_t)units[i + 1] << 8;
		char enc[4];
		size_t k = 0;

		if (cp >= 0xD800 && cp <= 0xDBFF && i + 3 < len) {
			uint32_t low = (uint32_t)units[i + 2] | (uint32_t)units[i + 3] << 8;
			if (low >= 0xDC00 && low <= 0xDFFF) {
				cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
				i += 2;
			}
		}
		if (cp >= 0xD800 && cp <= 0xDFFF)
			cp = 0xFFFD; /* a lone surrogate */
		if (cp < 0x80) {
			enc[k++] = (char)cp;
		} else if (cp < 0x800) {
			enc[k++] = (char)(0xC0 | cp >> 6);
			enc[k++] = (char)(0x80 | (cp & 0x3F));
		} else if (cp < 0x10000) {
			enc[k++] = (char)(0xE0 | cp >> 12);
			enc[k++] = (char)(0x80 | (cp >> 6 & 0x3F));
			enc[k++] = (char)(0x80 | (cp & 0x3F));
		} else {
			enc[k++] = (char)(0xF0 | cp >> 18);
			enc[k++] = (char)(0x80 | (cp >> 12 & 0x3F));
			enc[k++] = (char)(0x80 | (cp >> 6 & 0x3F));
			enc[k++] = (char)(0x80 | (cp & 0x3F));
		}
		if (at + k >= n)
			break;
		memcpy(buf + at, enc, k);
		at += k;
	}
	if (n > 0)
		buf[at] = 0;
	return 0;
}
