/* test_hostile.c - one test per defect that fuzzing or the hostile-input audit found in the readers,
 * each asserting the exact error the fixed code gives (the inputs that found them are kept in
 * fuzz/regress/ and run by test_fuzz). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <limits.h>
#include <unistd.h>

#include "image.h"
#include "lt_error.h"
#include "lt_buf.h"
#include "lt_file.h"
#include "md_image.h"
#include "pdb_find.h"
#include "sig.h"

/* fuzz/regress/<target>/<name> of this repository (the binary is build/san/test_hostile),
 * opened with img_load: *out, or NULL with the error recorded. */
static int load_regress(const char *target, const char *name, struct img **out)
{
	char exe[PATH_MAX], *path = NULL;
	ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
	uint8_t *data;
	size_t size;
	int up, rc;

	assert_true(len > 0);
	exe[len] = '\0';
	for (up = 0; up < 3; up++)
		*strrchr(exe, '/') = '\0';
	assert_true(asprintf(&path, "%s/fuzz/regress/%s/%s", exe, target, name) > 0);
	assert_int_equal(lt_file_read(path, &data, &size), 0);
	free(path);
	*out = NULL;
	rc = img_load(out, data, size);
	return rc;
}

/* img_load of a copy of bytes[0..n): the return value. */
static int load(const uint8_t *bytes, size_t n)
{
	struct img *img = NULL;
	uint8_t *copy = malloc(n ? n : 1);
	int rc;

	assert_non_null(copy);
	memcpy(copy, bytes, n);
	rc = img_load(&img, copy, n);
	img_free(img);
	return rc;
}

/* A file that ends inside the MS-DOS header: refused without reading e_lfanew
 * (the message used to print it uninitialized). */
static void test_dos_header_truncated(void **state)
{
	static const uint8_t mz[] = { 'M', 'Z', 0, 0 };

	(void)state;
	assert_int_equal(load(mz, sizeof mz), -1);
	assert_int_equal(lt_error_last()->code, LT_E_NOT_PE);
	assert_non_null(strstr(lt_error_last()->msg, "DOS header truncated"));
}

/* TypeDefOrRefOrSpecEncoded with a row past 24 bits (II.23.2.8): the row
 * used to spill into the token's table byte (TypeRef row 0x1000000 read as
 * token 0x02000000, a TypeDef). */
static void test_sig_token_row_past_24_bits(void **state)
{
	/* CLASS, then 0x04000001 in the 4-byte form: tag 1 (TypeRef), row 0x1000000. */
	static const uint8_t blob[] = { SIG_CLASS, 0xC4, 0x00, 0x00, 0x01 };
	struct sig_type *t = NULL;

	(void)state;
	assert_int_equal(sig_typespec_decode(blob, sizeof blob, &t), -1);
	assert_int_equal(lt_error_last()->code, LT_E_SIGNATURE);
	assert_non_null(strstr(lt_error_last()->msg, "row past 0xFFFFFF"));
	assert_null(t);
}

/* An ArrayShape of Rank 0x1FFFFFFF (II.23.2.13) with no sizes: decoded, it
 * made sig_type_print loop half a billion times.  Rank 32 is the largest
 * accepted. */
static void test_sig_array_rank_huge(void **state)
{
	/* FieldSig: ARRAY int32, Rank 0x1FFFFFFF (4-byte form), NumSizes 0, NumLoBounds 0. */
	static const uint8_t huge[] = { 0x06, SIG_ARRAY, SIG_I4, 0xDF, 0xFF, 0xFF, 0xFF, 0x00, 0x00 };
	static const uint8_t max[] = { 0x06, SIG_ARRAY, SIG_I4, SIG_MAX_RANK, 0x00, 0x00 };
	static const uint8_t past[] = { 0x06, SIG_ARRAY, SIG_I4, SIG_MAX_RANK + 1, 0x00, 0x00 };
	struct sig_type *t = NULL;

	(void)state;
	assert_int_equal(sig_field_decode(huge, sizeof huge, &t), -1);
	assert_int_equal(lt_error_last()->code, LT_E_SIGNATURE);
	assert_non_null(strstr(lt_error_last()->msg, "Rank 536870911"));
	assert_int_equal(sig_field_decode(past, sizeof past, &t), -1);
	assert_int_equal(lt_error_last()->code, LT_E_SIGNATURE);
	assert_null(t);
	assert_int_equal(sig_field_decode(max, sizeof max, &t), 0);
	assert_int_equal(t->shape->rank, SIG_MAX_RANK);
	sig_type_free(t);
}

