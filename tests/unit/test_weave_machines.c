/* test_weave_machines.c - weave_names_in_async: which methods are an async state machine's MoveNext, on the C# corpus and mono's mscorlib. */
#include "weave_fixture.h"
#include "weave_pass.h"

#define CORPUS_DEBUG "build/corpus/csharp/Debug/LockCorpus.dll"
#define CORPUS_RELEASE "build/corpus/csharp/Release/LockCorpus.dll"

/* The MethodDef row of `method` in the first TypeDef whose name starts with `type`, or 0. */
static uint32_t method_of(const struct weave_names *n, const char *type, const char *method)
{
	const struct md_image *md = &n->img->md;

	for (uint32_t r = 1; r <= md_rows(md, MD_METHODDEF); r++) {
		uint32_t t = weave_names_owner(n, r);
		const char *name = str(md, MD_TYPEDEF, t, MD_TYPEDEF_NAME);
		if (strncmp(name, type, strlen(type)) == 0 && strcmp(str(md, MD_METHODDEF, r, MD_METHODDEF_NAME), method) == 0)
			return r;
	}
	fail_msg("no %s...::%s", type, method);
	return 0;
}

static int in_async(const struct weave_names *n, const char *type, const char *method)
{
	return weave_names_in_async(n, method_of(n, type, method));
}

/* StateMachines (tests/corpus/csharp/Closures.cs), Debug (classes) and Release (structs): the async
 * methods' MoveNext, not their other methods, the kickoff methods or the iterators' MoveNext. */
static void test_csharp_state_machines(void **state)
{
	static const char *const builds[] = { CORPUS_DEBUG, CORPUS_RELEASE };

	(void)state;
	for (size_t i = 0; i < sizeof builds / sizeof builds[0]; i++) {
		struct img *img = load(builds[i]);
		struct weave_names n;
		assert_int_equal(weave_names_init(&n, img), 0);
		assert_int_equal(in_async(&n, "<BetweenAwaits>d__", "MoveNext"), 1);
		assert_int_equal(in_async(&n, "<Run>d__", "MoveNext"), 1);
		assert_int_equal(in_async(&n, "<BetweenAwaits>d__", "SetStateMachine"), 0);
		assert_int_equal(in_async(&n, "StateMachines", "BetweenAwaits"), 0);
		assert_int_equal(in_async(&n, "<Numbers>d__", "MoveNext"), 0);
		assert_int_equal(in_async(&n, "<Repeat>d__", "MoveNext"), 0);
		assert_int_equal(weave_names_in_async(&n, 0), 0);
		weave_names_free(&n);
		img_free(img);
	}
}

/* A core library defines IAsyncStateMachine itself: its InterfaceImpl rows name the TypeDef. */
static void test_core_library_machine(void **state)
{
	struct img *img = load(MONO_MSCORLIB);
	const struct md_image *md = &img->md;
	struct weave_names n;
	uint32_t iface = 0, found = 0;

	(void)state;
	assert_int_equal(weave_names_init(&n, img), 0);
	for (uint32_t t = 1; t <= md_rows(md, MD_TYPEDEF) && !iface; t++)
		if (strcmp(str(md, MD_TYPEDEF, t, MD_TYPEDEF_NAME), "IAsyncStateMachine") == 0 &&
		    strcmp(str(md, MD_TYPEDEF, t, MD_TYPEDEF_NAMESPACE), "System.Runtime.CompilerServices") == 0)
			iface = t;
	assert_int_not_equal(iface, 0);
	for (uint32_t r = 1; r <= md_rows(md, MD_INTERFACEIMPL) && !found; r++) {
		uint32_t tok;
		assert_int_equal(md_coded_decode(MD_CI_TYPEDEFORREF, md_get(md, MD_INTERFACEIMPL, r, MD_INTERFACEIMPL_INTERFACE),
						 &tok), 0);
		if (tok == md_token(MD_TYPEDEF, iface))
			found = md_get(md, MD_INTERFACEIMPL, r, MD_INTERFACEIMPL_CLASS);
	}
	assert_int_not_equal(found, 0);
	assert_int_equal(in_async(&n, str(md, MD_TYPEDEF, found, MD_TYPEDEF_NAME), "MoveNext"), 1);
	weave_names_free(&n);
	img_free(img);
}

/* An InterfaceImpl whose Interface is no TypeDefOrRef coded index (tag 3, II.24.2.6): LT_E_METADATA. */
static void test_bad_interface(void **state)
{
	struct img *img = load(CORPUS_RELEASE);
	struct md_image *md = &img->md;
	struct weave_names n;
	uint32_t move_next, t;

	(void)state;
	assert_int_equal(weave_names_init(&n, img), 0);
	move_next = method_of(&n, "<BetweenAwaits>d__", "MoveNext");
	t = weave_names_owner(&n, move_next);
	for (uint32_t r = 1; r <= md_rows(md, MD_INTERFACEIMPL); r++)
		if (md_get(md, MD_INTERFACEIMPL, r, MD_INTERFACEIMPL_CLASS) == t)
			md_set(md, MD_INTERFACEIMPL, r, MD_INTERFACEIMPL_INTERFACE, 1 << 2 | 3);
	assert_int_equal(weave_names_in_async(&n, move_next), -1);
	assert_int_equal(lt_error_last()->code, LT_E_METADATA);
	weave_names_free(&n);
	img_free(img);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csharp_state_machines),
		cmocka_unit_test(test_core_library_machine),
		cmocka_unit_test(test_bad_interface),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
