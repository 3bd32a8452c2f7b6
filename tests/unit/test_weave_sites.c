/* test_weave_sites.c - lock sites, user-facing names and body rewriting, on mono's assemblies and synthetic edits of them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "il_body.h"
#include "image.h"
#include "lt_error.h"
#include "lt_file.h"
#include "sig.h"
#include "weave.h"
#include "weave_pass.h"

#define MONO "/usr/lib/mono/4.5/"
#define SYSTEM_DLL MONO "System.dll"
#define MSCORLIB_DLL MONO "mscorlib.dll"
#define FACADE_DLL MONO "Facades/System.Runtime.dll"

static const struct weave_opts opts = { .threshold_ms = 1.0, .output = "stderr" };

/* ---- Loading ---- */

static struct img *load(const char *path)
{
	struct img *img = NULL;
	uint8_t *data;
	size_t size;

	if (lt_file_read(path, &data, &size) < 0) {
		print_message("%s not found: skipped\n", path);
		skip();
	}
	assert_int_equal(img_load(&img, data, size), 0);
	return img;
}

/* Write img and load the result. */
static struct img *reload(struct img *img)
{
	struct lt_buf out = LT_BUF_INIT;
	struct img *again = NULL;

	assert_int_equal(img_write(img, &out), 0);
	assert_int_equal(img_load(&again, out.data, out.len), 0); /* takes out.data */
	return again;
}

static void find(const struct img *img, struct weave_names *names, struct weave_sites *sites)
{
	assert_int_equal(weave_names_init(names, img), 0);
	assert_int_equal(weave_sites_find(names, sites), 0);
}

static void release(struct weave_names *names, struct weave_sites *sites)
{
	weave_sites_free(sites);
	weave_names_free(names);
}

/* ---- An independent count: every call/callvirt whose target is named
 * System.Threading.Monitor::<name>, by name only ---- */

enum { P_ENTER, P_TRYENTER, P_EXIT, P_WAIT, P_COUNT };
static const char *const plain_names[P_COUNT] = { "Enter", "TryEnter", "Exit", "Wait" };

/* TypeDef rows owning each MethodDef, by a plain walk of MethodList. */
static uint32_t *plain_owners(const struct md_image *md)
{
	uint32_t nm = md_rows(md, MD_METHODDEF), nt = md_rows(md, MD_TYPEDEF);
	uint32_t *owner = calloc(nm + 1, sizeof *owner);

	assert_non_null(owner);
	for (uint32_t t = 1; t <= nt; t++)
		for (uint32_t m = md_get(md, MD_TYPEDEF, t, MD_TYPEDEF_METHODLIST); m <= nm; m++)
			owner[m] = t; /* later types overwrite: the last run wins */
	return owner;
}

/* Whether TypeDef `row`, or the outermost type enclosing it (a plain walk of
 * NestedClass), is a lock type whose own methods hold no sites: a
 * System.Threading type named Monitor, Lock, ReaderWriterLockSlim,
 * SemaphoreSlim, SpinLock, Mutex, WaitHandle or ReaderWriterLock. */
static int in_lock_type(const struct md_image *md, uint32_t row)
{
	static const char *const names[] = { "Monitor", "Lock", "ReaderWriterLockSlim", "SemaphoreSlim", "SpinLock",
					     "Mutex", "WaitHandle", "ReaderWriterLock" };
	const char *name, *ns;
	int moved = 1;

	for (int depth = 0; moved && depth < 64; depth++) {
		moved = 0;
		for (uint32_t r = 1; r <= md_rows(md, MD_NESTEDCLASS) && !moved; r++) {
			if (md_get(md, MD_NESTEDCLASS, r, MD_NESTEDCLASS_NESTEDCLASS) == row) {
				row = md_get(md, MD_NESTEDCLASS, r, MD_NESTEDCLASS_ENCLOSINGCLASS);
				moved = 1;
			}
		}
	}
	assert_int_equal(md_string(md, md_get(md, MD_TYPEDEF, row, MD_TYPEDEF_NAME), &name), 0);
	assert_int_equal(md_string(md, md_get(md, MD_TYPEDEF, row, MD_TYPEDEF_NAMESPACE), &ns), 0);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(ns, "System.Threading") == 0 && strcmp(name, names[i]) == 0)
			return 1;
	return 0;
}

static int is_monitor(const struct md_image *md, enum md_table_id tab, uint32_t row)
{
	const char *name, *ns;
	unsigned ncol = tab == MD_TYPEREF ? MD_TYPEREF_NAME : MD_TYPEDEF_NAME;
	unsigned scol = tab == MD_TYPEREF ? MD_TYPEREF_NAMESPACE : MD_TYPEDEF_NAMESPACE;

	assert_int_equal(md_string(md, md_get(md, tab, row, ncol), &name), 0);
	assert_int_equal(md_string(md, md_get(md, tab, row, scol), &ns), 0);
	return strcmp(name, "Monitor") == 0 && strcmp(ns, "System.Threading") == 0;
}

static void plain_scan(const struct img *img, long counts[P_COUNT])
{
	const struct md_image *md = &img->md;
	uint32_t *owner = plain_owners(md);
	uint8_t *own = calloc(md_rows(md, MD_TYPEDEF) + 1, 1); /* per TypeDef: in_lock_type */

	assert_non_null(own);
	for (uint32_t t = 1; t <= md_rows(md, MD_TYPEDEF); t++)
		own[t] = (uint8_t)in_lock_type(md, t);
	memset(counts, 0, P_COUNT * sizeof counts[0]);
	for (uint32_t m = 1; m <= md_rows(md, MD_METHODDEF); m++) {
		const uint8_t *body;
		struct il_body b;
		size_t len;
		if ((md_get(md, MD_METHODDEF, m, MD_METHODDEF_IMPLFLAGS) & 3) != 0 || (owner[m] && own[owner[m]]))
			continue;
		assert_int_equal(img_method_body(img, m, &body, &len), 0);
		if (!body)
			continue;
		assert_int_equal(il_decode(body, len, &b), 0);
		for (uint32_t i = 0; i < b.n; i++) {
			uint32_t tok = b.ins[i].arg.token, row = tok & 0xFFFFFF, parent = 0, name_ix;
			const char *name;
			int monitor;
			if (b.ins[i].op != IL_CALL && b.ins[i].op != IL_CALLVIRT)
				continue;
			if (tok >> 24 == MD_MEMBERREF) {
				uint32_t cell = md_get(md, MD_MEMBERREF, row, MD_MEMBERREF_CLASS);
				/* MemberRefParent: 3 tag bits, TypeDef 0 / TypeRef 1 (II.24.2.6) */
				name_ix = md_get(md, MD_MEMBERREF, row, MD_MEMBERREF_NAME);
				parent = cell >> 3;
				monitor = (cell & 7) == 1 ? is_monitor(md, MD_TYPEREF, parent)
				        : (cell & 7) == 0 ? is_monitor(md, MD_TYPEDEF, parent) : 0;
			} else if (tok >> 24 == MD_METHODDEF) {
				name_ix = md_get(md, MD_METHODDEF, row, MD_METHODDEF_NAME);
				monitor = owner[row] && is_monitor(md, MD_TYPEDEF, owner[row]);
			} else {
				continue;
			}
			assert_int_equal(md_string(md, name_ix, &name), 0);
			for (int k = 0; k < P_COUNT && monitor; k++)
				counts[k] += strcmp(name, plain_names[k]) == 0;
		}
		il_body_free(&b);
	}
	free(own);
	free(owner);
}

/* Whether kind k is of a lock type beside Monitor and Lock (ReaderWriterLockSlim, SemaphoreSlim...). */
static int other_lock_kind(enum weave_kind k)
{
	const char *n = weave_kind_name(k);
	return strncmp(n, "Monitor.", 8) != 0 && strncmp(n, "Lock.", 5) != 0 && strcmp(n, "Synchronized") != 0;
}

/* Calls found by weave_sites_find, grouped like plain_scan; the acquiring
 * calls of the other lock types (not Monitor's) counted in *others. */
static void site_counts(const struct weave_sites *s, long counts[P_COUNT], long *synchronized, long *others)
{
	memset(counts, 0, P_COUNT * sizeof counts[0]);
	*synchronized = *others = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (other_lock_kind(s->calls[i].kind)) {
			*others += weave_kind_acquires(s->calls[i].kind);
			continue;
		}
		switch (s->calls[i].kind) {
		case WEAVE_MONITOR_ENTER: case WEAVE_MONITOR_ENTER_TAKEN: counts[P_ENTER]++; break;
		case WEAVE_MONITOR_TRYENTER: counts[P_TRYENTER]++; break;
		case WEAVE_MONITOR_EXIT: counts[P_EXIT]++; break;
		case WEAVE_MONITOR_WAIT: counts[P_WAIT]++; break;
		case WEAVE_SYNCHRONIZED: (*synchronized)++; break;
		default: fail_msg("unexpected kind %d in a mono assembly", s->calls[i].kind);
		}
	}
}

