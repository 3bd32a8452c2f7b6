/* weave_sites.c - finding the calls to lock APIs (Monitor, Lock, Lock.Scope, ReaderWriterLockSlim,
 * SemaphoreSlim, SpinLock, Mutex, ReaderWriterLock) in every method body. */
#include "weave_pass.h"
#include "il_body.h"
#include "image_body.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "sig.h"

#include <stdlib.h>
#include <string.h>

/* II.23.1.11 MethodImplAttributes. */
#define IMPL_CODE_TYPE_MASK 0x0003 /* 0 = IL */
#define IMPL_SYNCHRONIZED 0x0020
/* II.23.1.10 MethodAttributes. */
#define METHOD_STATIC 0x0010

/* A lock API by the shape of its signature: the return type, ':', then one
 * letter per parameter (see shape_type): "z:oi" is bool (object, int32). */
struct lock_api {
	const char *type;   /* namespace.name; a nested type as Outer/Inner */
	const char *method;
	uint8_t has_this;
	const char *shape;
	enum weave_kind kind;
	const char *receiver; /* the class the receiver must have (weave_receiver_class), NULL: any */
};

#define MONITOR "System.Threading.Monitor"
#define LOCK "System.Threading.Lock"
#define SCOPE "System.Threading.Lock/Scope"
#define RWSLIM "System.Threading.ReaderWriterLockSlim"
#define SEMSLIM "System.Threading.SemaphoreSlim"
#define SPIN "System.Threading.SpinLock"
#define MUTEX "System.Threading.Mutex"
#define WAITHANDLE "System.Threading.WaitHandle"
#define RWLOCK "System.Threading.ReaderWriterLock"

/* Two rows per timed overload pair: (int millisecondsTimeout) and (TimeSpan timeout). */
#define TIMED(type, method, ret, kind) { type, method, 1, ret ":i", kind, NULL }, { type, method, 1, ret ":T", kind, NULL }

