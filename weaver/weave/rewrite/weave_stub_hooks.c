/* weave_stub_hooks.c - the run-time template's members the weaver relies on, and their check. */
#include "weave_stubs_int.h"
#include "weave_merge_int.h"
#include "lt_error.h"
#include "sig.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Each member with the signature the weaver needs, as hook_sig prints it:
 * the call-site stubs call the entry points (enum hhook, first, by its
 * index), the merger substitutes the bodies of the others (weave_stub_type.c's
 * substitutions) and the site table's body calls SiteTable's two methods
 * (weave_stubs_site_list).  weaver/runtime/README.md, "The hooks the weaver
 * relies on". */
const struct weave_hook weave_hooks[] = {
	[HK_OFF] = { "LockTime.Runtime.Api::Off", "static bool" },
	[HK_TICKS] = { "LockTime.Runtime.Clock::Ticks", "int64()" },
	[HK_ACQUIRED] = { "LockTime.Runtime.Api::Acquired", "void(object,int32,int64,int64,bool)" },
	[HK_ACQUIRED_SCOPE] = { "LockTime.Runtime.Api::AcquiredScope", "void(object,int32,int64,int64,bool)" },
	[HK_WAITING] = { "LockTime.Runtime.Api::Waiting", "void(object,int32)" },
	[HK_RELEASED] = { "LockTime.Runtime.Api::Released", "void(object,int64)" },
	[HK_RELEASED_SCOPE] = { "LockTime.Runtime.Api::ReleasedScope", "void(int64)" },
	[HK_WAIT_BEGINS] = { "LockTime.Runtime.Api::WaitBegins", "void(object)" },
	[HK_WAITED] = { "LockTime.Runtime.Api::Waited", "void(object,int64)" },
	[HK_NOT_ACQUIRED] = { "LockTime.Runtime.Api::NotAcquired", "void(int32,int64,int64)" },
	[HK_TYPE_OF] = { "LockTime.Runtime.Api::TypeOf", "object(System.RuntimeTypeHandle)" },
	[HK_ACQUIRED_READ] = { "LockTime.Runtime.Api::AcquiredRead", "void(object,int32,int64,int64,bool)" },
	[HK_ACQUIRED_UPGRADEABLE] = { "LockTime.Runtime.Api::AcquiredUpgradeable", "void(object,int32,int64,int64,bool)" },
	[HK_WAITING_TO_READ] = { "LockTime.Runtime.Api::WaitingToRead", "void(object,int32)" },
	[HK_WAITING_TO_UPGRADE] = { "LockTime.Runtime.Api::WaitingToUpgrade", "void(object,int32)" },
	[HK_WAITING_TIMED] = { "LockTime.Runtime.Api::WaitingTimed", "void(object,int32)" },
	[HK_RELEASED_READ] = { "LockTime.Runtime.Api::ReleasedRead", "void(object,int64)" },
	[HK_RELEASED_UPGRADEABLE] = { "LockTime.Runtime.Api::ReleasedUpgradeable", "void(object,int64)" },
	[HK_ACQUIRED_SEMAPHORE] = { "LockTime.Runtime.Api::AcquiredSemaphore", "void(object,int32,int64,int64,bool)" },
	[HK_ACQUIRED_SEMAPHORE_IN_ASYNC] = { "LockTime.Runtime.Api::AcquiredSemaphoreInAsync",
					     "void(object,int32,int64,int64,bool)" },
	[HK_ACQUIRED_WHEN_DONE] = { "LockTime.Runtime.Api::AcquiredWhenDone",
				    "void(System.Threading.Tasks.Task,object,int32,int64)" },
	[HK_RELEASING_SEMAPHORE] = { "LockTime.Runtime.Api::ReleasingSemaphore", "object(object)" },
	[HK_RELEASED_SEMAPHORE] = { "LockTime.Runtime.Api::ReleasedSemaphore", "void(object,int64)" },
	[HK_ACQUIRED_SPIN] = { "LockTime.Runtime.Api::AcquiredSpin", "void(native int,int32,int64,int64,bool)" },
	[HK_RELEASED_SPIN] = { "LockTime.Runtime.Api::ReleasedSpin", "void(native int,int64)" },
	[HK_IS_MUTEX] = { "LockTime.Runtime.Handles::IsMutex", "bool(object)" },
	[HK_ANY_MUTEX] = { "LockTime.Runtime.Handles::AnyMutex", "bool(object)" },
	[HK_ACQUIRED_ANY] = { "LockTime.Runtime.Api::AcquiredAny", "void(object,int32,int32,int64,int64)" },
	[HK_ACQUIRED_ALL] = { "LockTime.Runtime.Api::AcquiredAll", "void(object,bool,int32,int64,int64)" },
	[HK_ABANDONED] = { "LockTime.Runtime.Api::Abandoned", "bool(object,object,int32,int64)" },
	[HK_ABANDONED_ANY] = { "LockTime.Runtime.Api::AbandonedAny", "bool(object,object,int32,int64)" },
	[HK_ABANDONED_ALL] = { "LockTime.Runtime.Api::AbandonedAll", "bool(object,object,int32,int64)" },
	[HK_PAUSED] = { "LockTime.Runtime.Api::Paused", "void(object,int64)" },
	[HK_RESTORED] = { "LockTime.Runtime.Api::Restored", "void(object)" },
	[HK_WATCH] = { "LockTime.Runtime.ExitOrder::Watch", "bool()" },
	{ "LockTime.Runtime.Clock::Frequency", "int64()" },
	{ "LockTime.Runtime.Baked::ThresholdMs", "string()" },
	{ "LockTime.Runtime.Baked::Output", "string()" },
	{ "LockTime.Runtime.Baked::Summary", "string()" },
	{ "LockTime.Runtime.Baked::Report", "string()" },
	{ "LockTime.Runtime.Baked::LockOrder", "string()" },
	{ "LockTime.Runtime.Baked::Lines", "string()" },
	{ "LockTime.Runtime.SiteList::Load", "void(LockTime.Runtime.SiteTable)" },
	{ "LockTime.Runtime.SiteTable::Begin", "instance void(string,int32)" },
	{ "LockTime.Runtime.SiteTable::Define", "instance void(int32,string,string,string,int32,string)" },
	{ "LockTime.Runtime.SiteTable::Within", "instance void(int32,string,string,string)" },
};
#define NHOOKS (sizeof weave_hooks / sizeof weave_hooks[0])
const size_t weave_nhooks = NHOOKS;

