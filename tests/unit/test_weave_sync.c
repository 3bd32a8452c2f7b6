/* test_weave_sync.c - unit tests of synchronized-method timing and of the acquiring wrappers' fast paths, on the corpus and mono's assemblies. */
#include "weave_fixture.h"
#include "image_body.h"
#include "weave_emit.h"
#include "weave_pass.h"

#define CS_RELEASE "build/corpus/csharp/Release/LockCorpus.dll"
#define FS_RELEASE "build/corpus/fsharp/Release/LockCorpusFs.dll"
#define SYNC_ONLY "build/corpus/synconly/SyncOnly.exe"

/* II.23.1.10-11 flag bits the tests set. */
#define METHOD_STATIC 0x0010
#define IMPL_SYNCHRONIZED 0x0020

/* ---- Helpers ---- */

/* The first MethodDef named `name` whose owner TypeDef is named `type` (NULL: any), or fail. */
static uint32_t method_row(const struct img *img, const char *type, const char *name)
{
	const struct md_image *md = &img->md;
	struct weave_names n;
	uint32_t found = 0;

	assert_int_equal(weave_names_init(&n, img), 0);
	for (uint32_t r = 1; r <= md_rows(md, MD_METHODDEF) && !found; r++) {
		uint32_t t = weave_names_owner(&n, r);
		if (strcmp(str(md, MD_METHODDEF, r, MD_METHODDEF_NAME), name) == 0 &&
		    (!type || (t && strcmp(str(md, MD_TYPEDEF, t, MD_TYPEDEF_NAME), type) == 0)))
			found = r;
	}
	weave_names_free(&n);
	if (!found)
		fail_msg("no method %s::%s", type ? type : "*", name);
	return found;
}

/* Weave img (threshold 0); it must be woven. */
static void weave(struct img *img)
{
	struct weave_opts o = { .threshold_ms = 0, .output = "stderr" };
	enum weave_outcome outcome;
	long n;

	ok(weave_image(img, &o, &outcome, &n, NULL));
	assert_int_equal(outcome, WEAVE_WOVEN);
}

static void body(const struct img *img, uint32_t row, struct il_body *b)
{
	ok(img_decode_body(img, row, b));
}

/* The name of the method a call instruction names ("" for a MemberRef's or a
 * MethodSpec's: only the stub type's MethodDefs are asked about). */
static const char *callee_name(const struct img *img, const struct il_instr *in)
{
	if (md_token_table(in->arg.token) == MD_METHODDEF)
		return str(&img->md, MD_METHODDEF, md_token_row(in->arg.token), MD_METHODDEF_NAME);
	if (md_token_table(in->arg.token) == MD_MEMBERREF)
		return str(&img->md, MD_MEMBERREF, md_token_row(in->arg.token), MD_MEMBERREF_NAME);
	return "";
}

/* How many call instructions of b name a method called `name`. */
static unsigned calls_to(const struct img *img, const struct il_body *b, const char *name)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < b->n; i++)
		n += (b->ins[i].op == IL_CALL || b->ins[i].op == IL_CALLVIRT) && strcmp(callee_name(img, &b->ins[i]), name) == 0;
	return n;
}

static unsigned count_op(const struct il_body *b, enum il_op op)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < b->n; i++)
		n += b->ins[i].op == op;
	return n;
}

/* The shape every woven synchronized body has: the object stored in a
 * local and Synchronized_Enter(obj, site) first; one finally
 * clause, the outermost, covering everything from the first original
 * instruction to Synchronized_Exit(obj); endfinally; one ret, the last
 * instruction.  Returns the index of the first original instruction. */
