/* test_mdb.c - unit tests of the Mono .mdb reader and writer (mdb_read.c, mdb_lnt.c, mdb_write.c) on
 * the corpus program mcs compiled with -debug, and on hostile files made from it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lt_cursor.h"
#include "lt_error.h"
#include "lt_file.h"
#include "mdb.h"

#define MONO_MDB "build/corpus/mono/Debug/MonoLocks.exe.mdb"
#define OT(field) (32 + 4 * (field)) /* byte of OffsetTable field number `field` */

static uint8_t *fixture(size_t *size)
{
	uint8_t *data;

	assert_int_equal(lt_file_read(MONO_MDB, &data, size), 0);
	return data;
}

/* The fixture parsed: one source (tests/corpus/mono/Locks.cs), methods sorted with lines in it. */
static void test_read_fixture(void **state)
{
	struct mdb_file f;
	size_t size, with_lines = 0;
	uint8_t *data = fixture(&size);
	const char *name;

	(void)state;
	assert_int_equal(mdb_read(data, size, &f), 0);
	assert_int_equal(f.nsources, 1);
	name = f.sources[0].name;
	assert_true(strlen(name) > 8);
	assert_string_equal(name + strlen(name) - 8, "Locks.cs");
	assert_int_equal(f.line_base, -1);
	assert_int_equal(f.line_range, 8);
	assert_int_equal(f.opcode_base, 9);
	assert_true(f.nmethods > 10);
	for (uint32_t i = 0; i < f.nmethods; i++) {
		const struct mdb_method *m = &f.methods[i];
		assert_int_equal(m->token >> 24, 0x06);
		assert_ptr_equal(mdb_method(&f, m->token), m);
		assert_int_equal(lt_le32(data + m->entry_offset), m->token);
		/* mcs writes a start column for every entry. */
		assert_true(m->flags & MDB_COLUMNS);
		for (uint32_t k = 0; k < m->seq.n; k++) {
			assert_int_equal(m->seq.points[k].document, 1);
			if (k > 0)
				assert_true(m->seq.points[k].offset >= m->seq.points[k - 1].offset);
		}
		with_lines += m->seq.n > 0;
	}
	assert_true(with_lines > 10);
	assert_null(mdb_method(&f, 0x06FFFFFF));
	/* Main (the first method) starts on its opening brace, line 13, column 5. */
	assert_int_equal(f.methods[0].token, 0x06000001);
	assert_int_equal(f.methods[0].seq.points[0].offset, 0);
	assert_int_equal(f.methods[0].seq.points[0].start_line, 13);
	assert_int_equal(f.methods[0].seq.points[0].start_column, 5);
	mdb_free(&f);
	mdb_free(NULL);
	free(data);
}

/* Every line table of the fixture encodes to the bytes mcs wrote. */
static void test_encode_as_mcs(void **state)
{
	struct mdb_file f;
	size_t size;
	uint8_t *data = fixture(&size);

	(void)state;
	assert_int_equal(mdb_read(data, size, &f), 0);
	for (uint32_t i = 0; i < f.nmethods; i++) {
		const struct mdb_method *m = &f.methods[i];
		uint32_t lnt = lt_le32(data + m->entry_offset + 8);
		struct lt_buf b = LT_BUF_INIT;

		if (!lnt)
			continue;
		assert_int_equal(mdb_lnt_encode(&f, &m->seq, m->flags, &b), 0);
		assert_true(lnt + b.len <= size);
		assert_memory_equal(b.data, data + lnt, b.len);
		lt_buf_free(&b);
	}
	mdb_free(&f);
	free(data);
}

/* mdb_lnt_decode of `table` with the fixture's parameters and one source (a file the table starts). */
static int decode_table(const struct mdb_file *fix, const uint8_t *table, size_t len, uint32_t flags,
			struct pdb_seq *out)
{
	struct mdb_file f = *fix;

	f.data = table;
	f.size = len;
	return mdb_lnt_decode(&f, 0, flags, out);
}

/* Every opcode the encoder writes: a negative line step, offset steps past one and two special-opcode
 * ranges, a second file, hidden entries, ends (one with end column 0) and none. */