struct listed {
	long n, by_kind[WEAVE_KIND_COUNT];
	uint32_t last_row, last_offset;
};

static void on_site(void *ctx, const struct weave_site *s)
{
	struct listed *l = ctx;

	assert_true(weave_kind_acquires(s->kind));
	assert_true(s->methoddef > l->last_row || (s->methoddef == l->last_row && s->il_offset >= l->last_offset));
	assert_string_equal(s->location, "");
	assert_non_null(strstr(s->method, "::"));
	l->last_row = s->methoddef;
	l->last_offset = s->il_offset;
	l->by_kind[s->kind]++;
	l->n++;
}

/* A site listed from a woven assembly: marked, with the baked method and location. */
static void on_woven_site(void *ctx, const struct weave_site *s)
{
	struct listed *l = ctx;

	assert_true(s->woven);
	assert_true(weave_kind_acquires(s->kind));
	assert_non_null(strstr(s->method, "::"));
	assert_true(strncmp(s->location, "IL_", 3) == 0);
	l->n++;
}

/* ---- Sites on real assemblies ---- */

static void check_against_plain_scan(const char *path, long at_least)
{
	struct img *img = load(path);
	struct weave_names names;
	struct weave_sites sites;
	struct listed l;
	long plain[P_COUNT], found[P_COUNT], sync, others;

	plain_scan(img, plain);
	find(img, &names, &sites);
	site_counts(&sites, found, &sync, &others);
	for (int k = 0; k < P_COUNT; k++) {
		print_message("%s: Monitor.%s %ld (plain scan %ld)\n", path, plain_names[k], found[k], plain[k]);
		assert_int_equal(found[k], plain[k]);
	}
	assert_true(found[P_ENTER] + found[P_TRYENTER] >= at_least);
	/* weave_list reports the acquisitions only, synchronized methods and
	 * the other lock types included (Mono's libraries use SemaphoreSlim). */
	print_message("%s: %ld acquisitions of the other lock types\n", path, others);
	assert_true(others > 0);
	memset(&l, 0, sizeof l);
	assert_int_equal(weave_list(img, on_site, &l), found[P_ENTER] + found[P_TRYENTER] + sync + others);
	assert_int_equal(l.n, found[P_ENTER] + found[P_TRYENTER] + sync + others);
	assert_int_equal(l.by_kind[WEAVE_MONITOR_ENTER] + l.by_kind[WEAVE_MONITOR_ENTER_TAKEN], found[P_ENTER]);
	assert_int_equal(l.by_kind[WEAVE_SYNCHRONIZED], sync);
	release(&names, &sites);
	img_free(img);
}

static void test_system_sites(void **state)
{
	(void)state;
	check_against_plain_scan(SYSTEM_DLL, 100);
}

/* mscorlib defines Monitor itself: its calls are MethodDef tokens. */
static void test_mscorlib_sites(void **state)
{
	(void)state;
	check_against_plain_scan(MSCORLIB_DLL, 100);
}

static void test_facade_has_no_sites(void **state)
{
	struct img *img = load(FACADE_DLL);
	struct listed l = { 0 };
	enum weave_outcome outcome;
	long nsites = -1;
	uint32_t types = md_rows(&img->md, MD_TYPEDEF), us = img->md.us.added.len;

	(void)state;
	assert_int_equal(weave_list(img, on_site, &l), 0);
	assert_int_equal(weave_image(img, &opts, &outcome, &nsites, NULL), 0);
	assert_int_equal(outcome, WEAVE_NO_LOCKS);
	assert_int_equal(nsites, 0);
	assert_int_equal(md_rows(&img->md, MD_TYPEDEF), types);
	assert_int_equal(img->md.us.added.len, us);
	img_free(img);
}

/* ---- Synthetic lock APIs: System.Threading.Lock and its nested Scope,
 * appended as TypeRefs and MemberRefs to System.dll ---- */

static uint32_t add_str(struct img *img, const char *s)
{
	uint32_t ix;
	assert_int_equal(md_add_string(&img->md, s, &ix), 0);
	return ix;
}

static uint32_t add_typeref(struct img *img, uint32_t scope_token, const char *ns, const char *name)
{
	uint32_t cells[MD_TYPEREF_COLS], row;

	assert_int_equal(md_coded_encode(MD_CI_RESOLUTIONSCOPE, scope_token, &cells[MD_TYPEREF_RESOLUTIONSCOPE]), 0);
	cells[MD_TYPEREF_NAME] = add_str(img, name);
	cells[MD_TYPEREF_NAMESPACE] = add_str(img, ns);
	assert_int_equal(md_append_row(&img->md, MD_TYPEREF, cells, &row), 0);
	return md_token(MD_TYPEREF, row);
}

/* A signature blob: sig[0..len) with each byte TYPE_HERE replaced by the
 * TypeDefOrRefEncoded form of `type` (II.23.2.8), each TYPE_HERE2 by `type2`'s. */
#define TYPE_HERE 0xFF
#define TYPE_HERE2 0xFE
static uint32_t add_sig2(struct img *img, const uint8_t *sig, uint32_t len, uint32_t type, uint32_t type2)
{
	struct lt_buf b = LT_BUF_INIT;
	uint32_t ix;

	for (uint32_t i = 0; i < len; i++)
		assert_int_equal(sig[i] == TYPE_HERE    ? sig_token_encode(&b, type)
				 : sig[i] == TYPE_HERE2 ? sig_token_encode(&b, type2)
							: lt_buf_u8(&b, sig[i]),
				 0);
	assert_int_equal(md_add_blob(&img->md, b.data, (uint32_t)b.len, &ix), 0);
	lt_buf_free(&b);
	return ix;
}

static uint32_t add_sig(struct img *img, const uint8_t *sig, uint32_t len, uint32_t type)
{
	return add_sig2(img, sig, len, type, 0);
}

/* A MemberRef on `parent` (a MemberRefParent token) with a signature built by add_sig2. */
static uint32_t add_memberref2(struct img *img, uint32_t parent, const char *name, const uint8_t *sig, uint32_t len,
			       uint32_t type, uint32_t type2)
{
	uint32_t cells[MD_MEMBERREF_COLS], row;

	assert_int_equal(md_coded_encode(MD_CI_MEMBERREFPARENT, parent, &cells[MD_MEMBERREF_CLASS]), 0);
	cells[MD_MEMBERREF_NAME] = add_str(img, name);
	cells[MD_MEMBERREF_SIGNATURE] = add_sig2(img, sig, len, type, type2);
	assert_int_equal(md_append_row(&img->md, MD_MEMBERREF, cells, &row), 0);
	return md_token(MD_MEMBERREF, row);
}

static uint32_t add_memberref(struct img *img, uint32_t parent, const char *name, const uint8_t *sig, uint32_t len,
			      uint32_t type)
{
	return add_memberref2(img, parent, name, sig, len, type, 0);
}

/* Replace the body of MethodDef `row` with a fat body (II.25.4.3) holding
 * code[0..len) and, when eh is not NULL, one small EH section with eh[0..12). */
static void set_body(struct img *img, uint32_t row, const uint8_t *code, uint32_t len, const uint8_t *eh)
{
	uint8_t body[512];
	uint32_t n = 12;

	assert_true(len + 32 <= sizeof body);
	lt_put16(body, (uint16_t)(0x3003 | (eh ? 0x8 : 0)));
	lt_put16(body + 2, 8);
	lt_put32(body + 4, len);
	lt_put32(body + 8, 0);
	memcpy(body + n, code, len);
	n += len;
	if (eh) {
		while (n % 4)
			body[n++] = 0;
		body[n++] = 0x01; /* EHTable, small */
		body[n++] = 16;   /* DataSize: 4 + one 12-byte clause */
		body[n++] = 0;
		body[n++] = 0;
		memcpy(body + n, eh, 12);
		n += 12;
	}
	assert_int_equal(img_set_method_body(img, row, body, n), 0);
}

/* A MethodDef of img with an IL body and no lock call, returning void
 * when want_void (a body we may replace). */
