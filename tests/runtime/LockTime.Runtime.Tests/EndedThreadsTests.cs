// EndedThreadsTests.cs - the records of threads that ended: folded into the same totals, taken off the lists; live ones stay.
using System.Text.Json.Nodes;
using LockTime.Runtime;
using Xunit;

namespace LockTime.Runtime.Tests;

public class EndedThreadsTests
{
    /// <summary>Starts <paramref name="n"/> threads running <paramref name="body"/> (given its index) and joins them.</summary>
    private static void RunAndEnd(int n, Action<int> body)
    {
        var threads = Enumerable.Range(0, n).Select(k => new Thread(() => body(k))).ToArray();
        foreach (var t in threads) t.Start();
        foreach (var t in threads) t.Join();
    }

    /// <summary>A snapshot's rows as text, every number of every array: equal text, equal figures.</summary>
    private static string Text(object? o) => o switch
    {
        null => "null",
        string s => "\"" + s + "\"",
        Array a => "[" + string.Join(",", a.Cast<object?>().Select(Text)) + "]",
        _ => Convert.ToString(o, System.Globalization.CultureInfo.InvariantCulture)!,
    };

    [Fact]
    public void RecordsOfEndedThreadsFoldIntoTheTotalsTheyGaveListed()
    {
        var c = CollectorTests.Make(3, 1000, new List<object[]>());
        const int threads = 12, each = 300;
        using var recorded = new CountdownEvent(threads);
        using var end = new ManualResetEventSlim();
        var all = Enumerable.Range(0, threads).Select(k => new Thread(() =>
        {
            var t = c.Thread();
            for (int i = 0; i < each; i++)
            {
                // site 0: hold 1,000 + 37 i ns; every third contended, waiting k * 10 us behind site 2 (even k) or itself
                var f = CollectorTests.F(0, 0, i % 3 == 0 ? k * 10_000 : 0, contended: i % 3 == 0);
                if (i % 3 == 0)
                    f.Holder = c.HolderNames[k % 2 == 0 ? 2 : 0];
                c.Released(t, f, 1000 + 37 * i);
                if (i % 50 == 0)
                    c.Failed(t, 2, 5_000 + k, null, false); // site 2: a failed try now and then
            }
            recorded.Signal();
            end.Wait();
        })).ToArray();
        foreach (var t in all) t.Start();
        recorded.Wait();

        string listed = Text(c.Snapshot());          // every record listed: the figures as they always were
        Assert.Equal(0, c.Sweep(false));             // no thread has ended: nothing taken
        Assert.Equal(threads, c.Listed());
        end.Set();
        foreach (var t in all) t.Join();

        Assert.Equal(threads, c.Sweep(false));
        Assert.Equal(0, c.Listed());
        Assert.Equal(listed, Text(c.Snapshot()));    // folded: the same rows, histograms and holders
        var sites = c.Snapshot().Select(SiteTotals.FromRow).ToList();
        SiteTotals.Blame(sites!);
        var s0 = sites.Single(s => s!.Location == "F.cs:1")!;
        Assert.Equal(threads * each, s0.Stats.Acquisitions);
        Assert.Equal(threads * each / 3, s0.Stats.Contended);
        Assert.Equal(threads * each, s0.Stats.Hold.Count);
        Assert.Equal(1000 + 37 * (each - 1), s0.Stats.Hold.Max);
        Assert.Equal(threads * Enumerable.Range(0, each).Sum(i => 1000L + 37 * i), s0.Stats.Hold.Total);
        Assert.Equal(2, s0.Stats.HolderN);
        Assert.Equal(threads * each / 3, s0.Stats.HolderCount[0] + s0.Stats.HolderCount[1]);
        var s2 = sites.Single(s => s!.Location == "F.cs:3")!;
        long behind2 = Enumerable.Range(0, threads).Where(k => k % 2 == 0).Sum(k => k * 10_000L) * (each / 3);
        Assert.Equal(behind2, s2.BlamedNs);          // made others wait: as recorded
        Assert.Equal(s0.Stats.Wait.Total - behind2, s0.BlamedNs);
        Assert.Equal(threads * (each / 50), s2.Stats.Failed);
        Assert.Equal(5_000 + threads - 1, s2.Stats.Wait.Max);
    }

