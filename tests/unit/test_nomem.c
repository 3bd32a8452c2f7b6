/* test_nomem.c - allocation failures: every allocation of the readers, of the weave, of the image
 * writer, of the PDB rewrite and of the package weave made to fail in turn (lt_mem_fail_at, as
 * zlib's test/infcover.c does with mem_limit).  Each run must return LT_E_NOMEM with nothing
 * written and the input untouched, or succeed with the output a run without failures gives; ASan
 * checks that nothing leaks (weave_file is checked to leave the files as they were). */
#include "package_fixture.h"

#include "image.h"
#include "lt_buf.h"
#include "lt_mem.h"
#include "md_image.h"
#include "pkg_weave.h"
#include "sig.h"
#include "weave.h"
#include "weave_file.h"

/* Small corpus assemblies: one with a portable PDB beside it, one with it embedded. */
#define WITH_PDB "build/corpus/csharp/Debug/LockCorpus.dll"
#define EMBEDDED "build/corpus/pdb/Debug-embedded/PdbLocks.dll"
/* The smallest corpus assembly with locks (the package test weaves it). */
#define SMALL "build/corpus/mono/Debug/MonoLocks.exe"

static uint8_t *read_input(const char *path, size_t *size)
{
	uint8_t *data;

	if (access(path, R_OK) != 0)
		skip(); /* the corpus is built by tests/run.sh (needs the .NET SDK) */
	assert_int_equal(lt_file_read(path, &data, size), 0);
	return data;
}

/* The pipeline in memory, as the package weaver and the fuzz target run it: load, weave with
 * the embedded PDB or the one beside `path` (NULL: embedded only), lay out with the image writer,
 * and append the rewritten PDB file (pdb_rewrite) after the assembly.  Returns 0 with *out, or -1
 * (error recorded). */
static int weave_bytes(const uint8_t *data, size_t size, const char *path, struct lt_buf *out)
{
	const struct weave_opts opts = { .threshold_ms = 1, .output = "stderr" };
	uint8_t *copy = malloc(size); /* not through lt_malloc: the input is the test's */
	struct weave_job job;
	struct img *img = NULL;
	int rc;

	assert_non_null(copy);
	memcpy(copy, data, size);
	rc = img_load(&img, copy, size);
	if (rc == 0) {
		rc = weave_job_run(&job, img, &opts, &(struct weave_symbols){ .in_path = path, .out_path = path });
		if (rc == 0 && job.outcome == WEAVE_WOVEN) {
			rc = img_write(img, out);
			if (rc == 0 && path) {
				assert_int_equal(job.pdb.source, PDB_FILE);
				/* The test's own append: when it fails, the assembly goes too. */
				if ((rc = lt_buf_put(out, job.pdb.data.data, job.pdb.data.len)) < 0)
					out->len = 0;
			}
		}
		weave_job_free(&job);
	}
	img_free(img);
	return rc;
}

/* One piece of work of the library on the test's input, appending its output to *out. */
struct work {
	const char *name;
	const uint8_t *data;
	size_t size;
	const char *path; /* weave_bytes: the assembly's file, for the PDB beside it; NULL: none */
	int (*run)(const struct work *w, struct lt_buf *out);
};

static int run_weave(const struct work *w, struct lt_buf *out)
{
	return weave_bytes(w->data, w->size, w->path, out);
}

/* Allocations failed one by one from the first; past them, one in every (n - FAIL_EVERY) /
 * FAIL_SAMPLED.  A weave merges the run-time (tens of thousands of allocations, most of them the
 * same few row and body copies over and over): failing each in turn would take hours under the
 * sanitizers, while the first FAIL_EVERY cover every step of the pipeline up to and into the merge. */
#define FAIL_EVERY 3000
#define FAIL_SAMPLED 1000

/* The next allocation to fail after k, of n. */
static long next_failure(long k, long n)
{
	long stride = n > FAIL_EVERY ? (n - FAIL_EVERY) / FAIL_SAMPLED + 1 : 1;

	return k < FAIL_EVERY ? k + 1 : k + stride;
}

