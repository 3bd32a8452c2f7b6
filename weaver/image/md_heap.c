/* md_heap.c - bounded reads and deduplicated appends for #Strings, #US, #Blob, #GUID (II.24.2.3-24.2.5). */
#include "md_image.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "lt_set.h"

#include <stdlib.h>
#include <string.h>

#define MD_HEAP_MAX 0xFFFFFFFCu /* largest heap whose padded size still fits a u32 */
#define MD_BLOB_MAX 0x1FFFFFFFu /* largest compressed length (II.24.2.4) */

enum heap_kind { HEAP_STRINGS, HEAP_BLOB, HEAP_GUID }; /* #US entries are laid out like #Blob's */

/* The set of a heap's entries (lt_set): id = index + 1.  Keys are the
 * entries' bytes, read back from the heap for comparison. */
struct md_dedup {
	struct lt_set set;
};

void md_heap_drop_lookup(struct md_heap *h)
{
	if (h->dedup)
		lt_set_free(&h->dedup->set);
	free(h->dedup);
	h->dedup = NULL;
}

void md_heap_free(struct md_heap *h)
{
	md_heap_drop_lookup(h);
	lt_buf_free(&h->added);
	free(h->orig_copy);
	h->orig_copy = NULL;
}

/* Bytes of heap index i: the input part or the appended part.  *avail gets
 * the bytes from there to the end of that part; NULL when i is past the end. */
static const uint8_t *heap_at(const struct md_heap *h, uint32_t i, size_t *avail)
{
	if (i < h->orig_size) {
		*avail = h->orig_size - i;
		return h->orig + i;
	}
	if (i - h->orig_size < h->added.len) {
		*avail = h->added.len - (i - h->orig_size);
		return h->added.data + (i - h->orig_size);
	}
	return NULL;
}

/* II.24.2.4 compressed length at p (avail bytes): 0 and *len, *hdr; -1 when malformed. */
static int blob_len(const uint8_t *p, size_t avail, uint32_t *len, uint32_t *hdr)
{
	if (avail >= 1 && !(p[0] & 0x80)) {
		*len = p[0];
		*hdr = 1;
	} else if (avail >= 2 && (p[0] & 0xC0) == 0x80) {
		*len = (uint32_t)(p[0] & 0x3F) << 8 | p[1];
		*hdr = 2;
	} else if (avail >= 4 && (p[0] & 0xE0) == 0xC0) {
		*len = (uint32_t)(p[0] & 0x1F) << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
		*hdr = 4;
	} else {
		return -1;
	}
	return *len <= avail - *hdr ? 0 : -1;
}

/* II.24.2.4 compressed length into out[0..4); returns its size in bytes. */
static unsigned blob_len_put(uint8_t *out, uint32_t len)
{
	if (len < 0x80) {
		out[0] = (uint8_t)len;
		return 1;
	}
	if (len < 0x4000) {
		out[0] = (uint8_t)(0x80 | len >> 8);
		out[1] = (uint8_t)len;
		return 2;
	}
	out[0] = (uint8_t)(0xC0 | len >> 24);
	out[1] = (uint8_t)(len >> 16);
	out[2] = (uint8_t)(len >> 8);
	out[3] = (uint8_t)len;
	return 4;
}

/* The entry at index i of a heap of kind k: 0 with *p, *len; -1 without recording an error. */
static int entry_at(const struct md_heap *h, enum heap_kind k, uint32_t i, const uint8_t **p, uint32_t *len)
{
	const uint8_t *q, *nul;
	size_t avail;
	uint32_t hdr;

	if (k == HEAP_GUID) {
		/* II.24.2.5: 1-based; an index's 16 bytes never straddle the input and the
		 * appended part because the input is a whole number of GUIDs. */
		if (i == 0 || (uint64_t)i * 16 > (uint64_t)h->orig_size + h->added.len)
			return -1;
		q = heap_at(h, (i - 1) * 16, &avail);
		*p = q;
		*len = 16;
		return 0;
	}
	q = heap_at(h, i, &avail);
	if (!q)
		return -1;
	if (k == HEAP_STRINGS) {
		nul = memchr(q, 0, avail);
		if (!nul)
			return -1;
		*p = q;
		*len = (uint32_t)(nul - q);
		return 0;
	}
	if (blob_len(q, avail, len, &hdr) < 0)
		return -1;
	*p = q + hdr;
	return 0;
}

int md_string(const struct md_image *md, uint32_t index, const char **out)
{
	const uint8_t *p;
	uint32_t len;

	if (entry_at(&md->strings, HEAP_STRINGS, index, &p, &len) < 0)
		return lt_error_set(LT_E_METADATA, "#Strings: no NUL-terminated string at 0x%x (II.24.2.3)", index);
	*out = (const char *)p;
	return 0;
}

