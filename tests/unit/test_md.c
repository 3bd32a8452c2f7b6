/* test_md.c - unit tests of metadata in memory (II.22, II.24): real round trips, edits, widths, sorting, malformed roots. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <glob.h>
#include <cmocka.h>

#include "lt_cursor.h"
#include "lt_error.h"
#include "lt_file.h"
#include "md_image.h"

/* ---- Helpers ---- */

/* A real assembly: the file's bytes and its metadata root (found by its
 * "BSJB" signature, II.24.2.1; the root's extent is up to the file's end). */
struct real_file {
	uint8_t *data;
	size_t size;
	const uint8_t *root;
	size_t root_len;
};

static void load_real(const char *pattern, struct real_file *f)
{
	glob_t g;

	assert_int_equal(glob(pattern, 0, NULL, &g), 0);
	assert_int_equal(lt_file_read(g.gl_pathv[g.gl_pathc - 1], &f->data, &f->size), 0);
	globfree(&g);
	f->root = memmem(f->data, f->size, "BSJB", 4);
	assert_non_null(f->root);
	f->root_len = f->size - (size_t)(f->root - f->data);
}

#define MSCORLIB "/usr/lib/mono/4.5/mscorlib.dll"
#define SYSTEM "/usr/lib/mono/4.5/System.dll"
#define CORELIB "/usr/share/dotnet/shared/Microsoft.NETCore.App/*/System.Private.CoreLib.dll"

/* Write md and read the result back into *again (buf keeps the bytes). */
static void write_read(const struct md_image *md, struct lt_buf *buf, struct md_image *again)
{
	assert_int_equal(md_write(md, buf), 0);
	if (md_read(again, buf->data, buf->len) < 0)
		fail_msg("re-read: %s", lt_error_last()->msg);
}

/* Append n rows of zero cells to table t. */
static void append_zero_rows(struct md_image *md, enum md_table_id t, uint32_t n)
{
	uint32_t zero[MD_MAX_COLS] = { 0 }, row;

	while (n--)
		assert_int_equal(md_append_row(md, t, zero, &row), 0);
}

static uint32_t coded(enum md_coded_index k, enum md_table_id t, uint32_t row)
{
	uint32_t cell;

	assert_int_equal(md_coded_encode(k, md_token(t, row), &cell), 0);
	return cell;
}

/* Width of table t's column col in image md (its row counts and HeapSizes). */
static unsigned width_in(const struct md_image *md, enum md_table_id t, unsigned col)
{
	struct md_sizes s;

	md_image_sizes(md, md->heap_sizes, &s);
	return md_col_width(&s, &md_schema[t].cols[col]);
}

/* ---- Real assemblies: unedited round trip is byte-identical ---- */

static void check_identical(const char *pattern)
{
	struct real_file f;
	struct md_image md;
	struct lt_buf out = LT_BUF_INIT;

	load_real(pattern, &f);
	if (md_read(&md, f.root, f.root_len) < 0)
		fail_msg("%s: %s", pattern, lt_error_last()->msg);
	assert_true(md.tables[MD_TYPEDEF].rows > 0);
	assert_int_equal(md_write(&md, &out), 0);
	assert_true(out.len <= f.root_len);
	assert_memory_equal(out.data, f.root, out.len);
	lt_buf_free(&out);
	md_free(&md);
	free(f.data);
}

static void test_identical_mscorlib(void **state) { (void)state; check_identical(MSCORLIB); }
static void test_identical_system(void **state) { (void)state; check_identical(SYSTEM); }
static void test_identical_corelib(void **state) { (void)state; check_identical(CORELIB); }

/* ---- Real assembly: appended rows and heap entries ---- */

