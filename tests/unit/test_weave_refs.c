/* test_weave_refs.c - unit tests of public key tokens, the IL emitter, and framework references resolved on real assemblies. */
#include "weave_fixture.h"
#include "weave_emit.h"
#include "weave_inputs.h"
#include "weave_refs.h"

#include <unistd.h>

/* ---- public key tokens and the emitter ---- */

/* The public key token of a real key equals the one the compiler wrote. */
static void test_key_token_of_real_key(void **state)
{
	struct img *sr = load(NET_REF_DIR "/System.Runtime.dll"), *coll = load(NET_REF);
	const uint8_t *key, *token;
	uint32_t keylen, toklen;
	uint8_t mine[8];

	(void)state;
	assert_int_equal(md_blob(&sr->md, md_get(&sr->md, MD_ASSEMBLY, 1, MD_ASSEMBLY_PUBLICKEY), &key, &keylen), 0);
	assert_int_equal(md_blob(&coll->md, md_get(&coll->md, MD_ASSEMBLYREF, assemblyref_row(&coll->md, "System.Runtime"),
						   MD_ASSEMBLYREF_PUBLICKEYORTOKEN), &token, &toklen), 0);
	assert_int_equal(toklen, 8);
	assert_int_equal(wref_public_key_token(key, keylen, mine), 0);
	assert_memory_equal(mine, token, 8);
	img_free(sr);
	img_free(coll);
}

static void test_emit_unplaced_label(void **state)
{
	struct em e;
	struct il_body b;

	(void)state;
	em_init(&e);
	em_br(&e, IL_BR, em_label(&e));
	em_op(&e, IL_RET);
	expect_error(em_finish(&e, &b), LT_E_ENCODE);
	em_free(&e);
}

static void test_emit_labels_and_forms(void **state)
{
	struct em e;
	struct il_body b;
	uint32_t top;

	(void)state;
	em_init(&e);
	top = em_label(&e);
	em_mark(&e, top);
	em_i4(&e, -1);
	em_i4(&e, 100);
	em_i4(&e, 1000);
	em_ldarg(&e, 300);
	em_ldloc(&e, 2);
	em_ldloca(&e, 1);
	em_br(&e, IL_BR, top);
	assert_int_equal(em_finish(&e, &b), 0);
	em_free(&e);
	assert_int_equal(b.n, 7);
	assert_int_equal(b.ins[0].op, IL_LDC_I4_M1);
	assert_int_equal(b.ins[1].op, IL_LDC_I4_S);
	assert_int_equal(b.ins[2].op, IL_LDC_I4);
	assert_int_equal(b.ins[3].op, IL_LDARG);
	assert_int_equal(b.ins[4].op, IL_LDLOC_2);
	assert_int_equal(b.ins[5].op, IL_LDLOCA_S);
	assert_int_equal(b.ins[6].arg.target, b.ins[0].id);
	il_body_free(&b);
}

/* ---- Framework references ---- */

/* Framework types the run-time uses, all in the base assembly of mscorlib and netstandard. */
static const char *const runtime_types[][2] = {
	{ "System", "Object" }, { "System", "String" }, { "System", "Int64" }, { "System", "Environment" },
	{ "System.Globalization", "CultureInfo" }, { "System", "Console" }, { "System.IO", "TextWriter" },
	{ "System.IO", "File" }, { "System.Threading", "Monitor" }, { "System", "ThreadStaticAttribute" },
	{ "System", "Type" }, { "System", "RuntimeTypeHandle" },
};

/* The token of type ns.name in c's target (wref_type), failing the test on error. */
static uint32_t type_in(struct wref_ctx *c, const char *ns, const char *name)
{
	uint32_t tok;

	if (wref_type(c, ns, name, &tok) < 0)
		fail_msg("%s.%s: %s", ns, name, lt_error_last()->msg);
	return tok;
}

/* Open a resolution context for img and resolve System.Object in it: 0, or -1 with the error. */
static int object_in(struct img *img, const struct weave_opts *o)
{
	struct wref_ctx *c;
	uint32_t tok;
	int rc;

	if (wref_open(img, o, &c) < 0)
		return -1;
	rc = wref_type(c, "System", "Object", &tok);
	wref_close(c);
	return rc;
}

