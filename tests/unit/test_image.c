/* test_image.c - the image layer on real assemblies: PE parsing, every method
 * body decoded and re-encoded byte for byte, a full edit laid out again and
 * read back, and malformed files (truncated, bad offsets) refused cleanly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "image.h"
#include "image_body.h"
#include "lt_error.h"
#include "lt_file.h"

static const char *const corpus[] = {
	"/usr/lib/mono/4.5/mscorlib.dll",
	"/usr/lib/mono/4.5/System.dll",
	"/usr/lib/mono/4.5/System.Core.dll",
	"/usr/lib/mono/4.5/mcs.exe",
};

static struct img *open_image(const char *path)
{
	struct img *img = NULL;
	uint8_t *data;
	size_t size;

	assert_int_equal(lt_file_read(path, &data, &size), 0);
	if (img_load(&img, data, size) < 0)
		fail_msg("%s: %s", path, lt_error_last()->msg);
	return img;
}

/* Every body decodes and encodes back to the very same bytes: branch forms,
 * header form, EH section form and maxstack are all kept when nothing changed. */
static void test_bodies_round_trip(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof corpus / sizeof *corpus; i++) {
		struct img *img = open_image(corpus[i]);
		uint32_t row, same = 0, nrows = md_rows(&img->md, MD_METHODDEF);

		for (row = 1; row <= nrows; row++) {
			struct lt_buf out = LT_BUF_INIT;
			const uint8_t *orig;
			struct il_body b;
			size_t len;

			assert_int_equal(img_method_body(img, row, &orig, &len), 0);
			if (!orig)
				continue;
			if (img_decode_body(img, row, &b) < 0)
				fail_msg("%s row %u: %s", corpus[i], row, lt_error_last()->msg);
			if (il_encode(&b, img_stack_effect, img, &out) < 0)
				fail_msg("%s row %u: %s", corpus[i], row, lt_error_last()->msg);
			assert_int_equal(out.len, len);
			assert_memory_equal(out.data, orig, len);
			same++;
			lt_buf_free(&out);
			il_body_free(&b);
		}
		assert_true(same > 1000 || strstr(corpus[i], "mcs"));
		img_free(img);
	}
}

/* The calls il_scan_calls reports, recorded. */
struct seen_calls {
	uint32_t n, offset[4096], token[4096];
};

static int record_call(void *ctx, uint32_t offset, enum il_op op, uint32_t token)
{
	struct seen_calls *s = ctx;

	assert_true(op == IL_CALL || op == IL_CALLVIRT);
	assert_true(s->n < 4096);
	s->offset[s->n] = offset;
	s->token[s->n++] = token;
	return 0;
}

static int stop_at_call(void *ctx, uint32_t offset, enum il_op op, uint32_t token)
{
	(void)ctx, (void)offset, (void)op, (void)token;
	return lt_error_set(LT_E_WEAVE, "stopped");
}

/* il_scan_calls meets exactly the calls il_decode finds, in order, in
 * every body of System.dll; a body cut short fails as il_decode does; the
 * callback's failure stops the scan. */
