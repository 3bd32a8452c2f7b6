/* test_weave_merge.c - unit tests of what the run-time merger builds on: signatures re-mapped
 * (sig_remap) and any framework type or member resolved by name in a target (wref_type,
 * wref_nested, wref_member, checked in reference assemblies), on real assemblies.  The merge itself: tests/integration/merge.sh. */
#include "weave_fixture.h"
#include "weave_inputs.h"
#include "weave_merge.h"
#include "weave_refs.h"
#include "weave.h"

/* Maps TypeRef row r to TypeDef row r + 0x10 and counts the calls. */
static int shift_token(void *ctx, uint32_t token, uint32_t *out)
{
	(*(int *)ctx)++;
	if (md_token_table(token) != MD_TYPEREF)
		return lt_error_set(LT_E_WEAVE, "unexpected token 0x%08x", token);
	*out = md_token(MD_TYPEDEF, md_token_row(token) + 0x10);
	return 0;
}

static void remap(const uint8_t *in, size_t len, int typespec, const uint8_t *want, size_t want_len, int calls)
{
	struct lt_buf b = LT_BUF_INIT;
	int n = 0;

	assert_int_equal(sig_remap(in, len, typespec, shift_token, &n, &b), 0);
	assert_int_equal(n, calls);
	assert_int_equal(b.len, want_len);
	assert_memory_equal(b.data, want, want_len);
	lt_buf_free(&b);
}

/* II.23.2.8 TypeDefOrRefOrSpecEncoded: TypeRef row 1 is 0x05, TypeDef row 0x11 is 0x44. */
static void test_remap_method_field_locals(void **state)
{
	/* static class(TypeRef 1) (valuetype TypeRef 2, string) */
	static const uint8_t method[] = { 0x00, 0x02, SIG_CLASS, 0x05, SIG_VALUETYPE, 0x09, SIG_STRING };
	static const uint8_t method_want[] = { 0x00, 0x02, SIG_CLASS, 0x44, SIG_VALUETYPE, 0x48, SIG_STRING };
	/* field modreq(TypeRef 3) int64 */
	static const uint8_t field[] = { SIG_CONV_FIELD, SIG_CMOD_REQD, 0x0D, SIG_I8 };
	static const uint8_t field_want[] = { SIG_CONV_FIELD, SIG_CMOD_REQD, 0x4C, SIG_I8 };
	/* locals: genericinst class TypeRef 1 <string, valuetype TypeRef 2>, int32[] */
	static const uint8_t locals[] = { SIG_CONV_LOCAL_SIG, 0x02, SIG_GENERICINST, SIG_CLASS, 0x05, 0x02, SIG_STRING,
					  SIG_VALUETYPE, 0x09, SIG_SZARRAY, SIG_I4 };
	static const uint8_t locals_want[] = { SIG_CONV_LOCAL_SIG, 0x02, SIG_GENERICINST, SIG_CLASS, 0x44, 0x02,
					       SIG_STRING, SIG_VALUETYPE, 0x48, SIG_SZARRAY, SIG_I4 };

	(void)state;
	remap(method, sizeof method, 0, method_want, sizeof method_want, 2);
	remap(field, sizeof field, 0, field_want, sizeof field_want, 1);
	remap(locals, sizeof locals, 0, locals_want, sizeof locals_want, 2);
}

/* A TypeSpec blob (a type alone) and a MethodSpec instantiation; no tokens: the same bytes. */
static void test_remap_typespec_methodspec(void **state)
{
	static const uint8_t spec[] = { SIG_GENERICINST, SIG_VALUETYPE, 0x05, 0x01, SIG_I8 };
	static const uint8_t spec_want[] = { SIG_GENERICINST, SIG_VALUETYPE, 0x44, 0x01, SIG_I8 };
	static const uint8_t inst[] = { SIG_CONV_GENERICINST, 0x01, SIG_CLASS, 0x09 };
	static const uint8_t inst_want[] = { SIG_CONV_GENERICINST, 0x01, SIG_CLASS, 0x48 };
	static const uint8_t plain[] = { SIG_HASTHIS, 0x01, SIG_VOID, SIG_OBJECT };

	(void)state;
	remap(spec, sizeof spec, 1, spec_want, sizeof spec_want, 1);
	remap(inst, sizeof inst, 0, inst_want, sizeof inst_want, 1);
	remap(plain, sizeof plain, 0, plain, sizeof plain, 0);
}

/* The callback's failure and a malformed blob come back as -1. */
static void test_remap_errors(void **state)
{
	static const uint8_t spec_typedef[] = { SIG_CLASS, 0x04 }; /* TypeDef row 1: shift_token refuses it */
	static const uint8_t truncated[] = { 0x00, 0x02, SIG_CLASS };
	struct lt_buf b = LT_BUF_INIT;
	int n = 0;

	(void)state;
	expect_error(sig_remap(spec_typedef, sizeof spec_typedef, 1, shift_token, &n, &b), LT_E_WEAVE);
	expect_error(sig_remap(truncated, sizeof truncated, 0, shift_token, &n, &b), LT_E_SIGNATURE);
	expect_error(sig_remap(truncated, 0, 0, shift_token, &n, &b), LT_E_SIGNATURE);
	lt_buf_free(&b);
}