static uint32_t free_method(const struct img *img, const struct weave_sites *sites, int want_void)
{
	const struct md_image *md = &img->md;

	for (uint32_t m = 1; m <= md_rows(md, MD_METHODDEF); m++) {
		const uint8_t *sig;
		uint32_t siglen, np;
		int this_, ret, used = 0;
		if (md_get(md, MD_METHODDEF, m, MD_METHODDEF_RVA) == 0 ||
		    md_get(md, MD_METHODDEF, m, MD_METHODDEF_IMPLFLAGS) != 0)
			continue;
		for (size_t i = 0; i < sites->n; i++)
			used |= sites->calls[i].methoddef == m;
		assert_int_equal(md_blob(md, md_get(md, MD_METHODDEF, m, MD_METHODDEF_SIGNATURE), &sig, &siglen), 0);
		assert_int_equal(sig_method_stack_effect(sig, siglen, &np, &this_, &ret), 0);
		if (!used && (!want_void || !ret))
			return m;
	}
	fail_msg("no free method");
	return 0;
}

/* A callee and the kind weave_sites_find must give its call (-1: none). */
struct expected {
	uint32_t token;
	int kind;
};

/* Make the body of MethodDef `row`: callvirt e[i].token for each i (5 bytes each), then ret. */
static void set_callvirts(struct img *img, uint32_t row, const struct expected *e, uint32_t n)
{
	uint8_t code[5 * 64 + 1];
	uint32_t len = 0;

	assert_true(n <= 64);
	for (uint32_t i = 0; i < n; i++) {
		code[len++] = 0x6F; /* callvirt */
		lt_put32(code + len, e[i].token);
		len += 4;
	}
	code[len++] = 0x2A; /* ret */
	set_body(img, row, code, len, NULL);
}

/* A MethodDef of img with an IL body and no lock call (free_method), found afresh. */
static uint32_t lockless_method(const struct img *img)
{
	struct weave_names names;
	struct weave_sites sites;
	uint32_t row;

	find(img, &names, &sites);
	row = free_method(img, &sites, 0);
	release(&names, &sites);
	return row;
}

static void test_lock_type_sites(void **state)
{
	struct img *img = load(SYSTEM_DLL);
	struct weave_names names;
	struct weave_sites sites;
	uint32_t asm_ref = md_token(MD_ASSEMBLYREF, 1), lock, scope, timespan, spec, row, blob;
	uint8_t tspec[2];
	uint32_t len = 0, i;
	struct expected expect[24];
	uint32_t nexpect = 0;

	(void)state;
	row = lockless_method(img);

	lock = add_typeref(img, asm_ref, "System.Threading", "Lock");
	scope = add_typeref(img, lock, "", "Scope");
	timespan = add_typeref(img, asm_ref, "System", "TimeSpan");
	tspec[0] = SIG_CLASS;
	tspec[1] = TYPE_HERE;
	blob = add_sig(img, tspec, 2, lock);
	assert_int_equal(md_append_row(&img->md, MD_TYPESPEC, &blob, &spec), 0);
	spec = md_token(MD_TYPESPEC, spec);
	/* REF(parent, name, expected kind or -1, type for TYPE_HERE, signature bytes) */
#define REF(parent, name, want, type, ...) do { \
		const uint8_t s_[] = { __VA_ARGS__ }; \
		expect[nexpect].token = add_memberref(img, parent, name, s_, sizeof s_, type); \
		expect[nexpect++].kind = want; \
	} while (0)
	REF(lock, "Enter", WEAVE_LOCK_ENTER, 0, 0x20, 0, SIG_VOID);
	REF(lock, "TryEnter", WEAVE_LOCK_TRYENTER, 0, 0x20, 0, SIG_BOOLEAN);
	REF(lock, "TryEnter", WEAVE_LOCK_TRYENTER, 0, 0x20, 1, SIG_BOOLEAN, SIG_I4);
	REF(lock, "TryEnter", WEAVE_LOCK_TRYENTER, timespan, 0x20, 1, SIG_BOOLEAN, SIG_VALUETYPE, TYPE_HERE);
	REF(lock, "Exit", WEAVE_LOCK_EXIT, 0, 0x20, 0, SIG_VOID);
	REF(lock, "EnterScope", WEAVE_LOCK_ENTERSCOPE, scope, 0x20, 0, SIG_VALUETYPE, TYPE_HERE);
	REF(scope, "Dispose", WEAVE_SCOPE_DISPOSE, 0, 0x20, 0, SIG_VOID);
	REF(spec, "Enter", WEAVE_LOCK_ENTER, 0, 0x20, 0, SIG_VOID);          /* parent through a TypeSpec */
	REF(lock, "Enter", -1, 0, 0x20, 1, SIG_VOID, SIG_I4);                /* no such overload */
	REF(lock, "Enter", -1, 0, 0x00, 0, SIG_VOID);                        /* static: not Lock.Enter */
	REF(lock, "TryEnter", -1, scope, 0x20, 1, SIG_BOOLEAN, SIG_VALUETYPE, TYPE_HERE);
	REF(lock, "EnterScope", -1, lock, 0x20, 0, SIG_CLASS, TYPE_HERE);    /* returns a class */
	REF(scope, "Enter", -1, 0, 0x20, 0, SIG_VOID);                       /* Scope has no Enter */
	REF(add_typeref(img, asm_ref, "My.Threading", "Lock"), "Enter", -1, 0, 0x20, 0, SIG_VOID);
	REF(lock, "Enter", -1, 0, 0x30, 1, 0, SIG_VOID);                     /* generic Enter<T>() */
#undef REF
	set_callvirts(img, row, expect, nexpect);

	find(img, &names, &sites);
	for (i = 0, len = 0; i < sites.n; i++) {
		const struct weave_call *c = &sites.calls[i];
		if (c->methoddef != row)
			continue;
		while (len < nexpect && expect[len].kind < 0)
			len++;
		assert_true(len < nexpect);
		assert_int_equal(c->il_offset, 5 * len);
		assert_int_equal(c->callee, expect[len].token);
		assert_int_equal(c->kind, expect[len].kind);
		assert_int_equal(c->callvirt, 1);
		len++;
	}
	while (len < nexpect && expect[len].kind < 0)
		len++;
	assert_int_equal(len, nexpect);
	release(&names, &sites);
	img_free(img);
}

/* ---- Synthetic sites of the lock types beside Monitor and Lock: ReaderWriterLockSlim,
 * SemaphoreSlim, SpinLock, Mutex (receivers), ReaderWriterLock ---- */

/* The kinds found in MethodDef `row` of img, in IL order, into kinds[] (at most max). */
static size_t kinds_in(const struct img *img, uint32_t row, int *kinds, size_t max, uint32_t *offsets)
{
	struct weave_names names;
	struct weave_sites sites;
	size_t n = 0;

	find(img, &names, &sites);
	for (size_t i = 0; i < sites.n; i++) {
		if (sites.calls[i].methoddef != row)
			continue;
		assert_true(n < max);
		offsets[n] = sites.calls[i].il_offset;
		kinds[n++] = sites.calls[i].kind;
	}
	release(&names, &sites);
	return n;
}

