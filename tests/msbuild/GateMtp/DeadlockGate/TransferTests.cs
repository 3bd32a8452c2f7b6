// Two threads that deadlock for real - each holds one lock and blocks waiting for the other's - until the test
// interrupts one of them, which lets go of its lock: the run-time finds the deadlock as the last thread begins to
// wait, and the lock gate fails the run with LT202 on that line (both threads wait at the same one).
using System.Diagnostics;
using System.Threading;
using Microsoft.VisualStudio.TestTools.UnitTesting;

[TestClass]
public class TransferTests
{
    static readonly object Debit = new object(), Credit = new object();
    static int crossed;

    /// <summary>Takes <paramref name="first"/>, then, once both threads hold theirs, <paramref name="second"/>.</summary>
    static void Cross(object first, object second, Barrier both)
    {
        lock (first) // taken, then held through the deadlock
        {
            both.SignalAndWait();
            Interlocked.Increment(ref crossed);
            lock (second) // waits for the other thread
            {
            }
        }
    }

    [TestMethod]
    public void DeadlocksUntilInterrupted()
    {
        using var both = new Barrier(2);
        var one = new Thread(() => Cross(Debit, Credit, both));
        var other = new Thread(() => {
            try {
                Cross(Credit, Debit, both);
            } catch (ThreadInterruptedException) {
            }
        });
        one.Start();
        other.Start();
        // Both past the barrier and blocked: the deadlock has formed.
        var waited = Stopwatch.StartNew();
        while (Volatile.Read(ref crossed) < 2 || (one.ThreadState & System.Threading.ThreadState.WaitSleepJoin) == 0 ||
               (other.ThreadState & System.Threading.ThreadState.WaitSleepJoin) == 0) {
            Assert.IsTrue(waited.ElapsedMilliseconds < 10000, "the threads did not block on each other's lock");
            Thread.Sleep(10);
        }
        Thread.Sleep(200);
        Assert.IsTrue(one.IsAlive && other.IsAlive, "the threads went on: no deadlock");
        other.Interrupt();
        Assert.IsTrue(one.Join(10000) && other.Join(10000), "the deadlock did not resolve");
    }
}