static const struct lock_api lock_apis[] = {
	{ MONITOR, "Enter", 0, "v:o", WEAVE_MONITOR_ENTER, NULL },
	{ MONITOR, "Enter", 0, "v:o&z", WEAVE_MONITOR_ENTER_TAKEN, NULL },
	{ MONITOR, "TryEnter", 0, "z:o", WEAVE_MONITOR_TRYENTER, NULL },
	{ MONITOR, "TryEnter", 0, "v:o&z", WEAVE_MONITOR_TRYENTER, NULL },
	{ MONITOR, "TryEnter", 0, "z:oi", WEAVE_MONITOR_TRYENTER, NULL },
	{ MONITOR, "TryEnter", 0, "v:oi&z", WEAVE_MONITOR_TRYENTER, NULL },
	{ MONITOR, "TryEnter", 0, "z:oT", WEAVE_MONITOR_TRYENTER, NULL },
	{ MONITOR, "TryEnter", 0, "v:oT&z", WEAVE_MONITOR_TRYENTER, NULL },
	{ MONITOR, "Exit", 0, "v:o", WEAVE_MONITOR_EXIT, NULL },
	{ MONITOR, "Wait", 0, "z:o", WEAVE_MONITOR_WAIT, NULL },
	{ MONITOR, "Wait", 0, "z:oi", WEAVE_MONITOR_WAIT, NULL },
	{ MONITOR, "Wait", 0, "z:oT", WEAVE_MONITOR_WAIT, NULL },
	{ MONITOR, "Wait", 0, "z:oiz", WEAVE_MONITOR_WAIT, NULL },
	{ MONITOR, "Wait", 0, "z:oTz", WEAVE_MONITOR_WAIT, NULL },
	{ LOCK, "Enter", 1, "v:", WEAVE_LOCK_ENTER, NULL },
	{ LOCK, "TryEnter", 1, "z:", WEAVE_LOCK_TRYENTER, NULL },
	TIMED(LOCK, "TryEnter", "z", WEAVE_LOCK_TRYENTER),
	{ LOCK, "Exit", 1, "v:", WEAVE_LOCK_EXIT, NULL },
	{ LOCK, "EnterScope", 1, "S:", WEAVE_LOCK_ENTERSCOPE, NULL },
	{ SCOPE, "Dispose", 1, "v:", WEAVE_SCOPE_DISPOSE, NULL },
	{ RWSLIM, "EnterReadLock", 1, "v:", WEAVE_RWS_ENTER_READ, NULL },
	TIMED(RWSLIM, "TryEnterReadLock", "z", WEAVE_RWS_TRYENTER_READ),
	{ RWSLIM, "ExitReadLock", 1, "v:", WEAVE_RWS_EXIT_READ, NULL },
	{ RWSLIM, "EnterWriteLock", 1, "v:", WEAVE_RWS_ENTER_WRITE, NULL },
	TIMED(RWSLIM, "TryEnterWriteLock", "z", WEAVE_RWS_TRYENTER_WRITE),
	{ RWSLIM, "ExitWriteLock", 1, "v:", WEAVE_RWS_EXIT_WRITE, NULL },
	{ RWSLIM, "EnterUpgradeableReadLock", 1, "v:", WEAVE_RWS_ENTER_UPGRADEABLE, NULL },
	TIMED(RWSLIM, "TryEnterUpgradeableReadLock", "z", WEAVE_RWS_TRYENTER_UPGRADEABLE),
	{ RWSLIM, "ExitUpgradeableReadLock", 1, "v:", WEAVE_RWS_EXIT_UPGRADEABLE, NULL },
	{ SEMSLIM, "Wait", 1, "v:", WEAVE_SEM_WAIT, NULL },
	{ SEMSLIM, "Wait", 1, "v:C", WEAVE_SEM_WAIT, NULL },
	TIMED(SEMSLIM, "Wait", "z", WEAVE_SEM_TRYWAIT),
	{ SEMSLIM, "Wait", 1, "z:iC", WEAVE_SEM_TRYWAIT, NULL },
	{ SEMSLIM, "Wait", 1, "z:TC", WEAVE_SEM_TRYWAIT, NULL },
	{ SEMSLIM, "WaitAsync", 1, "K:", WEAVE_SEM_WAITASYNC, NULL },
	{ SEMSLIM, "WaitAsync", 1, "K:C", WEAVE_SEM_WAITASYNC, NULL },
	TIMED(SEMSLIM, "WaitAsync", "B", WEAVE_SEM_TRYWAITASYNC),
	{ SEMSLIM, "WaitAsync", 1, "B:iC", WEAVE_SEM_TRYWAITASYNC, NULL },
	{ SEMSLIM, "WaitAsync", 1, "B:TC", WEAVE_SEM_TRYWAITASYNC, NULL },
	{ SEMSLIM, "Release", 1, "i:", WEAVE_SEM_RELEASE, NULL },
	{ SEMSLIM, "Release", 1, "i:i", WEAVE_SEM_RELEASE, NULL },
	/* SpinLock is a struct: `this` is a managed pointer (ldflda or ldloca, then call). */
	{ SPIN, "Enter", 1, "v:&z", WEAVE_SPIN_ENTER, NULL },
	{ SPIN, "TryEnter", 1, "v:&z", WEAVE_SPIN_TRYENTER, NULL },
	{ SPIN, "TryEnter", 1, "v:i&z", WEAVE_SPIN_TRYENTER, NULL },
	{ SPIN, "TryEnter", 1, "v:T&z", WEAVE_SPIN_TRYENTER, NULL },
	{ SPIN, "Exit", 1, "v:", WEAVE_SPIN_EXIT, NULL },
	{ SPIN, "Exit", 1, "v:z", WEAVE_SPIN_EXIT, NULL },
	/* WaitOne is declared on WaitHandle (compilers name the declaring type in
	 * the MemberRef): a Mutex.WaitOne site when the receiver is statically a
	 * Mutex, a WaitHandle.WaitOne site (a Mutex's or not: told at run time)
	 * when it is statically a WaitHandle (check_receivers). */
	{ WAITHANDLE, "WaitOne", 1, "z:", WEAVE_MUTEX_WAITONE, MUTEX },
	{ WAITHANDLE, "WaitOne", 1, "z:i", WEAVE_MUTEX_WAITONE, MUTEX },
	{ WAITHANDLE, "WaitOne", 1, "z:T", WEAVE_MUTEX_WAITONE, MUTEX },
	{ WAITHANDLE, "WaitOne", 1, "z:iz", WEAVE_MUTEX_WAITONE, MUTEX },
	{ WAITHANDLE, "WaitOne", 1, "z:Tz", WEAVE_MUTEX_WAITONE, MUTEX },
	{ MUTEX, "WaitOne", 1, "z:", WEAVE_MUTEX_WAITONE, NULL },
	TIMED(MUTEX, "WaitOne", "z", WEAVE_MUTEX_WAITONE),
	{ MUTEX, "WaitOne", 1, "z:iz", WEAVE_MUTEX_WAITONE, NULL },
	{ MUTEX, "WaitOne", 1, "z:Tz", WEAVE_MUTEX_WAITONE, NULL },
	{ MUTEX, "ReleaseMutex", 1, "v:", WEAVE_MUTEX_RELEASE, NULL },
	TIMED(RWLOCK, "AcquireReaderLock", "v", WEAVE_RWL_ACQUIRE_READER),
	TIMED(RWLOCK, "AcquireWriterLock", "v", WEAVE_RWL_ACQUIRE_WRITER),
	TIMED(RWLOCK, "UpgradeToWriterLock", "L", WEAVE_RWL_UPGRADE),
	{ RWLOCK, "ReleaseReaderLock", 1, "v:", WEAVE_RWL_RELEASE_READER, NULL },
	{ RWLOCK, "ReleaseWriterLock", 1, "v:", WEAVE_RWL_RELEASE_WRITER, NULL },
	{ RWLOCK, "DowngradeFromWriterLock", 1, "v:&L", WEAVE_RWL_DOWNGRADE, NULL },
	{ RWLOCK, "ReleaseLock", 1, "L:", WEAVE_RWL_RELEASE_ALL, NULL },
	{ RWLOCK, "RestoreLock", 1, "v:&L", WEAVE_RWL_RESTORE, NULL },
	/* Static, over an array of handles: sites whatever the handles are (the stub looks for Mutexes). */
	{ WAITHANDLE, "WaitAny", 0, "i:H", WEAVE_HANDLE_WAITANY, NULL },
	{ WAITHANDLE, "WaitAny", 0, "i:Hi", WEAVE_HANDLE_WAITANY, NULL },
	{ WAITHANDLE, "WaitAny", 0, "i:HT", WEAVE_HANDLE_WAITANY, NULL },
	{ WAITHANDLE, "WaitAny", 0, "i:Hiz", WEAVE_HANDLE_WAITANY, NULL },
	{ WAITHANDLE, "WaitAny", 0, "i:HTz", WEAVE_HANDLE_WAITANY, NULL },
	{ WAITHANDLE, "WaitAll", 0, "z:H", WEAVE_HANDLE_WAITALL, NULL },
	{ WAITHANDLE, "WaitAll", 0, "z:Hi", WEAVE_HANDLE_WAITALL, NULL },
	{ WAITHANDLE, "WaitAll", 0, "z:HT", WEAVE_HANDLE_WAITALL, NULL },
	{ WAITHANDLE, "WaitAll", 0, "z:Hiz", WEAVE_HANDLE_WAITALL, NULL },
	{ WAITHANDLE, "WaitAll", 0, "z:HTz", WEAVE_HANDLE_WAITALL, NULL },
};
#define NAPIS (sizeof lock_apis / sizeof lock_apis[0])