static uint32_t check_wrapped(const struct img *img, const struct il_body *b, int is_static)
{
	uint32_t first = is_static ? 2 : 1, enter = first + 3, fin = 0, ret_at = b->n - 1;
	const struct il_eh *outer = NULL;
	uint32_t *map;

	if (is_static) {
		assert_int_equal(b->ins[0].op, IL_LDTOKEN);
		assert_string_equal(callee_name(img, &b->ins[1]), "TypeOf");
	} else {
		assert_int_equal(b->ins[0].op, IL_LDARG_0);
	}
	assert_int_equal(b->ins[first].op, IL_DUP);
	assert_true(b->ins[first + 2].op >= IL_LDC_I4_M1 && b->ins[first + 2].op <= IL_LDC_I4);
	assert_string_equal(callee_name(img, &b->ins[enter]), "Synchronized_Enter");
	assert_int_equal(calls_to(img, b, "Synchronized_Exit"), 1);
	assert_int_equal(count_op(b, IL_RET), 1);
	assert_int_equal(b->ins[ret_at].op, IL_RET);
	assert_int_equal(il_id_map(b, &map), 0);
	for (uint32_t k = 0; k < b->neh; k++)
		if (b->eh[k].kind == IL_EH_FINALLY && b->eh[k].try_start == b->ins[enter + 1].id)
			outer = &b->eh[k];
	assert_non_null(outer);
	fin = map[outer->handler_start];
	assert_string_equal(callee_name(img, &b->ins[fin + 1]), "Synchronized_Exit");
	assert_int_equal(b->ins[fin + 2].op, IL_ENDFINALLY);
	/* Every other clause lies inside the try block. */
	for (uint32_t k = 0; k < b->neh; k++)
		if (&b->eh[k] != outer)
			assert_true(b->eh[k].handler_end != IL_ID_END && map[b->eh[k].handler_end] <= fin);
	free(map);
	return enter + 1;
}

/* ---- Synchronized bodies on real compiler output ---- */

/* C#: an instance method, a static one, a value-returning one with a ret
 * inside a try/finally, one that only throws (no ret at all). */
static void test_sync_csharp_shapes(void **state)
{
	struct img *img = load(CS_RELEASE);
	struct il_body b;
	uint32_t inc = method_row(img, "SyncCounter", "Increment"), st = method_row(img, "SyncCounter", "StaticIncrement");
	uint32_t clamp = method_row(img, "SyncCounter", "Clamp"), fail = method_row(img, "SyncCounter", "Fail");

	(void)state;
	weave(img);
	body(img, inc, &b);
	check_wrapped(img, &b, 0);
	il_body_free(&b);
	body(img, st, &b);
	check_wrapped(img, &b, 1);
	/* A non-generic type: ldtoken names its TypeDef. */
	assert_int_equal(md_token_table(b.ins[0].arg.token), MD_TYPEDEF);
	il_body_free(&b);
	body(img, clamp, &b);
	check_wrapped(img, &b, 0);
	/* The value comes back through the result local: ldloc; ret. */
	assert_true(b.ins[b.n - 2].op >= IL_LDLOC_0 && b.ins[b.n - 2].op <= IL_LDLOC_3);
	assert_int_equal(b.neh, 2);
	il_body_free(&b);
	body(img, fail, &b);
	check_wrapped(img, &b, 1);
	assert_int_equal(count_op(&b, IL_THROW), 1);
	il_body_free(&b);
	img_free(img);
}

/* A static synchronized method of a generic type locks the instantiation it
 * runs in: ldtoken of the TypeSpec GENERICINST CLASS SyncGeneric`1<!0>. */
