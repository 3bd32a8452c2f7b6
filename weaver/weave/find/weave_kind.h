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
	WEAVE_RWS_ENTER_READ,       /* ReaderWriterLockSlim.EnterReadLock() */
	WEAVE_RWS_TRYENTER_READ,    /* ReaderWriterLockSlim.TryEnterReadLock(int), (TimeSpan) */
	WEAVE_RWS_ENTER_WRITE,      /* ...EnterWriteLock() */
	WEAVE_RWS_TRYENTER_WRITE,   /* ...TryEnterWriteLock(int), (TimeSpan) */
	WEAVE_RWS_ENTER_UPGRADEABLE,    /* ...EnterUpgradeableReadLock() */
	WEAVE_RWS_TRYENTER_UPGRADEABLE, /* ...TryEnterUpgradeableReadLock(int), (TimeSpan) */
	WEAVE_SEM_WAIT,             /* SemaphoreSlim.Wait(), (CancellationToken): void */
	WEAVE_SEM_TRYWAIT,          /* SemaphoreSlim.Wait(int|TimeSpan [, CancellationToken]): bool */
	WEAVE_SEM_WAITASYNC,        /* SemaphoreSlim.WaitAsync(), (CancellationToken): Task */
	WEAVE_SEM_TRYWAITASYNC,     /* SemaphoreSlim.WaitAsync(int|TimeSpan [, CancellationToken]): Task<bool> */
	WEAVE_SPIN_ENTER,           /* SpinLock.Enter(ref bool) (a struct: called on a managed pointer) */
	WEAVE_SPIN_TRYENTER,        /* SpinLock.TryEnter(ref bool), (int, ref bool), (TimeSpan, ref bool) */
	WEAVE_MUTEX_WAITONE,        /* WaitOne's five overloads on a Mutex (see weave_sites_find) */
	WEAVE_RWL_ACQUIRE_READER,   /* ReaderWriterLock.AcquireReaderLock(int), (TimeSpan) */
	WEAVE_RWL_ACQUIRE_WRITER,   /* ReaderWriterLock.AcquireWriterLock(int), (TimeSpan) */
	WEAVE_RWL_UPGRADE,          /* ReaderWriterLock.UpgradeToWriterLock(int), (TimeSpan) */
	WEAVE_HANDLE_WAITONE,       /* WaitOne's five overloads on a value statically a WaitHandle: a Mutex's when
	                               the stub finds one at run time (Handles.IsMutex), else the plain call */
	WEAVE_HANDLE_WAITANY,       /* WaitHandle.WaitAny(WaitHandle[] [, int|TimeSpan [, bool]]): the Mutex at the index it gives */
	WEAVE_HANDLE_WAITALL,       /* WaitHandle.WaitAll(WaitHandle[] [, int|TimeSpan [, bool]]): every Mutex of the array */
	/* Releases and waits: not acquisition sites. */
	WEAVE_MONITOR_EXIT,
	WEAVE_LOCK_EXIT,
	WEAVE_SCOPE_DISPOSE,
	WEAVE_MONITOR_WAIT,
	WEAVE_RWS_EXIT_READ,        /* ReaderWriterLockSlim.ExitReadLock() */
	WEAVE_RWS_EXIT_WRITE,
	WEAVE_RWS_EXIT_UPGRADEABLE,
	WEAVE_SEM_RELEASE,          /* SemaphoreSlim.Release(), (int) */
	WEAVE_SPIN_EXIT,            /* SpinLock.Exit(), (bool) */
	WEAVE_MUTEX_RELEASE,        /* Mutex.ReleaseMutex() */
	WEAVE_RWL_RELEASE_READER,   /* ReaderWriterLock.ReleaseReaderLock() */
	WEAVE_RWL_RELEASE_WRITER,   /* ReaderWriterLock.ReleaseWriterLock() */
	WEAVE_RWL_DOWNGRADE,        /* ReaderWriterLock.DowngradeFromWriterLock(ref LockCookie) */
	WEAVE_RWL_RELEASE_ALL,      /* ReaderWriterLock.ReleaseLock(): LockCookie; the thread's holds of it pause */
	WEAVE_RWL_RESTORE,          /* ReaderWriterLock.RestoreLock(ref LockCookie): the paused holds go on */
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
