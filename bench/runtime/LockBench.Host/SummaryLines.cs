// Turns the rounds' statistics into one line per figure and checks the targets: timing on adds at
// most 40 ns to an uncontended acquisition, LOCKTIME_DISABLED=1 at most 2 ns; and the budget of the
// issues "The run-time in C#" and "More locks": timing on adds at most two clock reads + 25 ns (the
// added figure less the two reads measured in the same process, per round, then the median). The
// budget is also given by the undisturbed figures, BenchmarkDotNet's Min of each benchmark (the least
// disturbed of its 61 iterations of 20 ms): on a shared virtual machine whose host takes its CPU away
// (steal time), a round's median can lie in the disturbed iterations (the same code gave rounds 30 ns
// apart by medians, 3 ns apart by minimums); the verdict stays the medians'.
// Each round is a timing process and a disabled process (DIR/roundN/timing, DIR/roundN/disabled),
// each reporting BenchmarkDotNet's median per benchmark. Within a round, "woven" is compared with
// "plain" of the timing process and "disabled" with "plain" of the disabled process (the same
// process: the same machine state and code placement as far as possible). A figure is the median
// over the rounds, and an added figure the median of the rounds' differences; "disabled" is the
// round with the median difference, printed with the plain figure of its own process (the speed of
// the same code differs from process to process). The per-round differences follow, so the spread
// a shared machine adds is visible.
// The budget is also given by the interleaved batches (DIR/roundN/interleaved, Interleaved.cs): per
// round the median over its batch triples of woven - plain - two clock reads, then the median over the
// rounds; the machine's speed is the same for the three batches of a triple, which BenchmarkDotNet's
// benchmarks, run one after the other, do not share.
using System.Globalization;

namespace LockBench.Host;

public static class SummaryLines
{
    private const double TimingTargetNs = 40, DisabledTargetNs = 2, BudgetOverClockNs = 25;

