/* test_weave_lines.c - unit tests for weave_lines.c (source lines from the portable PDB). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "image.h"
#include "lt_buf.h"
#include "lt_file.h"
#include "sig.h"
#include "weave.h"
#include "weave_inputs.h"
#include "weave_lines.h"

#define CORPUS_DIR "build/corpus/csharp/Debug/"
#define CORPUS_DLL CORPUS_DIR "LockCorpus.dll"
#define CORPUS_PDB CORPUS_DIR "LockCorpus.pdb"
#define SOURCE_DIR "tests/corpus/csharp/"

static struct img *load_corpus(void)
{
	struct img *img = NULL;
	uint8_t *data;
	size_t size;

	if (access(CORPUS_DLL, R_OK) != 0 || access(CORPUS_PDB, R_OK) != 0) {
		skip(); /* the C# corpus is built by tests/run.sh (needs the .NET SDK) */
	}
	assert_int_equal(lt_file_read(CORPUS_DLL, &data, &size), 0);
	assert_int_equal(img_load(&img, data, size), 0);
	return img;
}

/* The lines of the PDB found for img, read from `path` (NULL: none looked for). */
static void open_lines(struct wlines *l, struct pdb_found *f, const struct img *img, const char *path)
{
	assert_int_equal(weave_pdb_find(f, img, path), 0);
	assert_int_equal(wlines_init(l, f, lt_file_read), 0);
}

/* weave_list_pdb with the PDB found beside `path`. */
static long list_path(const struct img *img, const char *path, void (*fn)(void *ctx, const struct weave_site *s),
		      void *ctx)
{
	struct pdb_found f;
	long n;

	assert_int_equal(weave_pdb_find(&f, img, path), 0);
	n = weave_list_pdb(img, &f, lt_file_read, fn, ctx);
	pdb_found_free(&f);
	return n;
}

/* Copy `from` to path `to` (or, from NULL, write `len` bytes of junk). */
static void put_file(const char *to, const char *from, const char *junk)
{
	uint8_t *data;
	size_t size;

	if (from) {
		assert_int_equal(lt_file_read(from, &data, &size), 0);
		assert_int_equal(lt_file_write_atomic(to, data, size), 0);
		free(data);
	} else {
		assert_int_equal(lt_file_write_atomic(to, (const uint8_t *)junk, strlen(junk)), 0);
	}
}

/* Line `line` (1-based) of source file `name` into buf. */
static void source_line(const char *name, unsigned line, char *buf, size_t n)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof path, SOURCE_DIR "%s", name);
	f = fopen(path, "r");
	assert_non_null(f);
	buf[0] = 0;
	for (unsigned i = 0; i < line && fgets(buf, (int)n, f); i++)
		;
	fclose(f);
}

struct seen {
	unsigned sites, located, lock_lines;
};

/* Every `lock` statement site of LockCorpus.Statements points at a source line with "lock (". */
static void on_site(void *ctx, const struct weave_site *s)
{
	struct seen *seen = ctx;
	char file[64], text[512];
	unsigned line;

	seen->sites++;
	if (!s->location[0])
		return;
	seen->located++;
	assert_int_equal(sscanf(s->location, "%63[^:]:%u", file, &line), 2);
	if (strncmp(s->method, "LockCorpus.Statements::", 23) == 0) {
		source_line(file, line, text, sizeof text);
		assert_non_null(strstr(text, "lock ("));
		seen->lock_lines++;
	}
}

static void test_list_locations_are_lock_lines(void **state)
{
	struct img *img = load_corpus();
	struct seen seen = { 0 };

	(void)state;
	assert_true(list_path(img, CORPUS_DLL, on_site, &seen) > 0);
	assert_int_equal(seen.located, seen.sites);
	assert_true(seen.lock_lines >= 3);
	img_free(img);
}

/* Lock.EnterScope sites of LockCorpus.LockType: an explicit `using
 * (Gate.EnterScope())` has its own sequence point; `lock` on a Lock has none
 * (Roslyn), and reports the line of its `lock` keyword, found in the source. */
static void on_scope_site(void *ctx, const struct weave_site *s)
{
	unsigned *checked = ctx, line;
	char file[64], text[512];

	if (s->kind != WEAVE_LOCK_ENTERSCOPE || strcmp(s->method, "LockCorpus.LockType::Run") != 0)
		return;
	assert_int_equal(sscanf(s->location, "%63[^:]:%u", file, &line), 2);
	source_line(file, line, text, sizeof text);
	if (!strstr(text, "using (") && !strstr(text, "lock ("))
		fail_msg("%s %s: line '%s'", s->method, s->location, text);
	(*checked)++;
}

