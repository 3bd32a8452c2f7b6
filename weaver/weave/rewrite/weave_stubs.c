/* weave_stubs.c - the call-site stubs: one static timed twin per distinct lock API call, calling the merged run-time. */
#include "weave_stubs_int.h"
#include "weave_refs.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "sig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a wrapper does around the original call. */
enum role {
	ROLE_NONE, ROLE_ACQUIRE, ROLE_RELEASE, ROLE_WAIT,
	ROLE_ASYNC,  /* an acquisition that returns a Task: it ends when the task completes */
	ROLE_HANDLES /* WaitHandle.WaitAny / WaitAll: the run-time finds the Mutexes acquired among the handles */
};

/* The non-blocking twin of a blocking Enter (II.23.2.1 MethodRefSig),
 * named TryEnter: it throws what Enter throws for a null lock or a `taken`
 * already true, and acquires exactly when Enter would without waiting.
 * `reenter`: the twin's acquisition does not give the original's result
 * (Lock.EnterScope's Scope), so the original runs after it - it re-enters
 * (System.Threading.Lock is recursive) - and Exit releases the extra hold. */
struct fast_sig {
	uint8_t sig[6];
	uint8_t len;
	uint8_t reenter;
	const char *name;  /* the twin's name: NULL for "TryEnter" */
	uint8_t zero;      /* the twin takes a timeout after the lock arguments: 0 is passed */
};

/* ReaderWriterLockSlim.TryEnter*Lock(int32 millisecondsTimeout), the twins of Enter*Lock(), and
 * WaitHandle.WaitOne(int32), the twin of WaitOne() on a Mutex: given a timeout of 0. */
#define TRY_ZERO(name) { { SIG_HASTHIS, 1, SIG_BOOLEAN, SIG_I4 }, 4, 0, name, 1 }

/* Lock.Exit(), for the `reenter` twins. */
static const uint8_t lock_exit_sig[] = { SIG_HASTHIS, 0, SIG_VOID };

/* The calls of a fast path: the TryEnter twin, and Exit when it re-enters (else 0); for a try with a
 * timeout (TIME_TIMEOUT), the argument that is its timeout, and for a TimeSpan one TimeSpan's
 * get_TotalMilliseconds (span_ms, else 0), try_enter then its int32 twin. */
struct fast_calls {
	uint32_t try_enter, exit, timeout, span_ms;
};