static void test_more_lock_sites(void **state)
{
	struct img *img = load(SYSTEM_DLL);
	uint32_t asm_ref = md_token(MD_ASSEMBLYREF, 1), row, rws, sem, spin, rwl, timespan, ct, task, task1, cookie, handle;
	uint32_t i, offsets[64];
	struct expected expect[64];
	uint32_t nexpect = 0;
	int kinds[64];
	size_t n, k;

	(void)state;
	row = lockless_method(img);
	rws = add_typeref(img, asm_ref, "System.Threading", "ReaderWriterLockSlim");
	sem = add_typeref(img, asm_ref, "System.Threading", "SemaphoreSlim");
	spin = add_typeref(img, asm_ref, "System.Threading", "SpinLock");
	rwl = add_typeref(img, asm_ref, "System.Threading", "ReaderWriterLock");
	timespan = add_typeref(img, asm_ref, "System", "TimeSpan");
	ct = add_typeref(img, asm_ref, "System.Threading", "CancellationToken");
	task = add_typeref(img, asm_ref, "System.Threading.Tasks", "Task");
	task1 = add_typeref(img, asm_ref, "System.Threading.Tasks", "Task`1");
	cookie = add_typeref(img, asm_ref, "System.Threading", "LockCookie");
	handle = add_typeref(img, asm_ref, "System.Threading", "WaitHandle");
	/* REF(parent, name, expected kind or -1, types for TYPE_HERE and TYPE_HERE2, signature bytes) */
#define REF(parent, name, want, type, type2, ...) do { \
		const uint8_t s_[] = { __VA_ARGS__ }; \
		expect[nexpect].token = add_memberref2(img, parent, name, s_, sizeof s_, type, type2); \
		expect[nexpect++].kind = want; \
	} while (0)
	REF(rws, "EnterReadLock", WEAVE_RWS_ENTER_READ, 0, 0, 0x20, 0, SIG_VOID);
	REF(rws, "TryEnterReadLock", WEAVE_RWS_TRYENTER_READ, 0, 0, 0x20, 1, SIG_BOOLEAN, SIG_I4);
	REF(rws, "TryEnterReadLock", WEAVE_RWS_TRYENTER_READ, timespan, 0, 0x20, 1, SIG_BOOLEAN, SIG_VALUETYPE, TYPE_HERE);
	REF(rws, "ExitReadLock", WEAVE_RWS_EXIT_READ, 0, 0, 0x20, 0, SIG_VOID);
	REF(rws, "EnterWriteLock", WEAVE_RWS_ENTER_WRITE, 0, 0, 0x20, 0, SIG_VOID);
	REF(rws, "TryEnterWriteLock", WEAVE_RWS_TRYENTER_WRITE, 0, 0, 0x20, 1, SIG_BOOLEAN, SIG_I4);
	REF(rws, "ExitWriteLock", WEAVE_RWS_EXIT_WRITE, 0, 0, 0x20, 0, SIG_VOID);
	REF(rws, "EnterUpgradeableReadLock", WEAVE_RWS_ENTER_UPGRADEABLE, 0, 0, 0x20, 0, SIG_VOID);
	REF(rws, "TryEnterUpgradeableReadLock", WEAVE_RWS_TRYENTER_UPGRADEABLE, timespan, 0, 0x20, 1, SIG_BOOLEAN,
	    SIG_VALUETYPE, TYPE_HERE);
	REF(rws, "ExitUpgradeableReadLock", WEAVE_RWS_EXIT_UPGRADEABLE, 0, 0, 0x20, 0, SIG_VOID);
	REF(rws, "EnterReadLock", -1, 0, 0, 0x00, 0, SIG_VOID);                  /* static: none */
	REF(sem, "Wait", WEAVE_SEM_WAIT, 0, 0, 0x20, 0, SIG_VOID);
	REF(sem, "Wait", WEAVE_SEM_WAIT, ct, 0, 0x20, 1, SIG_VOID, SIG_VALUETYPE, TYPE_HERE);
	REF(sem, "Wait", WEAVE_SEM_TRYWAIT, 0, 0, 0x20, 1, SIG_BOOLEAN, SIG_I4);
	REF(sem, "Wait", WEAVE_SEM_TRYWAIT, timespan, ct, 0x20, 2, SIG_BOOLEAN, SIG_VALUETYPE, TYPE_HERE, SIG_VALUETYPE,
	    TYPE_HERE2);
	REF(sem, "WaitAsync", WEAVE_SEM_WAITASYNC, task, 0, 0x20, 0, SIG_CLASS, TYPE_HERE);
	REF(sem, "WaitAsync", WEAVE_SEM_WAITASYNC, task, ct, 0x20, 1, SIG_CLASS, TYPE_HERE, SIG_VALUETYPE, TYPE_HERE2);
	REF(sem, "WaitAsync", WEAVE_SEM_TRYWAITASYNC, task1, 0, 0x20, 1, SIG_GENERICINST, SIG_CLASS, TYPE_HERE, 1,
	    SIG_BOOLEAN, SIG_I4);
	REF(sem, "WaitAsync", WEAVE_SEM_TRYWAITASYNC, task1, ct, 0x20, 2, SIG_GENERICINST, SIG_CLASS, TYPE_HERE, 1,
	    SIG_BOOLEAN, SIG_I4, SIG_VALUETYPE, TYPE_HERE2);
	REF(sem, "WaitAsync", -1, task1, 0, 0x20, 1, SIG_GENERICINST, SIG_CLASS, TYPE_HERE, 1, SIG_I4, SIG_I4); /* Task<int> */
	REF(sem, "WaitAsync", -1, task, 0, 0x20, 0, SIG_VALUETYPE, TYPE_HERE);   /* a valuetype Task: none */
	REF(sem, "Release", WEAVE_SEM_RELEASE, 0, 0, 0x20, 0, SIG_I4);
	REF(sem, "Release", WEAVE_SEM_RELEASE, 0, 0, 0x20, 1, SIG_I4, SIG_I4);
	REF(spin, "Enter", WEAVE_SPIN_ENTER, 0, 0, 0x20, 1, SIG_VOID, SIG_BYREF, SIG_BOOLEAN);
	REF(spin, "TryEnter", WEAVE_SPIN_TRYENTER, 0, 0, 0x20, 1, SIG_VOID, SIG_BYREF, SIG_BOOLEAN);
	REF(spin, "TryEnter", WEAVE_SPIN_TRYENTER, 0, 0, 0x20, 2, SIG_VOID, SIG_I4, SIG_BYREF, SIG_BOOLEAN);
	REF(spin, "TryEnter", WEAVE_SPIN_TRYENTER, timespan, 0, 0x20, 2, SIG_VOID, SIG_VALUETYPE, TYPE_HERE, SIG_BYREF,
	    SIG_BOOLEAN);
	REF(spin, "Exit", WEAVE_SPIN_EXIT, 0, 0, 0x20, 0, SIG_VOID);
	REF(spin, "Exit", WEAVE_SPIN_EXIT, 0, 0, 0x20, 1, SIG_VOID, SIG_BOOLEAN);
	REF(spin, "Enter", -1, 0, 0, 0x20, 0, SIG_VOID);                         /* no such overload */
	REF(rwl, "AcquireReaderLock", WEAVE_RWL_ACQUIRE_READER, 0, 0, 0x20, 1, SIG_VOID, SIG_I4);
	REF(rwl, "AcquireWriterLock", WEAVE_RWL_ACQUIRE_WRITER, timespan, 0, 0x20, 1, SIG_VOID, SIG_VALUETYPE, TYPE_HERE);
	REF(rwl, "UpgradeToWriterLock", WEAVE_RWL_UPGRADE, cookie, 0, 0x20, 1, SIG_VALUETYPE, TYPE_HERE, SIG_I4);
	REF(rwl, "DowngradeFromWriterLock", WEAVE_RWL_DOWNGRADE, cookie, 0, 0x20, 1, SIG_VOID, SIG_BYREF, SIG_VALUETYPE,
	    TYPE_HERE);
	REF(rwl, "ReleaseReaderLock", WEAVE_RWL_RELEASE_READER, 0, 0, 0x20, 0, SIG_VOID);
	REF(rwl, "ReleaseWriterLock", WEAVE_RWL_RELEASE_WRITER, 0, 0, 0x20, 0, SIG_VOID);
	REF(rwl, "AcquireReaderLock", -1, 0, 0, 0x20, 0, SIG_VOID);              /* no such overload */
	REF(rwl, "ReleaseLock", WEAVE_RWL_RELEASE_ALL, cookie, 0, 0x20, 0, SIG_VALUETYPE, TYPE_HERE);
	REF(rwl, "RestoreLock", WEAVE_RWL_RESTORE, cookie, 0, 0x20, 1, SIG_VOID, SIG_BYREF, SIG_VALUETYPE, TYPE_HERE);
	/* WaitHandle.WaitAny / WaitAll (static) over a WaitHandle[] (SZARRAY CLASS, II.23.2.12) */
	REF(handle, "WaitAny", WEAVE_HANDLE_WAITANY, handle, 0, 0x00, 1, SIG_I4, SIG_SZARRAY, SIG_CLASS, TYPE_HERE);
	REF(handle, "WaitAny", WEAVE_HANDLE_WAITANY, handle, 0, 0x00, 3, SIG_I4, SIG_SZARRAY, SIG_CLASS, TYPE_HERE, SIG_I4,
	    SIG_BOOLEAN);
	REF(handle, "WaitAll", WEAVE_HANDLE_WAITALL, handle, timespan, 0x00, 2, SIG_BOOLEAN, SIG_SZARRAY, SIG_CLASS,
	    TYPE_HERE, SIG_VALUETYPE, TYPE_HERE2);
	REF(handle, "WaitAll", -1, handle, 0, 0x00, 1, SIG_BOOLEAN, SIG_SZARRAY, SIG_OBJECT);    /* object[]: none */
	REF(handle, "WaitAny", -1, handle, 0, 0x20, 1, SIG_I4, SIG_SZARRAY, SIG_CLASS, TYPE_HERE); /* instance: none */