static void test_lock_on_lock_lines(void **state)
{
	struct img *img = load_corpus();
	unsigned checked = 0;

	(void)state;
	assert_true(list_path(img, CORPUS_DLL, on_scope_site, &checked) > 0);
	assert_int_equal(checked, 4); /* three `lock` statements, one `using` */
	img_free(img);
}

#define VB_DLL "build/corpus/vb/Debug/LockCorpusVb.dll"

struct vb_seen {
	unsigned lambdas, in_main;
};

static void on_vb_site(void *ctx, const struct weave_site *s)
{
	struct vb_seen *seen = ctx;

	seen->lambdas += strstr(s->method, "_Lambda$__") != NULL;
	seen->in_main += strncmp(s->method, "LockCorpusVb.Program::Main (lambda at Program.vb:", 49) == 0;
}

/* A VB lambda (_Closure$__::_Lambda$__N-M) is named after the method whose
 * lines hold it (Main, with the lambda's line) when the PDB is there, and
 * keeps its name without. */
static void test_vb_lambda_named_by_lines(void **state)
{
	struct img *img = NULL;
	struct vb_seen with = { 0 }, without = { 0 };
	uint8_t *data;
	size_t size;

	(void)state;
	if (lt_file_read(VB_DLL, &data, &size) < 0)
		skip();
	assert_int_equal(img_load(&img, data, size), 0);
	assert_true(list_path(img, VB_DLL, on_vb_site, &with) > 0);
	assert_true(weave_list(img, on_vb_site, &without) > 0);
	assert_int_equal(with.lambdas, 0);
	assert_int_equal(with.in_main, 1);
	assert_int_equal(without.lambdas, 1);
	assert_int_equal(without.in_main, 0);
	img_free(img);
}

/* wlines_point gives 0 past the method table, for row 0 and past every
 * point, and leaves *out alone then; wlines_format names a bad row with 0. */
static void test_point_bounds(void **state)
{
	struct img *img = load_corpus();
	struct wlines l;
	struct pdb_found f;
	struct pdb_seq_point p = { .start_line = 12345 };
	char buf[64] = "unchanged";

	(void)state;
	open_lines(&l, &f, img, CORPUS_DLL);
	assert_int_equal(l.has_pdb, 1);
	assert_int_equal(wlines_point(&l, 0, 0, WLINES_AT_OR_BEFORE, &p), 0);
	assert_int_equal(wlines_point(&l, md_rows(&img->md, MD_METHODDEF) + 1, 0, WLINES_AT_OR_BEFORE, &p), 0);
	/* no visible point after the end of any body */
	assert_int_equal(wlines_point(&l, 1, 0xFFFFFF, WLINES_AFTER, &p), 0);
	assert_int_equal(p.start_line, 12345);
	assert_int_equal(wlines_format(&l, 0, 1, 0, buf, sizeof buf), 0);
	assert_int_equal(wlines_format(&l, md_rows(l.md, MD_DOCUMENT) + 1, 1, 0, buf, sizeof buf), 0);
	assert_string_equal(buf, "unchanged");
	wlines_free(&l);
	pdb_found_free(&f);
	img_free(img);
}

/* Document names past their common folder (tests/corpus/csharp/: the
 * generated files in obj/ hold no code and do not count), with the column
 * only when asked; the source text is the file's when its hash matches. */
static void test_format_and_source(void **state)
{
	struct img *img = load_corpus();
	struct wlines l;
	struct pdb_found f;
	char buf[128];
	int found_sub = 0, found_top = 0;
	const uint8_t *text;
	size_t len, at;

	(void)state;
	open_lines(&l, &f, img, CORPUS_DLL);
	for (uint32_t d = 1; d <= md_rows(l.md, MD_DOCUMENT); d++) {
		assert_int_equal(wlines_format(&l, d, 7, 0, buf, sizeof buf), 1);
		if (strcmp(buf, "Shop/Lines.cs:7") == 0) {
			found_sub = 1;
			assert_int_equal(wlines_format(&l, d, 7, 3, buf, sizeof buf), 1);
			assert_string_equal(buf, "Shop/Lines.cs:7:3");
			assert_int_equal(wlines_source(&l, d, &text, &len), 1);
			assert_true(len > 100 && memcmp(text, "// Where a lock is reported", 27) == 0);
			/* lines start after each line end; none past the last */
			assert_int_equal(wlines_line_start(&l, d, 1, &at), 1);
			assert_int_equal(at, 0);
			assert_int_equal(wlines_line_start(&l, d, 2, &at), 1);
			assert_int_equal(at, (size_t)((const uint8_t *)memchr(text, '\n', len) - text) + 1);
			assert_int_equal(wlines_line_start(&l, d, 0, &at), 0);
			assert_int_equal(wlines_line_start(&l, d, 100000, &at), 0);
		}
		found_top |= strcmp(buf, "Program.cs:7") == 0;
	}
	assert_true(found_sub && found_top);
	assert_int_equal(wlines_source(&l, 0, &text, &len), 0);
	wlines_free(&l);
	pdb_found_free(&f);
	img_free(img);
}

