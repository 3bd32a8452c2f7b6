// LocksTests.cs - the lock types beside Monitor: read, upgradeable and SpinLock frames, who blocks whom,
// semaphores as locks or counting, and a counting semaphore's hold "not applicable" in summary and report.
using System.Text.Json.Nodes;
using LockTime.Runtime;
using Xunit;

namespace LockTime.Runtime.Tests;

public class LocksTests
{
    private static Collector Make(int n, List<object[]> lines)
    {
        var table = new SiteTable();
        table.Begin("Test", n);
        for (int i = 0; i < n; i++)
            table.Define(i, $"T::M{i}", $"F.cs:{i + 1}", "/src/F.cs", i + 1, "SemaphoreSlim.Wait");
        var settings = Settings.Parse(null, "1", "stdout", null, null, null, "1", "stderr", "10", "");
        var c = new Collector(table, settings, 1_000_000_000);
        ThreadRecord.Current = null;
        CollectorTests.Capture(c, lines);
        return c;
    }

    [Theory]
    [InlineData(Frame.Read, Frame.Read, false)]
    [InlineData(Frame.Read, Frame.Upgradeable, false)]
    [InlineData(Frame.Upgradeable, Frame.Read, false)]
    [InlineData(Frame.Read, Frame.Exclusive, true)]
    [InlineData(Frame.Exclusive, Frame.Read, true)]
    [InlineData(Frame.Upgradeable, Frame.Upgradeable, true)]
    [InlineData(Frame.Upgradeable, Frame.Exclusive, true)]
    [InlineData(Frame.Exclusive, Frame.Exclusive, true)]
    [InlineData(Frame.Scope, Frame.Read, true)]
    public void OnlyReadersAndAnUpgraderShare(byte held, byte waiter, bool blocks)
    {
        Assert.Equal(blocks, Frame.Blocks(held, waiter));
    }

    [Fact]
    public void AReleaseEndsTheInnermostFrameOfItsMode()
    {
        var t = new ThreadRecord(8);
        object rw = new(), other = new();
        t.Push(rw, 0, 0, 0, false, Frame.Upgradeable);
        t.Push(rw, 1, 0, 0, false, Frame.Exclusive); // the upgrade: a write lock inside the upgradeable one
        t.Push(rw, 2, 0, 0, false, Frame.Read);      // recursion: a read lock inside the write lock
        t.Push(null, 3, 0, 0, false, Frame.Spin);
        t.Push(other, 4, 0, 0, false, Frame.Scope);
        t.Push(null, 5, 0, 0, false, Frame.Spin);
        Assert.Equal(2, t.Find(rw, Frame.Read));
        Assert.Equal(1, t.Find(rw, Frame.Exclusive));
        Assert.Equal(0, t.Find(rw, Frame.Upgradeable));
        Assert.Equal(4, t.Find(other, Frame.Exclusive)); // Lock.Exit after EnterScope ends the scope frame
        Assert.Equal(5, t.Find(null, Frame.Spin));
        Assert.Equal(5, t.Remove(t.Find(null, Frame.Spin)).Site);
        Assert.Equal(3, t.Remove(t.Find(null, Frame.Spin)).Site);
        Assert.Equal(-1, t.Find(null, Frame.Spin));
        Assert.Equal(1, t.Remove(t.Find(rw, Frame.Exclusive)).Site);
        Assert.Equal(-1, t.Find(rw, Frame.Exclusive)); // the read and upgradeable frames stay
        Assert.Equal(2, t.Frames[t.Find(rw, Frame.Read)].Site);
        Assert.Equal(0, t.Frames[t.Find(rw, Frame.Upgradeable)].Site);
        Assert.Equal(-1, t.Find(new object(), Frame.Read));
    }

    [Fact]
    public void AReaderWaitsBehindAWriterOnlyAndAWriterBehindAnyone()
    {
        var c = Make(4, new List<object[]>());
        object rw = new();
        using var held = new ManualResetEventSlim();
        using var next = new ManualResetEventSlim();
        using var looked = new ManualResetEventSlim();
        using var done = new ManualResetEventSlim();
        var readers = new Thread(() =>
        {
            var t = c.Thread();
            t.Push(rw, 0, 0, 0, false, Frame.Read);
            t.Push(null, 3, 0, 0, false, Frame.Spin); // a SpinLock frame has no object: nobody's holder
            held.Set();
            next.Wait();
            t.Remove(t.Find(rw, Frame.Read));
            t.Push(rw, 1, 0, 0, false, Frame.Upgradeable);
            looked.Set();
            done.Wait();
        });
        readers.Start();
        held.Wait();
        ThreadRecord.Current = null;
        Assert.Null(c.FindHolder(rw, Frame.Read));       // overlapping readers do not wait for each other
        Assert.Null(c.FindHolder(rw, Frame.Upgradeable));
        Assert.Same(c.HolderNames[0], c.FindHolder(rw, Frame.Exclusive)); // a writer waits for the reader
        Assert.Same(c.HolderNames[0], c.Holder(rw));       // the finder other copies call: an exclusive waiter
        next.Set();
        looked.Wait();
        Assert.Null(c.FindHolder(rw, Frame.Read));
        Assert.Same(c.HolderNames[1], c.FindHolder(rw, Frame.Upgradeable));
        Assert.Same(c.HolderNames[1], c.FindHolder(rw, Frame.Exclusive));
        done.Set();
        readers.Join();
    }

