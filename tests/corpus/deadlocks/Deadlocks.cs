// Two threads, each holding one lock and then waiting for the other's: a deadlock for every lock type
// whose blocking wait LockTime follows (args[0] names it), or "none": the two orders one after the
// other. The lines marked "// KIND waits" are where each thread blocks; the program hangs there.
// "interrupted": waits that end by Thread.Interrupt, then the program goes on (no deadlock); "signal": a
// SemaphoreSlim(0, 1) used as a signal, not a lock (no deadlock, no potential one); "awaited": a
// SemaphoreSlim(1, 1) taken by the blocking Wait() in an async method and an async iterator that await
// while they hold it (no potential deadlock); "held": its counterpart without an await (a potential one);
// "inlock": an async method's Wait() inside a lock, the other order in sync code (a potential one).
using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

static class Deadlocks
{
    static readonly Barrier Both = new Barrier(2);

    static void Run(Action first, Action second)
    {
        var t1 = new Thread(() => first()) { IsBackground = true };
        var t2 = new Thread(() => second()) { IsBackground = true };
        t1.Start();
        t2.Start();
        t1.Join();
        t2.Join();
    }

    static void Monitors()
    {
        object a = new object(), b = new object();
        Run(() => {
            lock (a) {
                Both.SignalAndWait();
                lock (b) { } // monitor waits
            }
        }, () => {
            lock (b) {
                Both.SignalAndWait();
                lock (a) { } // monitor waits
            }
        });
    }

    static void Locks()
    {
        Lock a = new Lock(), b = new Lock();
        Run(() => {
            lock (a) {
                Both.SignalAndWait();
                lock (b) { } // lock waits
            }
        }, () => {
            lock (b) {
                Both.SignalAndWait();
                lock (a) { } // lock waits
            }
        });
    }

    static void WriteLock(bool reader)
    {
        var rw = new ReaderWriterLockSlim();
        object m = new object();
        Run(() => {
            if (reader)
                rw.EnterReadLock();
            else
                rw.EnterWriteLock();
            Both.SignalAndWait();
            lock (m) { } // rw waits
        }, () => {
            lock (m) {
                Both.SignalAndWait();
                rw.EnterWriteLock(); // rw waits
            }
        });
    }

    static void Semaphore()
    {
        var s = new SemaphoreSlim(1, 1);
        object m = new object();
        Run(() => {
            s.Wait();
            Both.SignalAndWait();
            lock (m) { } // semaphore waits
        }, () => {
            lock (m) {
                Both.SignalAndWait();
                s.Wait(); // semaphore waits
            }
        });
    }

    static void Mutexes()
    {
        var x = new Mutex();
        object m = new object();
        Run(() => {
            x.WaitOne();
            Both.SignalAndWait();
            lock (m) { } // mutex waits
        }, () => {
            lock (m) {
                Both.SignalAndWait();
                x.WaitOne(); // mutex waits
            }
        });
    }

    // Not a deadlock: a thread holding m blocks on x, held by another, is interrupted, catches that inside
    // m and works on there while the other thread, still holding x, waits for m; it gets m when the first
    // leaves it. For each lock type whose wait is followed (x's take, wait and release).
    static void Interrupted(string kind, Action take, Action wait, Action release)
    {
        object m = new object();
        var taken = new ManualResetEventSlim();
        var caught = new ManualResetEventSlim();
        var holder = new Thread(() => {
            take();
            taken.Set();
            caught.Wait();
            lock (m) { }
            release();
        });
        var waiter = new Thread(() => {
            taken.Wait();
            lock (m) {
                try {
                    wait();
                } catch (ThreadInterruptedException) {
                    caught.Set();
                }
                Thread.Sleep(300); // working inside m: the other thread waits for it, not a deadlock
            }
        });
        holder.Start();
        waiter.Start();
        while ((waiter.ThreadState & ThreadState.WaitSleepJoin) == 0)
            Thread.Sleep(1);
        Thread.Sleep(100);
        waiter.Interrupt();
        waiter.Join();
        holder.Join();
        Console.WriteLine(kind + " interrupted");
    }

    static void Interruptions()
    {
        object o = new object();
        Interrupted("monitor", () => Monitor.Enter(o), () => { lock (o) { } }, () => Monitor.Exit(o));
        Lock k = new Lock();
        Interrupted("lock", () => k.Enter(), () => { lock (k) { } }, () => k.Exit());
        var rw = new ReaderWriterLockSlim();
        Interrupted("rw", () => rw.EnterWriteLock(), () => { rw.EnterWriteLock(); rw.ExitWriteLock(); }, () => rw.ExitWriteLock());
        var s = new SemaphoreSlim(1, 1);
        Interrupted("semaphore", () => s.Wait(), () => { s.Wait(); s.Release(); }, () => s.Release());
        var x = new Mutex();
        Interrupted("mutex", () => x.WaitOne(), () => { x.WaitOne(); x.ReleaseMutex(); }, () => x.ReleaseMutex());
    }