/* Longest type name and shape compared; anything longer matches nothing. */
#define NAME_MAX_LEN 128
#define SHAPE_MAX_LEN 16

/* The full name of TypeDef, TypeRef or TypeSpec `token` into buf[0..
 * NAME_MAX_LEN) ("System.Threading.Lock/Scope"); "" for a type no lock API
 * has (generic instantiations, names too long).  Returns 0, or -1 with
 * LT_E_METADATA or LT_E_SIGNATURE. */
static int type_name(const struct weave_names *n, uint32_t token, char *buf)
{
	const struct md_image *md = &n->img->md;
	const char *parts[WEAVE_MAX_NESTING], *ns = "";
	size_t depth = 0, used = 0;

	buf[0] = '\0';
	if (md_token_table(token) == MD_TYPESPEC) {
		/* II.23.2.14: a TypeSpec of a plain CLASS or VALUETYPE names it. */
		uint32_t row = md_token_row(token), len;
		const uint8_t *p;
		struct sig_type *t;
		int rc = 0;
		if (row == 0 || row > md_rows(md, MD_TYPESPEC))
			return lt_error_set(LT_E_METADATA, "TypeSpec token 0x%08x out of range", token);
		if (md_blob(md, md_get(md, MD_TYPESPEC, row, MD_TYPESPEC_SIGNATURE), &p, &len) < 0 ||
		    sig_typespec_decode(p, len, &t) < 0)
			return lt_error_prefix("TypeSpec row %u: ", row);
		if ((t->elem == SIG_CLASS || t->elem == SIG_VALUETYPE) && md_token_table(t->token) != MD_TYPESPEC)
			rc = type_name(n, t->token, buf);
		sig_type_free(t);
		return rc;
	}
	/* Walk outwards: TypeRef through ResolutionScope (II.22.38), TypeDef
	 * through NestedClass (II.22.32). */
	while (token != 0) {
		enum md_table_id tab = md_token_table(token);
		uint32_t row = md_token_row(token), next = 0;
		if (depth == WEAVE_MAX_NESTING)
			return lt_error_set(LT_E_METADATA, "token 0x%08x: types nested deeper than %d (a cycle?)",
					    token, WEAVE_MAX_NESTING);
		if (tab == MD_TYPEREF && row >= 1 && row <= md_rows(md, MD_TYPEREF)) {
			uint32_t scope = md_get(md, MD_TYPEREF, row, MD_TYPEREF_RESOLUTIONSCOPE);
			if (md_string(md, md_get(md, MD_TYPEREF, row, MD_TYPEREF_NAME), &parts[depth]) < 0 ||
			    md_string(md, md_get(md, MD_TYPEREF, row, MD_TYPEREF_NAMESPACE), &ns) < 0)
				return lt_error_prefix("TypeRef row %u: ", row);
			/* A null ResolutionScope (0) is allowed (ExportedType lookup). */
			if (scope != 0 && md_coded_decode(MD_CI_RESOLUTIONSCOPE, scope, &next) < 0)
				return lt_error_prefix("TypeRef row %u: ", row);
			if (md_token_table(next) != MD_TYPEREF)
				next = 0;
		} else if (tab == MD_TYPEDEF && row >= 1 && row <= n->ntypes) {
			if (md_string(md, md_get(md, MD_TYPEDEF, row, MD_TYPEDEF_NAME), &parts[depth]) < 0 ||
			    md_string(md, md_get(md, MD_TYPEDEF, row, MD_TYPEDEF_NAMESPACE), &ns) < 0)
				return lt_error_prefix("TypeDef row %u: ", row);
			next = n->enclosing[row - 1] ? md_token(MD_TYPEDEF, n->enclosing[row - 1]) : 0;
		} else {
			return lt_error_set(LT_E_METADATA, "token 0x%08x is not a TypeDef or TypeRef row", token);
		}
		depth++;
		token = next;
	}
	/* ns is the outermost type's namespace; parts[depth - 1] the outermost type. */
	if (strlen(ns) + 1 >= NAME_MAX_LEN)
		return 0;
	used = strlen(ns);
	memcpy(buf, ns, used + 1);
	for (size_t i = depth; i-- > 0;) {
		size_t len = strlen(parts[i]);
		if (used + len + 2 > NAME_MAX_LEN) {
			buf[0] = '\0';
			return 0;
		}
		if (i + 1 < depth)
			buf[used++] = '/';
		else if (ns[0])
			buf[used++] = '.';
		memcpy(buf + used, parts[i], len + 1);
		used += len;
	}
	return 0;
}

