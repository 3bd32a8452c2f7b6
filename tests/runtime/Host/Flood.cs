// Flood.cs - a flood of slow-lock lines into a sink that takes nothing, for tests/integration/runtime.sh.
using System;
using System.IO;
using System.Threading;
using TestHost;

internal static class Flood
{
    private const int Site = 1, Threads = 4, Each = 2000;

    /// <summary>
    /// 4 threads x 2,000 locks at Program.cs:11 (at threshold 0, 8,000 lines: far more than a pipe holds),
    /// then, 0.3 s later, "flooded" on stdout (the program's own output, which the run-time must not hold up), then by
    /// <paramref name="mode"/>: "exit" returns 0; "throw" throws from Main; "term" prints "ready" and takes
    /// the lock every millisecond until it is killed; "interval" copies the report file (<paramref name="report"/>)
    /// to COPY.1 0.3 s later and to COPY.2 a second after that (<paramref name="copy"/>).
    /// </summary>
    public static int Run(string mode, string report, string copy)
    {
        object gate = new object();
        var threads = new Thread[Threads];
        for (int k = 0; k < threads.Length; k++) {
            threads[k] = new Thread(() => { for (int i = 0; i < Each; i++) { Stubs.Enter(gate, Site); Stubs.Exit(gate); } });
            threads[k].Start();
        }
        foreach (var t in threads)
            t.Join();
        Thread.Sleep(300); // the line writer's sink has taken all it takes by now: a writer that holds Console.Out blocks this line
        Console.WriteLine("flooded");
        if (mode == "throw")
            throw new InvalidOperationException("thrown after the flood");
        if (mode == "interval") {
            Thread.Sleep(300);
            File.Copy(report, copy + ".1", true);
            Thread.Sleep(1000);
            File.Copy(report, copy + ".2", true);
        }
        if (mode == "term") {
            Console.WriteLine("ready");
            while (true) {
                Stubs.Enter(gate, Site);
                Stubs.Exit(gate);
                Thread.Sleep(1);
            }
        }
        return 0;
    }
}
