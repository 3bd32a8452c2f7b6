/* test_weave_stubs.c - unit tests of the stub type <LockTime>: the run-time merged, the options baked, the call-site stubs, on real assemblies. */
#include <math.h>

#include "weave_fixture.h"

/* The ldstr of a baked default's body (`ldstr "..."; ret`) as UTF-8 into buf. */
static void baked_string(struct img *img, const char *method, char *buf, size_t n)
{
	uint32_t row = find_method(&img->md, "<LockTime>Baked", method);
	const uint8_t *b;
	size_t len;
	struct il_body body;

	assert_int_not_equal(row, 0);
	assert_int_equal(img_method_body(img, row, &b, &len), 0);
	assert_int_equal(il_decode(b, len, &body), 0);
	assert_int_equal(body.n, 2);
	assert_int_equal(body.ins[0].op, IL_LDSTR);
	assert_int_equal(img_string_of_token(img, body.ins[0].arg.token, buf, n), 0);
	il_body_free(&body);
}

/* The n-th (0-based) MemberRef `name` on a TypeRef named `type`, or 0. */
static uint32_t find_memberref(const struct md_image *md, const char *type, const char *name, unsigned nth)
{
	for (uint32_t r = 1; r <= md_rows(md, MD_MEMBERREF); r++) {
		uint32_t cls;
		assert_int_equal(md_coded_decode(MD_CI_MEMBERREFPARENT, md_get(md, MD_MEMBERREF, r, MD_MEMBERREF_CLASS), &cls), 0);
		if (md_token_table(cls) != MD_TYPEREF || strcmp(str(md, MD_TYPEREF, md_token_row(cls), MD_TYPEREF_NAME), type) ||
		    strcmp(str(md, MD_MEMBERREF, r, MD_MEMBERREF_NAME), name))
			continue;
		if (nth-- == 0)
			return md_token(MD_MEMBERREF, r);
	}
	return 0;
}

/* The decoded signature of MethodDef `tok`. */
static struct sig_method *methoddef_sig(const struct md_image *md, uint32_t tok)
{
	const uint8_t *p;
	uint32_t len;
	struct sig_method *m;

	assert_int_equal(md_blob(md, md_get(md, MD_METHODDEF, md_token_row(tok), MD_METHODDEF_SIGNATURE), &p, &len), 0);
	assert_int_equal(sig_method_decode(p, len, &m), 0);
	return m;
}

/* Write the image, load the result, and check the stub type: the last TypeDef,
 * named <LockTime>, after the merged run-time (<LockTime>Api), extending
 * what Api extends, with no fields and `nmethods` methods, each with a body
 * il_decode reads.  Returns the reloaded image (free with img_free). */
static struct img *write_and_check(struct img *img, uint32_t nmethods)
{
	struct lt_buf out = LT_BUF_INIT;
	struct img *again;
	struct md_image *md;
	uint32_t t, methods, api = 0;

	assert_int_equal(img_write(img, &out), 0);
	if (img_load(&again, out.data, out.len) < 0)
		fail_msg("reload: %s", lt_error_last()->msg);
	md = &again->md;
	t = md_rows(md, MD_TYPEDEF);
	assert_string_equal(str(md, MD_TYPEDEF, t, MD_TYPEDEF_NAME), WEAVE_STUB_TYPE);
	assert_int_equal(md_get(md, MD_TYPEDEF, t, MD_TYPEDEF_FLAGS), 0x00100180);
	for (uint32_t r = 1; r < t; r++)
		api = strcmp(str(md, MD_TYPEDEF, r, MD_TYPEDEF_NAME), "<LockTime>Api") == 0 ? r : api;
	assert_int_not_equal(api, 0);
	assert_int_equal(md_get(md, MD_TYPEDEF, t, MD_TYPEDEF_EXTENDS), md_get(md, MD_TYPEDEF, api, MD_TYPEDEF_EXTENDS));
	assert_int_equal(md_get(md, MD_TYPEDEF, t, MD_TYPEDEF_FIELDLIST), md_rows(md, MD_FIELD) + 1);
	methods = md_get(md, MD_TYPEDEF, t, MD_TYPEDEF_METHODLIST);
	assert_int_equal(md_rows(md, MD_METHODDEF) + 1 - methods, nmethods);
	for (uint32_t r = methods; r <= md_rows(md, MD_METHODDEF); r++) {
		const uint8_t *b;
		size_t len;
		struct il_body body;
		assert_int_not_equal(md_get(md, MD_METHODDEF, r, MD_METHODDEF_RVA), 0);
		assert_int_equal(md_get(md, MD_METHODDEF, r, MD_METHODDEF_PARAMLIST), md_rows(md, MD_PARAM) + 1);
		assert_int_equal(img_method_body(again, r, &b, &len), 0);
		assert_non_null(b);
		if (il_decode(b, len, &body) < 0)
			fail_msg("%s: %s", str(md, MD_METHODDEF, r, MD_METHODDEF_NAME), lt_error_last()->msg);
		il_body_free(&body);
	}
	return again;
}

/* ---- The stub type and its wrappers ---- */

