/* test_weave_template.c - the run-time template (weaver/runtime, linked in) read as the weaver reads it:
 * inside the merger's subset (weave_merge_check) with every member the weaver relies on
 * (weave_stubs_check_hooks); small bad templates, each the built one with one edit, fail with the
 * construct named; prepared for merging (weave_template_open), its bodies' tokens found where they lie.
 * The same check on templates the C# compiler made: tests/integration/merge.sh. */
#include "weave_fixture.h"
#include "weave_stubs_int.h"
#include "weave_merge_int.h"
#include "image_body.h"
#include "lt_cursor.h"

/* What a check reported: its lines, one after another. */
struct findings {
	char text[8192];
	size_t at;
	long n;
};

static void collect(void *ctx, const char *what)
{
	struct findings *f = ctx;

	f->n++;
	if (f->at < sizeof f->text)
		f->at += (size_t)snprintf(f->text + f->at, sizeof f->text - f->at, "%s\n", what);
}

/* weave_merge_check (hooks 0) or weave_stubs_check_hooks (hooks 1) over img: the findings. */
static struct findings check(const struct img *img, int hooks)
{
	struct findings f = { .at = 0 };
	long n = hooks ? weave_stubs_check_hooks(img, collect, &f) : weave_merge_check(img, collect, &f);

	if (n < 0)
		fail_msg("check failed: %s", lt_error_last()->msg);
	assert_int_equal(n, f.n);
	return f;
}

/* Exactly `count` findings (-1: at least one), one of them containing `want`. */
static void expect_finding(const struct img *img, int hooks, long count, const char *want)
{
	struct findings f = check(img, hooks);

	if ((count < 0 ? f.n < 1 : f.n != count) || !strstr(f.text, want))
		fail_msg("expected %ld finding(s) naming \"%s\", got %ld:\n%s", count, want, f.n, f.text);
}

/* The row of the template's TypeDef "LockTime.Runtime.<name>". */
static uint32_t type_row(const struct md_image *md, const char *name)
{
	char buf[300], want[300];

	struct merge_index x;

	snprintf(want, sizeof want, "LockTime.Runtime.%s", name);
	assert_int_equal(merge_index_open(md, &x), 0);
	for (uint32_t r = 2; r <= md_rows(md, MD_TYPEDEF); r++) {
		assert_int_equal(merge_type_name(&x, r, buf, sizeof buf), 0);
		if (strcmp(buf, want) == 0) {
			merge_index_close(&x);
			return r;
		}
	}
	fail_msg("no TypeDef %s", want);
	return 0;
}

/* The row of the template's Field (table MD_FIELD) or MethodDef "LockTime.Runtime.<name>" ("Api::Off"). */
static uint32_t member_row(const struct md_image *md, enum md_table_id table, const char *name)
{
	char buf[400], want[400];

	struct merge_index x;

	snprintf(want, sizeof want, "LockTime.Runtime.%s", name);
	assert_int_equal(merge_index_open(md, &x), 0);
	for (uint32_t r = 1; r <= md_rows(md, table); r++) {
		assert_int_equal(merge_member_name(&x, table, r, buf, sizeof buf), 0);
		if (strcmp(buf, want) == 0) {
			merge_index_close(&x);
			return r;
		}
	}
	fail_msg("no member %s", want);
	return 0;
}

/* The built template: inside the subset, every hook there with its signature. */
static void test_template_as_built(void **state)
{
	struct img *img = template_load();
	struct findings subset = check(img, 0), hooks = check(img, 1);

	(void)state;
	if (subset.n || hooks.n)
		fail_msg("the run-time template:\n%s%s", subset.text, hooks.text);
	img_free(img);
}

/* Prepared (weave_template_open), the built template's bodies are what the merger copies: each is what
 * il_encode writes of it (so a copy with its tokens re-mapped in place is what re-encoding it gave), and
 * its token offsets are exactly the tokens il_decode reads, in its order: each marked with its index, the
 * decoded body holds the marks 0, 1, 2... in operand, LocalVarSigTok, catch clause order. */
