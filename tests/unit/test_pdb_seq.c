/* test_pdb_seq.c - unit tests of pdb_seq.c (Sequence Points blobs: decode, encode, re-map). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "lt_error.h"
#include "lt_file.h"
#include "md_image.h"
#include "pdb_seq.h"

/* LocalSignature 0; (0) visible 10:3-10:8; (4) hidden; document 2; (6) visible 12:2-13:0.
 * Compressed integers (II.23.2): signed ones rotated, sign in bit 0: -2 is 0x7D, +2 is 0x04, -1 is 0x7F. */
static const uint8_t blob4[] = { 0x00,
				 0x00, 0x00, 0x05, 0x0A, 0x03,
				 0x04, 0x00, 0x00,
				 0x00, 0x02,
				 0x02, 0x01, 0x7D, 0x04, 0x7F };

static void test_decode(void **state)
{
	struct pdb_seq s;

	(void)state;
	assert_int_equal(pdb_seq_decode(blob4, sizeof blob4, 1, &s), 0);
	assert_int_equal(s.local_signature, 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.points[0].offset, 0);
	assert_int_equal(s.points[0].document, 1);
	assert_int_equal(s.points[0].start_line, 10);
	assert_int_equal(s.points[0].start_column, 3);
	assert_int_equal(s.points[0].end_line, 10);
	assert_int_equal(s.points[0].end_column, 8);
	assert_true(s.points[1].hidden);
	assert_int_equal(s.points[1].offset, 4);
	assert_int_equal(s.points[1].document, 1);
	assert_int_equal(s.points[2].offset, 6);
	assert_int_equal(s.points[2].document, 2);
	assert_int_equal(s.points[2].start_line, 12);
	assert_int_equal(s.points[2].start_column, 2);
	assert_int_equal(s.points[2].end_line, 13);
	assert_int_equal(s.points[2].end_column, 0);
	pdb_seq_free(&s);
	pdb_seq_free(NULL);
}

static void round_trip(const uint8_t *p, uint32_t len, uint32_t doc)
{
	struct pdb_seq s;
	struct lt_buf b = LT_BUF_INIT;

	assert_int_equal(pdb_seq_decode(p, len, doc, &s), 0);
	assert_int_equal(pdb_seq_encode(&s, doc, &b), 0);
	assert_int_equal(b.len, len);
	assert_memory_equal(b.data, p, len);
	lt_buf_free(&b);
	pdb_seq_free(&s);
}

static void test_round_trip(void **state)
{
	/* The same points with an InitialDocument (the row's Document 0). */
	static const uint8_t initial[] = { 0x07, 0x01, 0x00, 0x00, 0x05, 0x0A, 0x03, 0x04, 0x00, 0x00 };

	(void)state;
	round_trip(blob4, sizeof blob4, 1);
	round_trip(initial, sizeof initial, 0);
}

/* Every sequence points blob a compiler wrote encodes back to the same bytes. */
static void test_round_trip_compiler_output(void **state)
{
	static const char *const pdbs[] = { "build/corpus/csharp/Debug/LockCorpus.pdb",
					     "build/corpus/fsharp/Debug/LockCorpusFs.pdb",
					     "build/corpus/vb/Release/LockCorpusVb.pdb" };
	unsigned blobs = 0;

	(void)state;
	for (unsigned k = 0; k < sizeof pdbs / sizeof pdbs[0]; k++) {
		struct md_image md;
		uint8_t *data;
		size_t size;

		if (access(pdbs[k], R_OK) != 0)
			continue;
		assert_int_equal(lt_file_read(pdbs[k], &data, &size), 0);
		assert_int_equal(md_read(&md, data, size), 0);
		for (uint32_t r = 1; r <= md_rows(&md, MD_METHODDEBUGINFORMATION); r++) {
			uint32_t ix = md_get(&md, MD_METHODDEBUGINFORMATION, r, MD_METHODDEBUGINFORMATION_SEQUENCEPOINTS);
			const uint8_t *p;
			uint32_t len;

			if (!ix)
				continue;
			assert_int_equal(md_blob(&md, ix, &p, &len), 0);
			round_trip(p, len, md_get(&md, MD_METHODDEBUGINFORMATION, r, MD_METHODDEBUGINFORMATION_DOCUMENT));
			blobs++;
		}
		md_free(&md);
		free(data);
	}
	if (blobs == 0)
		skip(); /* the corpus is built by tests/run.sh (needs the .NET SDK) */
}