static void test_sync_generic_type(void **state)
{
	struct img *img = load(CS_RELEASE);
	uint32_t add = method_row(img, "SyncGeneric`1", "Add"), len;
	const uint8_t *blob;
	struct il_body b;
	struct sig_type *t;

	(void)state;
	weave(img);
	body(img, add, &b);
	check_wrapped(img, &b, 1);
	assert_int_equal(md_token_table(b.ins[0].arg.token), MD_TYPESPEC);
	assert_int_equal(md_blob(&img->md, md_get(&img->md, MD_TYPESPEC, md_token_row(b.ins[0].arg.token),
						   MD_TYPESPEC_SIGNATURE), &blob, &len), 0);
	assert_int_equal(sig_typespec_decode(blob, len, &t), 0);
	assert_int_equal(t->elem, SIG_GENERICINST);
	assert_int_equal(t->inst, SIG_CLASS);
	assert_string_equal(str(&img->md, MD_TYPEDEF, md_token_row(t->token), MD_TYPEDEF_NAME), "SyncGeneric`1");
	assert_int_equal(t->nargs, 1);
	assert_int_equal(t->args[0]->elem, SIG_VAR);
	assert_int_equal(t->args[0]->number, 0);
	sig_type_free(t);
	il_body_free(&b);
	img_free(img);
}

/* F# Release: the synchronized member ends in `tail. callvirt`; the prefix goes. */
static void test_sync_tail_prefix_dropped(void **state)
{
	struct img *img = load(FS_RELEASE);
	uint32_t add = method_row(img, "Ledger", "Add");
	struct il_body b;

	(void)state;
	body(img, add, &b);
	assert_int_equal(count_op(&b, IL_TAIL), 1);
	il_body_free(&b);
	weave(img);
	body(img, add, &b);
	check_wrapped(img, &b, 0);
	assert_int_equal(count_op(&b, IL_TAIL), 0);
	il_body_free(&b);
	img_free(img);
}

/* An assembly whose only locks are synchronized methods is woven: one site each. */
static void test_sync_only_assembly(void **state)
{
	struct weave_opts o = { .threshold_ms = 1, .output = "stderr" };
	struct img *img = load(SYNC_ONLY);
	enum weave_outcome outcome;
	long n;

	(void)state;
	ok(weave_image(img, &o, &outcome, &n, NULL));
	assert_int_equal(outcome, WEAVE_WOVEN);
	assert_int_equal(n, 3);
	img_free(img);
}

/* ---- Synchronized bodies built here ---- */

/* Give MethodDef `row` the body e assembles (it must return void) and the Synchronized flag. */
static void set_sync_body(struct img *img, uint32_t row, struct em *e)
{
	struct il_body b;

	assert_int_equal(em_finish(e, &b), 0);
	em_free(e);
	ok(img_encode_body(img, row, &b));
	il_body_free(&b);
	md_set(&img->md, MD_METHODDEF, row, MD_METHODDEF_IMPLFLAGS,
	       md_get(&img->md, MD_METHODDEF, row, MD_METHODDEF_IMPLFLAGS) | IMPL_SYNCHRONIZED);
}

/* A catch handler that ends the body (its end is "the end of the body"):
 * after wrapping, it ends where the new finally starts, inside the try. */
static void test_sync_clause_at_end(void **state)
{
	struct img *img = load(SYNC_ONLY);
	uint32_t row = method_row(img, "SyncOnly", "Bump"), object = 0;
	uint32_t ret = 0, try_start, handler, n;
	struct em e;
	struct il_body b;

	(void)state;
	for (uint32_t r = 1; r <= md_rows(&img->md, MD_TYPEREF) && !object; r++)
		if (strcmp(str(&img->md, MD_TYPEREF, r, MD_TYPEREF_NAME), "Object") == 0)
			object = md_token(MD_TYPEREF, r);
	em_init(&e);
	ret = em_label(&e);
	try_start = em_label(&e);
	handler = em_label(&e);
	n = em_label(&e);
	em_br(&e, IL_BR, try_start);
	em_mark(&e, ret);
	em_op(&e, IL_RET);
	em_mark(&e, try_start);
	em_op(&e, IL_NOP);
	em_br(&e, IL_LEAVE, ret);
	em_mark(&e, handler);
	em_op(&e, IL_POP);
	em_op(&e, IL_RETHROW);
	em_mark(&e, n);
	em_eh(&e, &(struct em_eh){ .kind = IL_EH_CATCH, .try_start = try_start, .try_end = handler, .handler_start = handler,
				     .handler_end = n, .class_token = object });
	set_sync_body(img, row, &e);
	weave(img);
	body(img, row, &b);
	check_wrapped(img, &b, 0);
	assert_int_equal(b.neh, 2);
	il_body_free(&b);
	img_free(img);
}