static void test_template_bodies_prepared(void **state)
{
	struct img *img = template_load();
	struct weave_template *t;
	uint32_t tokens = 0;

	(void)state;
	assert_int_equal(weave_template_open(img, &t), 0);
	assert_int_equal(t->nmethods, md_rows(&img->md, MD_METHODDEF));
	for (uint32_t r = 1; r <= t->nmethods; r++) {
		uint32_t first = t->patch_first[r - 1], next = first, len = t->body_len[r - 1];
		uint8_t *copy = malloc(len);
		struct lt_buf enc = LT_BUF_INIT;
		struct il_body b;

		assert_non_null(copy);
		assert_int_equal(img_decode_body(img, r, &b), 0);
		assert_int_equal(il_encode(&b, img_stack_effect, img, &enc), 0);
		assert_int_equal(enc.len, len);
		assert_memory_equal(enc.data, t->body[r - 1], len);
		il_body_free(&b);
		lt_buf_free(&enc);
		memcpy(copy, t->body[r - 1], len);
		for (uint32_t k = first; k < t->patch_first[r]; k++)
			lt_put32(copy + t->patch[k], 0x7F000000u | (k - first));
		assert_int_equal(il_decode(copy, len, &b), 0);
		for (uint32_t i = 0; i < b.n; i++)
			if (il_op_info(b.ins[i].op)->operand == IL_OPND_TOKEN)
				assert_int_equal(b.ins[i].arg.token, 0x7F000000u | (next++ - first));
		if (b.local_var_sig_tok)
			assert_int_equal(b.local_var_sig_tok, 0x7F000000u | (next++ - first));
		for (uint32_t k = 0; k < b.neh; k++)
			if (b.eh[k].kind == IL_EH_CATCH)
				assert_int_equal(b.eh[k].class_token, 0x7F000000u | (next++ - first));
		assert_int_equal(next, t->patch_first[r]);
		tokens += next - first;
		il_body_free(&b);
		free(copy);
	}
	assert_true(tokens > t->nmethods); /* the template's bodies call, load fields, catch */
	weave_template_free(t);
	img_free(img);
}

static void test_template_field_rva(void **state)
{
	struct img *img = template_load();
	uint32_t f = member_row(&img->md, MD_FIELD, "Api::Off");

	(void)state;
	md_set(&img->md, MD_FIELD, f, MD_FIELD_FLAGS, md_get(&img->md, MD_FIELD, f, MD_FIELD_FLAGS) | 0x0100);
	expect_finding(img, 0, 1, "Field LockTime.Runtime.Api::Off: FieldRVA data");
	img_free(img);
}

static void test_template_closure(void **state)
{
	struct img *img = template_load();

	(void)state;
	set_string(&img->md, MD_TYPEDEF, type_row(&img->md, "Histogram"), MD_TYPEDEF_NAME, "<>c__DisplayClass0_0");
	expect_finding(img, 0, 1, "TypeDef LockTime.Runtime.<>c__DisplayClass0_0: a closure, lambda, iterator, async state machine");
	img_free(img);
}

static void test_template_no_body(void **state)
{
	struct img *img = template_load();

	(void)state;
	md_set(&img->md, MD_METHODDEF, member_row(&img->md, MD_METHODDEF, "Api::Released"), MD_METHODDEF_RVA, 0);
	expect_finding(img, 0, 1, "MethodDef LockTime.Runtime.Api::Released: no IL body");
	img_free(img);
}

static void test_template_generic_method(void **state)
{
	struct img *img = template_load();
	struct md_image *md = &img->md;
	uint32_t m = member_row(md, MD_METHODDEF, "Api::Released"), idx, len;
	const uint8_t *p;
	uint8_t sig[64];

	(void)state;
	/* II.23.2.1: GENERIC, then GenParamCount 1, then the rest as it was. */
	assert_int_equal(md_blob(md, md_get(md, MD_METHODDEF, m, MD_METHODDEF_SIGNATURE), &p, &len), 0);
	assert_true(len + 1 <= sizeof sig);
	sig[0] = p[0] | SIG_GENERIC;
	sig[1] = 1;
	memcpy(sig + 2, p + 1, len - 1);
	assert_int_equal(md_add_blob(md, sig, len + 1, &idx), 0);
	md_set(md, MD_METHODDEF, m, MD_METHODDEF_SIGNATURE, idx);
	expect_finding(img, 0, 1, "MethodDef LockTime.Runtime.Api::Released: a generic method of its own");
	img_free(img);
}

/* A .cctor in a type that is not beforefieldinit (II.10.5.3.2). */
static void test_template_explicit_cctor(void **state)
{
	struct img *img = template_load();
	struct md_image *md = &img->md;
	uint32_t t = type_row(md, "Api");

	(void)state;
	member_row(md, MD_METHODDEF, "Api::.cctor");
	md_set(md, MD_TYPEDEF, t, MD_TYPEDEF_FLAGS, md_get(md, MD_TYPEDEF, t, MD_TYPEDEF_FLAGS) & ~0x00100000u);
	expect_finding(img, 0, 1, "MethodDef LockTime.Runtime.Api::.cctor: an explicit static constructor");
	img_free(img);
}

