// Busy.cs - `App busy` (tests/integration/woven.sh): four threads taking one lock in turn on a CPU they share (the
// check runs it on one core), each hold a 200 us spin. What the program itself times inside the lock, summed over
// every hold, on stderr: the holds the run-time reports hold it, and sum to no more than the run's wall time (the
// holds of one lock never overlap).
using System;
using System.Diagnostics;
using System.Globalization;
using System.Threading;

internal static class Busy
{
    private const int Threads = 4, Each = 1000;
    private static readonly object gate = new object();
    private static long inside;

    private static void Spin(long ticks)
    {
        long end = Stopwatch.GetTimestamp() + ticks;
        while (Stopwatch.GetTimestamp() < end)
        {
        }
    }

    private static void Work()
    {
        long hold = Stopwatch.Frequency / 5000;
        for (int i = 0; i < Each; i++)
        {
            lock (gate)
            {
                long from = Stopwatch.GetTimestamp();
                Spin(hold);
                inside += Stopwatch.GetTimestamp() - from;
            }
            Spin(hold / 4);
        }
    }

    internal static void Run()
    {
        var wall = Stopwatch.StartNew();
        var threads = new Thread[Threads];
        for (int i = 0; i < threads.Length; i++)
            (threads[i] = new Thread(Work)).Start();
        foreach (var t in threads)
            t.Join();
        wall.Stop();
        Console.Error.WriteLine(string.Format(CultureInfo.InvariantCulture, "Busy: wall {0:F3} ms, inside {1:F3} ms",
                                              wall.Elapsed.TotalMilliseconds, inside * 1000.0 / Stopwatch.Frequency));
    }
}