/* Resolve System.Diagnostics.Stopwatch::GetTimestamp() in img: 0, or -1 with the error. */
static int timestamp_in(struct img *img)
{
	static const uint8_t sig[] = { SIG_CONV_DEFAULT, 0, SIG_I8 };
	struct wref_ctx *c;
	uint32_t type, tok;
	int rc;

	if (wref_open(img, &default_opts, &c) < 0)
		return -1;
	rc = wref_type(c, "System.Diagnostics", "Stopwatch", &type) < 0 ? -1
	     : wref_member(c, type, 0, "GetTimestamp", sig, sizeof sig, &tok);
	wref_close(c);
	return rc;
}

/* mscorlib family: everything in mscorlib but Stopwatch, which mono's
 * System.dll defines itself (a MethodDef and a Field, not MemberRefs). */
static void test_refs_mscorlib_own_stopwatch(void **state)
{
	struct img *img = load(MONO_SYSTEM);
	struct md_image *md = &img->md;
	uint32_t typerefs = md_rows(md, MD_TYPEREF), asmrefs = md_rows(md, MD_ASSEMBLYREF), stopwatch, tok;
	static const uint8_t timestamp_sig[] = { SIG_CONV_DEFAULT, 0, SIG_I8 }, frequency_sig[] = { SIG_CONV_FIELD, SIG_I8 };
	struct wref_ctx *c;

	(void)state;
	ok(wref_open(img, &default_opts, &c));
	stopwatch = type_in(c, "System.Diagnostics", "Stopwatch");
	assert_int_equal(md_token_table(stopwatch), MD_TYPEDEF);
	ok(wref_member(c, stopwatch, 0, "GetTimestamp", timestamp_sig, sizeof timestamp_sig, &tok));
	assert_int_equal(md_token_table(tok), MD_METHODDEF);
	assert_string_equal(str(md, MD_METHODDEF, md_token_row(tok), MD_METHODDEF_NAME), "GetTimestamp");
	ok(wref_member(c, stopwatch, 1, "Frequency", frequency_sig, sizeof frequency_sig, &tok));
	assert_int_equal(md_token_table(tok), MD_FIELD);
	for (size_t t = 0; t < sizeof runtime_types / sizeof runtime_types[0]; t++)
		assert_string_equal(scope_name(md, type_in(c, runtime_types[t][0], runtime_types[t][1])), "mscorlib");
	/* System.Object is referenced already: the row is reused. */
	assert_true(md_token_row(type_in(c, "System", "Object")) <= typerefs);
	assert_int_equal(md_rows(md, MD_ASSEMBLYREF), asmrefs);
	wref_close(c);
	img_free(img);
}

/* mscorlib family from an assembly that does not define Stopwatch: a new
 * AssemblyRef System with mscorlib's version and the ECMA token. */
static void test_refs_mscorlib_new_system_ref(void **state)
{
	struct img *img = load(MONO_SYSTEM);
	struct md_image *md = &img->md;
	uint32_t idx, mscorlib, system;
	struct wref_ctx *c;

	(void)state;
	/* Make the image look like any assembly: rename its own System.Diagnostics.Stopwatch and Assembly. */
	for (uint32_t t = 1; t <= md_rows(md, MD_TYPEDEF); t++)
		if (strcmp(str(md, MD_TYPEDEF, t, MD_TYPEDEF_NAME), "Stopwatch") == 0) {
			assert_int_equal(md_add_string(md, "Stopwatch2", &idx), 0);
			md_set(md, MD_TYPEDEF, t, MD_TYPEDEF_NAME, idx);
		}
	assert_int_equal(md_add_string(md, "NotSystem", &idx), 0);
	md_set(md, MD_ASSEMBLY, 1, MD_ASSEMBLY_NAME, idx);
	ok(wref_open(img, &default_opts, &c));
	assert_string_equal(scope_name(md, type_in(c, "System.Diagnostics", "Stopwatch")), "System");
	assert_string_equal(scope_name(md, type_in(c, "System.Threading", "Monitor")), "mscorlib");
	mscorlib = assemblyref_row(md, "mscorlib");
	system = assemblyref_row(md, "System");
	assert_int_equal(system, md_rows(md, MD_ASSEMBLYREF));
	for (unsigned k = 0; k < 4; k++)
		assert_int_equal(md_get(md, MD_ASSEMBLYREF, system, MD_ASSEMBLYREF_MAJORVERSION + k),
				 md_get(md, MD_ASSEMBLYREF, mscorlib, MD_ASSEMBLYREF_MAJORVERSION + k));
	assert_key_blob_equal(md, system, mscorlib);
	wref_close(c);
	img_free(img);
}

