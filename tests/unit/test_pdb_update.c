/* test_pdb_update.c - unit tests of pdb_find.c, pdb_update.c and the image's debug entry data, on the PDB corpus. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "image.h"
#include "image_body.h"
#include "lt_error.h"
#include "lt_file.h"
#include "mdb.h"
#include "pdb_rewrite.h"
#include "pdb_update.h"
#include "weave.h"
#include "weave_inputs.h"

#define PDB_CORPUS "build/corpus/pdb/"
#define PORTABLE PDB_CORPUS "Debug-portable/PdbLocks.dll"
#define EMBEDDED PDB_CORPUS "Release-embedded/PdbLocks.dll"
#define OTHER_PDB PDB_CORPUS "Release-portable/PdbLocks.pdb"
#define MONO_DEBUG "build/corpus/mono/Debug/MonoLocks.exe"
#define MONO_RELEASE "build/corpus/mono/Release/MonoLocks.exe"

/* A scratch folder for one test, removed with its files by tmp_done. */
struct tmp {
	char dir[64];
	char path[8][128];
	int n;
};

static void tmp_init(struct tmp *t)
{
	snprintf(t->dir, sizeof t->dir, "/tmp/lt_pdb_XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	t->n = 0;
}

/* The path of `name` in the folder (remembered for removal). */
static const char *tmp_file(struct tmp *t, const char *name)
{
	char path[sizeof t->path[0]];

	assert_true(t->n < 8);
	snprintf(path, sizeof path, "%s/%s", t->dir, name);
	memcpy(t->path[t->n], path, sizeof path);
	return t->path[t->n++];
}

static void tmp_done(struct tmp *t)
{
	for (int i = 0; i < t->n; i++)
		unlink(t->path[i]);
	rmdir(t->dir);
}

static void copy(const char *from, const char *to)
{
	uint8_t *data;
	size_t size;

	assert_int_equal(lt_file_read(from, &data, &size), 0);
	assert_int_equal(lt_file_write_atomic(to, data, size), 0);
	free(data);
}

static void put(const char *to, const void *p, size_t n)
{
	assert_int_equal(lt_file_write_atomic(to, p, n), 0);
}

static struct img *load(const char *path)
{
	struct img *img;
	uint8_t *data;
	size_t size;

	if (access(path, R_OK) != 0)
		skip(); /* the corpus is built by tests/run.sh (needs the .NET SDK) */
	assert_int_equal(lt_file_read(path, &data, &size), 0);
	assert_int_equal(img_load(&img, data, size), 0);
	return img;
}

static void find(struct pdb_found *f, const char *dll, enum pdb_source want)
{
	struct img *img = load(dll);

	assert_int_equal(weave_pdb_find(f, img, dll), 0);
	assert_int_equal(f->source, want);
	img_free(img);
}

static void test_find_file_and_embedded(void **state)
{
	struct pdb_found f;
	struct img *img;

	(void)state;
	find(&f, PORTABLE, PDB_FILE);
	assert_non_null(strstr(f.path, "Debug-portable/PdbLocks.pdb"));
	assert_true(f.codeview >= 0);
	assert_int_equal(f.embedded, -1);
	assert_true(f.md.has_pdb);
	pdb_found_free(&f);
	pdb_found_free(NULL);

	/* Embedded: found without a path too. */
	img = load(EMBEDDED);
	assert_int_equal(weave_pdb_find(&f, img, NULL), 0);
	assert_int_equal(f.source, PDB_EMBEDDED);
	assert_true(f.embedded >= 0);
	assert_null(f.path);
	pdb_found_free(&f);
	/* A file is only looked for with a path. */
	img_free(img);
	img = load(PORTABLE);
	assert_int_equal(weave_pdb_find(&f, img, NULL), 0);
	assert_int_equal(f.source, PDB_NONE);
	pdb_found_free(&f);
	img_free(img);
}

/* dll copied alone into a folder, with `pdb_name` holding pdb_from's bytes or junk. */
static void find_beside(const char *dll, const char *dll_name, const char *pdb_name, const char *pdb_from,
			const void *junk, size_t junk_len, enum pdb_source want, const char *why)
{
	struct pdb_found f;
	struct tmp t;
	struct img *img = load(dll);
	const char *copy_path;

	tmp_init(&t);
	copy_path = tmp_file(&t, dll_name);
	copy(dll, copy_path);
	if (pdb_from)
		copy(pdb_from, tmp_file(&t, pdb_name));
	else if (junk)
		put(tmp_file(&t, pdb_name), junk, junk_len);
	assert_int_equal(weave_pdb_find(&f, img, copy_path), 0);
	assert_int_equal(f.source, want);
	if (why && !strstr(f.why, why))
		fail_msg("\"%s\" does not say \"%s\"", f.why, why);
	if (want == PDB_STALE && (pdb_from || junk))
		assert_non_null(f.path);
	pdb_found_free(&f);
	tmp_done(&t);
	img_free(img);
}

static void test_find_none(void **state)
{
	(void)state;
	find_beside(PORTABLE, "PdbLocks.dll", NULL, NULL, NULL, 0, PDB_NONE, NULL);
	find_beside(MONO_RELEASE, "MonoLocks.exe", NULL, NULL, NULL, 0, PDB_NONE, NULL);
}

static void test_find_stale(void **state)
{
	static const char windows[] = "Microsoft C/C++ MSF 7.00\r\n\x1a" "DS\0\0\0";
	static const char bsjb_junk[] = "BSJB and nothing a metadata root needs";

	(void)state;
	find_beside(PORTABLE, "PdbLocks.dll", "PdbLocks.pdb", NULL, windows, sizeof windows, PDB_STALE, "not a portable PDB");
	find_beside(PORTABLE, "PdbLocks.dll", "PdbLocks.pdb", OTHER_PDB, NULL, 0, PDB_STALE, "does not match");
	find_beside(PORTABLE, "PdbLocks.dll", "PdbLocks.pdb", NULL, bsjb_junk, sizeof bsjb_junk, PDB_STALE, "PdbLocks.pdb: ");
	find_beside(MONO_RELEASE, "MonoLocks.exe", "MonoLocks.pdb", OTHER_PDB, NULL, 0, PDB_STALE, "no CodeView");
	/* Mono symbols of another build (Debug's beside Release's exe), and a file that is no .mdb. */
	find_beside(MONO_RELEASE, "MonoLocks.exe", "MonoLocks.exe.mdb", MONO_DEBUG ".mdb", NULL, 0, PDB_STALE, "another build");
	find_beside(MONO_DEBUG, "MonoLocks.exe", "MonoLocks.exe.mdb", NULL, bsjb_junk, sizeof bsjb_junk, PDB_STALE,
		    "MonoLocks.exe.mdb: 39 bytes: too short");
}

static void test_find_mdb(void **state)
{
	(void)state;
	find_beside(MONO_DEBUG, "MonoLocks.exe", "MonoLocks.exe.mdb", MONO_DEBUG ".mdb", NULL, 0, PDB_MDB, NULL);
}

/* The embedded entry's data patched in memory (byte `at` XOR x, OR o): a bad signature, bad Deflate data. */
static void find_patched_embedded(uint32_t at, uint8_t x, uint8_t o, const char *why)
{
	struct img *img = load(EMBEDDED), *patched;
	struct pdb_found f;
	uint8_t *copy_bytes = malloc(img->size);
	int e = -1;

	assert_non_null(copy_bytes);
	memcpy(copy_bytes, img->file, img->size);
	for (uint32_t i = 0; i < img->pe.ndebug; i++)
		if (img->pe.debug[i].type == PE_DEBUG_EMBEDDED_PDB)
			e = (int)i;
	assert_true(e >= 0);
	copy_bytes[img->pe.debug[e].file_offset + at] ^= x;
	copy_bytes[img->pe.debug[e].file_offset + at] |= o;
	assert_int_equal(img_load(&patched, copy_bytes, img->size), 0);
	assert_int_equal(weave_pdb_find(&f, patched, NULL), 0);
	assert_int_equal(f.source, PDB_STALE);
	if (!strstr(f.why, why))
		fail_msg("\"%s\" does not say \"%s\"", f.why, why);
	pdb_found_free(&f);
	img_free(patched);
	img_free(img);
}

static void test_find_bad_embedded(void **state)
{
	(void)state;
	find_patched_embedded(0, 1, 0, "no \"MPDB\"");
	find_patched_embedded(4, 1, 0, "Deflate");    /* an uncompressed size one off */
	find_patched_embedded(8, 0, 0x06, "Deflate"); /* block type 3, which does not exist (RFC 1951 3.2.3) */
}

/* Weave `dll` in memory, update its PDB for output `out`, write the pair into the folder. */
static void weave_and_update(struct img *img, const char *in, const char *out, struct pdb_update *u, struct lt_buf *bytes)
{
	struct weave_opts opts = { .threshold_ms = 1, .output = "stderr" };
	enum weave_outcome outcome;
	struct pdb_found f;
	long nsites;

	assert_int_equal(weave_pdb_find(&f, img, in), 0);
	opts.pdb = &f;
	assert_int_equal(weave_image(img, &opts, &outcome, &nsites, NULL), 0);
	assert_int_equal(outcome, WEAVE_WOVEN);
	assert_int_equal(weave_pdb_update(u, img, &f, in, out), 0);
	pdb_found_free(&f);
	assert_int_equal(img_write(img, bytes), 0);
	assert_int_equal(weave_write_pair(u, out, &(struct lt_iov){ bytes->data, bytes->len }, 1, NULL, 0), 0);
}

/* The written assembly finds its written PDB as matching, and its PdbChecksum is that PDB's. */
static void check_written(const char *dll, enum pdb_source want)
{
	struct img *img = load(dll);
	struct pdb_found f;
	int checked = 0;

	assert_int_equal(weave_pdb_find(&f, img, dll), 0);
	assert_int_equal(f.source, want);
	for (uint32_t i = 0; want != PDB_MDB && i < img->pe.ndebug; i++) {
		uint8_t hash[64];
		size_t n;
		struct lt_cur c;

		if (img->pe.debug[i].type != PE_DEBUG_PDBCHECKSUM)
			continue;
		assert_int_equal(pdb_entry_data(img, i, &c), 0);
		assert_string_equal((const char *)c.data, "SHA256");
		/* The #Pdb id lies after the root and stream headers; find it by the id itself. */
		for (size_t off = 0; off + 20 <= f.size; off++)
			if (!memcmp(f.data + off, f.md.pdb_id, 20)) {
				assert_int_equal(pdb_checksum(f.data, f.size, off, "SHA256", hash, &n), 0);
				break;
			}
		assert_memory_equal(c.data + 7, hash, 32);
		checked++;
	}
	assert_true(checked > 0 || want == PDB_MDB); /* a deterministic build has one; mcs writes none */
	pdb_found_free(&f);
	img_free(img);
}

static void test_update_file(void **state)
{
	struct img *img = load(PORTABLE);
	struct pdb_update u;
	struct lt_buf bytes = LT_BUF_INIT;
	struct tmp t;
	const char *out;

	(void)state;
	tmp_init(&t);
	out = tmp_file(&t, "Woven.dll");
	tmp_file(&t, "PdbLocks.pdb");
	weave_and_update(img, PORTABLE, out, &u, &bytes);
	assert_int_equal(u.source, PDB_FILE);
	assert_false(u.stale);
	assert_string_equal(u.path, t.path[1]); /* next to the output, the input PDB's name */
	check_written(out, PDB_FILE);
	pdb_update_free(&u);
	pdb_update_free(NULL);
	lt_buf_free(&bytes);
	img_free(img);
	tmp_done(&t);
}

/* Written with -o beside the input: the input's PDB stays; the output's is named after it. */
static void test_update_beside_input(void **state)
{
	struct img *img = load(PORTABLE);
	struct pdb_update u;
	struct lt_buf bytes = LT_BUF_INIT;
	struct tmp t;
	const char *in, *in_pdb, *out;
	uint8_t *before, *after;
	size_t n_before, n_after;

	(void)state;
	tmp_init(&t);
	in = tmp_file(&t, "PdbLocks.dll");
	in_pdb = tmp_file(&t, "PdbLocks.pdb");
	out = tmp_file(&t, "PdbLocks.woven.dll");
	tmp_file(&t, "PdbLocks.woven.pdb");
	copy(PORTABLE, in);
	copy(PDB_CORPUS "Debug-portable/PdbLocks.pdb", in_pdb);
	assert_int_equal(lt_file_read(in_pdb, &before, &n_before), 0);
	weave_and_update(img, in, out, &u, &bytes);
	assert_string_equal(u.path, t.path[3]);
	assert_int_equal(lt_file_read(in_pdb, &after, &n_after), 0);
	assert_int_equal(n_after, n_before);
	assert_memory_equal(after, before, n_before);
	check_written(out, PDB_FILE);
	check_written(in, PDB_FILE);
	free(before);
	free(after);
	pdb_update_free(&u);
	lt_buf_free(&bytes);
	img_free(img);
	tmp_done(&t);
}

static void test_update_embedded(void **state)
{
	struct img *img = load(EMBEDDED);
	struct pdb_update u;
	struct lt_buf bytes = LT_BUF_INIT;
	struct tmp t;
	const char *out;

	(void)state;
	tmp_init(&t);
	out = tmp_file(&t, "PdbLocks.dll");
	weave_and_update(img, EMBEDDED, out, &u, &bytes);
	assert_int_equal(u.source, PDB_EMBEDDED);
	assert_null(u.path);
	check_written(out, PDB_EMBEDDED);
	pdb_update_free(&u);
	lt_buf_free(&bytes);
	img_free(img);
	tmp_done(&t);
}

/* A woven mcs program: its .mdb rewritten to <output>.mdb, with the new Mvid (so that it matches the
 * woven assembly) and new line tables for the woven methods only. */
static void test_update_mdb(void **state)
{
	struct img *img = load(MONO_DEBUG);
	struct pdb_update u;
	struct lt_buf bytes = LT_BUF_INIT;
	struct mdb_file in, out;
	struct tmp t;
	uint8_t *in_data;
	size_t in_size, moved = 0;
	const char *dll;

	(void)state;
	tmp_init(&t);
	dll = tmp_file(&t, "Woven.exe");
	tmp_file(&t, "Woven.exe.mdb");
	weave_and_update(img, MONO_DEBUG, dll, &u, &bytes);
	assert_int_equal(u.source, PDB_MDB);
	assert_false(u.stale);
	assert_string_equal(u.path, t.path[1]);
	assert_int_equal(lt_file_read(MONO_DEBUG ".mdb", &in_data, &in_size), 0);
	assert_int_equal(mdb_read(in_data, in_size, &in), 0);
	assert_int_equal(mdb_read(u.data.data, u.data.len, &out), 0);
	assert_int_equal(out.nmethods, in.nmethods);
	for (uint32_t i = 0; i < in.nmethods; i++) {
		uint32_t old_lnt = lt_le32(in_data + in.methods[i].entry_offset + 8);
		uint32_t new_lnt = lt_le32(u.data.data + out.methods[i].entry_offset + 8);
		if (new_lnt != old_lnt) {
			assert_true(new_lnt >= in_size);
			moved++;
		}
	}
	assert_true(moved > 0 && moved < in.nmethods);
	check_written(dll, PDB_MDB);
	mdb_free(&in);
	mdb_free(&out);
	free(in_data);
	pdb_update_free(&u);
	lt_buf_free(&bytes);
	img_free(img);
	tmp_done(&t);
}

/* Stale symbols, or a rewrite that fails: warned, and no debug entry changes. */
/* weave_pdb_update of img loaded from `dll`, woven in place, its symbols found now. */
static void update_in_place(struct pdb_update *u, struct img *img, const char *dll)
{
	struct pdb_found f;

	assert_int_equal(weave_pdb_find(&f, img, dll), 0);
	assert_int_equal(weave_pdb_update(u, img, &f, dll, dll), 0);
	pdb_found_free(&f);
}

/* Symbols not rewritten: the CodeView entry names the new Mvid as its PDB
 * GUID, every PdbChecksum entry holds zeros, no other entry changed. */
static void assert_disowned(const struct pdb_update *u, const struct img *img)
{
	uint8_t mvid[16];
	int codeview = 0, checksums = 0;

	assert_true(u->disowned);
	assert_int_equal(mdb_module_guid(img, mvid), 0);
	assert_non_null(img->debug_data);
	for (uint32_t i = 0; i < img->pe.ndebug; i++) {
		const struct img_debug_data *d = &img->debug_data[i];
		size_t nl;
		switch (img->pe.debug[i].type) {
		case PE_DEBUG_CODEVIEW:
			assert_non_null(d->data);
			assert_int_equal(lt_le32(d->data), PDB_CV_SIGNATURE);
			assert_memory_equal(d->data + 4, mvid, 16);
			codeview++;
			break;
		case PE_DEBUG_PDBCHECKSUM:
			assert_non_null(d->data);
			nl = strlen((const char *)d->data) + 1;
			assert_true(nl < d->len);
			for (size_t k = nl; k < d->len; k++)
				assert_int_equal(d->data[k], 0);
			checksums++;
			break;
		default:
			assert_null(d->data);
		}
	}
	assert_int_equal(codeview, 1);
	assert_true(checksums >= 1);
}

static void test_update_stale(void **state)
{
	static const char windows[] = "Microsoft C/C++ MSF 7.00\r\n\x1a" "DS\0\0\0";
	struct img *img = load(PORTABLE);
	struct pdb_update u;
	struct tmp t;
	const char *dll;

	(void)state;
	tmp_init(&t);
	dll = tmp_file(&t, "PdbLocks.dll");
	copy(PORTABLE, dll);
	put(tmp_file(&t, "PdbLocks.pdb"), windows, sizeof windows);
	update_in_place(&u, img, dll);
	assert_true(u.stale);
	assert_non_null(strstr(u.why, "not a portable PDB"));
	assert_null(u.path);
	assert_disowned(&u, img);
	pdb_update_free(&u);

	/* The matching PDB, but a method with sequence points replaced without an offset map. */
	copy(PORTABLE, dll);
	copy(PDB_CORPUS "Debug-portable/PdbLocks.pdb", t.path[1]);
	for (uint32_t row = 1; row <= md_rows(&img->md, MD_METHODDEF); row++) {
		const uint8_t *p;
		size_t n;
		assert_int_equal(img_method_body(img, row, &p, &n), 0);
		if (p)
			assert_int_equal(img_set_method_body(img, row, p, n), 0);
	}
	update_in_place(&u, img, dll);
	assert_true(u.stale);
	assert_non_null(strstr(u.why, "without an offset map"));
	assert_null(u.path);
	assert_disowned(&u, img);
	pdb_update_free(&u);
	img_free(img);
	tmp_done(&t);
}

/* The assembly file holds exactly `want` (NULL: does not exist). */
static void assert_file(const char *path, const char *want)
{
	uint8_t *data;
	size_t size;

	if (!want) {
		assert_int_not_equal(access(path, F_OK), 0);
		return;
	}
	assert_int_equal(lt_file_read(path, &data, &size), 0);
	assert_int_equal(size, strlen(want));
	assert_memory_equal(data, want, size);
	free(data);
}

/* The PDB cannot be written (no folder; a folder in the way): neither file
 * is replaced and no temporary file stays.  (Its rename failing after both
 * were written - something put in the way in between - takes the assembly
 * back to the input, or away: not provoked here.) */
static void test_write_pair_failure(void **state)
{
	static const uint8_t woven[] = "woven", input[] = "input";
	/* The woven assembly as img_layout gives it: in pieces. */
	const struct lt_iov woven_parts[] = { { woven, 2 }, { woven + 2, sizeof woven - 3 } };
	struct pdb_update u;
	struct tmp t;
	const char *dll, *pdb_dir;

	(void)state;
	tmp_init(&t);
	dll = tmp_file(&t, "A.dll");
	memset(&u, 0, sizeof u);
	assert_int_equal(lt_buf_put(&u.data, "pdb", 3), 0);
	put(dll, "old", 3);
	u.path = strdup("/nonexistent-folder/A.pdb");
	assert_int_equal(weave_write_pair(&u, dll, woven_parts, 2, input, sizeof input - 1), -1);
	assert_int_equal(lt_error_last()->code, LT_E_IO);
	assert_file(dll, "old");
	assert_int_equal(lt_file_clean_temps(dll), 0);

	free(u.path);
	u.path = strdup(pdb_dir = tmp_file(&t, "A.pdb"));
	assert_int_equal(mkdir(pdb_dir, 0755), 0);
	assert_int_equal(weave_write_pair(&u, dll, woven_parts, 2, input, sizeof input - 1), -1);
	assert_int_equal(lt_error_last()->code, LT_E_IO);
	assert_non_null(strstr(lt_error_last()->msg, "not a regular file"));
	assert_file(dll, "old");
	assert_int_equal(rmdir(pdb_dir), 0);
	assert_int_equal(lt_file_clean_temps(dll), 0);

	/* No PDB to write: the assembly alone. */
	free(u.path);
	u.path = NULL;
	assert_int_equal(weave_write_pair(&u, dll, woven_parts, 2, NULL, 0), 0);
	assert_file(dll, "woven");
	pdb_update_free(&u);
	tmp_done(&t);
}

/* Debug entry data set before img_write goes into the new CLI section (the
 * last one), smaller or larger than before; entries left alone move with it. */
static void test_debug_data_layout(void **state)
{
	static const uint8_t small[] = "RSDS-shorter";
	struct img *img = load(PORTABLE), *out;
	struct lt_buf bytes = LT_BUF_INIT;
	uint8_t *big, *copy_bytes;
	uint32_t cv = UINT32_MAX, big_len;
	struct lt_cur c;

	(void)state;
	for (uint32_t i = 0; i < img->pe.ndebug; i++)
		if (img->pe.debug[i].type == PE_DEBUG_CODEVIEW)
			cv = i;
	assert_true(cv != UINT32_MAX && cv + 1 < img->pe.ndebug);
	big_len = img->pe.debug[cv + 1].size + 100;
	big = calloc(1, big_len);
	assert_non_null(big);
	memset(big, 0xAB, big_len);
	assert_int_equal(img_set_debug_data(img, cv, small, (size_t)0x80000000u, 0), -1); /* not read: refused first */
	assert_int_equal(lt_error_last()->code, LT_E_LIMIT);
	assert_null(img->debug_data);
	assert_int_equal(img_set_debug_data(img, cv, small, sizeof small, 0x12345678), 0);
	assert_int_equal(img_set_debug_data(img, cv + 1, big, 10, 1), 0); /* replaced by the next call */
	assert_int_equal(img_set_debug_data(img, cv + 1, big, big_len, 2), 0);
	assert_int_equal(img_write(img, &bytes), 0);
	copy_bytes = malloc(bytes.len);
	assert_non_null(copy_bytes);
	memcpy(copy_bytes, bytes.data, bytes.len);
	assert_int_equal(img_load(&out, copy_bytes, bytes.len), 0);
	/* Both in the new section, mapped at their RVAs, with new size, stamp and bytes. */
	const struct pe_section *last = &out->pe.sections[out->pe.nsections - 1];
	for (uint32_t i = cv; i <= cv + 1; i++) {
		assert_true(out->pe.debug[i].rva >= last->virtual_address);
		assert_true(out->pe.debug[i].file_offset >= last->raw_ptr);
		assert_int_equal(out->pe.debug[i].file_offset - last->raw_ptr, out->pe.debug[i].rva - last->virtual_address);
	}
	assert_int_equal(out->pe.debug[cv].size, sizeof small);
	assert_int_equal(out->pe.debug[cv].timestamp, 0x12345678);
	assert_int_equal(pdb_entry_data(out, cv, &c), 0);
	assert_memory_equal(c.data, small, sizeof small);
	/* The MetaData directory covers the metadata root only, not the debug data. */
	assert_true(out->pe.cli.metadata.rva >= out->pe.debug[cv + 1].rva + big_len ||
		    out->pe.cli.metadata.rva + out->pe.cli.metadata.size <= out->pe.debug[cv].rva);
	assert_int_equal(out->pe.debug[cv + 1].size, big_len);
	assert_int_equal(out->pe.debug[cv + 1].timestamp, 2);
	assert_int_equal(pdb_entry_data(out, cv + 1, &c), 0);
	assert_memory_equal(c.data, big, big_len);
	assert_int_equal(pe_rva_cursor(&out->pe, out->pe.debug[cv + 1].rva, &c, LT_E_PDB, "entry"), 0);
	assert_memory_equal(c.data, big, big_len);
	free(big);
	lt_buf_free(&bytes);
	img_free(out);
	img_free(img);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_file_and_embedded),
		cmocka_unit_test(test_find_none),
		cmocka_unit_test(test_find_stale),
		cmocka_unit_test(test_find_bad_embedded),
		cmocka_unit_test(test_find_mdb),
		cmocka_unit_test(test_update_file),
		cmocka_unit_test(test_update_beside_input),
		cmocka_unit_test(test_update_embedded),
		cmocka_unit_test(test_update_mdb),
		cmocka_unit_test(test_update_stale),
		cmocka_unit_test(test_write_pair_failure),
		cmocka_unit_test(test_debug_data_layout),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