    [Fact]
    public void ALiveThreadsRecordStaysAndSoDoesOneThatEndedHoldingALock()
    {
        var c = CollectorTests.Make(2, 1000, new List<object[]>());
        object held = new();
        using var recorded = new ManualResetEventSlim();
        using var end = new ManualResetEventSlim();
        var live = new Thread(() =>
        {
            c.Released(c.Thread(), CollectorTests.F(0, 0, 0), 500);
            recorded.Set();
            end.Wait();
        });
        live.Start();
        recorded.Wait();
        // a thread that ended holding `held` (a monitor it never exited), and one that ended holding nothing
        RunAndEnd(1, _ => c.Thread().Push(held, 1, Clock.Ticks(), 0, false, Frame.Exclusive));
        RunAndEnd(1, _ => c.Released(c.Thread(), CollectorTests.F(0, 0, 0), 700));

        Assert.Equal(3, c.Listed());
        Assert.Equal(1, c.Sweep(false));             // only the one that ended holding nothing
        Assert.Equal(2, c.Listed());
        Assert.Same(c.HolderNames[1], c.Holder(held)); // the dead holder's frame still names the holder
        long[] count = new long[2], longest = new long[2];
        c.HeldNow(count, longest, Clock.Ticks());
        Assert.Equal(new long[] { 0, 1 }, count);    // and its hold is still in progress
        Assert.Equal(2, c.Merge()[0]!.Acquisitions);

        end.Set();
        live.Join();
        Assert.Equal(1, c.Sweep(false));
        Assert.Equal(1, c.Listed());                 // the one holding a lock
        Assert.Equal(2, c.Merge()[0]!.Acquisitions);
        Assert.Equal(1200, c.Merge()[0]!.Hold.Total);
    }

    [Fact]
    public void AThreadThatEndedHoldingOnlyAMutexAbandonedIt()
    {
        var c = CollectorTests.Make(2, 1000, new List<object[]>());
        using var mutex = new Mutex();
        object monitor = new();
        // one thread ends holding the Mutex (the end abandons it), one holding the Mutex and a monitor
        RunAndEnd(1, _ =>
        {
            mutex.WaitOne();
            c.Released(c.Thread(), CollectorTests.F(0, 0, 0), 400);
            c.Thread().Push(mutex, 1, Clock.Ticks(), 0, false, Frame.Exclusive);
        });
        RunAndEnd(1, _ =>
        {
            c.Thread().Push(mutex, 1, Clock.Ticks(), 0, false, Frame.Exclusive);
            c.Thread().Push(monitor, 0, Clock.Ticks(), 0, false, Frame.Exclusive);
        });

        Assert.Equal(1, c.Sweep(false));             // the Mutex alone does not keep its record
        Assert.Equal(1, c.Listed());                 // the monitor does
        Assert.Equal(1, c.Merge()[0]!.Acquisitions); // the folded record's figures stay
        long[] count = new long[2], longest = new long[2];
        c.HeldNow(count, longest, Clock.Ticks());
        Assert.Equal(new long[] { 1, 1 }, count);    // only the record still listed holds
        Assert.Throws<AbandonedMutexException>(() => mutex.WaitOne()); // what the end did, as the runtime says
        mutex.ReleaseMutex();
    }

    [Fact]
    public void AListIsSweptForItsGrowthOnlyOnceItDoubled()
    {
        var list = new ThreadList();
        RunAndEnd(ThreadList.MinSweep - 1, _ => list.Add(new object()));
        Assert.False(list.Due());
        list.Add(new object());                      // this thread's: alive
        Assert.True(list.Due());
        object[] before = list.Items();
        Assert.Equal(ThreadList.MinSweep - 1, list.Sweep(null));
        Assert.Equal(1, list.Count());
        Assert.False(list.Due());
        Assert.NotNull(before[ThreadList.MinSweep - 1]); // a reader's array is never changed: a new one is published
        Assert.Null(list.Items()[1]);
        RunAndEnd(ThreadList.MinSweep - 2, _ => list.Add(new object()));
        Assert.False(list.Due());                    // 63 of at least 64
        RunAndEnd(1, _ => list.Add(new object()));
        Assert.True(list.Due());
        Assert.Equal(0, list.Sweep(_ => false));     // kept when the caller says so
        Assert.Equal(ThreadList.MinSweep, list.Count());
    }