/* mono's System.dll: Monitor wrappers, memoized per (callee, callvirt). */
static void test_stubs_mono_system(void **state)
{
	struct img *img = load(MONO_SYSTEM), *again;
	struct md_image *md = &img->md;
	uint32_t enter = find_memberref(md, "Monitor", "Enter", 0), exit_ = find_memberref(md, "Monitor", "Exit", 0);
	uint32_t wait = find_memberref(md, "Monitor", "Wait", 0), w1, w2, w3, w4;
	struct weave_stubs *h;
	struct sig_method *s;

	(void)state;
	assert_int_not_equal(enter, 0);
	assert_int_not_equal(exit_, 0);
	assert_int_not_equal(wait, 0);
	ok(weave_stubs_begin(img, &default_opts, no_sites(img), &h));
	ok(weave_stubs_for_call(h, enter, WEAVE_MONITOR_ENTER_TAKEN, 0, 0, &w1));
	ok(weave_stubs_for_call(h, exit_, WEAVE_MONITOR_EXIT, 0, 0, &w2));
	ok(weave_stubs_for_call(h, wait, WEAVE_MONITOR_WAIT, 0, 0, &w3));
	ok(weave_stubs_for_call(h, enter, WEAVE_MONITOR_ENTER_TAKEN, 0, 0, &w4));
	assert_int_equal(w4, w1);
	assert_int_equal(md_token_table(w1), MD_METHODDEF);
	assert_string_equal(str(md, MD_METHODDEF, md_token_row(w1), MD_METHODDEF_NAME), "Monitor_Enter_Taken");
	/* (object, bool&, int32 site) */
	s = methoddef_sig(md, w1);
	assert_int_equal(s->conv, SIG_CONV_DEFAULT);
	assert_int_equal(s->nparams, 3);
	assert_int_equal(s->params[0]->elem, SIG_OBJECT);
	assert_int_equal(s->params[1]->elem, SIG_BYREF);
	assert_int_equal(s->params[2]->elem, SIG_I4);
	sig_method_free(s);
	s = methoddef_sig(md, w2);
	assert_int_equal(s->nparams, 1);
	sig_method_free(s);
	ok(weave_stubs_end(h));
	/* Enter: the inlinable front and its _Timed part; Exit; Wait. */
	again = write_and_check(img, 4);
	img_free(again);
	img_free(img);
}

/* Lock, Lock.Scope and the Monitor overloads on a net10 assembly, with
 * MemberRefs built here the way Roslyn writes them. */
static void test_stubs_lock_wrappers(void **state)
{
	struct img *img = load(NET_REF), *again;
	struct md_image *md = &img->md;
	uint32_t runtime = md_token(MD_ASSEMBLYREF, assemblyref_row(md, "System.Runtime"));
	uint32_t lock = add_typeref(md, runtime, "System.Threading", "Lock");
	uint32_t scope = add_typeref(md, lock, "", "Scope");
	uint32_t monitor = add_typeref(md, runtime, "System.Threading", "Monitor");
	struct lt_buf enter_scope = LT_BUF_INIT;
	static const uint8_t dispose[] = { SIG_HASTHIS, 0, SIG_VOID };
	static const uint8_t try_enter_int[] = { SIG_HASTHIS, 1, SIG_BOOLEAN, SIG_I4 };
	static const uint8_t monitor_try_ref[] = { SIG_CONV_DEFAULT, 3, SIG_VOID, SIG_OBJECT, SIG_I4, SIG_BYREF, SIG_BOOLEAN };
	static const uint8_t monitor_wait[] = { SIG_CONV_DEFAULT, 2, SIG_BOOLEAN, SIG_OBJECT, SIG_I4 };
	uint32_t m_scope, m_dispose, m_try, m_exit, m_mtry, m_wait, w[7];
	struct weave_stubs *h;
	struct sig_method *s;

	(void)state;
	assert_int_equal(lt_buf_u8(&enter_scope, SIG_HASTHIS), 0);
	assert_int_equal(lt_buf_u8(&enter_scope, 0), 0);
	assert_int_equal(lt_buf_u8(&enter_scope, SIG_VALUETYPE), 0);
	assert_int_equal(sig_token_encode(&enter_scope, scope), 0);
	m_scope = add_memberref(md, lock, "EnterScope", enter_scope.data, enter_scope.len);
	lt_buf_free(&enter_scope);
	m_dispose = add_memberref(md, scope, "Dispose", dispose, sizeof dispose);
	m_try = add_memberref(md, lock, "TryEnter", try_enter_int, sizeof try_enter_int);
	m_exit = add_memberref(md, lock, "Exit", dispose, sizeof dispose);
	m_mtry = add_memberref(md, monitor, "TryEnter", monitor_try_ref, sizeof monitor_try_ref);
	m_wait = add_memberref(md, monitor, "Wait", monitor_wait, sizeof monitor_wait);
	ok(weave_stubs_begin(img, &default_opts, no_sites(img), &h));
	ok(weave_stubs_for_call(h, m_scope, WEAVE_LOCK_ENTERSCOPE, 1, 0, &w[0]));
	ok(weave_stubs_for_call(h, m_dispose, WEAVE_SCOPE_DISPOSE, 0, 0, &w[1]));
	ok(weave_stubs_for_call(h, m_try, WEAVE_LOCK_TRYENTER, 1, 0, &w[2]));
	ok(weave_stubs_for_call(h, m_exit, WEAVE_LOCK_EXIT, 1, 0, &w[3]));
	ok(weave_stubs_for_call(h, m_mtry, WEAVE_MONITOR_TRYENTER, 0, 0, &w[4]));
	ok(weave_stubs_for_call(h, m_wait, WEAVE_MONITOR_WAIT, 0, 0, &w[5]));
	/* the same callee through call and callvirt: two wrappers */
	ok(weave_stubs_for_call(h, m_try, WEAVE_LOCK_TRYENTER, 0, 0, &w[6]));
	assert_int_not_equal(w[6], w[2]);
	assert_string_equal(str(md, MD_METHODDEF, md_token_row(w[6]), MD_METHODDEF_NAME), "Lock_TryEnter_2");
	/* EnterScope stub: valuetype Scope (class Lock, int32 site) */
	s = methoddef_sig(md, w[0]);
	assert_int_equal(s->ret->elem, SIG_VALUETYPE);
	assert_int_equal(s->ret->token, scope);
	assert_int_equal(s->nparams, 2);
	assert_int_equal(s->params[0]->elem, SIG_CLASS);
	assert_int_equal(s->params[0]->token, lock);
	sig_method_free(s);
	/* Dispose wrapper: void (valuetype Scope&) */
	s = methoddef_sig(md, w[1]);
	assert_int_equal(s->nparams, 1);
	assert_int_equal(s->params[0]->elem, SIG_BYREF);
	assert_int_equal(s->params[0]->inner->elem, SIG_VALUETYPE);
	assert_int_equal(s->params[0]->inner->token, scope);
	sig_method_free(s);
	ok(weave_stubs_end(h));
	/* Four acquiring stubs (a front and a _Timed part each), three others. */
	again = write_and_check(img, 4 * 2 + 3);
	img_free(again);
	img_free(img);
}

