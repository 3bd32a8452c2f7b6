// OtherLocks.cs - the scenarios of ReaderWriterLockSlim, SemaphoreSlim (Wait, WaitAsync) and SpinLock,
// through the hand-written stubs of Stubs.cs, at the sites Program.Names gives (Program.cs:19 to :27).
using System;
using System.Threading;
using System.Threading.Tasks;
using LockTime.Runtime;
using TestHost;

internal static class OtherLocks
{
    private const int First = 6, Second = 7, Write = 9, Read = 10, GateHold = 11, GateTake = 12, AsyncHold = 13, AsyncTake = 14, Pool = 15,
        SpinHold = 16, SpinTake = 17;

    private static SpinLock spin = new SpinLock(false);

    public static void Run(string scenario)
    {
        switch (scenario) {
        case "rwlock": {
            var rw = new ReaderWriterLockSlim();
            Holding(() => { Stubs.EnterWrite(rw, Write); }, () => Stubs.ExitWrite(rw),
                    () => { Stubs.EnterRead(rw, Read); Stubs.ExitRead(rw); });
            break;
        }
        case "readers": {
            var rw = new ReaderWriterLockSlim();
            using var both = new Barrier(2);
            var other = new Thread(() => { Stubs.EnterRead(rw, Read); both.SignalAndWait(); Thread.Sleep(60); Stubs.ExitRead(rw); });
            other.Start();
            Stubs.EnterRead(rw, Read);
            both.SignalAndWait(); // both hold the read lock now
            var writer = new Thread(() => { Stubs.EnterWrite(rw, Write); Stubs.ExitWrite(rw); });
            writer.Start();
            Thread.Sleep(60);
            Stubs.ExitRead(rw);
            other.Join();
            writer.Join();
            break;
        }
        case "semaphore": {
            var gate = new SemaphoreSlim(1, 1);
            using var held = new ManualResetEventSlim();
            var holder = new Thread(() => { Stubs.SemWait(gate, GateHold); held.Set(); });
            holder.Start();
            held.Wait();
            holder.Join(); // the holder thread is gone: another releases
            var waiter = new Thread(() => { Stubs.SemWait(gate, GateTake); Stubs.SemRelease(gate); });
            waiter.Start();
            Thread.Sleep(60);
            Stubs.SemRelease(gate);
            waiter.Join();
            Console.WriteLine("semaphore free: " + gate.CurrentCount);
            break;
        }
        case "semorder": { // a hold released on another thread leaves its taker's lock order
            var gate = new SemaphoreSlim(1, 1);
            object first = new object(), second = new object();
            using var held = new ManualResetEventSlim();
            using var released = new ManualResetEventSlim();
            var taker = new Thread(() => {
                Stubs.SemWait(gate, GateHold);
                held.Set();
                released.Wait();
                // gate was released on the main thread: first -> second only, followed once this
                // thread holds nothing (no edge gate -> first, and gate no longer held here)
                Stubs.Enter(first, First);
                Stubs.Enter(second, Second);
                Stubs.Exit(second);
                Stubs.Exit(first);
            });
            taker.Start();
            held.Wait();
            Stubs.SemRelease(gate);
            released.Set();
            taker.Join();
            Stubs.Enter(first, First); // first -> gate: the second edge, no cycle
            Stubs.SemWait(gate, GateTake);
            Stubs.SemRelease(gate);
            Stubs.Exit(first);
            break;
        }
        case "asyncwait": { // taken by Wait() in an async method that awaits holding it, while this thread takes First
            var gate = new SemaphoreSlim(1, 1);
            object first = new object();
            Task holder = HoldAcrossAwait(gate); // up to its await on this thread
            Stubs.Enter(first, First);
            Stubs.Exit(first);
            holder.Wait();
            Stubs.Enter(first, First); // First -> gate: the one edge
            Stubs.SemWait(gate, GateTake);
            Stubs.SemRelease(gate);
            Stubs.Exit(first);
            break;
        }
        case "asyncgate": {
            var gate = new SemaphoreSlim(1, 1);
            using var held = new ManualResetEventSlim();
            Task holder = HoldAsync(gate, held);
            held.Wait();
            Task<bool> taker = TakeAsync(gate);
            holder.Wait();
            Console.WriteLine("async take: " + taker.Result + ", free: " + gate.CurrentCount);
            break;
        }
        case "asyncrace": { // the holder's WaitAsync has returned, its stub has not recorded the hold yet, when the taker's begins
            var gate = new SemaphoreSlim(1, 1);
            long start = Clock.Ticks();
            Task got = gate.WaitAsync(); // the holder's call, inside its stub (Stubs.SemWaitAsync)
            Task<bool> taker = TakeAsync(gate); // finds no holder as it begins to wait
            Api.AcquiredWhenDone(got, gate, AsyncHold, start); // the rest of the holder's stub
            Thread.Sleep(60);
            Stubs.SemRelease(gate);
            Console.WriteLine("async take: " + taker.Result + ", free: " + gate.CurrentCount);
            break;
        }
        case "asyncrelay": { // a WaitAsync through two holds in turn: the async holder's 60 ms, then a first waiter's 40 ms
            var gate = new SemaphoreSlim(1, 1);
            using var held = new ManualResetEventSlim();
            Task holder = HoldAsync(gate, held);
            held.Wait();
            Task first = TakeAndHold(gate, AsyncTake, 40); // both wait now, first ahead: SemaphoreSlim's async waiters are served in order
            Task second = TakeAndHold(gate, GateTake, 0);
            Task<bool> timed = Stubs.SemWaitAsync(gate, 20, Pool); // gives up behind the holder
            Task.WaitAll(holder, first, second, timed);
            Console.WriteLine("relay free: " + gate.CurrentCount + ", timed take: " + timed.Result);
            break;
        }
        case "counting": {
            var pool = new SemaphoreSlim(3, 3);
            using var taken = new CountdownEvent(3);
            for (int i = 0; i < 3; i++)
                new Thread(() => { Stubs.SemWait(pool, Pool); taken.Signal(); Thread.Sleep(60); Stubs.SemRelease(pool); }).Start();
            taken.Wait();
            Stubs.SemWait(pool, Pool); // waits for one of the three
            Stubs.SemRelease(pool);
            break;
        }
        case "spin": {
            Holding(() => { bool taken = false; Stubs.SpinEnter(ref spin, ref taken, SpinHold); }, () => Stubs.SpinExit(ref spin),
                    () => { bool taken = false; Stubs.SpinEnter(ref spin, ref taken, SpinTake); Stubs.SpinExit(ref spin); });
            break;
        }
        }
    }

