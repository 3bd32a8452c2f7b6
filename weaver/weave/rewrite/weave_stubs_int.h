/* weave_stubs_int.h - what the files building the stub type <LockTime> share:
 * the merged run-time's entry points its call-site stubs call, its rows and bodies. */
#ifndef WEAVE_STUBS_INT_H
#define WEAVE_STUBS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "il_body.h"
#include "weave_emit.h"
#include "weave_internal.h"
#include "weave_merge.h"

/* The members of the merged run-time the stubs use (weaver/runtime/README.md,
 * "The hooks the weaver relies on"), by the template names of weave_hooks[]. */
enum hhook {
	HK_OFF,            /* static readonly bool Api.Off (a Field) */
	HK_TICKS,          /* int64 Clock.Ticks() */
	HK_ACQUIRED,       /* void Api.Acquired(object, int32 site, int64 start, int64 acquired, bool contended) */
	HK_ACQUIRED_SCOPE, /* the same for Lock.EnterScope */
	HK_WAITING,        /* void Api.Waiting(object, int32 site): the fast try failed, the thread blocks next */
	HK_RELEASED,       /* void Api.Released(object, int64 released): the time read before the original release */
	HK_RELEASED_SCOPE, /* void Api.ReleasedScope(int64 released) */
	HK_WAIT_BEGINS,    /* void Api.WaitBegins(object) */
	HK_WAITED,         /* void Api.Waited(object, int64 ticks) */
	HK_NOT_ACQUIRED,   /* void Api.NotAcquired(int32 site, int64 start, int64 end) */
	HK_TYPE_OF,        /* object Api.TypeOf(RuntimeTypeHandle): a static synchronized method's lock */
	HK_ACQUIRED_READ,  /* as HK_ACQUIRED, a read lock (ReaderWriterLockSlim.EnterReadLock...) */
	HK_ACQUIRED_UPGRADEABLE, /* as HK_ACQUIRED, an upgradeable read lock */
	HK_WAITING_TO_READ,      /* as HK_WAITING, before a blocking read lock call */
	HK_WAITING_TO_UPGRADE,   /* as HK_WAITING, before a blocking upgradeable read lock call */
	HK_WAITING_TIMED,        /* void Api.WaitingTimed(object, int32 site): as HK_WAITING, before a call with a
				    timeout, which ends: no deadlock is searched for through it */
	HK_RELEASED_READ,        /* void Api.ReleasedRead(object, int64 released) */
	HK_RELEASED_UPGRADEABLE, /* void Api.ReleasedUpgradeable(object, int64 released) */
	HK_ACQUIRED_SEMAPHORE,   /* as HK_ACQUIRED, SemaphoreSlim.Wait (its hold kept by the semaphore) */
	HK_ACQUIRED_SEMAPHORE_IN_ASYNC, /* the same inside an async state machine's MoveNext: no lock order */
	HK_ACQUIRED_WHEN_DONE,   /* void Api.AcquiredWhenDone(Task, object, int32 site, int64 start): WaitAsync */
	HK_RELEASING_SEMAPHORE,  /* object Api.ReleasingSemaphore(object): before the original Release */
	HK_RELEASED_SEMAPHORE,   /* void Api.ReleasedSemaphore(object, int64 released): after it, given what that returned */
	HK_ACQUIRED_SPIN,        /* void Api.AcquiredSpin(native int spin, int32 site, int64 start, int64 acquired, bool contended): SpinLock, its address */
	HK_RELEASED_SPIN,        /* void Api.ReleasedSpin(native int spin, int64 released) */
	HK_IS_MUTEX,             /* bool Handles.IsMutex(object): a WaitHandle.WaitOne stub times only a Mutex's */
	HK_ANY_MUTEX,            /* bool Handles.AnyMutex(object handles): a WaitAny / WaitAll stub times only arrays with a Mutex */
	HK_ACQUIRED_ANY,         /* void Api.AcquiredAny(object handles, int32 index, int32 site, int64 start, int64 end) */
	HK_ACQUIRED_ALL,         /* void Api.AcquiredAll(object handles, bool all, int32 site, int64 start, int64 end) */
	HK_ABANDONED,            /* bool Api.Abandoned(object exception, object mutex, int32 site, int64 start): a filter, false */
	HK_ABANDONED_ANY,        /* the same for WaitAny's handles */
	HK_ABANDONED_ALL,        /* the same for WaitAll's handles */
	HK_PAUSED,               /* void Api.Paused(object, int64 released): ReaderWriterLock.ReleaseLock released the thread's holds */
	HK_RESTORED,             /* void Api.Restored(object): RestoreLock took them again */
	HK_WATCH,                /* bool ExitOrder.Watch(): the exit hook subscribed before the program runs (weave_early.c) */
	HK_COUNT
};

