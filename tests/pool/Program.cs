// Program.cs - locks taken on the thread pool, where most contended .NET code runs: holders and waiters in
// Task.Run work items, await between and around locks, a work item that throws inside a lock, and a pool
// of two threads so that each thread runs many work items in turn (a thread's state must not leak from
// one item to the next). Prints what it did as "name value" lines, which pool.sh compares with the report:
// counts exact, each hold and wait within the program's own Stopwatch around it. With the argument "handoff",
// only the handoffs of four kinds of lock on the pool as it comes (AllHandoffs).
using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;

static class Pool
{
    static readonly object Gate = new object(), Before = new object(), After = new object(),
        Outer = new object(), Inner = new object(), Thrower = new object(), Reused = new object();
    const int Rounds = 4, HoldMs = 60, Tasks = 8, Each = 50, Throws = 10, Reuses = 200;

    static long Ms(long ticks) => ticks * 1000 / Stopwatch.Frequency;

    // A holder on the pool holds Gate HoldMs while a waiter on the pool waits for it: the waiter's wait is
    // behind the holder's site. Returns the longest hold and the longest wait the program saw (ms, each
    // measured around the whole lock statement, so at least what the run-time measures inside).
    static (long hold, long wait) HolderAndWaiter()
    {
        long hold = 0, wait = 0;
        for (int r = 0; r < Rounds; r++)
        {
            using var held = new ManualResetEventSlim();
            var holder = Task.Run(() =>
            {
                var sw = Stopwatch.StartNew();
                lock (Gate) { held.Set(); Thread.Sleep(HoldMs); }                 // Holder site
                return sw.ElapsedTicks;
            });
            held.Wait();
            var waiter = Task.Run(() =>
            {
                var sw = Stopwatch.StartNew();
                lock (Gate) { }                                                   // Waiter site
                return sw.ElapsedTicks;
            });
            hold = Math.Max(hold, holder.Result);
            wait = Math.Max(wait, waiter.Result);
        }
        return (Ms(hold), Ms(wait));
    }

    // Locks on either side of an await, never one inside the other: no lock order between them.
    static async Task AwaitBetween(int n)
    {
        for (int i = 0; i < n; i++)
        {
            lock (Before) { }                                                     // Before site
            await Task.Yield();
            lock (After) { }                                                      // After site
        }
    }

    // Always Outer then Inner: a consistent order, no potential deadlock.
    static async Task Nested(int n)
    {
        for (int i = 0; i < n; i++)
        {
            lock (Outer) { lock (Inner) { } }                                     // Outer site, Inner site
            await Task.Yield();
        }
    }

    static void Throw()
    {
        lock (Thrower) { throw new InvalidOperationException("inside the lock"); } // Thrower site
    }

    static readonly Lock Scoped = new Lock();
    static readonly ReaderWriterLockSlim Rw = new ReaderWriterLockSlim();
    static readonly SemaphoreSlim One = new SemaphoreSlim(1, 1);
    const int Handoffs = 10, HandoffMs = 40;

    // Handoffs work items at once on the pool as it comes (no SetMinThreads: it grows a thread at a time, as in
    // a service), each holding the lock HandoffMs, the even ones at their A site, the odd ones at their B site:
    // a waiter waits through several holds in turn, of both sites, and a thread just handed the lock has not
    // yet recorded it when the next one begins to wait.
    static void Handoff(Action a, Action b)
    {
        var all = new Task[Handoffs];
        for (int i = 0; i < Handoffs; i++)
            all[i] = Task.Run(i % 2 == 0 ? a : b);
        Task.WaitAll(all);
    }

    static void AllHandoffs()
    {
        Handoff(() => { lock (Gate) { Thread.Sleep(HandoffMs); } },                                   // Monitor A site
                () => { lock (Gate) { Thread.Sleep(HandoffMs); } });                                  // Monitor B site
        Handoff(() => { lock (Scoped) { Thread.Sleep(HandoffMs); } },                                 // Lock A site
                () => { lock (Scoped) { Thread.Sleep(HandoffMs); } });                                // Lock B site
        Handoff(() => { Rw.EnterWriteLock(); try { Thread.Sleep(HandoffMs); } finally { Rw.ExitWriteLock(); } }, // Writer A site
                () => { Rw.EnterWriteLock(); try { Thread.Sleep(HandoffMs); } finally { Rw.ExitWriteLock(); } }); // Writer B site
        Handoff(() => { One.Wait(); try { Thread.Sleep(HandoffMs); } finally { One.Release(); } },   // Semaphore A site
                () => { One.Wait(); try { Thread.Sleep(HandoffMs); } finally { One.Release(); } });  // Semaphore B site
        Console.WriteLine($"handoffs {Handoffs}");
        Console.WriteLine($"handoff_ms {HandoffMs}");
    }

    static int Main(string[] args)
    {
        if (args.Length > 0 && args[0] == "handoff")
        {
            AllHandoffs();
            return 0;
        }
        ThreadPool.SetMinThreads(2, 2);
        ThreadPool.SetMaxThreads(2, 2);
        var (hold, wait) = HolderAndWaiter();
        var all = new Task[Tasks * 2];
        for (int k = 0; k < Tasks; k++)
        {
            all[k] = Task.Run(() => AwaitBetween(Each));
            all[Tasks + k] = Task.Run(() => Nested(Each));
        }
        Task.WaitAll(all);
        int thrown = 0;
        for (int i = 0; i < Throws; i++)
        {
            try { Task.Run(Throw).Wait(); }
            catch (AggregateException e) when (e.InnerException is InvalidOperationException) { thrown++; }
        }
        // The same two pool threads again, after the items that threw: nothing of theirs is still held.
        var reuse = new Task[Reuses];
        for (int i = 0; i < Reuses; i++)
            reuse[i] = Task.Run(() => { lock (Reused) { } });                      // Reused site
        Task.WaitAll(reuse);
        Console.WriteLine($"rounds {Rounds}");
        Console.WriteLine($"hold_min {HoldMs}");
        Console.WriteLine($"hold_max {hold}");
        Console.WriteLine($"wait_max {wait}");
        Console.WriteLine($"awaited {Tasks * Each}");
        Console.WriteLine($"thrown {thrown}");
        Console.WriteLine($"reused {Reuses}");
        return 0;
    }
}
