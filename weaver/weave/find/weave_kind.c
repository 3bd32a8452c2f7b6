/* weave_kind.c - names of the lock call kinds, and which acquire (see weave_kind.h). */
#include "weave_kind.h"

#include <stdint.h>
#include <string.h>

static const struct {
	const char *name;
	uint8_t acquires;
} kinds[WEAVE_KIND_COUNT] = {
	[WEAVE_MONITOR_ENTER] = { "Monitor.Enter", 1 },
	[WEAVE_MONITOR_ENTER_TAKEN] = { "Monitor.Enter", 1 },
	[WEAVE_MONITOR_TRYENTER] = { "Monitor.TryEnter", 1 },
	[WEAVE_LOCK_ENTER] = { "Lock.Enter", 1 },
	[WEAVE_LOCK_TRYENTER] = { "Lock.TryEnter", 1 },
	[WEAVE_LOCK_ENTERSCOPE] = { "Lock.EnterScope", 1 },
	[WEAVE_SYNCHRONIZED] = { "Synchronized", 1 },
	[WEAVE_RWS_ENTER_READ] = { "ReaderWriterLockSlim.EnterReadLock", 1 },
	[WEAVE_RWS_TRYENTER_READ] = { "ReaderWriterLockSlim.TryEnterReadLock", 1 },
	[WEAVE_RWS_ENTER_WRITE] = { "ReaderWriterLockSlim.EnterWriteLock", 1 },
	[WEAVE_RWS_TRYENTER_WRITE] = { "ReaderWriterLockSlim.TryEnterWriteLock", 1 },
	[WEAVE_RWS_ENTER_UPGRADEABLE] = { "ReaderWriterLockSlim.EnterUpgradeableReadLock", 1 },
	[WEAVE_RWS_TRYENTER_UPGRADEABLE] = { "ReaderWriterLockSlim.TryEnterUpgradeableReadLock", 1 },
	[WEAVE_SEM_WAIT] = { "SemaphoreSlim.Wait", 1 },
	[WEAVE_SEM_TRYWAIT] = { "SemaphoreSlim.Wait", 1 },
	[WEAVE_SEM_WAITASYNC] = { "SemaphoreSlim.WaitAsync", 1 },
	[WEAVE_SEM_TRYWAITASYNC] = { "SemaphoreSlim.WaitAsync", 1 },
	[WEAVE_SPIN_ENTER] = { "SpinLock.Enter", 1 },
	[WEAVE_SPIN_TRYENTER] = { "SpinLock.TryEnter", 1 },
	[WEAVE_MUTEX_WAITONE] = { "Mutex.WaitOne", 1 },
	[WEAVE_RWL_ACQUIRE_READER] = { "ReaderWriterLock.AcquireReaderLock", 1 },
	[WEAVE_RWL_ACQUIRE_WRITER] = { "ReaderWriterLock.AcquireWriterLock", 1 },
	[WEAVE_RWL_UPGRADE] = { "ReaderWriterLock.UpgradeToWriterLock", 1 },
	[WEAVE_HANDLE_WAITONE] = { "WaitHandle.WaitOne", 1 },
	[WEAVE_HANDLE_WAITANY] = { "WaitHandle.WaitAny", 1 },
	[WEAVE_HANDLE_WAITALL] = { "WaitHandle.WaitAll", 1 },
	[WEAVE_MONITOR_EXIT] = { "Monitor.Exit", 0 },
	[WEAVE_LOCK_EXIT] = { "Lock.Exit", 0 },
	[WEAVE_SCOPE_DISPOSE] = { "Lock.Scope.Dispose", 0 },
	[WEAVE_MONITOR_WAIT] = { "Monitor.Wait", 0 },
	[WEAVE_RWS_EXIT_READ] = { "ReaderWriterLockSlim.ExitReadLock", 0 },
	[WEAVE_RWS_EXIT_WRITE] = { "ReaderWriterLockSlim.ExitWriteLock", 0 },
	[WEAVE_RWS_EXIT_UPGRADEABLE] = { "ReaderWriterLockSlim.ExitUpgradeableReadLock", 0 },
	[WEAVE_SEM_RELEASE] = { "SemaphoreSlim.Release", 0 },
	[WEAVE_SPIN_EXIT] = { "SpinLock.Exit", 0 },
	[WEAVE_MUTEX_RELEASE] = { "Mutex.ReleaseMutex", 0 },
	[WEAVE_RWL_RELEASE_READER] = { "ReaderWriterLock.ReleaseReaderLock", 0 },
	[WEAVE_RWL_RELEASE_WRITER] = { "ReaderWriterLock.ReleaseWriterLock", 0 },
	[WEAVE_RWL_DOWNGRADE] = { "ReaderWriterLock.DowngradeFromWriterLock", 0 },
	[WEAVE_RWL_RELEASE_ALL] = { "ReaderWriterLock.ReleaseLock", 0 },
	[WEAVE_RWL_RESTORE] = { "ReaderWriterLock.RestoreLock", 0 },
};

const char *weave_kind_name(enum weave_kind k)
{
	return (unsigned)k < WEAVE_KIND_COUNT ? kinds[k].name : "?";
}

int weave_kind_acquires(enum weave_kind k)
{
	return (unsigned)k < WEAVE_KIND_COUNT && kinds[k].acquires;
}

int weave_kind_of_name(const char *name, enum weave_kind *out)
{
	for (int k = 0; k < WEAVE_KIND_COUNT; k++) {
		if (strcmp(kinds[k].name, name) == 0) {
			*out = (enum weave_kind)k;
			return 1;
		}
	}
	return 0;
}