static unsigned reads; /* files read through count_read */

static int count_read(const char *path, uint8_t **data, size_t *size)
{
	reads++;
	return lt_file_read(path, data, size);
}

/* Past the budget of source text the least recently asked for is released and read again when asked for
 * again, with the same text; the others are not read again; after wlines_forget_sources each is read again. */
static void test_source_budget(void **state)
{
	struct img *img = load_corpus();
	struct wlines l;
	struct pdb_found f;
	const uint8_t *text;
	uint8_t *first = NULL;
	uint32_t doc[2] = { 0, 0 };
	size_t len, first_len = 0;
	unsigned n = 0;

	(void)state;
	assert_int_equal(weave_pdb_find(&f, img, CORPUS_DLL), 0);
	assert_int_equal(wlines_init(&l, &f, count_read), 0);
	for (uint32_t d = 1; d <= md_rows(l.md, MD_DOCUMENT) && n < 2; d++)
		if (wlines_source(&l, d, &text, &len) == 1) {
			if (n == 0 && (first = malloc(len)) != NULL) {
				memcpy(first, text, len);
				first_len = len;
			}
			doc[n++] = d;
		}
	assert_int_equal(n, 2);
	assert_non_null(first);
	reads = 0;
	l.source_budget = 1; /* the last one asked for is kept, alone */
	assert_int_equal(wlines_source(&l, doc[1], &text, &len), 1);
	assert_int_equal(wlines_source(&l, doc[0], &text, &len), 1);
	assert_int_equal(reads, 0); /* both held: only reading one more releases */
	assert_int_equal(wlines_source(&l, doc[1], &text, &len), 1);
	assert_int_equal(wlines_source(&l, doc[0], &text, &len), 1);
	assert_int_equal(reads, 0);
	wlines_forget_sources(&l);
	assert_int_equal(wlines_source(&l, doc[0], &text, &len), 1);
	assert_int_equal(wlines_source(&l, doc[1], &text, &len), 1); /* doc[0] released */
	assert_int_equal(wlines_source(&l, doc[1], &text, &len), 1);
	assert_int_equal(reads, 2);
	assert_int_equal(wlines_source(&l, doc[0], &text, &len), 1);
	assert_int_equal(reads, 3);
	assert_int_equal(len, first_len);
	assert_memory_equal(text, first, len);
	free(first);
	wlines_free(&l);
	pdb_found_free(&f);
	img_free(img);
}

/* Document `doc` of md renamed `path` ('/' between parts, PortablePdb-Metadata.md "Document Name Blob"). */
static void rename_document(struct md_image *md, uint32_t doc, const char *path)
{
	struct lt_buf b = LT_BUF_INIT;
	uint32_t index;

	assert_int_equal(lt_buf_u8(&b, '/'), 0);
	for (const char *p = path, *end;; p = end + 1) {
		end = strchr(p, '/');
		if (!end)
			end = p + strlen(p);
		index = 0;
		if (end > p)
			assert_int_equal(md_add_blob(md, (const uint8_t *)p, (uint32_t)(end - p), &index), 0);
		assert_int_equal(sig_uint_encode(&b, index), 0);
		if (!*end)
			break;
	}
	assert_int_equal(md_add_blob(md, b.data, (uint32_t)b.len, &index), 0);
	md_set(md, MD_DOCUMENT, doc, MD_DOCUMENT_NAME, index);
	lt_buf_free(&b);
}

/* A document with code outside the project - a source-only package's file in the NuGet packages
 * folder, a generated file in an obj/ folder elsewhere - does not widen the common folder: the
 * others keep their short names, it gets its file name. */