#define TASK "System.Threading.Tasks.Task"

/* The shape letter of a CLASS or VALUETYPE (`elem`) named `name` (see shape_type). */
static char named_letter(uint8_t elem, const char *name)
{
	static const struct {
		uint8_t elem;
		char letter;
		const char *name;
	} named[] = {
		{ SIG_VALUETYPE, 'T', "System.TimeSpan" },
		{ SIG_VALUETYPE, 'S', SCOPE },
		{ SIG_VALUETYPE, 'C', "System.Threading.CancellationToken" },
		{ SIG_VALUETYPE, 'L', "System.Threading.LockCookie" },
		{ SIG_CLASS, 'K', TASK },
	};

	for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
		if (named[i].elem == elem && strcmp(named[i].name, name) == 0)
			return named[i].letter;
	return '?';
}

/* One letter for a parameter or return type of a lock API (custom
 * modifiers skipped): v void, z bool, o object, i int32, and by name
 * (II.23.2.12) T valuetype System.TimeSpan, S valuetype
 * System.Threading.Lock/Scope, C valuetype System.Threading.CancellationToken,
 * L valuetype System.Threading.LockCookie, K class
 * System.Threading.Tasks.Task, B the generic instance Task`1<bool>, H the
 * array System.Threading.WaitHandle[] (II.23.2.12 SZARRAY); '?' otherwise; a BYREF is '&' before its type.  Appends to shape[*len]. */