    // take, then 60 ms later release, on a thread of its own; wait runs once it holds.
    private static void Holding(Action take, Action release, Action wait)
    {
        using var held = new ManualResetEventSlim();
        var holder = new Thread(() => { take(); held.Set(); Thread.Sleep(60); release(); });
        holder.Start();
        held.Wait();
        wait();
        holder.Join();
    }

    private static async Task HoldAcrossAwait(SemaphoreSlim gate)
    {
        Stubs.SemWaitInAsync(gate, GateHold);
        try {
            await Task.Delay(60);
        } finally {
            Stubs.SemRelease(gate);
        }
    }

    private static async Task HoldAsync(SemaphoreSlim gate, ManualResetEventSlim held)
    {
        await Stubs.SemWaitAsync(gate, AsyncHold);
        held.Set();
        await Task.Delay(60);
        Stubs.SemRelease(gate);
    }

    private static async Task TakeAndHold(SemaphoreSlim gate, int site, int holdMs)
    {
        await Stubs.SemWaitAsync(gate, site);
        if (holdMs > 0)
            await Task.Delay(holdMs);
        Stubs.SemRelease(gate);
    }

    private static async Task<bool> TakeAsync(SemaphoreSlim gate)
    {
        if (!await Stubs.SemWaitAsync(gate, 5000, AsyncTake))
            return false;
        Stubs.SemRelease(gate);
        return true;
    }
}
