// Program.cs - lock scenarios through hand-written call-site stubs, for tests/integration/runtime.sh.
//   Host nested | threads | ended N | contended | waiters | interrupted | waitblame | rewait | exit | library | many | interval REPORT
//        | transfer | cycle3 | nocycle | libcycle | stress | metrics BEFORE SECONDS AFTER
//        | rwlock | readers | semaphore | semorder | asyncwait | asyncgate | asyncrace | asyncrelay | counting | spin | term plain|before|after|earlyMS[flood]|earlyline[flood] | stuck REPORT COPY
//        | flood exit|throw|term|interval [REPORT COPY] | atexit
using System;
using System.Diagnostics;
using System.IO;
using System.Threading;
using LockTime.Runtime;
using TestHost;

internal static class Program
{
    // Site i is Program.cs:(10 + i).
    private static readonly string[] Names = { "Host.Program::Nested", "Host.Program::Count", "Host.Program::Hold", "Host.Program::Wait",
                                               "Host.Bank::Transfer", "Host.Bank::Transfer", "Host.Program::First", "Host.Program::Second",
                                               "Host.Program::Third", "Host.Cache::Write", "Host.Cache::Read", "Host.Gate::Hold",
                                               "Host.Gate::Take", "Host.Gate::HoldAsync", "Host.Gate::TakeAsync", "Host.Pool::Take",
                                               "Host.Spin::Hold", "Host.Spin::Take", "Host.Account::Debit", "Host.Account::Credit" };

    private static void Enter(object o, int site) => Stubs.Enter(o, site);

    private static void Exit(object o) => Stubs.Exit(o);

    /// <summary>Per depth, how long the last <see cref="Nested"/> held that lock as the program measures it: from its Enter's return to its Exit's call, in ms.</summary>
    private static double[] nestedHolds = new double[0];

    private static void Nested(object[] locks, int depth)
    {
        if (depth == locks.Length) {
            Thread.Sleep(20);
            return;
        }
        Enter(locks[depth], 0);
        long t = Stopwatch.GetTimestamp(), e = 0;
        try {
            Nested(locks, depth + 1);
        } finally {
            e = Stopwatch.GetTimestamp();
            Exit(locks[depth]);
        }
        nestedHolds[depth] = (e - t) * 1000.0 / Stopwatch.Frequency;
    }

    private static void Transfer(object from, object to)
    {
        Enter(from, 4);
        Enter(to, 5);
        Exit(to);
        Exit(from);
    }

    // A background thread that deadlocks: never joined.
    private static void Deadlocked(ThreadStart body)
    {
        new Thread(body) { IsBackground = true }.Start();
    }

    // first at site s1, then second at s2, on a thread of its own (joined).
    private static void Both(object first, int s1, object second, int s2)
    {
        var t = new Thread(() => { Enter(first, s1); Enter(second, s2); Exit(second); Exit(first); });
        t.Start();
        t.Join();
    }

    // One line "measured: WHAT INNER OUTER" on stdout, in ms (Stopwatch ticks converted), for the test to bound the report's figures with.
    private static void Measured(string what, long inner, long outer)
    {
        lock (Names)
            Console.WriteLine(string.Format(System.Globalization.CultureInfo.InvariantCulture, "measured: {0} {1:F6} {2:F6}", what,
                                            inner * 1000.0 / Stopwatch.Frequency, outer * 1000.0 / Stopwatch.Frequency));
    }

