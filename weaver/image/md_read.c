/* md_read.c - parse a metadata root, its streams and tables into struct md_image (II.24.2). */
#include "md_image.h"
#include "md_find.h"
#include "lt_cursor.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MD_SIGNATURE 0x424A5342u /* "BSJB", II.24.2.1 */
#define MD_MAX_STREAMS 8         /* entries of md_image.stream_order */
#define MD_MAX_ROWS 0xFFFFFFu    /* a token's row field (II.22) */

/* A stream header (II.24.2.2) with its bytes. */
struct md_hdr {
	char name[32];
	struct lt_cur cur;
};

void md_init(struct md_image *md, const char *version)
{
	unsigned t;

	memset(md, 0, sizeof(*md));
	md->major = 1;
	md->minor = 1;
	snprintf(md->version, sizeof(md->version), "%s", version);
	memcpy(md->tables_name, "#~", 3);
	md->tables_major = 2;
	md->tables_reserved2 = 1;
	for (t = 0; t < MD_TABLE_MAX; t++)
		if (md_schema[t].nkeys)
			md->sorted |= 1ull << t;
}

void md_free(struct md_image *md)
{
	unsigned t;

	if (!md)
		return;
	for (t = 0; t < MD_TABLE_MAX; t++)
		free(md->tables[t].cells);
	md_heap_free(&md->strings);
	md_heap_free(&md->us);
	md_heap_free(&md->blob);
	md_heap_free(&md->guid);
	free(md->streams);
	md_find_free(md);
	memset(md, 0, sizeof(*md));
}

/* II.24.2.1 root and II.24.2.2 stream headers: fills hdrs[0..*n). */
static int read_root(struct md_image *md, struct lt_cur *c, struct md_hdr *hdrs, unsigned *n)
{
	uint32_t sig, reserved, len;
	uint16_t nstreams;
	const uint8_t *p;
	unsigned i, j;

	if (lt_cur_u32(c, &sig) < 0)
		return -1;
	if (sig != MD_SIGNATURE)
		return lt_error_set(LT_E_METADATA, "metadata root: signature 0x%08x, not BSJB (II.24.2.1)", sig);
	if (lt_cur_u16(c, &md->major) < 0 || lt_cur_u16(c, &md->minor) < 0 || lt_cur_u32(c, &reserved) < 0 ||
	    lt_cur_u32(c, &len) < 0)
		return -1;
	/* The version string's length is padded to 4; at most 255 bytes of text. */
	if (len > sizeof(md->version) || len % 4)
		return lt_error_set(LT_E_METADATA, "metadata root: version length %u (II.24.2.1)", len);
	if (lt_cur_bytes(c, len, &p) < 0)
		return -1;
	if (!memchr(p, 0, len))
		return lt_error_set(LT_E_METADATA, "metadata root: version string not terminated (II.24.2.1)");
	memcpy(md->version, p, len);
	if (lt_cur_u16(c, &md->flags) < 0 || lt_cur_u16(c, &nstreams) < 0)
		return -1;
	if (nstreams > MD_MAX_STREAMS)
		return lt_error_set(LT_E_METADATA, "metadata root: %u streams, at most %d supported (II.24.2.1)",
				    nstreams, MD_MAX_STREAMS);
	for (i = 0; i < nstreams; i++) {
		uint32_t off, size;
		size_t nl;

		if (lt_cur_u32(c, &off) < 0 || lt_cur_u32(c, &size) < 0)
			return -1;
		/* II.24.2.2: name of at most 32 bytes with its NUL, padded to 4. */
		p = c->data + c->pos;
		nl = strnlen((const char *)p, lt_cur_left(c) < 32 ? lt_cur_left(c) : 32);
		if (nl == 32 || nl == lt_cur_left(c))
			return lt_error_set(LT_E_METADATA, "stream header %u: name not terminated within 32 bytes "
					    "(II.24.2.2)", i);
		if (lt_cur_skip(c, (nl + 4) & ~(size_t)3) < 0)
			return -1;
		memcpy(hdrs[i].name, p, nl + 1);
		for (j = 0; j < i; j++)
			if (!strcmp(hdrs[j].name, hdrs[i].name))
				return lt_error_set(LT_E_METADATA, "stream %s appears twice (II.24.2.2)", hdrs[i].name);
		if (lt_cur_sub(c, off, size, &hdrs[i].cur) < 0)
			return lt_error_prefix("stream %s: ", hdrs[i].name);
		hdrs[i].cur.what = hdrs[i].name;
		memcpy(md->stream_order[i], hdrs[i].name, nl + 1);
	}
	md->nstream_order = nstreams;
	*n = nstreams;
	return 0;
}

