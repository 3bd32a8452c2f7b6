// A counter whose lock is held 30 ms on each Add.
using System.Threading;

namespace Lib;

public sealed class Counter
{
    private readonly object _gate = new object();
    private int _value;

    public int Add(int n)
    {
        lock (_gate)
        {
            Thread.Sleep(30);
            return _value += n;
        }
    }
}
