// Entry point of the run-time benchmark host (driven by bench/runtime/run.sh):
//   LockBench.Host run timing   DIR   plain and woven (timing on), and the clock; LOCKTIME_DISABLED unset
//   LockBench.Host run disabled DIR   plain and woven with LOCKTIME_DISABLED=1 (a process of its own:
//                                     the woven helper reads the variable once)
//   LockBench.Host run interleaved DIR  timing on: plain, woven and clock-read batches taken in turn
//                                     (Interleaved.cs), DIR/interleaved/interleaved.tsv
//   LockBench.Host summary DIR        one line per figure from DIR/round*/{timing,disabled,interleaved}
//   LockBench.Host jit                the checks, then one call of each locked loop, plain and woven:
//                                     run with DOTNET_JitDisasm to see the machine code of both
// A run writes BenchmarkDotNet's markdown tables to DIR/<label>/results/ and the medians
// (ns per operation) to DIR/<label>/medians.tsv.
extern alias plain;
extern alias woven;

using System.Globalization;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;

namespace LockBench.Host;

public static class Program
{
    public static int Main(string[] args)
    {
        if (args.Length == 3 && args[0] == "run" && (args[1] == "timing" || args[1] == "disabled"))
            return Run(args[1], Path.Combine(Path.GetFullPath(args[2]), args[1]));
        if (args.Length == 3 && args[0] == "run" && args[1] == "interleaved")
            return RunInterleaved(Path.Combine(Path.GetFullPath(args[2]), args[1]));
        if (args.Length == 1 && args[0] == "jit")
            return Jit();
        if (args.Length == 2 && args[0] == "summary")
            return SummaryLines.Print(Path.GetFullPath(args[1]));
        Console.Error.WriteLine("usage: LockBench.Host run timing|disabled|interleaved DIR | summary DIR | jit");
        return 2;
    }

    private static int Jit()
    {
        bool disabled = Environment.GetEnvironmentVariable("LOCKTIME_DISABLED") == "1";
        if (!WeaveCheck.Run(expectDisabled: disabled, exercise: false))
            return 1;
        // The checks have started the merged run-time (Api's static constructor): a method compiled
        // from here on sees its Off flag as the constant it is.
        // Each first call compiles its loop (and then the wrappers it calls, when not inlined): with
        // DOTNET_JitDisasm the Increment listings come in this order - plain, woven, plain, woven.
        new plain::LockBench.MonitorCounter().Increment(1);
        new woven::LockBench.MonitorCounter().Increment(1);
        new plain::LockBench.LockCounter().Increment(1);
        new woven::LockBench.LockCounter().Increment(1);
        return 0;
    }

    private static int RunInterleaved(string artifacts)
    {
        if (Environment.GetEnvironmentVariable("LOCKTIME_DISABLED") == "1")
        {
            Console.Error.WriteLine("run interleaved: LOCKTIME_DISABLED must not be 1");
            return 2;
        }
        if (!WeaveCheck.Run(expectDisabled: false))
        {
            Console.Error.WriteLine("check failed: this process does not run what the benchmark claims to measure");
            return 1;
        }
        return Interleaved.Run(artifacts);
    }

    private static int Run(string label, string artifacts)
    {
        bool disabled = Environment.GetEnvironmentVariable("LOCKTIME_DISABLED") == "1";
        if (disabled != (label == "disabled"))
        {
            Console.Error.WriteLine($"run {label}: LOCKTIME_DISABLED must {(label == "disabled" ? "" : "not ")}be 1");
            return 2;
        }
        if (!WeaveCheck.Run(expectDisabled: disabled))
        {
            Console.Error.WriteLine("check failed: this process does not run what the benchmark claims to measure");
            return 1;
        }

        Type[] types = label == "disabled"
            ? new[] { typeof(UncontendedBenchmarks), typeof(ContendedBenchmarks) }
            : new[] { typeof(UncontendedBenchmarks), typeof(ContendedBenchmarks), typeof(ClockBenchmarks) };
        Directory.CreateDirectory(artifacts);
        Summary[] summaries = BenchmarkRunner.Run(types, BenchConfig.Create(artifacts, label));

        var lines = new List<string>();
        bool complete = true;
        foreach (BenchmarkReport report in summaries.SelectMany(s => s.Reports))
        {
            string name = $"{report.BenchmarkCase.Descriptor.Type.Name}.{report.BenchmarkCase.Descriptor.WorkloadMethod.Name}";
            if (report.ResultStatistics is not { } stats)
            {
                Console.Error.WriteLine($"{name}: no result");
                complete = false;
                continue;
            }
            lines.Add(string.Create(CultureInfo.InvariantCulture,
                $"{name}\t{stats.Median:F3}\t{stats.Min:F3}\t{stats.Max:F3}\t{stats.N}"));
        }
        File.WriteAllLines(Path.Combine(artifacts, "medians.tsv"), lines);
        return complete ? 0 : 1;
    }
}
