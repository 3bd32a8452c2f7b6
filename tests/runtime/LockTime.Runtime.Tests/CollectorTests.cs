// CollectorTests.cs - per-thread records: frames, recording after release, the merge over threads, slow lines.
using LockTime.Runtime;
using Xunit;

namespace LockTime.Runtime.Tests;

public class CollectorTests
{
    /// <summary>
    /// A collector's line queue as the writer's (<see cref="LineWriter.Record"/>, <see cref="LineWriter.Enqueue"/>),
    /// each line kept in <paramref name="lines"/> as an entry: what the writer formats, <see cref="LineWriter.Format"/> tells.
    /// </summary>
    internal static void Capture(Collector c, List<object[]> lines)
    {
        c.Records = (source, site, holdNs, waitNs, holder) =>
        {
            Assert.Same(c.LineSource, source);
            var s = (object[])source;
            lock (lines) lines.Add(LineWriter.Entry((string)s[0], ((string[])s[1])[site], ((string[])s[2])[site], holdNs, waitNs, holder));
        };
        c.Lines = e => { lock (lines) lines.Add(e); };
    }

    // A collector of n sites at 1e9 ticks per second (1 tick = 1 ns), its lines into `lines`.
    internal static Collector Make(int n, double thresholdMs, List<object[]> lines)
    {
        var table = new SiteTable();
        table.Begin("Test", n);
        for (int i = 0; i < n; i++)
            table.Define(i, $"T::M{i}", $"F.cs:{i + 1}", "/src/F.cs", i + 1, "Monitor.Enter");
        var settings = Settings.Parse(null, thresholdMs.ToString(System.Globalization.CultureInfo.InvariantCulture), "stdout",
                                      null, null, null, "1", "stderr", "10", "");
        var c = new Collector(table, settings, 1_000_000_000);
        ThreadRecord.Current = null; // a record belongs to one collector: the test thread's last one is another's
        Capture(c, lines);
        return c;
    }

    internal static Frame F(int site, long acquired, long wait, bool contended = false) =>
        new() { Site = site, Acquired = acquired, Wait = wait, Contended = contended };

    [Fact]
    public void FramesAreFoundInnermostFirstAndRemovedInAnyOrder()
    {
        var t = new ThreadRecord(4);
        object a = new(), b = new(), scope = new();
        for (int i = 0; i < 20; i++) // past the first 8: the stack grows
            t.Push(i % 2 == 0 ? a : b, i, i, 0, false, Frame.Exclusive);
        t.Push(scope, 99, 0, 0, false, Frame.Scope);
        Assert.Equal(21, t.Depth);
        Assert.Equal(20, t.Find(null, Frame.Scope));
        Assert.Equal(18, t.Find(a, Frame.Exclusive));
        Assert.Equal(18, t.Remove(18).Site);
        Assert.Equal(16, t.Find(a, Frame.Exclusive));
        Assert.Equal(19, t.Find(null, Frame.Scope)); // the frames above moved down
        Assert.Equal(99, t.Remove(t.Find(null, Frame.Scope)).Site);
        Assert.Equal(-1, t.Find(null, Frame.Scope));
        Assert.Equal(-1, t.Find(new object(), Frame.Exclusive));
        Assert.Equal(19, t.Depth);
        Assert.Null(t.Frames[19].Lock); // freed slots drop their object
    }