/* Deltas past the 1- and 2-byte forms, negative ones below -8192 included (cecil PR #958). */
static void test_round_trip_wide_deltas(void **state)
{
	static const uint32_t lines[] = { 20000, 100, 300000, 5, 0x1FFFFFF };
	struct pdb_seq s = { 0 }, back;
	struct lt_buf b = LT_BUF_INIT;

	(void)state;
	s.points = calloc(5, sizeof *s.points);
	assert_non_null(s.points);
	s.n = s.cap = 5;
	s.local_signature = 0x1234;
	for (uint32_t i = 0; i < 5; i++)
		s.points[i] = (struct pdb_seq_point){ .offset = i * 0x5000, .document = 1 + i % 2, .start_line = lines[i],
						      .end_line = lines[i] + i, .start_column = 9000 * i % 0xFFFF,
						      .end_column = i ? 3 : 1 };
	assert_int_equal(pdb_seq_encode(&s, 0, &b), 0);
	assert_int_equal(pdb_seq_decode(b.data, (uint32_t)b.len, 0, &back), 0);
	assert_int_equal(back.n, 5);
	assert_int_equal(back.local_signature, 0x1234);
	assert_memory_equal(back.points, s.points, 5 * sizeof *s.points);
	pdb_seq_free(&back);
	pdb_seq_free(&s);
	lt_buf_free(&b);
}

/* Every byte of a blob replaced by each boundary of the compressed forms: decoding either fails with
 * LT_E_PDB or gives points that encode and decode back to the same points (never a bad read). */
static void test_decode_mutations(void **state)
{
	static const uint8_t values[] = { 0x00, 0x01, 0x7F, 0x80, 0xBF, 0xC0, 0xDF, 0xE0, 0xFF };
	uint8_t p[sizeof blob4];

	(void)state;
	for (size_t at = 0; at < sizeof blob4; at++) {
		for (size_t v = 0; v < sizeof values; v++) {
			struct pdb_seq s, back;
			struct lt_buf b = LT_BUF_INIT;

			memcpy(p, blob4, sizeof p);
			p[at] = values[v];
			if (pdb_seq_decode(p, sizeof p, 1, &s) < 0) {
				assert_int_equal(lt_error_last()->code, LT_E_PDB);
				continue;
			}
			assert_int_equal(pdb_seq_encode(&s, 1, &b), 0);
			assert_int_equal(pdb_seq_decode(b.data, (uint32_t)b.len, 1, &back), 0);
			assert_int_equal(back.n, s.n);
			assert_memory_equal(back.points, s.points, s.n * sizeof *s.points);
			pdb_seq_free(&back);
			pdb_seq_free(&s);
			lt_buf_free(&b);
		}
	}
}

static void decode_fails(const uint8_t *p, uint32_t len, uint32_t doc)
{
	struct pdb_seq s;

	assert_int_equal(pdb_seq_decode(p, len, doc, &s), -1);
	assert_int_equal(lt_error_last()->code, LT_E_PDB);
	assert_null(s.points);
}

static void test_decode_truncated(void **state)
{
	(void)state;
	for (uint32_t n = 1; n < sizeof blob4; n++)
		if (n != 6 && n != 9 && n != 11) /* cuts after a whole record are valid */
			decode_fails(blob4, n, 1);
}

static void test_decode_no_point(void **state)
{
	static const uint8_t header[] = { 0x00 };
	(void)state;
	decode_fails(header, sizeof header, 1);
}

static void test_decode_document_zero(void **state)
{
	static const uint8_t initial_zero[] = { 0x00, 0x00, 0x00, 0x00, 0x05, 0x0A, 0x03 };
	static const uint8_t record_zero[] = { 0x00, 0x00, 0x00, 0x05, 0x0A, 0x03, 0x00, 0x00 };
	(void)state;
	decode_fails(initial_zero, sizeof initial_zero, 0);
	decode_fails(record_zero, sizeof record_zero, 1);
}

static void test_decode_hidden_line(void **state)
{
	/* A visible point whose start line is 0xFEEFEE (4-byte form 0xC0FEEFEE). */
	static const uint8_t p[] = { 0x00, 0x00, 0x00, 0x05, 0xC0, 0xFE, 0xEF, 0xEE, 0x03 };
	(void)state;
	decode_fails(p, sizeof p, 1);
}

static void test_decode_column_range(void **state)
{
	/* Start column 0x10000 (4-byte form 0xC0010000). */
	static const uint8_t p[] = { 0x00, 0x00, 0x00, 0x05, 0x0A, 0xC0, 0x01, 0x00, 0x00 };
	(void)state;
	decode_fails(p, sizeof p, 1);
}

static void test_decode_offset_range(void **state)
{
	/* First offset 0x1FFFFFFF, then one more byte: 0x20000000 is past the limit. */
	static const uint8_t p[] = { 0x00, 0xDF, 0xFF, 0xFF, 0xFF, 0x00, 0x05, 0x0A, 0x03, 0x01, 0x00, 0x00 };
	(void)state;
	decode_fails(p, sizeof p, 1);
}

