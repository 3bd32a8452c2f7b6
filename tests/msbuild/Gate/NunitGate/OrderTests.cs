// A System.Threading.Lock held 120 ms on another thread while the test's thread waits for it: the hold's
// line is the lambda's lock statement, the wait's the test's.
using System.Threading;
using NUnit.Framework;

public class OrderTests
{
    static readonly Lock Orders = new Lock();

    [Test]
    public void WaitsForTheOrdersLock()
    {
        using var held = new ManualResetEventSlim();
        var holder = new Thread(() =>
        {
            lock (Orders) // held 120 ms
            {
                held.Set();
                Thread.Sleep(120);
            }
        });
        holder.Start();
        held.Wait();
        lock (Orders) // waits for the holder
        {
        }
        holder.Join();
    }
}