static void test_encode_round_trip(void **state)
{
	struct pdb_seq_point pts[] = {
		{ .offset = 0, .document = 1, .start_line = 20, .end_line = 20, .start_column = 5, .end_column = 6 },
		{ .offset = 3, .document = 1, .start_line = 19, .end_line = 21, .start_column = 9, .end_column = 2 },
		{ .offset = 3 + 30, .document = 2, .start_line = 19, .end_line = 19, .start_column = 1,
		  .end_column = MDB_NO_END_COLUMN },
		{ .offset = 40, .document = 2, .start_line = 0xFEEFEE, .end_line = 0xFEEFEE, .hidden = 1 },
		{ .offset = 41, .document = 2, .start_line = 77, .end_line = 825 },
		{ .offset = 40 + 500, .document = 1, .start_line = 7, .end_line = 7, .start_column = 3, .end_column = 4 },
	};
	struct pdb_seq s = { .points = pts, .n = sizeof pts / sizeof *pts }, back;
	struct mdb_source two[2] = { { "a.cs" }, { "b.cs" } };
	struct mdb_file f;
	struct lt_buf b = LT_BUF_INIT;
	size_t size;
	uint8_t *data = fixture(&size);

	(void)state;
	assert_int_equal(mdb_read(data, size, &f), 0);
	struct mdb_file two_files = f;
	two_files.sources = two;
	two_files.nsources = 2;
	assert_int_equal(mdb_lnt_encode(&two_files, &s, MDB_COLUMNS | MDB_ENDS, &b), 0);
	assert_int_equal(decode_table(&two_files, b.data, b.len, MDB_COLUMNS | MDB_ENDS, &back), 0);
	assert_int_equal(back.n, s.n);
	assert_memory_equal(back.points, s.points, s.n * sizeof *s.points);
	pdb_seq_free(&back);
	/* A source index past the table does not encode. */
	b.len = 0;
	assert_int_equal(mdb_lnt_encode(&f, &s, 0, &b), -1);
	assert_int_equal(lt_error_last()->code, LT_E_PDB);
	lt_buf_free(&b);
	mdb_free(&f);
	free(data);
}

/* A line table that does not decode, with the message it gives. */
static void bad_table(const uint8_t *table, size_t len, uint32_t flags, const char *want)
{
	struct mdb_file f;
	struct pdb_seq s;
	size_t size;
	uint8_t *data = fixture(&size);

	assert_int_equal(mdb_read(data, size, &f), 0);
	assert_int_equal(decode_table(&f, table, len, flags, &s), -1);
	assert_int_equal(lt_error_last()->code, LT_E_PDB);
	if (!strstr(lt_error_last()->msg, want))
		fail_msg("\"%s\" does not say \"%s\"", lt_error_last()->msg, want);
	mdb_free(&f);
	free(data);
}

static void test_bad_tables(void **state)
{
	static const uint8_t no_end[] = { 0x13, 0x14 };
	static const uint8_t extended[] = { 0x00, 0x01, 0x02 };
	static const uint8_t standard[] = { 0x05 };
	static const uint8_t back[] = { 0x1b, 0x02, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01, 0x00, 0x01, 0x01 }; /* offset 2, then -1 */
	static const uint8_t file[] = { 0x04, 0x02, 0x01, 0x00, 0x01, 0x01 };        /* source 2 of 1 */
	static const uint8_t leb[] = { 0x02, 0xff, 0xff, 0xff, 0xff, 0x7f };          /* past 32 bits */
	static const uint8_t column[] = { 0x01, 0x00, 0x01, 0x01, 0x80, 0x80, 0x04 }; /* column 65536 */
	static const uint8_t far_line[] = { 0x03, 0xff, 0xff, 0xff, 0xff, 0x01, 0x01 }; /* line 1 + 0x1fffffff */

	(void)state;
	bad_table(no_end, sizeof no_end, 0, "line table: need 1 bytes at offset 0x2, 0 left");
	bad_table(extended, sizeof extended, 0, "unknown extended opcode 0x02");
	bad_table(standard, sizeof standard, 0, "unknown standard opcode 0x05");
	bad_table(back, sizeof back, 0, "before the entry before it");
	bad_table(file, sizeof file, 0, "source file 2 not in the source table");
	bad_table(leb, sizeof leb, 0, "past 32 bits");
	bad_table(column, sizeof column, MDB_COLUMNS, "column 65536 out of range");
	bad_table(far_line, sizeof far_line, 0, "out of range");
}

/* A copy of the fixture with the 32-bit field at `at` set to v, read: the message it gives. */
static void bad_field(uint32_t at, uint32_t v, const char *want)
{
	struct mdb_file f;
	size_t size;
	uint8_t *data = fixture(&size);

	lt_put32(data + at, v);
	assert_int_equal(mdb_read(data, size, &f), -1);
	assert_int_equal(lt_error_last()->code, LT_E_PDB);
	if (!strstr(lt_error_last()->msg, want))
		fail_msg("\"%s\" does not say \"%s\"", lt_error_last()->msg, want);
	free(data);
}

static void test_bad_header(void **state)
{
	size_t size;
	uint8_t *data = fixture(&size);
	uint32_t methods = lt_le32(data + OT(10)), sources = lt_le32(data + OT(7));

	(void)state;
	bad_field(0, 0x12345678, "not a Mono symbol file");
	bad_field(8, 49, "version 49");
	bad_field(OT(0), (uint32_t)size + 1, "offset table says");
	bad_field(OT(17), 0, "not usable");              /* LineRange 0 */
	bad_field(OT(18), 250, "not usable");            /* no room for a special opcode's offset step */
	bad_field(OT(6), 0x10000000, "source table");    /* SourceCount past the file */
	bad_field(OT(10), (uint32_t)size - 4, "method table");
	bad_field(methods, 0x02000001, "not a MethodDef");
	bad_field(methods + 12, 0x06000001, "not after");
	bad_field(methods + 4, 0xFFFFFF00u, "method 0x06000001");
	bad_field(sources + 4, (uint32_t)size - 2, "source 1");
	/* Data read from the header, which mdb_write rewrites (fuzz mdb: a compile unit's source read
	 * from TotalFileSize became another source once the file grew). */
	bad_field(sources + 4, 0x21, "source 1: data at byte 33, inside the header (112 bytes)");
	bad_field(methods + 4, 16, "method 0x06000001: data at byte 16, inside the header");
	bad_field(OT(10), 40, "method table: data at byte 40, inside the header");
	free(data);
}