/* System.Runtime family: Console in System.Console, Monitor in
 * System.Threading, new AssemblyRefs with System.Runtime's version and token. */
static void test_refs_system_runtime(void **state)
{
	struct img *img = load(NET_REF);
	struct md_image *md = &img->md;
	uint32_t runtime, console, threading;
	struct wref_ctx *c;

	(void)state;
	ok(wref_open(img, &default_opts, &c));
	assert_string_equal(scope_name(md, type_in(c, "System", "Console")), "System.Console");
	assert_string_equal(scope_name(md, type_in(c, "System.Threading", "Monitor")), "System.Threading");
	assert_string_equal(scope_name(md, type_in(c, "System.Diagnostics", "Stopwatch")), "System.Runtime");
	assert_string_equal(scope_name(md, type_in(c, "System.IO", "File")), "System.Runtime");
	runtime = assemblyref_row(md, "System.Runtime");
	console = assemblyref_row(md, "System.Console");
	threading = assemblyref_row(md, "System.Threading");
	assert_key_blob_equal(md, console, runtime);
	assert_key_blob_equal(md, threading, runtime);
	assert_int_equal(md_get(md, MD_ASSEMBLYREF, console, MD_ASSEMBLYREF_MAJORVERSION),
			 md_get(md, MD_ASSEMBLYREF, runtime, MD_ASSEMBLYREF_MAJORVERSION));
	assert_int_equal(md_get(md, MD_ASSEMBLYREF, console, MD_ASSEMBLYREF_FLAGS) & 1, 0);
	wref_close(c);
	img_free(img);
}

/* System.Runtime family with the legacy homes the target already references. */
static void test_refs_legacy_homes(void **state)
{
	struct img *img = load(NET_REF);
	struct md_image *md = &img->md;
	uint32_t cells[MD_ASSEMBLYREF_COLS] = { 0 }, row;
	struct wref_ctx *c;

	(void)state;
	assert_int_equal(md_add_string(md, "System.Runtime.Extensions", &cells[MD_ASSEMBLYREF_NAME]), 0);
	assert_int_equal(md_append_row(md, MD_ASSEMBLYREF, cells, &row), 0);
	ok(wref_open(img, &default_opts, &c));
	assert_string_equal(scope_name(md, type_in(c, "System.Diagnostics", "Stopwatch")), "System.Runtime.Extensions");
	assert_string_equal(scope_name(md, type_in(c, "System", "Environment")), "System.Runtime.Extensions");
	assert_string_equal(scope_name(md, type_in(c, "System.IO", "File")), "System.Runtime");
	wref_close(c);
	img_free(img);
}

static void test_refs_netstandard(void **state)
{
	struct img *img = load(NET_REF);
	struct wref_ctx *c;

	(void)state;
	rename_assemblyref(&img->md, "System.Runtime", "netstandard");
	ok(wref_open(img, &default_opts, &c));
	for (size_t t = 0; t < sizeof runtime_types / sizeof runtime_types[0]; t++)
		assert_string_equal(scope_name(&img->md, type_in(c, runtime_types[t][0], runtime_types[t][1])), "netstandard");
	wref_close(c);
	img_free(img);
}

/* Implementation assemblies reference System.Private.CoreLib: Console in
 * System.Console with Microsoft's token (not CoreLib's).  (The shared
 * framework's own assemblies are ReadyToRun, so a reference assembly stands
 * in, its System.Runtime renamed.) */