int md_blob(const struct md_image *md, uint32_t index, const uint8_t **out, uint32_t *len)
{
	if (entry_at(&md->blob, HEAP_BLOB, index, out, len) < 0)
		return lt_error_set(LT_E_METADATA, "#Blob: no blob at 0x%x (II.24.2.4)", index);
	return 0;
}

int md_us(const struct md_image *md, uint32_t index, const uint8_t **out, uint32_t *len)
{
	if (entry_at(&md->us, HEAP_BLOB, index, out, len) < 0)
		return lt_error_set(LT_E_METADATA, "#US: no string at 0x%x (II.24.2.4)", index);
	return 0;
}

int md_guid(const struct md_image *md, uint32_t index, const uint8_t **out)
{
	static const uint8_t null_guid[16];
	uint32_t len;

	if (index == 0) {
		*out = null_guid;
		return 0;
	}
	if (entry_at(&md->guid, HEAP_GUID, index, out, &len) < 0)
		return lt_error_set(LT_E_METADATA, "#GUID: no GUID %u (II.24.2.5)", index);
	return 0;
}

/* An entry looked for: its bytes, in a heap of kind k. */
struct probe {
	const struct md_heap *h;
	enum heap_kind k;
	const uint8_t *p;
	uint32_t n;
};

static int probe_eq(const void *ctx, uint32_t id)
{
	const struct probe *pr = ctx;
	const uint8_t *q;
	uint32_t qn;

	return entry_at(pr->h, pr->k, id - 1, &q, &qn) == 0 && qn == pr->n && !memcmp(pr->p, q, qn);
}

/* The index + 1 of an entry equal to p[0..n), or 0. */
static uint32_t dedup_find(const struct md_heap *h, enum heap_kind k, const uint8_t *p, uint32_t n)
{
	const struct probe pr = { h, k, p, n };

	return lt_set_find(&h->dedup->set, lt_set_hash(LT_SET_HASH_INIT, p, n), probe_eq, &pr);
}

/* Record entry `index` unless an equal entry is known. */
static int dedup_insert(struct md_heap *h, enum heap_kind k, uint32_t index)
{
	const uint8_t *p;
	uint32_t n;

	if (entry_at(h, k, index, &p, &n) < 0)
		return 0; /* malformed input entry: not a candidate */
	if (dedup_find(h, k, p, n))
		return 0;
	return lt_set_add(&h->dedup->set, lt_set_hash(LT_SET_HASH_INIT, p, n), index + 1);
}

/* Build the lookup over the input heap on first use (II.24.2.3-24.2.5 entry
 * layouts); a heap with no bytes first gets its initial empty entry. */
static int dedup_build(struct md_heap *h, enum heap_kind k)
{
	uint32_t pos, len, hdr;
	const uint8_t *nul;

	if (h->dedup)
		return 0;
	if (!(h->dedup = lt_calloc(1, sizeof *h->dedup)))
		return lt_nomem("heap lookup");
	/* Sized from the input heap, an entry per 16 bytes: entries average
	 * about that, so inserting them rehashes once or twice, not ten times. */
	if (lt_set_reserve(&h->dedup->set, h->orig_size / 16 > 512 ? h->orig_size / 16 : 512) < 0) {
		md_heap_drop_lookup(h);
		return -1;
	}
	if (k != HEAP_GUID && h->orig_size == 0 && h->added.len == 0 && lt_buf_u8(&h->added, 0) < 0)
		return -1;
	if (k == HEAP_GUID) {
		for (pos = 1; pos <= h->orig_size / 16; pos++)
			if (dedup_insert(h, k, pos) < 0)
				return -1;
		return 0;
	}
	for (pos = 0; pos < h->orig_size + h->added.len;) {
		size_t avail = 0;
		const uint8_t *q = heap_at(h, pos, &avail);

		if (dedup_insert(h, k, pos) < 0)
			return -1;
		if (k == HEAP_STRINGS) {
			nul = memchr(q, 0, avail);
			if (!nul)
				break;
			pos += (uint32_t)(nul - q) + 1;
		} else {
			if (blob_len(q, avail, &len, &hdr) < 0)
				break;
			pos += hdr + len;
		}
	}
	return 0;
}

/* Append entry bytes p[0..n) to a heap (kind k), or find an equal one.
 * Strings get their NUL, blobs their compressed length. */