/* The Lock.Scope.Dispose stub reads the time, calls the original, then the run-time's ReleasedScope
 * with that time: the hold ends before the release, not after what ran between. */
static void test_stub_scope_dispose(void **state)
{
	struct img *img = load(NET_REF);
	struct md_image *md = &img->md;
	uint32_t runtime = md_token(MD_ASSEMBLYREF, assemblyref_row(md, "System.Runtime"));
	uint32_t lock = add_typeref(md, runtime, "System.Threading", "Lock");
	uint32_t scope = add_typeref(md, lock, "", "Scope");
	static const uint8_t dispose[] = { SIG_HASTHIS, 0, SIG_VOID };
	uint32_t m = add_memberref(md, scope, "Dispose", dispose, sizeof dispose), w, released, ticks, original = 0, after = 0;
	uint32_t read = 0;
	struct weave_stubs *h;
	const uint8_t *b;
	size_t len;
	struct il_body body;

	(void)state;
	ok(weave_stubs_begin(img, &default_opts, no_sites(img), &h));
	ok(weave_stubs_for_call(h, m, WEAVE_SCOPE_DISPOSE, 0, 0, &w));
	ok(weave_stubs_end(h));
	released = find_method(md, "<LockTime>Api", "ReleasedScope");
	ticks = find_method(md, "<LockTime>Clock", "Ticks");
	assert_int_not_equal(released, 0);
	assert_int_not_equal(ticks, 0);
	assert_int_equal(img_method_body(img, md_token_row(w), &b, &len), 0);
	assert_int_equal(il_decode(b, len, &body), 0);
	for (uint32_t i = 0; i < body.n; i++) {
		if (body.ins[i].op == IL_CALL && body.ins[i].arg.token == md_token(MD_METHODDEF, ticks) && !original)
			read++;
		if (body.ins[i].op == IL_CALL && body.ins[i].arg.token == m)
			original = i + 1;
		if (body.ins[i].op == IL_CALL && body.ins[i].arg.token == md_token(MD_METHODDEF, released) && original)
			after++;
	}
	il_body_free(&body);
	assert_int_equal(read, 1);
	assert_int_not_equal(original, 0);
	assert_int_equal(after, 1);
	img_free(img);
}

/* The index in `body` of the instruction of id `id` (body->n for IL_ID_END or none). */
static uint32_t index_of_id(const struct il_body *body, uint32_t id)
{
	for (uint32_t i = 0; i < body->n; i++)
		if (body->ins[i].id == id)
			return i;
	return body->n;
}

/* The Monitor.Wait stub calls the original inside a try whose finally calls Api.Waited: a Wait that
 * throws (Thread.Interrupt) ends the excluded interval as one that returns. */
static void test_stub_wait_finally(void **state)
{
	struct img *img = load(NET_REF);
	struct md_image *md = &img->md;
	uint32_t runtime = md_token(MD_ASSEMBLYREF, assemblyref_row(md, "System.Runtime"));
	uint32_t monitor = add_typeref(md, runtime, "System.Threading", "Monitor");
	static const uint8_t monitor_wait[] = { SIG_CONV_DEFAULT, 2, SIG_BOOLEAN, SIG_OBJECT, SIG_I4 };
	uint32_t m = add_memberref(md, monitor, "Wait", monitor_wait, sizeof monitor_wait), w, waited;
	uint32_t original = UINT32_MAX, in_finally = 0, finallies = 0;
	struct weave_stubs *h;
	const uint8_t *b;
	size_t len;
	struct il_body body;

	(void)state;
	ok(weave_stubs_begin(img, &default_opts, no_sites(img), &h));
	ok(weave_stubs_for_call(h, m, WEAVE_MONITOR_WAIT, 0, 0, &w));
	ok(weave_stubs_end(h));
	waited = find_method(md, "<LockTime>Api", "Waited");
	assert_int_not_equal(waited, 0);
	assert_int_equal(img_method_body(img, md_token_row(w), &b, &len), 0);
	assert_int_equal(il_decode(b, len, &body), 0);
	for (uint32_t i = 0; i < body.n; i++)
		if (body.ins[i].op == IL_CALL && body.ins[i].arg.token == m && i > 3) /* past the Off front's call */
			original = i;
	assert_int_not_equal(original, UINT32_MAX);
	for (uint32_t k = 0; k < body.neh; k++) {
		const struct il_eh *c = &body.eh[k];
		uint32_t ts = index_of_id(&body, c->try_start), te = index_of_id(&body, c->try_end);
		uint32_t hs = index_of_id(&body, c->handler_start), he = index_of_id(&body, c->handler_end);
		if (c->kind != IL_EH_FINALLY)
			continue;
		finallies++;
		assert_true(ts <= original && original < te);
		for (uint32_t i = hs; i < he; i++)
			in_finally += body.ins[i].op == IL_CALL && body.ins[i].arg.token == md_token(MD_METHODDEF, waited);
	}
	il_body_free(&body);
	assert_int_equal(finallies, 1);
	assert_int_equal(in_finally, 1);
	img_free(img);
}