static void test_refs_private_corelib(void **state)
{
	struct img *img = load(NET_REF), *ref = load(NET_REF);
	struct md_image *md = &img->md;
	uint32_t runtime_in_ref = assemblyref_row(&ref->md, "System.Runtime"), console;
	const uint8_t *a, *b;
	uint32_t la, lb;
	struct wref_ctx *c;

	(void)state;
	rename_assemblyref(md, "System.Runtime", "System.Private.CoreLib");
	ok(wref_open(img, &default_opts, &c));
	assert_string_equal(scope_name(md, type_in(c, "System.Threading", "Monitor")), "System.Private.CoreLib");
	assert_string_equal(scope_name(md, type_in(c, "System", "Console")), "System.Console");
	console = assemblyref_row(md, "System.Console");
	assert_int_equal(md_blob(md, md_get(md, MD_ASSEMBLYREF, console, MD_ASSEMBLYREF_PUBLICKEYORTOKEN), &a, &la), 0);
	assert_int_equal(md_blob(&ref->md, md_get(&ref->md, MD_ASSEMBLYREF, runtime_in_ref, MD_ASSEMBLYREF_PUBLICKEYORTOKEN),
				 &b, &lb), 0);
	assert_int_equal(la, 8);
	assert_memory_equal(a, b, 8);
	wref_close(c);
	img_free(img);
	img_free(ref);
}

/* With --reference assemblies: System.Console's full key becomes a token
 * equal to the one the compiler wrote for System.Runtime (same key). */
static void test_refs_from_reference_assemblies(void **state)
{
	char dir[512], p1[600], p2[600], p3[600];
	const char *refs[3] = { p1, p2, p3 };
	struct weave_opts o = default_opts;
	struct img *img = load(NET_REF);
	struct md_image *md = &img->md;
	struct wref_ctx *c;

	(void)state;
	find_path(NET_REF_DIR, dir, sizeof dir);
	snprintf(p1, sizeof p1, "%s/System.Runtime.dll", dir);
	snprintf(p2, sizeof p2, "%s/System.Console.dll", dir);
	snprintf(p3, sizeof p3, "%s/System.Threading.dll", dir);
	assert_int_equal(weave_refs_read((struct weave_ref **)&o.refs, refs, 3), 0);
	o.nrefs = 3;
	ok(wref_open(img, &o, &c));
	assert_string_equal(scope_name(md, type_in(c, "System", "Console")), "System.Console");
	assert_string_equal(scope_name(md, type_in(c, "System.Threading", "Monitor")), "System.Threading");
	assert_string_equal(scope_name(md, type_in(c, "System", "Object")), "System.Runtime");
	assert_key_blob_equal(md, assemblyref_row(md, "System.Console"), assemblyref_row(md, "System.Runtime"));
	weave_refs_free((struct weave_ref *)o.refs, o.nrefs);
	wref_close(c);
	img_free(img);
}

/* The shared framework's System.Runtime.dll forwards System.Object and the
 * rest to System.Private.CoreLib; System.Console.dll defines Console. */
static void refs_from_shared(const char **paths, size_t n, struct weave_opts *o)
{
	static char storage[3][600];
	static const char *const names[3] = { "System.Runtime.dll", "System.Console.dll", "System.Threading.dll" };
	char dir[512];

	find_path("/usr/share/dotnet/shared/Microsoft.NETCore.App/*", dir, sizeof dir);
	for (size_t i = 0; i < n; i++) {
		snprintf(storage[i], sizeof storage[i], "%s/%s", dir, names[i]);
		paths[i] = storage[i];
	}
	*o = default_opts;
	assert_int_equal(weave_refs_read((struct weave_ref **)&o->refs, paths, n), 0);
	o->nrefs = n;
}

/* A forwarder in a reference the target already references: that reference
 * is the scope (the runtime follows the forwarder). */
static void test_refs_forwarder(void **state)
{
	const char *paths[3];
	struct weave_opts o;
	struct img *img = load(NET_REF);
	struct md_image *md = &img->md;
	uint32_t runtime;
	struct wref_ctx *c;

	(void)state;
	refs_from_shared(paths, 3, &o);
	runtime = assemblyref_row(md, "System.Runtime");
	ok(wref_open(img, &o, &c));
	assert_string_equal(scope_name(md, type_in(c, "System", "Object")), "System.Runtime");
	assert_string_equal(scope_name(md, type_in(c, "System.Diagnostics", "Stopwatch")), "System.Runtime");
	assert_string_equal(scope_name(md, type_in(c, "System", "Console")), "System.Console");
	/* System.Threading.dll is not referenced: its forwarder's own target. */
	assert_string_equal(scope_name(md, type_in(c, "System.Threading", "Monitor")), "System.Private.CoreLib");
	assert_int_equal(assemblyref_row(md, "System.Runtime"), runtime);
	weave_refs_free((struct weave_ref *)o.refs, o.nrefs);
	wref_close(c);
	img_free(img);
}