/* A CustomAttribute on the Assembly whose Type is a MemberRef coded index
 * with row 0 (tag 3, II.24.2.6: null whatever the tag): the reference
 * assembly check read MemberRef row 0 and failed md_get's assertion. */
static void test_customattribute_memberref_row_0(void **state)
{
	struct img *img;

	(void)state;
	assert_int_equal(load_regress("image", "customattribute-memberref-row-0", &img), 0);
	assert_int_equal(img_is_reference_assembly(img), 0);
	img_free(img);
}

/* A #Strings heap whose first byte is not 0 (II.24.2.3): null names (index
 * 0) read garbage, so the stub type LockTime adds (namespace index 0) was
 * not recognised on the next weave, which then failed with LT015. */
static void test_strings_heap_first_byte(void **state)
{
	struct img *img;

	(void)state;
	assert_int_equal(load_regress("weave", "strings-heap-first-byte-not-0", &img), -1);
	assert_int_equal(lt_error_last()->code, LT_E_METADATA);
	assert_non_null(strstr(lt_error_last()->msg, "#Strings: first byte 0xf8, not the empty entry"));
	assert_null(img);
}

/* A section whose PointerToRawData is 0 (inside the headers): the writer
 * took the headers for section data and laid out a file whose first bytes
 * were zeros.  Refused when read. */
static void test_section_raw_data_in_headers(void **state)
{
	struct img *img;

	(void)state;
	assert_int_equal(load_regress("weave", "section-raw-data-in-headers", &img), -1);
	assert_int_equal(lt_error_last()->code, LT_E_NOT_PE);
	assert_non_null(strstr(lt_error_last()->msg, "section .rsrc: raw data at 0x0 overlaps the headers"));
}

/* A certificate table (a file offset, PE/COFF) pointing inside .text: the
 * writer dropped everything from there on as if it were a trailing
 * Authenticode signature, cutting the sections.  Now the file is kept whole
 * and the output loads again. */
static void test_certificate_inside_section(void **state)
{
	struct lt_buf out = LT_BUF_INIT;
	struct img *img, *again = NULL;
	size_t size;

	(void)state;
	assert_int_equal(load_regress("weave", "certificate-inside-section", &img), 0);
	size = img->size;
	assert_int_equal(img_write(img, &out), 0);
	assert_true(out.len > size);
	assert_int_equal(img_load(&again, out.data, out.len), 0);
	assert_int_equal(again->pe.nsections, img->pe.nsections + 1);
	img_free(again);
	img_free(img);
}

/* An Embedded Portable PDB entry whose UncompressedSize claims 1 GiB - 1
 * for a few KiB of Deflate data (which expands 1032:1 at most): refused
 * before the allocation it asked for, the symbols left stale. */
static void test_embedded_pdb_size_lie(void **state)
{
	struct pdb_found f;
	struct img *img = NULL;
	uint8_t *data;
	size_t size;
	uint32_t i;

	(void)state;
	assert_int_equal(lt_file_read("build/corpus/pdb/Release-embedded/PdbLocks.dll", &data, &size), 0);
	assert_int_equal(img_load(&img, data, size), 0);
	for (i = 0; i < img->pe.ndebug && img->pe.debug[i].type != PE_DEBUG_EMBEDDED_PDB; i++)
		;
	assert_true(i < img->pe.ndebug);
	/* "MPDB", then UncompressedSize (PE-COFF.md). */
	lt_put32(img->file + img->pe.debug[i].file_offset + 4, 0x3FFFFFFF);
	assert_int_equal(pdb_find_embedded(&f, img), 0);
	assert_int_equal(f.source, PDB_STALE);
	assert_non_null(strstr(f.why, "uncompressed size 1073741823"));
	pdb_found_free(&f);
	img_free(img);
}