/* How many calls of MethodDef `callee` the body of MethodDef `row` makes. */
static unsigned calls_of(struct img *img, uint32_t row, uint32_t callee)
{
	const uint8_t *b;
	size_t len;
	struct il_body body;
	unsigned n = 0;

	assert_int_equal(img_method_body(img, row, &b, &len), 0);
	assert_int_equal(il_decode(b, len, &body), 0);
	for (uint32_t i = 0; i < body.n; i++)
		n += body.ins[i].op == IL_CALL && body.ins[i].arg.token == md_token(MD_METHODDEF, callee);
	il_body_free(&body);
	return n;
}

/* SemaphoreSlim.Wait() and Wait(int32) in an async MoveNext: stubs of their
 * own, "<name>_InAsync", whose timed parts give the acquisition to
 * AcquiredSemaphoreInAsync (out of the lock order) where the others give it
 * to AcquiredSemaphore; a Monitor.Enter there keeps its one stub. */
static void test_stub_semaphore_in_async(void **state)
{
	struct img *img = load(NET_REF), *again;
	struct md_image *md = &img->md;
	uint32_t runtime = md_token(MD_ASSEMBLYREF, assemblyref_row(md, "System.Runtime"));
	uint32_t sem = add_typeref(md, runtime, "System.Threading", "SemaphoreSlim");
	uint32_t monitor = add_typeref(md, runtime, "System.Threading", "Monitor");
	static const uint8_t wait[] = { SIG_HASTHIS, 0, SIG_VOID }, try_wait[] = { SIG_HASTHIS, 1, SIG_BOOLEAN, SIG_I4 };
	static const uint8_t enter[] = { SIG_CONV_DEFAULT, 1, SIG_VOID, SIG_OBJECT };
	uint32_t m_wait = add_memberref(md, sem, "Wait", wait, sizeof wait);
	uint32_t m_try = add_memberref(md, sem, "Wait", try_wait, sizeof try_wait);
	uint32_t m_enter = add_memberref(md, monitor, "Enter", enter, sizeof enter);
	uint32_t w[6], plain, in_async;
	struct weave_stubs *h;

	(void)state;
	ok(weave_stubs_begin(img, &default_opts, no_sites(img), &h));
	ok(weave_stubs_for_call(h, m_wait, WEAVE_SEM_WAIT, 1, 0, &w[0]));
	ok(weave_stubs_for_call(h, m_wait, WEAVE_SEM_WAIT, 1, 1, &w[1]));
	ok(weave_stubs_for_call(h, m_try, WEAVE_SEM_TRYWAIT, 1, 1, &w[2]));
	ok(weave_stubs_for_call(h, m_wait, WEAVE_SEM_WAIT, 1, 1, &w[3]));
	ok(weave_stubs_for_call(h, m_enter, WEAVE_MONITOR_ENTER, 0, 0, &w[4]));
	ok(weave_stubs_for_call(h, m_enter, WEAVE_MONITOR_ENTER, 0, 1, &w[5]));
	ok(weave_stubs_end(h));
	assert_int_not_equal(w[0], w[1]);
	assert_int_equal(w[1], w[3]);
	assert_int_equal(w[4], w[5]);
	assert_string_equal(str(md, MD_METHODDEF, md_token_row(w[0]), MD_METHODDEF_NAME), "Semaphore_Wait");
	assert_string_equal(str(md, MD_METHODDEF, md_token_row(w[1]), MD_METHODDEF_NAME), "Semaphore_Wait_InAsync_2");
	assert_string_equal(str(md, MD_METHODDEF, md_token_row(w[2]), MD_METHODDEF_NAME), "Semaphore_TryWait_InAsync");
	plain = find_method(md, "<LockTime>Api", "AcquiredSemaphore");
	in_async = find_method(md, "<LockTime>Api", "AcquiredSemaphoreInAsync");
	assert_int_not_equal(plain, 0);
	assert_int_not_equal(in_async, 0);
	/* each timed part (the front's next MethodDef): Wait() has the fast try's and the blocking call's */
	assert_int_equal(calls_of(img, md_token_row(w[0]) + 1, plain), 2);
	assert_int_equal(calls_of(img, md_token_row(w[0]) + 1, in_async), 0);
	assert_int_equal(calls_of(img, md_token_row(w[1]) + 1, plain), 0);
	assert_int_equal(calls_of(img, md_token_row(w[1]) + 1, in_async), 2);
	/* Wait(int32): its try with 0, then the call past a failed try, and where the timeout is 0 or invalid */
	assert_int_equal(calls_of(img, md_token_row(w[2]) + 1, in_async), 3);
	again = write_and_check(img, 4 * 2);
	img_free(again);
	img_free(img);
}

/* The weave's options become the bodies of the run-time's Baked methods. */
static void test_stubs_baked_options(void **state)
{
	struct weave_opts o = { .threshold_ms = 2.5, .output = "/tmp/lock\xC3\xA9s.txt", .summary = "3",
				.report = "/tmp/run-{pid}.json", .lock_order = "0" };
	struct img *img = load(NET_REF), *dflt = load(NET_REF);
	struct weave_stubs *h;
	char buf[64];

	(void)state;
	ok(weave_stubs_begin(img, &o, no_sites(img), &h));
	ok(weave_stubs_end(h));
	baked_string(img, "ThresholdMs", buf, sizeof buf);
	assert_string_equal(buf, "2.5");
	baked_string(img, "Output", buf, sizeof buf);
	assert_string_equal(buf, "/tmp/lock\xC3\xA9s.txt");
	baked_string(img, "Summary", buf, sizeof buf);
	assert_string_equal(buf, "3");
	baked_string(img, "Report", buf, sizeof buf);
	assert_string_equal(buf, "/tmp/run-{pid}.json");
	baked_string(img, "LockOrder", buf, sizeof buf);
	assert_string_equal(buf, "0");
	/* not given: the template's own defaults */
	ok(weave_stubs_begin(dflt, &default_opts, no_sites(dflt), &h));
	ok(weave_stubs_end(h));
	baked_string(dflt, "Summary", buf, sizeof buf);
	assert_string_equal(buf, "10");
	baked_string(dflt, "Report", buf, sizeof buf);
	assert_string_equal(buf, "");
	baked_string(dflt, "LockOrder", buf, sizeof buf);
	assert_string_equal(buf, "1");
	img_free(dflt);
	img_free(img);
}

