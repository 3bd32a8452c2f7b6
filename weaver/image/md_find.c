/* md_find.c - find-or-add of metadata rows by content through a hashed index per table (see md_find.h). */
#include "md_find.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "lt_set.h"

#include <stdlib.h>
#include <string.h>

enum key_kind { KEY_CELL, KEY_STRING, KEY_NAME /* a string, ASCII case ignored */, KEY_BLOB };

#define MAX_KEY 3

/* The key columns of each table served (md_find.h lists them). */
static const struct {
	uint8_t n;
	struct {
		uint8_t col;
		uint8_t kind;
	} c[MAX_KEY];
} keys[MD_TABLE_MAX] = {
	[MD_TYPEREF] = { 3, { { MD_TYPEREF_RESOLUTIONSCOPE, KEY_CELL }, { MD_TYPEREF_NAMESPACE, KEY_STRING },
			      { MD_TYPEREF_NAME, KEY_STRING } } },
	[MD_MEMBERREF] = { 3, { { MD_MEMBERREF_CLASS, KEY_CELL }, { MD_MEMBERREF_NAME, KEY_STRING },
				{ MD_MEMBERREF_SIGNATURE, KEY_BLOB } } },
	[MD_TYPESPEC] = { 1, { { MD_TYPESPEC_SIGNATURE, KEY_BLOB } } },
	[MD_METHODSPEC] = { 2, { { MD_METHODSPEC_METHOD, KEY_CELL }, { MD_METHODSPEC_INSTANTIATION, KEY_BLOB } } },
	[MD_ASSEMBLYREF] = { 1, { { MD_ASSEMBLYREF_NAME, KEY_NAME } } },
	[MD_STANDALONESIG] = { 1, { { MD_STANDALONESIG_SIGNATURE, KEY_BLOB } } },
};

/* One index a table: its rows 1..indexed are in set (the first of equal keys). */
struct md_find {
	struct lt_set set[MD_TABLE_MAX];
	uint32_t indexed[MD_TABLE_MAX];
};

void md_find_free(struct md_image *md)
{
	if (!md || !md->find)
		return;
	for (unsigned t = 0; t < MD_TABLE_MAX; t++)
		lt_set_free(&md->find->set[t]);
	free(md->find);
	md->find = NULL;
}

void md_drop_lookups(struct md_image *md)
{
	md_heap_drop_lookup(&md->strings);
	md_heap_drop_lookup(&md->us);
	md_heap_drop_lookup(&md->blob);
	md_heap_drop_lookup(&md->guid);
	md_find_free(md);
}

static uint8_t ascii_lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
}

static uint32_t key_hash(enum md_table_id t, const struct md_val *v)
{
	uint32_t h = LT_SET_HASH_INIT;

	for (unsigned i = 0; i < keys[t].n; i++) {
		uint8_t len[4] = { (uint8_t)v[i].len, (uint8_t)(v[i].len >> 8), (uint8_t)(v[i].len >> 16),
				   (uint8_t)(v[i].len >> 24) };
		uint8_t cell[4] = { (uint8_t)v[i].cell, (uint8_t)(v[i].cell >> 8), (uint8_t)(v[i].cell >> 16),
				    (uint8_t)(v[i].cell >> 24) };

		switch (keys[t].c[i].kind) {
		case KEY_CELL: h = lt_set_hash(h, cell, 4); break;
		case KEY_NAME:
			for (uint32_t k = 0; k < v[i].len; k++) {
				uint8_t c = ascii_lower(v[i].p[k]);
				h = lt_set_hash(h, &c, 1);
			}
			h = lt_set_hash(h, len, 4);
			break;
		default: h = lt_set_hash(lt_set_hash(h, len, 4), v[i].p, v[i].len); break;
		}
	}
	return h;
}