/* Text being built, truncated like snprintf. */
struct text {
	char *buf;
	size_t size, at;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->at >= t->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->at, t->size - t->at, fmt, ap);
	va_end(ap);
	t->at += n > 0 ? (size_t)n : 0;
}

/* A type of a template signature (II.23.2.12): a primitive by its IL name,
 * a class or value type by its full name, an SZARRAY as its element and
 * "[]"; anything else by its element type. */
static int type_text(const struct merge_index *x, const struct sig_type *s, struct text *t)
{
	const struct md_image *tm = x->tm;
	static const char *const names[] = {
		[SIG_VOID] = "void", [SIG_BOOLEAN] = "bool", [SIG_CHAR] = "char", [SIG_I1] = "int8",
		[SIG_U1] = "uint8", [SIG_I2] = "int16", [SIG_U2] = "uint16", [SIG_I4] = "int32",
		[SIG_U4] = "uint32", [SIG_I8] = "int64", [SIG_U8] = "uint64", [SIG_R4] = "float32",
		[SIG_R8] = "float64", [SIG_STRING] = "string", [SIG_I] = "native int", [SIG_U] = "native uint",
		[SIG_OBJECT] = "object",
	};
	char name[300];
	const char *ns, *n;

	if (s->elem < sizeof names / sizeof names[0] && names[s->elem]) {
		put(t, "%s", names[s->elem]);
		return 0;
	}
	if (s->elem == SIG_SZARRAY) {
		if (type_text(x, s->inner, t) < 0)
			return -1;
		put(t, "[]");
		return 0;
	}
	if ((s->elem != SIG_CLASS && s->elem != SIG_VALUETYPE) || md_token_row(s->token) == 0 ||
	    md_token_row(s->token) > md_rows(tm, md_token_table(s->token)) ||
	    (md_token_table(s->token) != MD_TYPEDEF && md_token_table(s->token) != MD_TYPEREF)) {
		put(t, "(element type 0x%02x)", s->elem);
		return 0;
	}
	if (md_token_table(s->token) == MD_TYPEDEF) {
		if (merge_type_name(x, md_token_row(s->token), name, sizeof name) < 0)
			return -1;
		put(t, "%s", name);
		return 0;
	}
	if (md_string(tm, md_get(tm, MD_TYPEREF, md_token_row(s->token), MD_TYPEREF_NAMESPACE), &ns) < 0 ||
	    md_string(tm, md_get(tm, MD_TYPEREF, md_token_row(s->token), MD_TYPEREF_NAME), &n) < 0)
		return -1;
	put(t, "%s%s%s", ns, ns[0] ? "." : "", n);
	return 0;
}