    // Not a deadlock: a SemaphoreSlim(0, 1) used as a signal (released by a producer, waited for by the
    // consumers), not as a lock. c1 takes one signal, then waits for the monitor c2 holds while c2 waits
    // for the next signal, which the producer gives.
    static void Signal()
    {
        var signal = new SemaphoreSlim(0, 1);
        object work = new object();
        var c1Got = new ManualResetEventSlim();
        var c2In = new ManualResetEventSlim();
        signal.Release(); // the first item
        var c1 = new Thread(() => {
            signal.Wait();
            c1Got.Set();
            c2In.Wait();
            Thread.Sleep(100);
            lock (work) { }
        });
        var c2 = new Thread(() => {
            c1Got.Wait();
            lock (work) {
                c2In.Set();
                signal.Wait(); // the next item
            }
        });
        c1.Start();
        c2.Start();
        Thread.Sleep(500);
        signal.Release(); // the producer's next item
        c1.Join();
        c2.Join();
        Console.WriteLine("signalled");
    }

    // Not a potential deadlock: an async method takes s with the blocking Wait() and gives its thread up
    // at the await while it holds s; that thread's next work takes m - not inside s, which the async
    // method holds, not the thread. Then an async iterator alike; then m and s in that order, the only
    // order the program takes.
    static void Awaited()
    {
        var s = new SemaphoreSlim(1, 1);
        object m = new object();
        Task holder = HoldAcrossAwait(s); // runs up to its await on this thread, holding s
        lock (m) { }
        holder.Wait();
        IAsyncEnumerator<int> items = Items(s).GetAsyncEnumerator();
        ValueTask<bool> next = items.MoveNextAsync(); // the same, in an async iterator
        lock (m) { }
        Console.WriteLine("item " + next.AsTask().Result + " " + items.Current);
        items.DisposeAsync().AsTask().Wait();
        lock (m) {
            s.Wait();
            s.Release();
        }
        Console.WriteLine("awaited");
    }

    static async Task HoldAcrossAwait(SemaphoreSlim s)
    {
        s.Wait(); // awaited holds
        try { await Task.Delay(60); } finally { s.Release(); }
    }

    static async IAsyncEnumerable<int> Items(SemaphoreSlim s)
    {
        s.Wait(); // iterated holds
        try {
            await Task.Delay(60);
            yield return 1;
        } finally {
            s.Release();
        }
    }

    // Two threads, each holding one monitor, try the other's with a timeout at once (Monitor.TryEnter(o,
    // 300)): both give up - no deadlock to claim, the waits end -, but the two orders are the potential one.
    static void Timed()
    {
        object a = new object(), b = new object();
        using var both = new Barrier(2);
        bool Take(object first, object second)
        {
            lock (first) {
                both.SignalAndWait();
                bool got = Monitor.TryEnter(second, 300); // timed tries
                if (got)
                    Monitor.Exit(second);
                both.SignalAndWait();
                return got;
            }
        }
        bool other = false;
        var t = new Thread(() => other = Take(b, a));
        t.Start();
        bool mine = Take(a, b);
        t.Join();
        Console.WriteLine("timed " + (mine || other ? "acquired" : "gave up"));
    }

    // Awaited's counterpart without an await: a lambda on a thread-pool thread takes m inside s, and this
    // thread takes s inside m - the potential deadlock.
    static void Held()
    {
        var s = new SemaphoreSlim(1, 1);
        object m = new object();
        Task.Run(() => {
            s.Wait(); // held holds
            try { lock (m) { } } finally { s.Release(); }
        }).Wait();
        lock (m) {
            s.Wait();
            s.Release();
        }
        Console.WriteLine("held");
    }

    // An async method takes s with Wait() inside m - that order is certain, no await comes between -; a
    // lambda on a thread-pool thread takes m inside s: the potential deadlock, at the async method's Wait.
    static void InLock()
    {
        var s = new SemaphoreSlim(1, 1);
        object m = new object();
        WaitInLock(s, m).Wait();
        Task.Run(() => {
            s.Wait();
            try { lock (m) { } } finally { s.Release(); }
        }).Wait();
        Console.WriteLine("inlock");
    }

    static async Task WaitInLock(SemaphoreSlim s, object m)
    {
        lock (m) {
            s.Wait(); // inlock waits
            s.Release();
        }
        await Task.Yield();
    }

    static int Main(string[] args)
    {
        switch (args[0]) {
        case "monitor": Monitors(); break;
        case "lock": Locks(); break;
        case "rw": WriteLock(false); break;
        case "reader": WriteLock(true); break;
        case "semaphore": Semaphore(); break;
        case "mutex": Mutexes(); break;
        case "interrupted": Interruptions(); break;
        case "signal": Signal(); break;
        case "awaited": Awaited(); break;
        case "held": Held(); break;
        case "inlock": InLock(); break;
        case "timed": Timed(); break;
        case "none": {
            object a = new object(), b = new object();
            lock (a) {
                lock (b) { }
            }
            lock (b) {
                lock (a) { }
            }
            break;
        }
        }
        Console.WriteLine("done");
        return 0;
    }
}
