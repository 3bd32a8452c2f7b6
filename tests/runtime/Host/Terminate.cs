// Terminate.cs - a program stopped by SIGTERM while it takes the lock at Program.cs:11, for tests/integration/runtime.sh
// (.NET only: .NET Framework and Mono have no PosixSignalRegistration, and the run-time no SIGTERM handler there).
#if NET
using System;
using System.IO;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Threading;
using TestHost;

internal static class Terminate
{
    private const int Count = 1, Hold = 2;

    private static volatile bool stop;
    private static int signals;

    /// <summary>
    /// <paramref name="mode"/> "plain": takes the lock until the process is killed. "before" / "after": the
    /// program's own SIGTERM handler, registered before the run-time starts (so it runs after the run-time's)
    /// or after the run-time registered its own (so it runs first), holds a lock of its own at Program.cs:12
    /// for 50 ms, cancels the signal and stops the loop: the program then prints how many locks it took and
    /// returns 0. "twice": the handler registered before cancels the first signal only; the program then takes
    /// 100 more locks, prints how many it took and "again", and waits for the second, which ends it. "flood":
    /// "ready" right after the first lock, then 4 threads take the lock until the process is killed (at
    /// threshold 0, a flood of lines). "ready" is printed once the first lock is taken and the handlers are in place. "earlyMS[flood]", "earlyline[flood]": <see cref="Early"/>.
    /// </summary>
    public static int Run(string mode, Action start)
    {
        if (mode.StartsWith("early", StringComparison.Ordinal))
            return Early(mode.Substring(5), start);
        PosixSignalRegistration own = null;
        if (mode == "before" || mode == "twice")
            own = PosixSignalRegistration.Create(PosixSignal.SIGTERM, Cancel);
        start();
        object gate = new object();
        long taken = 0;
        Stubs.Enter(gate, Count);
        taken++;
        Stubs.Exit(gate);
        if (mode == "flood")
            return Flood(gate);
        HandlerRegistered(); // not woven: the run-time registers its handler by reflection from its own thread, as soon as that thread runs
        if (mode == "after")
            own = PosixSignalRegistration.Create(PosixSignal.SIGTERM, Cancel);
        Console.WriteLine("ready");
        Console.Out.Flush();
        while (!stop) {
            Stubs.Enter(gate, Count);
            taken++;
            Stubs.Exit(gate);
            if (taken % 1000 == 0)
                Thread.Sleep(1);
        }
        for (int i = 0; i < (mode == "twice" ? 100 : 1); i++) { // more after the signal: the report at the exit (or the second signal) has them
            Stubs.Enter(gate, Count);
            taken++;
            Stubs.Exit(gate);
        }
        if (mode == "twice") {
            Console.WriteLine("locks taken: " + taken);
            Console.WriteLine("again");
            Thread.Sleep(Timeout.Infinite);
        }
        Console.WriteLine("stopped by the program's handler; locks taken: " + taken);
        own?.Dispose();
        return 0;
    }

    /// <summary>
    /// "earlyMS", "earlyline", each with "flood" after it or not: the first lock, then the process sends itself SIGTERM
    /// MS ms later, or ("line") as soon as the sink file LOCKTIME_OUTPUT names has its first line (10 s at most), without
    /// waiting for anything else; it goes on taking the lock ("flood": on 4 threads from the first lock on, at threshold 0
    /// a flood of lines). Were it still alive 10 s later, it would return 3.
    /// </summary>
    private static int Early(string how, Action start)
    {
        bool flood = how.EndsWith("flood", StringComparison.Ordinal);
        string when = flood ? how.Substring(0, how.Length - 5) : how;
        start();
        object gate = new object();
        Stubs.Enter(gate, Count);
        Stubs.Exit(gate);
        for (int k = 0; flood && k < 4; k++)
            new Thread(() => { while (true) { Stubs.Enter(gate, Count); Stubs.Exit(gate); } }) { IsBackground = true }.Start();
        if (when == "line") {
            string sink = Environment.GetEnvironmentVariable("LOCKTIME_OUTPUT");
            for (int ms = 0; ms < 10_000 && !(File.Exists(sink) && new FileInfo(sink).Length > 0); ms++)
                Thread.Sleep(1);
        } else if (int.Parse(when) > 0) {
            Thread.Sleep(int.Parse(when));
        }
        kill(Environment.ProcessId, 15);
        for (int i = 0; i < 10_000; i++) {
            Stubs.Enter(gate, Count);
            Stubs.Exit(gate);
            Thread.Sleep(1);
        }
        return 3;
    }

    [DllImport("libc", SetLastError = true)]
    private static extern int kill(int pid, int signal);

    private static int Flood(object gate)
    {
        Console.WriteLine("ready");
        Console.Out.Flush();
        for (int k = 0; k < 4; k++)
            new Thread(() => { while (true) { Stubs.Enter(gate, Count); Stubs.Exit(gate); } }) { IsBackground = true }.Start();
        Thread.Sleep(Timeout.Infinite);
        return 0;
    }

    /// <summary>
    /// Waits (10 s at most) until the run-time's SIGTERM handler is registered: as long as registering takes (11-40 ms,
    /// far more on a machine whose cores are all busy). The "before" and "after" modes need it in place: "after"
    /// registers the program's handler after the run-time's.
    /// </summary>
    private static void HandlerRegistered()
    {
        var registration = typeof(LockTime.Runtime.Runtime).GetField("termination", BindingFlags.Static | BindingFlags.NonPublic);
        for (int ms = 0; ms < 10_000 && registration.GetValue(null) == null; ms += 10)
            Thread.Sleep(10);
    }

    /// <summary>The program's handler: the first signal is cancelled, after a lock held 50 ms; a later one is not.</summary>
    private static void Cancel(PosixSignalContext context)
    {
        if (Interlocked.Increment(ref signals) > 1)
            return;
        object mine = new object();
        Stubs.Enter(mine, Hold);
        Thread.Sleep(50);
        Stubs.Exit(mine);
        context.Cancel = true;
        stop = true;
    }
}
#endif