    [Fact]
    public void TheLockOrderForgetsTheListsOfEndedThreadsAndKeepsTheirEdges()
    {
        HeldLocks.Current = null;
        var order = new LockOrder();
        order.Join(["Bank::Transfer", "Bank::Transfer"], ["Bank.cs:12", "Bank.cs:13"]);
        var lines = new List<string>();
        order.CycleLine = l => { lock (lines) lines.Add(l); };
        object x = new(), y = new();
        RunAndEnd(8, _ =>
        {
            order.Enter(x, 0);
            order.Enter(y, 1);
            order.Exit(y);
            order.Exit(x);
        });
        Assert.Equal(8, order.Listed());
        Assert.Equal(0, order.SweepThreads(true));   // 8 lists: not due
        Assert.Equal(8, order.SweepThreads(false));
        Assert.Equal(0, order.Listed());
        Assert.Equal(1, order.Counts()[1]);          // the edge x -> y stays
        RunAndEnd(1, _ =>
        {
            order.Enter(y, 0);
            order.Enter(x, 1);
            order.Exit(x);
            order.Exit(y);
        });
        Assert.Single(order.Cycles());               // the other order closes the cycle with it
        Assert.Single(lines);
    }

    [Fact]
    public void ASemaphoreTakenByAThreadThatEndedIsReleasedByAnother()
    {
        string dir = Directory.CreateTempSubdirectory("lt-ended").FullName, slot = "LockTime.Tests.Ended." + Guid.NewGuid().ToString("N");
        try
        {
            string report = Path.Combine(dir, "run.json");
            var copy = new RuntimeCopy("ended");
            Assert.False(copy.Start("App", 1, slot, Path.Combine(dir, "locks.log"), report: report));
            using var gate = new SemaphoreSlim(1, 1);
            bool Take()
            {
                long start = copy.Ticks();
                if (!gate.Wait(0))
                    return false;
                copy.Call("Api", "AcquiredSemaphore", gate, 0, start, start, false);
                return true;
            }
            void Release()
            {
                object? releasing = copy.Call("Api", "ReleasingSemaphore", gate);
                gate.Release();
                copy.Call("Api", "ReleasedSemaphore", releasing, copy.Ticks());
            }
            object collector = copy.Field("Runtime", "Current")!, order = copy.Field("Runtime", "order")!;
            object? Invoke(object target, string method, params object[] args) =>
                target.GetType().GetMethod(method, System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.NonPublic)!.Invoke(target, args);
            int records = (int)Invoke(collector, "Listed")!, lists = (int)Invoke(order, "Listed")!; // this thread's (the start's warm-up)
            bool took = false, again = false;
            RunAndEnd(1, _ => took = Take());        // taken, and its thread ends holding it
            Assert.True(took);
            Assert.Equal(records + 1, (int)Invoke(collector, "Listed")!);
            Assert.Equal(lists + 1, (int)Invoke(order, "Listed")!);
            Invoke(collector, "Sweep", false);
            Invoke(order, "SweepThreads", false);
            Assert.Equal(records, (int)Invoke(collector, "Listed")!); // its record and lock-order list are gone
            Assert.Equal(lists, (int)Invoke(order, "Listed")!);
            Release();                               // released here: the hold ends
            RunAndEnd(1, _ => { again = Take(); Release(); }); // and the semaphore is a lock as before
            Assert.True(again);
            Assert.Equal(1, gate.CurrentCount);
            copy.Finish();

            var site = JsonNode.Parse(File.ReadAllText(report))!["sites"]!.AsArray().Single()!;
            Assert.Equal(2, (long)site["acquisitions"]!);
            Assert.Equal(0, (long)site["held_now"]!["count"]!);
            Assert.Equal(2, site["hold_histogram"]!.AsArray().Sum(b => (long)b![1]!));
        }
        finally
        {
            AppDomain.CurrentDomain.SetData(slot, null);
            Directory.Delete(dir, true);
        }
    }
}