static void test_edit_real(void **state)
{
	static const uint16_t us_plain[] = { 'L', 'o', 'c', 'k' };
	static const uint16_t us_wide[] = { 'l', 0x263A, 'c', 'k' };
	static const uint16_t us_dash[] = { 'a', '-', 'b' };
	static const uint8_t locals[] = { 0x07, 0x03, 0x08, 0x0E, 0x1C };
	static const uint8_t guid[16] = { 0x4C, 0x6F, 0x63, 0x6B, 0x54, 0x69, 0x6D, 0x65, 1, 2, 3, 4, 5, 6, 7, 8 };
	struct real_file f;
	struct md_image md, again;
	struct lt_buf out = LT_BUF_INIT;
	uint8_t big[300];
	uint32_t name, ns, tr, mr, sas, sig, bigsig, us1, us2, us3, g, idx, len, t, r, c;
	uint32_t strings_before, blob_before;
	const char *s;
	const uint8_t *p, *mvid;
	(void)state;

	load_real(SYSTEM, &f);
	assert_int_equal(md_read(&md, f.root, f.root_len), 0);

	/* Existing entries come back at an input index, and the heap does not grow. */
	assert_int_equal(md_string(&md, md_get(&md, MD_TYPEDEF, 2, MD_TYPEDEF_NAME), &s), 0);
	assert_int_equal(md_add_string(&md, s, &idx), 0);
	assert_true(idx < md.strings.orig_size);
	assert_int_equal(md.strings.added.len, 0);
	assert_int_equal(md_blob(&md, md_get(&md, MD_MEMBERREF, 1, MD_MEMBERREF_SIGNATURE), &p, &len), 0);
	assert_int_equal(md_add_blob(&md, p, len, &idx), 0);
	assert_true(idx < md.blob.orig_size);
	assert_int_equal(md.blob.added.len, 0);
	assert_int_equal(md_guid(&md, md_get(&md, MD_MODULE, 1, MD_MODULE_MVID), &mvid), 0);
	assert_int_equal(md_add_guid(&md, mvid, &idx), 0);
	assert_int_equal(idx, md_get(&md, MD_MODULE, 1, MD_MODULE_MVID));

	/* New entries, each added twice: the second add finds the first. */
	strings_before = md.strings.orig_size;
	blob_before = md.blob.orig_size;
	assert_int_equal(md_add_string(&md, "LockTimeProbe", &name), 0);
	assert_int_equal(md_add_string(&md, "LockTime.Tests", &ns), 0);
	assert_true(name >= strings_before && ns > name);
	assert_int_equal(md_add_string(&md, "LockTimeProbe", &idx), 0);
	assert_int_equal(idx, name);
	for (idx = 0; idx < sizeof(big); idx++)
		big[idx] = (uint8_t)(idx * 7 + 1);
	assert_int_equal(md_add_blob(&md, big, sizeof(big), &bigsig), 0);
	assert_true(bigsig >= blob_before);
	assert_int_equal(md_add_blob(&md, big, sizeof(big), &idx), 0);
	assert_int_equal(idx, bigsig);
	assert_int_equal(md_add_blob(&md, locals, sizeof(locals), &sig), 0);
	assert_int_equal(md_add_us(&md, us_plain, 4, &us1), 0);
	assert_int_equal(md_add_us(&md, us_wide, 4, &us2), 0);
	assert_int_equal(md_add_us(&md, us_dash, 3, &us3), 0);
	assert_int_equal(md_add_us(&md, us_wide, 4, &idx), 0);
	assert_int_equal(idx, us2);
	assert_int_equal(md_add_guid(&md, guid, &g), 0);
	assert_int_equal(g, md.guid.orig_size / 16 + 1);
	assert_int_equal(md_add_guid(&md, guid, &idx), 0);
	assert_int_equal(idx, g);

	/* New rows: TypeRef -> MemberRef on it, StandAloneSig. */
	uint32_t trow[] = { coded(MD_CI_RESOLUTIONSCOPE, MD_ASSEMBLYREF, 1), name, ns };
	assert_int_equal(md_append_row(&md, MD_TYPEREF, trow, &tr), 0);
	uint32_t mrow[] = { coded(MD_CI_MEMBERREFPARENT, MD_TYPEREF, tr), name, bigsig };
	assert_int_equal(md_append_row(&md, MD_MEMBERREF, mrow, &mr), 0);
	uint32_t srow[] = { sig };
	assert_int_equal(md_append_row(&md, MD_STANDALONESIG, srow, &sas), 0);
	assert_int_equal(tr, md_rows(&md, MD_TYPEREF));

	write_read(&md, &out, &again);

	/* Every input row is unchanged, the new rows are there. */
	for (t = 0; t < MD_TABLE_MAX; t++) {
		assert_int_equal(md_rows(&again, t), md_rows(&md, t));
		for (r = 1; r <= md_rows(&md, t); r++)
			for (c = 0; c < md.tables[t].ncols; c++)
				assert_int_equal(md_get(&again, t, r, c), md_get(&md, t, r, c));
	}
	/* Input heap bytes are a prefix of the new heaps. */
	assert_memory_equal(again.strings.orig, md.strings.orig, md.strings.orig_size);
	assert_memory_equal(again.blob.orig, md.blob.orig, md.blob.orig_size);
	assert_memory_equal(again.us.orig, md.us.orig, md.us.orig_size);
	assert_memory_equal(again.guid.orig, md.guid.orig, md.guid.orig_size);
	/* New entries read back. */
	assert_int_equal(md_string(&again, md_get(&again, MD_TYPEREF, tr, MD_TYPEREF_NAME), &s), 0);
	assert_string_equal(s, "LockTimeProbe");
	assert_int_equal(md_string(&again, ns, &s), 0);
	assert_string_equal(s, "LockTime.Tests");
	assert_int_equal(md_blob(&again, md_get(&again, MD_MEMBERREF, mr, MD_MEMBERREF_SIGNATURE), &p, &len), 0);
	assert_int_equal(len, sizeof(big));
	assert_memory_equal(p, big, sizeof(big));
	assert_int_equal(md_blob(&again, md_get(&again, MD_STANDALONESIG, sas, 0), &p, &len), 0);
	assert_int_equal(len, sizeof(locals));
	assert_memory_equal(p, locals, sizeof(locals));
	/* #US: 2n bytes of UTF-16LE, then the flag byte (II.24.2.4). */
	assert_int_equal(md_us(&again, us1, &p, &len), 0);
	assert_int_equal(len, 9);
	assert_memory_equal(p, "L\0o\0c\0k\0\0", 9);
	assert_int_equal(md_us(&again, us2, &p, &len), 0);
	assert_int_equal(len, 9);
	assert_int_equal(p[2], 0x3A);
	assert_int_equal(p[3], 0x26);
	assert_int_equal(p[8], 1);
	assert_int_equal(md_us(&again, us3, &p, &len), 0);
	assert_int_equal(p[6], 1);
	assert_int_equal(md_guid(&again, g, &p), 0);
	assert_memory_equal(p, guid, 16);
	/* The new MemberRef's parent decodes to the new TypeRef. */
	assert_int_equal(md_coded_decode(MD_CI_MEMBERREFPARENT, md_get(&again, MD_MEMBERREF, mr, 0), &idx), 0);
	assert_int_equal(idx, md_token(MD_TYPEREF, tr));

	md_free(&again);
	lt_buf_free(&out);
	md_free(&md);
	free(f.data);
}