#undef REF
	set_callvirts(img, row, expect, nexpect);

	n = kinds_in(img, row, kinds, 64, offsets);
	for (i = 0, k = 0; i < nexpect; i++) {
		if (expect[i].kind < 0)
			continue;
		assert_true(k < n);
		assert_int_equal(offsets[k], 5 * i);
		assert_int_equal(kinds[k], expect[i].kind);
		k++;
	}
	assert_int_equal(k, n);
	img_free(img);
}

/* WaitHandle.WaitOne is a Mutex.WaitOne site by the class of its receiver, a
 * WaitHandle.WaitOne site (told at run time) on a WaitHandle, else none. */
static void test_mutex_receiver(void **state)
{
	struct img *img = load(SYSTEM_DLL);
	uint32_t asm_ref = md_token(MD_ASSEMBLYREF, 1), row, mutex, event, handle, timespan;
	uint32_t wait0, wait1, wait_t, mutex_ctor, event_ctor, release_mutex;
	uint8_t code[256];
	uint32_t len = 0, offsets[16], want[16], nwant = 0;
	enum weave_kind want_kind[16];
	int kinds[16];
	size_t n;

	(void)state;
	row = lockless_method(img);
	mutex = add_typeref(img, asm_ref, "System.Threading", "Mutex");
	event = add_typeref(img, asm_ref, "System.Threading", "AutoResetEvent");
	handle = add_typeref(img, asm_ref, "System.Threading", "WaitHandle");
	timespan = add_typeref(img, asm_ref, "System", "TimeSpan");
	{
		static const uint8_t w0[] = { 0x20, 0, SIG_BOOLEAN }, w1[] = { 0x20, 1, SIG_BOOLEAN, SIG_I4 };
		static const uint8_t wt[] = { 0x20, 1, SIG_BOOLEAN, SIG_VALUETYPE, TYPE_HERE };
		static const uint8_t ctor0[] = { 0x20, 0, SIG_VOID }, ctor1[] = { 0x20, 1, SIG_VOID, SIG_BOOLEAN };
		wait0 = add_memberref(img, handle, "WaitOne", w0, sizeof w0, 0);
		wait1 = add_memberref(img, handle, "WaitOne", w1, sizeof w1, 0);
		wait_t = add_memberref(img, handle, "WaitOne", wt, sizeof wt, timespan);
		mutex_ctor = add_memberref(img, mutex, ".ctor", ctor0, sizeof ctor0, 0);
		event_ctor = add_memberref(img, event, ".ctor", ctor1, sizeof ctor1, 0);
		release_mutex = add_memberref(img, mutex, "ReleaseMutex", ctor0, sizeof ctor0, 0);
	}
#define OP(b) (code[len++] = (uint8_t)(b))
#define TOK(op, t) (OP(op), lt_put32(code + len, (t)), len += 4)
#define SITE_OF(op, t, k) (want_kind[nwant] = (k), want[nwant++] = len, TOK(op, t))
#define SITE(op, t) SITE_OF(op, t, (t) == release_mutex ? WEAVE_MUTEX_RELEASE : WEAVE_MUTEX_WAITONE)
	/* newobj Mutex; callvirt WaitOne(): a site */
	TOK(0x73, mutex_ctor); SITE(0x6F, wait0); OP(0x26);
	/* newobj Mutex; ldc.i4 100; callvirt WaitOne(int): over the argument */
	TOK(0x73, mutex_ctor); TOK(0x20, 100); SITE(0x6F, wait1); OP(0x26);
	/* newobj Mutex; dup; callvirt WaitOne(); pop; callvirt ReleaseMutex(): dup passes it on */
	TOK(0x73, mutex_ctor); OP(0x25); SITE(0x6F, wait0); OP(0x26); SITE(0x6F, release_mutex);
	/* newobj AutoResetEvent(false); callvirt WaitOne(): an event, no site */
	OP(0x16); TOK(0x73, event_ctor); TOK(0x6F, wait0); OP(0x26);
	/* newobj Mutex; castclass WaitHandle; callvirt WaitOne(): a WaitHandle, a site told at run time */
	TOK(0x73, mutex_ctor); TOK(0x74, handle); SITE_OF(0x6F, wait0, WEAVE_HANDLE_WAITONE); OP(0x26);
	/* ldnull; callvirt WaitOne(): unknown, no site */
	OP(0x14); TOK(0x6F, wait0); OP(0x26);
	/* newobj Mutex; br.s +0; callvirt WaitOne(TimeSpan) after a join: unknown, no site */
	TOK(0x73, mutex_ctor); OP(0x2B); OP(0); TOK(0x6F, wait_t); OP(0x26);
	OP(0x2A); /* ret */
#undef SITE
#undef SITE_OF
#undef TOK
#undef OP
	set_body(img, row, code, len, NULL);

	n = kinds_in(img, row, kinds, 16, offsets);
	assert_int_equal(n, nwant);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(offsets[i], want[i]);
		assert_int_equal(kinds[i], want_kind[i]);
	}
	img_free(img);
}

/* ---- Names ---- */

/* The user name of `method` in the type chain `chain` (names outermost
 * first, separated by spaces) of namespace ns, and what the code is. */
static void check_within(const char *ns, const char *chain, const char *method, const char *want,
			 enum weave_within_kind kind, const char *local)
{
	char copy[256], *types[8], *save = NULL;
	struct lt_buf buf = LT_BUF_INIT;
	struct weave_within w;
	size_t n = 0;

	snprintf(copy, sizeof copy, "%s", chain);
	for (char *t = strtok_r(copy, " ", &save); t && n < 8; t = strtok_r(NULL, " ", &save))
		types[n++] = t;
	assert_int_equal(weave_names_user(ns, (const char *const *)types, n, method, &buf, &w), 0);
	assert_string_equal((const char *)buf.data, want);
	assert_int_equal(strlen(want), buf.len);
	assert_int_equal(w.kind, kind);
	if (local) {
		assert_int_equal(w.local_len, strlen(local));
		assert_memory_equal(w.local, local, w.local_len);
	}
	lt_buf_free(&buf);
}

static void check_name(const char *ns, const char *chain, const char *method, const char *want)
{
	check_within(ns, chain, method, want, WEAVE_WITHIN_NONE, NULL);
}

static void check_lambda(const char *ns, const char *chain, const char *method, const char *want)
{
	check_within(ns, chain, method, want, WEAVE_WITHIN_LAMBDA, NULL);
}

static void test_names_demangle(void **state)
{
	(void)state;
	check_name("Shop", "Program", "Main", "Shop.Program::Main");
	check_name("", "Program", "Main", "Program::Main");
	check_lambda("Shop", "Program <>c", "<Main>b__0_0", "Shop.Program::Main");
	check_lambda("Shop", "Program <>c__DisplayClass0_0", "<Main>b__0", "Shop.Program::Main");
	check_within("Shop", "Program", "<Main>g__Local|0_0", "Shop.Program::Main", WEAVE_WITHIN_LOCAL, "Local");
	check_name("", "Program", "<Main>$", "Program::Main");
	check_name("Shop", "Shop <Run>d__3", "MoveNext", "Shop.Shop::Run");
	check_name("Shop", "Shop <Items>d__4", "<>m__Finally1", "Shop.Shop::Items");
	check_name("Shop", "Shop <Items>d__4", "System.IDisposable.Dispose", "Shop.Shop::Items");
	check_lambda("", "Program <>c <<Main>b__0_0>d", "MoveNext", "Program::Main");
	check_within("", "Program <<Main>g__Local|0_1>d", "MoveNext", "Program::Main", WEAVE_WITHIN_LOCAL, "Local");
	check_name("Coll", "List`1 Node", "Add", "Coll.List`1+Node::Add");
	check_name("", "<Module>", ".cctor", "<Module>::.cctor");
	check_name("", "<>f__AnonymousType0`2", "Equals", "<>f__AnonymousType0`2::Equals");
	check_name("", "Program", "<Main", "Program::<Main");
	check_name("", "Program", "<>m__Finally1", "Program::<>m__Finally1");
	check_name("", "", "m", "::m");
	check_name("", "Shop VB$StateMachine_3_Run", "MoveNext", "Shop::Run");
	check_name("", "Shop _Closure$__3-0", "_Lambda$__3-0", "Shop::_Lambda$__3-0");
	check_lambda("Corpus", "Program makeCounter@32-1", "Invoke", "Corpus.Program::makeCounter");
	check_lambda("", "Program @12", "Invoke", "Program::Invoke");
	check_name("", "MonoLocks <Numbers>c__Iterator0", "MoveNext", "MonoLocks::Numbers");
	check_lambda("", "MonoLocks <Main>c__AnonStorey0", "<>m__0", "MonoLocks::Main");
	check_lambda("", "MonoLocks", "<Main>m__0", "MonoLocks::Main");
	check_name("", "Program", "<>m__0", "Program::<>m__0");
}

