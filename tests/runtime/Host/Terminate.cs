// Terminate.cs - a program stopped by SIGTERM while it takes the lock at Program.cs:11, for tests/integration/runtime.sh
// (.NET only: .NET Framework and Mono have no PosixSignalRegistration, and the run-time no SIGTERM handler there).
#if NET
using System;
using System.Runtime.InteropServices;
using System.Threading;
using TestHost;

internal static class Terminate
{
    private const int Count = 1;

    private static volatile bool stop;

    /// <summary>
    /// <paramref name="mode"/> "plain": takes the lock until the process is killed. "before" / "after": the
    /// program's own SIGTERM handler, registered before the run-time starts (so it runs after the run-time's)
    /// or after the run-time registered its own (so it runs first), cancels the signal and stops the loop:
    /// the program then prints how many locks it took and returns 0. "ready" is printed once the first lock
    /// is taken and the handlers are in place.
    /// </summary>
    public static int Run(string mode, Action start)
    {
        PosixSignalRegistration own = null;
        if (mode == "before")
            own = PosixSignalRegistration.Create(PosixSignal.SIGTERM, Cancel);
        start();
        object gate = new object();
        long taken = 0;
        Stubs.Enter(gate, Count);
        taken++;
        Stubs.Exit(gate);
        Thread.Sleep(400); // the run-time registers its handler from its own thread, as that thread starts (Runtime.MainLoop)
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
        Stubs.Enter(gate, Count); // one more after the signal: the report at the exit has it
        taken++;
        Stubs.Exit(gate);
        Console.WriteLine("stopped by the program's handler; locks taken: " + taken);
        own?.Dispose();
        return 0;
    }

    private static void Cancel(PosixSignalContext context)
    {
        context.Cancel = true;
        stop = true;
    }
}
#endif
