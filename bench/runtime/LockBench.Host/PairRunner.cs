// Runs one piece of work on two threads at once: the calling thread and a worker that stays parked
// between runs (creating a thread per invocation would cost more than the work being measured).
// Both start together: the caller waits, spinning, until the worker has woken and is about to begin.
using System.Threading;

namespace LockBench.Host;

public sealed class PairRunner : IDisposable
{
    private readonly Thread _worker;
    private readonly SemaphoreSlim _go = new(0);
    private readonly SemaphoreSlim _done = new(0);
    private Action<int>? _work;
    private int _times;
    private volatile bool _started;
    private volatile bool _stop;

    public PairRunner()
    {
        _worker = new Thread(WorkerLoop) { IsBackground = true, Name = "LockBench contender" };
        _worker.Start();
    }

    public void Run(Action<int> work, int times)
    {
        _work = work;
        _times = times;
        _started = false;
        _go.Release();
        SpinWait spin = default;
        while (!_started)
            spin.SpinOnce(sleep1Threshold: -1);
        work(times);
        _done.Wait();
    }

    private void WorkerLoop()
    {
        while (true)
        {
            _go.Wait();
            if (_stop)
                return;
            _started = true;
            _work!(_times);
            _done.Release();
        }
    }

    public void Dispose()
    {
        _stop = true;
        _go.Release();
        _worker.Join();
    }
}