static int heap_add(struct md_heap *h, enum heap_kind k, const uint8_t *p, uint32_t n, uint32_t *out)
{
	uint8_t hdr[4];
	unsigned nhdr = 0;
	uint32_t found, index;
	uint64_t total;

	if (dedup_build(h, k) < 0)
		return -1;
	if ((found = dedup_find(h, k, p, n)) != 0) {
		*out = found - 1;
		return 0;
	}
	if (k == HEAP_BLOB)
		nhdr = blob_len_put(hdr, n);
	total = (uint64_t)h->orig_size + h->added.len + nhdr + n + (k == HEAP_STRINGS);
	if (total > MD_HEAP_MAX)
		return lt_error_set(LT_E_LIMIT, "heap would pass 4 GiB (II.24.2.6)");
	index = k == HEAP_GUID ? (uint32_t)((h->orig_size + h->added.len) / 16 + 1)
			       : h->orig_size + (uint32_t)h->added.len;
	if (lt_buf_reserve(&h->added, nhdr + n + 1) < 0)
		return -1;
	lt_buf_put(&h->added, hdr, nhdr);
	lt_buf_put(&h->added, p, n);
	if (k == HEAP_STRINGS)
		lt_buf_u8(&h->added, 0);
	*out = index;
	return dedup_insert(h, k, index);
}

int md_add_string(struct md_image *md, const char *s, uint32_t *out)
{
	size_t n = strlen(s);

	if (n > MD_HEAP_MAX)
		return lt_error_set(LT_E_LIMIT, "#Strings: string of %zu bytes", n);
	return heap_add(&md->strings, HEAP_STRINGS, (const uint8_t *)s, (uint32_t)n, out);
}

int md_add_blob(struct md_image *md, const uint8_t *p, uint32_t len, uint32_t *out)
{
	if (len > MD_BLOB_MAX)
		return lt_error_set(LT_E_LIMIT, "#Blob: blob of %u bytes, at most 0x1FFFFFFF (II.24.2.4)", len);
	return heap_add(&md->blob, HEAP_BLOB, p, len, out);
}

/* II.24.2.4: the #US flag byte is 1 when a code unit has a non-zero high byte
 * or a low byte in 0x01-0x08, 0x0E-0x1F, 0x27, 0x2D or 0x7F. */
static uint8_t us_flag(const uint16_t *units, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		unsigned lo = units[i] & 0xFF;

		if (units[i] >> 8 || (lo >= 0x01 && lo <= 0x08) || (lo >= 0x0E && lo <= 0x1F) || lo == 0x27 ||
		    lo == 0x2D || lo == 0x7F)
			return 1;
	}
	return 0;
}

int md_add_us(struct md_image *md, const uint16_t *units, uint32_t n, uint32_t *out)
{
	uint8_t *bytes;
	uint32_t i;
	int rc;

	if (n > (MD_BLOB_MAX - 1) / 2)
		return lt_error_set(LT_E_LIMIT, "#US: string of %u code units (II.24.2.4)", n);
	bytes = lt_malloc((size_t)n * 2 + 1);
	if (!bytes)
		return lt_nomem("#US");
	for (i = 0; i < n; i++) {
		bytes[2 * i] = (uint8_t)units[i];
		bytes[2 * i + 1] = (uint8_t)(units[i] >> 8);
	}
	bytes[2 * (size_t)n] = us_flag(units, n);
	rc = heap_add(&md->us, HEAP_BLOB, bytes, n * 2 + 1, out);
	free(bytes);
	return rc;
}

int md_add_guid(struct md_image *md, const uint8_t guid[16], uint32_t *out)
{
	return heap_add(&md->guid, HEAP_GUID, guid, 16, out);
}

int md_set_guid(struct md_image *md, uint32_t index, const uint8_t guid[16])
{
	struct md_heap *h = &md->guid;
	uint64_t at = ((uint64_t)index - 1) * 16;

	if (index == 0 || at + 16 > (uint64_t)h->orig_size + h->added.len || (at < h->orig_size && at + 16 > h->orig_size))
		return lt_error_set(LT_E_METADATA, "#GUID index %u: no such entry (II.24.2.5)", index);
	/* The lookup of appends would hold the old bytes. */
	md_heap_drop_lookup(h);
	if (at >= h->orig_size) {
		memcpy(h->added.data + (at - h->orig_size), guid, 16);
		return 0;
	}
	if (!h->orig_copy) {
		if (!(h->orig_copy = lt_malloc(h->orig_size)))
			return lt_nomem("#GUID");
		memcpy(h->orig_copy, h->orig, h->orig_size);
		h->orig = h->orig_copy;
	}
	memcpy(h->orig_copy + at, guid, 16);
	return 0;
}