/* ---- Synthetic metadata: widths, growth, sorting ---- */

/* HasCustomAttribute has 5 tag bits: 2 bytes up to 2047 rows, 4 from 2048 (II.24.2.6). */
static void check_coded_boundary(uint32_t methods, unsigned want)
{
	struct md_image md, again;
	struct lt_buf out = LT_BUF_INIT;
	uint32_t row;

	md_init(&md, "v4.0.30319");
	append_zero_rows(&md, MD_METHODDEF, methods);
	uint32_t ca[] = { coded(MD_CI_HASCUSTOMATTRIBUTE, MD_METHODDEF, methods),
			  coded(MD_CI_CUSTOMATTRIBUTETYPE, MD_METHODDEF, 1), 0 };
	assert_int_equal(md_append_row(&md, MD_CUSTOMATTRIBUTE, ca, &row), 0);
	write_read(&md, &out, &again);
	assert_int_equal(width_in(&again, MD_CUSTOMATTRIBUTE, MD_CUSTOMATTRIBUTE_PARENT), want);
	assert_int_equal(width_in(&again, MD_CUSTOMATTRIBUTE, MD_CUSTOMATTRIBUTE_TYPE), 2);
	assert_int_equal(md_rows(&again, MD_METHODDEF), methods);
	assert_int_equal(md_get(&again, MD_CUSTOMATTRIBUTE, 1, MD_CUSTOMATTRIBUTE_PARENT), ca[0]);
	md_free(&again);
	lt_buf_free(&out);
	md_free(&md);
}

static void test_coded_width_2047(void **state) { (void)state; check_coded_boundary(2047, 2); }
static void test_coded_width_2048(void **state) { (void)state; check_coded_boundary(2048, 4); }

/* A simple index is 4 bytes once its table passes 0xFFFF rows (II.24.2.6). */
static void check_field_list(uint32_t fields, unsigned want)
{
	struct md_image md, again;
	struct lt_buf out = LT_BUF_INIT;
	uint32_t row;

	md_init(&md, "v4.0.30319");
	append_zero_rows(&md, MD_FIELD, fields);
	uint32_t td[] = { 0, 0, 0, 0, fields, 1 }; /* the type owns the last field */
	assert_int_equal(md_append_row(&md, MD_TYPEDEF, td, &row), 0);
	write_read(&md, &out, &again);
	assert_int_equal(width_in(&again, MD_TYPEDEF, MD_TYPEDEF_FIELDLIST), want);
	assert_int_equal(width_in(&again, MD_TYPEDEF, MD_TYPEDEF_METHODLIST), 2);
	assert_int_equal(md_get(&again, MD_TYPEDEF, 1, MD_TYPEDEF_FIELDLIST), fields);
	md_free(&again);
	lt_buf_free(&out);
	md_free(&md);
}

static void test_table_index_65535(void **state) { (void)state; check_field_list(0xFFFF, 2); }
static void test_table_index_65536(void **state) { (void)state; check_field_list(0x10000, 4); }