static int key_equal(enum md_table_id t, const struct md_val *a, const struct md_val *b)
{
	for (unsigned i = 0; i < keys[t].n; i++) {
		if (keys[t].c[i].kind == KEY_CELL) {
			if (a[i].cell != b[i].cell)
				return 0;
			continue;
		}
		if (a[i].len != b[i].len)
			return 0;
		if (keys[t].c[i].kind != KEY_NAME) {
			if (memcmp(a[i].p, b[i].p, a[i].len))
				return 0;
			continue;
		}
		for (uint32_t k = 0; k < a[i].len; k++)
			if (ascii_lower(a[i].p[k]) != ascii_lower(b[i].p[k]))
				return 0;
	}
	return 1;
}

/* The key of row `row` of t into v[]: 0, or -1 when a heap index does not
 * name an entry (no error recorded: the row is just never found). */
static int row_key(const struct md_image *md, enum md_table_id t, uint32_t row, struct md_val *v)
{
	for (unsigned i = 0; i < keys[t].n; i++) {
		uint32_t cell = md_get(md, t, row, keys[t].c[i].col);
		const char *s;

		memset(&v[i], 0, sizeof v[i]);
		if (keys[t].c[i].kind == KEY_CELL) {
			v[i].cell = cell;
		} else if (keys[t].c[i].kind == KEY_BLOB) {
			if (md_blob(md, cell, &v[i].p, &v[i].len) < 0)
				return -1;
		} else {
			if (md_string(md, cell, &s) < 0)
				return -1;
			v[i].p = (const uint8_t *)s;
			v[i].len = (uint32_t)strlen(s);
		}
	}
	return 0;
}

/* A key looked for in table t of md. */
struct probe {
	const struct md_image *md;
	enum md_table_id t;
	const struct md_val *key;
};

static int probe_eq(const void *ctx, uint32_t row)
{
	const struct probe *p = ctx;
	struct md_val v[MAX_KEY];

	return row_key(p->md, p->t, row, v) == 0 && key_equal(p->t, v, p->key);
}

/* Index the rows of t appended since the last lookup. */
static int catch_up(struct md_image *md, enum md_table_id t)
{
	struct lt_set *set;
	struct md_val v[MAX_KEY];

	if (!md->find && !(md->find = lt_calloc(1, sizeof *md->find)))
		return lt_nomem("a %s lookup", md_schema[t].name);
	set = &md->find->set[t];
	if (md->find->indexed[t] == 0 && lt_set_reserve(set, md_rows(md, t)) < 0)
		return -1;
	for (uint32_t *r = &md->find->indexed[t]; *r < md_rows(md, t); (*r)++) {
		struct probe p = { md, t, v };
		uint32_t hash;

		if (row_key(md, t, *r + 1, v) < 0)
			continue;
		hash = key_hash(t, v);
		if (!lt_set_find(set, hash, probe_eq, &p) && lt_set_add(set, hash, *r + 1) < 0)
			return -1;
	}
	return 0;
}

int md_find_row(struct md_image *md, enum md_table_id t, const struct md_val *key, uint32_t *row)
{
	struct probe p = { md, t, key };

	if (keys[t].n == 0)
		return lt_error_set(LT_E_METADATA, "%s rows are not looked up by content", md_schema[t].name);
	if (catch_up(md, t) < 0)
		return -1;
	*row = lt_set_find(&md->find->set[t], key_hash(t, key), probe_eq, &p);
	return *row != 0;
}

static struct md_val text(const char *s)
{
	return (struct md_val){ 0, (const uint8_t *)s, (uint32_t)strlen(s) };
}

int md_find_assemblyref(struct md_image *md, const char *name, uint32_t *row)
{
	const struct md_val key[1] = { text(name) };

	return md_find_row(md, MD_ASSEMBLYREF, key, row);
}

/* The token of the row of t with key[] found, else of cells[] appended
 * (the caller's `add` first puts the strings and blobs into the heaps). */
static int find_or_add(struct md_image *md, enum md_table_id t, const struct md_val *key, uint32_t *cells,
		       int (*add)(struct md_image *md, const struct md_val *key, uint32_t *cells), uint32_t *out_tok)
{
	uint32_t row;
	int found = md_find_row(md, t, key, &row);

	if (found < 0 || (!found && (add(md, key, cells) < 0 || md_append_row(md, t, cells, &row) < 0)))
		return -1;
	*out_tok = md_token(t, row);
	return 0;
}