static const struct kind_info {
	const char *name;     /* wrapper name; a second wrapper of the kind gets "_2"... */
	enum role role;
	uint8_t always;       /* acquiring kinds that cannot fail */
	uint8_t try_result;   /* acquiring kinds whose bool result says "acquired" */
	struct fast_sig fast; /* blocking Enter kinds: TryEnter's signature (len 0: none) */
	uint8_t hook;         /* the hook an acquisition calls (HK_ACQUIRED when 0), a release (HK_RELEASED when 0) */
	uint8_t waiting;      /* the hook before the blocking call (HK_WAITING when 0, HK_WAITING_TIMED before one with
			         a timeout); a release's before the original,
			         whose result (an object) the release hook is given instead of the lock (none when 0) */
	uint8_t value;        /* `this` is a managed pointer to a value type (Lock.Scope, SpinLock): no
			         object to pass; the hooks take none and no holder is looked for */
	uint8_t check;        /* the hook (bool, given argument 0) that says whether to time the call at all:
			         the front calls the original alone when it gives false (0: none) */
	uint8_t abandon;      /* the hook a filter around the timed call gives the exception to (a Mutex acquired
			         when it was abandoned: AbandonedMutexException); the exception goes on (0: none) */
	uint8_t in_async;     /* the hook an acquisition in an async state machine's MoveNext calls instead of
			         `hook`, in a stub of its own "<name>_InAsync" (0: the same stub everywhere) */
} kinds[WEAVE_KIND_COUNT] = {
	[WEAVE_MONITOR_ENTER] = { "Monitor_Enter", ROLE_ACQUIRE, 1, 0,
				  { { SIG_CONV_DEFAULT, 1, SIG_BOOLEAN, SIG_OBJECT }, 4 } },
	[WEAVE_MONITOR_ENTER_TAKEN] = { "Monitor_Enter_Taken", ROLE_ACQUIRE, 0, 0,
					{ { SIG_CONV_DEFAULT, 2, SIG_VOID, SIG_OBJECT, SIG_BYREF, SIG_BOOLEAN }, 6 } },
	[WEAVE_MONITOR_TRYENTER] = { "Monitor_TryEnter", ROLE_ACQUIRE, 0, 1, { { 0 }, 0 } },
	[WEAVE_LOCK_ENTER] = { "Lock_Enter", ROLE_ACQUIRE, 1, 0, { { SIG_HASTHIS, 0, SIG_BOOLEAN }, 3 } },
	[WEAVE_LOCK_TRYENTER] = { "Lock_TryEnter", ROLE_ACQUIRE, 0, 1, { { 0 }, 0 } },
	/* Only EnterScope makes a Scope: TryEnter, then EnterScope re-enters, then Exit. */
	[WEAVE_LOCK_ENTERSCOPE] = { "Lock_EnterScope", ROLE_ACQUIRE, 1, 0, { { SIG_HASTHIS, 0, SIG_BOOLEAN }, 3, 1 } },
	[WEAVE_SYNCHRONIZED] = { NULL, ROLE_NONE, 0, 0, { { 0 }, 0 } },
	[WEAVE_MONITOR_EXIT] = { "Monitor_Exit", ROLE_RELEASE, 0, 0, { { 0 }, 0 } },
	[WEAVE_LOCK_EXIT] = { "Lock_Exit", ROLE_RELEASE, 0, 0, { { 0 }, 0 } },
	[WEAVE_SCOPE_DISPOSE] = { "Scope_Dispose", ROLE_RELEASE, 0, 0, { { 0 }, 0 }, HK_RELEASED_SCOPE, 0, 1 },
	[WEAVE_MONITOR_WAIT] = { "Monitor_Wait", ROLE_WAIT, 0, 0, { { 0 }, 0 } },
	/* ReaderWriterLockSlim: a reader waits behind a writer only (Api.WaitingToRead). */
	[WEAVE_RWS_ENTER_READ] = { "RwSlim_EnterReadLock", ROLE_ACQUIRE, 1, 0, TRY_ZERO("TryEnterReadLock"),
				   HK_ACQUIRED_READ, HK_WAITING_TO_READ },
	[WEAVE_RWS_TRYENTER_READ] = { "RwSlim_TryEnterReadLock", ROLE_ACQUIRE, 0, 1, { { 0 }, 0 }, HK_ACQUIRED_READ,
				      HK_WAITING_TO_READ },
	[WEAVE_RWS_ENTER_WRITE] = { "RwSlim_EnterWriteLock", ROLE_ACQUIRE, 1, 0, TRY_ZERO("TryEnterWriteLock"), 0, 0 },
	[WEAVE_RWS_TRYENTER_WRITE] = { "RwSlim_TryEnterWriteLock", ROLE_ACQUIRE, 0, 1, { { 0 }, 0 }, 0, 0 },
	[WEAVE_RWS_ENTER_UPGRADEABLE] = { "RwSlim_EnterUpgradeableReadLock", ROLE_ACQUIRE, 1, 0,
					  TRY_ZERO("TryEnterUpgradeableReadLock"), HK_ACQUIRED_UPGRADEABLE,
					  HK_WAITING_TO_UPGRADE },
	[WEAVE_RWS_TRYENTER_UPGRADEABLE] = { "RwSlim_TryEnterUpgradeableReadLock", ROLE_ACQUIRE, 0, 1, { { 0 }, 0 },
					     HK_ACQUIRED_UPGRADEABLE, HK_WAITING_TO_UPGRADE },
	[WEAVE_RWS_EXIT_READ] = { "RwSlim_ExitReadLock", ROLE_RELEASE, 0, 0, { { 0 }, 0 }, HK_RELEASED_READ, 0 },
	[WEAVE_RWS_EXIT_WRITE] = { "RwSlim_ExitWriteLock", ROLE_RELEASE, 0, 0, { { 0 }, 0 }, 0, 0 },
	[WEAVE_RWS_EXIT_UPGRADEABLE] = { "RwSlim_ExitUpgradeableReadLock", ROLE_RELEASE, 0, 0, { { 0 }, 0 },
					 HK_RELEASED_UPGRADEABLE, 0 },
	/* Mutex.WaitOne, all five overloads (bool: acquired); WaitOne() blocks, with WaitOne(0) first. An
	 * AbandonedMutexException acquired the Mutex too. On a WaitHandle: the same when it is a Mutex. */
	[WEAVE_MUTEX_WAITONE] = { "Mutex_WaitOne", ROLE_ACQUIRE, 0, 1, TRY_ZERO("WaitOne"), 0, 0,
				  .abandon = HK_ABANDONED },
	[WEAVE_HANDLE_WAITONE] = { "Handle_WaitOne", ROLE_ACQUIRE, 0, 1, TRY_ZERO("WaitOne"), 0, 0,
				   .check = HK_IS_MUTEX, .abandon = HK_ABANDONED },
	[WEAVE_HANDLE_WAITANY] = { "Handle_WaitAny", ROLE_HANDLES, 0, 0, { { 0 }, 0 }, HK_ACQUIRED_ANY, 0,
				   .check = HK_ANY_MUTEX, .abandon = HK_ABANDONED_ANY },
	[WEAVE_HANDLE_WAITALL] = { "Handle_WaitAll", ROLE_HANDLES, 0, 0, { { 0 }, 0 }, HK_ACQUIRED_ALL, 0,
				   .check = HK_ANY_MUTEX, .abandon = HK_ABANDONED_ALL },
	[WEAVE_MUTEX_RELEASE] = { "Mutex_ReleaseMutex", ROLE_RELEASE, 0, 0, { { 0 }, 0 }, 0, 0 },
	/* SemaphoreSlim: Wait() with Wait(0) first; the hold is kept by the semaphore (any thread releases).
	 * In an async MoveNext the holder may await while it holds it: its hold is kept out of the lock order. */
	[WEAVE_SEM_WAIT] = { "Semaphore_Wait", ROLE_ACQUIRE, 1, 0, TRY_ZERO("Wait"), HK_ACQUIRED_SEMAPHORE, 0,
			     .in_async = HK_ACQUIRED_SEMAPHORE_IN_ASYNC },
	[WEAVE_SEM_TRYWAIT] = { "Semaphore_TryWait", ROLE_ACQUIRE, 0, 1, { { 0 }, 0 }, HK_ACQUIRED_SEMAPHORE, 0,
				.in_async = HK_ACQUIRED_SEMAPHORE_IN_ASYNC },
	[WEAVE_SEM_WAITASYNC] = { "Semaphore_WaitAsync", ROLE_ASYNC, 0, 0, { { 0 }, 0 }, HK_ACQUIRED_WHEN_DONE, 0 },
	[WEAVE_SEM_TRYWAITASYNC] = { "Semaphore_TryWaitAsync", ROLE_ASYNC, 0, 0, { { 0 }, 0 }, HK_ACQUIRED_WHEN_DONE, 0 },
	[WEAVE_SEM_RELEASE] = { "Semaphore_Release", ROLE_RELEASE, 0, 0, { { 0 }, 0 }, HK_RELEASED_SEMAPHORE,
				HK_RELEASING_SEMAPHORE },
	/* SpinLock, a struct called on a managed pointer: Enter(ref taken) with TryEnter(ref taken) first. */
	[WEAVE_SPIN_ENTER] = { "Spin_Enter", ROLE_ACQUIRE, 0, 0,
			       { { SIG_HASTHIS, 1, SIG_VOID, SIG_BYREF, SIG_BOOLEAN }, 5 }, HK_ACQUIRED_SPIN, 0, 1 },
	[WEAVE_SPIN_TRYENTER] = { "Spin_TryEnter", ROLE_ACQUIRE, 0, 1, { { 0 }, 0 }, HK_ACQUIRED_SPIN, 0, 1 },
	[WEAVE_SPIN_EXIT] = { "Spin_Exit", ROLE_RELEASE, 0, 0, { { 0 }, 0 }, HK_RELEASED_SPIN, 0, 1 },
	/* The old ReaderWriterLock: an upgrade is a write lock inside the read lock, a downgrade its end. */
	[WEAVE_RWL_ACQUIRE_READER] = { "RwLock_AcquireReaderLock", ROLE_ACQUIRE, 1, 0, { { 0 }, 0 }, HK_ACQUIRED_READ, 0 },
	[WEAVE_RWL_ACQUIRE_WRITER] = { "RwLock_AcquireWriterLock", ROLE_ACQUIRE, 1, 0, { { 0 }, 0 }, 0, 0 },
	[WEAVE_RWL_UPGRADE] = { "RwLock_UpgradeToWriterLock", ROLE_ACQUIRE, 1, 0, { { 0 }, 0 }, 0, 0 },
	[WEAVE_RWL_RELEASE_READER] = { "RwLock_ReleaseReaderLock", ROLE_RELEASE, 0, 0, { { 0 }, 0 }, HK_RELEASED_READ, 0 },
	[WEAVE_RWL_RELEASE_WRITER] = { "RwLock_ReleaseWriterLock", ROLE_RELEASE, 0, 0, { { 0 }, 0 }, 0, 0 },
	[WEAVE_RWL_DOWNGRADE] = { "RwLock_DowngradeFromWriterLock", ROLE_RELEASE, 0, 0, { { 0 }, 0 }, 0, 0 },
	/* ReleaseLock / RestoreLock: the thread's holds pause and go on, like a Monitor.Wait's gap. */
	[WEAVE_RWL_RELEASE_ALL] = { "RwLock_ReleaseLock", ROLE_RELEASE, 0, 0, { { 0 }, 0 }, HK_PAUSED, 0 },
	[WEAVE_RWL_RESTORE] = { "RwLock_RestoreLock", ROLE_RELEASE, 0, 0, { { 0 }, 0 }, HK_RESTORED, 0 },
};