    public static int Print(string dir)
    {
        CultureInfo.CurrentCulture = CultureInfo.InvariantCulture;
        string[] rounds = Directory.GetDirectories(dir, "round*").Order(StringComparer.Ordinal).ToArray();
        if (rounds.Length == 0)
        {
            Console.Error.WriteLine($"summary: no round*/ under {dir}");
            return 1;
        }
        var timing = rounds.Select(r => Read(Path.Combine(r, "timing", "medians.tsv"))).ToArray();
        var disabled = rounds.Select(r => Read(Path.Combine(r, "disabled", "medians.tsv"))).ToArray();
        Console.WriteLine($"runtime: {rounds.Length} round(s); figures are medians over the rounds of BenchmarkDotNet's medians");
        var undisturbed = new List<string>();
        bool withinUndisturbed = true;
        var interleaved = rounds.Select(r => Path.Combine(r, "interleaved", "interleaved.tsv")).Where(File.Exists)
            .Select(ReadInterleaved).ToArray();
        var paired = new List<string>();
        bool withinPaired = interleaved.Length > 0;

        var verdicts = new List<string>();
        bool met = true;
        var budget = new List<string>();
        bool withinBudget = true;
        foreach (var (cls, kind, title, targeted, budgeted) in new[]
        {
            ("UncontendedBenchmarks", "Monitor", "Monitor lock uncontended", true, true),
            ("UncontendedBenchmarks", "Lock", "System.Threading.Lock uncontended", true, true),
            ("UncontendedBenchmarks", "ReadLock", "ReaderWriterLockSlim read lock uncontended", false, true),
            ("UncontendedBenchmarks", "Semaphore", "SemaphoreSlim(1, 1) Wait/Release uncontended", false, true),
            ("UncontendedBenchmarks", "SemaphoreAsync", "SemaphoreSlim(1, 1) await WaitAsync/Release uncontended", false, true),
            ("ContendedBenchmarks", "Monitor", "Monitor lock contended (2 threads, ns per acquisition)", false, false),
            ("ContendedBenchmarks", "Lock", "System.Threading.Lock contended (2 threads, ns per acquisition)", false, false),
        })
        {
            string plainKey = $"{cls}.{kind}_Plain", wovenKey = $"{cls}.{kind}_Woven";
            double[] addedOn = timing.Select(t => t[wovenKey].Median - t[plainKey].Median).ToArray();
            double[] addedOff = disabled.Select(d => d[wovenKey].Median - d[plainKey].Median).ToArray();
            double plain = Median(timing.Select(t => t[plainKey].Median)), woven = Median(timing.Select(t => t[wovenKey].Median));
            double on = Median(addedOn), offAdded = Median(addedOff);
            // Disabled: the round whose difference is the median one (the lower middle for an even
            // count), so its woven and plain figures add up; speed differs from process to process.
            int mid = Enumerable.Range(0, addedOff.Length).OrderBy(i => addedOff[i]).ElementAt((addedOff.Length - 1) / 2);
            double off = disabled[mid][wovenKey].Median, plainOff = disabled[mid][plainKey].Median;
            Console.WriteLine($"runtime: {title}: plain {plain:F1} ns, woven {woven:F1} ns ({Signed(on)} ns), " +
                              $"disabled {off:F1} ns ({Signed(offAdded)} ns; plain {plainOff:F1} ns in that process, round {mid + 1})");
            Console.WriteLine($"runtime:   per round, added: timing on {List(addedOn)}; disabled {List(addedOff)}");
            if (budgeted)
            {
                const string reads = "ClockBenchmarks.TwoTimestamps";
                double[] overClock = timing.Select(t => t[wovenKey].Median - t[plainKey].Median - t[reads].Median).ToArray();
                double over = Median(overClock);
                withinBudget &= over <= BudgetOverClockNs;
                budget.Add($"runtime: budget {title}: timing on {Signed(over)} ns over two clock reads <= {BudgetOverClockNs} ns " +
                           $"{(over <= BudgetOverClockNs ? "met" : "NOT MET")} (per round {List(overClock)})");
                double[] overMin = timing.Select(t => t[wovenKey].Min - t[plainKey].Min - t[reads].Min).ToArray();
                double least = Median(overMin);
                withinUndisturbed &= least <= BudgetOverClockNs;
                undisturbed.Add($"runtime: budget {title}, undisturbed: {Signed(least)} ns over two clock reads " +
                                $"(woven {Median(timing.Select(t => t[wovenKey].Min)):F1}, plain {Median(timing.Select(t => t[plainKey].Min)):F1}, " +
                                $"reads {Median(timing.Select(t => t[reads].Min)):F1} ns; per round {List(overMin)})");
                if (interleaved.Length > 0)
                {
                    var each = interleaved.Select(r => r[kind]).ToArray();
                    double inPairs = Median(each.Select(e => e.Added));
                    withinPaired &= inPairs <= BudgetOverClockNs;
                    paired.Add($"runtime: budget {title}, interleaved: {Signed(inPairs)} ns over two clock reads <= {BudgetOverClockNs} ns " +
                               $"{(inPairs <= BudgetOverClockNs ? "met" : "NOT MET")} (woven {Median(each.Select(e => e.Woven)):F1}, " +
                               $"plain {Median(each.Select(e => e.Plain)):F1}, reads {Median(each.Select(e => e.Reads)):F1} ns; " +
                               $"per round {List(each.Select(e => e.Added))}, quartiles of the batches " +
                               $"[{string.Join(" ", each.Select(e => $"{Signed(e.Q1)}..{Signed(e.Q3)}"))}])");
                }
            }
            if (!targeted)
                continue;
            bool okOn = on <= TimingTargetNs, okOff = offAdded <= DisabledTargetNs;
            met &= okOn && okOff;
            verdicts.Add($"runtime: target {title}: timing on {Signed(on)} ns <= {TimingTargetNs} ns {(okOn ? "met" : "NOT MET")}; " +
                         $"disabled {Signed(offAdded)} ns <= {DisabledTargetNs} ns {(okOff ? "met" : "NOT MET")}");
        }
        Console.WriteLine($"runtime: Stopwatch.GetTimestamp: {Median(timing.Select(t => t["ClockBenchmarks.GetTimestamp"].Median)):F1} ns; " +
                          $"two in a row: {Median(timing.Select(t => t["ClockBenchmarks.TwoTimestamps"].Median)):F1} ns (the floor of a timed acquisition); " +
                          $"for comparison Environment.TickCount64: {Median(timing.Select(t => t["ClockBenchmarks.TickCount64"].Median)):F1} ns");
        verdicts.ForEach(Console.WriteLine);
        Console.WriteLine($"runtime: targets {(met ? "met" : "NOT MET")}");
        budget.ForEach(Console.WriteLine);
        Console.WriteLine($"runtime: budget (two clock reads + {BudgetOverClockNs} ns) {(withinBudget ? "met" : "NOT MET")}");
        undisturbed.ForEach(Console.WriteLine);
        Console.WriteLine($"runtime: budget by the undisturbed figures (BenchmarkDotNet's Min, not the verdict) " +
                          $"{(withinUndisturbed ? "within" : "NOT within")} two clock reads + {BudgetOverClockNs} ns");
        if (interleaved.Length > 0)
        {
            paired.ForEach(Console.WriteLine);
            Console.WriteLine($"runtime: budget by the interleaved batches ({interleaved.Length} round(s)) " +
                              $"{(withinPaired ? "met" : "NOT MET")}: two clock reads + {BudgetOverClockNs} ns");
        }
        return 0;
    }

    /// <summary>interleaved.tsv: kind, median, lower and upper quartile of the added ns, medians of the plain, woven and reads batches.</summary>
    private static Dictionary<string, (double Added, double Q1, double Q3, double Plain, double Woven, double Reads)> ReadInterleaved(string path) =>
        File.ReadLines(path)
            .Select(line => line.Split('\t'))
            .ToDictionary(f => f[0], f =>
            {
                double[] v = f.Skip(1).Select(x => double.Parse(x, CultureInfo.InvariantCulture)).ToArray();
                return (v[0], v[1], v[2], v[3], v[4], v[5]);
            });

    private static string List(IEnumerable<double> values) =>
        "[" + string.Join(" ", values.Select(Signed)) + "]";

    /// <summary>"+1.2", "-0.4"; a value that rounds to zero is "+0.0" (not "-0.0").</summary>
    private static string Signed(double value)
    {
        double rounded = Math.Round(value, 1);
        return (rounded == 0 ? 0 : rounded).ToString("+0.0;-0.0;+0.0", CultureInfo.InvariantCulture);
    }

    private static double Median(IEnumerable<double> values)
    {
        double[] sorted = values.Order().ToArray();
        int mid = sorted.Length / 2;
        return sorted.Length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }

    /// <summary>medians.tsv: name, median, min, max, iterations (ns per operation); the median and the min by name.</summary>
    private static Dictionary<string, (double Median, double Min)> Read(string path) =>
        File.ReadLines(path)
            .Select(line => line.Split('\t'))
            .ToDictionary(f => f[0], f => (double.Parse(f[1], CultureInfo.InvariantCulture), double.Parse(f[2], CultureInfo.InvariantCulture)));
}
