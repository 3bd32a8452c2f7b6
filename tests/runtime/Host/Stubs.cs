// Stubs.cs - the call-site stubs the weaver will generate, written by hand, and the site table it will
// bake; compiled into Host and HostLib, each with its own copy of the run-time (C# 7.3, like the template).
using System;
using System.Threading;
using System.Threading.Tasks;
using LockTime.Runtime;

namespace TestHost
{
    internal static class Stubs
    {
        /// <summary>What SiteList.Load does in a woven assembly: sites "FILE:10", ":11"... of <paramref name="methods"/>.</summary>
        internal static void Start(string assembly, string file, string[] methods)
        {
            SiteTable table = new SiteTable();
            table.Begin(assembly, methods.Length);
            for (int i = 0; i < methods.Length; i++)
                table.Define(i, methods[i], file + ":" + (10 + i), "/src/" + assembly + "/" + file, 10 + i, "Monitor.Enter");
            Runtime.StartWith(table, Settings.FromEnvironment(), Registry.Slot);
        }

        /// <summary>The stub of Monitor.Enter(object) at site <paramref name="site"/>.</summary>
        internal static void Enter(object o, int site)
        {
            if (Api.Off) {
                Monitor.Enter(o);
                return;
            }
            long t0 = Clock.Ticks();
            if (Monitor.TryEnter(o)) {
                Api.Acquired(o, site, t0, t0, false);
                return;
            }
            Api.Waiting(o, site);
            Monitor.Enter(o);
            Api.Acquired(o, site, t0, Clock.Ticks(), true);
        }

        /// <summary>The stub of Monitor.Wait(object): the time inside is not hold time.</summary>
        internal static void Wait(object o, int timeoutMs)
        {
            if (Api.Off) {
                Monitor.Wait(o, timeoutMs);
                return;
            }
            Api.WaitBegins(o);
            long t0 = Clock.Ticks();
            try {
                Monitor.Wait(o, timeoutMs);
            } finally { /* as the weaver's: an interrupted Wait ends the interval too */
                Api.Waited(o, Clock.Ticks() - t0);
            }
        }

        /// <summary>The stub of Monitor.Exit(object): the hold ends at the time read before the release.</summary>
        internal static void Exit(object o)
        {
            long t0 = Api.Off ? 0 : Clock.Ticks();
            Monitor.Exit(o);
            if (!Api.Off)
                Api.Released(o, t0);
        }
        /// <summary>The stub of ReaderWriterLockSlim.EnterWriteLock(): TryEnterWriteLock(0) is the fast try.</summary>
        internal static void EnterWrite(ReaderWriterLockSlim rw, int site)
        {
            if (Api.Off) {
                rw.EnterWriteLock();
                return;
            }
            long t0 = Clock.Ticks();
            if (rw.TryEnterWriteLock(0)) {
                Api.Acquired(rw, site, t0, t0, false);
                return;
            }
            Api.Waiting(rw, site);
            rw.EnterWriteLock();
            Api.Acquired(rw, site, t0, Clock.Ticks(), true);
        }

        /// <summary>The stub of ReaderWriterLockSlim.ExitWriteLock().</summary>
        internal static void ExitWrite(ReaderWriterLockSlim rw)
        {
            long t0 = Api.Off ? 0 : Clock.Ticks();
            rw.ExitWriteLock();
            if (!Api.Off)
                Api.Released(rw, t0);
        }

        /// <summary>The stub of ReaderWriterLockSlim.EnterReadLock(): a reader waits behind a writer only.</summary>
        internal static void EnterRead(ReaderWriterLockSlim rw, int site)
        {
            if (Api.Off) {
                rw.EnterReadLock();
                return;
            }
            long t0 = Clock.Ticks();
            if (rw.TryEnterReadLock(0)) {
                Api.AcquiredRead(rw, site, t0, t0, false);
                return;
            }
            Api.WaitingToRead(rw, site);
            rw.EnterReadLock();
            Api.AcquiredRead(rw, site, t0, Clock.Ticks(), true);
        }

        /// <summary>The stub of ReaderWriterLockSlim.ExitReadLock().</summary>
        internal static void ExitRead(ReaderWriterLockSlim rw)
        {
            long t0 = Api.Off ? 0 : Clock.Ticks();
            rw.ExitReadLock();
            if (!Api.Off)
                Api.ReleasedRead(rw, t0);
        }