/* [CompilerGenerated] on every type turned into [AsyncStateMachine]: one finding per type, with what it means. */
static void test_template_attribute(void **state)
{
	struct img *img = template_load();
	struct md_image *md = &img->md;
	uint32_t row = 0;

	(void)state;
	for (uint32_t r = 1; r <= md_rows(md, MD_TYPEREF); r++)
		if (strcmp(str(md, MD_TYPEREF, r, MD_TYPEREF_NAME), "CompilerGeneratedAttribute") == 0)
			row = r;
	assert_int_not_equal(row, 0);
	set_string(md, MD_TYPEREF, row, MD_TYPEREF_NAME, "AsyncStateMachineAttribute");
	expect_finding(img, 0, -1, "TypeDef LockTime.Runtime.Api: custom attribute "
				   "System.Runtime.CompilerServices.AsyncStateMachineAttribute (an async method), not one the merger copies");
	img_free(img);
}

/* The attributes for the trimmer the template declares itself (weaver/runtime/Start/Trimming.cs): every use
 * is one the merger carries as the target framework's own. */
static void test_template_framework_attributes(void **state)
{
	struct img *img = template_load();
	const struct md_image *md = &img->md;
	int suppress = 0, dependency = 0;
	struct merge_index x;
	char name[300];

	(void)state;
	assert_int_equal(merge_index_open(md, &x), 0);
	for (uint32_t r = 1; r <= md_rows(md, MD_CUSTOMATTRIBUTE); r++) {
		int kind = merge_attribute_name(&x, r, name, sizeof name);

		assert_true(kind >= 0);
		suppress += strcmp(name, "System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessageAttribute") == 0;
		dependency += strcmp(name, "System.Diagnostics.CodeAnalysis.DynamicDependencyAttribute") == 0;
		if (strstr(name, "System.Diagnostics.CodeAnalysis."))
			assert_int_equal(kind, MERGE_ATTRIBUTE_FRAMEWORK);
	}
	assert_int_equal(suppress, 15);  /* 4 on Metrics, 5 on MeterHistograms, 5 on Events, 1 on StackCapture.Take */
	assert_int_equal(dependency, 29); /* 6 on Metrics.Start, 6 on MeterHistograms, 17 on Events */
	merge_index_close(&x);
	img_free(img);
}

/* Such an attribute whose constructor takes anything but strings is refused, its class named. */
static void test_template_framework_attribute_not_strings(void **state)
{
	static const uint8_t sig[] = { SIG_HASTHIS, 0x02, SIG_VOID, SIG_STRING, SIG_I4 };
	struct img *img = template_load();
	struct md_image *md = &img->md;
	uint32_t ctor = 0, idx;
	struct merge_index x;
	char name[400];

	(void)state;
	assert_int_equal(merge_index_open(md, &x), 0);
	for (uint32_t r = 1; r <= md_rows(md, MD_METHODDEF); r++) {
		assert_int_equal(merge_member_name(&x, MD_METHODDEF, r, name, sizeof name), 0);
		if (strcmp(name, "System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessageAttribute::.ctor") == 0)
			ctor = r;
	}
	merge_index_close(&x);
	assert_int_not_equal(ctor, 0);
	assert_int_equal(md_add_blob(md, sig, sizeof sig, &idx), 0);
	md_set(md, MD_METHODDEF, ctor, MD_METHODDEF_SIGNATURE, idx);
	expect_finding(img, 0, 15, "TypeDef LockTime.Runtime.Metrics: custom attribute "
				  "System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessageAttribute, not one the merger copies");
	img_free(img);
}

static void test_template_other_assembly(void **state)
{
	struct img *img = template_load();

	(void)state;
	assert_int_equal(md_rows(&img->md, MD_ASSEMBLYREF), 1);
	set_string(&img->md, MD_ASSEMBLYREF, 1, MD_ASSEMBLYREF_NAME, "System.Runtime");
	expect_finding(img, 0, 1, "AssemblyRef System.Runtime: the run-time may reference netstandard only");
	img_free(img);
}

static void test_template_refused_table(void **state)
{
	struct img *img = template_load();
	uint32_t cells[MD_MODULEREF_COLS] = { 0 }, row;

	(void)state;
	assert_int_equal(md_add_string(&img->md, "libc", &cells[MD_MODULEREF_NAME]), 0);
	assert_int_equal(md_append_row(&img->md, MD_MODULEREF, cells, &row), 0);
	expect_finding(img, 0, 1, "ModuleRef: 1 rows (module references (P/Invoke))");
	img_free(img);
}