static void test_scan_calls(void **state)
{
	struct img *img = open_image("/usr/lib/mono/4.5/System.dll");
	static struct seen_calls seen;
	uint32_t row, bodies = 0, calls = 0;

	(void)state;
	for (row = 1; row <= md_rows(&img->md, MD_METHODDEF); row++) {
		const uint8_t *orig;
		struct il_body b;
		uint32_t k = 0;
		size_t len;

		assert_int_equal(img_method_body(img, row, &orig, &len), 0);
		if (!orig)
			continue;
		seen.n = 0;
		assert_int_equal(il_scan_calls(orig, len, record_call, &seen), 0);
		assert_int_equal(il_decode(orig, len, &b), 0);
		for (uint32_t i = 0; i < b.n; i++) {
			if (b.ins[i].op != IL_CALL && b.ins[i].op != IL_CALLVIRT)
				continue;
			assert_true(k < seen.n);
			assert_int_equal(seen.offset[k], b.ins[i].orig_offset);
			assert_int_equal(seen.token[k], b.ins[i].arg.token);
			k++;
		}
		assert_int_equal(k, seen.n);
		if (seen.n) {
			/* cut inside the last call's token: a short read */
			uint32_t body_len;
			assert_int_equal(il_body_size(orig, len, &body_len), 0);
			assert_int_equal(il_scan_calls(orig, (size_t)(seen.offset[seen.n - 1] + 3 + (b.fat ? 12 : 1)),
						       record_call, &seen), -1);
			assert_int_equal(lt_error_last()->code, LT_E_BODY);
			assert_int_equal(il_scan_calls(orig, len, stop_at_call, NULL), -1);
			assert_int_equal(lt_error_last()->code, LT_E_WEAVE);
		}
		calls += k;
		bodies++;
		il_body_free(&b);
	}
	assert_true(bodies > 1000 && calls > 10000);
	img_free(img);
}

/* The bytes at rva of a loaded image (the range must be mapped). */
static const uint8_t *at_rva(const struct img *img, uint32_t rva, uint32_t len)
{
	uint32_t off;

	assert_int_equal(pe_rva_to_offset(&img->pe, rva, len, &off, LT_E_LAYOUT, "test"), 0);
	return img->file + off;
}

/* The CLI section laid out again (docs/image-layout.md), on mscorlib.dll
 * with one body replaced: a new .text after the other sections, the old
 * range reserved without file data, other sections at their RVAs with their
 * bytes (but .reloc's block), FieldRVA data equal and aligned as before, the PE32 entry stub still
 * jumping through the IAT to _CorDllMain and its relocation on the operand,
 * and the file larger than the input by no more than the new body and a few
 * pages (the old metadata root is not kept). */