        /// <summary>The stub of SemaphoreSlim.Wait(): Wait(0) is the fast try.</summary>
        internal static void SemWait(SemaphoreSlim sem, int site)
        {
            SemWait(sem, site, false);
        }

        /// <summary>The stub of SemaphoreSlim.Wait() in an async state machine's MoveNext: its hold stays out of the lock order.</summary>
        internal static void SemWaitInAsync(SemaphoreSlim sem, int site)
        {
            SemWait(sem, site, true);
        }

        private static void SemWait(SemaphoreSlim sem, int site, bool inAsync)
        {
            if (Api.Off) {
                sem.Wait();
                return;
            }
            long t0 = Clock.Ticks();
            if (sem.Wait(0)) {
                Acquired(sem, site, t0, t0, false, inAsync);
                return;
            }
            Api.Waiting(sem, site);
            sem.Wait();
            Acquired(sem, site, t0, Clock.Ticks(), true, inAsync);
        }

        private static void Acquired(SemaphoreSlim sem, int site, long start, long acquired, bool contended, bool inAsync)
        {
            if (inAsync)
                Api.AcquiredSemaphoreInAsync(sem, site, start, acquired, contended);
            else
                Api.AcquiredSemaphore(sem, site, start, acquired, contended);
        }

        /// <summary>The stub of SemaphoreSlim.WaitAsync(): the wait ends when the task completes.</summary>
        internal static Task SemWaitAsync(SemaphoreSlim sem, int site)
        {
            if (Api.Off)
                return sem.WaitAsync();
            long t0 = Clock.Ticks();
            Task t = sem.WaitAsync();
            Api.AcquiredWhenDone(t, sem, site, t0);
            return t;
        }

        /// <summary>The stub of SemaphoreSlim.WaitAsync(int): not acquired when the task gives false.</summary>
        internal static Task<bool> SemWaitAsync(SemaphoreSlim sem, int timeoutMs, int site)
        {
            if (Api.Off)
                return sem.WaitAsync(timeoutMs);
            long t0 = Clock.Ticks();
            Task<bool> t = sem.WaitAsync(timeoutMs);
            Api.AcquiredWhenDone(t, sem, site, t0);
            return t;
        }

        /// <summary>
        /// The stub of SemaphoreSlim.Release(): on whichever thread, it ends the hold of a semaphore used as
        /// a lock, taken off the semaphore before the original (a waiter may take it as soon as it returns).
        /// </summary>
        internal static int SemRelease(SemaphoreSlim sem)
        {
            object releasing = null;
            long t0 = 0;
            if (!Api.Off) {
                releasing = Api.ReleasingSemaphore(sem);
                t0 = Clock.Ticks();
            }
            int before = sem.Release();
            if (!Api.Off)
                Api.ReleasedSemaphore(releasing, t0);
            return before;
        }

        /// <summary>The stub of SpinLock.Enter(ref bool), on the caller's SpinLock by reference: TryEnter(ref bool) is the fast try.</summary>
        internal static void SpinEnter(ref SpinLock spin, ref bool taken, int site)
        {
            if (Api.Off) {
                spin.Enter(ref taken);
                return;
            }
            long t0 = Clock.Ticks();
            spin.TryEnter(ref taken);
            if (taken) {
                Api.AcquiredSpin(Address(ref spin), site, t0, t0, false);
                return;
            }
            spin.Enter(ref taken);
            if (taken)
                Api.AcquiredSpin(Address(ref spin), site, t0, Clock.Ticks(), true);
        }

        /// <summary>The SpinLock's address, as the weaver's stubs pass it (<c>ldarg.0; conv.u</c>).</summary>
        static unsafe IntPtr Address(ref SpinLock spin)
        {
            fixed (SpinLock* p = &spin)
                return (IntPtr)p;
        }

        /// <summary>The stub of SpinLock.Exit().</summary>
        internal static void SpinExit(ref SpinLock spin)
        {
            long t0 = Api.Off ? 0 : Clock.Ticks();
            spin.Exit();
            if (!Api.Off)
                Api.ReleasedSpin(Address(ref spin), t0);
        }
    }
}
