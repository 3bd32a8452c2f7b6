// Reentry.cs - `App reentry` (tests/integration/woven.sh): locks taken again by the thread that holds them,
// a Monitor.Wait ended by an interrupt, and a SpinLock(false) exited by another thread. Each scenario prints
// on stderr what the program itself timed with a Stopwatch ("App: NAME took X ms", and the interrupted wait's
// own time), which no hold the run-time reports may exceed.
using System;
using System.Diagnostics;
using System.Globalization;
using System.Threading;

internal static class Reentry
{
    private static readonly object monitor = new object(), deep = new object(), waited = new object();
    private static readonly ReaderWriterLockSlim rw = new ReaderWriterLockSlim(LockRecursionPolicy.SupportsRecursion);
    private static readonly ReaderWriterLockSlim downgraded = new ReaderWriterLockSlim(LockRecursionPolicy.SupportsRecursion);
#if NET9_0_OR_GREATER
    private static readonly Lock scoped = new Lock();
#endif
    private static SpinLock tracked = new SpinLock(true);
    private static SpinLock handed = new SpinLock(false);

    private static void Took(string name, Stopwatch watch)
    {
        Console.Error.WriteLine("App: " + name + " took " + watch.Elapsed.TotalMilliseconds.ToString("F3", CultureInfo.InvariantCulture) + " ms");
    }

    // lock (monitor) 1,001 times on one thread, the innermost sleeping 10 ms: one hold.
    private static void Recurse(int depth)
    {
        lock (monitor)
        {
            if (depth == 0)
                Thread.Sleep(10);
            else
                Recurse(depth - 1);
        }
    }

    // The same 20,001 deep, no sleep.
    private static void RecurseDeep(int depth)
    {
        lock (deep)
        {
            if (depth > 0)
                RecurseDeep(depth - 1);
        }
    }

#if NET9_0_OR_GREATER
    // A C# 13 lock on a System.Threading.Lock (EnterScope), 1,001 deep around 10 ms.
    private static void RecurseScope(int depth)
    {
        lock (scoped)
        {
            if (depth == 0)
                Thread.Sleep(10);
            else
                RecurseScope(depth - 1);
        }
    }
#endif

    // ReaderWriterLockSlim with recursion: a write lock 101 deep, a read lock inside it, around 10 ms.
    private static void WriteRecurse(int depth)
    {
        rw.EnterWriteLock();
        try
        {
            if (depth > 0)
                WriteRecurse(depth - 1);
            else
                ReadInside();
        }
        finally
        {
            rw.ExitWriteLock();
        }
    }

    private static void ReadInside()
    {
        rw.EnterReadLock();
        Thread.Sleep(10);
        rw.ExitReadLock();
    }

    // A read lock 101 deep around 10 ms (a thread holding a read lock may take it again with recursion).
    private static void ReadRecurse(int depth)
    {
        rw.EnterReadLock();
        try
        {
            if (depth == 0)
                Thread.Sleep(10);
            else
                ReadRecurse(depth - 1);
        }
        finally
        {
            rw.ExitReadLock();
        }
    }

    // The downgrade: a write lock, a read lock inside it, the write lock exited first, the read lock held 10 ms
    // more: the read lock holds the lock from the write lock's exit on.
    private static void Downgrade()
    {
        downgraded.EnterWriteLock();
        DowngradeRead();
        downgraded.ExitWriteLock();
        Thread.Sleep(10);
        downgraded.ExitReadLock();
    }

    private static void DowngradeRead()
    {
        downgraded.EnterReadLock();
    }

    // A SpinLock with owner tracking taken again by its owner throws LockRecursionException: no acquisition.
    private static void SpinAgain()
    {
        bool taken = false;
        tracked.Enter(ref taken);
        try
        {
            bool again = false;
            try
            {
                tracked.Enter(ref again);
            }
            catch (LockRecursionException)
            {
                Console.WriteLine("SpinLock(true) taken again: LockRecursionException");
            }
            Thread.Sleep(10);
        }
        finally
        {
            tracked.Exit();
        }
    }

    // Monitor.Wait ended by Thread.Interrupt after about 200 ms: the time inside Wait is no hold.
    private static void WaitInterrupted(ManualResetEventSlim waiting)
    {
        var watch = Stopwatch.StartNew();
        Stopwatch inside = null;
        lock (waited)
        {
            try
            {
                waiting.Set();
                inside = Stopwatch.StartNew();
                Monitor.Wait(waited);
            }
            catch (ThreadInterruptedException)
            {
                inside.Stop();
                Console.WriteLine("Monitor.Wait interrupted");
            }
        }
        Took("interrupted wait's lock", watch);
        Took("inside the interrupted Wait", inside);
    }

    // A SpinLock without owner tracking entered on one thread and exited by another.
    private static void SpinEnter()
    {
        bool taken = false;
        handed.Enter(ref taken);
    }

    private static void SpinExit()
    {
        handed.Exit();
    }

    internal static void Run()
    {
        var watch = Stopwatch.StartNew();
        Recurse(1000);
        Took("monitor recursion", watch);
        watch.Restart();
        RecurseDeep(20000);
        Took("deep monitor recursion", watch);
#if NET9_0_OR_GREATER
        watch.Restart();
        RecurseScope(1000);
        Took("Lock recursion", watch);
#endif
        watch.Restart();
        WriteRecurse(100);
        Took("write lock recursion", watch);
        watch.Restart();
        ReadRecurse(100);
        Took("read lock recursion", watch);
        watch.Restart();
        Downgrade();
        Took("downgrade", watch);
        watch.Restart();
        SpinAgain();
        Took("SpinLock re-entry", watch);

        var waiting = new ManualResetEventSlim();
        var waiter = new Thread(() => WaitInterrupted(waiting));
        waiter.Start();
        waiting.Wait();
        Thread.Sleep(200);
        waiter.Interrupt();
        waiter.Join();

        var holder = new ManualResetEventSlim();
        var release = new ManualResetEventSlim();
        var owner = new Thread(() =>
        {
            SpinEnter();
            holder.Set();
            release.Wait(); // alive, no longer holding: another thread exited its SpinLock
        });
        owner.IsBackground = true;
        watch.Restart();
        owner.Start();
        holder.Wait();
        SpinExit();
        Took("SpinLock hand-off", watch);
        Console.WriteLine("SpinLock(false) exited by another thread");
        // The report is written at exit while the owner still runs.
    }
}