/* A member of the run-time template the weaver relies on: its template name
 * ("Namespace.Type::Name", as in struct weave_subst) and signature ("static
 * bool", "void(object,int32)", "instance void(string,int32)"; class and value
 * types by full name). */
struct weave_hook {
	const char *name, *sig;
};

/* Every such member (weave_stub_hooks.c): weave_hooks[k] for k < HK_COUNT
 * is hook k, then the ones substituted or called by the site table. */
extern const struct weave_hook weave_hooks[];
extern const size_t weave_nhooks;

/* Check that the template `tmpl` has each of weave_hooks, once, with its
 * signature; each finding given to report() (may be NULL) as one line
 * ("LockTime.Runtime.Api::Released: missing (the weaver calls or rewrites it,
 * as void(object))", "...: signature void(), the weaver needs void(object)").
 * Returns the number of findings (0: all there), or -1 with LT_E_METADATA,
 * LT_E_SIGNATURE for malformed rows. */
long weave_stubs_check_hooks(const struct img *tmpl, void (*report)(void *ctx, const char *what), void *ctx);

/* A method whose body is encoded by weave_stubs_end. */
struct hbody {
	uint32_t row;          /* MethodDef row */
	struct il_body body;
};

struct hwrapper {
	uint32_t callee;
	uint8_t callvirt;
	uint8_t kind;          /* enum weave_kind */
	uint8_t in_async;      /* the stub of a kind with an `in_async` hook, for sites in an async MoveNext */
	uint32_t token;        /* the wrapper's MethodDef token */
};

struct weave_stubs {
	struct img *img;
	uint32_t hook[HK_COUNT];      /* Field / MethodDef tokens of the merged run-time */
	uint32_t typedef_row;
	struct hbody *bodies;
	uint32_t nbodies;
	size_t bodies_cap;
	struct hwrapper *wrappers;
	uint32_t nwrappers;
	size_t wrappers_cap;
	uint32_t named[WEAVE_KIND_COUNT]; /* wrappers named per kind, for unique names */
	uint32_t sync_enter, sync_exit;   /* MethodDef tokens of the synchronized-method pair, 0 until used */
	unsigned trim_unfit;              /* weave_merge_map's: attributes for the trimmer left out */
};

/* Method attributes (II.23.1.10). */
enum {
	HMA_PRIVATE = 0x0001, HMA_ASSEMBLY = 0x0003, HMA_STATIC = 0x0010, HMA_HIDEBYSIG = 0x0080,
};

/* Method implementation attributes (II.23.1.11; AggressiveInlining is
 * System.Runtime.CompilerServices.MethodImplOptions' 0x0100). */
enum { MIA_AGGRESSIVE_INLINING = 0x0100 };

/* Append a MethodDef row of the stub type: RVA 0 until written, IL
 * managed, `flags`, name, signature blob sig[0..len), ParamList one past the
 * last Param (no Param rows).  *out gets its token.
 * Returns 0, or -1 (LT_E_NOMEM, LT_E_LIMIT). */
int weave_stubs_add_method(struct weave_stubs *h, const char *name, uint16_t flags, const uint8_t *sig, size_t len,
		      uint32_t *out);

/* Finish e into the pending body of MethodDef `method` (encoded by
 * weave_stubs_end), with the LocalVarSig blob locals[0..len) (NULL: no
 * locals; an identical StandAloneSig row is reused, else one is appended).
 * `returns_value`: the method's RetType is not VOID.  e is freed.
 * Returns 0, or -1 (em_finish's errors, LT_E_NOMEM, LT_E_LIMIT). */
int weave_stubs_add_body(struct weave_stubs *h, uint32_t method, struct em *e, const uint8_t *locals, size_t len,
		    int returns_value);

/* The body of the run-time's SiteList.Load (WEAVE_SUBST_EMIT): ctx is the
 * struct weave_site_table; table.Begin(assembly, N), then per site
 * table.Define(id, method, location, file, line, kind), and for a site in
 * a lambda or local function table.Within(id, kind, method, what), every
 * argument a literal (weaver/runtime/README.md, "The site table").  Returns
 * 0, or -1 with LT_E_WEAVE (the template lacks SiteTable.Begin, Define or
 * Within), the
 * errors of img_string_token. */
int weave_stubs_site_list(void *ctx, struct img *target, const struct weave_merge_map *map, struct em *e);

#endif
