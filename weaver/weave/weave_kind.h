/* weave_kind.h - the kinds of lock calls LockTime finds: acquisitions, releases
 * and waits (docs/weaving.md lists the IL shapes). */
#ifndef WEAVE_KIND_H
#define WEAVE_KIND_H

/* What a lock site acquires or releases (docs/weaving.md lists the IL shapes). */
enum weave_kind {
	WEAVE_MONITOR_ENTER,        /* Monitor.Enter(object) */
	WEAVE_MONITOR_ENTER_TAKEN,  /* Monitor.Enter(object, ref bool) */
	WEAVE_MONITOR_TRYENTER,     /* the six Monitor.TryEnter overloads */
	WEAVE_LOCK_ENTER,           /* System.Threading.Lock.Enter() */
	WEAVE_LOCK_TRYENTER,        /* Lock.TryEnter(), (int), (TimeSpan) */
	WEAVE_LOCK_ENTERSCOPE,      /* Lock.EnterScope() (C# 13 lock on a Lock) */
	WEAVE_SYNCHRONIZED,         /* [MethodImpl(Synchronized)] method body */
	WEAVE_MONITOR_EXIT,         /* releases and waits: not acquisition sites */
	WEAVE_LOCK_EXIT,
	WEAVE_SCOPE_DISPOSE,
	WEAVE_MONITOR_WAIT,
	WEAVE_KIND_COUNT
};

/* Short name of a kind, as `locktime list` prints it ("Monitor.Enter"). */
const char *weave_kind_name(enum weave_kind k);

/* The first kind whose weave_kind_name is `name` into *out (kinds that
 * share a name, as the two Monitor.Enter overloads, give the first).
 * Returns 1, or 0 for a name of no kind. */
int weave_kind_of_name(const char *name, enum weave_kind *out);

/* 1 for the kinds that acquire a lock (listed as sites), 0 otherwise. */
int weave_kind_acquires(enum weave_kind k);

#endif