    [Fact]
    public void ASemaphoreWithAMaximumOfOneIsALockAndAnyOtherCounts()
    {
        var table = new SemaphoreTable();
        var t = new ThreadRecord(1);
        using var gate = new SemaphoreSlim(1, 1);
        using var unbounded = new SemaphoreSlim(1);
        using var pool = new SemaphoreSlim(3, 3);
        Assert.True(table.Of(t, gate).IsLock);
        Assert.False(table.Of(t, unbounded).IsLock);
        Assert.False(table.Of(t, pool).IsLock);
        Assert.Same(table.Of(t, gate), table.Of(new ThreadRecord(1), gate));
        Assert.False(table.Of(t, gate).Signal); // a lock until released while not held (Api.ReleasingSemaphore)
        Assert.Equal(-1, table.HeldAt(gate));
        var s = table.Of(t, gate);
        s.Hold = new Frame { Lock = gate, Site = 7 };
        s.Held = 1;
        Assert.Equal(7, table.HeldAt(gate));
        Assert.Equal(-1, table.HeldAt(pool));
        Assert.Equal(-1, table.HeldAt(null!));
    }

    [Fact]
    public void ATableThatSawNoSemaphoreHoldsNoneAndThreadsThatStartItAtOnceShareOneState()
    {
        var table = new SemaphoreTable();
        using var gate = new SemaphoreSlim(1, 1);
        Assert.Equal(-1, table.HeldAt(gate)); // asked before any semaphore was seen: the table is not made yet
        Assert.Equal(-1, table.HeldAt(new object()));
        var states = new SemaphoreState[8];
        var threads = new Thread[states.Length];
        using var go = new ManualResetEventSlim(false);
        for (int k = 0; k < threads.Length; k++) {
            int me = k;
            threads[k] = new Thread(() => { go.Wait(); states[me] = table.Of(new ThreadRecord(1), gate); });
            threads[k].Start();
        }
        go.Set();
        foreach (var th in threads)
            th.Join();
        for (int k = 0; k < states.Length; k++)
            Assert.Same(states[0], states[k]);
        Assert.True(states[0].IsLock);
    }

    [Fact]
    public void ASemaphoreIsKnownFromWhenItsMaximumWasRead()
    {
        // a hold starts no earlier (Api.Kept): the reflection of its first acquisition is no hold of the program's
        var table = new SemaphoreTable();
        var t = new ThreadRecord(1);
        using var gate = new SemaphoreSlim(1, 1);
        long before = Clock.Ticks();
        var s = table.Of(t, gate);
        long after = Clock.Ticks();
        Assert.InRange(s.Known, before, after);
        Assert.Same(s, table.Of(new ThreadRecord(1), gate)); // another thread's look-up: the same state, known once
        Assert.InRange(s.Known, before, after);
    }

    [Fact]
    public void ASemaphoreHeldAsALockIsTheHolderOfItsWaiters()
    {
        var c = Make(3, new List<object[]>());
        using var gate = new SemaphoreSlim(1, 1);
        var s = c.Semaphores.Of(c.Thread(), gate);
        s.Hold = new Frame { Lock = gate, Site = 2 };
        s.Held = 1;
        Assert.Same(c.HolderNames[2], c.FindHolder(gate, Frame.Exclusive));
        Assert.Same(c.HolderNames[2], c.Holder(gate));
    }