/* The signature of template Field or MethodDef `row` as weave_hooks gives
 * it: "static bool" (a field: "static " when it is static, II.23.1.5
 * 0x0010), "instance void(string,int32)" (a method: "instance " with
 * HASTHIS, II.23.2.1).  Returns 0, or -1 with LT_E_METADATA, LT_E_SIGNATURE. */
static int hook_sig(const struct merge_index *x, enum md_table_id table, uint32_t row, char *buf, size_t size)
{
	const struct md_image *tm = x->tm;
	struct text t = { buf, size, 0 };
	struct sig_method *m;
	const uint8_t *p;
	uint32_t len;
	int rc = 0;

	buf[0] = 0;
	if (md_blob(tm, md_get(tm, table, row, table == MD_FIELD ? MD_FIELD_SIGNATURE : MD_METHODDEF_SIGNATURE), &p,
		    &len) < 0)
		return -1;
	if (table == MD_FIELD) {
		struct sig_type *f;

		if (sig_field_decode(p, len, &f) < 0)
			return -1;
		put(&t, "%s", md_get(tm, MD_FIELD, row, MD_FIELD_FLAGS) & 0x0010 ? "static " : "");
		rc = type_text(x, f, &t);
		sig_type_free(f);
		return rc;
	}
	if (sig_method_decode(p, len, &m) < 0)
		return -1;
	put(&t, "%s", m->conv & SIG_HASTHIS ? "instance " : "");
	rc = type_text(x, m->ret, &t);
	put(&t, "(");
	for (uint32_t i = 0; rc == 0 && i < m->nparams; i++) {
		put(&t, "%s", i ? "," : "");
		rc = type_text(x, m->params[i], &t);
	}
	put(&t, ")");
	sig_method_free(m);
	return rc;
}

/* Where each of weave_hooks is in the template: the number of its Fields and
 * MethodDefs of that name, the last of them in table[i] and row[i]. */
struct found {
	unsigned count[NHOOKS];
	enum md_table_id table[NHOOKS];
	uint32_t row[NHOOKS];
};

static int find_hooks(const struct merge_index *x, struct found *f)
{
	const struct md_image *tm = x->tm;
	char buf[400];

	memset(f, 0, sizeof *f);
	for (unsigned k = 0; k < 2; k++) {
		enum md_table_id t = k ? MD_METHODDEF : MD_FIELD;

		for (uint32_t r = 1; r <= md_rows(tm, t); r++) {
			if (merge_member_name(x, t, r, buf, sizeof buf) < 0)
				return -1;
			for (size_t i = 0; i < NHOOKS; i++)
				if (strcmp(buf, weave_hooks[i].name) == 0) {
					f->count[i]++;
					f->table[i] = t;
					f->row[i] = r;
				}
		}
	}
	return 0;
}

/* weave_stubs_check_hooks over an indexed template. */
static long check_hooks(const struct merge_index *x, void (*report)(void *ctx, const char *what), void *ctx)
{
	char sig[300], what[800];
	struct found f;
	long n = 0;

	if (find_hooks(x, &f) < 0)
		return lt_error_prefix("the run-time template: ");
	for (size_t i = 0; i < NHOOKS; i++) {
		const struct weave_hook *h = &weave_hooks[i];

		if (f.count[i] == 1) {
			if (hook_sig(x, f.table[i], f.row[i], sig, sizeof sig) < 0)
				return lt_error_prefix("%s: ", h->name);
			if (strcmp(sig, h->sig) == 0)
				continue;
			snprintf(what, sizeof what, "%s: signature %s, the weaver needs %s", h->name, sig, h->sig);
		} else {
			snprintf(what, sizeof what, "%s: %s (the weaver calls or rewrites it, as %s)", h->name,
				 f.count[i] ? "overloaded" : "missing", h->sig);
		}
		n++;
		if (report)
			report(ctx, what);
	}
	return n;
}

long weave_stubs_check_hooks(const struct img *tmpl, void (*report)(void *ctx, const char *what), void *ctx)
{
	struct merge_index x;
	long n;

	if (merge_index_open(&tmpl->md, &x) < 0)
		return lt_error_prefix("the run-time template: ");
	n = check_hooks(&x, report, ctx);
	merge_index_close(&x);
	return n;
}