/* Options the run-time could not take are refused before anything is merged. */
static void test_stubs_bad_options(void **state)
{
	static const struct weave_opts bad[] = {
		{ .threshold_ms = 1, .summary = "" }, { .threshold_ms = 1, .summary = "-1" },
		{ .threshold_ms = 1, .summary = "1x" }, { .threshold_ms = 1, .summary = "12345678901" },
		{ .threshold_ms = 1, .lock_order = "on" }, { .threshold_ms = 1, .report = "/tmp/\xC3(" },
	};
	struct img *img = load(NET_REF);
	struct weave_stubs *h;
	uint32_t types = md_rows(&img->md, MD_TYPEDEF);

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		expect_error(weave_stubs_begin(img, &bad[i], no_sites(img), &h), LT_E_WEAVE);
	assert_int_equal(md_rows(&img->md, MD_TYPEDEF), types);
	img_free(img);
}

static void test_stubs_woven_twice(void **state)
{
	struct img *img = load(NET_REF);
	struct weave_stubs *h;

	(void)state;
	ok(weave_stubs_begin(img, &default_opts, no_sites(img), &h));
	ok(weave_stubs_end(h));
	expect_error(weave_stubs_begin(img, &default_opts, no_sites(img), &h), LT_E_WEAVE);
	img_free(img);
}

static void test_stubs_bad_threshold(void **state)
{
	struct weave_opts neg = { .threshold_ms = -1 }, nan_ = { .threshold_ms = NAN }, big = { .threshold_ms = 1e13 };
	struct img *img = load(NET_REF);
	struct weave_stubs *h;

	(void)state;
	expect_error(weave_stubs_begin(img, &neg, no_sites(img), &h), LT_E_WEAVE);
	expect_error(weave_stubs_begin(img, &nan_, no_sites(img), &h), LT_E_WEAVE);
	expect_error(weave_stubs_begin(img, &big, no_sites(img), &h), LT_E_WEAVE);
	img_free(img);
}

static void test_stubs_empty_output(void **state)
{
	struct weave_opts o = { .threshold_ms = 1, .output = "" };
	struct img *img = load(NET_REF);
	struct weave_stubs *h;

	(void)state;
	expect_error(weave_stubs_begin(img, &o, no_sites(img), &h), LT_E_WEAVE);
	img_free(img);
}

static void test_stubs_output_not_utf8(void **state)
{
	struct weave_opts o = { .threshold_ms = 1, .output = "/tmp/\xC3(" };
	struct img *img = load(NET_REF);
	struct weave_stubs *h;

	(void)state;
	expect_error(weave_stubs_begin(img, &o, no_sites(img), &h), LT_E_WEAVE);
	assert_non_null(strstr(lt_error_last()->msg, "UTF-8"));
	img_free(img);
}

static void test_stubs_pointer_tables(void **state)
{
	struct img *img = load(NET_REF);
	uint32_t cell = 1, row;
	struct weave_stubs *h;

	(void)state;
	assert_int_equal(md_append_row(&img->md, MD_METHODPTR, &cell, &row), 0);
	expect_error(weave_stubs_begin(img, &default_opts, no_sites(img), &h), LT_E_WEAVE);
	img_free(img);
}

/* A core library that lacks a type the stubs need (Console, renamed here). */
static void test_stubs_unresolvable_framework(void **state)
{
	struct img *img = load(MONO_MSCORLIB);
	struct md_image *md = &img->md;
	struct weave_stubs *h;
	uint32_t idx;

	(void)state;
	assert_int_equal(md_add_string(md, "Console2", &idx), 0);
	for (uint32_t t = 1; t <= md_rows(md, MD_TYPEDEF); t++)
		if (strcmp(str(md, MD_TYPEDEF, t, MD_TYPEDEF_NAME), "Console") == 0)
			md_set(md, MD_TYPEDEF, t, MD_TYPEDEF_NAME, idx);
	expect_error(weave_stubs_begin(img, &default_opts, no_sites(img), &h), LT_E_WEAVE);
	assert_non_null(strstr(lt_error_last()->msg, "Console"));
	img_free(img);
}

/* Wrapper refusals, each on a fresh stub type. */
struct refusal {
	const char *name;
	uint8_t sig[8];
	uint8_t len;
	enum weave_kind kind;
	int code;
};

static const struct refusal refusals[] = {
	{ "TryEnter", { SIG_CONV_DEFAULT, 1, SIG_VOID, SIG_OBJECT }, 4, WEAVE_MONITOR_TRYENTER, LT_E_WEAVE },
	{ "Enter", { SIG_CONV_DEFAULT, 1, SIG_VOID, SIG_OBJECT }, 4, WEAVE_MONITOR_ENTER_TAKEN, LT_E_WEAVE },
	{ "Enter", { SIG_CONV_DEFAULT, 1, SIG_VOID, SIG_I4 }, 4, WEAVE_MONITOR_ENTER, LT_E_WEAVE },
	{ "Enter", { SIG_CONV_DEFAULT, 0, SIG_VOID }, 3, WEAVE_MONITOR_ENTER, LT_E_WEAVE },
	{ "Enter", { SIG_CONV_VARARG, 1, SIG_VOID, SIG_OBJECT }, 4, WEAVE_MONITOR_ENTER, LT_E_WEAVE },
	{ "Enter", { SIG_CONV_DEFAULT | SIG_GENERIC, 1, 1, SIG_VOID, SIG_OBJECT }, 5, WEAVE_MONITOR_ENTER, LT_E_WEAVE },
	{ "Enter", { SIG_CONV_DEFAULT, 2, SIG_VOID, SIG_OBJECT }, 4, WEAVE_MONITOR_ENTER, LT_E_SIGNATURE },
	{ "Enter", { SIG_CONV_DEFAULT, 1, SIG_VOID, SIG_OBJECT }, 4, WEAVE_SYNCHRONIZED, LT_E_WEAVE },
	{ "Enter", { SIG_CONV_DEFAULT, 1, SIG_VOID, SIG_OBJECT }, 4, WEAVE_KIND_COUNT, LT_E_WEAVE },
};