/* The reference assemblies add to the target's framework: a type none of
 * them has (Console, in System.Console.dll) is where the framework puts it. */
static void test_refs_not_in_references(void **state)
{
	const char *paths[1];
	struct weave_opts o;
	struct img *img = load(NET_REF);
	struct wref_ctx *c;

	(void)state;
	refs_from_shared(paths, 1, &o);
	ok(wref_open(img, &o, &c));
	assert_string_equal(scope_name(&img->md, type_in(c, "System", "Console")), "System.Console");
	weave_refs_free((struct weave_ref *)o.refs, o.nrefs);
	wref_close(c);
	img_free(img);
}

/* ... and with a framework LockTime does not know, the reference assemblies
 * alone: a type none of them has is an error naming it and the references. */
static void test_refs_not_in_references_unknown_framework(void **state)
{
	const char *paths[1];
	struct weave_opts o;
	struct img *img = load(NET_REF);
	struct wref_ctx *c;
	uint32_t tok;

	(void)state;
	rename_assemblyref(&img->md, "System.Runtime", "Other.Runtime");
	refs_from_shared(paths, 1, &o);
	ok(wref_open(img, &o, &c));
	expect_error(wref_type(c, "System", "Console", &tok), LT_E_WEAVE);
	assert_non_null(strstr(lt_error_last()->msg, "System.Console"));
	assert_non_null(strstr(lt_error_last()->msg, "none of the 1 reference assemblies given (--reference)"));
	weave_refs_free((struct weave_ref *)o.refs, o.nrefs);
	wref_close(c);
	img_free(img);
}

static void test_refs_forwarder_target(void **state)
{
	const char *refs[1] = { "/usr/lib/mono/4.5/Facades/netstandard.dll" };
	struct weave_opts o = default_opts;
	struct img *img = load(MONO_SYSTEM);
	struct md_image *md = &img->md;
	uint32_t asmrefs = md_rows(md, MD_ASSEMBLYREF), added;
	struct wref_ctx *c;

	(void)state;
	/* mono's netstandard facade forwards to mscorlib, which the target no longer references. */
	rename_assemblyref(md, "mscorlib", "mscorlib2");
	assert_int_equal(weave_refs_read((struct weave_ref **)&o.refs, refs, 1), 0);
	o.nrefs = 1;
	ok(wref_open(img, &o, &c));
	assert_string_equal(scope_name(md, type_in(c, "System", "Console")), "mscorlib");
	assert_string_equal(scope_name(md, type_in(c, "System", "Object")), "mscorlib");
	assert_int_equal(md_token_table(type_in(c, "System.Diagnostics", "Stopwatch")), MD_TYPEDEF); /* System.dll's own */
	added = assemblyref_row(md, "mscorlib");
	assert_int_equal(added, asmrefs + 1);
	assert_key_blob_equal(md, added, assemblyref_row(md, "mscorlib2"));
	weave_refs_free((struct weave_ref *)o.refs, o.nrefs);
	wref_close(c);
	img_free(img);
}

/* The MethodDef row of mono's mscorlib clock, System.DateTime::GetSystemTimeAsFileTime. */
static uint32_t corlib_clock_row(const struct md_image *md)
{
	for (uint32_t r = 1; r <= md_rows(md, MD_METHODDEF); r++)
		if (strcmp(str(md, MD_METHODDEF, r, MD_METHODDEF_NAME), "GetSystemTimeAsFileTime") == 0)
			return r;
	fail_msg("mscorlib has no GetSystemTimeAsFileTime");
	return 0;
}