/* A #Strings heap that passes 0xFFFF bytes sets HeapSizes bit 0x01 (II.24.2.6). */
static void test_strings_heap_widens(void **state)
{
	struct md_image md, again;
	struct lt_buf out = LT_BUF_INIT;
	uint32_t idx = 0, row, i = 0, small;
	char name[32];
	const char *s;
	(void)state;

	md_init(&md, "v4.0.30319");
	assert_int_equal(md_add_string(&md, "System", &small), 0);
	uint32_t tr0[] = { 0, small, small };
	assert_int_equal(md_append_row(&md, MD_TYPEREF, tr0, &row), 0);
	write_read(&md, &out, &again);
	assert_int_equal(again.heap_sizes & MD_HEAP_STRINGS_WIDE, 0);
	assert_int_equal(width_in(&again, MD_TYPEREF, MD_TYPEREF_NAME), 2);
	md_free(&again);
	out.len = 0;

	while (idx <= 0xFFFF) {
		snprintf(name, sizeof(name), "LockTimeName%06u", i++);
		assert_int_equal(md_add_string(&md, name, &idx), 0);
	}
	uint32_t tr[] = { 0, idx, small };
	assert_int_equal(md_append_row(&md, MD_TYPEREF, tr, &row), 0);
	write_read(&md, &out, &again);
	assert_int_equal(again.heap_sizes & MD_HEAP_STRINGS_WIDE, MD_HEAP_STRINGS_WIDE);
	assert_int_equal(width_in(&again, MD_TYPEREF, MD_TYPEREF_NAME), 4);
	assert_int_equal(md_string(&again, md_get(&again, MD_TYPEREF, row, MD_TYPEREF_NAME), &s), 0);
	assert_string_equal(s, name);
	assert_int_equal(md_string(&again, md_get(&again, MD_TYPEREF, 1, MD_TYPEREF_NAME), &s), 0);
	assert_string_equal(s, "System");
	md_free(&again);
	lt_buf_free(&out);
	md_free(&md);
}

/* CustomAttribute is sorted by Parent; an appended row moves into place and
 * rows with equal keys keep their order (II.22.10). */
static void test_sorted_append(void **state)
{
	static const uint32_t parents[] = { 1, 3, 3, 5 }, later[] = { 3, 2 };
	static const uint32_t want_parent[] = { 1, 2, 3, 3, 3, 5 }, want_value[] = { 1, 6, 2, 3, 5, 4 };
	struct md_image md, again, third;
	struct lt_buf out = LT_BUF_INIT, out2 = LT_BUF_INIT;
	uint32_t i, row, value = 1;
	(void)state;

	md_init(&md, "v4.0.30319");
	append_zero_rows(&md, MD_METHODDEF, 5);
	/* Each row's Value is a one-byte blob holding the order it was added in. */
	for (i = 0; i < 4; i++, value++) {
		uint8_t v = (uint8_t)value;
		uint32_t blob;
		assert_int_equal(md_add_blob(&md, &v, 1, &blob), 0);
		uint32_t ca[] = { coded(MD_CI_HASCUSTOMATTRIBUTE, MD_METHODDEF, parents[i]),
				  coded(MD_CI_CUSTOMATTRIBUTETYPE, MD_METHODDEF, 1), blob };
		assert_int_equal(md_append_row(&md, MD_CUSTOMATTRIBUTE, ca, &row), 0);
	}
	write_read(&md, &out, &again);
	for (i = 0; i < 2; i++, value++) {
		uint8_t v = (uint8_t)value;
		uint32_t blob;
		assert_int_equal(md_add_blob(&again, &v, 1, &blob), 0);
		uint32_t ca[] = { coded(MD_CI_HASCUSTOMATTRIBUTE, MD_METHODDEF, later[i]),
				  coded(MD_CI_CUSTOMATTRIBUTETYPE, MD_METHODDEF, 1), blob };
		assert_int_equal(md_append_row(&again, MD_CUSTOMATTRIBUTE, ca, &row), 0);
	}
	write_read(&again, &out2, &third);
	assert_int_equal(md_rows(&third, MD_CUSTOMATTRIBUTE), 6);
	for (i = 0; i < 6; i++) {
		const uint8_t *p;
		uint32_t len, tok;

		assert_int_equal(md_coded_decode(MD_CI_HASCUSTOMATTRIBUTE,
						 md_get(&third, MD_CUSTOMATTRIBUTE, i + 1, MD_CUSTOMATTRIBUTE_PARENT),
						 &tok), 0);
		assert_int_equal(tok, md_token(MD_METHODDEF, want_parent[i]));
		assert_int_equal(md_blob(&third, md_get(&third, MD_CUSTOMATTRIBUTE, i + 1, MD_CUSTOMATTRIBUTE_VALUE),
					 &p, &len), 0);
		assert_int_equal(len, 1);
		assert_int_equal(p[0], want_value[i]);
	}
	md_free(&third);
	md_free(&again);
	lt_buf_free(&out2);
	lt_buf_free(&out);
	md_free(&md);
}

/* Portable PDB: the #Pdb stream's type-system row counts size the PDB's
 * index columns (PortablePdb-Metadata.md), and the stream round-trips. */
static void test_pdb_sizes(void **state)
{
	struct md_image md, again;
	struct lt_buf out = LT_BUF_INIT;
	uint32_t row;
	(void)state;

	md_init(&md, "PDB v1.0");
	md.has_pdb = 1;
	memset(md.pdb_id, 0xAB, sizeof(md.pdb_id));
	md.pdb_entry_point = md_token(MD_METHODDEF, 70000);
	md.type_system_rows[MD_METHODDEF] = 70000;
	md.type_system_rows[MD_TYPEDEF] = 12;
	uint32_t sm[] = { 70000, 69999 };
	assert_int_equal(md_append_row(&md, MD_STATEMACHINEMETHOD, sm, &row), 0);
	write_read(&md, &out, &again);
	assert_true(again.has_pdb);
	assert_memory_equal(again.pdb_id, md.pdb_id, 20);
	assert_int_equal(again.pdb_entry_point, md.pdb_entry_point);
	assert_memory_equal(again.type_system_rows, md.type_system_rows, sizeof(md.type_system_rows));
	assert_int_equal(md_rows(&again, MD_METHODDEF), 0);
	assert_int_equal(width_in(&again, MD_STATEMACHINEMETHOD, MD_STATEMACHINEMETHOD_MOVENEXTMETHOD), 4);
	assert_int_equal(md_get(&again, MD_STATEMACHINEMETHOD, 1, MD_STATEMACHINEMETHOD_KICKOFFMETHOD), 69999);
	md_free(&again);
	lt_buf_free(&out);
	md_free(&md);
}

