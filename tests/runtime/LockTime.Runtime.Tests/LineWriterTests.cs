// LineWriterTests.cs - the bounded line queue and its sinks: whole lines, drops counted, files kept open.
using LockTime.Runtime;
using Xunit;

namespace LockTime.Runtime.Tests;

public class LineWriterTests
{
    [Fact]
    public void AFullQueueDropsAndCountsNeverBlocks()
    {
        var w = new LineWriter();
        for (int i = 0; i < LineWriter.Capacity + 25; i++)
            w.Enqueue(LineWriter.Entry("/dev/null", "M", "L", i, 0, null));
        Assert.Equal(25, w.Dropped());
        Assert.True(w.Drain());
        Assert.False(w.Drain());
        w.Enqueue(LineWriter.Entry("/dev/null", "M", "L", 1, 0, null)); // room again after the drain
        Assert.Equal(25, w.Dropped());
    }

    [Fact]
    public void AFullQueueDropsRecordsAndEntriesAlike()
    {
        var w = new LineWriter();
        object source = LineWriter.Source("/dev/null", ["M"], ["L"]);
        for (int i = 0; i < LineWriter.Capacity - 1; i++)
            w.Record(source, 0, i, 0, null);
        w.Enqueue(LineWriter.TextEntry("/dev/null", "the last room"));
        w.Record(source, 0, 1, 0, null);
        w.Enqueue(LineWriter.TextEntry("/dev/null", "no room"));
        Assert.Equal(2, w.Dropped());
        Assert.True(w.Drain());
        Assert.False(w.Drain());
        for (int i = 0; i < LineWriter.Capacity; i++) // every slot again, in the ring's second lap
            w.Record(source, 0, i, 0, null);
        Assert.Equal(2, w.Dropped());
    }

    [Fact]
    public void RecordsAreNamedByTheirSourceAndWrittenInOrderWithEntries()
    {
        string path = Path.GetTempFileName();
        try
        {
            var w = new LineWriter();
            object app = LineWriter.Source(path, ["App::Run", "App::Stop"], ["App.cs:10", "IL_001c"]);
            object lib = LineWriter.Source(path, ["Lib::Get"], ["Lib.cs:3"]);
            w.Record(app, 1, 2_500_000, 0, null);
            w.Record(lib, 0, 10_000, 130_754_000, new[] { "App", "App::Run", "App.cs:10" });
            w.Enqueue(LineWriter.TextEntry(path, "LockTime: potential deadlock: x"));
            w.Record(app, 0, -1, 3_000_000, "Lib::Get at Lib.cs:3");
            w.Enqueue(LineWriter.Entry(path, "Old::M", "Old.cs:1", 1_000, 2_000, null)); // a copy of an older LockTime
            w.Record(app, 7, 1, 1, null); // a site its source does not name: no line
            w.Record(app, 1, 2_500_000, 0, null);
            Assert.True(w.Drain());
            Assert.Equal(new[]
            {
                "LockTime: App::Stop held 2.500 ms, waited 0.000 ms at IL_001c",
                "LockTime: Lib::Get held 0.010 ms, waited 130.754 ms at Lib.cs:3 (held by App::Run at App.cs:10)",
                "LockTime: potential deadlock: x",
                "LockTime: App::Run waited 3.000 ms, not acquired at App.cs:10 (held by Lib::Get at Lib.cs:3)",
                "LockTime: Old::M held 0.001 ms, waited 0.002 ms at Old.cs:1",
                "LockTime: App::Stop held 2.500 ms, waited 0.000 ms at IL_001c",
            }, File.ReadAllLines(path));
        }
        finally
        {
            File.Delete(path);
        }
    }

