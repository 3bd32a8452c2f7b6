// Program.cs - 64 threads, each taking one of 8 locks N times (the first argument, default 20,000) around
// a little work; prints the wall time of the run in ms ("elapsed N"). Woven at threshold 0, every
// acquisition is a line: 1.28 million by default.
using System;
using System.Diagnostics;
using System.Threading;

internal static class Program
{
    private const int Threads = 64, Locks = 8;
    private static int iterations = 20000;
    private static readonly object[] locks = new object[Locks];
    private static readonly long[] counts = new long[Locks];

    private static void Work(object index)
    {
        int me = (int)index;
        for (int i = 0; i < iterations; i++) {
            int k = (me + i) % Locks;
            lock (locks[k])
                counts[k]++;
        }
    }

    private static void Main(string[] args)
    {
        if (args.Length > 0)
            iterations = int.Parse(args[0]);
        for (int k = 0; k < Locks; k++)
            locks[k] = new object();
        var threads = new Thread[Threads];
        var watch = Stopwatch.StartNew();
        for (int t = 0; t < Threads; t++)
            (threads[t] = new Thread(Work)).Start(t);
        foreach (var t in threads)
            t.Join();
        long total = 0;
        foreach (long c in counts)
            total += c;
        Console.WriteLine("elapsed " + watch.Elapsed.TotalMilliseconds.ToString("F1") + " total " + total);
    }
}