/* Mono's mscorlib has no Stopwatch: its own internal DateTime clock, 10^7 ticks a second. */
static void test_refs_corlib_clock(void **state)
{
	struct img *img = load(MONO_MSCORLIB);
	struct md_image *md = &img->md;
	uint32_t typerefs = md_rows(md, MD_TYPEREF), clock, tok;
	struct wref_ctx *c;
	int64_t hz;

	(void)state;
	ok(wref_open(img, &default_opts, &c));
	assert_int_equal(wref_is_corlib(c), 1);
	expect_error(wref_type(c, "System.Diagnostics", "Stopwatch", &tok), LT_E_WEAVE);
	ok(wref_clock(c, &clock, &hz));
	assert_int_equal(hz, 10000000);
	assert_int_equal(clock, md_token(MD_METHODDEF, corlib_clock_row(md)));
	/* Everything else is the core library's own: no TypeRef is added. */
	assert_int_equal(md_token_table(type_in(c, "System", "Type")), MD_TYPEDEF);
	assert_int_equal(md_rows(md, MD_TYPEREF), typerefs);
	wref_close(c);
	img_free(img);
}

/* A core library with neither Stopwatch nor the clock: refused, naming Stopwatch. */
static void test_refs_corlib_without_clock(void **state)
{
	struct img *img = load(MONO_MSCORLIB);
	struct md_image *md = &img->md;
	uint32_t idx, clock;
	struct wref_ctx *c;
	int64_t hz;

	(void)state;
	assert_int_equal(md_add_string(md, "GetSystemTimeAsFileTime2", &idx), 0);
	md_set(md, MD_METHODDEF, corlib_clock_row(md), MD_METHODDEF_NAME, idx);
	ok(wref_open(img, &default_opts, &c));
	expect_error(wref_clock(c, &clock, &hz), LT_E_WEAVE);
	assert_non_null(strstr(lt_error_last()->msg, "Stopwatch"));
	wref_close(c);
	img_free(img);
}

/* The clock must be callable from another type (II.23.1.10): a private one is not used. */
static void test_refs_corlib_clock_private(void **state)
{
	struct img *img = load(MONO_MSCORLIB);
	struct md_image *md = &img->md;
	uint32_t row = corlib_clock_row(md), clock;
	struct wref_ctx *c;
	int64_t hz;

	(void)state;
	md_set(md, MD_METHODDEF, row, MD_METHODDEF_FLAGS, (md_get(md, MD_METHODDEF, row, MD_METHODDEF_FLAGS) & ~7u) | 1u);
	ok(wref_open(img, &default_opts, &c));
	expect_error(wref_clock(c, &clock, &hz), LT_E_WEAVE);
	wref_close(c);
	img_free(img);
}

static void test_refs_unknown_framework(void **state)
{
	struct img *img = load(NET_REF);

	(void)state;
	rename_assemblyref(&img->md, "System.Runtime", "Other.Runtime");
	expect_error(object_in(img, &default_opts), LT_E_WEAVE);
	img_free(img);
}

static void test_refs_missing_reference_file(void **state)
{
	const char *refs[1] = { "/nonexistent/System.Runtime.dll" };
	struct weave_opts o = default_opts;
	struct img *img = load(NET_REF);

	(void)state;
	assert_int_equal(weave_refs_read((struct weave_ref **)&o.refs, refs, 1), 0);
	o.nrefs = 1;
	expect_error(object_in(img, &o), LT_E_IO);
	assert_non_null(strstr(lt_error_last()->msg, "/nonexistent/System.Runtime.dll"));
	weave_refs_free((struct weave_ref *)o.refs, o.nrefs);
	img_free(img);
}

static void test_refs_reference_not_pe(void **state)
{
	const char *refs[1] = { "/etc/hostname" };
	struct weave_opts o = default_opts;
	struct img *img = load(NET_REF);

	(void)state;
	assert_int_equal(weave_refs_read((struct weave_ref **)&o.refs, refs, 1), 0);
	o.nrefs = 1;
	expect_error(object_in(img, &o), LT_E_NOT_PE);
	weave_refs_free((struct weave_ref *)o.refs, o.nrefs);
	img_free(img);
}

/* Own TypeDef lacking a member with the needed signature. */
static void test_refs_own_member_missing(void **state)
{
	struct img *img = load(MONO_SYSTEM);
	struct md_image *md = &img->md;
	uint32_t idx;

	(void)state;
	for (uint32_t m = 1; m <= md_rows(md, MD_METHODDEF); m++)
		if (strcmp(str(md, MD_METHODDEF, m, MD_METHODDEF_NAME), "GetTimestamp") == 0) {
			assert_int_equal(md_add_string(md, "GetTimestamp2", &idx), 0);
			md_set(md, MD_METHODDEF, m, MD_METHODDEF_NAME, idx);
		}
	expect_error(timestamp_in(img), LT_E_WEAVE);
	assert_non_null(strstr(lt_error_last()->msg, "GetTimestamp"));
	img_free(img);
}