    [Fact]
    public void ManyThreadsGiveWholeLinesInOneFile()
    {
        string path = Path.GetTempFileName();
        try
        {
            var w = new LineWriter();
            const int threads = 16, each = 2000;
            // the writer thread's loop, and the exit's summary queued while it runs, which the exit waits for
            bool stop = false;
            var writer = new Thread(() => { while (!Volatile.Read(ref stop)) { w.TryDrain(); Thread.Sleep(1); } });
            writer.Start();
            var all = Enumerable.Range(0, threads).Select(k => new Thread(() =>
            {
                for (int i = 0; i < each; i++)
                    w.Enqueue(LineWriter.Entry(path, $"T{k}::M", $"F.cs:{i}", 1_000_000L * k + i, i, null));
            })).ToArray();
            foreach (var t in all) t.Start();
            foreach (var t in all) t.Join();
            Assert.True(w.AwaitWritten(w.Queue(path, ["LockTime: summary: the end"]), 5000, 60000));
            Volatile.Write(ref stop, true);
            writer.Join();
            var lines = File.ReadAllLines(path);
            Assert.True(threads * each < LineWriter.Capacity); // the queue holds them all: none may be dropped
            Assert.Equal(0, w.Dropped());
            Assert.Equal(threads * each + 1, lines.Length);
            Assert.Equal("LockTime: summary: the end", lines[^1]);
            var pattern = new System.Text.RegularExpressions.Regex(@"^LockTime: T\d+::M held \d+\.\d{3} ms, waited \d+\.\d{3} ms at F\.cs:\d+$");
            Assert.All(lines[..^1], l => Assert.Matches(pattern, l));
        }
        finally
        {
            File.Delete(path);
        }
    }

    [Fact]
    public void ThreadsThatMayWaitForRoomLoseNoLineToASlowWriter()
    {
        // Twice the queue's lines, from threads that wait for room as a thread holding no lock does, and
        // a writer thread that sleeps 2 ms between batches: without the wait most lines would be dropped.
        string path = Path.GetTempFileName();
        try
        {
            var w = new LineWriter();
            const int threads = 4, each = LineWriter.Capacity / 2;
            object source = LineWriter.Source(path, ["T::M"], ["F.cs:1"]);
            bool stop = false;
            var writer = new Thread(() => { while (!Volatile.Read(ref stop)) { w.TryDrain(); Thread.Sleep(2); } });
            writer.Start();
            var all = Enumerable.Range(0, threads).Select(k => new Thread(() =>
            {
                for (int i = 0; i < each; i++)
                {
                    w.AwaitRoom();
                    w.Record(source, 0, i, k, null);
                }
            })).ToArray();
            foreach (var t in all) t.Start();
            foreach (var t in all) t.Join();
            Assert.True(w.AwaitWritten(w.Queued(), 5000, 120000));
            Volatile.Write(ref stop, true);
            writer.Join();
            Assert.Equal(0, w.Dropped());
            Assert.Equal((long)threads * each, File.ReadLines(path).LongCount());
        }
        finally
        {
            File.Delete(path);
        }
    }

    [Fact]
    public void AWaitForRoomGivesUpOnAStalledWriterAndTheNextWaitsNoMore()
    {
        var w = new LineWriter();
        object source = LineWriter.Source("/dev/null", ["M"], ["L"]);
        for (int i = 0; i < LineWriter.Capacity; i++)
            w.Record(source, 0, i, 0, null);
        var first = System.Diagnostics.Stopwatch.StartNew();
        w.AwaitRoom(); // no writer takes a line: given up after LineWriter.RoomStallMs
        first.Stop();
        Assert.True(first.ElapsedMilliseconds >= LineWriter.RoomStallMs, $"{first.ElapsedMilliseconds} ms");
        var second = System.Diagnostics.Stopwatch.StartNew();
        w.AwaitRoom(); // the writer still took nothing: no wait
        second.Stop();
        Assert.True(second.ElapsedMilliseconds < LineWriter.RoomStallMs, $"{second.ElapsedMilliseconds} ms");
        w.Record(source, 0, 1, 0, null);
        Assert.Equal(1, w.Dropped());
        Assert.True(w.Drain());
        var room = System.Diagnostics.Stopwatch.StartNew();
        w.AwaitRoom(); // room again: at once
        Assert.True(room.ElapsedMilliseconds < LineWriter.RoomStallMs, $"{room.ElapsedMilliseconds} ms");
    }