static void test_common_folder_outside_project(void **state)
{
	static const char *const outside[] = {
		"/root/.nuget/packages/polyfill/1.0.0/contentFiles/cs/any/Program.cs",
		"/root/.NuGet/Packages/polyfill/1.0.0/build/Program.cs",
		"/work/artifacts/obj/LockCorpus/debug/Program.cs",
	};
	struct img *img = load_corpus();
	char buf[256], path[1024];
	struct pdb_found f;
	struct wlines l;
	uint32_t program = 0;

	(void)state;
	assert_int_equal(weave_pdb_find(&f, img, CORPUS_DLL), 0);
	assert_int_equal(wlines_init(&l, &f, NULL), 0);
	for (uint32_t d = 1; d <= md_rows(l.md, MD_DOCUMENT); d++)
		if (wlines_format(&l, d, 7, 0, buf, sizeof buf) == 1 && strcmp(buf, "Program.cs:7") == 0)
			program = d;
	assert_int_not_equal(program, 0);
	wlines_free(&l);
	for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++) {
		int found_sub = 0;

		rename_document(&f.md, program, outside[i]);
		assert_int_equal(wlines_init(&l, &f, NULL), 0);
		assert_int_equal(wlines_path(&l, program, path, sizeof path), 1);
		assert_string_equal(path, outside[i]);
		assert_int_equal(wlines_format(&l, program, 7, 0, buf, sizeof buf), 1);
		assert_string_equal(buf, "Program.cs:7");
		for (uint32_t d = 1; d <= md_rows(l.md, MD_DOCUMENT); d++)
			found_sub |= wlines_format(&l, d, 7, 0, buf, sizeof buf) == 1 && strcmp(buf, "Shop/Lines.cs:7") == 0;
		assert_true(found_sub);
		wlines_free(&l);
	}
	pdb_found_free(&f);
	img_free(img);
}

/* No path: no PDB looked for. */
static void test_no_path(void **state)
{
	struct img *img = load_corpus();
	struct wlines l;
	struct pdb_found f;
	struct pdb_seq_point p;

	(void)state;
	open_lines(&l, &f, img, NULL);
	assert_int_equal(l.has_pdb, 0);
	assert_int_equal(wlines_point(&l, 1, 0, WLINES_AT_OR_BEFORE, &p), 0);
	wlines_free(&l);
	pdb_found_free(&f);
	img_free(img);
}

/* The assembly copied where its PDB is missing, is junk (a Windows PDB
 * header), or is another assembly's PDB: no lines, and no failure. */
static void check_bad_pdb(const char *pdb_from, const char *junk)
{
	char dir[] = "/tmp/lt_lines_XXXXXX", dll[64], pdb[64];
	struct img *img = load_corpus();
	struct wlines l;
	struct pdb_found f;

	assert_non_null(mkdtemp(dir));
	snprintf(dll, sizeof dll, "%s/LockCorpus.dll", dir);
	snprintf(pdb, sizeof pdb, "%s/LockCorpus.pdb", dir);
	put_file(dll, CORPUS_DLL, NULL);
	if (pdb_from || junk)
		put_file(pdb, pdb_from, junk);
	open_lines(&l, &f, img, dll);
	assert_int_equal(l.has_pdb, 0);
	wlines_free(&l);
	pdb_found_free(&f);
	unlink(pdb);
	unlink(dll);
	rmdir(dir);
	img_free(img);
}

static void test_missing_pdb(void **state)
{
	(void)state;
	check_bad_pdb(NULL, NULL);
}

static void test_windows_pdb(void **state)
{
	(void)state;
	check_bad_pdb(NULL, "Microsoft C/C++ MSF 7.00\r\n\x1a" "DS\0\0\0");
}

static void test_other_pdb(void **state)
{
	char other[256];

	(void)state;
	/* Any other portable PDB of the build tree: its id is not this assembly's. */
	snprintf(other, sizeof other, "build/corpus/csharp/Release/LockCorpus.pdb");
	if (access(other, R_OK) != 0)
		skip();
	check_bad_pdb(other, NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_locations_are_lock_lines),
		cmocka_unit_test(test_lock_on_lock_lines),
		cmocka_unit_test(test_vb_lambda_named_by_lines),
		cmocka_unit_test(test_point_bounds),
		cmocka_unit_test(test_format_and_source),
		cmocka_unit_test(test_source_budget),
		cmocka_unit_test(test_common_folder_outside_project),
		cmocka_unit_test(test_no_path),
		cmocka_unit_test(test_missing_pdb),
		cmocka_unit_test(test_windows_pdb),
		cmocka_unit_test(test_other_pdb),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