/* ---- Malformed metadata: each case gives -1 and LT_E_METADATA ---- */

/* A small valid root: Module, TypeRef, MethodDef, CustomAttribute rows and all four heaps. */
static void build_small(struct lt_buf *out)
{
	static const uint8_t mvid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	static const uint8_t sig[] = { 0x00, 0x00, 0x01 };
	static const uint16_t hello[] = { 'h', 'i' };
	struct md_image md;
	uint32_t name, g, blob, us, row;

	md_init(&md, "v4.0.30319");
	assert_int_equal(md_add_string(&md, "Small.dll", &name), 0);
	assert_int_equal(md_add_guid(&md, mvid, &g), 0);
	assert_int_equal(md_add_blob(&md, sig, sizeof(sig), &blob), 0);
	assert_int_equal(md_add_us(&md, hello, 2, &us), 0);
	uint32_t mod[] = { 0, name, g, 0, 0 };
	assert_int_equal(md_append_row(&md, MD_MODULE, mod, &row), 0);
	uint32_t tr[] = { coded(MD_CI_RESOLUTIONSCOPE, MD_MODULE, 1), name, 0 };
	assert_int_equal(md_append_row(&md, MD_TYPEREF, tr, &row), 0);
	uint32_t mdef[] = { 0, 0, 0, name, blob, 1 };
	assert_int_equal(md_append_row(&md, MD_METHODDEF, mdef, &row), 0);
	uint32_t ca[] = { coded(MD_CI_HASCUSTOMATTRIBUTE, MD_MODULE, 1),
			  coded(MD_CI_CUSTOMATTRIBUTETYPE, MD_METHODDEF, 1), blob };
	assert_int_equal(md_append_row(&md, MD_CUSTOMATTRIBUTE, ca, &row), 0);
	assert_int_equal(md_write(&md, out), 0);
	md_free(&md);
}

/* Offset of the stream header named `name` in root p (II.24.2.2), and the stream's offset. */
static size_t stream_header(const uint8_t *p, const char *name, uint32_t *stream_off)
{
	size_t pos = 16 + lt_le32(p + 12) + 4;
	unsigned i, n = lt_le16(p + pos - 2);

	for (i = 0; i < n; i++) {
		size_t nl = strlen((const char *)p + pos + 8);

		if (!strcmp((const char *)p + pos + 8, name)) {
			*stream_off = lt_le32(p + pos);
			return pos;
		}
		pos += 8 + ((nl + 4) & ~(size_t)3);
	}
	fail_msg("no stream %s", name);
	return 0;
}

/* Offset in the root of table t's row count, and of row 1 column col
 * (tables of build_small are Module, TypeRef, MethodDef, CustomAttribute). */
static size_t cell_offset(const uint8_t *p, enum md_table_id t, unsigned col, size_t *count_off)
{
	static const enum md_table_id present[] = { MD_MODULE, MD_TYPEREF, MD_METHODDEF, MD_CUSTOMATTRIBUTE };
	struct md_sizes s = { { 0 }, 0 };
	uint32_t tables;
	size_t off;
	unsigned i, c;

	stream_header(p, "#~", &tables);
	for (i = 0; i < 4; i++)
		s.rows[present[i]] = 1;
	off = tables + 24 + 4 * 4;
	for (i = 0; present[i] != t; i++)
		off += md_row_size(&s, present[i]);
	*count_off = tables + 24 + 4 * i;
	for (c = 0; c < col; c++)
		off += md_col_width(&s, &md_schema[t].cols[c]);
	return off;
}

static void expect_bad(const uint8_t *p, size_t n)
{
	struct md_image md;

	lt_error_clear();
	assert_int_equal(md_read(&md, p, n), -1);
	assert_int_equal(lt_error_last()->code, LT_E_METADATA);
}

/* The small root is valid as built. */
static void test_small_valid(void **state)
{
	struct lt_buf b = LT_BUF_INIT;
	struct md_image md;
	const char *s;
	size_t count;
	(void)state;

	build_small(&b);
	assert_int_equal(md_read(&md, b.data, b.len), 0);
	assert_int_equal(md_string(&md, md_get(&md, MD_TYPEREF, 1, MD_TYPEREF_NAME), &s), 0);
	assert_string_equal(s, "Small.dll");
	assert_int_equal(lt_le16(b.data + cell_offset(b.data, MD_TYPEREF, MD_TYPEREF_NAME, &count)),
			 md_get(&md, MD_TYPEREF, 1, MD_TYPEREF_NAME));
	assert_int_equal(lt_le32(b.data + count), 1);
	md_free(&md);
	lt_buf_free(&b);
}

