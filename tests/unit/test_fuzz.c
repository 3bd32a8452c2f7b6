/* test_fuzz.c - every input kept in fuzz/regress/<target>/ run through its fuzz target again:
 * each returns 0, or -1 with an LT_E_* error, under ASan and UBSan (a crash,
 * a leak or a broken invariant of the target fails the suite). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <dirent.h>
#include <limits.h>
#include <unistd.h>

#include "fuzz_targets.h"
#include "lt_error.h"
#include "lt_file.h"

/* fuzz/regress/<name> of the repository this binary was built in
 * (build/san/test_fuzz: two folders up), malloc'd. */
static char *regress_dir(const char *name)
{
	char *dir = NULL;
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
	char *cut;
	int up;

	assert_true(len > 0);
	exe[len] = '\0';
	for (up = 0; up < 3; up++) {
		cut = strrchr(exe, '/');
		assert_non_null(cut);
		*cut = '\0';
	}
	assert_true(asprintf(&dir, "%s/fuzz/regress/%s", exe, name) > 0);
	return dir;
}

static void run_target(const char *name)
{
	const struct fuzz_target *t = NULL;
	char *dir, *path;
	struct dirent *e;
	size_t i, count = 0;
	DIR *d;

	for (i = 0; i < fuzz_ntargets; i++)
		if (strcmp(fuzz_targets[i].name, name) == 0)
			t = &fuzz_targets[i];
	assert_non_null(t);
	dir = regress_dir(name);
	d = opendir(dir);
	if (!d)
		fail_msg("%s: cannot open", dir);
	while ((e = readdir(d)) != NULL) {
		uint8_t *data;
		size_t size;
		int rc;

		if (e->d_name[0] == '.')
			continue;
		assert_true(asprintf(&path, "%s/%s", dir, e->d_name) > 0);
		assert_int_equal(lt_file_read(path, &data, &size), 0);
		rc = t->run(data, size);
		if (rc != 0 && (rc != -1 || lt_error_last()->code == LT_E_NONE))
			fail_msg("%s: returned %d, error LT%03d", path, rc, lt_error_last()->code);
		free(data);
		free(path);
		count++;
	}
	closedir(d);
	free(dir);
	/* Each folder holds at least the inputs it was created for. */
	assert_true(count > 0);
}

static void test_image(void **state) { (void)state; run_target("image"); }
static void test_sig(void **state) { (void)state; run_target("sig"); }
static void test_weave(void **state) { (void)state; run_target("weave"); }
static void test_roundtrip(void **state) { (void)state; run_target("roundtrip"); }
static void test_pdb(void **state) { (void)state; run_target("pdb"); }
static void test_mdb(void **state) { (void)state; run_target("mdb"); }
static void test_nupkg(void **state) { (void)state; run_target("nupkg"); }
static void test_report(void **state) { (void)state; run_target("report"); }
static void test_monokey(void **state) { (void)state; run_target("monokey"); }

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_image),
		cmocka_unit_test(test_sig),
		cmocka_unit_test(test_weave),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_pdb),
		cmocka_unit_test(test_mdb),
		cmocka_unit_test(test_nupkg),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_monokey),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