static int shape_type(const struct weave_names *n, const struct sig_type *t, char *shape, size_t *len)
{
	char name[NAME_MAX_LEN], c = '?';

	while (t->elem == SIG_CMOD_REQD || t->elem == SIG_CMOD_OPT)
		t = t->inner;
	if (*len + 3 > SHAPE_MAX_LEN) {
		shape[0] = '#'; /* longer than any lock API's: '#' starts none of theirs */
		return 0;
	}
	if (t->elem == SIG_BYREF) {
		shape[(*len)++] = '&';
		return shape_type(n, t->inner, shape, len);
	}
	switch (t->elem) {
	case SIG_VOID: c = 'v'; break;
	case SIG_BOOLEAN: c = 'z'; break;
	case SIG_OBJECT: c = 'o'; break;
	case SIG_I4: c = 'i'; break;
	case SIG_VALUETYPE:
	case SIG_CLASS:
		if (type_name(n, t->token, name) < 0)
			return -1;
		c = named_letter(t->elem, name);
		break;
	case SIG_SZARRAY: /* H: WaitHandle[] */
		if (t->inner->elem != SIG_CLASS)
			break;
		if (type_name(n, t->inner->token, name) < 0)
			return -1;
		c = strcmp(name, WAITHANDLE) == 0 ? 'H' : '?';
		break;
	case SIG_GENERICINST:
		if (t->inst != SIG_CLASS || t->nargs != 1 || t->args[0]->elem != SIG_BOOLEAN ||
		    md_token_table(t->token) == MD_TYPESPEC)
			break;
		if (type_name(n, t->token, name) < 0)
			return -1;
		c = strcmp(name, TASK "`1") == 0 ? 'B' : '?';
		break;
	default: break;
	}
	shape[(*len)++] = c;
	shape[*len] = '\0';
	return 0;
}

/* The shape of a method signature blob; "" for a generic or vararg method
 * (no lock API is one).  *has_this gets the HASTHIS bit. */
static int sig_shape(const struct weave_names *n, const uint8_t *p, uint32_t plen, char *shape, int *has_this)
{
	struct sig_method *m;
	size_t len = 0;
	uint32_t i;
	int rc = 0;

	shape[0] = '\0';
	if (sig_method_decode(p, plen, &m) < 0)
		return -1;
	*has_this = !!(m->conv & SIG_HASTHIS);
	if ((m->conv & (SIG_GENERIC | SIG_EXPLICITTHIS)) || (m->conv & SIG_CONV_MASK) != SIG_CONV_DEFAULT)
		goto done;
	if ((rc = shape_type(n, m->ret, shape, &len)) < 0)
		goto done;
	shape[len++] = ':';
	shape[len] = '\0';
	for (i = 0; i < m->nparams && rc == 0; i++)
		rc = shape_type(n, m->params[i], shape, &len);
done:
	sig_method_free(m);
	return rc;
}

/* The lock API that method token `token` names: 1 with *out its index in
 * lock_apis, 0 when it names none (MethodSpec: no lock API is generic), or
 * -1 with LT_E_METADATA or LT_E_SIGNATURE. */