static void test_truncated(void **state)
{
	struct lt_buf b = LT_BUF_INIT;
	size_t n;
	(void)state;

	build_small(&b);
	for (n = 0; n < b.len; n++) {
		uint8_t *copy = malloc(n ? n : 1); /* exact size so ASan sees any overread */
		memcpy(copy, b.data, n);
		expect_bad(copy, n);
		free(copy);
	}
	lt_buf_free(&b);
}

static void test_bad_signature(void **state)
{
	struct lt_buf b = LT_BUF_INIT;
	(void)state;

	build_small(&b);
	b.data[0] = 'X';
	expect_bad(b.data, b.len);
	lt_buf_free(&b);
}

static void test_bad_version_length(void **state)
{
	struct lt_buf b = LT_BUF_INIT;
	(void)state;

	build_small(&b);
	lt_put32(b.data + 12, 13);
	expect_bad(b.data, b.len);
	lt_put32(b.data + 12, 0xFFFFFFF0);
	expect_bad(b.data, b.len);
	lt_buf_free(&b);
}

static void test_stream_past_end(void **state)
{
	struct lt_buf b = LT_BUF_INIT;
	uint32_t off;
	size_t h;
	(void)state;

	build_small(&b);
	h = stream_header(b.data, "#Blob", &off);
	lt_put32(b.data + h + 4, (uint32_t)(b.len - off + 1));
	expect_bad(b.data, b.len);
	lt_put32(b.data + h, 0xFFFFFFFC);
	lt_put32(b.data + h + 4, 8);
	expect_bad(b.data, b.len);
	lt_buf_free(&b);
}

static void test_duplicate_stream(void **state)
{
	struct lt_buf b = LT_BUF_INIT;
	uint32_t off;
	size_t h;
	(void)state;

	build_small(&b);
	h = stream_header(b.data, "#Blob", &off);
	memcpy(b.data + h + 8, "#GUID", 5); /* same padded name length */
	expect_bad(b.data, b.len);
	lt_buf_free(&b);
}

static void test_missing_tables(void **state)
{
	struct lt_buf b = LT_BUF_INIT;
	uint32_t off;
	size_t h;
	(void)state;

	build_small(&b);
	h = stream_header(b.data, "#~", &off);
	b.data[h + 9] = 'x';
	expect_bad(b.data, b.len);
	lt_buf_free(&b);
}

static void test_row_count_over_token(void **state)
{
	struct lt_buf b = LT_BUF_INIT;
	size_t count;
	(void)state;

	build_small(&b);
	cell_offset(b.data, MD_TYPEREF, 0, &count);
	lt_put32(b.data + count, 0x1000000);
	expect_bad(b.data, b.len);
	lt_buf_free(&b);
}

static void test_rows_past_stream(void **state)
{
	struct lt_buf b = LT_BUF_INIT;
	size_t count;
	(void)state;

	build_small(&b);
	cell_offset(b.data, MD_TYPEREF, 0, &count);
	lt_put32(b.data + count, 0x100);
	expect_bad(b.data, b.len);
	lt_buf_free(&b);
}

static void test_unknown_table(void **state)
{
	struct lt_buf b = LT_BUF_INIT;
	uint32_t off;
	(void)state;

	build_small(&b);
	stream_header(b.data, "#~", &off);
	b.data[off + 8 + 5] |= 0x20; /* Valid bit 0x2D: no such table */
	expect_bad(b.data, b.len);
	lt_buf_free(&b);
}

/* One cell of build_small's tables set to a value its column may not hold. */
struct cell_case {
	enum md_table_id table;
	unsigned col;
	uint16_t value;
};

static const struct cell_case string_past_heap = { MD_TYPEREF, MD_TYPEREF_NAME, 0xFFF0 };
static const struct cell_case blob_past_heap = { MD_METHODDEF, MD_METHODDEF_SIGNATURE, 0x100 };
static const struct cell_case guid_past_heap = { MD_MODULE, MD_MODULE_MVID, 2 };
/* ParamList may be rows + 1 = 1, not 2. */
static const struct cell_case list_past_rows = { MD_METHODDEF, MD_METHODDEF_PARAMLIST, 2 };
/* CustomAttributeType tag 0 is unused; tag 5 is past its tags. */
static const struct cell_case coded_unused_tag = { MD_CUSTOMATTRIBUTE, MD_CUSTOMATTRIBUTE_TYPE, 1 << 3 | 0 };
static const struct cell_case coded_tag_past = { MD_CUSTOMATTRIBUTE, MD_CUSTOMATTRIBUTE_TYPE, 1 << 3 | 5 };
/* ResolutionScope tag 0 (Module), row 2 of 1. */
static const struct cell_case coded_past_rows = { MD_TYPEREF, MD_TYPEREF_RESOLUTIONSCOPE, 2 << 2 };