/* Fail each allocation of w in turn (next_failure): LT013 with nothing written and the input
 * untouched, or the output of a run without failures. */
static void fail_each(const struct work *w)
{
	struct lt_buf want = LT_BUF_INIT;
	uint8_t *input = malloc(w->size);
	long n;

	assert_non_null(input);
	memcpy(input, w->data, w->size);
	lt_mem_fail_at(-1);
	assert_int_equal(w->run(w, &want), 0);
	assert_true(want.len > 0);
	n = lt_mem_fail_at(-1);
	assert_true(n > 50);
	for (long k = 0; k < n; k = next_failure(k, n)) {
		struct lt_buf got = LT_BUF_INIT;
		int rc;

		lt_error_clear();
		lt_mem_fail_at(k);
		rc = w->run(w, &got);
		lt_mem_fail_at(-1);
		if (rc < 0) {
			if (lt_error_last()->code != LT_E_NOMEM)
				fail_msg("%s: allocation %ld of %ld failed: LT%03d %s, not LT013", w->name, k, n,
					 lt_error_last()->code, lt_error_last()->msg);
			assert_non_null(strstr(lt_error_last()->msg, "out of memory"));
			if (got.len != 0)
				fail_msg("%s: allocation %ld of %ld failed, and %zu bytes were written", w->name, k, n, got.len);
		} else if (got.len != want.len || memcmp(got.data, want.data, want.len) != 0) {
			fail_msg("%s: allocation %ld of %ld failed, and the weave gave another output", w->name, k, n);
		}
		if (memcmp(input, w->data, w->size) != 0)
			fail_msg("%s: allocation %ld of %ld failed, and the input changed", w->name, k, n);
		lt_buf_free(&got);
	}
	lt_buf_free(&want);
	free(input);
}

/* The assembly at path woven in memory with its PDB (path: beside it, else embedded). */
static void fail_each_weave(const char *path, int beside)
{
	size_t size;
	uint8_t *data = read_input(path, &size);
	const struct work w = { path, data, size, beside ? path : NULL, run_weave };

	fail_each(&w);
	free(data);
}

static void test_weave_with_pdb(void **state)
{
	(void)state;
	fail_each_weave(WITH_PDB, 1);
}

static void test_weave_embedded_pdb(void **state)
{
	(void)state;
	fail_each_weave(EMBEDDED, 0);
}

static int run_package(const struct work *w, struct lt_buf *out)
{
	const struct weave_opts opts = { .threshold_ms = 1, .output = "stderr" };
	struct nuspec spec;
	long woven = pkg_weave(w->data, w->size, &opts, NULL, &spec, out);

	if (woven >= 0)
		assert_int_equal(woven, 1);
	return woven < 0 ? -1 : 0;
}

/* pkg_weave on a package of one corpus assembly: our allocations (reading the manifest and the
 * entries, the weave, the new archive's buffers) fail in turn; libzip's and Mini-XML's own cannot
 * be hooked and do not fail. */
static void test_weave_package(void **state)
{
	size_t size, zsize;
	uint8_t *data = read_input(SMALL, &size), *zip;

	(void)state;
	{
		const struct zent e[] = { { "lib/net45/MonoLocks.exe", data, size, 1 }, { "README.md", "read me", 7, 1 } };
		make_package(e, 2, &zip, &zsize);
	}
	{
		const struct work w = { "package", zip, zsize, NULL, run_package };
		fail_each(&w);
	}
	free(zip);
	free(data);
}

/* The signature readers on every MethodDef signature of an assembly, each allocation failing in turn. */
static void test_signature_readers(void **state)
{
	size_t size;
	uint8_t *data = read_input(WITH_PDB, &size);
	struct img *img;

	(void)state;
	assert_int_equal(img_load(&img, data, size), 0);
	for (uint32_t row = 1; row <= md_rows(&img->md, MD_METHODDEF); row++) {
		const uint8_t *p;
		uint32_t len;
		long n;

		assert_int_equal(md_blob(&img->md, md_get(&img->md, MD_METHODDEF, row, MD_METHODDEF_SIGNATURE), &p, &len), 0);
		for (long k = -1, total = 0; k < total; k++) {
			struct sig_method *m = NULL;
			int rc;

			lt_mem_fail_at(k);
			rc = sig_method_decode(p, len, &m);
			n = lt_mem_fail_at(-1);
			if (k < 0) {
				assert_int_equal(rc, 0);
				total = n;
			} else if (rc < 0) {
				assert_int_equal(lt_error_last()->code, LT_E_NOMEM);
			}
			sig_method_free(m);
		}
	}
	img_free(img);
}