static int classify(const struct weave_names *n, uint32_t token, size_t *out)
{
	const struct md_image *md = &n->img->md;
	uint32_t row = md_token_row(token), type = 0, name_ix, sig_ix, plen;
	char tname[NAME_MAX_LEN], shape[SHAPE_MAX_LEN] = "";
	const char *name;
	const uint8_t *p;
	int has_this = 0, have_shape = 0, named = 0;
	size_t i;

	if (md_token_table(token) == MD_MEMBERREF && row >= 1 && row <= md_rows(md, MD_MEMBERREF)) {
		name_ix = md_get(md, MD_MEMBERREF, row, MD_MEMBERREF_NAME);
		sig_ix = md_get(md, MD_MEMBERREF, row, MD_MEMBERREF_SIGNATURE);
		if (md_coded_decode(MD_CI_MEMBERREFPARENT, md_get(md, MD_MEMBERREF, row, MD_MEMBERREF_CLASS), &type) < 0)
			return lt_error_prefix("MemberRef row %u: ", row);
		/* II.22.25: a MethodDef parent is a vararg call site of that
		 * method; a ModuleRef parent a global function. */
		if (md_token_table(type) == MD_METHODDEF)
			type = md_token(MD_TYPEDEF, weave_names_owner(n, md_token_row(type)));
		else if (md_token_table(type) == MD_MODULEREF)
			return 0;
	} else if (md_token_table(token) == MD_METHODDEF && row >= 1 && row <= n->nmethods) {
		name_ix = md_get(md, MD_METHODDEF, row, MD_METHODDEF_NAME);
		sig_ix = md_get(md, MD_METHODDEF, row, MD_METHODDEF_SIGNATURE);
		type = md_token(MD_TYPEDEF, weave_names_owner(n, row));
	} else {
		return 0;
	}
	if (md_string(md, name_ix, &name) < 0)
		return lt_error_prefix("method token 0x%08x: ", token);
	/* Most names miss at the first letter: no call to strcmp for them. */
	for (i = 0; i < NAPIS && !named; i++)
		named = lock_apis[i].method[0] == name[0] && strcmp(lock_apis[i].method, name) == 0;
	if (!named || md_token_row(type) == 0)
		return 0;
	if (type_name(n, type, tname) < 0)
		return -1;
	for (i = 0; i < NAPIS; i++) {
		const struct lock_api *a = &lock_apis[i];
		if (strcmp(a->type, tname) != 0 || strcmp(a->method, name) != 0)
			continue;
		if (!have_shape &&
		    (md_blob(md, sig_ix, &p, &plen) < 0 || sig_shape(n, p, plen, shape, &has_this) < 0))
			return lt_error_prefix("method token 0x%08x: ", token);
		have_shape = 1;
		if (a->has_this == has_this && strcmp(a->shape, shape) == 0) {
			*out = i;
			return 1;
		}
	}
	return 0;
}

/* Classification cache: one byte per MemberRef and MethodDef row. */
enum { CACHE_UNKNOWN = 0, CACHE_NONE = 1, CACHE_API = 2 /* + index in lock_apis */ };
_Static_assert(CACHE_API + NAPIS <= UINT8_MAX, "a lock_apis index fits the cache byte");

/* A call found whose receiver's class decides whether it is a site. */
struct pending {
	size_t at;            /* its index in finder.out */
	const char *receiver; /* the class it must have */
};

struct finder {
	const struct weave_names *n;
	uint8_t *memberref, *methoddef; /* owned, index row - 1 */
	struct weave_sites *out;
	uint32_t row;                   /* the MethodDef being scanned */
	struct pending *pending;        /* owned: the calls of `row` to check */
	size_t npending, pending_cap;
};

static int classify_cached(struct finder *f, uint32_t token, const struct lock_api **out)
{
	uint32_t row = md_token_row(token);
	uint8_t *slot = NULL;
	size_t api = 0;
	int rc;

	if (md_token_table(token) == MD_MEMBERREF && row >= 1 && row <= md_rows(&f->n->img->md, MD_MEMBERREF))
		slot = &f->memberref[row - 1];
	else if (md_token_table(token) == MD_METHODDEF && row >= 1 && row <= f->n->nmethods)
		slot = &f->methoddef[row - 1];
	if (slot && *slot != CACHE_UNKNOWN) {
		*out = *slot == CACHE_NONE ? NULL : &lock_apis[*slot - CACHE_API];
		return *slot != CACHE_NONE;
	}
	rc = classify(f->n, token, &api);
	if (slot && rc >= 0)
		*slot = (uint8_t)(rc ? CACHE_API + api : CACHE_NONE);
	*out = rc > 0 ? &lock_apis[api] : NULL;
	return rc;
}