static void test_write_layout(void **state)
{
	struct img *img = open_image("/usr/lib/mono/4.5/mscorlib.dll"), *out = NULL;
	struct lt_buf bytes = LT_BUF_INIT;
	const struct pe_section *text, *hole;
	const uint8_t *body, *stub, *reloc;
	uint32_t row, rows, entry, iat, n = img->pe.nsections, big = 0;
	uint8_t *replacement;
	size_t len, big_len = 0;

	(void)state;
	/* The largest body is replaced (by a copy of its bytes). */
	for (row = 1; row <= md_rows(&img->md, MD_METHODDEF); row++)
		if (img_method_body(img, row, &body, &len) == 0 && len > big_len)
			big = row, big_len = len;
	assert_int_equal(img_method_body(img, big, &body, &len), 0);
	replacement = malloc(len);
	memcpy(replacement, body, len);
	assert_int_equal(img_set_method_body(img, big, replacement, len), 0);
	free(replacement);
	assert_int_equal(img_write(img, &bytes), 0);
	/* One copy of each body and of the metadata: at most a few pages more. */
	assert_true(bytes.len <= img->size + 4 * img->pe.file_alignment + big_len);
	assert_int_equal(img_load(&out, bytes.data, bytes.len), 0);
	bytes.data = NULL; /* owned by `out` now */

	assert_int_equal(out->pe.nsections, n + 1);
	text = &out->pe.sections[n];
	hole = &out->pe.sections[0];
	assert_string_equal(text->name, ".text");
	assert_string_equal(hole->name, ".unused");
	assert_int_equal(hole->virtual_address, img->pe.sections[0].virtual_address);
	assert_int_equal(hole->raw_size, 0);
	for (uint16_t i = 1; i < n; i++) {
		const struct pe_section *a = &img->pe.sections[i], *b = &out->pe.sections[i];
		assert_string_equal(a->name, b->name);
		assert_int_equal(a->virtual_address, b->virtual_address);
		assert_true(text->virtual_address > b->virtual_address);
		if (strcmp(a->name, ".reloc")) /* its block now names the moved stub */
			assert_memory_equal(img->file + a->raw_ptr, out->file + b->raw_ptr, a->raw_size);
	}
	assert_true(out->pe.cli.metadata.rva >= text->virtual_address);

	rows = md_rows(&img->md, MD_FIELDRVA);
	assert_true(rows > 10);
	for (row = 1; row <= rows; row++) {
		uint32_t a = md_get(&img->md, MD_FIELDRVA, row, MD_FIELDRVA_RVA);
		uint32_t b = md_get(&out->md, MD_FIELDRVA, row, MD_FIELDRVA_RVA);
		assert_int_equal(a % 16, b % 16);
		assert_true(b >= text->virtual_address);
		assert_memory_equal(at_rva(img, a, 1), at_rva(out, b, 1), 1);
	}
	for (row = 1; row <= md_rows(&img->md, MD_METHODDEF); row += 101) {
		const uint8_t *x, *y;
		size_t lx, ly;
		assert_int_equal(img_method_body(img, row, &x, &lx), 0);
		assert_int_equal(img_method_body(out, row, &y, &ly), 0);
		assert_int_equal(lx, ly);
		if (x)
			assert_memory_equal(x, y, lx);
	}

	/* II.25.3.1: jmp dword ptr [ImageBase + IAT], the IAT naming _CorDllMain. */
	entry = lt_le32(out->file + out->pe.opt_offset + 16);
	assert_true(entry >= text->virtual_address);
	stub = at_rva(out, entry, 6);
	assert_int_equal(stub[0], 0xFF);
	assert_int_equal(stub[1], 0x25);
	iat = lt_le32(stub + 2) - lt_le32(out->file + out->pe.opt_offset + 28);
	assert_int_equal(iat, out->pe.dirs[PE_DIR_IAT].rva);
	assert_string_equal((const char *)at_rva(out, lt_le32(at_rva(out, iat, 4)) + 2, 12), "_CorDllMain");
	reloc = at_rva(out, out->pe.dirs[PE_DIR_BASERELOC].rva, 10);
	assert_int_equal(lt_le32(reloc) + (lt_le16(reloc + 8) & 0xFFF), entry + 2);
	assert_int_equal(lt_le16(reloc + 8) >> 12, 3); /* HIGHLOW */

	img_free(out);
	img_free(img);
}

/* Writing with no edit gives an image whose metadata reads back with the
 * same rows, and whose every body is where the MethodDef says. */
static void test_write_unedited(void **state)
{
	struct img *img = open_image("/usr/lib/mono/4.5/System.dll"), *again = NULL;
	struct lt_buf out = LT_BUF_INIT;
	uint32_t t, row;

	(void)state;
	assert_int_equal(img_write(img, &out), 0);
	assert_int_equal(img_load(&again, out.data, out.len), 0);
	out.data = NULL; /* owned by `again` now */
	assert_int_equal(again->pe.nsections, img->pe.nsections + 1);
	for (t = 0; t < MD_TABLE_MAX; t++)
		assert_int_equal(md_rows(&again->md, t), md_rows(&img->md, t));
	for (row = 1; row <= md_rows(&img->md, MD_METHODDEF); row += 97) {
		const uint8_t *a, *b;
		size_t la, lb;
		assert_int_equal(img_method_body(img, row, &a, &la), 0);
		assert_int_equal(img_method_body(again, row, &b, &lb), 0);
		assert_int_equal(la, lb);
		if (a)
			assert_memory_equal(a, b, la);
	}
	img_free(again);
	img_free(img);
	lt_buf_free(&out);
}

/* The PE checksum of a file given in pieces split at odd offsets equals that
 * of the whole: words 0x0201 + 0x0003 (odd last byte) + size 3, and the
 * CheckSum field (here at offset 4) counts as zero. */
