// A TUnit test that holds a System.Threading.Lock 120 ms (the gate's line is the lock statement).
using System.Threading;
using System.Threading.Tasks;

public class BinTests
{
    static readonly Lock Bin = new Lock();

    [Test]
    public async Task HoldsTheBinLock()
    {
        lock (Bin) // held 120 ms
        {
            Thread.Sleep(120);
        }
        await Task.CompletedTask;
    }
}