/* The System.Runtime family: any type by name, in its home assembly; nested TypeRefs; a member on
 * a TypeRef is a MemberRef, reused when asked again. */
static void test_type_by_name_system_runtime(void **state)
{
	struct img *img = load(NET_REF_DIR "/System.Linq.dll"); /* references System.Runtime, defines none of these */
	struct md_image *md = &img->md;
	static const uint8_t sig[] = { SIG_CONV_DEFAULT, 0x01, SIG_I4, SIG_BYREF, SIG_I4 };
	struct wref_ctx *c;
	uint32_t dict, enumerator, kv, interlocked, thread, inc, again, memberrefs;

	(void)state;
	ok(wref_open(img, &default_opts, &c));
	assert_int_equal(wref_is_corlib(c), 0);
	ok(wref_type(c, "System.Collections.Generic", "Dictionary`2", &dict));
	ok(wref_type(c, "System.Collections.Generic", "KeyValuePair`2", &kv));
	ok(wref_type(c, "System.Threading", "Interlocked", &interlocked));
	ok(wref_type(c, "System.Threading", "Thread", &thread));
	assert_string_equal(scope_name(md, dict), "System.Collections");
	assert_string_equal(scope_name(md, kv), "System.Runtime");
	assert_string_equal(scope_name(md, interlocked), "System.Threading");
	assert_string_equal(scope_name(md, thread), "System.Threading.Thread");
	ok(wref_nested(c, dict, "Enumerator", &enumerator));
	assert_int_equal(md_token_table(enumerator), MD_TYPEREF);
	assert_string_equal(str(md, MD_TYPEREF, md_token_row(enumerator), MD_TYPEREF_NAME), "Enumerator");
	ok(wref_member(c, interlocked, 0, "Increment", sig, sizeof sig, &inc));
	assert_int_equal(md_token_table(inc), MD_MEMBERREF);
	memberrefs = md_rows(md, MD_MEMBERREF);
	ok(wref_member(c, interlocked, 0, "Increment", sig, sizeof sig, &again));
	assert_int_equal(again, inc);
	assert_int_equal(md_rows(md, MD_MEMBERREF), memberrefs);
	wref_close(c);
	img_free(img);
}

/* A core library: its own public TypeDefs, nested TypeDefs and MethodDefs; a type or member it
 * lacks is an error. */
static void test_type_by_name_corlib(void **state)
{
	struct img *img = load(MONO_MSCORLIB);
	struct md_image *md = &img->md;
	static const uint8_t getenv[] = { SIG_CONV_DEFAULT, 0x01, SIG_STRING, SIG_STRING };
	static const uint8_t nothing[] = { SIG_CONV_DEFAULT, 0x00, SIG_VOID };
	struct wref_ctx *c;
	uint32_t dict, enumerator, env, m, clock;
	int64_t hz;

	(void)state;
	ok(wref_open(img, &default_opts, &c));
	assert_int_equal(wref_is_corlib(c), 1);
	ok(wref_type(c, "System.Collections.Generic", "Dictionary`2", &dict));
	assert_int_equal(md_token_table(dict), MD_TYPEDEF);
	ok(wref_nested(c, dict, "Enumerator", &enumerator));
	assert_int_equal(md_token_table(enumerator), MD_TYPEDEF);
	assert_string_equal(str(md, MD_TYPEDEF, md_token_row(enumerator), MD_TYPEDEF_NAME), "Enumerator");
	ok(wref_type(c, "System", "Environment", &env));
	ok(wref_member(c, env, 0, "GetEnvironmentVariable", getenv, sizeof getenv, &m));
	assert_int_equal(md_token_table(m), MD_METHODDEF);
	expect_error(wref_member(c, env, 0, "NoSuchMethod", nothing, sizeof nothing, &m), LT_E_WEAVE);
	expect_error(wref_type(c, "System.Diagnostics", "Stopwatch", &m), LT_E_WEAVE);
	expect_error(wref_nested(c, dict, "NoSuchNested", &m), LT_E_WEAVE);
	ok(wref_clock(c, &clock, &hz));
	assert_int_equal(md_token_table(clock), MD_METHODDEF);
	assert_int_equal(hz, 10000000);
	wref_close(c);
	img_free(img);
}

/* wref_type_if_known: a type only where it is known to be - System.Runtime's table of homes, a
 * core library's own TypeDefs - never guessed into mscorlib; nothing is added when not. */