    private static int Main(string[] args)
    {
#if NET
        if (args[0] == "term") // a SIGTERM: Terminate.cs starts the run-time itself, before or after its own handler
            return Terminate.Run(args[1], () => Stubs.Start("Host", "Program.cs", Names));
#endif
        Stubs.Start("Host", "Program.cs", Names);

        switch (args[0]) {
        case "flood":
            return Flood.Run(args[1], args.Length > 2 ? args[2] : null, args.Length > 3 ? args[3] : null);
        case "nested": {
            var locks = new object[50];
            for (int i = 0; i < locks.Length; i++)
                locks[i] = new object();
            nestedHolds = new double[locks.Length];
            // The first round: the lock order meets 1225 new pairs, added after the outermost release; then the
            // same pairs again, a lookup each. Each round's outermost and innermost hold as the program measured them.
            for (int round = 0; round < 6; round++) {
                Nested(locks, 0);
                Console.WriteLine(FormattableString.Invariant($"measured: round {round} outer {nestedHolds[0]:F3} inner {nestedHolds[locks.Length - 1]:F3}"));
            }
            break;
        }
        case "threads": {
            object one = new object();
            var threads = new Thread[16];
            for (int k = 0; k < threads.Length; k++) {
                threads[k] = new Thread(() => { for (int i = 0; i < 1000; i++) { Enter(one, 1); Exit(one); } });
                threads[k].Start();
            }
            foreach (var t in threads)
                t.Join();
            break;
        }
        case "ended": { // N short-lived threads, one after another, each takes Program.cs:11 once and ends; then the memory after a forced GC
            object one = new object();
            int n = int.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture);
            for (int k = 0; k < n; k++) {
                var t = new Thread(() => { Enter(one, 1); Exit(one); });
                t.Start();
                t.Join();
            }
            Console.WriteLine("memory after GC: " + GC.GetTotalMemory(true).ToString(System.Globalization.CultureInfo.InvariantCulture));
            break;
        }
        case "interrupted": { // a holder at Program.cs:12 holds 200 ms; a waiter at :13 is interrupted after 50 ms and catches it
            object l = new object();
            using var held = new ManualResetEventSlim();
            var holder = new Thread(() => { Enter(l, 2); held.Set(); Thread.Sleep(200); Exit(l); });
            holder.Start();
            held.Wait();
            string outcome = "acquired";
            var waiter = new Thread(() => {
                try {
                    Enter(l, 3);
                    Exit(l);
                } catch (ThreadInterruptedException) {
                    outcome = "interrupted";
                }
            });
            waiter.Start();
            Thread.Sleep(50);
            waiter.Interrupt();
            waiter.Join();
            holder.Join();
            Console.WriteLine("waiter: " + outcome);
            break;
        }
        case "contended": // a holder at Program.cs:12 holds 100 ms while a waiter at :13 waits
        case "waiters": { // the same with three waiters
            // Each thread measures its own hold or wait around the stubs and prints it (ms): the hold
            // between the Enter's return and the Exit's call (inner) and around both calls (outer), the
            // wait around the Enter - what the run-time reports lies within them.
            object l = new object();
            using var held = new ManualResetEventSlim();
            var holder = new Thread(() => {
                long h0 = Stopwatch.GetTimestamp();
                Enter(l, 2);
                long h1 = Stopwatch.GetTimestamp();
                held.Set();
                Thread.Sleep(100);
                long h2 = Stopwatch.GetTimestamp();
                Exit(l);
                long h3 = Stopwatch.GetTimestamp();
                Measured("hold", h2 - h1, h3 - h0);
            });
            holder.Start();
            held.Wait();
            var waiters = new Thread[args[0] == "waiters" ? 3 : 1];
            for (int k = 0; k < waiters.Length; k++) {
                waiters[k] = new Thread(() => {
                    long w0 = Stopwatch.GetTimestamp();
                    Enter(l, 3);
                    long w1 = Stopwatch.GetTimestamp();
                    Exit(l);
                    Measured("wait", 0, w1 - w0);
                });
                waiters[k].Start();
            }
            foreach (var t in waiters)
                t.Join();
            holder.Join();
            break;
        }
        case "waitblame": { // a thread inside Monitor.Wait on the lock is not its holder: the one that took it meanwhile is
            object q = new object();
            using var waiting = new ManualResetEventSlim();
            using var held = new ManualResetEventSlim();
            var consumer = new Thread(() => { Enter(q, 6); waiting.Set(); Stubs.Wait(q, 300); Exit(q); });
            consumer.Start();
            waiting.Wait();
            Thread.Sleep(20);
            var holder = new Thread(() => { Enter(q, 2); held.Set(); Thread.Sleep(100); Exit(q); });
            holder.Start();
            held.Wait();
            Enter(q, 3);
            Exit(q);
            holder.Join();
            consumer.Join();
            break;
        }
        case "rewait": { // Monitor.Wait (200 ms, no pulse) in a lock taken twice: neither hold counts the wait
            object q = new object();
            Enter(q, 2);
            Enter(q, 3);
            Stubs.Wait(q, 200);
            Exit(q);
            Exit(q);
            break;
        }
        case "transfer": { // Transfer(x, y), later Transfer(y, x), on one thread: the same two sites
            object x = new object(), y = new object();
            Transfer(x, y);
            Transfer(y, x);
            break;
        }
        case "cycle3": { // A then B, B then C, C then A, on three threads one after another
            object a = new object(), b = new object(), c = new object();
            Both(a, 6, b, 7);
            Both(b, 7, c, 8);
            Both(c, 8, a, 6);
            break;
        }
        case "nocycle": { // one order on four threads, re-entrant nesting, Monitor.Wait under two locks
            object a = new object(), b = new object(), c = new object();
            var threads = new Thread[4];
            for (int k = 0; k < threads.Length; k++) {
                threads[k] = new Thread(() => {
                    for (int i = 0; i < 100; i++) {
                        Enter(a, 6); Enter(b, 7); Enter(c, 8);
                        Exit(c); Exit(b); Exit(a);
                    }
                });
                threads[k].Start();
            }
            foreach (var t in threads)
                t.Join();
            Enter(a, 6); Enter(a, 6); Enter(b, 7); Enter(a, 6); // a again while b is held: re-entry, no edge
            Exit(a); Exit(b); Exit(a); Exit(a);
            Enter(a, 6); Enter(b, 7);
            var pulse = new Thread(() => { Thread.Sleep(20); Enter(b, 7); Monitor.Pulse(b); Exit(b); });
            pulse.Start();
            Stubs.Wait(b, 2000);
            Exit(b); Exit(a);
            pulse.Join();
            break;
        }
        case "libcycle": { // a then the library's b; later the library holds b and a is taken: two assemblies, two copies
            object a = new object(), b = new object();
            Enter(a, 6);
            HostLib.Library.Under(b);
            Exit(a);
            HostLib.Library.Around(b, () => { Enter(a, 7); Exit(a); });
            break;
        }
        case "deadlock": { // Debit(a) then Credit(b) and Debit(b) then Credit(a) at once: they wait for each other; a third thread then waits behind them
            object a = new object(), b = new object(), c = new object();
            var both = new Barrier(2);
            Deadlocked(() => { Enter(a, 18); both.SignalAndWait(); Enter(b, 19); });
            Deadlocked(() => { Enter(b, 18); both.SignalAndWait(); Enter(a, 19); });
            Thread.Sleep(300);
            Deadlocked(() => { Enter(c, 18); Enter(a, 19); });
            Thread.Sleep(Timeout.Infinite); // until the test's SIGTERM
            break;
        }
        case "libdeadlock": { // the app holds a and waits in the library for b, the library holds b and waits for a: two copies
            object a = new object(), b = new object();
            var both = new Barrier(2);
            Deadlocked(() => { Enter(a, 18); both.SignalAndWait(); HostLib.Library.Under(b); });
            Deadlocked(() => HostLib.Library.Around(b, () => { both.SignalAndWait(); Enter(a, 19); }));
            Thread.Sleep(Timeout.Infinite);
            break;
        }
        case "stress": { // 64 threads on 8 locks, pairs always in one order, args[1] rounds each: the totals, and the locks taken
            int rounds = int.Parse(args[1]);
            var locks = new object[8];
            var counters = new long[8];
            for (int i = 0; i < locks.Length; i++)
                locks[i] = new object();
            long taken = 0;
            var threads = new Thread[64];
            for (int k = 0; k < threads.Length; k++) {
                int id = k;
                threads[k] = new Thread(() => {
                    long mine = 0;
                    for (int n = 0; n < rounds; n++) {
                        int i = (id * 7 + n) % 8, j = (i + 1 + n % 3) % 8;
                        int lo = Math.Min(i, j), hi = Math.Max(i, j);
                        Enter(locks[lo], 6);
                        Enter(locks[hi], 7);
                        counters[lo] += n;
                        counters[hi] += id;
                        Exit(locks[hi]);
                        Exit(locks[lo]);
                        Enter(locks[i], 1);
                        counters[i]++;
                        Exit(locks[i]);
                        mine += 3;
                    }
                    Interlocked.Add(ref taken, mine);
                });
                threads[k].Start();
            }
            foreach (var t in threads)
                t.Join();
            Console.WriteLine("counters: " + string.Join(" ", counters));
            Console.WriteLine("locks taken: " + taken);
            break;
        }
        case "metrics": { // each of Program.cs:11, :12, :13 once, BEFORE seconds idle, SECONDS of 4 threads on them (:12 held 1 ms), AFTER idle
            var inv = System.Globalization.CultureInfo.InvariantCulture;
            double before = double.Parse(args[1], inv), seconds = double.Parse(args[2], inv), after = double.Parse(args[3], inv);
            object l = new object();
            for (int site = 1; site <= 3; site++) {
                Enter(l, site);
                Exit(l);
            }
            Thread.Sleep(TimeSpan.FromSeconds(before)); // a listener's first collection sees one acquisition each
            long taken = 3;
            var clock = System.Diagnostics.Stopwatch.StartNew();
            var threads = new Thread[4];
            for (int k = 0; k < threads.Length; k++) {
                threads[k] = new Thread(() => {
                    long mine = 0;
                    while (clock.Elapsed.TotalSeconds < seconds) {
                        Enter(l, 1); Exit(l);
                        Enter(l, 2); Thread.Sleep(1); Exit(l);
                        Enter(l, 3); Exit(l);
                        mine += 3;
                    }
                    Interlocked.Add(ref taken, mine);
                });
                threads[k].Start();
            }
            foreach (var t in threads)
                t.Join();
            Console.WriteLine("locks taken: " + taken);
            Thread.Sleep(TimeSpan.FromSeconds(after)); // and its last one all of them
            break;
        }
        case "atexit": { // a ProcessExit handler added after the first lock holds Program.cs:12 for 50 ms
            object l = new object();
            Enter(l, 1);
            Exit(l);
            AppDomain.CurrentDomain.ProcessExit += (sender, e) => { object m = new object(); Enter(m, 2); Thread.Sleep(50); Exit(m); };
            Thread.Sleep(100);
            break;
        }
        case "exit": {
            object l = new object();
            Enter(l, 1);
            Exit(l);
            Environment.Exit(3);
            break;
        }
        case "library": { // two woven assemblies, two copies of the run-time: one summary, one report
            object l = new object();
            Enter(l, 1);
            Exit(l);
            HostLib.Library.Work(100);
            break;
        }
        case "many": { // 64 threads on 8 locks: at threshold 0 a line per lock, all through one writer
            var locks = new object[8];
            for (int i = 0; i < locks.Length; i++)
                locks[i] = new object();
            var threads = new Thread[64];
            for (int k = 0; k < threads.Length; k++) {
                object mine = locks[k % locks.Length];
                threads[k] = new Thread(() => { for (int i = 0; i < 500; i++) { Enter(mine, 1); Exit(mine); } });
                threads[k].Start();
            }
            foreach (var t in threads)
                t.Join();
            break;
        }
        case "rwlock": // a writer at Program.cs:19 holds 60 ms while a reader at :20 waits
        case "readers": // two readers at :20 overlap for 60 ms, then a writer at :19 waits for them
        case "semaphore": // a max-1 semaphore taken at :21, released 60 ms later by another thread; a waiter at :22
        case "semorder": // a max-1 semaphore taken at :21 on a thread, released on another, then :16 and :17 there; :16 then :22 here
        case "asyncwait": // an async method takes a max-1 semaphore at :21 by Wait() and awaits 60 ms holding it; :16 meanwhile, then :16 then :22
        case "asyncgate": // an async holder at :23 awaits Task.Delay(60) inside a max-1 semaphore; an async waiter at :24
        case "asyncrace": // as asyncgate, the waiter at :24 begins to wait before the holder's stub at :23 has recorded its hold
        case "asyncrelay": // as asyncgate, the waiter at :24 holding 40 ms, a second async waiter at :22 behind both, a 20 ms try at :25
        case "counting": // a semaphore of 3 at :25: waits only, its hold not applicable
        case "spin": // a SpinLock held 60 ms at :26 while a waiter at :27 spins
            OtherLocks.Run(args[0]);
            break;
        case "stuck": { // a lock held 1 s at Program.cs:12: the interval reports written meanwhile show the hold in progress
            object l = new object();
            Enter(l, 2);
            Thread.Sleep(1000);
            string during = File.Exists(args[1]) ? File.ReadAllText(args[1]) : "";
            Exit(l);
            File.WriteAllText(args[2], during);
            break;
        }
        case "interval": {
            object l = new object();
            Enter(l, 1);
            Exit(l);
            Thread.Sleep(600); // several intervals: the writer thread writes the report while running
            Console.WriteLine(File.Exists(args[1]) ? "report while running: " + File.ReadAllText(args[1]).Length + " bytes" : "no report while running");
            break;
        }
        }
        return 0;
    }
}
