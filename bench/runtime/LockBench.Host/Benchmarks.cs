// The benchmarks: the same locked loops from the plain and the woven assembly, side by side, and
// the clock read that timing a lock is built on. Every lock benchmark reports time per lock
// acquisition (OperationsPerInvoke = acquisitions per call).
extern alias plain;
extern alias woven;

using System.Diagnostics;
using BenchmarkDotNet.Attributes;

namespace LockBench.Host;

/// <summary>One thread, a lock no one else takes: the common case, and the cost of the timing itself.</summary>
public class UncontendedBenchmarks
{
    public const int Times = 1000;

    private readonly plain::LockBench.MonitorCounter _plainMonitor = new();
    private readonly woven::LockBench.MonitorCounter _wovenMonitor = new();
    private readonly plain::LockBench.LockCounter _plainLock = new();
    private readonly woven::LockBench.LockCounter _wovenLock = new();

    [Benchmark(OperationsPerInvoke = Times)]
    public void Monitor_Plain() => _plainMonitor.Increment(Times);

    [Benchmark(OperationsPerInvoke = Times)]
    public void Monitor_Woven() => _wovenMonitor.Increment(Times);

    [Benchmark(OperationsPerInvoke = Times)]
    public void Lock_Plain() => _plainLock.Increment(Times);

    [Benchmark(OperationsPerInvoke = Times)]
    public void Lock_Woven() => _wovenLock.Increment(Times);

    private readonly plain::LockBench.ReadLockCounter _plainRead = new();
    private readonly woven::LockBench.ReadLockCounter _wovenRead = new();
    private readonly plain::LockBench.SemaphoreCounter _plainSemaphore = new();
    private readonly woven::LockBench.SemaphoreCounter _wovenSemaphore = new();

    [Benchmark(OperationsPerInvoke = Times)]
    public void ReadLock_Plain() => _plainRead.Increment(Times);

    [Benchmark(OperationsPerInvoke = Times)]
    public void ReadLock_Woven() => _wovenRead.Increment(Times);

    [Benchmark(OperationsPerInvoke = Times)]
    public void Semaphore_Plain() => _plainSemaphore.Increment(Times);

    [Benchmark(OperationsPerInvoke = Times)]
    public void Semaphore_Woven() => _wovenSemaphore.Increment(Times);

    [Benchmark(OperationsPerInvoke = Times)]
    public System.Threading.Tasks.Task SemaphoreAsync_Plain() => _plainSemaphore.IncrementAsync(Times);

    [Benchmark(OperationsPerInvoke = Times)]
    public System.Threading.Tasks.Task SemaphoreAsync_Woven() => _wovenSemaphore.IncrementAsync(Times);
}

/// <summary>
/// Two threads (this one and a parked worker) each take one shared lock <see cref="PerThread"/>
/// times: wall time per acquisition of the pair, i.e. the inverse of the lock's throughput.
/// How contended it really is depends on the machine: Monitor and Lock are not fair (the thread
/// that releases takes the lock straight back), and when other load keeps one core busy the two
/// threads mostly run one after the other, so the figure ranges from the uncontended cost (~10 ns)
/// to that of a lock that changes hands (~30-100 ns plain). Compare plain and woven of one process.
/// </summary>
public class ContendedBenchmarks
{
    public const int PerThread = 50_000;

    private PairRunner? _pair;
    private Action<int>? _plainMonitor, _wovenMonitor, _plainLock, _wovenLock;

    [GlobalSetup]
    public void Setup()
    {
        _pair = new PairRunner();
        _plainMonitor = new plain::LockBench.MonitorCounter().Increment;
        _wovenMonitor = new woven::LockBench.MonitorCounter().Increment;
        _plainLock = new plain::LockBench.LockCounter().Increment;
        _wovenLock = new woven::LockBench.LockCounter().Increment;
    }

    [GlobalCleanup]
    public void Cleanup() => _pair?.Dispose();

    [Benchmark(OperationsPerInvoke = 2 * PerThread)]
    public void Monitor_Plain() => _pair!.Run(_plainMonitor!, PerThread);

    [Benchmark(OperationsPerInvoke = 2 * PerThread)]
    public void Monitor_Woven() => _pair!.Run(_wovenMonitor!, PerThread);

    [Benchmark(OperationsPerInvoke = 2 * PerThread)]
    public void Lock_Plain() => _pair!.Run(_plainLock!, PerThread);

    [Benchmark(OperationsPerInvoke = 2 * PerThread)]
    public void Lock_Woven() => _pair!.Run(_wovenLock!, PerThread);
}

/// <summary>The floor of timing on: a timed uncontended lock reads the clock twice (acquire, release).</summary>
public class ClockBenchmarks
{
    [Benchmark]
    public long GetTimestamp() => Stopwatch.GetTimestamp();

    [Benchmark]
    public long TwoTimestamps()
    {
        long t0 = Stopwatch.GetTimestamp();
        return Stopwatch.GetTimestamp() - t0;
    }

    /// <summary>For comparison: the coarse millisecond clock (CLOCK_MONOTONIC_COARSE on Linux).</summary>
    [Benchmark]
    public long TickCount64() => Environment.TickCount64;
}