/* jmp cannot leave the try block the timing needs (III.3.37). */
static void test_sync_jmp_refused(void **state)
{
	struct weave_opts o = { .threshold_ms = 1, .output = "stderr" };
	struct img *img = load(SYNC_ONLY);
	uint32_t row = method_row(img, "SyncOnly", "Bump");
	enum weave_outcome outcome;
	struct em e;
	long n;

	(void)state;
	em_init(&e);
	em_tok(&e, IL_JMP, md_token(MD_METHODDEF, row));
	set_sync_body(img, row, &e);
	expect_error(weave_image(img, &o, &outcome, &n, NULL), LT_E_WEAVE);
	assert_non_null(strstr(lt_error_last()->msg, "jmp"));
	img_free(img);
}

/* An instance method of a value type cannot be synchronized (there is no
 * object to lock): not listed.  A static method of one locks its Type: listed. */
static void test_sync_value_type(void **state)
{
	struct img *img = load(CS_RELEASE);
	uint32_t add = method_row(img, "Counter", "Add"), cctor = method_row(img, "Counter", ".cctor");
	struct weave_names names;
	struct weave_sites sites;
	int listed_add = 0, listed_cctor = 0;

	(void)state;
	assert_int_equal(md_get(&img->md, MD_METHODDEF, cctor, MD_METHODDEF_FLAGS) & METHOD_STATIC, METHOD_STATIC);
	md_set(&img->md, MD_METHODDEF, add, MD_METHODDEF_IMPLFLAGS, IMPL_SYNCHRONIZED);
	md_set(&img->md, MD_METHODDEF, cctor, MD_METHODDEF_IMPLFLAGS, IMPL_SYNCHRONIZED);
	assert_int_equal(weave_names_init(&names, img), 0);
	assert_int_equal(weave_names_is_valuetype(&names, weave_names_owner(&names, add)), 1);
	assert_int_equal(weave_sites_find(&names, &sites), 0);
	for (size_t i = 0; i < sites.n; i++) {
		listed_add += sites.calls[i].methoddef == add && sites.calls[i].kind == WEAVE_SYNCHRONIZED;
		listed_cctor += sites.calls[i].methoddef == cctor && sites.calls[i].kind == WEAVE_SYNCHRONIZED;
	}
	assert_int_equal(listed_add, 0);
	assert_int_equal(listed_cctor, 1);
	weave_sites_free(&sites);
	weave_names_free(&names);
	img_free(img);
}

/* ---- Acquiring wrappers: the fast path ---- */

/* The _Timed part of wrapper w (named "<w's name>_Timed"), decoded. */
static void timed_body(const struct img *img, uint32_t w, struct il_body *b)
{
	char name[96];

	snprintf(name, sizeof name, "%s_Timed", str(&img->md, MD_METHODDEF, md_token_row(w), MD_METHODDEF_NAME));
	body(img, method_row(img, WEAVE_STUB_TYPE, name), b);
}

/* A wrapper of kind `kind` for a new MemberRef name/sig on System.Threading.Monitor or Lock. */
struct wrapper_case {
	const char *type, *name;
	uint8_t sig[8];
	uint8_t len;
	enum weave_kind kind;
	int callvirt;
	unsigned stamps;    /* GetTimestamp calls in the _Timed part */
	unsigned try_twin;  /* calls to a TryEnter twin there (for an int32 timeout: the call itself, with 0) */
	int span;           /* the signature ends in a TimeSpan, a TypeRef the test adds */
};

