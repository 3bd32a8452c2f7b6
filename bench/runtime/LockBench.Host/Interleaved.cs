// The budget measured a second way, in one process with timing on: short batches of the plain loop, the
// woven loop and a loop of two clock reads, taken one after the other, many times over; per batch triple
// the woven time less the plain time less the reads (ns per acquisition), and the median of those.
// BenchmarkDotNet measures each benchmark in turn, a second or more apart, so a change in the machine's
// speed between the plain, the woven and the clock benchmark (other load, steal time on a shared virtual
// machine) falls into the difference; three batches of 1000 operations take a fraction of a millisecond,
// so they meet the same machine, and a batch triple that was disturbed is one sample among many.
extern alias plain;
extern alias woven;

using System.Diagnostics;
using System.Globalization;
using System.Runtime.CompilerServices;

namespace LockBench.Host;

public static class Interleaved
{
    /// <summary>Acquisitions per batch, batch triples per kind, warm-up passes (each then a pause for the tiered JIT).</summary>
    private const int Ops = 1000, Samples = 2001, WarmupPasses = 6, WarmupCalls = 200, WarmupPauseMs = 150;

    private static long s_sink;

    /// <summary>
    /// Measures every kind and writes DIR/interleaved.tsv: kind, then the median, the lower and the upper
    /// quartile of the added ns per acquisition over two clock reads, and the medians of the plain, woven and
    /// reads batches (ns per operation). Returns 0.
    /// </summary>
    public static int Run(string artifacts)
    {
        var monitor = (plain: new plain::LockBench.MonitorCounter(), woven: new woven::LockBench.MonitorCounter());
        var lockC = (plain: new plain::LockBench.LockCounter(), woven: new woven::LockBench.LockCounter());
        var read = (plain: new plain::LockBench.ReadLockCounter(), woven: new woven::LockBench.ReadLockCounter());
        var semaphore = (plain: new plain::LockBench.SemaphoreCounter(), woven: new woven::LockBench.SemaphoreCounter());
        var kinds = new (string Kind, Action<int> Plain, Action<int> Woven)[]
        {
            ("Monitor", monitor.plain.Increment, monitor.woven.Increment),
            ("Lock", lockC.plain.Increment, lockC.woven.Increment),
            ("ReadLock", read.plain.Increment, read.woven.Increment),
            ("Semaphore", semaphore.plain.Increment, semaphore.woven.Increment),
            ("SemaphoreAsync", n => semaphore.plain.IncrementAsync(n).GetAwaiter().GetResult(),
                               n => semaphore.woven.IncrementAsync(n).GetAwaiter().GetResult()),
        };
        Directory.CreateDirectory(artifacts);
        var lines = new List<string>();
        foreach (var (kind, plainLoop, wovenLoop) in kinds)
        {
            Action<int>[] variants = { plainLoop, wovenLoop, Reads };
            for (int pass = 0; pass < WarmupPasses; pass++)
            {
                foreach (Action<int> v in variants)
                    for (int c = 0; c < WarmupCalls; c++)
                        v(Ops);
                Thread.Sleep(WarmupPauseMs);
            }
            double[] added = new double[Samples], plainNs = new double[Samples], wovenNs = new double[Samples], readsNs = new double[Samples];
            for (int i = 0; i < Samples; i++)
            {
                // Every other triple in the reverse order: none of the three always comes first.
                bool forward = (i & 1) == 0;
                double a = Time(forward ? plainLoop : Reads), b = Time(wovenLoop), c = Time(forward ? Reads : plainLoop);
                plainNs[i] = forward ? a : c;
                readsNs[i] = forward ? c : a;
                wovenNs[i] = b;
                added[i] = wovenNs[i] - plainNs[i] - readsNs[i];
            }
            Array.Sort(added);
            lines.Add(string.Create(CultureInfo.InvariantCulture,
                $"{kind}\t{added[Samples / 2]:F3}\t{added[Samples / 4]:F3}\t{added[3 * Samples / 4]:F3}\t{Median(plainNs):F3}\t{Median(wovenNs):F3}\t{Median(readsNs):F3}"));
            Console.WriteLine($"interleaved: {kind}: {lines[^1]}");
        }
        File.WriteAllLines(Path.Combine(artifacts, "interleaved.tsv"), lines);
        return 0;
    }

    /// <summary>One batch of <see cref="Ops"/> operations of <paramref name="loop"/>, in ns per operation.</summary>
    private static double Time(Action<int> loop)
    {
        long t0 = Stopwatch.GetTimestamp();
        loop(Ops);
        long t1 = Stopwatch.GetTimestamp();
        return (t1 - t0) * 1e9 / Stopwatch.Frequency / Ops;
    }

    /// <summary>What timing adds at the least: two clock reads per operation (acquire, release), as ClockBenchmarks.TwoTimestamps.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Reads(int times)
    {
        long sum = 0;
        for (int i = 0; i < times; i++)
        {
            long t0 = Stopwatch.GetTimestamp();
            sum += Stopwatch.GetTimestamp() - t0;
        }
        s_sink += sum;
    }

    private static double Median(double[] values)
    {
        double[] sorted = (double[])values.Clone();
        Array.Sort(sorted);
        return sorted[sorted.Length / 2];
    }
}
