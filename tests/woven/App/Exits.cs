// Exits.cs - `App term`, `App interrupt`, `App late`, `App exitonly` and `App modinit` (tests/integration/woven.sh): the run-time's start and the
// ends of a process. Each is the whole program: its first timed lock is the scenario's.
using System;
using System.Runtime.InteropServices;
using System.Threading;

internal static class Exits
{
    private static readonly object first = new object(), early = new object(), late = new object(),
        atExit = new object();
    private static int count;

    [DllImport("libc", EntryPoint = "kill")]
    private static extern int Kill(int pid, int signal);

    [DllImport("libc", EntryPoint = "getpid")]
    private static extern int ProcessId();

    private static void Spin()
    {
        while (true)
            Thread.SpinWait(1000);
    }

    // `App term MS`: four threads that keep the cores busy (a loaded machine: what the run-time leaves to a thread
    // of its own comes late), one lock, then (MS milliseconds later) a SIGTERM the process sends itself,
    // "terminating" on stdout first; then idle until the signal ends the process (at most a minute: a run the
    // signal missed ends by itself, exit code 0). .NET on Unix only.
    internal static void Term(int ms)
    {
        for (int i = 0; i < 4; i++)
            new Thread(Spin) { IsBackground = true }.Start();
        lock (first)
            count++;
        if (ms > 0)
            Thread.Sleep(ms);
        Console.WriteLine("terminating");
        Kill(ProcessId(), 15);
        for (int i = 0; i < 600; i++)
            Thread.Sleep(100);
    }

    private static void HoldEarly(object sender, EventArgs e)
    {
        lock (early)
            Thread.Sleep(50);
    }

    private static void HoldLate(object sender, EventArgs e)
    {
        lock (late)
            Thread.Sleep(50);
    }

    private static void HoldAtExit(object sender, EventArgs e)
    {
        lock (atExit)
            Thread.Sleep(20);
    }

    // `App exitonly`: the program's only lock, held 20 ms inside a ProcessExit handler - the run-time starts there,
    // after the exit read ProcessExit's handlers.
    internal static void ExitOnly()
    {
        AppDomain.CurrentDomain.ProcessExit += HoldAtExit;
        Console.WriteLine("exit only");
    }

    // `App modinit`: what the library's module initializer did (Woven.Lib's Init.cs), read without a lock.
    internal static void ModuleInitializer()
    {
        Console.WriteLine(Woven.Lib.Ledger.Opened);
    }

    private static volatile bool interrupted;

    // `App interrupt [cancel]`: one lock, "ready" on stdout, then the lock taken every millisecond until a SIGINT (Ctrl+C)
    // ends the process; with "cancel", until the program's own Ctrl+C handler, added before the first lock (after the
    // run-time's, which a woven program adds before Main), cancels the signal and stops the loop: then 100 more locks,
    // "locks taken: N" on stdout, and Main returns.
    internal static void Interrupt(bool cancel)
    {
        if (cancel)
            Console.CancelKeyPress += (sender, e) => { e.Cancel = true; interrupted = true; };
        int taken = 0;
        lock (first)
            taken++;
        Console.WriteLine("ready");
        while (!interrupted) {
            lock (first)
                taken++;
            Thread.Sleep(1);
        }
        for (int i = 0; i < 100; i++)
            lock (first)
                taken++;
        Console.WriteLine("locks taken: " + taken);
    }

    // `App late`: a ProcessExit handler added just after the first timed lock and one added as Main returns, each
    // holding a lock of its own 50 ms.
    internal static void Late()
    {
        lock (first)
            count++;
        AppDomain.CurrentDomain.ProcessExit += HoldEarly;
        Thread.Sleep(100);
        Console.WriteLine("late handlers");
        AppDomain.CurrentDomain.ProcessExit += HoldLate;
    }
}