static const struct wrapper_case wrapper_cases[] = {
	/* blocking Enter: a stamp, then TryEnter (taken: done), else Enter and a stamp */
	{ "Monitor", "Enter", { SIG_CONV_DEFAULT, 1, SIG_VOID, SIG_OBJECT }, 4, WEAVE_MONITOR_ENTER, 0, 2, 1, 0 },
	{ "Monitor", "Enter", { SIG_CONV_DEFAULT, 2, SIG_VOID, SIG_OBJECT, SIG_BYREF, SIG_BOOLEAN }, 6,
	  WEAVE_MONITOR_ENTER_TAKEN, 0, 2, 1, 0 },
	{ "Lock", "Enter", { SIG_HASTHIS, 0, SIG_VOID }, 3, WEAVE_LOCK_ENTER, 1, 2, 1, 0 },
	/* TryEnter without a timeout cannot wait: one stamp after it */
	{ "Monitor", "TryEnter", { SIG_CONV_DEFAULT, 1, SIG_BOOLEAN, SIG_OBJECT }, 4, WEAVE_MONITOR_TRYENTER, 0, 1, 0, 0 },
	{ "Monitor", "TryEnter", { SIG_CONV_DEFAULT, 2, SIG_VOID, SIG_OBJECT, SIG_BYREF, SIG_BOOLEAN }, 6,
	  WEAVE_MONITOR_TRYENTER, 0, 1, 0, 0 },
	{ "Lock", "TryEnter", { SIG_HASTHIS, 0, SIG_BOOLEAN }, 3, WEAVE_LOCK_TRYENTER, 1, 1, 0, 0 },
	/* an int32 timeout: a stamp, the same call with 0 first, then the call itself, timed, past a
	 * failed try and where the timeout is 0 or invalid: three stamps, the call three times */
	{ "Monitor", "TryEnter", { SIG_CONV_DEFAULT, 2, SIG_BOOLEAN, SIG_OBJECT, SIG_I4 }, 5, WEAVE_MONITOR_TRYENTER, 0, 3,
	  2, 0 },
	{ "Monitor", "TryEnter", { SIG_CONV_DEFAULT, 3, SIG_VOID, SIG_OBJECT, SIG_I4, SIG_BYREF, SIG_BOOLEAN }, 7,
	  WEAVE_MONITOR_TRYENTER, 0, 3, 2, 0 },
	{ "Lock", "TryEnter", { SIG_HASTHIS, 1, SIG_BOOLEAN, SIG_I4 }, 4, WEAVE_LOCK_TRYENTER, 1, 3, 2, 0 },
	/* a TimeSpan timeout: the same, with the int32 twin and 0, when TotalMilliseconds is valid */
	{ "Monitor", "TryEnter", { SIG_CONV_DEFAULT, 2, SIG_BOOLEAN, SIG_OBJECT, SIG_VALUETYPE }, 5,
	  WEAVE_MONITOR_TRYENTER, 0, 3, 2, 1 },
	{ "Lock", "TryEnter", { SIG_HASTHIS, 1, SIG_BOOLEAN, SIG_VALUETYPE }, 4, WEAVE_LOCK_TRYENTER, 1, 3, 2, 1 },
	/* a valuetype other than TimeSpan: timed around the call only */
	{ "Lock", "TryEnter", { SIG_HASTHIS, 1, SIG_BOOLEAN, SIG_VALUETYPE, 0x11 }, 5, WEAVE_LOCK_TRYENTER, 1, 2, 0, 0 },
};

