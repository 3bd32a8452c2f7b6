/* md_write.c - grow tables (rows) and serialize the metadata root (II.24.2). */
#include "md_image.h"
#include "lt_cursor.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define MD_SIGNATURE 0x424A5342u /* "BSJB", II.24.2.1 */
#define MD_MAX_ROWS 0xFFFFFFu
#define MD_MAX_OUT_STREAMS 16    /* the input's (at most 8) plus the ones writing may add */
_Static_assert(MD_MAX_REFS >= MD_MAX_OUT_STREAMS, "a ref for each stream written");

int md_append_row(struct md_image *md, enum md_table_id t, const uint32_t *cells, uint32_t *out_row)
{
	struct md_table *tab = &md->tables[t];

	assert(md_schema[t].name);
	tab->ncols = md_schema[t].ncols;
	if (tab->rows >= MD_MAX_ROWS)
		return lt_error_set(LT_E_LIMIT, "%s: more than 0xFFFFFF rows (II.22)", md_schema[t].name);
	if (lt_grow(&tab->cells, &tab->cap, (size_t)tab->rows + 1, tab->ncols * sizeof(uint32_t)) < 0)
		return lt_error_prefix("%s: ", md_schema[t].name);
	memcpy(&tab->cells[(size_t)tab->rows * tab->ncols], cells, tab->ncols * sizeof(uint32_t));
	*out_row = ++tab->rows;
	return 0;
}

/* Compare rows a and b (0-based) of a sorted table by its key (II.22). */
static int key_cmp(const struct md_table *tab, const struct md_table_schema *ts, uint32_t a, uint32_t b)
{
	unsigned i;

	for (i = 0; i < ts->nkeys; i++) {
		uint32_t va = tab->cells[(size_t)a * tab->ncols + ts->key[i]];
		uint32_t vb = tab->cells[(size_t)b * tab->ncols + ts->key[i]];

		if (va != vb)
			return (va < vb) == !(ts->key_desc >> i & 1) ? -1 : 1;
	}
	return 0;
}

/* Stable bottom-up merge sort of row numbers perm[0..n) by key; tmp has n entries. */
static void sort_rows(const struct md_table *tab, const struct md_table_schema *ts, uint32_t *perm, uint32_t *tmp,
		      uint32_t n)
{
	uint32_t w, lo;

	/* n <= 0xFFFFFF, so 2 * w cannot wrap. */
	for (w = 1; w < n; w *= 2) {
		for (lo = 0; lo < n; lo += 2 * w) {
			uint32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			uint32_t i = lo, j = mid, o = lo;

			while (i < mid && j < hi)
				tmp[o++] = key_cmp(tab, ts, perm[j], perm[i]) < 0 ? perm[j++] : perm[i++];
			while (i < mid)
				tmp[o++] = perm[i++];
			while (j < hi)
				tmp[o++] = perm[j++];
		}
		memcpy(perm, tmp, (size_t)n * sizeof(*perm));
	}
}

/* Whether rows of table t are pointed at by a column of another table of
 * the type system (a table column, or a coded index but the portable PDB's
 * HasCustomDebugInformation): GenericParam, InterfaceImpl, DeclSecurity,
 * GenericParamConstraint among the sorted tables (II.24.2.6). */
static int pointed_at(unsigned t)
{
	for (unsigned k = 0; k < MD_CI_COUNT; k++)
		for (unsigned i = 0; k != MD_CI_HASCUSTOMDEBUGINFORMATION && i < md_coded[k].ntags; i++)
			if (md_coded[k].tables[i] == t)
				return 1;
	for (unsigned u = 0; u < MD_TABLE_MAX; u++)
		for (unsigned c = 0; c < md_schema[u].ncols; c++)
			if (md_schema[u].cols[c].kind == MD_COL_TABLE && md_schema[u].cols[c].arg == t && u != t)
				return 1;
	return 0;
}

/* The order rows of table t are written in: NULL for input order, else a
 * malloc'd permutation (0-based) when the table's Sorted bit is set and its
 * rows are out of key order (II.22).  A table other rows point at is not
 * reordered (the pointers would name other rows): LT_E_LAYOUT. */