    [Fact]
    public void AThreadKeepsTheLastSemaphoreAndLeavesTheOrderOfHoldsReleasedElsewhere()
    {
        var table = new SemaphoreTable();
        var t = new ThreadRecord(1);
        using var gate = new SemaphoreSlim(1, 1);
        using var other = new SemaphoreSlim(1, 1);
        var s = table.Of(t, gate);
        Assert.Same(gate, t.LastSemaphore);
        Assert.Same(gate, s.Semaphore);
        Assert.Same(s, table.Of(t, gate));
        var o = table.Of(t, other);
        Assert.Same(other, t.LastSemaphore);
        Assert.Same(s, table.Of(t, gate));        /* found in the table again, kept last */
        Assert.Same(gate, t.LastSemaphore);

        var left = new List<object>();
        var c = Make(1, new List<object[]>());
        c.OrderExit = left.Add;                   /* the lock order as another copy's: through its delegate */
        var ordered = new OrderedSemaphores();
        s.Orderer = t; s.Held = 1;
        o.Orderer = t; o.Held = 1;
        ordered.Entered(s);
        ordered.Entered(o);
        ordered.DropStale(c, t);                  /* both still held by the holds entered */
        Assert.Equal(2, ordered.N);
        Assert.Empty(left);
        s.Held = 0;                               /* released on another thread */
        o.Orderer = new ThreadRecord(1);          /* released and taken again elsewhere */
        ordered.DropStale(c, t);
        Assert.Equal(0, ordered.N);
        Assert.Equal(new object[] { other, gate }, left);
        ordered.Entered(o);
        ordered.Entered(s);
        ordered.Left(o, c, t);                    /* released here, not the last entered */
        Assert.Same(s, ordered.States[0]);
        ordered.Left(s, c, t);
        Assert.Equal(0, ordered.N);
        Assert.Equal(new object[] { other, gate, other, gate }, left);
    }

    [Fact]
    public void OnlyAMutexAmongWaitHandlesIsTimed()
    {
        using var m = new Mutex();
        using var e = new ManualResetEvent(false);
        using var sem = new Semaphore(1, 1);
        Assert.True(Handles.IsMutex(m));
        Assert.False(Handles.IsMutex(e));
        Assert.False(Handles.IsMutex(sem));
        Assert.False(Handles.IsMutex(null!));
        Assert.True(Handles.AnyMutex(new WaitHandle[] { e, m }));
        Assert.False(Handles.AnyMutex(new WaitHandle[] { e, sem }));
        Assert.False(Handles.AnyMutex(null!));
    }

    [Fact]
    public void ACountingSemaphoreRecordsItsWaitAndNoHold()
    {
        var lines = new List<object[]>();
        var c = Make(2, lines);
        var t = c.Thread();
        string[] holder = ["Test", "T::M1", "F.cs:2"];
        c.WaitOnly(t, 0, 45_000_000, true, holder);
        c.WaitOnly(t, 0, 100, false, null);
        var stats = c.Merge()[0];
        Assert.Equal(2, stats.Acquisitions);
        Assert.Equal(1, stats.Contended);
        Assert.Equal(2, stats.Wait.Count);
        Assert.Equal(0, stats.Hold.Count);
        Assert.False(stats.HoldApplies());
        Assert.Equal(45_000_000, stats.HolderWait[0]);
        Assert.Single(lines); // only the slow wait
        Assert.Equal("LockTime: T::M0 waited 45.000 ms at F.cs:1 (hold not applicable) (held by T::M1 at F.cs:2)",
                     LineWriter.Format(lines[0]));
        Assert.True(new SiteStats().HoldApplies());
    }

    [Fact]
    public void SummaryAndReportSayAHoldIsNotApplicable()
    {
        var counting = JsonTests.Site("App", "App.Pool::Take", "Pool.cs:7", "/a/Pool.cs", 7, "SemaphoreSlim.Wait", [], [40_000_000, 0]);
        counting.Stats.Acquisitions = 2;
        var gate = JsonTests.Site("App", "App.Gate::Take", "Gate.cs:3", "/a/Gate.cs", 3, "SemaphoreSlim.WaitAsync", [60_000_000], [0]);
        var sites = new List<SiteTotals> { counting, gate };
        sites.Sort(SiteTotals.Compare);
        string[] lines = Summary.Format(sites, 10, 0, null);
        string row = lines.Single(l => l.Contains("App.Pool::Take"));
        Assert.Equal(3, row.Split(' ', StringSplitOptions.RemoveEmptyEntries).Count(c => c == "n/a"));
        Assert.DoesNotContain("n/a", lines.Single(l => l.Contains("App.Gate::Take")));
        var p = new ProcessInfo { Name = "app", Pid = 1, StartUtc = DateTime.UtcNow, DurationNs = 1 };
        string json = Report.Format(p, sites, 0, null, null, 0, 1);
        JsonTests.Validate(json);
        var doc = JsonNode.Parse(json)!["sites"]!.AsArray();
        var pool = doc.Single(s => (string?)s!["method"] == "App.Pool::Take")!;
        Assert.False((bool)pool["hold_applies"]!);
        Assert.Equal(0.0, (double)pool["hold_ms"]!["total"]!);
        Assert.Null(doc.Single(s => (string?)s!["method"] == "App.Gate::Take")!["hold_applies"]);
    }
}