/* How an acquiring wrapper learns that the lock was taken. */
enum acquired { ACQ_ALWAYS, ACQ_RESULT, ACQ_TAKEN };

/* How an acquiring wrapper measures the wait (docs/weaving.md). */
enum timing {
	TIME_WAIT,    /* a timestamp before and after the original: wait = t1 - t0 (a call with
	                 more arguments: its contention and holder are not known) */
	TIME_FAST,    /* blocking Enter: its TryEnter twin first; acquired there = wait 0
	                 and one timestamp, else TIME_WAIT around the original */
	TIME_NO_WAIT, /* TryEnter without a timeout never blocks: one timestamp before it, wait 0 */
	TIME_TIMEOUT, /* a try with a timeout: when it is -1 ms or more than 0 (a TimeSpan: up to
	                 int32's most ms), the call with an int32 0 first, else TIME_WAIT (0 is that
	                 try; an invalid one throws, and a try first could have taken the lock) */
};

/* Wrapper locals: 0 int64 t0, 1 int64 t1, 2 the callee's result (if any), then for a release with a
 * hook before the original, that hook's result (an object: w_token). */
enum { W_T0, W_T1, W_RESULT };

/* The index of the local that keeps a release's token: after the result, when there is one. */
static uint32_t w_token(int returns) { return returns ? W_RESULT + 1 : W_RESULT; }

/* The callee as the wrapper sees it. */
struct callee {
	uint32_t token;
	enum il_op op;            /* call or callvirt, as at the site */
	uint32_t owner;           /* declaring type: TypeRef or TypeDef token */
	struct sig_method *sig;   /* owned */
	uint32_t nargs;           /* `this` + params */
	int in_async;             /* the calls are in an async MoveNext, and the kind has an `in_async` hook */
};

/* The TypeDef whose method list holds MethodDef `row` (II.22.37). */
static int owner_of_methoddef(const struct md_image *md, uint32_t row, uint32_t *out)
{
	uint32_t n = md_rows(md, MD_TYPEDEF);

	for (uint32_t t = n; t >= 1; t--) {
		if (md_get(md, MD_TYPEDEF, t, MD_TYPEDEF_METHODLIST) <= row) {
			*out = md_token(MD_TYPEDEF, t);
			return 0;
		}
	}
	return lt_error_set(LT_E_WEAVE, "MethodDef row %u belongs to no TypeDef", row);
}

/* Decode the callee's owner and signature; refuse what no lock API is. */
static int decode_callee(const struct md_image *md, uint32_t token, struct callee *c)
{
	enum md_table_id t = md_token_table(token);
	uint32_t row = md_token_row(token), blob, len;
	const uint8_t *p;
	uint8_t conv;

	if (t == MD_METHODSPEC)
		return lt_error_set(LT_E_WEAVE, "callee 0x%08x: a generic method instantiation is no lock API", token);
	if ((t != MD_MEMBERREF && t != MD_METHODDEF) || row == 0 || row > md_rows(md, t))
		return lt_error_set(LT_E_WEAVE, "callee 0x%08x: not a MemberRef or MethodDef row", token);
	if (t == MD_MEMBERREF) {
		if (md_coded_decode(MD_CI_MEMBERREFPARENT, md_get(md, t, row, MD_MEMBERREF_CLASS), &c->owner) < 0)
			return -1;
		blob = md_get(md, t, row, MD_MEMBERREF_SIGNATURE);
	} else {
		if (owner_of_methoddef(md, row, &c->owner) < 0)
			return -1;
		blob = md_get(md, t, row, MD_METHODDEF_SIGNATURE);
	}
	if (md_token_table(c->owner) != MD_TYPEREF && md_token_table(c->owner) != MD_TYPEDEF)
		return lt_error_set(LT_E_WEAVE, "callee 0x%08x: declared on 0x%08x, not a TypeRef or TypeDef", token,
				    c->owner);
	if (md_blob(md, blob, &p, &len) < 0 || sig_method_decode(p, len, &c->sig) < 0)
		return lt_error_prefix("callee 0x%08x: ", token);
	conv = c->sig->conv;
	/* II.23.2.1-2: lock APIs are plain, non-generic, non-vararg methods. */
	if ((conv & SIG_CONV_MASK) != SIG_CONV_DEFAULT || (conv & (SIG_GENERIC | SIG_EXPLICITTHIS)))
		return lt_error_set(LT_E_WEAVE, "callee 0x%08x: calling convention 0x%02x is no lock API's", token, conv);
	c->token = token;
	c->nargs = c->sig->nparams + !!(conv & SIG_HASTHIS);
	return 0;
}

static int is_elem(const struct sig_type *t, uint8_t elem) { return t && t->elem == elem; }

/* How the wrapper of kind k tells that the lock was acquired. */
static int acquired_test(const struct callee *c, const struct kind_info *k, enum acquired *out)
{
	const struct sig_method *s = c->sig;
	const struct sig_type *last = s->nparams ? s->params[s->nparams - 1] : NULL;

	if (is_elem(last, SIG_BYREF) && is_elem(last->inner, SIG_BOOLEAN))
		*out = ACQ_TAKEN;
	else if (k->try_result && is_elem(s->ret, SIG_BOOLEAN))
		*out = ACQ_RESULT;
	else if (k->always)
		*out = ACQ_ALWAYS;
	else
		return lt_error_set(LT_E_WEAVE, "callee 0x%08x: %s without a bool result or ref bool taken", c->token,
				    k->name);
	return 0;
}

/* The type of argument 0 as the wrapper declares it. */
static const struct sig_type *arg0_type(const struct callee *c, const struct sig_type *this_type)
{
	return (c->sig->conv & SIG_HASTHIS) ? this_type : c->sig->nparams ? c->sig->params[0] : NULL;
}

/* The argument that is the timeout of a try with one beside its lock arguments (TryEnter(object,
 * int32), TryEnter(object, int32, ref bool), Lock.TryEnter(int32), Wait(int32), WaitOne(int32)...,
 * and their TimeSpan overloads: *span 1), whose timeout 0 tries without waiting; -1 for any other
 * call, -2 on malformed metadata. */