static int row_order(const struct md_image *md, unsigned t, uint32_t **out)
{
	const struct md_table *tab = &md->tables[t];
	const struct md_table_schema *ts = &md_schema[t];
	uint32_t r, *perm, *tmp;

	*out = NULL;
	if (!ts->nkeys || !(md->sorted >> t & 1))
		return 0;
	for (r = 1; r < tab->rows && key_cmp(tab, ts, r - 1, r) <= 0; r++)
		;
	if (r >= tab->rows)
		return 0;
	if (pointed_at(t))
		return lt_error_set(LT_E_LAYOUT, "%s row %u is out of key order (II.22), and other rows point at its "
				    "rows: it cannot be sorted", ts->name, r + 1);
	perm = lt_malloc((size_t)tab->rows * sizeof(*perm));
	tmp = lt_malloc((size_t)tab->rows * sizeof(*tmp));
	if (!perm || !tmp) {
		free(perm);
		free(tmp);
		return lt_nomem("sorting %s", ts->name);
	}
	for (r = 0; r < tab->rows; r++)
		perm[r] = r;
	sort_rows(tab, ts, perm, tmp, tab->rows);
	free(tmp);
	*out = perm;
	return 0;
}

static int put_cell(struct lt_buf *b, unsigned w, uint32_t v, unsigned t, uint32_t row, const struct md_col *c)
{
	if (w < 4 && v >> (8 * w))
		return lt_error_set(LT_E_LIMIT, "%s row %u: %s value 0x%x does not fit %u bytes (II.24.2.6)",
				    md_schema[t].name, row, c->name, v, w);
	return w == 1 ? lt_buf_u8(b, (uint8_t)v) : w == 2 ? lt_buf_u16(b, (uint16_t)v) : lt_buf_u32(b, v);
}

/* The size in bytes of the #~ / #- stream write_tables writes: the header,
 * the row counts, the rows, padded to 4 (II.24.2.6). */
static uint64_t tables_size(const struct md_image *md, uint8_t heap_sizes)
{
	struct md_sizes s;
	uint64_t n = 24;
	unsigned t;

	md_image_sizes(md, heap_sizes, &s);
	for (t = 0; t < MD_TABLE_MAX; t++)
		if (md->tables[t].rows)
			n += 4 + (uint64_t)md->tables[t].rows * md_row_size(&s, t);
	if (heap_sizes & MD_HEAP_EXTRA_DATA)
		n += 4;
	if (md->tables_end_zero)
		n++;
	return (n + 3) & ~3ull;
}

/* The #~ / #- stream (II.24.2.6) appended to b, padded to 4: tables_size bytes. */
static int write_tables(const struct md_image *md, uint8_t heap_sizes, struct lt_buf *b)
{
	size_t start = b->len;
	struct md_sizes s;
	uint64_t valid = 0;
	unsigned t, col, widths[MD_MAX_COLS];
	uint32_t r;

	md_image_sizes(md, heap_sizes, &s);
	for (t = 0; t < MD_TABLE_MAX; t++)
		if (md->tables[t].rows)
			valid |= 1ull << t;
	if (lt_buf_u32(b, md->tables_reserved) < 0 || lt_buf_u8(b, md->tables_major) < 0 ||
	    lt_buf_u8(b, md->tables_minor) < 0 || lt_buf_u8(b, heap_sizes) < 0 ||
	    lt_buf_u8(b, md->tables_reserved2) < 0 || lt_buf_u64(b, valid) < 0 || lt_buf_u64(b, md->sorted) < 0)
		return -1;
	for (t = 0; t < MD_TABLE_MAX; t++)
		if (md->tables[t].rows && lt_buf_u32(b, md->tables[t].rows) < 0)
			return -1;
	if ((heap_sizes & MD_HEAP_EXTRA_DATA) && lt_buf_u32(b, md->extra_data) < 0)
		return -1;
	for (t = 0; t < MD_TABLE_MAX; t++) {
		const struct md_table *tab = &md->tables[t];
		uint32_t *perm;

		if (!tab->rows)
			continue;
		if (row_order(md, t, &perm) < 0)
			return -1;
		for (col = 0; col < tab->ncols; col++)
			widths[col] = md_col_width(&s, &md_schema[t].cols[col]);
		for (r = 0; r < tab->rows; r++) {
			uint32_t src = perm ? perm[r] : r;

			for (col = 0; col < tab->ncols; col++) {
				const struct md_col *c = &md_schema[t].cols[col];

				if (put_cell(b, widths[col], tab->cells[(size_t)src * tab->ncols + col], t,
					     src + 1, c) < 0) {
					free(perm);
					return -1;
				}
			}
		}
		free(perm);
	}
	if (md->tables_end_zero && lt_buf_u8(b, 0) < 0)
		return -1;
	return lt_buf_zero(b, (4 - (b->len - start) % 4) % 4);
}

