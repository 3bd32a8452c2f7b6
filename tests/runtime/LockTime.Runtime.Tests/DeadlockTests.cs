// DeadlockTests.cs - threads that wait for each other now: found by the wait that closes the ring, once, and only then.
using LockTime.Runtime;
using Xunit;

namespace LockTime.Runtime.Tests;

public class DeadlockTests
{
    // A lock order of sites 0..7 named "M{i}" at "F.cs:{10 + i}", its lines into `lines`.
    private static LockOrder Make(List<string> lines)
    {
        var order = new LockOrder();
        order.Join(Enumerable.Range(0, 8).Select(i => "M" + i).ToArray(), Enumerable.Range(0, 8).Select(i => "F.cs:" + (10 + i)).ToArray());
        order.CycleLine = l => { lock (lines) lines.Add(l); };
        return order;
    }

    // On a thread of its own (joined): what `body` does to the order stays in that thread's list - a
    // thread that announced a wait and never acquired is still waiting, as a blocked one would be.
    private static int On(Action body)
    {
        int id = 0;
        var t = new Thread(() => { id = Environment.CurrentManagedThreadId; body(); });
        t.Start();
        t.Join();
        return id;
    }

    private static string Deadlocks(LockOrder order) =>
        string.Join(";", order.DeadlocksFound().Select(d => string.Join(",", d)));

    [Fact]
    public void TwoThreadsWaitingForEachOtherAreOneDeadlockOnItsLastWait()
    {
        var lines = new List<string>();
        var order = Make(lines);
        object a = new(), b = new();
        int t1 = On(() => { order.Enter(a, 0); order.Waiting(b, 1, true); });
        Assert.Empty(order.DeadlocksFound()); // the holder of b is not known yet: no ring
        int t2 = On(() => { order.Enter(b, 2); order.Waiting(a, 3, true); });
        // edge by edge: held site, wait site, waiting thread, holding thread; the wait that closed it first
        Assert.Equal($"0,3,{t2},{t1},2,1,{t1},{t2}", Deadlocks(order));
        Assert.Contains($"LockTime: deadlock: thread {t2} waits at F.cs:13 (M3) for the lock thread {t1} took at F.cs:10 (M0); " +
                        $"thread {t1} waits at F.cs:11 (M1) for the lock thread {t2} took at F.cs:12 (M2)", lines);
        Assert.Contains("LockTime: potential deadlock: F.cs:10 then F.cs:11 (M0 then M1), and in the other order at F.cs:12 then F.cs:13 (M2 then M3)", lines);
        Assert.Equal(2, order.Counts()[1]); // the waits' edges a -> b, b -> a: no acquisition needed
    }

    [Fact]
    public void AWaitThatEndedIsNoLongerFollowed()
    {
        var lines = new List<string>();
        var order = Make(lines);
        object a = new(), b = new();
        On(() => { order.Enter(a, 0); order.Waiting(b, 1, true); order.Enter(b, 1); }); // acquired b: waits no more
        On(() => { order.Enter(b, 2); order.Waiting(a, 3, true); });
        Assert.Empty(order.DeadlocksFound());
        Assert.DoesNotContain(lines, l => l.StartsWith("LockTime: deadlock"));
        object c = new(), d = new();
        On(() => { order.Enter(c, 4); order.Waiting(d, 5, true); order.Exit(c); }); // released c: no one holds it
        On(() => { order.Enter(d, 6); order.Waiting(c, 7, true); });
        Assert.Empty(order.DeadlocksFound());
    }

    [Fact]
    public void AThreadWhoseWaitThrewIsNoLongerFollowedThoughItStillHoldsItsLocks()
    {
        // Thread.Interrupt ends a blocked lock call with an exception that the thread may catch inside its
        // locks and work on there: the exception, seen first-chance, ends its wait (the run-time's owner
        // subscribes Deadlocks.Thrown at its start; here the test does).
        var lines = new List<string>();
        var order = Make(lines);
        object a = new(), b = new();
        AppDomain.CurrentDomain.FirstChanceException += global::LockTime.Runtime.Deadlocks.Thrown;
        try {
            On(() => {
                order.Enter(a, 0);
                order.Waiting(b, 1, true);
                try {
                    throw new ThreadInterruptedException();
                } catch (ThreadInterruptedException) {
                }
            }); // its list still holds a
        } finally {
            AppDomain.CurrentDomain.FirstChanceException -= global::LockTime.Runtime.Deadlocks.Thrown;
        }
        On(() => { order.Enter(b, 2); order.Waiting(a, 3, true); });
        Assert.Empty(order.DeadlocksFound());
        Assert.DoesNotContain(lines, l => l.StartsWith("LockTime: deadlock"));
        Assert.Contains(lines, l => l.StartsWith("LockTime: potential deadlock: F.cs:10 then F.cs:11")); // the order a, b, then b, a stays
    }

