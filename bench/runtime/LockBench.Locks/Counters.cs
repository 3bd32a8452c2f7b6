// The locked code the run-time benchmark measures. This one file is compiled twice, into
// LockBench.Plain (left as the compiler wrote it) and LockBench.Woven (woven by locktime), so the
// two assemblies differ only by the weaving. Each method takes the lock `times` times in a loop and
// increments a field inside it: the lock has a body the JIT cannot drop, and the call into this
// assembly is paid once per loop, not once per acquisition.
using System.Runtime.CompilerServices;
using System.Threading;

namespace LockBench;

/// <summary>A counter guarded by <c>lock (object)</c>: Monitor.Enter(object, ref bool) / Monitor.Exit.</summary>
public sealed class MonitorCounter
{
    private readonly object _gate = new();
    private long _count;

    public long Count => Volatile.Read(ref _count);

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void Increment(int times)
    {
        for (int i = 0; i < times; i++)
        {
            lock (_gate)
            {
                _count++;
            }
        }
    }
}

/// <summary>A counter guarded by a C# 13 <c>lock</c> on a System.Threading.Lock: EnterScope / Scope.Dispose.</summary>
public sealed class LockCounter
{
    private readonly Lock _gate = new();
    private long _count;

    public long Count => Volatile.Read(ref _count);

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void Increment(int times)
    {
        for (int i = 0; i < times; i++)
        {
            lock (_gate)
            {
                _count++;
            }
        }
    }
}

/// <summary>A counter read under a ReaderWriterLockSlim's read lock: EnterReadLock / ExitReadLock.</summary>
public sealed class ReadLockCounter
{
    private readonly ReaderWriterLockSlim _gate = new();
    private long _count;

    public long Count => Volatile.Read(ref _count);

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void Increment(int times)
    {
        for (int i = 0; i < times; i++)
        {
            _gate.EnterReadLock();
            try
            {
                _count++;
            }
            finally
            {
                _gate.ExitReadLock();
            }
        }
    }
}

/// <summary>A counter guarded by a SemaphoreSlim used as a lock (maximum 1): Wait / Release.</summary>
public sealed class SemaphoreCounter
{
    private readonly SemaphoreSlim _gate = new(1, 1);
    private long _count;

    public long Count => Volatile.Read(ref _count);

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void Increment(int times)
    {
        for (int i = 0; i < times; i++)
        {
            _gate.Wait();
            try
            {
                _count++;
            }
            finally
            {
                _gate.Release();
            }
        }
    }

    /// <summary>The same with <c>await WaitAsync()</c>: uncontended, every wait completes at once.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    public async System.Threading.Tasks.Task IncrementAsync(int times)
    {
        for (int i = 0; i < times; i++)
        {
            await _gate.WaitAsync();
            try
            {
                _count++;
            }
            finally
            {
                _gate.Release();
            }
        }
    }
}