static void test_wrapper_refusals(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++) {
		struct img *img = load(NET_REF);
		struct md_image *md = &img->md;
		uint32_t runtime = md_token(MD_ASSEMBLYREF, assemblyref_row(md, "System.Runtime"));
		uint32_t monitor = add_typeref(md, runtime, "System.Threading", "Monitor"), w;
		uint32_t m = add_memberref(md, monitor, refusals[i].name, refusals[i].sig, refusals[i].len);
		struct weave_stubs *h;

		ok(weave_stubs_begin(img, &default_opts, no_sites(img), &h));
		if (weave_stubs_for_call(h, m, refusals[i].kind, 0, 0, &w) != -1 || lt_error_last()->code != refusals[i].code)
			fail_msg("refusal %zu: got LT%03d %s", i, lt_error_last()->code, lt_error_last()->msg);
		weave_stubs_free(h);
		img_free(img);
	}
}

static void test_wrapper_bad_tokens(void **state)
{
	struct img *img = load(NET_REF);
	struct weave_stubs *h;
	uint32_t w;

	(void)state;
	ok(weave_stubs_begin(img, &default_opts, no_sites(img), &h));
	expect_error(weave_stubs_for_call(h, md_token(MD_METHODSPEC, 1), WEAVE_MONITOR_ENTER, 0, 0, &w), LT_E_WEAVE);
	expect_error(weave_stubs_for_call(h, md_token(MD_TYPEDEF, 1), WEAVE_MONITOR_ENTER, 0, 0, &w), LT_E_WEAVE);
	expect_error(weave_stubs_for_call(h, md_token(MD_MEMBERREF, 0xFFFFFF), WEAVE_MONITOR_ENTER, 0, 0, &w), LT_E_WEAVE);
	/* a MethodDef before the first TypeDef's method list belongs to no type */
	md_set(&img->md, MD_TYPEDEF, 1, MD_TYPEDEF_METHODLIST, 2);
	expect_error(weave_stubs_for_call(h, md_token(MD_METHODDEF, 1), WEAVE_MONITOR_EXIT, 0, 0, &w), LT_E_WEAVE);
	weave_stubs_free(h);
	img_free(img);
}

/* A MethodDef callee (a core library weaving its own Monitor): the wrapper
 * takes its signature, and its owner is the TypeDef whose list holds it. */
static void test_wrapper_methoddef_callee(void **state)
{
	static const uint8_t object_to_void[] = { SIG_CONV_DEFAULT, 1, SIG_VOID, SIG_OBJECT };
	struct img *img = load(MONO_SYSTEM), *again;
	struct md_image *md = &img->md;
	uint32_t callee = 0, w;
	struct weave_stubs *h;
	struct sig_method *s;

	(void)state;
	for (uint32_t r = 1; r <= md_rows(md, MD_METHODDEF) && !callee; r++) {
		const uint8_t *p;
		uint32_t len;
		assert_int_equal(md_blob(md, md_get(md, MD_METHODDEF, r, MD_METHODDEF_SIGNATURE), &p, &len), 0);
		if (len == sizeof object_to_void && memcmp(p, object_to_void, len) == 0)
			callee = md_token(MD_METHODDEF, r);
	}
	assert_int_not_equal(callee, 0);
	ok(weave_stubs_begin(img, &default_opts, no_sites(img), &h));
	ok(weave_stubs_for_call(h, callee, WEAVE_MONITOR_EXIT, 0, 0, &w));
	s = methoddef_sig(md, w);
	assert_int_equal(s->nparams, 1);
	assert_int_equal(s->params[0]->elem, SIG_OBJECT);
	assert_int_equal(s->ret->elem, SIG_VOID);
	sig_method_free(s);
	ok(weave_stubs_end(h));
	again = write_and_check(img, 1);
	img_free(again);
	img_free(img);
}

/* No ldstr token past a 16 MiB #US heap (III.4.16). */
static void test_stubs_us_heap_full(void **state)
{
	struct img *img = load(NET_REF);
	uint32_t n = 8u << 20, index;
	uint16_t *units = calloc(n, sizeof *units);
	const struct weave_site_table *sites = no_sites(img);
	struct weave_stubs *h;

	(void)state;
	assert_non_null(units);
	for (uint32_t i = 0; i < n; i++)
		units[i] = 'a';
	assert_int_equal(md_add_us(&img->md, units, n, &index), 0);
	free(units);
	expect_error(weave_stubs_begin(img, &default_opts, sites, &h), LT_E_LIMIT);
	img_free(img);
}

