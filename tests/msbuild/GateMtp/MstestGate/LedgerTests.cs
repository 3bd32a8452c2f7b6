// An MSTest test whose thread waits about 120 ms for a lock another thread holds (LT201 on the wait's line,
// LT200 on the holder's).
using System.Threading;
using Microsoft.VisualStudio.TestTools.UnitTesting;

[TestClass]
public class LedgerTests
{
    static readonly object Ledger = new object();

    [TestMethod]
    public void WaitsForTheLedger()
    {
        using var held = new ManualResetEventSlim();
        var holder = new Thread(() => {
            lock (Ledger) // held 120 ms
            {
                held.Set();
                Thread.Sleep(120);
            }
        });
        holder.Start();
        held.Wait();
        lock (Ledger) // waits for the holder
        {
        }
        holder.Join();
    }
}