static int timeout_arg(const struct md_image *md, const struct callee *c, enum acquired acq, int returns, int *span)
{
	uint32_t lock_args = 1 + (acq == ACQ_TAKEN), hasthis = !!(c->sig->conv & SIG_HASTHIS), a;
	const struct sig_type *t;
	int named;

	*span = 0;
	if (c->nargs != lock_args + 1 || returns != (acq == ACQ_RESULT))
		return -1;
	a = acq == ACQ_TAKEN ? c->nargs - 2 : c->nargs - 1;
	t = c->sig->params[a - hasthis];
	if (is_elem(t, SIG_I4))
		return (int)a;
	if (!is_elem(t, SIG_VALUETYPE) || (named = wref_is_type(md, t->token, "System", "TimeSpan")) == 0)
		return -1;
	*span = 1;
	return named < 0 ? -2 : (int)a;
}

/* For a try with a TimeSpan timeout at argument a: its int32 twin (the same name, int32 in place of
 * the TimeSpan, on the same type) and TimeSpan.get_TotalMilliseconds, into *fast; 1, 0 when a
 * TypeDef (a core library's) lacks one, -1 on error. */
static int span_twins(struct md_image *md, const struct callee *c, uint32_t a, struct fast_calls *fast)
{
	static const uint8_t total_ms[] = { SIG_HASTHIS, 0, SIG_R8 };
	uint32_t hasthis = !!(c->sig->conv & SIG_HASTHIS), name;
	struct sig_type i4 = { .elem = SIG_I4 }, **params;
	struct sig_method m = *c->sig;
	struct lt_buf sig = LT_BUF_INIT;
	const char *callee_name;
	int found;

	name = md_get(md, md_token_table(c->token), md_token_row(c->token),
		      md_token_table(c->token) == MD_MEMBERREF ? MD_MEMBERREF_NAME : MD_METHODDEF_NAME);
	if (md_string(md, name, &callee_name) < 0)
		return -1;
	if (!(params = lt_calloc(m.nparams, sizeof *params)))
		return lt_nomem(NULL);
	memcpy(params, c->sig->params, m.nparams * sizeof *params);
	params[a - hasthis] = &i4;
	m.params = params;
	found = sig_method_encode(&m, &sig) < 0 ? -1
		: wref_method(md, c->owner, callee_name, sig.data, (uint32_t)sig.len, &fast->try_enter);
	if (found > 0)
		found = wref_method(md, c->sig->params[a - hasthis]->token, "get_TotalMilliseconds", total_ms,
				    sizeof total_ms, &fast->span_ms);
	free(params);
	lt_buf_free(&sig);
	return found;
}

/* Push the callee's arguments and call it as the site did. */
static void emit_original(struct em *e, const struct callee *c, int keep_result)
{
	for (uint32_t a = 0; a < c->nargs; a++)
		em_ldarg(e, a);
	em_tok(e, c->op, c->token);
	if (keep_result)
		em_stloc(e, W_RESULT);
}

/* if (Api.Off) return original(args); */
static void emit_off(struct weave_stubs *h, struct em *e, const struct callee *c)
{
	uint32_t timed = em_label(e);

	em_tok(e, IL_LDSFLD, h->hook[HK_OFF]);
	em_br(e, IL_BRFALSE, timed);
	emit_original(e, c, 0);
	em_op(e, IL_RET);
	em_mark(e, timed);
}

static void emit_timestamp(struct weave_stubs *h, struct em *e, uint32_t local)
{
	em_tok(e, IL_CALL, h->hook[HK_TICKS]);
	em_stloc(e, local);
}

/* The fast try: its twin given the lock arguments (the lock or `this`, and
 * `taken`), leaving "acquired" as a bool. */
static void emit_try(struct em *e, const struct callee *c, const struct kind_info *k, const struct fast_calls *fast,
		     enum acquired acq)
{
	em_ldarg(e, 0);
	if (acq == ACQ_TAKEN)
		em_ldarg(e, c->nargs - 1);
	if (k->fast.zero)
		em_i4(e, 0);
	em_tok(e, c->op, fast->try_enter);
	if (acq == ACQ_TAKEN) {
		em_ldarg(e, c->nargs - 1);
		em_op(e, IL_LDIND_U1);
	}
}

/* A SpinLock's kinds pass the run-time the SpinLock's address (the managed pointer `this`, conv.u:
 * a number, not tracked by the GC), by which an Exit on another thread finds the frame of the thread
 * that entered it (a SpinLock without owner tracking may be exited by any thread). */
static int is_spin(enum weave_kind kind)
{
	return kind == WEAVE_SPIN_ENTER || kind == WEAVE_SPIN_TRYENTER || kind == WEAVE_SPIN_EXIT;
}

static void emit_spin_address(struct em *e)
{
	em_ldarg(e, 0);
	em_op(e, IL_CONV_U);
}

/* Api.Acquired[Scope](lock, site, t0, t<acquired>, contended); a SpinLock's: AcquiredSpin(address, site, ...) */
static void emit_acquired(struct weave_stubs *h, struct em *e, const struct callee *c, enum weave_kind kind,
			  uint32_t acquired_local, int contended)
{
	if (!kinds[kind].value)
		em_ldarg(e, 0);
	else if (is_spin(kind))
		emit_spin_address(e);
	em_ldarg(e, c->nargs);
	em_ldloc(e, W_T0);
	em_ldloc(e, acquired_local);
	em_i4(e, contended);
	em_tok(e, IL_CALL, h->hook[kind == WEAVE_LOCK_ENTERSCOPE ? HK_ACQUIRED_SCOPE
				   : c->in_async            ? kinds[kind].in_async
				   : kinds[kind].hook       ? kinds[kind].hook
							    : HK_ACQUIRED]);
}

/* The end of a try first, taken: Api.Acquired...(lock, site, t0, t0, false), return r; then, at
 * `slow` (not taken), the waiting hook before the call that waits (none for a value type: no object). */
static void emit_taken_or_waiting(struct weave_stubs *h, struct em *e, const struct callee *c, enum weave_kind kind,
				  int returns, uint32_t slow, enum hhook waiting)
{
	emit_acquired(h, e, c, kind, W_T0, 0);
	if (returns)
		em_ldloc(e, W_RESULT);
	em_op(e, IL_RET);
	em_mark(e, slow);
	if (!kinds[kind].value) {
		em_ldarg(e, 0);
		em_ldarg(e, c->nargs);
		em_tok(e, IL_CALL, h->hook[waiting]);
	}
}

/* TIME_FAST: t0 = Ticks(); if (TryEnter(lock args)) { Api.Acquired(lock, site, t0, t0, false); return; }
 * or, for a twin that re-enters:
 *   if (TryEnter(lock args)) { r = original(args); Exit(args); Api.AcquiredScope(...); return r; }
 * then Api.Waiting(lock, site): the thread is about to block.  The clock is read
 * before the lock is taken, not inside it: the lock is not held longer for
 * it, and when the try fails t0 is where the wait began. */