static void test_type_if_known(void **state)
{
	struct img *net = load(NET_REF_DIR "/System.Linq.dll"), *fx = load("/usr/lib/mono/4.5/System.dll");
	struct img *corlib = load(MONO_MSCORLIB);
	struct wref_ctx *c;
	uint32_t t, typerefs;

	(void)state;
	ok(wref_open(net, &default_opts, &c));
	assert_int_equal(wref_type_if_known(c, "System.Diagnostics.CodeAnalysis", "UnconditionalSuppressMessageAttribute", &t), 1);
	assert_int_equal(md_token_table(t), MD_TYPEREF);
	assert_string_equal(scope_name(&net->md, t), "System.Runtime");
	typerefs = md_rows(&net->md, MD_TYPEREF);
	assert_int_equal(wref_type_if_known(c, "System.Diagnostics.CodeAnalysis", "NoSuchAttribute", &t), 0);
	assert_int_equal(md_rows(&net->md, MD_TYPEREF), typerefs);
	wref_close(c);
	ok(wref_open(fx, &default_opts, &c)); /* references mscorlib: wref_type would guess it there */
	typerefs = md_rows(&fx->md, MD_TYPEREF);
	assert_int_equal(wref_type_if_known(c, "System.Diagnostics.CodeAnalysis", "UnconditionalSuppressMessageAttribute", &t), 0);
	assert_int_equal(md_rows(&fx->md, MD_TYPEREF), typerefs);
	wref_close(c);
	ok(wref_open(corlib, &default_opts, &c));
	assert_int_equal(wref_type_if_known(c, "System", "Attribute", &t), 1);
	assert_int_equal(md_token_table(t), MD_TYPEDEF);
	assert_int_equal(wref_type_if_known(c, "System.Diagnostics.CodeAnalysis", "UnconditionalSuppressMessageAttribute", &t), 0);
	wref_close(c);
	img_free(net);
	img_free(fx);
	img_free(corlib);
}

/* The built run-time template merges into a .NET program without reference assemblies, as a bare `locktime weave`
 * of it does: every framework type the merge copies a use of has a home in weave_refs.c's table (a template change
 * that used System.IO.SeekOrigin, not listed there, stopped every such weave with LT015). */
static void test_template_merges_without_references(void **state)
{
	struct img *img = load("build/corpus/csharp/Release/LockCorpus.dll");
	enum weave_outcome outcome;
	long nsites = 0;

	(void)state;
	if (weave_image(img, &default_opts, &outcome, &nsites, NULL) < 0)
		fail_msg("%s", lt_error_last()->msg);
	assert_int_equal(outcome, WEAVE_WOVEN);
	assert_true(nsites > 0);
	img_free(img);
}

/* With reference assemblies: a member is looked for on the type, then on its bases; one they do
 * not have is an error, not a MemberRef that fails when the program runs. */
static void test_member_in_references(void **state)
{
	struct img *img = load(NET_REF_DIR "/System.Linq.dll");
	static const uint8_t increment[] = { SIG_CONV_DEFAULT, 0x01, SIG_I4, SIG_BYREF, SIG_I4 };
	static const uint8_t newline[] = { SIG_HASTHIS, 0x00, SIG_STRING };
	char runtime[512], threading[512];
	const char *refs[] = { runtime, threading };
	struct weave_opts opts = default_opts;
	struct wref_ctx *c;
	uint32_t interlocked, writer, m;

	(void)state;
	find_path(NET_REF_DIR "/System.Runtime.dll", runtime, sizeof runtime);
	find_path(NET_REF_DIR "/System.Threading.dll", threading, sizeof threading);
	assert_int_equal(weave_refs_read((struct weave_ref **)&opts.refs, refs, 2), 0);
	opts.nrefs = 2;
	ok(wref_open(img, &opts, &c));
	ok(wref_type(c, "System.Threading", "Interlocked", &interlocked));
	ok(wref_member(c, interlocked, 0, "Increment", increment, sizeof increment, &m));
	assert_int_equal(md_token_table(m), MD_MEMBERREF);
	expect_error(wref_member(c, interlocked, 0, "Incremental", increment, sizeof increment, &m), LT_E_WEAVE);
	expect_error(wref_member(c, interlocked, 1, "Increment", increment, sizeof increment, &m), LT_E_WEAVE);
	ok(wref_type(c, "System.IO", "StreamWriter", &writer));
	ok(wref_member(c, writer, 0, "get_NewLine", newline, sizeof newline, &m)); /* declared by TextWriter only */
	wref_close(c);
	weave_refs_free((struct weave_ref *)opts.refs, opts.nrefs);
	img_free(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remap_method_field_locals),
		cmocka_unit_test(test_template_merges_without_references),
		cmocka_unit_test(test_remap_typespec_methodspec),
		cmocka_unit_test(test_remap_errors),
		cmocka_unit_test(test_type_by_name_system_runtime),
		cmocka_unit_test(test_type_by_name_corlib),
		cmocka_unit_test(test_type_if_known),
		cmocka_unit_test(test_member_in_references),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