static void test_wrapper_timing(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof wrapper_cases / sizeof wrapper_cases[0]; i++) {
		const struct wrapper_case *c = &wrapper_cases[i];
		struct img *img = load(NET_REF);
		struct md_image *md = &img->md;
		uint32_t runtime = md_token(MD_ASSEMBLYREF, assemblyref_row(md, "System.Runtime"));
		uint32_t type = add_typeref(md, runtime, "System.Threading", c->type), w, cls;
		uint8_t sig[sizeof c->sig + 2];
		uint32_t len = c->len, m;
		memcpy(sig, c->sig, c->len);
		if (c->span) { /* II.23.2.8: TypeDefOrRef coded, compressed (II.23.2): two bytes below 0x4000 */
			uint32_t coded = md_token_row(add_typeref(md, runtime, "System", "TimeSpan")) << 2 | 1;
			assert_true(coded < 0x4000);
			sig[len++] = (uint8_t)(0x80 | coded >> 8);
			sig[len++] = (uint8_t)(coded & 0xFF);
		}
		m = add_memberref(md, type, c->name, sig, len);
		struct weave_stubs *h;
		struct il_body front, timed;

		ok(weave_stubs_begin(img, &default_opts, no_sites(img), &h));
		ok(weave_stubs_for_call(h, m, c->kind, c->callvirt, 0, &w));
		ok(weave_stubs_end(h));
		/* The front: the Disabled test, the original, and a call of the _Timed part. */
		body(img, md_token_row(w), &front);
		assert_int_equal(front.ins[0].op, IL_LDSFLD);
		assert_int_equal(calls_to(img, &front, c->name), 1);
		assert_int_equal(calls_to(img, &front, "Ticks"), 0);
		/* inlined at every site, so that Disabled folds it away */
		assert_int_equal(md_get(md, MD_METHODDEF, md_token_row(w), MD_METHODDEF_IMPLFLAGS), 0x0100);
		timed_body(img, w, &timed);
		assert_int_equal(calls_to(img, &timed, "get_TotalMilliseconds"), c->span ? 3 : 0);
		if (calls_to(img, &timed, "Ticks") != c->stamps || calls_to(img, &timed, "TryEnter") != c->try_twin +
		    (strcmp(c->name, "TryEnter") == 0))
			fail_msg("case %zu: %u stamps, %u TryEnter calls", i, calls_to(img, &timed, "Ticks"),
				 calls_to(img, &timed, "TryEnter"));
		/* A try with an int32 timeout (the call made three times) tries with 0 first: its first call
		 * gets ldc.i4.0 for the timeout, the last argument but a `ref bool taken`. */
		for (uint32_t k = 2; k < timed.n && c->try_twin == 2; k++) {
			if ((timed.ins[k].op == IL_CALL || timed.ins[k].op == IL_CALLVIRT) &&
			    strcmp(callee_name(img, &timed.ins[k]), "TryEnter") == 0) {
				assert_int_equal(timed.ins[k - 1 - (!c->span && c->sig[c->len - 2] == SIG_BYREF)].op, IL_LDC_I4_0);
				break;
			}
		}
		/* The twin is a MemberRef on the callee's own TypeRef. */
		for (uint32_t k = 0; k < timed.n && c->try_twin; k++) {
			if ((timed.ins[k].op != IL_CALL && timed.ins[k].op != IL_CALLVIRT) ||
			    strcmp(callee_name(img, &timed.ins[k]), "TryEnter"))
				continue;
			assert_int_equal(timed.ins[k].op, c->callvirt ? IL_CALLVIRT : IL_CALL);
			assert_int_equal(md_coded_decode(MD_CI_MEMBERREFPARENT, md_get(md, MD_MEMBERREF,
				md_token_row(timed.ins[k].arg.token), MD_MEMBERREF_CLASS), &cls), 0);
			assert_int_equal(cls, type);
		}
		il_body_free(&front);
		il_body_free(&timed);
		img_free(img);
	}
}

/* Lock.EnterScope: its Scope comes only from EnterScope, so the fast path
 * takes the lock with TryEnter, re-enters with EnterScope for the Scope and
 * releases the extra hold with Exit; one stamp before TryEnter serves both
 * paths, the slow path adds one after EnterScope. */