/* #Pdb (PortablePdb-Metadata.md): PDB id, EntryPoint, ReferencedTypeSystemTables, row counts. */
static int read_pdb(struct md_image *md, struct lt_cur *c)
{
	const uint8_t *id;
	uint64_t mask;
	unsigned t;

	if (lt_cur_bytes(c, 20, &id) < 0 || lt_cur_u32(c, &md->pdb_entry_point) < 0 || lt_cur_u64(c, &mask) < 0)
		return -1;
	memcpy(md->pdb_id, id, 20);
	for (t = 0; t < MD_TABLE_MAX; t++) {
		if (!(mask >> t & 1))
			continue;
		if (t >= MD_DOCUMENT || !md_schema[t].name)
			return lt_error_set(LT_E_METADATA, "#Pdb: referenced table 0x%02x is not a type-system table",
					    t);
		if (lt_cur_u32(c, &md->type_system_rows[t]) < 0)
			return -1;
		if (md->type_system_rows[t] > MD_MAX_ROWS)
			return lt_error_set(LT_E_METADATA, "#Pdb: %s has %u rows", md_schema[t].name,
					    md->type_system_rows[t]);
	}
	if (lt_cur_left(c))
		return lt_error_set(LT_E_METADATA, "#Pdb: %zu bytes after the row counts", lt_cur_left(c));
	md->has_pdb = 1;
	return 0;
}

static int read_heap(struct md_heap *h, const struct lt_cur *c, unsigned entry)
{
	if (c->len > UINT32_MAX || c->len % entry)
		return lt_error_set(LT_E_METADATA, "%s: size 0x%zx is not a whole number of entries (II.24.2.5)",
				    c->what, c->len);
	/* II.24.2.3-4: index 0 of #Strings, #US and #Blob is the empty entry, a
	 * 0 byte; null names and signatures read it, so it must be empty. */
	if (entry == 1 && c->len && c->data[0] != 0)
		return lt_error_set(LT_E_METADATA, "%s: first byte 0x%02x, not the empty entry (II.24.2.3-4)",
				    c->what, c->data[0]);
	h->orig = c->data;
	h->orig_size = (uint32_t)c->len;
	return 0;
}

/* Check one cell against what its column may hold (II.24.2.6). */
static int check_cell(const struct md_image *md, const struct md_sizes *s, unsigned t, uint32_t row,
		      unsigned col, uint32_t v)
{
	const struct md_col *c = &md_schema[t].cols[col];
	const struct md_coded_schema *k;
	uint32_t limit, tag;
	unsigned tt;

	switch (c->kind) {
	case MD_COL_STRING:
		if (v && v >= md->strings.orig_size)
			goto heap;
		return 0;
	case MD_COL_BLOB:
		if (v && v >= md->blob.orig_size)
			goto heap;
		return 0;
	case MD_COL_GUID:
		if (v > md->guid.orig_size / 16)
			goto heap;
		return 0;
	case MD_COL_TABLE:
		/* A list column may point one past the end of its table (II.22). */
		if (v > s->rows[c->arg] + 1)
			return lt_error_set(LT_E_METADATA, "%s row %u: %s %u past %s's %u rows (II.22)",
					    md_schema[t].name, row, c->name, v, md_schema[c->arg].name,
					    s->rows[c->arg]);
		return 0;
	case MD_COL_CODED:
		if (!v)
			return 0; /* null */
		k = &md_coded[c->arg];
		tag = v & ((1u << k->tag_bits) - 1);
		tt = tag < k->ntags ? k->tables[tag] : MD_NO_TABLE;
		if (tt == MD_NO_TABLE)
			return lt_error_set(LT_E_METADATA, "%s row %u: %s tag %u invalid for %s (II.24.2.6)",
					    md_schema[t].name, row, c->name, tag, k->name);
		if (v >> k->tag_bits > s->rows[tt])
			return lt_error_set(LT_E_METADATA, "%s row %u: %s points at %s row %u of %u (II.24.2.6)",
					    md_schema[t].name, row, c->name, md_schema[tt].name, v >> k->tag_bits,
					    s->rows[tt]);
		return 0;
	default:
		return 0;
	}
heap:
	limit = c->kind == MD_COL_STRING ? md->strings.orig_size
		: c->kind == MD_COL_BLOB ? md->blob.orig_size : md->guid.orig_size / 16;
	return lt_error_set(LT_E_METADATA, "%s row %u: %s index 0x%x outside its heap (0x%x) (II.24.2.6)",
			    md_schema[t].name, row, c->name, v, limit);
}