static void emit_fast(struct weave_stubs *h, struct em *e, const struct callee *c, enum weave_kind kind,
		      const struct fast_calls *fast, enum acquired acq, int returns)
{
	uint32_t slow = em_label(e);

	emit_timestamp(h, e, W_T0);
	emit_try(e, c, &kinds[kind], fast, acq);
	em_br(e, IL_BRFALSE, slow);
	if (fast->exit) {
		emit_original(e, c, returns);
		emit_original(e, &(struct callee){ .token = fast->exit, .op = c->op, .nargs = c->nargs }, 0);
	} else if (returns) {
		/* a blocking call whose bool says "acquired" (Mutex.WaitOne()): the twin acquired */
		em_i4(e, 1);
		em_stloc(e, W_RESULT);
	}
	emit_taken_or_waiting(h, e, c, kind, returns, slow, kinds[kind].waiting ? kinds[kind].waiting : HK_WAITING);
}

/* An acquiring stub: if (Api.Off) return original(args); return
 * timed(args, site).  Small enough for the JIT to inline, and then, Off
 * being a static readonly field of an initialized class, to fold into a
 * plain call of the original (or of `timed`).  A kind with a `check`:
 * if (Api.Off || !check(arg 0)) return original(args). */
static void emit_front(struct weave_stubs *h, struct em *e, const struct callee *c, enum weave_kind kind,
		       uint32_t timed)
{
	uint32_t plain = em_label(e);

	if (!kinds[kind].check) {
		emit_off(h, e, c);
	} else {
		em_tok(e, IL_LDSFLD, h->hook[HK_OFF]);
		em_br(e, IL_BRTRUE, plain);
		em_ldarg(e, 0);
		em_tok(e, IL_CALL, h->hook[kinds[kind].check]);
		em_br(e, IL_BRFALSE, plain);
	}
	for (uint32_t a = 0; a < c->nargs + 1; a++)
		em_ldarg(e, a);
	em_tok(e, IL_CALL, timed);
	em_op(e, IL_RET);
	if (kinds[kind].check) {
		em_mark(e, plain);
		emit_original(e, c, 0);
		em_op(e, IL_RET);
	}
}

/* Between the front and the timed part of a kind with an `abandon` hook:
 * t0 = Ticks(); try { r = timed(args, site); } filter { abandon(exception,
 * arg 0, site, t0) } { pop; } return r.  The hook gives false, so the
 * handler is never entered and the exception goes on unchanged (II.19).
 * A method of its own: one with a clause is not inlined, the front is. */
static void emit_guard(struct weave_stubs *h, struct em *e, const struct callee *c, enum weave_kind kind,
		       uint32_t timed, int returns)
{
	uint32_t done = em_label(e);
	struct em_eh guard = { .kind = IL_EH_FILTER, .try_start = em_label(e), .filter_start = em_label(e),
			       .handler_start = em_label(e), .handler_end = done };

	guard.try_end = guard.filter_start;
	emit_timestamp(h, e, W_T0);
	em_mark(e, guard.try_start);
	for (uint32_t a = 0; a < c->nargs + 1; a++)
		em_ldarg(e, a);
	em_tok(e, IL_CALL, timed);
	if (returns)
		em_stloc(e, W_RESULT);
	em_br(e, IL_LEAVE, done);
	em_mark(e, guard.filter_start); /* the exception is on the stack */
	em_ldarg(e, 0);
	em_ldarg(e, c->nargs);
	em_ldloc(e, W_T0);
	em_tok(e, IL_CALL, h->hook[kinds[kind].abandon]);
	em_op(e, IL_ENDFILTER);
	em_mark(e, guard.handler_start);
	em_op(e, IL_POP);
	em_br(e, IL_LEAVE, done);
	em_eh(e, &guard);
	em_mark(e, done);
	if (returns)
		em_ldloc(e, W_RESULT);
	em_op(e, IL_RET);
}

/* WaitAny / WaitAll, timed: t0 = Ticks(); r = original(args); t1 = Ticks();
 * Api.Acquired{Any,All}(arg 0, r, site, t0, t1); return r. */
static void emit_handles(struct weave_stubs *h, struct em *e, const struct callee *c, enum weave_kind kind)
{
	emit_timestamp(h, e, W_T0);
	emit_original(e, c, 1);
	emit_timestamp(h, e, W_T1);
	em_ldarg(e, 0);
	em_ldloc(e, W_RESULT);
	em_ldarg(e, c->nargs);
	em_ldloc(e, W_T0);
	em_ldloc(e, W_T1);
	em_tok(e, IL_CALL, h->hook[kinds[kind].hook]);
	em_ldloc(e, W_RESULT);
	em_op(e, IL_RET);
}

/* The original call and its record: r = original(args); t1 = Ticks() (t0 for TIME_NO_WAIT); when it
 * acquired Api.Acquired...(lock, site, t0, t1, contended), else Api.NotAcquired(site, t0, t1); return r. */
static void emit_call_recorded(struct weave_stubs *h, struct em *e, const struct callee *c, enum weave_kind kind,
			       enum acquired acq, enum timing timing, int contended, int returns)
{
	uint32_t done = em_label(e), failed = em_label(e); /* failed: unused for ACQ_ALWAYS */

	emit_original(e, c, returns);
	if (timing == TIME_NO_WAIT) { /* it never blocks: t1 = t0, the wait is 0 */
		em_ldloc(e, W_T0);
		em_stloc(e, W_T1);
	} else {
		emit_timestamp(h, e, W_T1);
	}
	if (acq == ACQ_RESULT) {
		em_ldloc(e, W_RESULT);
		em_br(e, IL_BRFALSE, failed);
	} else if (acq == ACQ_TAKEN) {
		em_ldarg(e, c->nargs - 1);
		em_op(e, IL_LDIND_U1);
		em_br(e, IL_BRFALSE, failed);
	}
	emit_acquired(h, e, c, kind, W_T1, contended);
	if (acq != ACQ_ALWAYS) {
		em_br(e, IL_BR, done);
		em_mark(e, failed);
		em_ldarg(e, c->nargs);
		em_ldloc(e, W_T0);
		em_ldloc(e, W_T1);
		em_tok(e, IL_CALL, h->hook[HK_NOT_ACQUIRED]);
	}
	em_mark(e, done);
	if (returns)
		em_ldloc(e, W_RESULT);
	em_op(e, IL_RET);
}

/* The timeout of argument a as it is tested: an int32 itself, a TimeSpan's TotalMilliseconds (float64). */
static void emit_timeout(struct em *e, const struct fast_calls *fast, uint32_t a)
{
	if (fast->span_ms) {
		em_ldarga(e, a);
		em_tok(e, IL_CALL, fast->span_ms);
	} else {
		em_ldarg(e, a);
	}
}