static void test_wrapper_enter_scope_reenters(void **state)
{
	struct img *img = load(NET_REF);
	struct md_image *md = &img->md;
	uint32_t runtime = md_token(MD_ASSEMBLYREF, assemblyref_row(md, "System.Runtime"));
	uint32_t lock = add_typeref(md, runtime, "System.Threading", "Lock"), scope = add_typeref(md, lock, "", "Scope");
	struct lt_buf sig = LT_BUF_INIT;
	struct weave_stubs *h;
	struct il_body timed;
	uint32_t m, w;

	(void)state;
	assert_int_equal(lt_buf_u8(&sig, SIG_HASTHIS), 0);
	assert_int_equal(lt_buf_u8(&sig, 0), 0);
	assert_int_equal(lt_buf_u8(&sig, SIG_VALUETYPE), 0);
	assert_int_equal(sig_token_encode(&sig, scope), 0);
	m = add_memberref(md, lock, "EnterScope", sig.data, sig.len);
	lt_buf_free(&sig);
	ok(weave_stubs_begin(img, &default_opts, no_sites(img), &h));
	ok(weave_stubs_for_call(h, m, WEAVE_LOCK_ENTERSCOPE, 1, 0, &w));
	ok(weave_stubs_end(h));
	timed_body(img, w, &timed);
	assert_int_equal(calls_to(img, &timed, "TryEnter"), 1);
	assert_int_equal(calls_to(img, &timed, "EnterScope"), 2);
	assert_int_equal(calls_to(img, &timed, "Exit"), 1);
	assert_int_equal(calls_to(img, &timed, "Ticks"), 2);
	assert_int_equal(count_op(&timed, IL_CALLVIRT), 4);
	il_body_free(&timed);
	img_free(img);
}

/* A core library's own Monitor (MethodDef callees): the twin is its
 * TryEnter MethodDef; without one, the Enter wrapper measures the wait
 * around Enter alone. */
static void test_wrapper_corlib_twin(void **state)
{
	static const uint8_t enter_sig[] = { SIG_CONV_DEFAULT, 1, SIG_VOID, SIG_OBJECT };
	(void)state;
	for (int renamed = 0; renamed < 2; renamed++) {
		struct img *img = load(MONO_MSCORLIB);
		struct md_image *md = &img->md;
		uint32_t monitor = 0, enter = 0, w, idx;
		struct weave_stubs *h;
		struct il_body timed, clock;
		const uint8_t *p;
		uint32_t len;

		for (uint32_t t = 1; t <= md_rows(md, MD_TYPEDEF) && !monitor; t++)
			if (strcmp(str(md, MD_TYPEDEF, t, MD_TYPEDEF_NAME), "Monitor") == 0)
				monitor = t;
		/* The merged run-time calls Monitor.TryEnter itself (LineWriter.TryDrain): merged first, then
		 * its TryEnter renamed, the wrapper finds no twin by name. */
		ok(weave_stubs_begin(img, &default_opts, no_sites(img), &h));
		assert_int_equal(md_add_string(md, "TryEnter2", &idx), 0);
		for (uint32_t r = md_get(md, MD_TYPEDEF, monitor, MD_TYPEDEF_METHODLIST);
		     r < md_get(md, MD_TYPEDEF, monitor + 1, MD_TYPEDEF_METHODLIST); r++) {
			assert_int_equal(md_blob(md, md_get(md, MD_METHODDEF, r, MD_METHODDEF_SIGNATURE), &p, &len), 0);
			if (strcmp(str(md, MD_METHODDEF, r, MD_METHODDEF_NAME), "Enter") == 0 && len == sizeof enter_sig &&
			    memcmp(p, enter_sig, len) == 0)
				enter = md_token(MD_METHODDEF, r);
			if (renamed && strcmp(str(md, MD_METHODDEF, r, MD_METHODDEF_NAME), "TryEnter") == 0)
				md_set(md, MD_METHODDEF, r, MD_METHODDEF_NAME, idx);
		}
		assert_int_not_equal(enter, 0);
		ok(weave_stubs_for_call(h, enter, WEAVE_MONITOR_ENTER, 0, 0, &w));
		ok(weave_stubs_end(h));
		timed_body(img, w, &timed);
		/* the merged clock, whose body is mscorlib's own: DateTime.GetSystemTimeAsFileTime */
		assert_int_equal(calls_to(img, &timed, "Ticks"), 2);
		body(img, find_method(md, "<LockTime>Clock", "Ticks"), &clock);
		assert_int_equal(calls_to(img, &clock, "GetSystemTimeAsFileTime"), 1);
		il_body_free(&clock);
		assert_int_equal(calls_to(img, &timed, "TryEnter"), renamed ? 0 : 1);
		il_body_free(&timed);
		img_free(img);
	}
}