static void test_refs_malformed_name(void **state)
{
	struct img *img = load(NET_REF);

	(void)state;
	for (uint32_t t = md_rows(&img->md, MD_TYPEDEF); t >= 1; t--)
		if ((md_get(&img->md, MD_TYPEDEF, t, MD_TYPEDEF_FLAGS) & 0x7) == 0x1) { /* public: its name is read */
			md_set(&img->md, MD_TYPEDEF, t, MD_TYPEDEF_NAME, 0x7FFFFFFF);
			break;
		}
	expect_error(object_in(img, &default_opts), LT_E_METADATA);
	img_free(img);
}

/* A reference that is a module, not an assembly (no Assembly row). */
static void test_refs_reference_is_module(void **state)
{
	char path[] = "/tmp/lt-test-module-XXXXXX";
	const char *refs[1] = { path };
	struct weave_opts o = default_opts;
	struct img *module = load(NET_REF), *img = load(NET_REF);
	struct lt_buf out = LT_BUF_INIT;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	/* drop the Assembly row; its attributes move to the Module (II.22.10) */
	module->md.tables[MD_ASSEMBLY].rows = 0;
	for (uint32_t row = 1; row <= md_rows(&module->md, MD_CUSTOMATTRIBUTE); row++) {
		uint32_t parent, cell;
		assert_int_equal(md_coded_decode(MD_CI_HASCUSTOMATTRIBUTE,
						 md_get(&module->md, MD_CUSTOMATTRIBUTE, row, MD_CUSTOMATTRIBUTE_PARENT), &parent), 0);
		if (md_token_table(parent) != MD_ASSEMBLY)
			continue;
		assert_int_equal(md_coded_encode(MD_CI_HASCUSTOMATTRIBUTE, md_token(MD_MODULE, 1), &cell), 0);
		md_set(&module->md, MD_CUSTOMATTRIBUTE, row, MD_CUSTOMATTRIBUTE_PARENT, cell);
	}
	assert_int_equal(img_write(module, &out), 0);
	assert_int_equal(lt_file_write_atomic(path, out.data, out.len), 0);
	assert_int_equal(weave_refs_read((struct weave_ref **)&o.refs, refs, 1), 0);
	o.nrefs = 1;
	expect_error(object_in(img, &o), LT_E_WEAVE);
	assert_non_null(strstr(lt_error_last()->msg, "Assembly row"));
	unlink(path);
	lt_buf_free(&out);
	img_free(module);
	weave_refs_free((struct weave_ref *)o.refs, o.nrefs);
	img_free(img);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_token_of_real_key),
		cmocka_unit_test(test_emit_unplaced_label),
		cmocka_unit_test(test_emit_labels_and_forms),
		cmocka_unit_test(test_refs_mscorlib_own_stopwatch),
		cmocka_unit_test(test_refs_mscorlib_new_system_ref),
		cmocka_unit_test(test_refs_system_runtime),
		cmocka_unit_test(test_refs_legacy_homes),
		cmocka_unit_test(test_refs_netstandard),
		cmocka_unit_test(test_refs_private_corelib),
		cmocka_unit_test(test_refs_from_reference_assemblies),
		cmocka_unit_test(test_refs_forwarder),
		cmocka_unit_test(test_refs_not_in_references),
		cmocka_unit_test(test_refs_not_in_references_unknown_framework),
		cmocka_unit_test(test_refs_forwarder_target),
		cmocka_unit_test(test_refs_corlib_clock),
		cmocka_unit_test(test_refs_corlib_without_clock),
		cmocka_unit_test(test_refs_corlib_clock_private),
		cmocka_unit_test(test_refs_unknown_framework),
		cmocka_unit_test(test_refs_missing_reference_file),
		cmocka_unit_test(test_refs_reference_not_pe),
		cmocka_unit_test(test_refs_own_member_missing),
		cmocka_unit_test(test_refs_malformed_name),
		cmocka_unit_test(test_refs_reference_is_module),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