/* HeapSizes (II.24.2.6): the input's bits, plus a wide bit for each heap now
 * past 0xFFFF bytes (a bit the input set stays set, so an unedited image
 * writes back as it was). */
static uint8_t final_heap_sizes(const struct md_image *md)
{
	uint8_t hs = md->heap_sizes;

	if (md->strings.orig_size + md->strings.added.len > 0xFFFF)
		hs |= MD_HEAP_STRINGS_WIDE;
	if (md->guid.orig_size + md->guid.added.len > 0xFFFF)
		hs |= MD_HEAP_GUID_WIDE;
	if (md->blob.orig_size + md->blob.added.len > 0xFFFF)
		hs |= MD_HEAP_BLOB_WIDE;
	return hs;
}

/* One stream to write: its name and bytes - a: the input's (borrowed from
 * the file: a heap's input part, a kept stream), b: new ones (a heap's
 * appended part, #Pdb) - or, for the table stream (a == NULL, alen its size),
 * written by write_tables straight into the output. */
struct out_stream {
	const char *name;
	const uint8_t *a, *b;
	size_t alen, blen;
	uint32_t size; /* alen + blen padded to 4 */
};

static int add_stream(struct out_stream *os, unsigned *n, const char *name, const uint8_t *a, size_t alen,
		      const uint8_t *b, size_t blen)
{
	unsigned i;
	uint64_t size = ((uint64_t)alen + blen + 3) & ~3ull;

	for (i = 0; i < *n; i++)
		if (!strcmp(os[i].name, name))
			return 0;
	if (size > UINT32_MAX)
		return lt_error_set(LT_E_LIMIT, "%s: 0x%llx bytes, past 4 GiB (II.24.2.2)", name,
				    (unsigned long long)size);
	os[*n] = (struct out_stream){ name, a, b, alen, blen, (uint32_t)size };
	++*n;
	return 0;
}

/* Add the stream called `name` if the image has it: heaps with bytes (or
 * named by the input), the table stream, #Pdb, or a kept stream. */
static int add_named(const struct md_image *md, uint64_t tables, const struct lt_buf *pdb,
		     const char *name, int from_input, struct out_stream *os, unsigned *n)
{
	static const char *const heap_names[] = { "#Strings", "#US", "#GUID", "#Blob" };
	const struct md_heap *heaps[] = { &md->strings, &md->us, &md->guid, &md->blob };
	unsigned i;

	if (!strcmp(name, md->tables_name))
		return add_stream(os, n, md->tables_name, NULL, tables, NULL, 0);
	if (!strcmp(name, "#Pdb"))
		return md->has_pdb ? add_stream(os, n, "#Pdb", NULL, 0, pdb->data, pdb->len) : 0;
	for (i = 0; i < 4; i++) {
		const struct md_heap *h = heaps[i];

		if (!strcmp(name, heap_names[i]))
			return from_input || h->orig_size + h->added.len
				? add_stream(os, n, heap_names[i], h->orig, h->orig_size, h->added.data, h->added.len)
				: 0;
	}
	for (i = 0; i < md->nstreams; i++)
		if (!strcmp(name, md->streams[i].name))
			return add_stream(os, n, md->streams[i].name, md->streams[i].data, md->streams[i].size,
					  NULL, 0);
	return 0;
}

/* #Pdb (PortablePdb-Metadata.md): id, entry point, referenced type-system tables and their row counts. */
static int write_pdb(const struct md_image *md, struct lt_buf *b)
{
	uint64_t mask = 0;
	unsigned t;

	for (t = 0; t < MD_DOCUMENT; t++)
		if (md->type_system_rows[t])
			mask |= 1ull << t;
	if (lt_buf_put(b, md->pdb_id, 20) < 0 || lt_buf_u32(b, md->pdb_entry_point) < 0 || lt_buf_u64(b, mask) < 0)
		return -1;
	for (t = 0; t < MD_DOCUMENT; t++)
		if (md->type_system_rows[t] && lt_buf_u32(b, md->type_system_rows[t]) < 0)
			return -1;
	return 0;
}