    [Fact]
    public void AThreadThatHoldsAnyCopysLockDoesNotWaitForRoom()
    {
        var w = new LineWriter();
        object source = LineWriter.Source("/dev/null", ["M"], ["L"]);
        for (int i = 0; i < LineWriter.Capacity; i++)
            w.Record(source, 0, i, 0, null); // crowded, and no writer takes a line
        bool holds = false;
        w.Holding.Add(() => false);          // a copy whose locks this thread does not hold
        w.Holding.Add(() => holds);          // one whose lock it holds, below
        holds = true;
        var held = System.Diagnostics.Stopwatch.StartNew();
        w.AwaitRoom();
        held.Stop();
        Assert.True(held.ElapsedMilliseconds < LineWriter.RoomStallMs, $"{held.ElapsedMilliseconds} ms");
        holds = false;                       // released: it waits now, until the stalled writer is given up on
        var free = System.Diagnostics.Stopwatch.StartNew();
        w.AwaitRoom();
        free.Stop();
        Assert.True(free.ElapsedMilliseconds >= LineWriter.RoomStallMs, $"{free.ElapsedMilliseconds} ms");
    }

    [Fact]
    public void AFileSinkRemovedOrRenamedIsOpenedAgainAtItsPath()
    {
        string dir = Path.Combine(Path.GetTempPath(), "lt-sink-" + Guid.NewGuid());
        Directory.CreateDirectory(dir);
        string path = Path.Combine(dir, "lines.log"), rotated = path + ".1";
        try
        {
            var w = new LineWriter(0); // looks at each batch
            w.Enqueue(LineWriter.Entry(path, "A::B", "A.cs:1", 2_000_000, 0, null));
            Assert.True(w.Drain());
            File.Move(path, rotated); // a log rotation: the lines go on into a new file at the path
            w.Enqueue(LineWriter.Entry(path, "A::B", "A.cs:2", 3_000_000, 0, null));
            Assert.True(w.Drain());
            File.Delete(path); // removed: the same
            w.Enqueue(LineWriter.Entry(path, "A::B", "A.cs:3", 4_000_000, 0, null));
            w.Enqueue(LineWriter.Entry(path, "A::B", "A.cs:4", 5_000_000, 0, null));
            Assert.True(w.Drain());
            Assert.Equal(["LockTime: A::B held 2.000 ms, waited 0.000 ms at A.cs:1"], File.ReadAllLines(rotated));
            Assert.Equal(["LockTime: A::B held 4.000 ms, waited 0.000 ms at A.cs:3",
                          "LockTime: A::B held 5.000 ms, waited 0.000 ms at A.cs:4"], File.ReadAllLines(path));
        }
        finally
        {
            Directory.Delete(dir, true);
        }
    }

    [Fact]
    public void AFileThatCannotBeOpenedWarnsOnceAndWritesToStderr()
    {
        using var err = new StderrCapture();
        {
            var w = new LineWriter();
            string bad = Path.Combine(Path.GetTempPath(), "no-such-dir-" + Guid.NewGuid(), "x.log");
            w.Enqueue(LineWriter.Entry(bad, "A::B", "A.cs:1", 2_000_000, 0, null));
            w.Enqueue(LineWriter.Entry(bad, "A::B", "A.cs:2", -1, 3_000_000, null));
            w.Drain();
            var lines = err.Text.Split('\n', StringSplitOptions.RemoveEmptyEntries);
            Assert.Equal(3, lines.Length);
            // LOCKTIME_OUTPUT does not name it (unset here): the build baked it in
            Assert.StartsWith($"LockTime: warning: LockTimeOutput=\"{bad}\" (baked in by the build, or by locktime weave --output-sink) cannot be opened (DirectoryNotFoundException", lines[0]);
            Assert.EndsWith("; using stderr", lines[0]);
            Assert.Equal("LockTime: A::B held 2.000 ms, waited 0.000 ms at A.cs:1", lines[1]);
            Assert.Equal("LockTime: A::B waited 3.000 ms, not acquired at A.cs:2", lines[2]);
        }
    }