/* A constant of the timeout's type: int32, or float64 for a TimeSpan's milliseconds. */
static void emit_timeout_const(struct em *e, const struct fast_calls *fast, int32_t ms)
{
	if (fast->span_ms)
		em_r8(e, ms);
	else
		em_i4(e, ms);
}

/* TIME_TIMEOUT, before the call: t0 = Ticks(); if (timeout == -1 ms || (timeout > 0 && (int32 or
 * timeout <= int32's most ms))) { the try (fast->try_enter: the call itself, or a TimeSpan's int32
 * twin) with an int32 0: acquired, Api.Acquired...(lock, site, t0, t0, false) and return; else the
 * waiting hook (HK_WAITING_TIMED unless the kind has one), and on to the call } else to `plain`. */
static void emit_timeout_try(struct weave_stubs *h, struct em *e, const struct callee *c, enum weave_kind kind,
			     enum acquired acq, const struct fast_calls *fast, int returns, uint32_t plain)
{
	uint32_t timeout = fast->timeout, now = em_label(e), slow = em_label(e);

	emit_timestamp(h, e, W_T0);
	emit_timeout(e, fast, timeout);
	emit_timeout_const(e, fast, -1);
	em_br(e, IL_BEQ, now);
	emit_timeout(e, fast, timeout);
	emit_timeout_const(e, fast, 0);
	em_br(e, IL_BLE, plain);
	if (fast->span_ms) { /* Monitor.TryEnter(object, TimeSpan) and the others throw past int32's ms */
		emit_timeout(e, fast, timeout);
		emit_timeout_const(e, fast, INT32_MAX);
		em_br(e, IL_BGT, plain);
	}
	em_mark(e, now);
	for (uint32_t a = 0; a < c->nargs; a++) {
		if (a == timeout)
			em_i4(e, 0);
		else
			em_ldarg(e, a);
	}
	em_tok(e, c->op, fast->try_enter);
	if (acq == ACQ_TAKEN) {
		em_ldarg(e, c->nargs - 1);
		em_op(e, IL_LDIND_U1);
	}
	em_br(e, IL_BRFALSE, slow);
	if (returns) {
		em_i4(e, 1);
		em_stloc(e, W_RESULT);
	}
	emit_taken_or_waiting(h, e, c, kind, returns, slow,
			      kinds[kind].waiting ? kinds[kind].waiting : HK_WAITING_TIMED);
}

/* docs/weaving.md, the timed part of an acquiring stub: args are the
 * callee's, then (int32 site); `fast` holds the twins for TIME_FAST.
 * contended: only past a failed try first is it known that the thread waited. */
static void emit_acquire(struct weave_stubs *h, struct em *e, const struct callee *c, enum weave_kind kind,
			 enum acquired acq, enum timing timing, const struct fast_calls *fast, int returns)
{
	if (timing == TIME_TIMEOUT) {
		uint32_t plain = em_label(e);
		emit_timeout_try(h, e, c, kind, acq, fast, returns, plain);
		emit_call_recorded(h, e, c, kind, acq, timing, 1, returns);
		em_mark(e, plain);
		emit_call_recorded(h, e, c, kind, acq, timing, 0, returns);
		return;
	}
	if (timing == TIME_FAST)
		emit_fast(h, e, c, kind, fast, acq, returns); /* sets t0 */
	else
		emit_timestamp(h, e, W_T0);
	emit_call_recorded(h, e, c, kind, acq, timing, timing == TIME_FAST, returns);
}

/* Releasing stub: if (!Api.Off) t0 = Ticks(); the original (its exceptions
 * are unchanged); if (!Api.Off) Api.Released(arg 0, t0) / Api.ReleasedScope(t0).
 * The hold ends at t0, read before the release: read after it, the hold took
 * in whatever came between - on a busy CPU the waiter the release woke ran
 * first, for a whole time slice, and holds of one lock overlapped.  A kind
 * with a hook before the original: if (!Api.Off) token = Api.Releasing...(arg 0)
 * before t0; then Api.Released...(token, t0) (token stays null when Off:
 * InitLocals).  RestoreLock takes the holds of ReleaseLock again, waiting for
 * them: its hook reads its own time, after (no t0). */
static void emit_release(struct weave_stubs *h, struct em *e, const struct callee *c, enum weave_kind kind,
			 int returns)
{
	uint32_t done = em_label(e), original = em_label(e);
	int timed = kinds[kind].hook != HK_RESTORED;

	if (kinds[kind].waiting || timed) {
		em_tok(e, IL_LDSFLD, h->hook[HK_OFF]);
		em_br(e, IL_BRTRUE, original);
	}
	if (kinds[kind].waiting) {
		em_ldarg(e, 0);
		em_tok(e, IL_CALL, h->hook[kinds[kind].waiting]);
		em_stloc(e, w_token(returns));
	}
	if (timed)
		emit_timestamp(h, e, W_T0);
	em_mark(e, original);
	emit_original(e, c, returns);
	em_tok(e, IL_LDSFLD, h->hook[HK_OFF]);
	em_br(e, IL_BRTRUE, done);
	if (kinds[kind].value) {
		if (is_spin(kind))
			emit_spin_address(e);
	} else if (kinds[kind].waiting) {
		em_ldloc(e, w_token(returns));
	} else {
		em_ldarg(e, 0);
	}
	if (timed)
		em_ldloc(e, W_T0);
	em_tok(e, IL_CALL, h->hook[kinds[kind].hook ? kinds[kind].hook : HK_RELEASED]);
	em_mark(e, done);
	if (returns)
		em_ldloc(e, W_RESULT);
	em_op(e, IL_RET);
}

/* WaitAsync stub: if (Api.Off) return original(args); t0 = Ticks(); task = original(args);
 * Api.AcquiredWhenDone(task, arg 0, site, t0); return task: the wait ends when the task completes
 * (at once, with no allocation, when it completed already). */
static void emit_async(struct weave_stubs *h, struct em *e, const struct callee *c, enum weave_kind kind)
{
	emit_off(h, e, c);
	emit_timestamp(h, e, W_T0);
	emit_original(e, c, 1);
	em_ldloc(e, W_RESULT);
	em_ldarg(e, 0);
	em_ldarg(e, c->nargs);
	em_ldloc(e, W_T0);
	em_tok(e, IL_CALL, h->hook[kinds[kind].hook]);
	em_ldloc(e, W_RESULT);
	em_op(e, IL_RET);
}

/* Monitor.Wait stub: Api.WaitBegins(arg 0); t0 = Ticks(); try { r = original(args); }
 * finally { Api.Waited(arg 0, Ticks() - t0); } return r: the time inside is no hold, however
 * Wait ends - it returns, times out, or throws (Thread.Interrupt's ThreadInterruptedException,
 * having taken the monitor back; any other exception): the exception goes on unchanged. */