    [Fact]
    public void PerThreadRecordsMergeIntoExactTotals()
    {
        var lines = new List<object[]>();
        var c = Make(3, 1000, lines);
        const int threads = 8, each = 5000;
        var all = new Thread[threads];
        for (int k = 0; k < threads; k++)
        {
            int id = k;
            all[k] = new Thread(() =>
            {
                var t = c.Thread();
                for (int i = 0; i < each; i++)
                {
                    // site 0: hold 1000 + i ns, no wait; site 1: every 10th contended, waits id * 1000 ns
                    c.Released(t, F(0, 0, 0), 1000 + i);
                    if (i % 10 == 0)
                        c.Released(t, F(1, 0, id * 1000, contended: true), 500);
                }
                c.Failed(t, 2, 10, null, false);
            });
            all[k].Start();
        }
        foreach (var t in all)
            t.Join();
        var sum = c.Merge();
        Assert.Equal(threads * each, sum[0].Acquisitions);
        Assert.Equal(threads * each, sum[0].Hold.Count);
        Assert.Equal(0, sum[0].Contended);
        long holdTotal = threads * Enumerable.Range(0, each).Sum(i => 1000L + i);
        Assert.Equal(holdTotal, sum[0].Hold.Total);
        Assert.Equal(1000 + each - 1, sum[0].Hold.Max);
        Assert.Equal(0, sum[0].Wait.Max);
        Assert.Equal(threads * each / 10, sum[1].Acquisitions);
        Assert.Equal(threads * each / 10, sum[1].Contended);
        Assert.Equal((threads - 1) * 1000, sum[1].Wait.Max);
        Assert.Equal(threads, sum[2].Failed);
        Assert.Equal(0, sum[2].Acquisitions);
        Assert.Empty(lines); // nothing reached 1000 ms
        var rows = c.Snapshot();
        Assert.Equal(3, rows.Length);
        var back = SiteTotals.FromRow(rows[0])!;
        Assert.Equal("T::M0", back.Method);
        Assert.Equal(1, back.Line);
        Assert.Equal(sum[0].Hold.ToArray(), back.Stats.Hold.ToArray());
    }

    [Fact]
    public void OnlyAThreadThatHoldsNoLockWaitsForRoomBeforeItsLine()
    {
        var lines = new List<object[]>();
        var c = Make(2, 0, lines);
        int rooms = 0;
        c.Room = () => rooms++;
        var t = c.Thread();
        t.Push(new object(), 0, 0, 0, false, Frame.Exclusive); // the outer lock, still held
        c.Released(t, F(1, 0, 0), 2_000);                    // the inner one's line: no wait for room
        c.Failed(t, 1, 3_000, null, false);                          // a failed try's line, the outer lock held
        Assert.Equal(2, lines.Count);
        Assert.Equal(0, rooms);
        Frame outer = t.Remove(0);
        c.Released(t, outer, 5_000);                          // the outer one's line, nothing held now
        c.Failed(t, 1, 3_000, null, false);
        Assert.Equal(4, lines.Count);
        Assert.Equal(2, rooms);
    }

    [Fact]
    public void FailedAcquisitionsCountTheirWaitAndAsContended()
    {
        var lines = new List<object[]>();
        var c = Make(1, 1, lines);
        var t = c.Thread();
        c.Released(t, F(0, 0, 1_000_000, contended: true), 1_500_000); // acquired after 1 ms
        c.Failed(t, 0, 5_172_000, null, false);                                     // a TryEnter(o, 5) that gave up
        c.Failed(t, 0, 300, null, false);                                         // a TryEnter(o) that found it taken
        var s = c.Merge()[0];
        Assert.Equal(1, s.Acquisitions);
        Assert.Equal(2, s.Failed);
        Assert.Equal(3, s.Contended);
        Assert.Equal(3, s.Wait.Count);
        Assert.Equal(1_000_000 + 5_172_000 + 300, s.Wait.Total);
        Assert.Equal(5_172_000, s.Wait.Max);
        Assert.Equal(1, s.Hold.Count); // a failed try held nothing
        var site = SiteTotals.FromRow(c.Snapshot()[0])!;
        var p = new ProcessInfo { Name = "t", Pid = 1, StartUtc = DateTime.UtcNow, DurationNs = 1 };
        string json = Report.Format(p, [site], 0, null, null, 0, 1);
        JsonTests.Validate(json);
        var doc = System.Text.Json.Nodes.JsonNode.Parse(json)!["sites"]![0]!;
        Assert.Equal(3, (long)doc["contended"]!);
        Assert.Equal(2, (long)doc["failed"]!);
        Assert.Equal(6.1723, (double)doc["wait_ms"]!["total"]!);
        Assert.Equal(5.172, (double)doc["wait_ms"]!["max"]!);
    }