static void test_bad_cell(void **state)
{
	const struct cell_case *cc = *state;
	struct lt_buf b = LT_BUF_INIT;
	size_t count;

	build_small(&b);
	lt_put16(b.data + cell_offset(b.data, cc->table, cc->col, &count), cc->value);
	expect_bad(b.data, b.len);
	lt_buf_free(&b);
}

/* md_read_tables: the tables asked for read as md_read reads them, every row count kept, the other
 * tables neither read nor checked (a bad CustomAttribute cell passes when it is not asked for). */
static void test_read_some_tables(void **state)
{
	const uint64_t wanted = 1ull << MD_TYPEDEF | 1ull << MD_METHODDEF;
	struct real_file f;
	struct md_image all, some;
	struct lt_buf b = LT_BUF_INIT;
	size_t count;
	(void)state;

	load_real(MSCORLIB, &f);
	assert_int_equal(md_read(&all, f.root, f.root_len), 0);
	assert_int_equal(md_read_tables(&some, f.root, f.root_len, wanted), 0);
	for (unsigned t = 0; t < MD_TABLE_MAX; t++) {
		const struct md_table *a = &all.tables[t], *o = &some.tables[t];

		assert_int_equal(a->rows, o->rows);
		if (wanted >> t & 1)
			assert_memory_equal(a->cells, o->cells, (size_t)a->rows * a->ncols * sizeof *a->cells);
		else
			assert_null(o->cells);
	}
	assert_true(some.tables[MD_CUSTOMATTRIBUTE].rows > 0);
	md_free(&all);
	md_free(&some);
	free(f.data);

	build_small(&b);
	lt_put16(b.data + cell_offset(b.data, coded_tag_past.table, coded_tag_past.col, &count), coded_tag_past.value);
	expect_bad(b.data, b.len);
	assert_int_equal(md_read_tables(&some, b.data, b.len, ~0ull & ~(1ull << MD_CUSTOMATTRIBUTE)), 0);
	assert_int_equal(md_rows(&some, MD_CUSTOMATTRIBUTE), 1);
	md_free(&some);
	lt_buf_free(&b);
}

static void test_guid_heap_size(void **state)
{
	struct lt_buf b = LT_BUF_INIT;
	uint32_t off;
	size_t h;
	(void)state;

	build_small(&b);
	h = stream_header(b.data, "#GUID", &off);
	lt_put32(b.data + h + 4, 12);
	expect_bad(b.data, b.len);
	lt_buf_free(&b);
}

/* Heap reads check the index and the entry's extent. */
static void test_heap_reads_out_of_range(void **state)
{
	struct lt_buf b = LT_BUF_INIT;
	struct md_image md;
	const uint8_t *p;
	const char *s;
	uint32_t len;
	(void)state;

	build_small(&b);
	assert_int_equal(md_read(&md, b.data, b.len), 0);
	assert_int_equal(md_string(&md, md.strings.orig_size, &s), -1);
	assert_int_equal(lt_error_last()->code, LT_E_METADATA);
	assert_int_equal(md_blob(&md, md.blob.orig_size + 5, &p, &len), -1);
	assert_int_equal(lt_error_last()->code, LT_E_METADATA);
	assert_int_equal(md_us(&md, 0xFFFFFFFF, &p, &len), -1);
	assert_int_equal(lt_error_last()->code, LT_E_METADATA);
	assert_int_equal(md_guid(&md, 2, &p), -1);
	assert_int_equal(lt_error_last()->code, LT_E_METADATA);
	/* A blob whose length passes the heap's end. */
	((uint8_t *)md.blob.orig)[1] = 0x7F;
	assert_int_equal(md_blob(&md, 1, &p, &len), -1);
	assert_int_equal(lt_error_last()->code, LT_E_METADATA);
	md_free(&md);
	lt_buf_free(&b);
}

/* Coded index encode/decode reject tables and tags the index cannot hold. */
static void test_coded_errors(void **state)
{
	uint32_t v;
	(void)state;

	assert_int_equal(md_coded_encode(MD_CI_TYPEDEFORREF, md_token(MD_METHODDEF, 1), &v), -1);
	assert_int_equal(lt_error_last()->code, LT_E_METADATA);
	assert_int_equal(md_coded_decode(MD_CI_CUSTOMATTRIBUTETYPE, 1 << 3 | 1, &v), -1);
	assert_int_equal(lt_error_last()->code, LT_E_METADATA);
	assert_int_equal(md_coded_decode(MD_CI_TYPEDEFORREF, 5 << 2 | 3, &v), -1);
	assert_int_equal(lt_error_last()->code, LT_E_METADATA);
	assert_int_equal(md_coded_decode(MD_CI_TYPEDEFORREF, 5 << 2 | 1, &v), 0);
	assert_int_equal(v, md_token(MD_TYPEREF, 5));
}

/* Every one-byte corruption of the small root is either read (and then
 * written again) or rejected with LT_E_METADATA; never a crash (ASan). */