/* SizeOfHeaders 0xfffffe06 (fuzz weave): the writer rounded it up to 4 GiB,
 * which wrapped to 0, took the output's headers for 0x200 bytes and wrote
 * the added section header past them (a heap overflow), then replaced the
 * input with a broken file.  Refused when read (II.25.2.3.2). */
static void test_size_of_headers_past_file(void **state)
{
	struct img *img;

	(void)state;
	assert_int_equal(load_regress("weave", "size-of-headers-past-file", &img), -1);
	assert_int_equal(lt_error_last()->code, LT_E_NOT_PE);
	assert_non_null(strstr(lt_error_last()->msg, "SizeOfHeaders 0xfffffe06 passes the end of the file (0xe00)"));
}

/* The writer trusts no header field either: a SizeOfHeaders that would wrap
 * when rounded up is no room for the section header, not a wrapped size. */
static void test_size_of_headers_wraps_in_writer(void **state)
{
	struct lt_buf out = LT_BUF_INIT;
	struct img *img;

	(void)state;
	assert_int_equal(load_regress("weave", "headers-full", &img), 0);
	img->pe.size_of_headers = 0xfffffe06;
	assert_int_equal(img_write(img, &out), -1);
	assert_int_equal(lt_error_last()->code, LT_E_LAYOUT);
	assert_non_null(strstr(lt_error_last()->msg, "no room for another section header"));
	assert_null(out.data);
	img_free(img);
}

/* The same assembly with a true SizeOfHeaders (0x200) whose section table
 * fills its headers: the writer grows them by the file alignment, moving
 * every section's data, and the output reads back. */
static void test_headers_full_grow(void **state)
{
	struct lt_buf out = LT_BUF_INIT;
	struct img *img, *again = NULL;

	(void)state;
	assert_int_equal(load_regress("weave", "headers-full", &img), 0);
	assert_int_equal(img->pe.size_of_headers, 0x200);
	assert_int_equal(img_write(img, &out), 0);
	assert_int_equal(img_load(&again, out.data, out.len), 0);
	assert_int_equal(again->pe.nsections, img->pe.nsections + 1);
	assert_int_equal(again->pe.size_of_headers, 0x400);
	for (uint16_t i = 0; i < again->pe.nsections; i++)
		assert_true(!again->pe.sections[i].raw_size || again->pe.sections[i].raw_ptr >= 0x400);
	img_free(again);
	img_free(img);
}

/* A writer defect is caught before anything is written: a TypeDef whose
 * Extends the edit pointed past the TypeRef table (no reader accepts it)
 * makes img_write fail with LT_E_INTERNAL, naming what did not read back. */
static void test_bad_layout_does_not_read_back(void **state)
{
	struct lt_buf out = LT_BUF_INIT;
	struct img *img;

	(void)state;
	assert_int_equal(load_regress("weave", "headers-full", &img), 0);
	assert_true(md_rows(&img->md, MD_TYPEDEF) >= 2);
	/* TypeDefOrRef (II.24.2.6): tag 1 is TypeRef. */
	md_set(&img->md, MD_TYPEDEF, 2, MD_TYPEDEF_EXTENDS, (md_rows(&img->md, MD_TYPEREF) + 5) << 2 | 1);
	assert_int_equal(img_write(img, &out), -1);
	assert_int_equal(lt_error_last()->code, LT_E_INTERNAL);
	assert_non_null(strstr(lt_error_last()->msg, "internal error: the woven image does not read back ("));
	assert_non_null(strstr(lt_error_last()->msg, "TypeDef row 2: Extends points at TypeRef row"));
	lt_buf_free(&out);
	img_free(img);
}

/* A table other rows point at, marked Sorted, out of key order (found through the fuzz roundtrip's
 * invariant): the writer sorted its rows, so the CustomAttributes and GenericParamConstraints that
 * name its rows named others.  Refused when written instead. */
