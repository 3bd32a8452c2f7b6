// EventsTests.cs - the EventSource "LockTime": one per process, shared by the copies, an event per slow lock.
using System.Collections.Concurrent;
using System.Diagnostics.Tracing;
using Xunit;

namespace LockTime.Runtime.Tests;

public class EventsTests : IDisposable
{
    private readonly string dir = Directory.CreateTempSubdirectory("lt-events").FullName;
    private readonly string slot = "LockTime.Tests.Events." + Guid.NewGuid().ToString("N");

    public void Dispose()
    {
        AppDomain.CurrentDomain.SetData(slot, null);
        Directory.Delete(dir, true);
    }

    /// <summary>Takes the events of the EventSource named LockTime.</summary>
    private sealed class Listener : EventListener
    {
        public readonly ConcurrentQueue<EventWrittenEventArgs> Events = new();

        protected override void OnEventSourceCreated(EventSource source)
        {
            if (source.Name == "LockTime")
                EnableEvents(source, EventLevel.Informational);
        }

        protected override void OnEventWritten(EventWrittenEventArgs e) => Events.Enqueue(e);
    }

    /// <summary>
    /// The registry's entry 10 once the owner's run-time thread made the source and called every copy's join: it makes
    /// the source when the first line is queued (the caller's first slow lock, whose event comes before the source).
    /// </summary>
    private object[] Joined()
    {
        var events = (object[])((object[])AppDomain.CurrentDomain.GetData(slot)!)[10];
        for (int i = 0; i < 500 && (events[0] == null || ((System.Collections.ICollection)events[1]).Count > 0); i++)
            Thread.Sleep(10);
        Assert.NotNull(events[0]);
        Assert.Empty((System.Collections.ICollection)events[1]);
        return events;
    }

    [Fact]
    public void TwoCopiesGiveTheirSlowLocksThroughOneSource()
    {
        using var listener = new Listener();
        string sink = Path.Combine(dir, "locks.log");
        RuntimeCopy app = new("app"), lib = new("lib");
        // a threshold far above the "under the threshold" hold: a loaded machine may add milliseconds to it
        Assert.False(app.Start("App", 2, slot, sink, threshold: "50"));
        Assert.False(lib.Start("Lib", 1, slot, sink, threshold: "50"));
        app.Lock(new object(), 0, holdMs: 60); // the first line: the source is made for it
        var source = (EventSource)Joined()[0];
        Assert.Equal("LockTime", source.Name);
        // one in the process, though every test here has a registry of its own: a later owner finds it
        Assert.Same(source, Assert.Single(EventSource.GetSources(), s => s.Name == "LockTime"));
        app.Lock(new object(), 1, holdMs: 80, waitMs: 60, contended: true);
        app.Lock(new object(), 0, holdMs: 1); // under the threshold: no line, no event
        lib.Lock(new object(), 0, holdMs: 200);
        app.Finish();

        var slow = listener.Events.Where(e => ReferenceEquals(e.EventSource, source)).ToArray();
        Assert.Equal(new[] { "SlowLock", "SlowLock" }, slow.Select(e => e.EventName));
        Assert.All(slow, e => Assert.Equal(EventLevel.Informational, e.Level));
        var fields = slow.Select(e => e.PayloadNames!.Zip(e.Payload!).ToDictionary(p => p.First, p => p.Second)).ToArray();
        Assert.Equal(new object[] { "App", "App.Type::M1", "/src/App/F1.cs", 2, "F1.cs:2", "Monitor.Enter" },
                     new[] { "Assembly", "Method", "File", "Line", "Location", "Kind" }.Select(k => fields[0][k]));
        Assert.Equal(new object[] { "Lib", "Lib.Type::M0", "/src/Lib/F0.cs", 1, "F0.cs:1" },
                     new[] { "Assembly", "Method", "File", "Line", "Location" }.Select(k => fields[1][k]));
        // hold and wait: the lines' figures, in ns
        var lines = File.ReadAllLines(sink).Where(l => l.Contains(" held ")).Skip(1).ToArray();
        Assert.Equal(2, lines.Length);
        for (int i = 0; i < 2; i++)
            Assert.Contains($" held {(long)fields[i]["HoldNs"]! / 1e6:F3} ms, waited {(long)fields[i]["WaitNs"]! / 1e6:F3} ms at ", lines[i]);
        Assert.True((long)fields[0]["WaitNs"]! >= 60_000_000 && (long)fields[1]["HoldNs"]! >= 200_000_000);
        Assert.Equal("", fields[1]["HolderMethod"]);
    }

    /// <summary>A counting SemaphoreSlim's slow wait is an event too: its hold is not measured (HoldNs -2), as its line says.</summary>
    [Fact]
    public void ACountingSemaphoresSlowWaitIsAnEventWithoutAHold()
    {
        using var listener = new Listener();
        string sink = Path.Combine(dir, "locks.log");
        RuntimeCopy app = new("app");
        Assert.False(app.Start("App", 2, slot, sink, threshold: "50"));
        app.Lock(new object(), 0, holdMs: 60); // the first line: the source is made for it
        var source = (EventSource)Joined()[0];
        long freq = (long)app.Call("Clock", "Frequency")!, now = app.Ticks();
        app.Call("Api", "AcquiredSemaphore", new SemaphoreSlim(2, 2), 1, now - 80 * freq / 1000, now, true);
        app.Finish();

        var fields = Assert.Single(listener.Events.Where(e => ReferenceEquals(e.EventSource, source) && e.EventName == "SlowLock")
                                                  .Select(e => e.PayloadNames!.Zip(e.Payload!).ToDictionary(p => p.First, p => p.Second)),
                                   f => (string?)f["Method"] == "App.Type::M1");
        Assert.Equal(-2L, fields["HoldNs"]);
        string line = Assert.Single(File.ReadAllLines(sink), l => l.Contains("App.Type::M1 waited "));
        Assert.Contains($" waited {(long)fields["WaitNs"]! / 1e6:F3} ms at F1.cs:2 (hold not applicable)", line);
        Assert.True((long)fields["WaitNs"]! >= 80_000_000);
    }

    [Fact]
    public void APotentialDeadlockIsAnEventWithItsLine()
    {
        using var listener = new Listener();
        string sink = Path.Combine(dir, "locks.log");
        RuntimeCopy app = new("app");
        Assert.False(app.Start("App", 2, slot, sink));
        app.Lock(new object(), 0, holdMs: 1500); // the first line (over the 1 s threshold): the source is made for it
        var source = (EventSource)Joined()[0];
        object a = new(), b = new();
        long now = app.Ticks();
        foreach (var (first, second) in new[] { (a, b), (b, a) }) {
            app.Call("Api", "Acquired", first, 0, now, now, false);
            app.Call("Api", "Acquired", second, 1, now, now, false);
            app.Call("Api", "Released", second, app.Ticks());
            app.Call("Api", "Released", first, app.Ticks());
        }
        app.Finish();
        var cycles = listener.Events.Where(e => ReferenceEquals(e.EventSource, source)).ToArray();
        string line = Assert.Single(File.ReadAllLines(sink), l => l.StartsWith("LockTime: potential deadlock: "));
        var e = Assert.Single(cycles);
        Assert.Equal("PotentialDeadlock", e.EventName);
        Assert.Equal(EventLevel.Warning, e.Level);
        Assert.Equal(line, e.Payload![0]);
    }
}