static void test_checksum_pieces(void **state)
{
	static const uint8_t file[] = { 1, 2, 3, 0xAA, 0xBB, 0xCC, 0xDD, 9 };
	struct pe_checksum whole, split;

	(void)state;
	pe_checksum_init(&whole, 100);
	pe_checksum_add(&whole, file, 3);
	assert_int_equal(pe_checksum_end(&whole), 0x0201 + 0x0003 + 3);
	pe_checksum_init(&whole, 4);
	pe_checksum_add(&whole, file, sizeof file);
	pe_checksum_init(&split, 4);
	pe_checksum_add(&split, file, 1);
	pe_checksum_add(&split, NULL, 0);
	pe_checksum_add(&split, file + 1, 4);
	pe_checksum_add(&split, file + 5, 3);
	assert_int_equal(pe_checksum_end(&split), pe_checksum_end(&whole));
	assert_int_equal(pe_checksum_end(&whole), 0x0201 + 0xAA03 + 8); /* bytes 4..7 are the field */
}

/* Patches of an output in pieces: overlapping ones merge keeping earlier
 * writes, a patch may cross base runs, and the joined bytes are the base
 * with every patch applied. */
static void test_out_patches(void **state)
{
	static const uint8_t input[] = "abcdefgh";
	struct img_out out = IMG_OUT_INIT;
	struct lt_buf joined = LT_BUF_INIT;
	uint8_t *p;

	(void)state;
	assert_int_equal(img_out_add(&out, input, 8), 0);
	assert_int_equal(img_out_add(&out, input, 0), 0); /* skipped */
	assert_int_equal(img_out_add(&out, NULL, 4), 0);
	assert_int_equal(out.nbase, 2);
	assert_non_null(p = img_out_patch(&out, 1, 2));
	memcpy(p, "XY", 2);
	assert_non_null(p = img_out_patch(&out, 6, 1));
	*p = 'Z';
	assert_non_null(p = img_out_patch(&out, 2, 5)); /* meets both: one patch [1, 7) */
	assert_int_equal(out.npatches, 1);
	assert_memory_equal(p, "YdefZ", 5);
	p[1] = 'D';
	assert_non_null(p = img_out_patch(&out, 7, 2)); /* crosses into the zero run */
	memcpy(p, "QR", 2);
	assert_null(img_out_patch(&out, 11, 2));
	assert_int_equal(lt_error_last()->code, LT_E_LAYOUT);
	assert_int_equal(img_out_finish(&out), 0);
	assert_int_equal(out.len, 12);
	assert_int_equal(img_out_join(&out, &joined), 0);
	assert_memory_equal(joined.data, "aXYDefZQR\0\0\0", 12);
	lt_buf_free(&joined);
	img_out_free(&out);
}

/* Strings the weaver adds: UTF-8 to UTF-16 with surrogate pairs, malformed
 * bytes as U+FFFD one at a time, the token 0x70 + the #US index. */
static void test_string_token(void **state)
{
	/* "a", U+00E9, U+1F512 (a pair), a lone continuation byte, an overlong '/' */
	static const char s[] = "a\xC3\xA9\xF0\x9F\x94\x92\x80\xC0\xAF";
	static const uint8_t want[] = { 'a', 0, 0xE9, 0, 0x3D, 0xD8, 0x12, 0xDD, 0xFD, 0xFF, 0xFD, 0xFF, 0xFD, 0xFF };
	struct img *img = open_image("/usr/lib/mono/4.5/System.dll");
	const uint8_t *p;
	uint32_t tok, again, len;

	(void)state;
	assert_int_equal(img_string_token(img, s, &tok), 0);
	assert_int_equal(tok >> 24, 0x70);
	assert_int_equal(md_us(&img->md, tok & 0xFFFFFF, &p, &len), 0);
	assert_int_equal(len, sizeof want + 1); /* and the flag byte */
	assert_memory_equal(p, want, sizeof want);
	assert_int_equal(img_string_token(img, s, &again), 0);
	assert_int_equal(again, tok); /* deduplicated */
	img_free(img);
}