    [Fact]
    public void SlowLocksQueueTheirLine()
    {
        var lines = new List<object[]>();
        var c = Make(2, 1, lines); // 1 ms = 1,000,000 ticks
        var t = c.Thread();
        c.Released(t, F(0, 0, 0), 999_999);           // below: no line
        c.Released(t, F(0, 0, 0), 52_114_000);        // held 52.114 ms
        c.Released(t, F(1, 10, 3_000_000), 20);       // waited 3 ms
        c.Failed(t, 1, 2_000_000, null, false);                    // not acquired after 2 ms
        c.Released(t, F(7, 0, 0), 5_000_000);         // an id outside the table: ignored
        Assert.Equal(new[]
        {
            "LockTime: T::M0 held 52.114 ms, waited 0.000 ms at F.cs:1",
            "LockTime: T::M1 held 0.000 ms, waited 3.000 ms at F.cs:2",
            "LockTime: T::M1 waited 2.000 ms, not acquired at F.cs:2",
        }, lines.Select(LineWriter.Format).ToArray());
        Assert.All(lines, e => Assert.Equal("stdout", e[0]));
    }

    [Fact]
    public void AFailedTryBehindAHolderNamesIt()
    {
        // a TryEnter(o, 5) whose try with 0 failed: Api.WaitingTimed found the holder, the try gave up
        var lines = new List<object[]>();
        var c = Make(2, 1, lines);
        var t = c.Thread();
        c.Failed(t, 1, 5_000_000, ["Test", "T::M0", "F.cs:1"], false);
        Assert.Equal(new[] { "LockTime: T::M1 waited 5.000 ms, not acquired at F.cs:2 (held by T::M0 at F.cs:1)" },
                     lines.Select(LineWriter.Format).ToArray());
        SiteStats s = t.Stats(1);
        Assert.Equal((1L, 1L, 0L), (s.Failed, s.Contended, s.Acquisitions));
        Assert.Equal(1, s.HolderN);
        Assert.Equal(new[] { "Test", "T::M0", "F.cs:1" }, s.Holders[0]);
        Assert.Equal((5_000_000L, 1L), (s.HolderWait[0], s.HolderCount[0]));
    }

    [Fact]
    public void WithoutARecordQueueSlowLocksQueueEntries()
    {
        // the registry of an older LockTime's owner has no entry 8: the line goes as an entry through entry 1
        var lines = new List<object[]>();
        var c = Make(2, 1, lines);
        c.Records = null;
        var t = c.Thread();
        c.Released(t, F(1, 0, 2_000_000, contended: true) with { Holder = ["Test", "T::M0", "F.cs:1"] }, 3_000_000);
        c.Failed(t, 0, 4_000_000, null, false);
        Assert.Equal(new[]
        {
            "LockTime: T::M1 held 3.000 ms, waited 2.000 ms at F.cs:2 (held by T::M0 at F.cs:1)",
            "LockTime: T::M0 waited 4.000 ms, not acquired at F.cs:1",
        }, lines.Select(LineWriter.Format).ToArray());
    }

    [Fact]
    public void TicksOfOtherClocksBecomeNanoseconds()
    {
        var table = new SiteTable();
        table.Begin("Mono", 1);
        table.Define(0, "M", "L", "", 0, "Monitor.Enter");
        var settings = Settings.Parse(null, null, null, null, null, null, "1", "stderr", "10", "");
        var c = new Collector(table, settings, 10_000_000); // Mono's 100 ns wall clock
        ThreadRecord.Current = null;
        Assert.Equal(10_000, c.ThresholdTicks);
        c.Released(c.Thread(), F(0, 0, 3), 25);
        var s = c.Merge()[0];
        Assert.Equal(2500, s.Hold.Max);
        Assert.Equal(300, s.Wait.Max);
    }