static int push(struct weave_sites *s, uint32_t row, uint32_t offset, enum weave_kind kind, uint32_t callee,
		int callvirt)
{
	if (lt_grow(&s->calls, &s->cap, s->n + 1, sizeof *s->calls) < 0)
		return -1;
	s->calls[s->n++] = (struct weave_call){ .methoddef = row, .il_offset = offset, .kind = kind, .callee = callee,
						.callvirt = (uint8_t)callvirt };
	return 0;
}

/* One call or callvirt of MethodDef f->row (il_scan_calls): a site when it
 * calls a lock API, to be checked by its receiver when the API says so. */
static int found_call(void *ctx, uint32_t offset, enum il_op op, uint32_t token)
{
	struct finder *f = ctx;
	const struct lock_api *api = NULL;
	int hit = classify_cached(f, token, &api);

	if (hit < 0)
		return lt_error_prefix("IL_%04x: ", offset);
	if (!hit)
		return 0;
	if (api->receiver) {
		if (lt_grow(&f->pending, &f->pending_cap, f->npending + 1, sizeof *f->pending) < 0)
			return -1;
		f->pending[f->npending++] = (struct pending){ f->out->n, api->receiver };
	}
	return push(f->out, f->row, offset, api->kind, token, op == IL_CALLVIRT);
}