    [Fact]
    public void AFileThatCannotBeWrittenWarnsOnceAndItsLaterLinesGoToStderr()
    {
        // /dev/full opens and takes writes into its buffers, and fails each flush: "No space left on device"
        Assert.True(File.Exists("/dev/full"), "this test needs Linux's /dev/full");
        using var err = new StderrCapture();
        {
            var w = new LineWriter();
            w.Enqueue(LineWriter.Entry("/dev/full", "A::B", "A.cs:1", 2_000_000, 0, null));
            w.Drain();
            w.Enqueue(LineWriter.Entry("/dev/full", "A::B", "A.cs:1", 4_000_000, 0, null));
            w.Enqueue(LineWriter.Entry("/dev/full", "A::B", "A.cs:2", -1, 3_000_000, null));
            w.Drain();
            w.Queue("/dev/full", new[] { "LockTime: summary: x" });
            w.Drain();
            var lines = err.Text.Split('\n', StringSplitOptions.RemoveEmptyEntries);
            Assert.Equal(4, lines.Length); // the first line was in the file's buffer: lost
            Assert.StartsWith("LockTime: warning: LockTimeOutput=\"/dev/full\" (baked in by the build, or by locktime weave --output-sink) cannot be written (IOException", lines[0]);
            Assert.EndsWith("; using stderr", lines[0]);
            Assert.Equal("LockTime: A::B held 4.000 ms, waited 0.000 ms at A.cs:1", lines[1]);
            Assert.Equal("LockTime: A::B waited 3.000 ms, not acquired at A.cs:2", lines[2]);
            Assert.Equal("LockTime: summary: x", lines[3]);
        }
    }

    [Fact]
    public void ALineNamesTheHolderAndAWholeLineIsWrittenAsItIs()
    {
        Assert.Equal("LockTime: Shop.Orders::Add held 0.010 ms, waited 130.754 ms at Orders.cs:20 (held by Shop.Inventory::Reserve at Inventory.cs:42)",
                     LineWriter.Format(LineWriter.Entry("stderr", "Shop.Orders::Add", "Orders.cs:20", 10_000, 130_754_000, "Shop.Inventory::Reserve at Inventory.cs:42")));
        Assert.Equal("LockTime: A::B waited 3.000 ms, not acquired at A.cs:2 (held by C::D at C.cs:7)",
                     LineWriter.Format(LineWriter.Entry("stderr", "A::B", "A.cs:2", -1, 3_000_000, "C::D at C.cs:7")));
        Assert.Equal("LockTime: potential deadlock: x", LineWriter.Format(LineWriter.TextEntry("stderr", "LockTime: potential deadlock: x")));
    }

    [Fact]
    public void MillisecondsAreRoundedToTheMicrosecondWithThreeDecimals()
    {
        var values = new List<long> { 0, 1, 499, 500, 999, 1_000, 1_499, 1_500, 999_499, 999_500, 1_000_000, 52_114_003,
                                      999_999_499, 999_999_500, 1_234_567_890_123, long.MaxValue, -1, -1_500, -52_114_003, long.MinValue };
        var random = new Random(13);
        for (int i = 0; i < 2000; i++)
            values.Add(random.NextInt64(long.MaxValue) >> random.Next(63));
        foreach (long ns in values) {
            decimal ms = Math.Round(Math.Abs((decimal)ns) / 1000m, MidpointRounding.AwayFromZero) / 1000m;
            if (ns == long.MinValue)
                ms = Math.Round((decimal)long.MaxValue / 1000m, MidpointRounding.AwayFromZero) / 1000m;
            string expected = (ns < 0 ? "-" : "") + ms.ToString("0.000", System.Globalization.CultureInfo.InvariantCulture);
            Assert.Equal(expected, LineWriter.Ms(ns));
        }
    }
}