static int add_typeref(struct md_image *md, const struct md_val *key, uint32_t *cells)
{
	return md_add_string(md, (const char *)key[2].p, &cells[MD_TYPEREF_NAME]) < 0 ||
	       md_add_string(md, (const char *)key[1].p, &cells[MD_TYPEREF_NAMESPACE]) < 0 ? -1 : 0;
}

int md_typeref(struct md_image *md, uint32_t scope, const char *ns, const char *name, uint32_t *out_tok)
{
	uint32_t cells[MD_TYPEREF_COLS];
	struct md_val key[3] = { { 0, NULL, 0 }, text(ns), text(name) };

	if (md_coded_encode(MD_CI_RESOLUTIONSCOPE, scope, &cells[MD_TYPEREF_RESOLUTIONSCOPE]) < 0)
		return -1;
	key[0].cell = cells[MD_TYPEREF_RESOLUTIONSCOPE];
	return find_or_add(md, MD_TYPEREF, key, cells, add_typeref, out_tok);
}

static int add_memberref(struct md_image *md, const struct md_val *key, uint32_t *cells)
{
	return md_add_string(md, (const char *)key[1].p, &cells[MD_MEMBERREF_NAME]) < 0 ||
	       md_add_blob(md, key[2].p, key[2].len, &cells[MD_MEMBERREF_SIGNATURE]) < 0 ? -1 : 0;
}

int md_memberref(struct md_image *md, uint32_t parent, const char *name, const uint8_t *sig, uint32_t len,
		 uint32_t *out_tok)
{
	uint32_t cells[MD_MEMBERREF_COLS];
	struct md_val key[3] = { { 0, NULL, 0 }, text(name), { 0, sig, len } };

	if (md_coded_encode(MD_CI_MEMBERREFPARENT, parent, &cells[MD_MEMBERREF_CLASS]) < 0)
		return -1;
	key[0].cell = cells[MD_MEMBERREF_CLASS];
	return find_or_add(md, MD_MEMBERREF, key, cells, add_memberref, out_tok);
}

/* The signature blob of a TypeSpec or StandAloneSig row (its one column). */
static int add_signature(struct md_image *md, const struct md_val *key, uint32_t *cells)
{
	return md_add_blob(md, key[0].p, key[0].len, &cells[0]);
}

static int add_instantiation(struct md_image *md, const struct md_val *key, uint32_t *cells)
{
	return md_add_blob(md, key[1].p, key[1].len, &cells[MD_METHODSPEC_INSTANTIATION]);
}

int md_typespec(struct md_image *md, const uint8_t *sig, uint32_t len, uint32_t *out_tok)
{
	uint32_t cells[MD_TYPESPEC_COLS];
	const struct md_val key[1] = { { 0, sig, len } };

	return find_or_add(md, MD_TYPESPEC, key, cells, add_signature, out_tok);
}

int md_standalonesig(struct md_image *md, const uint8_t *sig, uint32_t len, uint32_t *out_tok)
{
	uint32_t cells[MD_STANDALONESIG_COLS];
	const struct md_val key[1] = { { 0, sig, len } };

	return find_or_add(md, MD_STANDALONESIG, key, cells, add_signature, out_tok);
}

int md_methodspec(struct md_image *md, uint32_t method, const uint8_t *sig, uint32_t len, uint32_t *out_tok)
{
	uint32_t cells[MD_METHODSPEC_COLS];
	struct md_val key[2] = { { 0, NULL, 0 }, { 0, sig, len } };

	if (md_coded_encode(MD_CI_METHODDEFORREF, method, &cells[MD_METHODSPEC_METHOD]) < 0)
		return -1;
	key[0].cell = cells[MD_METHODSPEC_METHOD];
	return find_or_add(md, MD_METHODSPEC, key, cells, add_instantiation, out_tok);
}