/* A callee declared on a TypeSpec is no lock API. */
static void test_wrapper_typespec_owner(void **state)
{
	struct img *img = load(NET_REF);
	struct md_image *md = &img->md;
	static const uint8_t spec[] = { SIG_SZARRAY, SIG_OBJECT }, enter[] = { SIG_HASTHIS, 0, SIG_VOID };
	uint32_t blob, row, m, w;
	struct weave_stubs *h;

	(void)state;
	assert_int_equal(md_add_blob(md, spec, sizeof spec, &blob), 0);
	assert_int_equal(md_append_row(md, MD_TYPESPEC, &blob, &row), 0);
	m = add_memberref(md, md_token(MD_TYPESPEC, row), "Enter", enter, sizeof enter);
	ok(weave_stubs_begin(img, &default_opts, no_sites(img), &h));
	expect_error(weave_stubs_for_call(h, m, WEAVE_LOCK_ENTER, 1, 0, &w), LT_E_WEAVE);
	weave_stubs_free(h);
	img_free(img);
}

/* The TypeDef that owns MethodDef `row` (II.22.37 MethodList). */
static uint32_t owner_type(const struct md_image *md, uint32_t row)
{
	uint32_t owner = 0;

	for (uint32_t r = 1; r <= md_rows(md, MD_TYPEDEF); r++)
		if (md_get(md, MD_TYPEDEF, r, MD_TYPEDEF_METHODLIST) <= row)
			owner = r;
	return owner;
}

/* How many top-level TypeDefs System.Diagnostics.CodeAnalysis.`name` md has; the last in *row. */
static int trim_classes(const struct md_image *md, const char *name, uint32_t *row)
{
	int n = 0;

	*row = 0;
	for (uint32_t r = 2; r <= md_rows(md, MD_TYPEDEF); r++)
		if (strcmp(str(md, MD_TYPEDEF, r, MD_TYPEDEF_NAME), name) == 0 &&
		    strcmp(str(md, MD_TYPEDEF, r, MD_TYPEDEF_NAMESPACE), "System.Diagnostics.CodeAnalysis") == 0) {
			*row = r;
			n++;
		}
	return n;
}

/* How many custom attributes of class `name` the merged run-time's types and methods (<LockTime>...)
 * carry; the constructor of the last in *ctor (a MethodDef or MemberRef token). */
static int merged_uses(const struct md_image *md, const char *name, uint32_t *ctor)
{
	int n = 0;

	*ctor = 0;
	for (uint32_t r = 1; r <= md_rows(md, MD_CUSTOMATTRIBUTE); r++) {
		uint32_t parent, tok, type, cls;
		const char *on, *of;

		assert_int_equal(md_coded_decode(MD_CI_HASCUSTOMATTRIBUTE,
						 md_get(md, MD_CUSTOMATTRIBUTE, r, MD_CUSTOMATTRIBUTE_PARENT), &parent), 0);
		assert_int_equal(md_coded_decode(MD_CI_CUSTOMATTRIBUTETYPE,
						 md_get(md, MD_CUSTOMATTRIBUTE, r, MD_CUSTOMATTRIBUTE_TYPE), &tok), 0);
		if (md_token_table(parent) != MD_TYPEDEF && md_token_table(parent) != MD_METHODDEF)
			continue;
		type = md_token_table(parent) == MD_TYPEDEF ? md_token_row(parent) : owner_type(md, md_token_row(parent));
		on = str(md, MD_TYPEDEF, type, MD_TYPEDEF_NAME);
		if (md_token_table(tok) == MD_METHODDEF) {
			of = str(md, MD_TYPEDEF, owner_type(md, md_token_row(tok)), MD_TYPEDEF_NAME);
		} else {
			assert_int_equal(md_coded_decode(MD_CI_MEMBERREFPARENT,
							 md_get(md, MD_MEMBERREF, md_token_row(tok), MD_MEMBERREF_CLASS), &cls), 0);
			of = md_token_table(cls) == MD_TYPEREF ? str(md, MD_TYPEREF, md_token_row(cls), MD_TYPEREF_NAME) : "";
		}
		if (strncmp(on, "<LockTime>", 10) == 0 && strcmp(of, name) == 0) {
			*ctor = tok;
			n++;
		}
	}
	return n;
}

/* Weave img with no sites: the merged image, written and read again; *unfit the stub type's trim_unfit. */
static struct img *woven(struct img *img, unsigned *unfit)
{
	struct weave_stubs *h;
	struct img *again;

	ok(weave_stubs_begin(img, &default_opts, no_sites(img), &h));
	*unfit = weave_stubs_trim_unfit(h);
	ok(weave_stubs_end(h));
	again = write_and_check(img, 0);
	img_free(img);
	return again;
}

#define SUPPRESS "UnconditionalSuppressMessageAttribute"
#define DEPENDENCY "DynamicDependencyAttribute"

/* The merged run-time's attributes for the trimmer (weave_merge_trim.c), 5 suppressions (4 on Metrics, 1 on StackCapture.Take) and
 * 6 DynamicDependency on Metrics.Start (weaver/runtime/Metrics/Metrics.cs), in each kind of target (the
 * netstandard library: the template's own bytes, with its own internal classes of both, Trimming.cs): */