/* The index in b of the instruction decoded at IL offset `offset`, or b->n. */
static uint32_t at_offset(const struct il_body *b, uint32_t offset)
{
	uint32_t lo = 0, hi = b->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (b->ins[mid].orig_offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->n && b->ins[lo].orig_offset == offset ? lo : b->n;
}

/* Drop the pending calls of MethodDef f->row whose receiver is not
 * statically of their class (weave_receiver_class; unknown: dropped). */
static int check_receivers(struct finder *f)
{
	struct weave_sites *s = f->out;
	struct il_body b;
	char name[NAME_MAX_LEN];
	size_t i, k, kept, first = f->pending[0].at;
	int rc = -1;

	if (img_decode_body(f->n->img, f->row, &b) < 0)
		return -1;
	for (i = 0; i < f->npending; i++) {
		struct weave_call *c = &s->calls[f->pending[i].at];
		uint32_t cls = 0;
		if (weave_receiver_class(f->n, f->row, &b, at_offset(&b, c->il_offset), &cls) < 0 ||
		    (cls && type_name(f->n, cls, name) < 0))
			goto done;
		/* Only WaitOne's rows name a receiver: on a WaitHandle (the declaring type
		 * itself) it may be a Mutex's, which the stub tells at run time. */
		if (cls && strcmp(name, WAITHANDLE) == 0)
			c->kind = WEAVE_HANDLE_WAITONE;
		else if (!cls || strcmp(name, f->pending[i].receiver) != 0)
			c->kind = WEAVE_KIND_COUNT; /* marked: not a site */
	}
	for (k = kept = first; k < s->n; k++)
		if (s->calls[k].kind != WEAVE_KIND_COUNT)
			s->calls[kept++] = s->calls[k];
	s->n = kept;
	rc = 0;
done:
	il_body_free(&b);
	f->npending = 0;
	return rc;
}

/* The lock calls of MethodDef `row`, appended to f->out. */
static int find_in_method(struct finder *f, uint32_t row)
{
	const struct md_image *md = &f->n->img->md;
	uint32_t impl = md_get(md, MD_METHODDEF, row, MD_METHODDEF_IMPLFLAGS);
	const uint8_t *body;
	size_t len;

	/* II.23.1.11: only IL bodies (CodeType 0) are read. */
	if ((impl & IMPL_CODE_TYPE_MASK) != 0)
		return 0;
	if (img_method_body(f->n->img, row, &body, &len) < 0)
		return -1;
	if (!body)
		return 0;
	if (impl & IMPL_SYNCHRONIZED) {
		/* An instance method of a value type has no object to lock. */
		uint32_t owner = weave_names_owner(f->n, row);
		int skip = owner && !(md_get(md, MD_METHODDEF, row, MD_METHODDEF_FLAGS) & METHOD_STATIC)
				   ? weave_names_is_valuetype(f->n, owner) : 0;
		if (skip < 0 || (!skip && push(f->out, row, 0, WEAVE_SYNCHRONIZED, 0, 0) < 0))
			return lt_error_prefix("MethodDef row %u: ", row);
	}
	f->row = row;
	f->npending = 0;
	/* Reading only calls: the full decode is for the bodies that have sites
	 * to check by their receiver. */
	if (il_scan_calls(body, len, found_call, f) < 0 || (f->npending && check_receivers(f) < 0))
		return lt_error_prefix("MethodDef row %u: ", row);
	return 0;
}

/* The lock types whose own methods (and their nested types') are no sites: their implementation
 * calls their own and Monitor's APIs (SemaphoreSlim.Wait() calls Wait(int, CancellationToken)), so a
 * woven framework would time one acquisition twice. */
static const char *const lock_types[] = { MONITOR, LOCK, RWSLIM, SEMSLIM, SPIN, MUTEX, WAITHANDLE, RWLOCK };

/* Whether TypeDef `row`, or the outermost type enclosing it (II.22.32), is one of lock_types: 1 or
 * 0, or -1 with LT_E_METADATA (a bad #Strings index, a nesting cycle). */
static int in_lock_type(const struct weave_names *n, uint32_t row)
{
	const struct md_image *md = &n->img->md;
	const char *name, *ns;
	size_t depth = 0, nslen;

	while (row >= 1 && row <= n->ntypes && n->enclosing[row - 1]) {
		if (++depth > WEAVE_MAX_NESTING)
			return lt_error_set(LT_E_METADATA, "TypeDef row %u: NestedClass chain deeper than %d (a cycle?)",
					    row, WEAVE_MAX_NESTING);
		row = n->enclosing[row - 1];
	}
	if (row == 0 || md_string(md, md_get(md, MD_TYPEDEF, row, MD_TYPEDEF_NAME), &name) < 0 ||
	    md_string(md, md_get(md, MD_TYPEDEF, row, MD_TYPEDEF_NAMESPACE), &ns) < 0)
		return row == 0 ? 0 : lt_error_prefix("TypeDef row %u: ", row);
	nslen = strlen(ns);
	for (size_t i = 0; i < sizeof lock_types / sizeof lock_types[0]; i++)
		if (strncmp(lock_types[i], ns, nslen) == 0 && lock_types[i][nslen] == '.' &&
		    strcmp(lock_types[i] + nslen + 1, name) == 0)
			return 1;
	return 0;
}

int weave_sites_find(const struct weave_names *names, struct weave_sites *out)
{
	const struct md_image *md = &names->img->md;
	struct finder f = { names, NULL, NULL, out, 0, NULL, 0, 0 };
	uint32_t row, stub_type = 0, t;
	uint8_t *skip = NULL; /* per TypeDef row: its methods are not searched */
	int rc = -1;

	memset(out, 0, sizeof *out);
	f.memberref = lt_calloc(md_rows(md, MD_MEMBERREF) + 1, 1);
	f.methoddef = lt_calloc(names->nmethods + 1, 1);
	if (!f.memberref || !f.methoddef) {
		lt_nomem(NULL);
		goto done;
	}
	for (t = 1; t <= names->ntypes && !stub_type; t++) {
		int is = weave_names_is_ours(md, t);
		if (is < 0)
			goto done;
		stub_type = is ? t : 0;
	}
	if (!(skip = lt_calloc(names->ntypes + 1, 1))) {
		lt_nomem(NULL);
		goto done;
	}
	for (t = 1; t <= names->ntypes; t++) {
		int own = in_lock_type(names, t);
		if (own < 0)
			goto done;
		skip[t] = (uint8_t)(own || t == stub_type);
	}
	for (row = 1; row <= names->nmethods; row++) {
		uint32_t owner = weave_names_owner(names, row);
		if (!skip[owner] && find_in_method(&f, row) < 0)
			goto done;
	}
	rc = 0;
done:
	free(skip);
	free(f.memberref);
	free(f.methoddef);
	free(f.pending);
	if (rc < 0)
		weave_sites_free(out);
	return rc;
}

void weave_sites_free(struct weave_sites *s)
{
	if (!s)
		return;
	free(s->calls);
	memset(s, 0, sizeof *s);
}