/* path holds exactly data[0..size). */
static void assert_holds(const char *path, const uint8_t *data, size_t size)
{
	uint8_t *now;
	size_t now_size;

	assert_int_equal(lt_file_read(path, &now, &now_size), 0);
	assert_int_equal(now_size, size);
	assert_memory_equal(now, data, size);
	free(now);
}

/* weave_file on the assembly `input` and its symbols `symbols` beside it (copied as dll_name and
 * sym_name): an allocation failing anywhere leaves both as they were (every allocation comes before
 * the pair is staged and renamed). */
static void weave_file_writes_nothing(const char *input, const char *symbols, const char *dll_name, const char *sym_name)
{
	char dir[] = "/tmp/lt_nomem_XXXXXX", dll[96], pdb[96];
	const struct weave_opts opts = { .threshold_ms = 1, .output = "stderr" };
	size_t size, pdb_size;
	uint8_t *data = read_input(input, &size), *pdb_data = read_input(symbols, &pdb_size);
	long n;

	assert_non_null(mkdtemp(dir));
	snprintf(dll, sizeof dll, "%s/%s", dir, dll_name);
	snprintf(pdb, sizeof pdb, "%s/%s", dir, sym_name);
	/* Count the allocations of one weave. */
	{
		struct weave_job job;
		assert_int_equal(lt_file_write_atomic(dll, data, size), 0);
		assert_int_equal(lt_file_write_atomic(pdb, pdb_data, pdb_size), 0);
		lt_mem_fail_at(-1);
		/* An earlier failure, handled, is still the last error: no code may take it for its own. */
		lt_nomem("an earlier, handled failure");
		assert_int_equal(weave_file(&job, dll, dll, &opts, NULL), 0);
		n = lt_mem_fail_at(-1);
		assert_false(job.pdb.stale);
		weave_job_free(&job);
	}
	/* One allocation in every n / 400 (the in-memory tests fail them all): two files written each time. */
	for (long k = 0; k < n; k += n / 400 + 1) {
		struct weave_job job;
		int rc;

		assert_int_equal(lt_file_write_atomic(dll, data, size), 0);
		assert_int_equal(lt_file_write_atomic(pdb, pdb_data, pdb_size), 0);
		lt_mem_fail_at(k);
		rc = weave_file(&job, dll, dll, &opts, NULL);
		lt_mem_fail_at(-1);
		weave_job_free(&job);
		if (rc == 0)
			continue;
		assert_int_equal(lt_error_last()->code, LT_E_NOMEM);
		assert_holds(dll, data, size);
		assert_holds(pdb, pdb_data, pdb_size);
		assert_int_equal(lt_file_clean_temps(dll), 0);
		assert_int_equal(lt_file_clean_temps(pdb), 0);
	}
	unlink(dll);
	unlink(pdb);
	assert_int_equal(rmdir(dir), 0);
	free(data);
	free(pdb_data);
}

/* The portable PDB and Mono's .mdb. */
static void test_weave_file_writes_nothing(void **state)
{
	(void)state;
	weave_file_writes_nothing(WITH_PDB, "build/corpus/csharp/Debug/LockCorpus.pdb", "LockCorpus.dll", "LockCorpus.pdb");
	weave_file_writes_nothing(SMALL, SMALL ".mdb", "MonoLocks.exe", "MonoLocks.exe.mdb");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_weave_with_pdb),
		cmocka_unit_test(test_weave_embedded_pdb),
		cmocka_unit_test(test_weave_package),
		cmocka_unit_test(test_signature_readers),
		cmocka_unit_test(test_weave_file_writes_nothing),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
