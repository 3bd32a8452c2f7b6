// The BenchmarkDotNet configuration: in-process (so the woven DLL beside the host is what runs, not
// a rebuilt copy), Median/Min/Max in the tables, GitHub markdown tables under the artifacts folder.
// The job is many short iterations (61 x 20 ms): on a shared 2-core machine a long iteration is
// almost always cut by another process, a short one often is not, so the median stays on the
// undisturbed figure. A whole process (10 benchmarks) takes about 20 s; run.sh repeats it in rounds.
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Exporters;
using Perfolizer.Horology;
using BenchmarkDotNet.Jobs;
using BenchmarkDotNet.Loggers;
using BenchmarkDotNet.Toolchains.InProcess.Emit;
using BenchmarkDotNet.Validators;

namespace LockBench.Host;

public static class BenchConfig
{
    public static IConfig Create(string artifactsPath, string label)
    {
        Job job = Job.Default
            .WithToolchain(InProcessEmitToolchain.Instance)
            .WithLaunchCount(1)
            .WithWarmupCount(10)
            .WithIterationCount(61)
            .WithIterationTime(TimeInterval.FromMilliseconds(20))
            .WithId(label);

        return ManualConfig.CreateEmpty()
            .AddJob(job)
            .AddLogger(ConsoleLogger.Default)
            .AddColumnProvider(DefaultColumnProviders.Instance)
            .AddColumn(StatisticColumn.Median, StatisticColumn.Min, StatisticColumn.Max)
            .AddExporter(MarkdownExporter.GitHub)
            .AddValidator(JitOptimizationsValidator.FailOnError)
            .AddValidator(DefaultConfig.Instance.GetValidators().ToArray())
            .AddAnalyser(DefaultConfig.Instance.GetAnalysers().ToArray())
            .WithArtifactsPath(artifactsPath)
            .WithOptions(ConfigOptions.DisableLogFile);
    }
}