static void test_decode_negative_line(void **state)
{
	/* Line 10, then a delta of -20 (7-bit two's complement 0x6C, rotated: 0x59). */
	static const uint8_t p[] = { 0x00, 0x00, 0x00, 0x05, 0x0A, 0x03, 0x02, 0x00, 0x01, 0x59, 0x00 };
	(void)state;
	decode_fails(p, sizeof p, 1);
}

static void test_decode_bad_integer(void **state)
{
	static const uint8_t p[] = { 0x00, 0xFF };
	(void)state;
	decode_fails(p, sizeof p, 1);
}

static void encode_fails(const struct pdb_seq *s, uint32_t doc)
{
	struct lt_buf b = LT_BUF_INIT;

	assert_int_equal(pdb_seq_encode(s, doc, &b), -1);
	assert_int_equal(lt_error_last()->code, LT_E_PDB);
	lt_buf_free(&b);
}

static void test_encode_errors(void **state)
{
	struct pdb_seq s, empty = { 0 };

	(void)state;
	encode_fails(&empty, 1);
	assert_int_equal(pdb_seq_decode(blob4, sizeof blob4, 1, &s), 0);
	encode_fails(&s, 2); /* the first point is in document 1, the row says 2 */
	s.points[1].offset = 0;
	encode_fails(&s, 1); /* offsets not increasing */
	s.points[1].offset = 4;
	s.points[2].end_line = 11;
	encode_fails(&s, 1); /* ends before it starts */
	s.points[2].end_line = 13;
	s.points[2].document = 0;
	encode_fails(&s, 1);
	pdb_seq_free(&s);
}

/* ---- re-mapping ---- */

/* A map from per-instruction input offsets (IL_NO_OFFSET: inserted) and new offsets. */
static struct pdb_map *map_of(uint32_t old_size, uint32_t new_size, const uint32_t *old, const uint32_t *new,
			      uint32_t n)
{
	struct il_body b;
	struct pdb_map *m;

	memset(&b, 0, sizeof b);
	b.ins = calloc(n, sizeof *b.ins);
	assert_non_null(b.ins);
	b.n = n;
	b.orig_code_size = old_size;
	b.code_size = new_size;
	for (uint32_t i = 0; i < n; i++) {
		b.ins[i].orig_offset = old[i];
		b.ins[i].offset = new[i];
	}
	assert_int_equal(pdb_map_from_body(&b, &m), 0);
	free(b.ins);
	return m;
}

#define NO IL_NO_OFFSET

/* Points at input offsets 0 (visible, line 10) and 4 (visible, line 12); instructions at 0, 2, 4, 6. */
static void two_points(struct pdb_seq *s)
{
	static const uint8_t p[] = { 0x00, 0x00, 0x00, 0x05, 0x0A, 0x03, 0x04, 0x00, 0x05, 0x04, 0x00 };
	assert_int_equal(pdb_seq_decode(p, sizeof p, 1, s), 0);
	assert_int_equal(s->n, 2);
}

static void expect(const struct pdb_seq *s, const uint32_t *offsets, const int *hidden, uint32_t n)
{
	assert_int_equal(s->n, n);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(s->points[i].offset, offsets[i]);
		assert_int_equal(s->points[i].hidden, hidden[i]);
	}
}

static void remap(struct pdb_seq *s, uint32_t old_size, uint32_t new_size, const uint32_t *old, const uint32_t *new,
		  uint32_t n)
{
	struct pdb_map *m = map_of(old_size, new_size, old, new, n);
	assert_int_equal(pdb_seq_remap(s, m), 0);
	pdb_map_free(m);
}

/* Code inserted between two statements continues the first: no hidden point. */
static void test_remap_between_statements(void **state)
{
	static const uint32_t old[] = { 0, 2, NO, NO, 4, 6 }, new[] = { 0, 2, 4, 6, 8, 10 };
	static const uint32_t offsets[] = { 0, 8 };
	static const int hidden[] = { 0, 0 };
	struct pdb_seq s;

	(void)state;
	two_points(&s);
	remap(&s, 8, 12, old, new, 6);
	expect(&s, offsets, hidden, 2);
	assert_int_equal(s.points[1].start_line, 12);
	pdb_seq_free(&s);
}

/* Code inserted inside a statement stays in it. */
static void test_remap_inside_statement(void **state)
{
	static const uint32_t old[] = { 0, NO, 2, 4, 6 }, new[] = { 0, 2, 7, 9, 11 };
	static const uint32_t offsets[] = { 0, 9 };
	static const int hidden[] = { 0, 0 };
	struct pdb_seq s;

	(void)state;
	two_points(&s);
	remap(&s, 8, 13, old, new, 5);
	expect(&s, offsets, hidden, 2);
	pdb_seq_free(&s);
}

