// TimelineTests.cs - the process's last slow locks (Timeline): the ring, the links to the holds waited behind, the report's "timeline".
using System.Text;
using System.Text.Json.Nodes;
using LockTime.Runtime;
using Xunit;

namespace LockTime.Runtime.Tests;

public class TimelineTests
{
    const long Ms = 1_000_000; // ticks of the tests' collectors (1 ns)

    // The timeline's JSON object as a report gives it, times since `start` (ticks of 1 ns).
    static JsonNode Json(Timeline? timeline, long start)
    {
        var sb = new StringBuilder("{\"x\": 0");
        Timeline.AppendTo(sb, timeline, start, 1);
        return JsonNode.Parse(sb.Append('}').ToString())!["timeline"]!;
    }

    // A collector of `sites` sites (threshold 1 ms) that gives its slow locks to a timeline of 16.
    static (Collector, Timeline) Made(int sites)
    {
        var c = CollectorTests.Make(sites, 1, new List<object[]>());
        var t = new Timeline(16);
        c.TimelineAdd = t.Add;
        return (c, t);
    }

    static long[] Event(int thread, long from, long acquired, long released) {
        var e = new long[Timeline.Fields];
        Timeline.Fill(e, thread, from, acquired, released, Timeline.Held, null, 0, 0, 0);
        return e;
    }

    [Fact]
    public void TheRingKeepsTheLastEventsOrderedByTheStartOfTheirWait()
    {
        var t = new Timeline(3);
        string[] site = ["A", "N.T::M", "F.cs:7"];
        for (int i = 0; i < 5; i++) // the fifth waited longest: it began first of the last three
            t.Add(site, i == 4 ? "worker" : null, Event(10 + i, (i == 4 ? 100 : 200 + i) * Ms, 300 * Ms, (301 + i) * Ms));
        JsonNode j = Json(t, 100 * Ms);
        Assert.Equal(3, (int)j["capacity"]!);
        Assert.Equal(5, (long)j["added"]!);
        var events = j["events"]!.AsArray();
        Assert.Equal(new[] { 14, 12, 13 }, events.Select(e => (int)e!["thread"]!).ToArray());
        Assert.Equal("worker", (string?)events[0]!["thread_name"]);
        Assert.Null(events[1]!["thread_name"]);
        Assert.Equal(0.0, (double)events[0]!["wait_from_ms"]!);
        Assert.Equal(200.0, (double)events[0]!["acquired_ms"]!);
        Assert.Equal(205.0, (double)events[0]!["released_ms"]!);
        Assert.Equal("N.T::M", (string?)events[2]!["method"]);
        Assert.Equal("F.cs:7", (string?)events[2]!["location"]);
        Assert.Empty(events[2]!["behind"]!.AsArray());
    }

    [Fact]
    public void AnEmptyOrOffTimelineHasNoEvents()
    {
        Assert.Equal("{\"capacity\":0,\"added\":0,\"events\":[]}", Json(null, 0).ToJsonString());
        Assert.Equal("{\"capacity\":5,\"added\":0,\"events\":[]}", Json(new Timeline(5), 0).ToJsonString());
    }