static void test_pointed_at_table_out_of_order(void **state)
{
	struct lt_buf out = LT_BUF_INIT;
	struct img *img = NULL;
	uint8_t *data;
	size_t size;

	(void)state;
	assert_int_equal(lt_file_read("build/corpus/csharp/Release/LockCorpus.dll", &data, &size), 0);
	assert_int_equal(img_load(&img, data, size), 0);
	assert_true(md_rows(&img->md, MD_INTERFACEIMPL) >= 2);
	md_set(&img->md, MD_INTERFACEIMPL, 1, MD_INTERFACEIMPL_CLASS, md_rows(&img->md, MD_TYPEDEF));
	assert_int_equal(img_write(img, &out), -1);
	assert_int_equal(lt_error_last()->code, LT_E_LAYOUT);
	assert_non_null(strstr(lt_error_last()->msg, "InterfaceImpl row 2 is out of key order (II.22)"));
	lt_buf_free(&out);
	img_free(img);
}

/* A 2 KiB PE32 file whose first section claims a VirtualSize of 0xe007400 for 0x5ff bytes of data (fuzz
 * roundtrip, a timeout): the writer laid out the 235 MB of zeros of that tail, and the section overlapped
 * the next two in address.  Refused when read, by the zero-filled tail first. */
static void test_virtual_size_past_raw_data(void **state)
{
	struct img *img;

	(void)state;
	assert_int_equal(load_regress("roundtrip", "virtual-size-past-raw-data", &img), -1);
	assert_int_equal(lt_error_last()->code, LT_E_NOT_PE);
	assert_non_null(strstr(lt_error_last()->msg,
			       "section .tex: VirtualSize 0xe007400 passes its raw data (0x5ff bytes) by more than 16 MiB"));
	assert_null(img);
}

/* A first section grown in address by one SectionAlignment, over the second's (PE/COFF "Section Table":
 * sections are laid out in ascending, separate ranges): refused when read, naming both. */
static void test_sections_overlap_in_address(void **state)
{
	struct img *img = NULL;
	uint8_t *data;
	size_t size;
	uint32_t pe, table, align, vsize;

	(void)state;
	assert_int_equal(lt_file_read("build/corpus/csharp/Release/LockCorpus.dll", &data, &size), 0);
	pe = lt_le32(data + 0x3c);
	table = pe + 24 + lt_le16(data + pe + 20); /* after the COFF header and SizeOfOptionalHeader */
	align = lt_le32(data + pe + 24 + 32);     /* SectionAlignment */
	vsize = lt_le32(data + table + 8);
	assert_true(lt_le16(data + pe + 6) >= 2);
	assert_true(lt_le32(data + table + 40 + 12) < lt_le32(data + table + 12) + vsize + align);
	lt_put32(data + table + 8, vsize + align);
	assert_int_equal(img_load(&img, data, size), -1);
	assert_int_equal(lt_error_last()->code, LT_E_NOT_PE);
	assert_non_null(strstr(lt_error_last()->msg, "section .rsrc: RVA range 0x"));
	assert_non_null(strstr(lt_error_last()->msg, "overlaps section .text's"));
	assert_null(img);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dos_header_truncated),
		cmocka_unit_test(test_sig_token_row_past_24_bits),
		cmocka_unit_test(test_sig_array_rank_huge),
		cmocka_unit_test(test_customattribute_memberref_row_0),
		cmocka_unit_test(test_strings_heap_first_byte),
		cmocka_unit_test(test_section_raw_data_in_headers),
		cmocka_unit_test(test_certificate_inside_section),
		cmocka_unit_test(test_embedded_pdb_size_lie),
		cmocka_unit_test(test_size_of_headers_past_file),
		cmocka_unit_test(test_size_of_headers_wraps_in_writer),
		cmocka_unit_test(test_headers_full_grow),
		cmocka_unit_test(test_bad_layout_does_not_read_back),
		cmocka_unit_test(test_pointed_at_table_out_of_order),
		cmocka_unit_test(test_virtual_size_past_raw_data),
		cmocka_unit_test(test_sections_overlap_in_address),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