static void test_every_byte_flipped(void **state)
{
	struct lt_buf b = LT_BUF_INIT, out = LT_BUF_INIT;
	struct md_image md;
	size_t i;
	unsigned accepted = 0;
	(void)state;

	build_small(&b);
	for (i = 0; i < b.len; i++) {
		b.data[i] ^= 0xFF;
		lt_error_clear();
		if (md_read(&md, b.data, b.len) == 0) {
			accepted++;
			out.len = 0;
			assert_int_equal(md_write(&md, &out), 0);
			md_free(&md);
		} else {
			assert_int_equal(lt_error_last()->code, LT_E_METADATA);
		}
		b.data[i] ^= 0xFF;
	}
	/* Flipping a flags word, a padding byte or an unchecked constant is harmless. */
	assert_true(accepted > 0 && accepted < b.len);
	lt_buf_free(&out);
	lt_buf_free(&b);
}

/* A list column cannot point one past a table of exactly 0xFFFF rows: the
 * value 0x10000 needs 4 bytes while the rule gives 2 (II.24.2.6). */
static void test_write_cell_does_not_fit(void **state)
{
	struct md_image md;
	struct lt_buf out = LT_BUF_INIT;
	uint32_t row;
	(void)state;

	md_init(&md, "v4.0.30319");
	append_zero_rows(&md, MD_FIELD, 0xFFFF);
	uint32_t td[] = { 0, 0, 0, 0, 0x10000, 1 };
	assert_int_equal(md_append_row(&md, MD_TYPEDEF, td, &row), 0);
	assert_int_equal(md_write(&md, &out), -1);
	assert_int_equal(lt_error_last()->code, LT_E_LIMIT);
	lt_buf_free(&out);
	md_free(&md);
}

/* Rows are numbered in a token's 24 bits (II.22). */
static void test_append_row_limit(void **state)
{
	struct md_image md;
	uint32_t cell = 0, row;
	(void)state;

	md_init(&md, "v4.0.30319");
	md.tables[MD_STANDALONESIG].rows = 0xFFFFFF; /* no cells needed: the check comes first */
	assert_int_equal(md_append_row(&md, MD_STANDALONESIG, &cell, &row), -1);
	assert_int_equal(lt_error_last()->code, LT_E_LIMIT);
	md.tables[MD_STANDALONESIG].rows = 0;
	md_free(&md);
}

/* A #Blob or #US entry is at most 0x1FFFFFFF bytes (II.24.2.4); the length
 * is checked before the bytes are read. */
static void test_heap_add_limits(void **state)
{
	static const uint8_t one = 1;
	static const uint16_t unit = 'a';
	struct md_image md;
	uint32_t idx;
	(void)state;

	md_init(&md, "v4.0.30319");
	assert_int_equal(md_add_blob(&md, &one, 0x20000000, &idx), -1);
	assert_int_equal(lt_error_last()->code, LT_E_LIMIT);
	assert_int_equal(md_add_us(&md, &unit, 0x10000000, &idx), -1);
	assert_int_equal(lt_error_last()->code, LT_E_LIMIT);
	md_free(&md);
}

#define BAD_CELL(c) { "test_bad_cell_" #c, test_bad_cell, NULL, NULL, (void *)&c }

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identical_mscorlib),
		cmocka_unit_test(test_identical_system),
		cmocka_unit_test(test_identical_corelib),
		cmocka_unit_test(test_edit_real),
		cmocka_unit_test(test_coded_width_2047),
		cmocka_unit_test(test_coded_width_2048),
		cmocka_unit_test(test_table_index_65535),
		cmocka_unit_test(test_table_index_65536),
		cmocka_unit_test(test_strings_heap_widens),
		cmocka_unit_test(test_sorted_append),
		cmocka_unit_test(test_pdb_sizes),
		cmocka_unit_test(test_small_valid),
		cmocka_unit_test(test_read_some_tables),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bad_signature),
		cmocka_unit_test(test_bad_version_length),
		cmocka_unit_test(test_stream_past_end),
		cmocka_unit_test(test_duplicate_stream),
		cmocka_unit_test(test_missing_tables),
		cmocka_unit_test(test_row_count_over_token),
		cmocka_unit_test(test_rows_past_stream),
		cmocka_unit_test(test_unknown_table),
		BAD_CELL(string_past_heap),
		BAD_CELL(blob_past_heap),
		BAD_CELL(guid_past_heap),
		BAD_CELL(list_past_rows),
		BAD_CELL(coded_unused_tag),
		BAD_CELL(coded_tag_past),
		BAD_CELL(coded_past_rows),
		cmocka_unit_test(test_guid_heap_size),
		cmocka_unit_test(test_heap_reads_out_of_range),
		cmocka_unit_test(test_coded_errors),
		cmocka_unit_test(test_every_byte_flipped),
		cmocka_unit_test(test_write_cell_does_not_fit),
		cmocka_unit_test(test_append_row_limit),
		cmocka_unit_test(test_heap_add_limits),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
