/* test_nomem.c - allocation failures: every allocation of the readers and of the weave made to fail
 * in turn (lt_mem_fail_at, as zlib's test/infcover.c does with mem_limit).  Each run must return
 * LT_E_NOMEM, or succeed with the output a run without failures gives; ASan checks that nothing
 * leaks, and nothing is written (the pipeline runs in memory; weave_file is checked to leave the
 * file as it was). */
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
#include "lt_error.h"
#include "lt_file.h"
#include "lt_mem.h"
#include "md_image.h"
#include "sig.h"
#include "weave.h"
#include "weave_file.h"

/* Small corpus assemblies: one with a portable PDB beside it, one with it embedded. */
#define WITH_PDB "build/corpus/csharp/Debug/LockCorpus.dll"
#define EMBEDDED "build/corpus/pdb/Debug-embedded/PdbLocks.dll"

static uint8_t *read_input(const char *path, size_t *size)
{
	uint8_t *data;

	if (access(path, R_OK) != 0)
		skip(); /* the corpus is built by tests/run.sh (needs the .NET SDK) */
	assert_int_equal(lt_file_read(path, &data, size), 0);
	return data;
}

/* The pipeline in memory, as the package weaver and the fuzz target run it: load, weave with
 * the embedded PDB, lay out.  Returns 0 with *out, or -1 (error recorded). */
static int weave_bytes(const uint8_t *data, size_t size, struct lt_buf *out)
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
		rc = weave_job_run(&job, img, &opts, 1, NULL, NULL);
		if (rc == 0 && job.outcome == WEAVE_WOVEN)
			rc = img_write(img, out);
		weave_job_free(&job);
	}
	img_free(img);
	return rc;
}

/* Fail each allocation of weave_bytes in turn. */
static void fail_each(const char *path)
{
	struct lt_buf want = LT_BUF_INIT;
	size_t size;
	uint8_t *data = read_input(path, &size);
	long n;

	lt_mem_fail_at(-1);
	assert_int_equal(weave_bytes(data, size, &want), 0);
	assert_true(want.len > 0);
	n = lt_mem_fail_at(-1);
	assert_true(n > 50);
	for (long k = 0; k < n; k++) {
		struct lt_buf got = LT_BUF_INIT;
		int rc;

		lt_error_clear();
		lt_mem_fail_at(k);
		rc = weave_bytes(data, size, &got);
		lt_mem_fail_at(-1);
		if (rc < 0) {
			if (lt_error_last()->code != LT_E_NOMEM)
				fail_msg("%s: allocation %ld of %ld failed: LT%03d %s, not LT013", path, k, n,
					 lt_error_last()->code, lt_error_last()->msg);
			assert_non_null(strstr(lt_error_last()->msg, "out of memory"));
		} else if (got.len != want.len || memcmp(got.data, want.data, want.len) != 0) {
			fail_msg("%s: allocation %ld of %ld failed, and the weave gave another output", path, k, n);
		}
		lt_buf_free(&got);
	}
	lt_buf_free(&want);
	free(data);
}

static void test_weave_with_pdb(void **state)
{
	(void)state;
	fail_each(WITH_PDB);
}

static void test_weave_embedded_pdb(void **state)
{
	(void)state;
	fail_each(EMBEDDED);
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

/* weave_file on an assembly and the PDB beside it: an allocation failing anywhere leaves both as
 * they were (every allocation comes before the pair is staged and renamed). */
static void test_weave_file_writes_nothing(void **state)
{
	char dir[] = "/tmp/lt_nomem_XXXXXX", dll[64], pdb[64];
	const struct weave_opts opts = { .threshold_ms = 1, .output = "stderr" };
	size_t size, pdb_size;
	uint8_t *data = read_input(WITH_PDB, &size), *pdb_data = read_input("build/corpus/csharp/Debug/LockCorpus.pdb", &pdb_size);
	long n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(dll, sizeof dll, "%s/LockCorpus.dll", dir);
	snprintf(pdb, sizeof pdb, "%s/LockCorpus.pdb", dir);
	/* Count the allocations of one weave. */
	{
		struct weave_job job;
		assert_int_equal(lt_file_write_atomic(dll, data, size), 0);
		assert_int_equal(lt_file_write_atomic(pdb, pdb_data, pdb_size), 0);
		lt_mem_fail_at(-1);
		assert_int_equal(weave_file(&job, dll, dll, &opts, NULL), 0);
		n = lt_mem_fail_at(-1);
		weave_job_free(&job);
	}
	for (long k = 0; k < n; k++) {
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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_weave_with_pdb),
		cmocka_unit_test(test_weave_embedded_pdb),
		cmocka_unit_test(test_signature_readers),
		cmocka_unit_test(test_weave_file_writes_nothing),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