/* A file cut at any length is refused with an error, never a crash. */
static void test_truncated(void **state)
{
	uint8_t *data;
	size_t size, cut, step;

	(void)state;
	assert_int_equal(lt_file_read("/usr/lib/mono/4.5/mcs.exe", &data, &size), 0);
	step = size / 3000 + 1;
	for (cut = 0; cut < size; cut += step) {
		struct img *img = NULL;
		uint8_t *copy = malloc(cut ? cut : 1);
		memcpy(copy, data, cut);
		lt_error_clear();
		if (img_load(&img, copy, cut) == 0) {
			/* Cut past the metadata: loading may work; bodies are then checked. */
			uint32_t row;
			for (row = 1; row <= md_rows(&img->md, MD_METHODDEF); row++) {
				const uint8_t *p;
				size_t len;
				if (img_method_body(img, row, &p, &len) < 0)
					assert_int_equal(lt_error_last()->code, LT_E_BODY);
			}
			img_free(img);
		} else {
			int code = lt_error_last()->code;
			assert_true(code == LT_E_NOT_PE || code == LT_E_NOT_CLI || code == LT_E_METADATA);
		}
	}
	free(data);
}

/* Patch one field of a real file and expect an exact error code. */
static void expect_patched(size_t off, uint32_t value, int width, int code)
{
	struct img *img = NULL;
	uint8_t *data;
	size_t size;

	assert_int_equal(lt_file_read("/usr/lib/mono/4.5/mcs.exe", &data, &size), 0);
	if (width == 2)
		lt_put16(data + off, (uint16_t)value);
	else
		lt_put32(data + off, value);
	assert_int_equal(img_load(&img, data, size), -1);
	assert_int_equal(lt_error_last()->code, code);
}

static void test_bad_headers(void **state)
{
	uint8_t *data;
	size_t size;
	struct pe_file pe;

	(void)state;
	assert_int_equal(lt_file_read("/usr/lib/mono/4.5/mcs.exe", &data, &size), 0);
	assert_int_equal(pe_parse(&pe, data, size), 0);
	expect_patched(0, 0x1234, 2, LT_E_NOT_PE);                       /* no MZ */
	expect_patched(0x3C, 0x7FFFFFF0, 4, LT_E_NOT_PE);                /* e_lfanew past the end */
	expect_patched(pe.coff_offset + 2, 0, 2, LT_E_NOT_PE);           /* no sections */
	expect_patched(pe.opt_offset, 0x999, 2, LT_E_NOT_PE);            /* optional header magic */
	expect_patched(pe.sections_offset + 20, 0x7FFFFFF0, 4, LT_E_NOT_PE); /* raw data past the end */
	expect_patched(pe.opt_offset + (pe.pe32plus ? 112 : 96) + 8 * PE_DIR_CLI_HEADER, 0, 4, LT_E_NOT_CLI);
	expect_patched(pe.cli.offset + 8, 0x7FFFFFF0, 4, LT_E_METADATA); /* metadata RVA unmapped */
	expect_patched(pe.cli.offset + 16, 0x10, 4, LT_E_MIXED_MODE);    /* ILONLY cleared */
	expect_patched(pe.cli.offset + 64, 0x2000, 4, LT_E_READY_TO_RUN);/* ManagedNativeHeader */
	pe_free(&pe);
	free(data);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bodies_round_trip),
		cmocka_unit_test(test_scan_calls),
		cmocka_unit_test(test_write_unedited),
		cmocka_unit_test(test_write_layout),
		cmocka_unit_test(test_checksum_pieces),
		cmocka_unit_test(test_out_patches),
		cmocka_unit_test(test_string_token),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bad_headers),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
