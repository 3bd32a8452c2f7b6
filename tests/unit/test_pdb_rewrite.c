/* test_pdb_rewrite.c - unit tests of pdb_rewrite.c on portable PDBs built here: offsets re-mapped, rows added, widths, ids, checksums. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "il_body.h"
#include "image.h"
#include "image_body.h"
#include "lt_error.h"
#include "pdb_rewrite.h"
#include "pdb_seq.h"

/* nop; ldc.i4.1; pop; nop; ret - offsets 0..4 (tiny header, II.25.4.2). */
static const uint8_t body5[] = { 5 << 2 | 2, 0x00, 0x17, 0x26, 0x00, 0x2A };
/* Points: (0) line 10, (2) line 11. */
static const uint8_t points[] = { 0x00, 0x00, 0x00, 0x05, 0x0A, 0x03, 0x02, 0x00, 0x05, 0x02, 0x00 };
/* Any GUID for a kind with no IL offsets (Edit and Continue Local Slot Map). */
static const uint8_t kind_enc[16] = { 0xA8, 0x52, 0x5F, 0x75, 0xC5, 0x91, 0xBE, 0x45,
				      0xB4, 0xB8, 0x20, 0x95, 0x71, 0xE5, 0x52, 0xBD };

struct fixture {
	struct img *img;
	struct md_image pdb;   /* built, then read back from bytes */
	struct lt_buf bytes;   /* what pdb was read from */
	struct lt_buf out;     /* the rewritten PDB */
	struct md_image back;  /* out, read back */
	uint8_t id[20], sha256[32];
	size_t id_offset;
};

/* An image with n MethodDef rows and no file. */
static struct img *image(uint32_t n)
{
	struct img *img = calloc(1, sizeof *img);
	uint32_t cells[MD_METHODDEF_COLS] = { 0 }, row;

	assert_non_null(img);
	md_init(&img->md, "v4.0.30319");
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(md_append_row(&img->md, MD_METHODDEF, cells, &row), 0);
	return img;
}

/* Rewrite MethodDef `row` of img: body5 with ldc.i4.0; pop inserted before input index `at`. */
static void rewrite(struct img *img, uint32_t row, uint32_t at)
{
	struct il_body b;
	struct il_instr pair[2];

	memset(pair, 0, sizeof pair);
	pair[0].op = IL_LDC_I4_0;
	pair[1].op = IL_POP;
	assert_int_equal(il_decode(body5, sizeof body5, &b), 0);
	assert_int_equal(il_insert(&b, at, pair, 2), 0);
	assert_int_equal(img_encode_body(img, row, &b), 0);
	il_body_free(&b);
}

static void row(struct md_image *md, enum md_table_id t, const uint32_t *cells)
{
	uint32_t r;
	assert_int_equal(md_append_row(md, t, cells, &r), 0);
}

static uint32_t blob(struct md_image *md, const uint8_t *p, uint32_t len)
{
	uint32_t ix;
	assert_int_equal(md_add_blob(md, p, len, &ix), 0);
	return ix;
}

static uint32_t guid(struct md_image *md, const uint8_t g[16])
{
	uint32_t ix;
	assert_int_equal(md_add_guid(md, g, &ix), 0);
	return ix;
}

static uint32_t cdi_parent(uint32_t methoddef)
{
	uint32_t cell;
	assert_int_equal(md_coded_encode(MD_CI_HASCUSTOMDEBUGINFORMATION, md_token(MD_METHODDEF, methoddef), &cell), 0);
	return cell;
}

/* A portable PDB for n MethodDefs: method 1 has two sequence points, a root scope and one
 * nested scope [2, 4), hoisted scopes and async stepping information; method 2 a root scope;
 * method n a custom debug information row of a kind without offsets. */