/* A name with what would split a line (legal in metadata, II.22) is
 * escaped; a long one is never cut. */
static void test_names_escaped(void **state)
{
	char long_name[3001];

	(void)state;
	check_name("", "Pro\ngram", "Ma\tin", "Pro\\ngram::Ma\\tin");
	check_name("", "P", "a\x01" "b\"c\\d\x7f", "P::a\\u0001b\\\"c\\\\d\\u007f");
	check_name("", "P", "x\xc2\x85y\xe2\x80\xa8z\xe2\x80\xa9", "P::x\\u0085y\\u2028z\\u2029");
	check_name("", "P", "caf\xc3\xa9\xe2\x82\xac", "P::caf\xc3\xa9\xe2\x82\xac"); /* other UTF-8 as it is */
	memset(long_name, 'm', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = '\0';
	{
		char want[3010];
		snprintf(want, sizeof want, "P::%s", long_name);
		check_name("", "P", long_name, want);
	}
}

/* A method of a nested type of System.dll is named Outer+Inner. */
static void test_names_nested_real(void **state)
{
	struct img *img = load(SYSTEM_DLL);
	struct weave_names names;
	const struct md_image *md = &img->md;
	struct lt_buf buf = LT_BUF_INIT;
	char want[512];
	uint32_t r, nested, outer, m = 0;
	const char *oname, *iname, *ons;

	(void)state;
	assert_int_equal(weave_names_init(&names, img), 0);
	for (r = 1; r <= md_rows(md, MD_NESTEDCLASS); r++) {
		nested = md_get(md, MD_NESTEDCLASS, r, MD_NESTEDCLASS_NESTEDCLASS);
		outer = md_get(md, MD_NESTEDCLASS, r, MD_NESTEDCLASS_ENCLOSINGCLASS);
		m = md_get(md, MD_TYPEDEF, nested, MD_TYPEDEF_METHODLIST);
		assert_int_equal(md_string(md, md_get(md, MD_TYPEDEF, outer, MD_TYPEDEF_NAME), &oname), 0);
		assert_int_equal(md_string(md, md_get(md, MD_TYPEDEF, outer, MD_TYPEDEF_NAMESPACE), &ons), 0);
		assert_int_equal(md_string(md, md_get(md, MD_TYPEDEF, nested, MD_TYPEDEF_NAME), &iname), 0);
		if (oname[0] != '<' && iname[0] != '<' && ons[0] && weave_names_owner(&names, m) == nested &&
		    names.enclosing[outer - 1] == 0)
			break;
	}
	assert_true(r <= md_rows(md, MD_NESTEDCLASS));
	assert_int_equal(weave_names_method(&names, m, &buf, NULL), 0);
	snprintf(want, sizeof want, "%s.%s+%s::", ons, oname, iname);
	assert_memory_equal(buf.data, want, strlen(want));
	lt_buf_free(&buf);
	weave_names_free(&names);
	img_free(img);
}

/* ---- Failure paths: System.dll with one thing broken ---- */

/* The first call of `kind`. */
static const struct weave_call *first_call(const struct weave_sites *sites, enum weave_kind kind)
{
	for (size_t i = 0; i < sites->n; i++)
		if (sites->calls[i].kind == kind)
			return &sites->calls[i];
	fail_msg("no call of kind %d", kind);
	return NULL;
}

/* The MemberRef row of the first Monitor.Enter(object) call. */
static uint32_t enter_ref(const struct weave_sites *sites)
{
	return md_token_row(first_call(sites, WEAVE_MONITOR_ENTER)->callee);
}

/* A #Strings index past the heap. */
static uint32_t bad_string(const struct img *img)
{
	return img->md.strings.orig_size + (uint32_t)img->md.strings.added.len + 0x1000;
}

/* Make the first Monitor.Enter MemberRef's parent a TypeSpec of `blob`. */
static void enter_via_typespec(struct img *img, const struct weave_sites *sites, const uint8_t *blob, uint32_t len,
			       uint32_t type)
{
	uint32_t ix = add_sig(img, blob, len, type), row, cell;

	assert_int_equal(md_append_row(&img->md, MD_TYPESPEC, &ix, &row), 0);
	assert_int_equal(md_coded_encode(MD_CI_MEMBERREFPARENT, md_token(MD_TYPESPEC, row), &cell), 0);
	md_set(&img->md, MD_MEMBERREF, enter_ref(sites), MD_MEMBERREF_CLASS, cell);
}

static void break_body(struct img *img, const struct weave_sites *sites)
{
	static const uint8_t bad[] = { 0x00 }; /* header kind 0: neither tiny nor fat */
	assert_int_equal(img_set_method_body(img, free_method(img, sites, 0), bad, sizeof bad), 0);
}

static void break_member_name(struct img *img, const struct weave_sites *sites)
{
	md_set(&img->md, MD_MEMBERREF, enter_ref(sites), MD_MEMBERREF_NAME, bad_string(img));
}

static void break_method_name(struct img *img, const struct weave_sites *sites)
{
	md_set(&img->md, MD_METHODDEF, sites->calls[0].methoddef, MD_METHODDEF_NAME, bad_string(img));
}

static void break_typedef_name(struct img *img, const struct weave_sites *sites)
{
	(void)sites;
	md_set(&img->md, MD_TYPEDEF, 1, MD_TYPEDEF_NAME, bad_string(img));
}

static void break_lock_signature(struct img *img, const struct weave_sites *sites)
{
	static const uint8_t bad[] = { 0x00, 0x05, SIG_VOID }; /* ParamCount 5, no params */
	md_set(&img->md, MD_MEMBERREF, enter_ref(sites), MD_MEMBERREF_SIGNATURE, add_sig(img, bad, sizeof bad, 0));
}

static void break_parent_tag(struct img *img, const struct weave_sites *sites)
{
	/* MemberRefParent has 3 tag bits and 5 tables: tag 7 names none (II.24.2.6). */
	md_set(&img->md, MD_MEMBERREF, enter_ref(sites), MD_MEMBERREF_CLASS, 1 << 3 | 7);
}

static void break_typeref_cycle(struct img *img, const struct weave_sites *sites)
{
	uint32_t parent, cell, mr = enter_ref(sites);

	assert_int_equal(md_coded_decode(MD_CI_MEMBERREFPARENT, md_get(&img->md, MD_MEMBERREF, mr, MD_MEMBERREF_CLASS), &parent), 0);
	assert_int_equal(md_coded_encode(MD_CI_RESOLUTIONSCOPE, parent, &cell), 0);
	md_set(&img->md, MD_TYPEREF, md_token_row(parent), MD_TYPEREF_RESOLUTIONSCOPE, cell);
}

static void break_typespec_blob(struct img *img, const struct weave_sites *sites)
{
	static const uint8_t truncated[] = { SIG_CLASS };
	enter_via_typespec(img, sites, truncated, sizeof truncated, 0);
}

static void break_typespec_token(struct img *img, const struct weave_sites *sites)
{
	static const uint8_t cls[] = { SIG_CLASS, TYPE_HERE };
	enter_via_typespec(img, sites, cls, sizeof cls, md_token(MD_TYPEREF, md_rows(&img->md, MD_TYPEREF) + 5));
}

static void break_typespec_row(struct img *img, const struct weave_sites *sites)
{
	uint32_t cell;
	assert_int_equal(md_coded_encode(MD_CI_MEMBERREFPARENT, md_token(MD_TYPESPEC, md_rows(&img->md, MD_TYPESPEC) + 1), &cell), 0);
	md_set(&img->md, MD_MEMBERREF, enter_ref(sites), MD_MEMBERREF_CLASS, cell);
}

static void break_method_list(struct img *img, const struct weave_sites *sites)
{
	uint32_t m = first_call(sites, WEAVE_MONITOR_ENTER_TAKEN)->methoddef;
	/* Every type up to the owner starts its methods after m: no run holds m. */
	for (uint32_t t = 1; t <= md_rows(&img->md, MD_TYPEDEF) && md_get(&img->md, MD_TYPEDEF, t, MD_TYPEDEF_METHODLIST) <= m; t++)
		md_set(&img->md, MD_TYPEDEF, t, MD_TYPEDEF_METHODLIST, m + 1);
}

static void break_nesting(struct img *img, const struct weave_sites *sites)
{
	struct weave_names names;
	uint32_t owner = 0, r;

	assert_int_equal(weave_names_init(&names, img), 0);
	for (size_t i = 0; i < sites->n && !owner; i++) {
		uint32_t t = weave_names_owner(&names, sites->calls[i].methoddef);
		owner = names.enclosing[t - 1] ? t : 0;
	}
	weave_names_free(&names);
	assert_int_not_equal(owner, 0);
	for (r = 1; md_get(&img->md, MD_NESTEDCLASS, r, MD_NESTEDCLASS_NESTEDCLASS) != owner; r++)
		;
	md_set(&img->md, MD_NESTEDCLASS, r, MD_NESTEDCLASS_ENCLOSINGCLASS, owner);
}

/* Replace a free void method's body with code[0..len) (and one EH clause)
 * calling Monitor.Enter(object) through token bytes 0xEE 0xEE 0xEE 0xEE;
 * returns the method's row. */
static uint32_t crafted(struct img *img, const struct weave_sites *sites, const uint8_t *code, uint32_t len,
		    const uint8_t *eh)
{
	uint32_t row = free_method(img, sites, 1);
	uint8_t buf[64];

	assert_true(len <= sizeof buf);
	memcpy(buf, code, len);
	for (uint32_t i = 0; i + 4 <= len; i++)
		if (lt_le32(buf + i) == 0xEEEEEEEE)
			lt_put32(buf + i, first_call(sites, WEAVE_MONITOR_ENTER)->callee);
	set_body(img, row, buf, len, eh);
	return row;
}

static void clause_at_call(struct img *img, const struct weave_sites *sites)
{
	/* IL_0000 ldnull; IL_0001 call Enter; IL_0006 leave.s IL_0009;
	 * IL_0008 endfinally; IL_0009 ret */
	static const uint8_t code[] = { 0x14, 0x28, 0xEE, 0xEE, 0xEE, 0xEE, 0xDE, 0x01, 0xDC, 0x2A };
	/* small clause (II.25.4.6): Flags, TryOffset 1, TryLength 7, HandlerOffset 8, HandlerLength 1, ClassToken */
	static const uint8_t eh[12] = { IL_EH_FINALLY, 0, 1, 0, 7, 8, 0, 1, 0, 0, 0, 0 };
	crafted(img, sites, code, sizeof code, eh);
}

static void prefix_before_call(struct img *img, const struct weave_sites *sites)
{
	/* IL_0000 ldnull; IL_0001 volatile.; IL_0003 call Enter; IL_0008 ret */
	static const uint8_t code[] = { 0x14, 0xFE, 0x13, 0x28, 0xEE, 0xEE, 0xEE, 0xEE, 0x2A };
	crafted(img, sites, code, sizeof code, NULL);
}

/* A corruption and the error weave_list (or weave_image, when weave) gives. */
struct corruption {
	const char *name;
	void (*apply)(struct img *img, const struct weave_sites *sites);
	int weave;
	int code;
	const char *msg;       /* a part of the message */
};

static const struct corruption corruptions[] = {
	{ "err_bad_body", break_body, 0, LT_E_BODY, "MethodDef row" },
	{ "err_member_name", break_member_name, 0, LT_E_METADATA, "#Strings" },
	{ "err_method_name", break_method_name, 0, LT_E_METADATA, "#Strings" },
	{ "err_typedef_name", break_typedef_name, 1, LT_E_METADATA, "TypeDef row 1" },
	{ "err_lock_signature", break_lock_signature, 0, LT_E_SIGNATURE, "ParamCount" },
	{ "err_parent_tag", break_parent_tag, 0, LT_E_METADATA, "MemberRef row" },
	{ "err_typeref_cycle", break_typeref_cycle, 0, LT_E_METADATA, "nested deeper" },
	{ "err_typespec_blob", break_typespec_blob, 0, LT_E_SIGNATURE, "TypeSpec row" },
	{ "err_typespec_token", break_typespec_token, 0, LT_E_METADATA, "not a TypeDef or TypeRef" },
	{ "err_typespec_row", break_typespec_row, 0, LT_E_METADATA, "TypeSpec token" },
	{ "err_method_list", break_method_list, 0, LT_E_METADATA, "MethodList" },
	{ "err_nested_cycle", break_nesting, 0, LT_E_METADATA, "NestedClass" },
	{ "err_clause_at_call", clause_at_call, 1, LT_E_WEAVE, "EH clause" },
	{ "err_prefix_before_call", prefix_before_call, 1, LT_E_WEAVE, "volatile." },
};
#define NCORRUPTIONS (sizeof corruptions / sizeof corruptions[0])

static void test_corruption(void **state)
{
	const struct corruption *c = *state;
	struct img *img = load(SYSTEM_DLL);
	struct weave_names names;
	struct weave_sites sites;
	enum weave_outcome outcome;
	struct listed l = { 0 };
	long nsites;

	find(img, &names, &sites);
	c->apply(img, &sites);
	release(&names, &sites);
	lt_error_clear();
	if (c->weave)
		assert_int_equal(weave_image(img, &opts, &outcome, &nsites, NULL), -1);
	else
		assert_int_equal(weave_list(img, on_site, &l), -1);
	print_message("%s\n", lt_error_last()->msg);
	assert_int_equal(lt_error_last()->code, c->code);
	assert_non_null(strstr(lt_error_last()->msg, c->msg));
	img_free(img);
}

/* ---- Weaving ---- */

/* The acquiring sites of s (synchronized methods aside), and in *calls all its calls. */
static long count_acquiring(const struct weave_sites *s, long *calls)
{
	long n = 0;

	*calls = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (s->calls[i].kind == WEAVE_SYNCHRONIZED)
			continue;
		(*calls)++;
		n += weave_kind_acquires(s->calls[i].kind);
	}
	return n;
}