/* Merged, the namespace goes: two top-level types of one name would clash. */
static void test_template_same_name(void **state)
{
	struct img *img = template_load();

	(void)state;
	set_string(&img->md, MD_TYPEDEF, type_row(&img->md, "Histogram"), MD_TYPEDEF_NAMESPACE, "LockTime.Other");
	set_string(&img->md, MD_TYPEDEF, type_row(&img->md, "Json"), MD_TYPEDEF_NAME, "Histogram");
	expect_finding(img, 0, 1, "a second top-level type named Histogram");
	img_free(img);
}

static void test_hook_missing(void **state)
{
	struct img *img = template_load();

	(void)state;
	set_string(&img->md, MD_METHODDEF, member_row(&img->md, MD_METHODDEF, "Api::Released"), MD_METHODDEF_NAME,
		   "Released2");
	expect_finding(img, 1, 1, "LockTime.Runtime.Api::Released: missing (the weaver calls or rewrites it, as void(object,int64))");
	img_free(img);
}

static void test_hook_signature(void **state)
{
	struct img *img = template_load();
	struct md_image *md = &img->md;
	uint32_t scope = member_row(md, MD_METHODDEF, "Api::ReleasedScope");

	(void)state;
	md_set(md, MD_METHODDEF, member_row(md, MD_METHODDEF, "Api::Waiting"), MD_METHODDEF_SIGNATURE,
	       md_get(md, MD_METHODDEF, scope, MD_METHODDEF_SIGNATURE));
	expect_finding(img, 1, 1, "LockTime.Runtime.Api::Waiting: signature void(int64), the weaver needs void(object,int32)");
	img_free(img);
}

/* A class type is named: AcquiredWhenDone's Task, SiteList.Load's SiteTable. */
static void test_hook_class_signature(void **state)
{
	struct img *img = template_load();
	struct md_image *md = &img->md;

	(void)state;
	md_set(md, MD_METHODDEF, member_row(md, MD_METHODDEF, "SiteList::Load"), MD_METHODDEF_SIGNATURE,
	       md_get(md, MD_METHODDEF, member_row(md, MD_METHODDEF, "Api::AcquiredWhenDone"), MD_METHODDEF_SIGNATURE));
	expect_finding(img, 1, 1, "LockTime.Runtime.SiteList::Load: signature void(System.Threading.Tasks.Task,object,int32,int64), "
				  "the weaver needs void(LockTime.Runtime.SiteTable)");
	img_free(img);
}

static void test_hook_overloaded(void **state)
{
	struct img *img = template_load();

	(void)state;
	set_string(&img->md, MD_METHODDEF, member_row(&img->md, MD_METHODDEF, "Api::Waited"), MD_METHODDEF_NAME, "Waiting");
	expect_finding(img, 1, 2, "LockTime.Runtime.Api::Waiting: overloaded");
	expect_finding(img, 1, 2, "LockTime.Runtime.Api::Waited: missing");
	img_free(img);
}

static void test_hook_field_not_static(void **state)
{
	struct img *img = template_load();
	uint32_t f = member_row(&img->md, MD_FIELD, "Api::Off");

	(void)state;
	md_set(&img->md, MD_FIELD, f, MD_FIELD_FLAGS, md_get(&img->md, MD_FIELD, f, MD_FIELD_FLAGS) & ~0x0010u);
	expect_finding(img, 1, 1, "LockTime.Runtime.Api::Off: signature bool, the weaver needs static bool");
	img_free(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_template_as_built),
		cmocka_unit_test(test_template_bodies_prepared),
		cmocka_unit_test(test_template_field_rva),
		cmocka_unit_test(test_template_closure),
		cmocka_unit_test(test_template_no_body),
		cmocka_unit_test(test_template_generic_method),
		cmocka_unit_test(test_template_explicit_cctor),
		cmocka_unit_test(test_template_attribute),
		cmocka_unit_test(test_template_framework_attributes),
		cmocka_unit_test(test_template_framework_attribute_not_strings),
		cmocka_unit_test(test_template_other_assembly),
		cmocka_unit_test(test_template_refused_table),
		cmocka_unit_test(test_template_same_name),
		cmocka_unit_test(test_hook_missing),
		cmocka_unit_test(test_hook_signature),
		cmocka_unit_test(test_hook_class_signature),
		cmocka_unit_test(test_hook_overloaded),
		cmocka_unit_test(test_hook_field_not_static),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