static void test_trim_attributes(void **state)
{
	static const uint8_t two_strings[] = { SIG_HASTHIS, 2, SIG_VOID, SIG_STRING, SIG_STRING };
	uint32_t row, own_suppress, own_dependency, ctor, idx, types;
	struct img *img;
	unsigned unfit;

	(void)state;
	/* a .NET target: the framework's own (MemberRefs), no class added; */
	img = woven(load(NET_REF), &unfit);
	assert_int_equal(unfit, 0);
	assert_int_equal(merged_uses(&img->md, SUPPRESS, &ctor), 15);
	assert_int_equal(md_token_table(ctor), MD_MEMBERREF);
	assert_int_equal(merged_uses(&img->md, DEPENDENCY, &ctor), 29);
	assert_int_equal(trim_classes(&img->md, SUPPRESS, &row), 0);
	img_free(img);

	/* a .NET Framework one (nothing trims it): left out, no class added; */
	img = woven(load(MONO_SYSTEM), &unfit);
	assert_int_equal(unfit, 0);
	assert_int_equal(merged_uses(&img->md, SUPPRESS, &ctor), 0);
	assert_int_equal(merged_uses(&img->md, DEPENDENCY, &ctor), 0);
	assert_int_equal(trim_classes(&img->md, SUPPRESS, &row) + trim_classes(&img->md, DEPENDENCY, &row), 0);
	img_free(img);

	/* a netstandard library with its own (internal) classes: those, no second TypeDef of the name; */
	img = template_load();
	assert_int_equal(trim_classes(&img->md, SUPPRESS, &own_suppress), 1);
	assert_int_equal(trim_classes(&img->md, DEPENDENCY, &own_dependency), 1);
	img = woven(img, &unfit);
	assert_int_equal(unfit, 0);
	assert_int_equal(trim_classes(&img->md, SUPPRESS, &row), 1);
	assert_int_equal(row, own_suppress);
	assert_int_equal(merged_uses(&img->md, SUPPRESS, &ctor), 15);
	assert_int_equal(owner_type(&img->md, md_token_row(ctor)), own_suppress);
	assert_int_equal(merged_uses(&img->md, DEPENDENCY, &ctor), 29);
	assert_int_equal(owner_type(&img->md, md_token_row(ctor)), own_dependency);
	img_free(img);

	/* one without them: the template's classes merged under their full names, internal, the uses on them; */
	img = template_load();
	types = md_rows(&img->md, MD_TYPEDEF);
	set_string(&img->md, MD_TYPEDEF, own_suppress, MD_TYPEDEF_NAME, "OwnSuppress");
	set_string(&img->md, MD_TYPEDEF, own_dependency, MD_TYPEDEF_NAME, "OwnDependency");
	img = woven(img, &unfit);
	assert_int_equal(unfit, 0);
	assert_int_equal(trim_classes(&img->md, SUPPRESS, &row), 1);
	assert_true(row > types);
	assert_int_equal(md_get(&img->md, MD_TYPEDEF, row, MD_TYPEDEF_FLAGS) & 0x7, 0); /* NotPublic */
	assert_int_equal(merged_uses(&img->md, SUPPRESS, &ctor), 15);
	assert_int_equal(owner_type(&img->md, md_token_row(ctor)), row);
	assert_int_equal(trim_classes(&img->md, DEPENDENCY, &row), 1);
	assert_int_equal(merged_uses(&img->md, DEPENDENCY, &ctor), 29);
	assert_int_equal(owner_type(&img->md, md_token_row(ctor)), row);
	img_free(img);

	/* one whose own DynamicDependencyAttribute takes other arguments: its uses left out, bit 0 (LT025). */
	img = template_load();
	assert_int_equal(md_add_blob(&img->md, two_strings, sizeof two_strings, &idx), 0);
	for (uint32_t r = 1; r <= md_rows(&img->md, MD_METHODDEF); r++)
		if (owner_type(&img->md, r) == own_dependency && strcmp(str(&img->md, MD_METHODDEF, r, MD_METHODDEF_NAME), ".ctor") == 0)
			md_set(&img->md, MD_METHODDEF, r, MD_METHODDEF_SIGNATURE, idx);
	img = woven(img, &unfit);
	assert_int_equal(unfit, 1u);
	assert_string_equal(weave_merge_trim_attribute(0), "System.Diagnostics.CodeAnalysis." DEPENDENCY);
	assert_int_equal(merged_uses(&img->md, DEPENDENCY, &ctor), 0);
	assert_int_equal(merged_uses(&img->md, SUPPRESS, &ctor), 15);
	assert_int_equal(trim_classes(&img->md, DEPENDENCY, &row), 1);
	img_free(img);

	/* one whose own UnconditionalSuppressMessageAttribute has the constructor, no Justification: bit 1. */
	img = template_load();
	for (uint32_t r = 1; r <= md_rows(&img->md, MD_PROPERTY); r++)
		if (strcmp(str(&img->md, MD_PROPERTY, r, MD_PROPERTY_NAME), "Justification") == 0)
			set_string(&img->md, MD_PROPERTY, r, MD_PROPERTY_NAME, "Reason");
	img = woven(img, &unfit);
	assert_int_equal(unfit, 2u);
	assert_string_equal(weave_merge_trim_attribute(1), "System.Diagnostics.CodeAnalysis." SUPPRESS);
	assert_null(weave_merge_trim_attribute(2));
	assert_int_equal(merged_uses(&img->md, SUPPRESS, &ctor), 0);
	assert_int_equal(merged_uses(&img->md, DEPENDENCY, &ctor), 29);
	img_free(img);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stubs_mono_system),
		cmocka_unit_test(test_stubs_lock_wrappers),
		cmocka_unit_test(test_stub_scope_dispose),
		cmocka_unit_test(test_stub_wait_finally),
		cmocka_unit_test(test_stub_semaphore_in_async),
		cmocka_unit_test(test_stubs_baked_options),
		cmocka_unit_test(test_stubs_bad_options),
		cmocka_unit_test(test_stubs_woven_twice),
		cmocka_unit_test(test_stubs_bad_threshold),
		cmocka_unit_test(test_stubs_empty_output),
		cmocka_unit_test(test_stubs_output_not_utf8),
		cmocka_unit_test(test_stubs_pointer_tables),
		cmocka_unit_test(test_stubs_unresolvable_framework),
		cmocka_unit_test(test_wrapper_refusals),
		cmocka_unit_test(test_wrapper_bad_tokens),
		cmocka_unit_test(test_wrapper_methoddef_callee),
		cmocka_unit_test(test_stubs_us_heap_full),
		cmocka_unit_test(test_wrapper_typespec_owner),
		cmocka_unit_test(test_trim_attributes),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