/* Code before the first instruction gets a hidden point; code after the last continues the last statement. */
static void test_remap_prologue_epilogue(void **state)
{
	static const uint32_t old[] = { NO, 0, 2, 4, 6, NO, NO }, new[] = { 0, 3, 5, 7, 9, 11, 12 };
	static const uint32_t offsets[] = { 0, 3, 7 };
	static const int hidden[] = { 1, 0, 0 };
	struct pdb_seq s;

	(void)state;
	two_points(&s);
	remap(&s, 8, 14, old, new, 7);
	expect(&s, offsets, hidden, 3);
	assert_int_equal(s.points[0].document, 1);
	assert_int_equal(s.points[2].start_line, 12);
	pdb_seq_free(&s);
}

/* A prologue before a hidden point at the first instruction: both stay, in order. */
static void test_remap_prologue_before_hidden(void **state)
{
	static const uint8_t p[] = { 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x05, 0x0A, 0x03 };
	static const uint32_t old[] = { NO, NO, 0, 2, 4, 6 }, new[] = { 0, 1, 2, 4, 6, 8 };
	static const uint32_t offsets[] = { 0, 2, 6 };
	static const int hidden[] = { 1, 1, 0 };
	struct pdb_seq s;

	(void)state;
	assert_int_equal(pdb_seq_decode(p, sizeof p, 1, &s), 0);
	remap(&s, 8, 10, old, new, 6);
	expect(&s, offsets, hidden, 3);
	pdb_seq_free(&s);
}

/* A point on a removed instruction moves to the next kept one; on the same offset, the later point wins. */
static void test_remap_removed(void **state)
{
	static const uint32_t old[] = { 0, 2, 6 }, new[] = { 0, 2, 4 };
	static const uint32_t offsets[] = { 0, 4 };
	static const int hidden[] = { 0, 0 };
	static const uint32_t old2[] = { 4, 6 }, new2[] = { 0, 2 };
	static const uint32_t offsets2[] = { 0 };
	static const int hidden2[] = { 0 };
	static const uint32_t old3[] = { 0, 2 }, new3[] = { 0, 2 };
	static const uint32_t offsets3[] = { 0 };
	struct pdb_seq s;

	(void)state;
	two_points(&s);
	remap(&s, 8, 6, old, new, 3); /* the instruction at 4 (line 12) removed */
	expect(&s, offsets, hidden, 2);
	assert_int_equal(s.points[1].start_line, 12);
	pdb_seq_free(&s);

	two_points(&s);
	remap(&s, 8, 4, old2, new2, 2); /* 0 and 2 removed: both points land on 4's, line 12 stays */
	expect(&s, offsets2, hidden2, 1);
	assert_int_equal(s.points[0].start_line, 12);
	pdb_seq_free(&s);

	two_points(&s);
	remap(&s, 8, 4, old3, new3, 2); /* 4 and 6 removed: the point at 4 has no instruction left */
	expect(&s, offsets3, hidden2, 1);
	pdb_seq_free(&s);
}

static void test_remap_errors(void **state)
{
	static const uint32_t moved_old[] = { 4, 6, 0, 2 }, moved_new[] = { 0, 2, 4, 6 };
	static const uint32_t short_old[] = { 0, 2 }, short_new[] = { 0, 2 };
	struct pdb_seq s;
	struct pdb_map *m;

	(void)state;
	two_points(&s);
	m = map_of(8, 8, moved_old, moved_new, 4);
	assert_int_equal(pdb_seq_remap(&s, m), -1);
	assert_int_equal(lt_error_last()->code, LT_E_PDB);
	assert_int_equal(s.n, 2); /* unchanged on failure */
	pdb_map_free(m);
	m = map_of(3, 3, short_old, short_new, 2); /* the point at 4 passes the 3 bytes of input code */
	assert_int_equal(pdb_seq_remap(&s, m), -1);
	assert_int_equal(lt_error_last()->code, LT_E_PDB);
	pdb_map_free(m);
	pdb_seq_free(&s);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_round_trip_compiler_output),
		cmocka_unit_test(test_round_trip_wide_deltas),
		cmocka_unit_test(test_decode_mutations),
		cmocka_unit_test(test_decode_truncated),
		cmocka_unit_test(test_decode_no_point),
		cmocka_unit_test(test_decode_document_zero),
		cmocka_unit_test(test_decode_hidden_line),
		cmocka_unit_test(test_decode_column_range),
		cmocka_unit_test(test_decode_offset_range),
		cmocka_unit_test(test_decode_negative_line),
		cmocka_unit_test(test_decode_bad_integer),
		cmocka_unit_test(test_encode_errors),
		cmocka_unit_test(test_remap_between_statements),
		cmocka_unit_test(test_remap_inside_statement),
		cmocka_unit_test(test_remap_prologue_epilogue),
		cmocka_unit_test(test_remap_prologue_before_hidden),
		cmocka_unit_test(test_remap_removed),
		cmocka_unit_test(test_remap_errors),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