    [Fact]
    public void AWaiterFindsTheSiteThatHoldsItsLockAndIsChargedToIt()
    {
        var lines = new List<object[]>();
        var c = Make(3, 1, lines);
        object gate = new(), other = new();
        using var held = new ManualResetEventSlim();
        using var done = new ManualResetEventSlim();
        using var inWait = new ManualResetEventSlim();
        using var waiting = new ManualResetEventSlim();
        var holder = new Thread(() =>
        {
            var t = c.Thread();
            t.Push(other, 0, 0, 0, false, Frame.Exclusive);
            t.Push(gate, 1, 0, 0, false, Frame.Exclusive);
            held.Set();
            inWait.Wait();
            t.SetInWait(gate, true);
            waiting.Set();
            done.Wait();
            t.SetInWait(gate, false);
            t.Remove(t.Find(gate, Frame.Exclusive));
            t.Remove(t.Find(other, Frame.Exclusive));
        });
        holder.Start();
        held.Wait();
        string[]? h = c.Holder(gate);
        Assert.Same(c.HolderNames[1], h);
        Assert.Equal(new[] { "Test", "T::M1", "F.cs:2" }, h);
        Assert.Null(c.Holder(new object())); // held by nobody
        inWait.Set(); // the holder enters Monitor.Wait on gate: it gives gate up, not other
        waiting.Wait();
        Assert.Null(c.Holder(gate));
        Assert.Same(c.HolderNames[0], c.Holder(other));
        done.Set();
        holder.Join();
        Assert.Null(c.Holder(gate)); // released

        var me = c.Thread();
        me.Behind = h;
        me.Push(gate, 2, 5_000_000, 5_000_000, true, Frame.Exclusive);
        Assert.Null(me.Behind); // taken by the contended acquisition
        Frame f = me.Remove(me.Find(gate, Frame.Exclusive));
        Assert.Same(h, f.Holder);
        c.Released(me, f, 5_000_100);
        c.Released(me, F(2, 0, 2_000_000, contended: true) with { Holder = new[] { "Test", "T::M1", "F.cs:2" } }, 10);
        var s = c.Merge()[2];
        Assert.Equal(1, s.HolderN);
        Assert.Equal(7_000_000, s.HolderWait[0]);
        Assert.Equal(2, s.HolderCount[0]);
        Assert.Equal("LockTime: T::M2 held 0.000 ms, waited 5.000 ms at F.cs:3 (held by T::M1 at F.cs:2)", LineWriter.Format(lines[0]));
    }

    [Fact]
    public void BlameAddsUpOverSitesAndCopiesAndOrdersHoldersByWait()
    {
        var a = JsonTests.Site("App", "App::Wait", "A.cs:1", "", 0, "Monitor.Enter", [1], [90_000_000, 10_000_000], contended: 2);
        a.Stats.WaitedBehind(["Lib", "Lib::Hold", "L.cs:5"], 10_000_000, 1);
        a.Stats.WaitedBehind(["App", "App::Hold", "A.cs:2"], 90_000_000, 1);
        var b = JsonTests.Site("App", "App::Hold", "A.cs:2", "", 0, "Monitor.Enter", [100_000_000], [0]);
        var lib = JsonTests.Site("Lib", "Lib::Hold", "L.cs:5", "", 0, "Monitor.Enter", [20_000_000], [5_000_000], contended: 1);
        lib.Stats.WaitedBehind(["App", "App::Hold", "A.cs:2"], 5_000_000, 1);
        // through a row and back, as another copy's snapshot gives it
        var table = new SiteTable();
        table.Begin("Lib", 1);
        table.Define(0, "Lib::Hold", "L.cs:5", "", 0, "Monitor.Enter");
        object[] row = SiteTotals.ToRow(table, 0, lib.Stats, 2, 7_000_000);
        row[11] = SiteTotals.Pair(3, 9_000_000);
        var back = SiteTotals.FromRow(row)!;
        var sites = new List<SiteTotals> { a, b, back };
        SiteTotals.Blame(sites);
        Assert.Equal(95_000_000, b.BlamedNs);
        Assert.Equal(10_000_000, back.BlamedNs);
        Assert.Equal((2L, 7_000_000L), (back.HeldNow, back.LongestHeldNs)); // the holds in progress go through the row
        Assert.Equal((3L, 9_000_000L), (back.WaitingNow, back.LongestWaitingNs)); // and the waits
        Assert.Equal(0, a.BlamedNs);
        Assert.Equal("App::Hold", a.Stats.Holders[0][1]); // largest first
        Assert.Equal(90_000_000, a.Stats.HolderWait[0]);
        Assert.Equal("Lib::Hold", a.Stats.Holders[1][1]);
    }