/* In a woven image: calls to methods of the stub type, and those that
 * follow two ldstr. */
/* The value of an ldc.i4 form (a site id pushed before a stub call), or -1 for another op. */
static long site_id(const struct il_instr *in)
{
	if (in->op >= IL_LDC_I4_0 && in->op <= IL_LDC_I4_8)
		return (long)(in->op - IL_LDC_I4_0);
	return in->op == IL_LDC_I4_S || in->op == IL_LDC_I4 ? (long)in->arg.i : -1;
}

/* Whether a stub named `name` releases or waits (its arguments are the callee's alone). */
static int is_release_or_wait(const char *name)
{
	static const char *const kinds[] = { "Monitor_Exit", "Monitor_Wait", "Lock_Exit", "Scope_Dispose", "Synchronized_Exit" };

	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
		if (strncmp(name, kinds[k], strlen(kinds[k])) == 0)
			return 1;
	return 0;
}

/* Every stub call outside the stub type (*calls), and the acquiring ones with a site id
 * before them (*with_site): ids 0..nsites-1, each once. */
static void count_wrapper_calls(const struct img *img, long nsites, long *calls, long *with_site)
{
	const struct md_image *md = &img->md;
	struct weave_names names;
	uint32_t stub_type = md_rows(md, MD_TYPEDEF);
	uint8_t *seen = calloc((size_t)nsites + 1, 1);

	assert_non_null(seen);
	*calls = *with_site = 0;
	assert_int_equal(weave_names_is_ours(md, stub_type), 1);
	assert_int_equal(weave_names_init(&names, img), 0);
	for (uint32_t m = 1; m <= md_rows(md, MD_METHODDEF); m++) {
		const uint8_t *body;
		struct il_body b;
		size_t len;
		if (weave_names_owner(&names, m) == stub_type ||
		    (md_get(md, MD_METHODDEF, m, MD_METHODDEF_IMPLFLAGS) & 3) != 0)
			continue;
		assert_int_equal(img_method_body(img, m, &body, &len), 0);
		if (!body)
			continue;
		assert_int_equal(il_decode(body, len, &b), 0);
		for (uint32_t i = 0; i < b.n; i++) {
			uint32_t tok = b.ins[i].arg.token;
			if (b.ins[i].op != IL_CALL || md_token_table(tok) != MD_METHODDEF ||
			    weave_names_owner(&names, md_token_row(tok)) != stub_type)
				continue;
			(*calls)++;
			const char *name;
			assert_int_equal(md_string(md, md_get(md, MD_METHODDEF, md_token_row(tok), MD_METHODDEF_NAME), &name), 0);
			if (!is_release_or_wait(name) &&
			    i >= 1 && site_id(&b.ins[i - 1]) >= 0) {
				long id = site_id(&b.ins[i - 1]);
				assert_true(id < nsites && !seen[id]);
				seen[id] = 1;
				(*with_site)++;
			}
		}
		il_body_free(&b);
	}
	weave_names_free(&names);
	free(seen);
}

