// LockOrderTests.cs - the lock-order graph: cycles of lock objects named by sites, re-entry, caps, GC.
using System.Runtime.CompilerServices;
using LockTime.Runtime;
using Xunit;

namespace LockTime.Runtime.Tests;

public class LockOrderTests
{
    // A graph with sites 0..n-1 named "M{i}" at "F.cs:{10 + i}" (one copy), its cycle lines into `lines`.
    private static LockOrder Make(List<string> lines, int n = 8, string method = "Bank::Transfer")
    {
        HeldLocks.Current = null; // the thread's held list is the type's: a failed test must not leave locks in it
        var order = new LockOrder();
        var methods = Enumerable.Range(0, n).Select(i => i < 2 ? method : "M" + i).ToArray();
        var locations = Enumerable.Range(0, n).Select(i => "F.cs:" + (10 + i)).ToArray();
        Assert.Equal(0, order.Join(methods, locations));
        order.CycleLine = l => { lock (lines) lines.Add(l); };
        return order;
    }

    /// <summary>A graph of Bank::Transfer at Bank.cs:12 and :13 after Transfer(x, y) and Transfer(y, x): one cycle.</summary>
    internal static LockOrder Transfers()
    {
        HeldLocks.Current = null;
        var order = new LockOrder();
        order.Join(["Bank::Transfer", "Bank::Transfer"], ["Bank.cs:12", "Bank.cs:13"]);
        object x = new(), y = new();
        Both(order, x, 0, y, 1);
        Both(order, y, 0, x, 1);
        return order;
    }

    private static void Both(LockOrder order, object first, int s1, object second, int s2)
    {
        order.Enter(first, s1);
        order.Enter(second, s2);
        order.Exit(second);
        order.Exit(first);
    }

    [Fact]
    public void TransferInBothOrdersOnOneThreadIsACycleOfTheSameTwoSites()
    {
        var lines = new List<string>();
        var order = Make(lines);
        object x = new(), y = new();
        Both(order, x, 0, y, 1);
        Assert.Empty(lines); // one order so far
        order.Enter(y, 0);
        order.Enter(x, 1);
        order.Exit(x);
        Assert.Empty(lines); // y is still held: the new pair waits until the thread holds no lock
        order.Exit(y);
        Assert.Equal(["LockTime: potential deadlock: F.cs:10 then F.cs:11 (Bank::Transfer), and in the other order at F.cs:10 then F.cs:11 (Bank::Transfer)"], lines);
        var cycle = Assert.Single(order.Cycles());
        Assert.Equal(new[] { 0, 1, Environment.CurrentManagedThreadId, 0, 1, Environment.CurrentManagedThreadId }, cycle);
        // Other accounts through the same sites: the same potential deadlock, kept and printed once.
        for (int i = 0; i < 10; i++)
        {
            object a = new(), b = new();
            Both(order, a, 0, b, 1);
            Both(order, b, 0, a, 1);
        }
        Assert.Single(lines);
        Assert.Single(order.Cycles());
    }

    [Fact]
    public void ThreeLocksOnThreeThreadsCloseACycle()
    {
        var lines = new List<string>();
        var order = Make(lines);
        object a = new(), b = new(), c = new();
        int[] ids = new int[3];
        void On(int k, object first, int s1, object second, int s2)
        {
            var t = new Thread(() => { ids[k] = Environment.CurrentManagedThreadId; Both(order, first, s1, second, s2); });
            t.Start();
            t.Join();
        }
        On(0, a, 2, b, 3);
        On(1, b, 4, c, 5);
        Assert.Empty(lines);
        On(2, c, 6, a, 7);
        Assert.Equal(["LockTime: potential deadlock: F.cs:12 then F.cs:13 (M2 then M3), F.cs:14 then F.cs:15 (M4 then M5), and F.cs:16 then F.cs:17 (M6 then M7)"], lines);
        Assert.Equal(new[] { 2, 3, ids[0], 4, 5, ids[1], 6, 7, ids[2] }, Assert.Single(order.Cycles()));
    }