    [Fact]
    public void HoldsInProgressAreReadFromAnotherThreadsFrames()
    {
        var c = Make(4, 1000, new List<object[]>());
        using var pushed = new ManualResetEventSlim();
        using var done = new ManualResetEventSlim();
        object a = new(), b = new(), waited = new();
        var holder = new Thread(() =>
        {
            var t = c.Thread();
            t.Push(a, 1, 1_000, 0, false, Frame.Exclusive);
            t.Push(b, 1, 4_000, 0, false, Frame.Read);
            t.Push(null!, 0, 9_000, 0, false, Frame.Spin); // a SpinLock: no object
            t.Push(waited, 2, 2_000, 0, false, Frame.Exclusive);
            t.SetInWait(waited, true); // inside Monitor.Wait: holds no lock
            pushed.Set();
            done.Wait();
        });
        holder.Start();
        pushed.Wait();
        var count = new long[4];
        var longest = new long[4];
        c.HeldNow(count, longest, 10_000);
        var rows = c.Snapshot().Select(SiteTotals.FromRow).ToList();
        done.Set();
        holder.Join();
        Assert.Equal(new long[] { 1, 2, 0, 0 }, count);
        Assert.Equal(new long[] { 1_000, 9_000, 0, 0 }, longest);
        // nothing released yet: the snapshot still has the sites held, with their holds in progress
        Assert.Equal(new[] { "F.cs:1", "F.cs:2" }, rows.Select(r => r!.Location));
        Assert.Equal(new long[] { 1, 2 }, rows.Select(r => r!.HeldNow));
        Assert.All(rows, r => Assert.Equal(0, r!.Stats.Acquisitions));
    }

    [Fact]
    public void HoldsInProgressReadWhileTheFramesChangeGiveOnlyTheSitesHeld()
    {
        var c = Make(4, 1000, new List<object[]>());
        int stop = 0;
        long rounds = 0;
        var writer = new Thread(() =>
        {
            var t = c.Thread();
            object x = new(), y = new();
            for (long i = 1; Volatile.Read(ref stop) == 0; i++)
            {
                t.Push(x, 0, i, 0, false, Frame.Exclusive);
                t.Push(y, 1, i, 0, false, Frame.Exclusive);
                t.Remove(t.Find(x, Frame.Exclusive)); // out of order: y's frame moves down over x's
                t.Remove(t.Find(y, Frame.Exclusive));
                Volatile.Write(ref rounds, i);
            }
        });
        writer.Start();
        var count = new long[4];
        var longest = new long[4];
        const long now = 1L << 50;
        long seen = 0;
        for (int k = 0; k < 200_000 || Volatile.Read(ref rounds) < 1000; k++)
        {
            Array.Clear(count);
            Array.Clear(longest);
            c.HeldNow(count, longest, now);
            Assert.Equal(0, count[2] + count[3]); // never a site the thread does not take
            Assert.InRange(count[0], 0, 1);
            Assert.InRange(count[1], 0, 2); // a frame moved down and its old slot not yet cleared: one too many, briefly
            Assert.InRange(longest[0], 0, now - 1);
            Assert.InRange(longest[1], 0, now - 1);
            seen += count[0] + count[1];
        }
        Volatile.Write(ref stop, 1);
        writer.Join();
        Assert.True(seen > 0, "no hold in progress seen in 200,000 reads");
    }
}