/* II.24.2.6: the #~ (or #-) stream. */
static int read_tables(struct md_image *md, struct lt_cur *c, uint64_t wanted)
{
	struct md_sizes s;
	uint64_t need = 0;
	unsigned t, col, w, widths[MD_MAX_COLS];
	uint32_t r;

	if (lt_cur_u32(c, &md->tables_reserved) < 0 || lt_cur_u8(c, &md->tables_major) < 0 ||
	    lt_cur_u8(c, &md->tables_minor) < 0 || lt_cur_u8(c, &md->heap_sizes) < 0 ||
	    lt_cur_u8(c, &md->tables_reserved2) < 0 || lt_cur_u64(c, &md->valid) < 0 ||
	    lt_cur_u64(c, &md->sorted) < 0)
		return -1;
	for (t = 0; t < MD_TABLE_MAX; t++) {
		if (!(md->valid >> t & 1))
			continue;
		if (!md_schema[t].name)
			return lt_error_set(LT_E_METADATA, "%s: Valid names table 0x%02x, which does not exist "
					    "(II.24.2.6)", c->what, t);
		if (lt_cur_u32(c, &md->tables[t].rows) < 0)
			return -1;
		if (md->tables[t].rows > MD_MAX_ROWS)
			return lt_error_set(LT_E_METADATA, "%s: %s has %u rows, more than a token holds (II.22)",
					    c->what, md_schema[t].name, md->tables[t].rows);
	}
	if ((md->heap_sizes & MD_HEAP_EXTRA_DATA) && lt_cur_u32(c, &md->extra_data) < 0)
		return -1;
	md_image_sizes(md, md->heap_sizes, &s);
	for (t = 0; t < MD_TABLE_MAX; t++)
		need += (uint64_t)md->tables[t].rows * md_row_size(&s, t);
	if (need > lt_cur_left(c))
		return lt_error_set(LT_E_METADATA, "%s: rows need 0x%llx bytes, 0x%zx left (II.24.2.6)", c->what,
				    (unsigned long long)need, lt_cur_left(c));
	for (t = 0; t < MD_TABLE_MAX; t++) {
		struct md_table *tab = &md->tables[t];

		tab->ncols = md_schema[t].ncols;
		if (!tab->rows)
			continue;
		if (!(wanted >> t & 1)) { /* in bounds: checked above */
			c->pos += (size_t)tab->rows * md_row_size(&s, t);
			continue;
		}
		tab->cells = lt_malloc((size_t)tab->rows * tab->ncols * sizeof(uint32_t));
		if (!tab->cells)
			return lt_nomem("%u %s rows", tab->rows, md_schema[t].name);
		tab->cap = tab->rows;
		for (col = 0; col < tab->ncols; col++)
			widths[col] = md_col_width(&s, &md_schema[t].cols[col]);
		for (r = 0; r < tab->rows; r++) {
			for (col = 0; col < tab->ncols; col++) {
				const uint8_t *p = c->data + c->pos;
				uint32_t *cell = &tab->cells[(size_t)r * tab->ncols + col];

				/* In bounds: the total of all rows was checked above. */
				w = widths[col];
				*cell = w == 1 ? p[0] : w == 2 ? lt_le16(p) : lt_le32(p);
				c->pos += w;
				if (check_cell(md, &s, t, r + 1, col, *cell) < 0)
					return -1;
			}
		}
	}
	md->tables_end_zero = lt_cur_left(c) >= 4;
	return 0;
}

int md_read(struct md_image *out, const uint8_t *data, size_t size)
{
	return md_read_tables(out, data, size, ~0ull);
}

int md_read_tables(struct md_image *out, const uint8_t *data, size_t size, uint64_t wanted)
{
	struct md_hdr hdrs[MD_MAX_STREAMS];
	struct lt_cur root = lt_cur_init(data, size, LT_E_METADATA, "metadata root");
	struct lt_cur *tables = NULL;
	unsigned n = 0, i, nother = 0;

	memset(out, 0, sizeof(*out));
	if (read_root(out, &root, hdrs, &n) < 0)
		goto fail;
	out->streams = lt_calloc(n ? n : 1, sizeof(*out->streams));
	if (!out->streams) {
		lt_nomem("metadata root");
		goto fail;
	}
	for (i = 0; i < n; i++) {
		struct md_hdr *h = &hdrs[i];
		int rc = 0;

		if (!strcmp(h->name, "#~") || !strcmp(h->name, "#-")) {
			if (tables) {
				lt_error_set(LT_E_METADATA, "both #~ and #- streams (II.24.2.6)");
				goto fail;
			}
			tables = &h->cur;
			memcpy(out->tables_name, h->name, 3);
		} else if (!strcmp(h->name, "#Strings")) {
			rc = read_heap(&out->strings, &h->cur, 1);
		} else if (!strcmp(h->name, "#US")) {
			rc = read_heap(&out->us, &h->cur, 1);
		} else if (!strcmp(h->name, "#Blob")) {
			rc = read_heap(&out->blob, &h->cur, 1);
		} else if (!strcmp(h->name, "#GUID")) {
			rc = read_heap(&out->guid, &h->cur, 16);
		} else if (!strcmp(h->name, "#Pdb")) {
			rc = read_pdb(out, &h->cur);
		} else {
			struct md_stream *st = &out->streams[nother++];

			memcpy(st->name, h->name, sizeof(st->name));
			st->data = h->cur.data;
			st->size = (uint32_t)h->cur.len;
		}
		if (rc < 0)
			goto fail;
	}
	out->nstreams = nother;
	if (!tables) {
		lt_error_set(LT_E_METADATA, "metadata root: no #~ stream (II.24.2.6)");
		goto fail;
	}
	if (read_tables(out, tables, wanted) < 0)
		goto fail;
	return 0;
fail:
	md_free(out);
	return -1;
}