static void test_weave_system(void **state)
{
	struct img *img = load(SYSTEM_DLL), *woven;
	struct weave_names names;
	struct weave_sites sites;
	enum weave_outcome outcome;
	struct listed l = { 0 };
	long acquiring, calls, nsites = -1, wcalls, wsites;

	(void)state;
	find(img, &names, &sites);
	acquiring = count_acquiring(&sites, &calls);
	release(&names, &sites);
	assert_int_equal(weave_image(img, &opts, &outcome, &nsites, NULL), 0);
	assert_int_equal(outcome, WEAVE_WOVEN);
	assert_int_equal(nsites, acquiring);

	woven = reload(img);
	count_wrapper_calls(woven, acquiring, &wcalls, &wsites);
	assert_int_equal(wcalls, calls);
	assert_int_equal(wsites, acquiring);
	/* No lock call is left outside the stub type: the list of a woven assembly
	 * is its timed sites, read back from its site table. */
	assert_int_equal(weave_list(woven, on_woven_site, &l), acquiring);
	assert_int_equal(l.n, acquiring);
	assert_int_equal(weave_image(woven, &opts, &outcome, &nsites, NULL), 0);
	assert_int_equal(outcome, WEAVE_ALREADY_WOVEN);
	assert_int_equal(nsites, 0);
	img_free(woven);
	img_free(img);
}

static void test_weave_deterministic(void **state)
{
	struct lt_buf out[2] = { LT_BUF_INIT, LT_BUF_INIT };
	enum weave_outcome outcome;
	long nsites;

	(void)state;
	for (int k = 0; k < 2; k++) {
		struct img *img = load(SYSTEM_DLL);
		assert_int_equal(weave_image(img, &opts, &outcome, &nsites, NULL), 0);
		assert_int_equal(img_write(img, &out[k]), 0);
		img_free(img);
	}
	assert_int_equal(out[0].len, out[1].len);
	assert_memory_equal(out[0].data, out[1].data, out[0].len);
	lt_buf_free(&out[0]);
	lt_buf_free(&out[1]);
}

/* The site of id `want` among those weave_list gives (in id order for a woven assembly). */
struct nth_site {
	long want, at;
	struct weave_site found;
	char method[512];
};

static void site_of(void *ctx, const struct weave_site *s)
{
	struct nth_site *n = ctx;

	if (n->at++ == n->want) {
		n->found = *s;
		snprintf(n->method, sizeof n->method, "%s", s->method);
		n->found.method = n->method;
	}
}

static void test_weave_tail_and_branch(void **state)
{
	struct img *img = load(SYSTEM_DLL);
	struct weave_names names;
	enum weave_outcome outcome;
	/* IL_0000 ldnull; IL_0001 br.s IL_0003; IL_0003 tail.; IL_0005 call Enter; IL_000a ret */
	static const uint8_t code[] = { 0x14, 0x2B, 0x00, 0xFE, 0x14, 0x28, 0xEE, 0xEE, 0xEE, 0xEE, 0x2A };
	struct weave_sites sites;
	uint32_t row, ntypes;
	struct lt_buf name = LT_BUF_INIT;
	const uint8_t *body;
	struct il_body b;
	struct nth_site site = { 0 };
	size_t len;
	long nsites, id;

	(void)state;
	find(img, &names, &sites);
	row = crafted(img, &sites, code, sizeof code, NULL);
	release(&names, &sites);
	ntypes = md_rows(&img->md, MD_TYPEDEF);
	assert_int_equal(weave_image(img, &opts, &outcome, &nsites, NULL), 0);
	assert_int_equal(outcome, WEAVE_WOVEN);

	assert_int_equal(img_method_body(img, row, &body, &len), 0);
	assert_int_equal(il_decode(body, len, &b), 0);
	assert_int_equal(b.n, 5);
	assert_int_equal(b.ins[0].op, IL_LDNULL);
	assert_int_equal(b.ins[1].op, IL_BR_S);
	assert_int_equal(b.ins[1].arg.target, b.ins[2].id); /* the branch runs the site id */
	id = site_id(&b.ins[2]);
	assert_true(id >= 0);
	assert_int_equal(b.ins[3].op, IL_CALL);               /* tail. is gone */
	assert_int_equal(md_token_table(b.ins[3].arg.token), MD_METHODDEF);
	assert_int_equal(b.ins[4].op, IL_RET);
	/* call <LockTime>::stub, the last TypeDef; the site table names the method and the
	 * location (the input offset of the call) */
	assert_int_equal(weave_names_init(&names, img), 0);
	assert_int_equal(weave_names_owner(&names, md_token_row(b.ins[3].arg.token)), md_rows(&img->md, MD_TYPEDEF));
	assert_true(md_rows(&img->md, MD_TYPEDEF) > ntypes + 1); /* the run-time's types, then the stub type */
	assert_int_equal(weave_names_method(&names, row, &name, NULL), 0);
	weave_names_free(&names);
	site.want = id;
	assert_true(weave_list(img, site_of, &site) > id);
	assert_string_equal(site.found.method, (const char *)name.data);
	lt_buf_free(&name);
	assert_string_equal(site.found.location, "IL_0005");
	il_body_free(&b);
	img_free(img);
}

static void test_kinds(void **state)
{
	(void)state;
	for (int k = 0; k < WEAVE_KIND_COUNT; k++)
		assert_string_not_equal(weave_kind_name((enum weave_kind)k), "?");
	assert_string_equal(weave_kind_name(WEAVE_KIND_COUNT), "?");
	assert_true(weave_kind_acquires(WEAVE_MONITOR_TRYENTER));
	assert_true(weave_kind_acquires(WEAVE_LOCK_ENTERSCOPE));
	assert_true(weave_kind_acquires(WEAVE_SYNCHRONIZED));
	assert_false(weave_kind_acquires(WEAVE_MONITOR_EXIT));
	assert_false(weave_kind_acquires(WEAVE_SCOPE_DISPOSE));
	assert_false(weave_kind_acquires(WEAVE_MONITOR_WAIT));
	assert_false(weave_kind_acquires(WEAVE_KIND_COUNT));
	for (int k = WEAVE_RWS_ENTER_READ; k <= WEAVE_HANDLE_WAITALL; k++)
		assert_true(weave_kind_acquires((enum weave_kind)k));
	for (int k = WEAVE_RWS_EXIT_READ; k <= WEAVE_RWL_RESTORE; k++)
		assert_false(weave_kind_acquires((enum weave_kind)k));
	assert_string_equal(weave_kind_name(WEAVE_SEM_TRYWAITASYNC), "SemaphoreSlim.WaitAsync");
	assert_string_equal(weave_kind_name(WEAVE_RWS_ENTER_UPGRADEABLE), "ReaderWriterLockSlim.EnterUpgradeableReadLock");
}

int main(int argc, char **argv)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_system_sites),
		cmocka_unit_test(test_mscorlib_sites),
		cmocka_unit_test(test_facade_has_no_sites),
		cmocka_unit_test(test_lock_type_sites),
		cmocka_unit_test(test_more_lock_sites),
		cmocka_unit_test(test_mutex_receiver),
		cmocka_unit_test(test_names_demangle),
		cmocka_unit_test(test_names_escaped),
		cmocka_unit_test(test_names_nested_real),
		cmocka_unit_test(test_weave_system),
		cmocka_unit_test(test_weave_deterministic),
		cmocka_unit_test(test_weave_tail_and_branch),
	};
	struct CMUnitTest tests[sizeof fixed / sizeof fixed[0] + NCORRUPTIONS];
	size_t n = sizeof fixed / sizeof fixed[0];

	memcpy(tests, fixed, sizeof fixed);
	for (size_t i = 0; i < NCORRUPTIONS; i++)
		tests[n + i] = (struct CMUnitTest){ corruptions[i].name, test_corruption, NULL, NULL, (void *)&corruptions[i] };
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* tests/run.sh: one test by name */
	return _cmocka_run_group_tests("test_weave_sites", tests, n + NCORRUPTIONS, NULL, NULL);
}