    [Fact]
    public void OneOrderReentryAndNoLockHeldGiveNoCycle()
    {
        var lines = new List<string>();
        var order = Make(lines);
        object a = new(), b = new(), c = new();
        var threads = Enumerable.Range(0, 4).Select(_ => new Thread(() =>
        {
            for (int i = 0; i < 200; i++)
            {
                order.Enter(a, 2); order.Enter(b, 3); order.Enter(c, 4);
                order.Exit(c); order.Exit(b); order.Exit(a);
            }
        })).ToArray();
        foreach (var t in threads) t.Start();
        foreach (var t in threads) t.Join();
        order.Enter(a, 2); order.Enter(b, 3); order.Enter(a, 2); order.Enter(a, 2); // a again under b: re-entry, no edge b -> a
        order.Exit(a); order.Exit(a); order.Exit(b); order.Exit(a);
        order.Enter(c, 4); // alone: no edge, not even a node
        order.Exit(c);
        Assert.Empty(lines);
        Assert.Empty(order.Cycles());
        Assert.Equal(new long[] { 3, 2, 0, 0, 0, 0 }, order.Counts()); // a -> b, b -> c (a -> c is the chain through b)
    }

    [Fact]
    public void ReleasesInAnyOrderLeaveOnlyWhatIsHeld()
    {
        var lines = new List<string>();
        var order = Make(lines);
        object a = new(), b = new(), c = new();
        order.Enter(a, 2); order.Enter(b, 3);
        order.Exit(a); // a released first: b alone is held
        order.Enter(c, 4); // b -> c only: no a -> c
        order.Exit(c); order.Exit(b);
        order.Exit(new object()); // not held: nothing
        Assert.Equal(2, order.Counts()[1]); // a -> b, b -> c
        Assert.Empty(lines);
        Both(order, c, 5, a, 6); // c -> a closes a -> b -> c
        Assert.Equal(["LockTime: potential deadlock: F.cs:12 then F.cs:13 (M2 then M3), F.cs:13 then F.cs:14 (M3 then M4), and F.cs:15 then F.cs:16 (M5 then M6)"], lines);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static WeakReference[] Pairs(LockOrder order, int n, long? nodes = null)
    {
        var refs = new WeakReference[n];
        var alive = new List<object>(); // while they live, every pair is two nodes
        for (int i = 0; i < n; i++)
        {
            object a = new(), b = new();
            alive.Add(a);
            alive.Add(b);
            Both(order, a, 2, b, 3);
            refs[i] = new WeakReference(a);
        }
        if (nodes != null)
            Assert.Equal(nodes, order.Counts()[0]);
        GC.KeepAlive(alive);
        return refs;
    }

    [Fact]
    public void TheGraphKeepsNoLockAliveAndSweepsCollectedOnes()
    {
        var lines = new List<string>();
        var order = Make(lines);
        var refs = Pairs(order, 100, nodes: 200);
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        Assert.All(refs, r => Assert.False(r.IsAlive)); // only weak references in the graph
        // Enough new pairs to fill the nodes: the collected ones are swept, the cap is never reached.
        for (int round = 0; round < 3; round++)
        {
            Pairs(order, LockOrder.MaxLocks / 2);
            GC.Collect();
        }
        long[] counts = order.Counts();
        Assert.True(counts[0] <= LockOrder.MaxLocks, $"{counts[0]} nodes");
        Assert.Equal(0, counts[3]);
        Assert.Empty(lines);
    }

    [Fact]
    public void PastTheCapsNothingNewIsFollowedAndTheCountsSaySo()
    {
        var lines = new List<string>();
        var order = Make(lines);
        var held = Enumerable.Range(0, 8).Select(_ => new object()).ToArray();
        var alive = new List<object>();
        for (int i = 0; i < LockOrder.MaxEdges / 8 + 10; i++) // 8 edges each, one under each held lock: past the edge cap
        {
            object o = new();
            alive.Add(o);
            foreach (var h in held)
            {
                order.Enter(h, 2);
                order.Enter(o, 3);
                order.Exit(o);
                order.Exit(h); // new pairs are added when the thread holds no lock
            }
        }
        long[] counts = order.Counts();
        Assert.Equal(LockOrder.MaxEdges, counts[1]);
        Assert.Equal(1, counts[4]);
        Assert.Equal(0, counts[3]);

        order = Make(lines);
        order.Enter(held[0], 2);
        for (int i = 0; i < LockOrder.MaxLocks + 10; i++) // one edge each: past the lock cap
        {
            object o = new();
            alive.Add(o);
            order.Enter(o, 3);
            order.Exit(o);
        }
        order.Exit(held[0]);
        counts = order.Counts();
        Assert.Equal(LockOrder.MaxLocks, counts[0]);
        Assert.Equal(1, counts[3]);
        Assert.Equal(LockOrder.MaxLocks - 1, counts[1]);
        Assert.Empty(lines);
        GC.KeepAlive(alive);
    }

    [Fact]
    public void CyclesThroughTheSameSitesAreOneLineWhateverTheirLength()
    {
        var lines = new List<string>();
        var order = Make(lines);
        var accounts = Enumerable.Range(0, 6).Select(_ => new object()).ToArray();
        for (int i = 0; i + 1 < accounts.Length; i++)
            Both(order, accounts[i], 0, accounts[i + 1], 1); // Transfer(a0, a1) ... Transfer(a4, a5): one order
        Assert.Empty(lines);
        // Back from the last to each other: cycles of 6, 5, 4, 3 and 2 edges, all through sites 0 and 1.
        for (int i = 0; i + 1 < accounts.Length; i++)
            Both(order, accounts[accounts.Length - 1], 0, accounts[i], 1);
        Assert.Single(lines);
        Assert.StartsWith("LockTime: potential deadlock: F.cs:10 then F.cs:11 (Bank::Transfer)", lines[0]);
        Assert.Single(order.Cycles());
        Assert.Equal(0, order.Counts()[2]); // none counted as not kept either
        // Another site in the same cycle makes another set: its own line.
        object x = new();
        Both(order, accounts[0], 0, x, 1);
        Both(order, x, 3, accounts[0], 1);
        Assert.Equal(2, lines.Count);
        Assert.Equal("LockTime: potential deadlock: F.cs:10 then F.cs:11 (Bank::Transfer), and in the other order at F.cs:13 then F.cs:11 (M3 then Bank::Transfer)", lines[1]);
    }

    [Fact]
    public void AnEdgeThatAgreesWithTheOrderSearchesNothing()
    {
        var lines = new List<string>();
        var order = Make(lines);
        var chain = Enumerable.Range(0, 1000).Select(_ => new object()).ToArray();
        for (int i = 0; i + 1 < chain.Length; i++)
            Both(order, chain[i], 2, chain[i + 1], 3);
        var random = new Random(7);
        for (int k = 0; k < 2000; k++) // lower first, in any order: each agrees with the order
        {
            int i = random.Next(chain.Length - 1), j = random.Next(i + 1, chain.Length);
            Both(order, chain[i], 2, chain[j], 3);
        }
        Assert.Equal(new long[] { 0, 0 }, order.Work());
        // A lock first seen now, taken before the chain's first: against the order, one search of the
        // places between (the whole chain forward, the new lock backward), then it agrees.
        object first = new();
        Both(order, first, 4, chain[0], 5);
        Assert.Equal(new long[] { 1001, 0 }, order.Work());
        Both(order, first, 4, chain[500], 5);
        Assert.Equal(new long[] { 1001, 0 }, order.Work());
        Assert.Empty(lines);
        Assert.Empty(order.Cycles());
    }

    [Fact]
    public void AfterACycleThroughASetOfSitesMoreEdgesInItAreNotFollowed()
    {
        var lines = new List<string>();
        var order = Make(lines);
        object global = new();
        for (int i = 0; i < 3000; i++) // a fresh lock in both orders with one global lock: the case
        {
            object fresh = new();
            Both(order, global, 2, fresh, 3);
            Both(order, fresh, 4, global, 5);
        }
        Assert.Equal(["LockTime: potential deadlock: F.cs:12 then F.cs:13 (M2 then M3), and in the other order at F.cs:14 then F.cs:15 (M4 then M5)"], lines);
        Assert.Equal(1, order.Work()[1]); // followed once: the first cycle
        Assert.Equal(6000, order.Counts()[1]);
        // Other sites close a cycle through the global lock: a new set, followed and reported.
        object other = new();
        Both(order, global, 6, other, 7);
        Both(order, other, 6, global, 7);
        Assert.Equal(2, lines.Count);
        Assert.Equal(2, order.Work()[1]);
    }

    [Fact]
    public void ACycleThroughASetAlreadyReportedStillTeachesItsPairsOfSites()
    {
        var lines = new List<string>();
        var order = Make(lines);
        object a = new(), b = new(), c = new(), d = new(), e = new(), f = new();
        Both(order, a, 0, b, 1);
        Both(order, b, 2, a, 3); // sites {0, 1, 2, 3}: pairs 0 -> 1 and 2 -> 3
        Both(order, c, 0, d, 3);
        Both(order, d, 2, c, 1); // the same sites by other pairs, 0 -> 3 and 2 -> 1: followed, no new line
        Assert.Equal(new long[] { 8, 2 }, order.Work()); // each closing edge against the order: both ends, forward and backward
        Both(order, e, 0, f, 3);
        Both(order, f, 2, e, 1); // 2 -> 1 is known now: not followed
        Assert.Equal(new long[] { 12, 2 }, order.Work());
        Assert.Single(lines);
        Assert.Single(order.Cycles());
    }

    [Fact]
    public void CyclesAreFoundAmongTheLocksLeftAfterSweeps()
    {
        var lines = new List<string>();
        var order = Make(lines);
        object a = new(), b = new(), c = new();
        Both(order, a, 2, b, 3);
        Both(order, b, 2, a, 3); // a and b: one cycle, one component
        Assert.Single(lines);
        for (int round = 0; round < 3; round++) // dead locks beside them, past the node cap: swept
        {
            Pairs(order, LockOrder.MaxLocks / 4);
            GC.Collect();
        }
        Assert.True(order.Counts()[0] <= LockOrder.MaxLocks, $"{order.Counts()[0]} nodes");
        Assert.Equal(0, order.Counts()[3]);
        Both(order, b, 4, c, 5);
        Assert.Single(lines);
        Both(order, c, 6, a, 7); // closes a -> b -> c -> a through the component the sweeps kept
        Assert.Equal(2, lines.Count);
        Assert.Equal("LockTime: potential deadlock: F.cs:12 then F.cs:13 (M2 then M3), F.cs:14 then F.cs:15 (M4 then M5), and F.cs:16 then F.cs:17 (M6 then M7)", lines[1]);
        GC.KeepAlive(new[] { a, b, c });
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void FillTheNodes(LockOrder order)
    {
        var alive = new List<object>();
        object outer = new();
        alive.Add(outer);
        order.Enter(outer, 2);
        for (int i = 0; i < LockOrder.MaxLocks + 10; i++)
        {
            object o = new();
            alive.Add(o);
            order.Enter(o, 3);
            order.Exit(o);
        }
        order.Exit(outer);
        Assert.Equal(1, order.Counts()[3]); // all alive: the cap holds
        GC.KeepAlive(alive);
    }

    [Fact]
    public void OnceTheLocksAtTheCapAreCollectedNewOnesAreFollowedAgain()
    {
        var lines = new List<string>();
        var order = Make(lines);
        FillTheNodes(order);
        for (int i = 0; i < 3; i++) // one sweep, or several GCs apart
            GC.Collect();
        object a = new(), b = new();
        Both(order, a, 4, b, 5);
        Both(order, b, 4, a, 5);
        Assert.Single(lines); // the sweep made room: a and b are followed, their cycle found
        Assert.True(order.Counts()[0] < 100, $"{order.Counts()[0]} nodes");
    }

    [Fact]
    public void SitesOfSeveralCopiesHaveTheirOwnIds()
    {
        var order = new LockOrder();
        var lines = new List<string>();
        order.CycleLine = lines.Add;
        Assert.Equal(0, order.Join(["App::A", "App::B"], ["App.cs:1", "App.cs:2"]));
        Assert.Equal(2, order.Join(["Lib::C"], ["Lib.cs:9"]));
        object a = new(), b = new();
        Both(order, a, 0, b, 2);
        Both(order, b, 2, a, 1);
        Assert.Equal(["LockTime: potential deadlock: App.cs:1 then Lib.cs:9 (App::A then Lib::C), and in the other order at Lib.cs:9 then App.cs:2 (Lib::C then App::B)"], lines);
        Assert.Equal("Lib::C", order.Method(2));
        Assert.Equal("", order.Location(7)); // an unknown id has no name
    }
}
