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
#include "lt_file.h"
#include "weave.h"
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
	assert_true(weave_list_path(img, CORPUS_DLL, on_site, &seen) > 0);
	assert_int_equal(seen.located, seen.sites);
	assert_true(seen.lock_lines >= 3);
	img_free(img);
}

/* wlines_find agrees with the list and gives 0 past the method table and for row 0. */
static void test_find_bounds(void **state)
{
	struct img *img = load_corpus();
	struct wlines l;
	char buf[64] = "unchanged";

	(void)state;
	assert_int_equal(wlines_open(&l, img, CORPUS_DLL), 0);
	assert_int_equal(l.has_pdb, 1);
	assert_int_equal(wlines_find(&l, 0, 0, buf, sizeof buf), 0);
	assert_int_equal(wlines_find(&l, md_rows(&img->md, MD_METHODDEF) + 1, 0, buf, sizeof buf), 0);
	assert_string_equal(buf, "unchanged");
	wlines_free(&l);
	wlines_free(NULL);
	img_free(img);
}

/* No path: no PDB looked for. */
static void test_no_path(void **state)
{
	struct img *img = load_corpus();
	struct wlines l;
	char buf[64];

	(void)state;
	assert_int_equal(wlines_open(&l, img, NULL), 0);
	assert_int_equal(l.has_pdb, 0);
	assert_int_equal(wlines_find(&l, 1, 0, buf, sizeof buf), 0);
	wlines_free(&l);
	img_free(img);
}

/* The assembly copied where its PDB is missing, is junk (a Windows PDB
 * header), or is another assembly's PDB: no lines, and no failure. */
static void check_bad_pdb(const char *pdb_from, const char *junk)
{
	char dir[] = "/tmp/lt_lines_XXXXXX", dll[64], pdb[64];
	struct img *img = load_corpus();
	struct wlines l;

	assert_non_null(mkdtemp(dir));
	snprintf(dll, sizeof dll, "%s/LockCorpus.dll", dir);
	snprintf(pdb, sizeof pdb, "%s/LockCorpus.pdb", dir);
	put_file(dll, CORPUS_DLL, NULL);
	if (pdb_from || junk)
		put_file(pdb, pdb_from, junk);
	assert_int_equal(wlines_open(&l, img, dll), 0);
	assert_int_equal(l.has_pdb, 0);
	wlines_free(&l);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_locations_are_lock_lines),
		cmocka_unit_test(test_find_bounds),
		cmocka_unit_test(test_no_path),
		cmocka_unit_test(test_missing_pdb),
		cmocka_unit_test(test_windows_pdb),
		cmocka_unit_test(test_other_pdb),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