    [Fact]
    public void AnObjectTwoListsHoldHasNoHolder()
    {
        // A semaphore taken by one thread, released by another and taken again: the first taker's list
        // keeps it while that thread is blocked on x; a wait for the semaphore is behind the new taker,
        // which runs - not behind the blocked one, and not a deadlock with it.
        var lines = new List<string>();
        var order = Make(lines);
        object s = new(), x = new();
        On(() => { order.Enter(s, 0); order.Waiting(x, 1, true); });
        On(() => order.Enter(s, 2));
        On(() => { order.Enter(x, 3); order.Waiting(s, 4, true); });
        Assert.Empty(order.DeadlocksFound());
    }

    [Fact]
    public void NoDeadlockIsClaimedThroughASemaphore()
    {
        // Any thread may release it, and its taker may go on to other work: who a waiter waits for is not known.
        var lines = new List<string>();
        var order = Make(lines);
        var s = new SemaphoreSlim(1, 1);
        object m = new();
        On(() => { order.Enter(s, 0); order.Waiting(m, 1, true); });
        On(() => { order.Enter(m, 2); order.Waiting(s, 3, true); });
        Assert.Empty(order.DeadlocksFound());
        Assert.Contains(lines, l => l.StartsWith("LockTime: potential deadlock: ")); // the order still is one
    }

    [Fact]
    public void AReadersWaitAndAThreadHoldingNothingAreNotFollowed()
    {
        var lines = new List<string>();
        var order = Make(lines);
        object rw = new(), m = new(), c = new();
        On(() => { order.Enter(rw, 0); order.Waiting(m, 1, true); });
        On(() => { order.Enter(m, 2); order.Waiting(rw, 3, false); }); // a reader: blocked only by a writer, which the lists do not tell
        Assert.Empty(order.DeadlocksFound());
        Assert.Equal(2, order.Counts()[1]); // its edge still counts
        On(() => order.Waiting(c, 4, true)); // holds nothing: nothing at all
        Assert.Equal(2, order.Counts()[1]);
    }

    [Fact]
    public void ThreeThreadsInARingAreOneDeadlockAndTheSameRingAgainIsNotNew()
    {
        var lines = new List<string>();
        var order = Make(lines);
        for (int round = 0; round < 2; round++) {
            object a = new(), b = new(), c = new();
            On(() => { order.Enter(a, 0); order.Waiting(b, 1, true); });
            On(() => { order.Enter(b, 0); order.Waiting(c, 1, true); });
            Assert.Equal(round, order.DeadlocksFound().Length);
            On(() => { order.Enter(c, 0); order.Waiting(a, 1, true); });
        }
        int[][] found = order.DeadlocksFound();
        Assert.Single(found);
        Assert.Equal(12, found[0].Length); // three edges
        Assert.Single(lines, l => l.StartsWith("LockTime: deadlock: "));
    }

    [Fact]
    public void AThreadWaitingBehindADeadlockIsNotInIt()
    {
        var lines = new List<string>();
        var order = Make(lines);
        object a = new(), b = new(), c = new();
        On(() => { order.Enter(a, 0); order.Waiting(b, 1, true); });
        On(() => { order.Enter(b, 2); order.Waiting(a, 3, true); });
        On(() => { order.Enter(c, 4); order.Waiting(a, 5, true); }); // behind the ring: a's holder waits for b, whose holder waits for a
        Assert.Single(order.DeadlocksFound());
        Assert.Single(lines, l => l.StartsWith("LockTime: deadlock: "));
    }
}
