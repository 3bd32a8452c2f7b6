/* test_weave_framework.c - the framework an assembly names (TargetFrameworkAttribute) and whether it has live metrics. */
#include "weave_fixture.h"
#include "weave_framework.h"

#include <unistd.h>

#define CORPUS_NET48 "build/corpus/net48/Release/LockCorpus48.exe"

static void expect_framework(const char *pattern, const char *framework)
{
	struct img *img = load(pattern);
	char buf[96];

	assert_int_equal(weave_target_framework(img, buf, sizeof buf), 0);
	assert_string_equal(buf, framework);
	img_free(img);
}

/* .NET's reference assemblies; Mono's own core library defines the attribute but does not carry it. */
static void test_framework_of_real_assemblies(void **state)
{
	char path[512], want[64];

	(void)state;
	find_path(NET_REF_DIR, path, sizeof path);
	snprintf(want, sizeof want, ".NETCoreApp,Version=v%s", strrchr(path, 't') + 1); /* .../ref/net10.0 */
	expect_framework(NET_REF, want);
	expect_framework(MONO_MSCORLIB, "");
}

static void test_framework_of_a_net48_program(void **state)
{
	(void)state;
	if (access(CORPUS_NET48, R_OK) != 0)
		skip(); /* the corpus is built by tests/run.sh (needs the .NET SDK) */
	expect_framework(CORPUS_NET48, ".NETFramework,Version=v4.8");
}

/* A buffer too short cuts the name; an image without the attribute gives "". */
static void test_framework_cut_and_absent(void **state)
{
	struct img *img = load(NET_REF);
	char buf[12];

	(void)state;
	assert_int_equal(weave_target_framework(img, buf, sizeof buf), 0);
	assert_string_equal(buf, ".NETCoreApp");
	img_free(img);
	img = load(MONO_SYSTEM);
	assert_int_equal(weave_target_framework(img, buf, sizeof buf), 0);
	img_free(img);
}

static void test_metrics_by_framework(void **state)
{
	static const struct {
		const char *framework;
		int metrics;
	} cases[] = {
		{ ".NETCoreApp,Version=v10.0", 1 }, { ".NETCoreApp,Version=v6.0", 1 }, { ".NETCoreApp,Version=v8.0,Profile=x", 1 },
		{ ".NETCoreApp,Version=v5.0", 0 }, { ".NETCoreApp,Version=v3.1", 0 }, { ".NETFramework,Version=v4.8", 0 },
		{ ".NETFramework,Version=v4.5", 0 }, { ".NETStandard,Version=v2.0", -1 }, { ".NETStandard,Version=v2.1", -1 },
		{ "", -1 }, { ".NETCoreApp,Version=vX", -1 }, { ".NETCoreApp", -1 }, { "Silverlight,Version=v5.0", -1 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (weave_framework_metrics(cases[i].framework) != cases[i].metrics)
			fail_msg("%s: %d, not %d", cases[i].framework, weave_framework_metrics(cases[i].framework), cases[i].metrics);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_framework_of_real_assemblies),
		cmocka_unit_test(test_framework_of_a_net48_program),
		cmocka_unit_test(test_framework_cut_and_absent),
		cmocka_unit_test(test_metrics_by_framework),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
