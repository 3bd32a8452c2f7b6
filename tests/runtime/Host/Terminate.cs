// Terminate.cs - a program stopped by SIGTERM while it takes the lock at Program.cs:11, for tests/integration/runtime.sh
// (.NET only: .NET Framework and Mono have no PosixSignalRegistration, and the run-time no SIGTERM handler there).
#if NET
using System;
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
    /// threshold 0, a flood of lines). "ready" is printed once the first lock is taken and the handlers are in place.
    /// </summary>
    public static int Run(string mode, Action start)
    {
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
        Thread.Sleep(400);
        HandlerRegistered(); // the run-time registers its handler from its own thread, 0.1 s after its start (Runtime.SignalStartS)
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
    /// Waits (10 s at most) until the run-time's SIGTERM handler is registered: 0.1 s after its start, and as long
    /// as registering takes (11-40 ms, far more on a machine whose cores are all busy: a fixed 0.4 s was too short
    /// about 1 run in 30 with three such programs at once on 2 cores).
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
