// LineLimitTests.cs - the lines of slow locks per site: the first ones, then a rate, the rest rolled up and counted exactly.
using LockTime.Runtime;
using Xunit;

namespace LockTime.Runtime.Tests;

public class LineLimitTests
{
    const long Second = 1_000_000_000; // ticks of the limits below: 1 tick = 1 ns

    static readonly string[] Methods = { "T::M0", "T::M1" }, Locations = { "F.cs:1", "F.cs:2" };

    static int Taken(LineLimit limit, int site, int tries, long now)
    {
        int n = 0;
        for (int i = 0; i < tries; i++)
            if (limit.Take(site, 1_000_000, 0, now))
                n++;
        return n;
    }

    [Fact]
    public void TheFirstTenThenTheRateAndTheBurstRefillsWhenQuiet()
    {
        var limit = new LineLimit(2, 2, Second, 0);
        Assert.Equal(LineLimit.Burst, Taken(limit, 0, 50, 7 * Second));
        Assert.Equal(LineLimit.Burst, Taken(limit, 1, 50, 7 * Second)); // each site has its own
        Assert.Equal(0, Taken(limit, 0, 50, 7 * Second + Second / 2 - 1));
        Assert.Equal(1, Taken(limit, 0, 50, 7 * Second + Second / 2)); // 2 a second: one every 0.5 s
        Assert.Equal(2, Taken(limit, 0, 50, 8 * Second + Second / 2));
        Assert.Equal(LineLimit.Burst, Taken(limit, 0, 50, 100 * Second)); // quiet for long: the first ten again, no more
    }

    [Fact]
    public void RateZeroWritesTheFirstTenOnly()
    {
        var limit = new LineLimit(1, 0, Second, 0);
        Assert.Equal(LineLimit.Burst, Taken(limit, 0, 50, Second));
        Assert.Equal(0, Taken(limit, 0, 50, 1_000_000 * Second));
    }

    [Fact]
    public void ARollUpCountsWhatWasHeldBackWithItsLargestHoldAndWait()
    {
        var limit = new LineLimit(2, 0, Second, 0);
        Taken(limit, 0, LineLimit.Burst, 0);
        Taken(limit, 1, LineLimit.Burst, 0);
        Assert.False(limit.Take(0, 5_000_000, 1_000_000, Second));
        Assert.False(limit.Take(0, 12_345_678, 40_100_000, Second));
        Assert.False(limit.Take(0, -1, 2_000_000, Second)); // not acquired: no hold
        Assert.False(limit.Take(1, -1, 3_000_000, Second));
        Assert.False(limit.Due(10 * Second - 1));
        Assert.True(limit.Due(10 * Second));
        Assert.Equal(["LockTime: T::M0 had 3 more slow locks at F.cs:1 in the last 10.0 s, max hold 12.346 ms, max wait 40.100 ms",
                      "LockTime: T::M1 had 1 more slow lock at F.cs:2 in the last 10.0 s, max wait 3.000 ms"],
                     limit.RollUp(10 * Second, Methods, Locations));
        Assert.False(limit.Due(19 * Second));
        Assert.Empty(limit.RollUp(12 * Second, Methods, Locations)); // nothing held back since
        Assert.False(limit.Take(0, 1_000_000, 0, 13 * Second));
        Assert.Equal(["LockTime: T::M0 had 1 more slow lock at F.cs:1 in the last 3.4 s, max hold 1.000 ms, max wait 0.000 ms"],
                     limit.RollUp(15_449_999_999, Methods, Locations)); // since the last roll-up, empty or not
    }

    [Fact]
    public void ThreadsRacingForTheLinesOfOneSiteAddUpExactly()
    {
        var limit = new LineLimit(1, 2, Second, 0);
        const int threads = 8, each = 100_000;
        int written = 0;
        var all = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            all[i] = new Thread(() => Interlocked.Add(ref written, Taken(limit, 0, each, 5 * Second)));
            all[i].Start();
        }
        foreach (var t in all)
            t.Join();
        Assert.Equal(LineLimit.Burst, written); // one time: the burst, whoever took it
        string rollUp = Assert.Single(limit.RollUp(6 * Second, Methods, Locations));
        Assert.Equal($"LockTime: T::M0 had {threads * each - LineLimit.Burst} more slow locks at F.cs:1 in the last 6.0 s, max hold 1.000 ms, max wait 0.000 ms", rollUp);
    }

    [Fact]
    public void ACollectorQueuesTheFirstLinesAndItsRollUpsToItsSink()
    {
        var lines = new List<object[]>();
        Collector c = CollectorTests.Make(1, 1, lines);
        Assert.NotNull(c.Limit); // the default, 2 a second
        c.Limit = new LineLimit(1, 0, Second, Clock.Ticks()); // the first ten only, however slowly the test runs
        var t = c.Thread();
        for (int i = 0; i < 30; i++)
            c.Released(t, CollectorTests.F(0, 0, 0), 2_000_000); // held 2 ms
        Assert.Equal(LineLimit.Burst, lines.Count);
        Assert.Equal(30, c.Merge()[0].Acquisitions); // the statistics have every one
        c.RollUp(false);                              // not due
        Assert.Equal(LineLimit.Burst, lines.Count);
        c.RollUp(true);                               // the exit: every roll-up
        object[] rollUp = lines[^1];
        Assert.Equal("stdout", rollUp[0]);
        Assert.Matches(@"^LockTime: T::M0 had 20 more slow locks at F\.cs:1 in the last \d+\.\d s, max hold 2\.000 ms, max wait 0\.000 ms$",
                       LineWriter.Format(rollUp));
        c.RollUp(true);
        Assert.Equal(LineLimit.Burst + 1, lines.Count); // nothing more held back: no line
    }

    [Fact]
    public void EveryLineWithAllOrUnderAnOwnerThatRollsUpNothing()
    {
        var table = new SiteTable();
        table.Begin("Test", 1);
        table.Define(0, "T::M0", "F.cs:1", "/src/F.cs", 1, "Monitor.Enter");
        var settings = Settings.Parse(null, "1", "stdout", null, null, null, "1", "stderr", "10", "");
        settings.ParseLines("all", "2");
        Assert.Null(new Collector(table, settings, Second).Limit);
        var lines = new List<object[]>();
        Collector c = CollectorTests.Make(1, 1, lines);
        c.JoinRollUps(null); // an older owner's registry: no entry 11
        Assert.Null(c.Limit);
        var t = c.Thread();
        for (int i = 0; i < 30; i++)
            c.Released(t, CollectorTests.F(0, 0, 0), 2_000_000);
        Assert.Equal(30, lines.Count);
    }
}