/* The synchronized-method pair is added once. */
static void test_sync_pair_memoized(void **state)
{
	struct img *img = load(NET_REF);
	struct weave_sync_calls a, b;
	struct weave_stubs *h;

	(void)state;
	ok(weave_stubs_begin(img, &default_opts, no_sites(img), &h));
	ok(weave_stubs_sync(h, &a));
	ok(weave_stubs_sync(h, &b));
	ok(weave_stubs_end(h));
	assert_int_equal(a.enter, b.enter);
	assert_int_equal(a.leave, b.leave);
	assert_string_equal(str(&img->md, MD_METHODDEF, md_token_row(a.enter), MD_METHODDEF_NAME), "Synchronized_Enter");
	assert_string_equal(str(&img->md, MD_METHODDEF, md_token_row(a.leave), MD_METHODDEF_NAME), "Synchronized_Exit");
	assert_string_equal(str(&img->md, MD_METHODDEF, md_token_row(a.type_of), MD_METHODDEF_NAME), "TypeOf");
	img_free(img);
}

/* ---- The woven module's Mvid ---- */

/* A new Mvid, derived from the old one and the baked options: the same
 * input woven twice gets the same one; other options, another. */
static void test_mvid_renewed(void **state)
{
	struct weave_opts other = { .threshold_ms = 5, .output = "stdout" };
	struct img *a = load(SYNC_ONLY), *b = load(SYNC_ONLY), *c = load(SYNC_ONLY);
	const uint8_t *old, *ga, *gb, *gc;
	enum weave_outcome outcome;
	long n;

	(void)state;
	assert_int_equal(md_guid(&a->md, md_get(&a->md, MD_MODULE, 1, MD_MODULE_MVID), &old), 0);
	weave(a);
	weave(b);
	ok(weave_image(c, &other, &outcome, &n, NULL));
	assert_int_equal(md_guid(&a->md, md_get(&a->md, MD_MODULE, 1, MD_MODULE_MVID), &ga), 0);
	assert_int_equal(md_guid(&b->md, md_get(&b->md, MD_MODULE, 1, MD_MODULE_MVID), &gb), 0);
	assert_int_equal(md_guid(&c->md, md_get(&c->md, MD_MODULE, 1, MD_MODULE_MVID), &gc), 0);
	assert_memory_not_equal(ga, old, 16);
	assert_memory_equal(ga, gb, 16);
	assert_memory_not_equal(ga, gc, 16);
	/* RFC 4122 version 5 and variant bits, in the #GUID byte order */
	assert_int_equal(ga[7] >> 4, 5);
	assert_int_equal(ga[8] >> 6, 2);
	img_free(a);
	img_free(b);
	img_free(c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sync_csharp_shapes),
		cmocka_unit_test(test_sync_generic_type),
		cmocka_unit_test(test_sync_tail_prefix_dropped),
		cmocka_unit_test(test_sync_only_assembly),
		cmocka_unit_test(test_sync_clause_at_end),
		cmocka_unit_test(test_sync_jmp_refused),
		cmocka_unit_test(test_sync_value_type),
		cmocka_unit_test(test_wrapper_timing),
		cmocka_unit_test(test_wrapper_enter_scope_reenters),
		cmocka_unit_test(test_wrapper_corlib_twin),
		cmocka_unit_test(test_sync_pair_memoized),
		cmocka_unit_test(test_mvid_renewed),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