/* Every truncation (its size in the offset table, so that the tables are checked) and every byte
 * flipped: refused with LT_E_PDB or read, never a crash (ASan, UBSan). */
static void test_hostile(void **state)
{
	size_t size, refused = 0, flips_refused = 0;
	uint8_t *data = fixture(&size), *copy = malloc(size);
	struct mdb_file f;

	(void)state;
	assert_non_null(copy);
	for (size_t n = 0; n < size; n++) {
		memcpy(copy, data, n);
		if (n >= OT(1))
			lt_put32(copy + OT(0), (uint32_t)n);
		if (mdb_read(copy, n, &f) == 0) {
			mdb_free(&f);
			continue;
		}
		assert_int_equal(lt_error_last()->code, LT_E_PDB);
		refused++;
	}
	/* The tables end the file: no shorter file holds them all. */
	assert_int_equal(refused, size);
	for (size_t at = 0; at < size; at++) {
		memcpy(copy, data, size);
		copy[at] ^= 0xA5;
		if (mdb_read(copy, size, &f) == 0) {
			mdb_free(&f);
			continue;
		}
		assert_int_equal(lt_error_last()->code, LT_E_PDB);
		flips_refused++;
	}
	assert_true(flips_refused > 0);
	free(copy);
	free(data);
}

/* mdb_write: nothing changed gives the input with the new GUID; a changed method gets a new line
 * table after a copy of the method table at the end, every other byte but the header's kept, and
 * reads back with its new points. */
static void test_write(void **state)
{
	static const uint8_t guid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	struct pdb_seq_point pts[] = {
		{ .offset = 0, .document = 1, .start_line = 13, .end_line = 13, .start_column = 5, .end_column = MDB_NO_END_COLUMN },
		{ .offset = 9, .document = 1, .start_line = 14, .end_line = 14, .start_column = 9, .end_column = MDB_NO_END_COLUMN },
	};
	struct pdb_seq changed = { .points = pts, .n = 2 };
	struct mdb_file f, back;
	struct lt_buf b = LT_BUF_INIT;
	size_t size;
	uint8_t *data = fixture(&size);
	const struct pdb_seq **seqs;

	(void)state;
	assert_int_equal(mdb_read(data, size, &f), 0);
	seqs = calloc(f.nmethods, sizeof *seqs);
	assert_non_null(seqs);
	assert_int_equal(mdb_write(&f, f.guid, seqs, &b), 0);
	assert_int_equal(b.len, size);
	assert_memory_equal(b.data, data, size);
	b.len = 0;
	seqs[0] = &changed;
	assert_int_equal(mdb_write(&f, guid, seqs, &b), 0);
	assert_true(b.len > size);
	assert_memory_equal(b.data + 16, guid, 16);
	assert_int_equal(lt_le32(b.data + OT(0)), b.len);
	/* The method table copied after the input, its first entry naming the new line table. */
	assert_int_equal(lt_le32(b.data + OT(10)), size);
	assert_memory_equal(b.data + size + 12, data + f.methods[1].entry_offset, (f.nmethods - 1) * 12);
	assert_int_equal(lt_le32(b.data + size + 8), size + f.nmethods * 12);
	/* Of the input's bytes only the GUID, the size and the method table's offset differ. */
	for (size_t i = 0; i < size; i++)
		if (b.data[i] != data[i])
			assert_true((i >= 16 && i < 32) || (i >= OT(0) && i < OT(1)) || (i >= OT(10) && i < OT(11)));
	assert_int_equal(mdb_read(b.data, b.len, &back), 0);
	assert_int_equal(back.methods[0].seq.n, 2);
	assert_memory_equal(back.methods[0].seq.points, pts, sizeof pts);
	for (uint32_t i = 1; i < f.nmethods; i++) {
		assert_int_equal(back.methods[i].seq.n, f.methods[i].seq.n);
		assert_memory_equal(back.methods[i].seq.points, f.methods[i].seq.points,
				    f.methods[i].seq.n * sizeof *f.methods[i].seq.points);
	}
	mdb_free(&back);
	free(seqs);
	lt_buf_free(&b);
	mdb_free(&f);
	free(data);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_fixture),
		cmocka_unit_test(test_encode_as_mcs),
		cmocka_unit_test(test_encode_round_trip),
		cmocka_unit_test(test_bad_tables),
		cmocka_unit_test(test_bad_header),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_write),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