    [Fact]
    public void AWaitLinksToTheHoldsItWaitedBehindLongestFirstAndItsHolderHasItsHoldEvent()
    {
        var (c, t) = Made(4);
        object gate = new();
        ThreadRecord w = c.Thread();
        w.BeginWait(3, gate, Frame.Exclusive);
        long began = w.WaitingSince;
        var h1 = new ThreadRecord(4) { ThreadId = 501 };
        var h2 = new ThreadRecord(4) { ThreadId = 502 };
        Blame.Released(c, h1, gate, 0, Frame.Exclusive, began - 5 * Ms, began + 10 * Ms); // 10 ms of the wait
        Blame.Released(c, h2, gate, 1, Frame.Exclusive, began + 10 * Ms, began + 40 * Ms); // 30 ms
        c.Released(h2, CollectorTests.F(1, began + 10 * Ms, 0), began + 40 * Ms); // h2's own slow hold: its event
        w.Push(gate, 3, began + 40 * Ms, 40 * Ms, true, Frame.Exclusive);
        c.Released(w, w.Remove(w.Find(gate, Frame.Exclusive)), began + 42 * Ms);

        var events = Json(t, began - 10 * Ms)["events"]!.AsArray();
        Assert.Equal(2, events.Count);
        JsonNode hold = events[1]!, wait = events[0]!;
        Assert.Equal(502, (int)hold["thread"]!);
        Assert.Equal(20.0, (double)hold["acquired_ms"]!);
        Assert.Equal(50.0, (double)hold["released_ms"]!);
        Assert.Equal(Environment.CurrentManagedThreadId, (int)wait["thread"]!);
        Assert.Equal(10.0, (double)wait["wait_from_ms"]!);
        Assert.Equal(50.0, (double)wait["acquired_ms"]!);
        Assert.Equal(52.0, (double)wait["released_ms"]!);
        Assert.Equal("[{\"thread\":502,\"hold_from_ms\":20},{\"thread\":501,\"hold_from_ms\":5}]", wait["behind"]!.ToJsonString());
    }

    [Fact]
    public void AWaitNoHolderToldLinksToTheHoldFoundAsItBegan()
    {
        var (c, t) = Made(2);
        object gate = new();
        ThreadRecord w = c.Thread();
        w.FoundThread = 77;
        w.FoundFrom = 3 * Ms;
        w.BeginWait(1, gate, Frame.Exclusive);
        long began = w.WaitingSince;
        w.Push(gate, 1, began + 5 * Ms, 5 * Ms, true, Frame.Exclusive);
        c.Released(w, w.Remove(w.Find(gate, Frame.Exclusive)), began + 6 * Ms);
        var e = Json(t, 0)["events"]![0]!;
        Assert.Equal("[{\"thread\":77,\"hold_from_ms\":3}]", e["behind"]!.ToJsonString());
    }

    [Fact]
    public void AFailedTryIsAWaitThatDidNotAcquire()
    {
        var (c, t) = Made(2);
        long before = Clock.Ticks();
        c.Failed(c.Thread(), 1, 7 * Ms, null, false);
        var e = Json(t, 0)["events"]![0]!;
        Assert.False((bool)e["acquired"]!);
        Assert.Null(e["released_ms"]);
        double wait = (double)e["acquired_ms"]! - (double)e["wait_from_ms"]!;
        Assert.InRange(wait, 6.999, 7.001);
        Assert.True((double)e["acquired_ms"]! >= before / 1e6);
    }

    [Fact]
    public void AReportWithATimelineValidatesAgainstTheSchema()
    {
        var (c, t) = Made(2);
        t.Add(["A", "N.T::M", "F.cs:7"], "pool \"1\"", Event(3, 2 * Ms, 5 * Ms, 9 * Ms));
        c.Failed(c.Thread(), 0, 2 * Ms, null, false);
        string json = Report.Format(new ProcessInfo { Name = "x" }, [], 0, null, t, 0, 1);
        JsonTests.Validate(json);
        Assert.Equal(2, JsonNode.Parse(json)!["timeline"]!["events"]!.AsArray().Count);
    }

    [Theory]
    [InlineData(null, 10000, null)]
    [InlineData("0", 0, null)]
    [InlineData("50", 50, null)]
    [InlineData("1000001", 10000, "LockTime: warning: LOCKTIME_TIMELINE=\"1000001\" is not a whole number from 0 to 1000000; using 10000")]
    [InlineData("lots", 10000, "LockTime: warning: LOCKTIME_TIMELINE=\"lots\" is not a whole number from 0 to 1000000; using 10000")]
    public void TimelineTakesANumberOfEvents(string? value, int events, string? warning)
    {
        var s = new Settings();
        s.ParseTimeline(value);
        Assert.Equal(events, s.Timeline);
        Assert.Equal(warning == null ? [] : new[] { warning }, s.Warnings.ToArray());
    }
}