static void emit_wait(struct weave_stubs *h, struct em *e, const struct callee *c, int returns)
{
	uint32_t done = em_label(e);
	struct em_eh waited = { .kind = IL_EH_FINALLY, .try_start = em_label(e), .handler_start = em_label(e),
				.handler_end = done };

	waited.try_end = waited.handler_start;
	emit_off(h, e, c);
	em_ldarg(e, 0);
	em_tok(e, IL_CALL, h->hook[HK_WAIT_BEGINS]);
	emit_timestamp(h, e, W_T0);
	em_mark(e, waited.try_start);
	emit_original(e, c, returns);
	em_br(e, IL_LEAVE, done);
	em_mark(e, waited.handler_start);
	em_ldarg(e, 0);
	em_tok(e, IL_CALL, h->hook[HK_TICKS]);
	em_ldloc(e, W_T0);
	em_op(e, IL_SUB);
	em_tok(e, IL_CALL, h->hook[HK_WAITED]);
	em_op(e, IL_ENDFINALLY);
	em_eh(e, &waited);
	em_mark(e, done);
	if (returns)
		em_ldloc(e, W_RESULT);
	em_op(e, IL_RET);
}

/* Build the wrapper's signature and locals (II.23.2.1, II.23.2.6): the
 * callee's `this` (CLASS owner, or BYREF VALUETYPE owner for Lock.Scope),
 * its params, and (int32 site) for acquiring kinds. */
static int wrapper_sigs(const struct callee *c, enum weave_kind kind, struct lt_buf *sig, struct lt_buf *locals)
{
	struct sig_type owner = { .elem = kinds[kind].value ? SIG_VALUETYPE : SIG_CLASS, .token = c->owner };
	struct sig_type by_ref = { .elem = SIG_BYREF, .inner = &owner }, site = { .elem = SIG_I4 };
	struct sig_type i8 = { .elem = SIG_I8 }, object = { .elem = SIG_OBJECT };
	const struct sig_type *this_type = kinds[kind].value ? &by_ref : &owner, *a0;
	int returns = c->sig->ret->elem != SIG_VOID;
	struct sig_type **params, *local_types[4] = { &i8, &i8, returns ? c->sig->ret : &object, &object };
	enum role role = kinds[kind].role;
	uint32_t n = c->nargs + (role == ROLE_ACQUIRE || role == ROLE_ASYNC || role == ROLE_HANDLES ? 1 : 0), k = 0;
	struct sig_method m = { .conv = SIG_CONV_DEFAULT, .ret = c->sig->ret, .sentinel = SIG_NO_SENTINEL };
	/* a release's token (w_token) after the result */
	struct sig_list l = { .kind = SIG_CONV_LOCAL_SIG,
			      .count = 2 + (uint32_t)returns + (role == ROLE_RELEASE && kinds[kind].waiting ? 1 : 0),
			      .types = local_types };
	int rc;

	a0 = arg0_type(c, this_type);
	if (!kinds[kind].value && !is_elem(a0, SIG_OBJECT) && !is_elem(a0, SIG_CLASS) &&
	    !(role == ROLE_HANDLES && is_elem(a0, SIG_SZARRAY)))
		return lt_error_set(LT_E_WEAVE, "callee 0x%08x: %s whose first argument is no object", c->token,
				    kinds[kind].name);
	if (!(params = lt_calloc(n, sizeof *params)))
		return lt_nomem(NULL);
	if (c->sig->conv & SIG_HASTHIS)
		params[k++] = (struct sig_type *)this_type;
	for (uint32_t i = 0; i < c->sig->nparams; i++)
		params[k++] = c->sig->params[i];
	if (k < n)
		params[k++] = &site;
	m.nparams = n;
	m.params = params;
	rc = sig_method_encode(&m, sig) < 0 || sig_list_encode(&l, locals) < 0 ? -1 : 0;
	free(params);
	return rc;
}

/* How the acquiring wrapper of kind k times c (enum timing); *fast gets
 * the twins for TIME_FAST: MemberRefs on the callee's TypeRef, or the
 * MethodDefs of the target's own Monitor / Lock (a core library). */
static int choose_timing(struct weave_stubs *h, const struct callee *c, const struct kind_info *k,
			 enum acquired acq, enum timing *timing, struct fast_calls *fast)
{
	/* The arguments that are no timeout: the lock (or `this`), `taken`. */
	uint32_t lock_args = 1 + (acq == ACQ_TAKEN);
	int found;

	*timing = TIME_WAIT;
	fast->try_enter = fast->exit = fast->timeout = fast->span_ms = 0;
	if (c->nargs != lock_args) {
		int span, a = k->try_result ? timeout_arg(&h->img->md, c, acq, c->sig->ret->elem != SIG_VOID, &span) : -1;
		if (a == -2)
			return -1;
		found = a < 0 ? 0 : span ? span_twins(&h->img->md, c, (uint32_t)a, fast) : 1;
		if (found > 0) {
			if (!span)
				fast->try_enter = c->token;
			fast->timeout = (uint32_t)a;
			*timing = TIME_TIMEOUT;
		}
		return found < 0 ? -1 : 0;
	}
	if (k->try_result && !k->fast.len) { /* a TryEnter without a timeout */
		*timing = TIME_NO_WAIT;
		return 0;
	}
	if (!k->fast.len)
		return 0;
	found = wref_method(&h->img->md, c->owner, k->fast.name ? k->fast.name : "TryEnter", k->fast.sig, k->fast.len,
			    &fast->try_enter);
	if (found > 0 && k->fast.reenter)
		found = wref_method(&h->img->md, c->owner, "Exit", lock_exit_sig, sizeof lock_exit_sig, &fast->exit);
	if (found > 0)
		*timing = TIME_FAST;
	return found < 0 ? -1 : 0;
}