static void build_pdb(struct fixture *f, uint32_t n)
{
	static const uint8_t name[] = { '/', 0 };
	static const uint8_t hoisted[] = { 2, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	/* catch handler at 3 (stored + 1), yield at 2, resume at 3 in method 1 */
	static const uint8_t async[] = { 4, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 1 };
	static const uint8_t enc[] = { 0x01, 0x02 };
	struct md_image *md = &f->pdb;

	md_init(md, "PDB v1.0");
	md->has_pdb = 1;
	md->type_system_rows[MD_METHODDEF] = n;
	row(md, MD_DOCUMENT, (uint32_t[]){ blob(md, name, 2), 0, 0, 0 });
	row(md, MD_METHODDEBUGINFORMATION, (uint32_t[]){ 1, blob(md, points, sizeof points) });
	for (uint32_t r = 2; r <= n; r++)
		row(md, MD_METHODDEBUGINFORMATION, (uint32_t[]){ 0, 0 });
	row(md, MD_LOCALSCOPE, (uint32_t[]){ 1, 0, 1, 1, 0, 5 });
	row(md, MD_LOCALSCOPE, (uint32_t[]){ 1, 0, 1, 1, 2, 2 });
	row(md, MD_LOCALSCOPE, (uint32_t[]){ 2, 0, 1, 1, 0, 5 });
	row(md, MD_CUSTOMDEBUGINFORMATION, (uint32_t[]){ cdi_parent(1), guid(md, pdb_kind_hoisted_scopes),
							 blob(md, hoisted, sizeof hoisted) });
	row(md, MD_CUSTOMDEBUGINFORMATION, (uint32_t[]){ cdi_parent(1), guid(md, pdb_kind_async_stepping),
							 blob(md, async, sizeof async) });
	row(md, MD_CUSTOMDEBUGINFORMATION, (uint32_t[]){ cdi_parent(n), guid(md, kind_enc), blob(md, enc, 2) });
}

/* Write f->pdb and read it back, as a PDB read from a file would be. */
static void reread(struct fixture *f)
{
	f->bytes.len = 0;
	assert_int_equal(md_write(&f->pdb, &f->bytes), 0);
	md_free(&f->pdb);
	assert_int_equal(md_read(&f->pdb, f->bytes.data, f->bytes.len), 0);
}

static void setup_fixture(struct fixture *f, uint32_t n)
{
	memset(f, 0, sizeof *f);
	f->img = image(n);
	build_pdb(f, n);
	reread(f);
}

static void teardown_fixture(struct fixture *f)
{
	md_free(&f->back);
	md_free(&f->pdb);
	lt_buf_free(&f->bytes);
	lt_buf_free(&f->out);
	img_free(f->img);
}

static void rewrite_ok(struct fixture *f)
{
	if (pdb_rewrite(&f->pdb, f->img, &f->out, f->id, &f->id_offset, f->sha256) < 0)
		fail_msg("pdb_rewrite: %s", lt_error_last()->msg);
	assert_int_equal(md_read(&f->back, f->out.data, f->out.len), 0);
}

/* pdb_rewrite fails with LT_E_PDB and a message that says `what`. */
static void rewrite_fails(struct fixture *f, const char *what)
{
	assert_int_equal(pdb_rewrite(&f->pdb, f->img, &f->out, f->id, &f->id_offset, f->sha256), -1);
	assert_int_equal(lt_error_last()->code, LT_E_PDB);
	if (!strstr(lt_error_last()->msg, what))
		fail_msg("\"%s\" does not say \"%s\"", lt_error_last()->msg, what);
}

static void cdi_value(const struct md_image *md, uint32_t r, const uint8_t **p, uint32_t *len)
{
	assert_int_equal(md_blob(md, md_get(md, MD_CUSTOMDEBUGINFORMATION, r, MD_CUSTOMDEBUGINFORMATION_VALUE), p, len), 0);
}

/* Method 1 rewritten with two instructions before the pop at 2 (a statement start); two methods added. */
static void test_rewrite(void **state)
{
	static const uint32_t cells[MD_METHODDEF_COLS] = { 0 };
	struct fixture f;
	struct pdb_seq s;
	const uint8_t *p;
	uint32_t len, added;

	(void)state;
	setup_fixture(&f, 3);
	rewrite(f.img, 1, 2);
	assert_int_equal(md_append_row(&f.img->md, MD_METHODDEF, cells, &added), 0);
	assert_int_equal(md_append_row(&f.img->md, MD_METHODDEF, cells, &added), 0);
	rewrite_ok(&f);

	/* One MethodDebugInformation row per MethodDef; the #Pdb counts follow the image. */
	assert_int_equal(md_rows(&f.back, MD_METHODDEBUGINFORMATION), 5);
	assert_int_equal(f.back.type_system_rows[MD_METHODDEF], 5);
	assert_int_equal(md_get(&f.back, MD_METHODDEBUGINFORMATION, 5, MD_METHODDEBUGINFORMATION_SEQUENCEPOINTS), 0);
	/* Sequence points: line 10 at 0 (now over the inserted code too), line 11 at 4. */
	assert_int_equal(md_blob(&f.back, md_get(&f.back, MD_METHODDEBUGINFORMATION, 1, MD_METHODDEBUGINFORMATION_SEQUENCEPOINTS),
				 &p, &len), 0);
	assert_int_equal(pdb_seq_decode(p, len, 1, &s), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.points[0].offset, 0);
	assert_int_equal(s.points[1].offset, 4);
	assert_int_equal(s.points[1].start_line, 11);
	pdb_seq_free(&s);
	/* Scopes: the root spans the new 7 bytes; [2, 4) became [4, 6); method 2's is unchanged. */
	assert_int_equal(md_get(&f.back, MD_LOCALSCOPE, 1, MD_LOCALSCOPE_LENGTH), 7);
	assert_int_equal(md_get(&f.back, MD_LOCALSCOPE, 2, MD_LOCALSCOPE_STARTOFFSET), 4);
	assert_int_equal(md_get(&f.back, MD_LOCALSCOPE, 2, MD_LOCALSCOPE_LENGTH), 2);
	assert_int_equal(md_get(&f.back, MD_LOCALSCOPE, 3, MD_LOCALSCOPE_LENGTH), 5);
	/* Hoisted scopes: (2, 2) -> (4, 2); (0, 0) stays. */
	cdi_value(&f.back, 1, &p, &len);
	assert_int_equal(len, 16);
	assert_int_equal(lt_le32(p), 4);
	assert_int_equal(lt_le32(p + 4), 2);
	assert_int_equal(lt_le32(p + 8), 0);
	assert_int_equal(lt_le32(p + 12), 0);
	/* Async: catch 3 -> 5 (stored 6), yield 2 -> 4, resume 3 -> 5, method 1. */
	cdi_value(&f.back, 2, &p, &len);
	assert_int_equal(len, 13);
	assert_int_equal(lt_le32(p), 6);
	assert_int_equal(lt_le32(p + 4), 4);
	assert_int_equal(lt_le32(p + 8), 5);
	assert_int_equal(p[12], 1);
	teardown_fixture(&f);
}

/* The id: SHA-256 of the PDB with the id zeroed, GUID version/variant and stamp bits set. */
static void test_id(void **state)
{
	struct fixture f;
	uint8_t hash[64];
	size_t n;

	(void)state;
	setup_fixture(&f, 2);
	rewrite(f.img, 1, 0);
	rewrite_ok(&f);
	assert_memory_equal(f.back.pdb_id, f.id, 20);
	assert_memory_equal(f.out.data + f.id_offset, f.id, 20);
	assert_int_equal(pdb_checksum(f.out.data, f.out.len, f.id_offset, "SHA256", hash, &n), 0);
	assert_int_equal(n, 32);
	assert_memory_equal(f.sha256, hash, 32); /* the hash given back is the SHA256 checksum */
	assert_memory_equal(f.id, hash, 7);
	assert_int_equal(f.id[7], (hash[7] & 0x0F) | 0x40);
	assert_int_equal(f.id[8], (hash[8] & 0x3F) | 0x80);
	assert_memory_equal(f.id + 9, hash + 9, 10);
	assert_int_equal(f.id[19], hash[19] | 0x80);
	assert_int_equal(pdb_checksum(f.out.data, f.out.len, f.id_offset, "SHA384", hash, &n), 0);
	assert_int_equal(n, 48);
	assert_int_equal(pdb_checksum(f.out.data, f.out.len, f.id_offset, "SHA512", hash, &n), 0);
	assert_int_equal(n, 64);
	teardown_fixture(&f);
}

/* Unchanged bodies, no methods added: same rows, only the id differs from a zeroed id. */
static void test_nothing_changed(void **state)
{
	struct fixture f;

	(void)state;
	setup_fixture(&f, 2);
	rewrite_ok(&f);
	assert_int_equal(md_rows(&f.back, MD_METHODDEBUGINFORMATION), 2);
	assert_int_equal(md_get(&f.back, MD_METHODDEBUGINFORMATION, 1, MD_METHODDEBUGINFORMATION_SEQUENCEPOINTS),
			 md_get(&f.pdb, MD_METHODDEBUGINFORMATION, 1, MD_METHODDEBUGINFORMATION_SEQUENCEPOINTS));
	assert_int_equal(md_get(&f.back, MD_LOCALSCOPE, 2, MD_LOCALSCOPE_STARTOFFSET), 2);
	teardown_fixture(&f);
}

/* 2047 MethodDefs give 2-byte HasCustomDebugInformation cells; 2050 need 4 (II.24.2.6, 5 tag bits). */
static void test_coded_index_widens(void **state)
{
	static const uint32_t cells[MD_METHODDEF_COLS] = { 0 };
	struct fixture f;
	struct md_sizes before, after;
	uint32_t added, parent;

	(void)state;
	setup_fixture(&f, 2047);
	md_image_sizes(&f.pdb, f.pdb.heap_sizes, &before);
	assert_int_equal(md_col_width(&before, &md_schema[MD_CUSTOMDEBUGINFORMATION].cols[MD_CUSTOMDEBUGINFORMATION_PARENT]), 2);
	rewrite(f.img, 1, 2);
	for (int i = 0; i < 3; i++)
		assert_int_equal(md_append_row(&f.img->md, MD_METHODDEF, cells, &added), 0);
	rewrite_ok(&f);
	md_image_sizes(&f.back, f.back.heap_sizes, &after);
	assert_int_equal(md_col_width(&after, &md_schema[MD_CUSTOMDEBUGINFORMATION].cols[MD_CUSTOMDEBUGINFORMATION_PARENT]), 4);
	assert_int_equal(md_rows(&f.back, MD_METHODDEBUGINFORMATION), 2050);
	assert_int_equal(md_coded_decode(MD_CI_HASCUSTOMDEBUGINFORMATION,
					 md_get(&f.back, MD_CUSTOMDEBUGINFORMATION, 3, MD_CUSTOMDEBUGINFORMATION_PARENT), &parent), 0);
	assert_int_equal(parent, md_token(MD_METHODDEF, 2047));
	assert_int_equal(md_get(&f.back, MD_LOCALSCOPE, 2, MD_LOCALSCOPE_STARTOFFSET), 4);
	teardown_fixture(&f);
}

static void test_not_this_assembly(void **state)
{
	struct fixture f;

	(void)state;
	setup_fixture(&f, 2);
	f.pdb.type_system_rows[MD_TYPEDEF] = 4; /* the image has no TypeDef */
	rewrite_fails(&f, "not this assembly's PDB");
	teardown_fixture(&f);

	setup_fixture(&f, 2);
	f.pdb.type_system_rows[MD_METHODDEF] = 1; /* two MethodDebugInformation rows for one MethodDef */
	rewrite_fails(&f, "2 rows for 1 MethodDefs");
	teardown_fixture(&f);
}

static void test_body_without_map(void **state)
{
	struct fixture f;

	(void)state;
	setup_fixture(&f, 2);
	assert_int_equal(img_set_method_body(f.img, 1, body5, sizeof body5), 0);
	rewrite_fails(&f, "without an offset map");
	teardown_fixture(&f);
}

/* A method's scopes out of order once its instructions were moved around. */
static void test_scopes_out_of_order(void **state)
{
	struct fixture f;
	struct il_body b;
	struct il_instr t;

	(void)state;
	setup_fixture(&f, 2);
	/* Method 2: after its root, scopes [0, 1) and [3, 4); then the nops at 0 and 3 swap places,
	 * so the second becomes [0, 4): longer than the one before it with the same start. */
	row(&f.pdb, MD_LOCALSCOPE, (uint32_t[]){ 2, 0, 1, 1, 0, 1 });
	row(&f.pdb, MD_LOCALSCOPE, (uint32_t[]){ 2, 0, 1, 1, 3, 1 });
	assert_int_equal(il_decode(body5, sizeof body5, &b), 0);
	t = b.ins[0];
	b.ins[0] = b.ins[3];
	b.ins[3] = t;
	assert_int_equal(img_encode_body(f.img, 2, &b), 0);
	il_body_free(&b);
	rewrite_fails(&f, "LocalScope row 5: out of order");
	teardown_fixture(&f);
}

static void test_scope_past_code(void **state)
{
	struct fixture f;

	(void)state;
	setup_fixture(&f, 2);
	md_set(&f.pdb, MD_LOCALSCOPE, 2, MD_LOCALSCOPE_LENGTH, 10);
	rewrite(f.img, 1, 0);
	rewrite_fails(&f, "LocalScope row 2: IL range 0x2+0xa passes");
	teardown_fixture(&f);
}

/* Replace custom debug information row r's value with p[0..len). */
static void set_cdi(struct fixture *f, uint32_t r, const uint8_t *p, uint32_t len)
{
	md_set(&f->pdb, MD_CUSTOMDEBUGINFORMATION, r, MD_CUSTOMDEBUGINFORMATION_VALUE, blob(&f->pdb, p, len));
}

static void test_bad_custom_blobs(void **state)
{
	static const uint8_t odd[7] = { 0 };
	static const uint8_t short_async[] = { 1, 0, 0 };
	static const uint8_t past[] = { 0, 0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 1 }; /* yield at 9 of 5 bytes */
	struct fixture f;

	(void)state;
	setup_fixture(&f, 2);
	set_cdi(&f, 1, odd, sizeof odd);
	rewrite(f.img, 1, 0);
	rewrite_fails(&f, "hoisted local scopes blob: 7 bytes");
	teardown_fixture(&f);

	setup_fixture(&f, 2);
	set_cdi(&f, 2, short_async, sizeof short_async);
	rewrite(f.img, 1, 0);
	rewrite_fails(&f, "CustomDebugInformation row 2: async stepping blob");
	teardown_fixture(&f);

	setup_fixture(&f, 2);
	set_cdi(&f, 2, past, sizeof past);
	rewrite(f.img, 1, 0);
	rewrite_fails(&f, "IL offset 0x9 passes");
	teardown_fixture(&f);
}

static void test_bad_sequence_points(void **state)
{
	static const uint8_t bad[] = { 0x00, 0xFF };
	struct fixture f;

	(void)state;
	setup_fixture(&f, 2);
	md_set(&f.pdb, MD_METHODDEBUGINFORMATION, 1, MD_METHODDEBUGINFORMATION_SEQUENCEPOINTS, blob(&f.pdb, bad, 2));
	rewrite(f.img, 1, 0);
	rewrite_fails(&f, "MethodDebugInformation row 1: SequencePoints blob");
	teardown_fixture(&f);
}

static void test_checksum_errors(void **state)
{
	static const uint8_t pdb[24] = { 0 };
	uint8_t hash[64];
	size_t n;

	(void)state;
	assert_int_equal(pdb_checksum(pdb, sizeof pdb, 0, "MD5", hash, &n), -1);
	assert_int_equal(lt_error_last()->code, LT_E_PDB);
	assert_int_equal(pdb_checksum(pdb, sizeof pdb, 5, "SHA256", hash, &n), -1);
	assert_int_equal(lt_error_last()->code, LT_E_PDB);
	assert_int_equal(pdb_checksum(pdb, sizeof pdb, 4, "SHA256", hash, &n), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rewrite),
		cmocka_unit_test(test_id),
		cmocka_unit_test(test_nothing_changed),
		cmocka_unit_test(test_coded_index_widens),
		cmocka_unit_test(test_not_this_assembly),
		cmocka_unit_test(test_body_without_map),
		cmocka_unit_test(test_scopes_out_of_order),
		cmocka_unit_test(test_scope_past_code),
		cmocka_unit_test(test_bad_custom_blobs),
		cmocka_unit_test(test_bad_sequence_points),
		cmocka_unit_test(test_checksum_errors),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