/* II.24.2.1 root and II.24.2.2 stream headers, then the streams in order;
 * with refs, the streams' input bytes are recorded there, not copied. */
static int write_root(const struct md_image *md, uint8_t heap_sizes, const struct out_stream *os, unsigned n,
		      struct lt_buf *out, struct md_ref *refs, unsigned *nrefs)
{
	size_t vlen = (strnlen(md->version, sizeof(md->version) - 1) + 4) & ~(size_t)3;
	uint64_t off = 20 + vlen, total;
	unsigned i;

	for (i = 0; i < n; i++)
		off += 8 + ((strlen(os[i].name) + 4) & ~(size_t)3);
	for (i = 0, total = off; i < n; i++)
		total += os[i].size - (refs && os[i].a ? os[i].alen : 0);
	/* The whole root at once: no growth copies of a buffer this large. */
	if (total > UINT32_MAX || lt_buf_reserve(out, (size_t)total) < 0)
		return total > UINT32_MAX ? lt_error_set(LT_E_LIMIT, "metadata root: passes 4 GiB (II.24.2.2)") : -1;
	if (lt_buf_u32(out, MD_SIGNATURE) < 0 || lt_buf_u16(out, md->major) < 0 || lt_buf_u16(out, md->minor) < 0 ||
	    lt_buf_u32(out, 0) < 0 || lt_buf_u32(out, (uint32_t)vlen) < 0 ||
	    lt_buf_put(out, md->version, strnlen(md->version, vlen)) < 0 ||
	    lt_buf_zero(out, vlen - strnlen(md->version, vlen)) < 0 || lt_buf_u16(out, md->flags) < 0 ||
	    lt_buf_u16(out, (uint16_t)n) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		size_t nl = strlen(os[i].name);

		if (off > UINT32_MAX)
			return lt_error_set(LT_E_LIMIT, "metadata root: passes 4 GiB (II.24.2.2)");
		if (lt_buf_u32(out, (uint32_t)off) < 0 || lt_buf_u32(out, os[i].size) < 0 ||
		    lt_buf_put(out, os[i].name, nl) < 0 || lt_buf_zero(out, ((nl + 4) & ~(size_t)3) - nl) < 0)
			return -1;
		off += os[i].size;
	}
	for (i = 0; i < n; i++) {
		if (!os[i].a && os[i].alen) {
			size_t start = out->len;

			if (write_tables(md, heap_sizes, out) < 0)
				return -1;
			assert(out->len - start == os[i].size);
			continue;
		}
		if (refs && os[i].a && os[i].alen)
			refs[(*nrefs)++] = (struct md_ref){ out->len, os[i].a, os[i].alen };
		else if (lt_buf_put(out, os[i].a, os[i].alen) < 0)
			return -1;
		if (lt_buf_put(out, os[i].b, os[i].blen) < 0 || lt_buf_zero(out, os[i].size - os[i].alen - os[i].blen) < 0)
			return -1;
	}
	return 0;
}

int md_write(const struct md_image *md, struct lt_buf *out)
{
	return md_write_refs(md, out, NULL, NULL);
}

int md_write_refs(const struct md_image *md, struct lt_buf *out, struct md_ref refs[MD_MAX_REFS], unsigned *nrefs)
{
	static const char *const defaults[] = { "#Pdb", NULL, "#Strings", "#US", "#GUID", "#Blob" };
	uint8_t heap_sizes = final_heap_sizes(md);
	uint64_t tables = tables_size(md, heap_sizes);
	struct lt_buf pdb = LT_BUF_INIT;
	struct out_stream os[MD_MAX_OUT_STREAMS];
	unsigned n = 0, i;
	int rc = -1;

	if (md->has_pdb && write_pdb(md, &pdb) < 0)
		goto done;
	for (i = 0; i < md->nstream_order; i++)
		if (add_named(md, tables, &pdb, md->stream_order[i], 1, os, &n) < 0)
			goto done;
	for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
		if (add_named(md, tables, &pdb, defaults[i] ? defaults[i] : md->tables_name, 0, os, &n) < 0)
			goto done;
	if (nrefs)
		*nrefs = 0;
	rc = write_root(md, heap_sizes, os, n, out, refs, nrefs);
done:
	lt_buf_free(&pdb);
	return rc;
}