/* Append the wrapper method for c and emit its body. */
static int add_wrapper(struct weave_stubs *h, const struct callee *c, enum weave_kind kind, uint32_t *out)
{
	const struct kind_info *k = &kinds[kind];
	struct lt_buf sig = LT_BUF_INIT, locals = LT_BUF_INIT;
	int returns = c->sig->ret->elem != SIG_VOID, rc = -1;
	uint32_t timed = 0;
	struct fast_calls fast = { 0, 0, 0, 0 };
	enum acquired acq = ACQ_ALWAYS;
	enum timing timing = TIME_WAIT;
	char name[64], timed_name[72];
	struct em e;

	em_init(&e);
	if (wrapper_sigs(c, kind, &sig, &locals) < 0 ||
	    (k->role == ROLE_ACQUIRE &&
	     (acquired_test(c, k, &acq) < 0 || choose_timing(h, c, k, acq, &timing, &fast) < 0)))
		goto done;
	if (h->named[kind]++)
		snprintf(name, sizeof name, "%s%s_%u", k->name, c->in_async ? "_InAsync" : "", h->named[kind]);
	else
		snprintf(name, sizeof name, "%s%s", k->name, c->in_async ? "_InAsync" : "");
	if (weave_stubs_add_method(h, name, HMA_ASSEMBLY | HMA_STATIC | HMA_HIDEBYSIG, sig.data, sig.len, out) < 0)
		goto done;
	if (k->role == ROLE_ACQUIRE || k->role == ROLE_HANDLES) {
		/* The timed part: a private method "<name>_Timed" of the same signature. */
		snprintf(timed_name, sizeof timed_name, "%s_Timed", name);
		if (weave_stubs_add_method(h, timed_name, HMA_PRIVATE | HMA_STATIC | HMA_HIDEBYSIG, sig.data,
					    sig.len, &timed) < 0)
			goto done;
		if (k->role == ROLE_HANDLES)
			emit_handles(h, &e, c, kind);
		else
			emit_acquire(h, &e, c, kind, acq, timing, &fast, returns);
		if (weave_stubs_add_body(h, timed, &e, locals.data, locals.len, returns) < 0)
			goto done;
		if (k->abandon) { /* "<name>_Guarded", between the front and the timed part */
			uint32_t guarded;
			em_init(&e);
			snprintf(timed_name, sizeof timed_name, "%s_Guarded", name);
			if (weave_stubs_add_method(h, timed_name, HMA_PRIVATE | HMA_STATIC | HMA_HIDEBYSIG, sig.data,
						    sig.len, &guarded) < 0)
				goto done;
			emit_guard(h, &e, c, kind, timed, returns);
			if (weave_stubs_add_body(h, guarded, &e, locals.data, locals.len, returns) < 0)
				goto done;
			timed = guarded;
		}
		em_init(&e);
		emit_front(h, &e, c, kind, timed);
		rc = weave_stubs_add_body(h, *out, &e, NULL, 0, returns);
	} else {
		if (k->role == ROLE_RELEASE)
			emit_release(h, &e, c, kind, returns);
		else if (k->role == ROLE_ASYNC)
			emit_async(h, &e, c, kind);
		else
			emit_wait(h, &e, c, returns);
		rc = weave_stubs_add_body(h, *out, &e, locals.data, locals.len, returns);
	}
	/* Fronts and releases are inlined at every site: with Api.Off set the
	 * JIT then folds them into the plain call (a release's Released call
	 * would otherwise keep it from inlining on its own). */
	if (rc == 0 && k->role != ROLE_WAIT)
		md_set(&h->img->md, MD_METHODDEF, md_token_row(*out), MD_METHODDEF_IMPLFLAGS, MIA_AGGRESSIVE_INLINING);
done:
	em_free(&e);
	lt_buf_free(&sig);
	lt_buf_free(&locals);
	return rc;
}

int weave_stubs_for_call(struct weave_stubs *h, uint32_t callee, enum weave_kind kind, int callvirt, int in_async,
			 uint32_t *out_token)
{
	struct callee c = { .op = callvirt ? IL_CALLVIRT : IL_CALL };
	int rc;

	if ((unsigned)kind >= WEAVE_KIND_COUNT || kinds[kind].role == ROLE_NONE)
		return lt_error_set(LT_E_WEAVE, "callee 0x%08x: kind %d has no wrapper", callee, (int)kind);
	c.in_async = in_async && kinds[kind].in_async;
	for (uint32_t i = 0; i < h->nwrappers; i++) {
		const struct hwrapper *w = &h->wrappers[i];
		if (w->callee == callee && w->callvirt == !!callvirt && w->kind == kind && w->in_async == c.in_async) {
			*out_token = w->token;
			return 0;
		}
	}
	if (lt_grow(&h->wrappers, &h->wrappers_cap, h->nwrappers + 1, sizeof *h->wrappers) < 0)
		return -1;
	rc = decode_callee(&h->img->md, callee, &c) < 0 || add_wrapper(h, &c, kind, out_token) < 0 ? -1 : 0;
	sig_method_free(c.sig);
	if (rc == 0)
		h->wrappers[h->nwrappers++] =
			(struct hwrapper){ callee, (uint8_t)!!callvirt, (uint8_t)kind, (uint8_t)c.in_async, *out_token };
	return rc;
}

/* Synchronized_Enter(object lock, int32 site):
 *   if (!Api.Off) { t = Ticks(); Api.Acquired(lock, site, t, t, false); }
 * Synchronized_Exit(object lock): if (!Api.Off) Api.Released(lock, Ticks())
 * (the method's last instruction: the monitor is released after it). */
static void emit_sync(struct weave_stubs *h, struct em *e, int enter)
{
	uint32_t done = em_label(e);

	em_tok(e, IL_LDSFLD, h->hook[HK_OFF]);
	em_br(e, IL_BRTRUE, done);
	em_ldarg(e, 0);
	if (enter) {
		em_ldarg(e, 1);
		em_tok(e, IL_CALL, h->hook[HK_TICKS]);
		em_op(e, IL_DUP);
		em_i4(e, 0);
		em_tok(e, IL_CALL, h->hook[HK_ACQUIRED]);
	} else {
		em_tok(e, IL_CALL, h->hook[HK_TICKS]);
		em_tok(e, IL_CALL, h->hook[HK_RELEASED]);
	}
	em_mark(e, done);
	em_op(e, IL_RET);
}

int weave_stubs_sync(struct weave_stubs *h, struct weave_sync_calls *out)
{
	static const uint8_t enter_sig[] = { SIG_CONV_DEFAULT, 2, SIG_VOID, SIG_OBJECT, SIG_I4 };
	static const uint8_t exit_sig[] = { SIG_CONV_DEFAULT, 1, SIG_VOID, SIG_OBJECT };
	uint16_t flags = HMA_ASSEMBLY | HMA_STATIC | HMA_HIDEBYSIG;
	uint32_t en, ex;
	struct em e;

	if (h->sync_enter == 0) {
		if (weave_stubs_add_method(h, "Synchronized_Enter", flags, enter_sig, sizeof enter_sig, &en) < 0 ||
		    weave_stubs_add_method(h, "Synchronized_Exit", flags, exit_sig, sizeof exit_sig, &ex) < 0)
			return -1;
		em_init(&e);
		emit_sync(h, &e, 1);
		if (weave_stubs_add_body(h, en, &e, NULL, 0, 0) < 0)
			return -1;
		em_init(&e);
		emit_sync(h, &e, 0);
		if (weave_stubs_add_body(h, ex, &e, NULL, 0, 0) < 0)
			return -1;
		h->sync_enter = en;
		h->sync_exit = ex;
	}
	out->enter = h->sync_enter;
	out->leave = h->sync_exit;
	out->type_of = h->hook[HK_TYPE_OF];
	return 0;
}
