// MetricsTests.cs - the Meter "LockTime" read in process with a MeterListener, against the run-time's own snapshot.
using System.Diagnostics.Metrics;
using Xunit;

namespace LockTime.Runtime.Tests;

/// <summary>
/// A listener of every instrument of the meters named LockTime (each registry owner in this test process
/// has one): one collection at a time, the measurements of the sites whose method starts with a prefix.
/// </summary>
internal sealed class MetricsReader : IDisposable
{
    internal sealed record Point(Instrument Instrument, double Value, Dictionary<string, object?> Tags);

    private readonly MeterListener listener = new();
    private readonly List<Point> points = [];

    public MetricsReader()
    {
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == "LockTime")
                l.EnableMeasurementEvents(instrument);
        };
        listener.SetMeasurementEventCallback<long>((i, v, tags, _) => Add(i, v, tags));
        listener.SetMeasurementEventCallback<double>((i, v, tags, _) => Add(i, v, tags));
        listener.Start();
    }

    private void Add(Instrument i, double value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        var t = new Dictionary<string, object?>();
        foreach (var kv in tags)
            t[kv.Key] = kv.Value;
        lock (points)
            points.Add(new Point(i, value, t));
    }

    /// <summary>What the histograms recorded in the last collection: instrument name -> method -> the points, in order.</summary>
    public Dictionary<string, Dictionary<string, List<Point>>> Recorded = [];

    /// <summary>
    /// One collection: instrument name -> method -> point of the counters, for the methods starting with
    /// <paramref name="prefix"/>; the histograms' values, recorded as the counters are read, in <see cref="Recorded"/>.
    /// </summary>
    public Dictionary<string, Dictionary<string, Point>> Collect(string prefix)
    {
        lock (points)
            points.Clear();
        listener.RecordObservableInstruments();
        var result = new Dictionary<string, Dictionary<string, Point>>();
        Recorded = [];
        lock (points)
            foreach (var point in points)
                if (point.Tags.TryGetValue("code.function.name", out var f) && f is string method && method.StartsWith(prefix))
                {
                    string name = point.Instrument.Name;
                    if (point.Instrument is Histogram<double>)
                    {
                        if (!Recorded.TryGetValue(name, out var values))
                            Recorded[name] = values = [];
                        if (!values.TryGetValue(method, out var list))
                            values[method] = list = [];
                        list.Add(point);
                        continue;
                    }
                    if (!result.TryGetValue(name, out var byMethod))
                        result[name] = byMethod = [];
                    Assert.False(byMethod.ContainsKey(method), $"two series of {name} for {method}");
                    byMethod[method] = point;
                }
        return result;
    }

    /// <summary>Collects until the sites of <paramref name="prefix"/> appear (the owner's writer thread makes the Meter), 20 s at most.</summary>
    public Dictionary<string, Dictionary<string, Point>> First(string prefix)
    {
        for (int i = 0; i < 400; i++)
        {
            var c = Collect(prefix);
            if (c.Count > 0)
                return c;
            Thread.Sleep(50);
        }
        throw new Xunit.Sdk.XunitException($"no LockTime measurement for {prefix}* within 20 s");
    }

    public void Dispose() => listener.Dispose();
}

public class MetricsTests : IDisposable
{
    private readonly string dir = Directory.CreateTempSubdirectory("lt-metrics").FullName;
    private readonly string slot = "LockTime.Tests.Metrics." + Guid.NewGuid().ToString("N");

    public void Dispose()
    {
        AppDomain.CurrentDomain.SetData(slot, null);
        Directory.Delete(dir, true);
    }

    /// <summary>The run-time's own snapshot of every copy in the slot (the rows the summary reads): method -> row.</summary>
    private Dictionary<string, object[]> Snapshot()
    {
        var registry = (object[])AppDomain.CurrentDomain.GetData(slot)!;
        var sources = (List<Func<object[]>>)registry[2];
        Func<object[]>[] all;
        lock (sources)
            all = sources.ToArray();
        return all.SelectMany(s => s()).Cast<object[]>().ToDictionary(r => (string)r[1]);
    }

    [Fact]
    public void EachSiteOfEveryCopyIsASeriesWithTheSnapshotsValues()
    {
        string sink = Path.Combine(dir, "locks.log");
        RuntimeCopy app = new("metrics-app"), lib = new("metrics-lib");
        Assert.False(app.Start("TwoApp", 3, slot, sink, summary: "0"));
        Assert.False(lib.Start("TwoLib", 1, slot, sink, summary: "0"));
        object a = new(), b = new(), c = new();
        for (int i = 0; i < 10; i++)
            app.Lock(a, 0, holdMs: 2);
        for (int i = 0; i < 3; i++)
            app.Lock(b, 1, holdMs: 1, waitMs: 5, contended: true);
        for (int i = 0; i < 7; i++)
            lib.Lock(c, 0, holdMs: 3);

        using var reader = new MetricsReader();
        var m = reader.First("Two");
        var rows = Snapshot();
        Assert.Equal(["TwoApp.Type::M0", "TwoApp.Type::M1", "TwoLib.Type::M0"], rows.Keys.Order());
        Assert.Equal(["locktime.acquisitions", "locktime.contentions", "locktime.hold.time", "locktime.wait.time"], m.Keys.Order());
        foreach (var (name, byMethod) in m)
            Assert.Equal(rows.Keys.Order(), byMethod.Keys.Order()); // site 2 of TwoApp took no lock: no series
        foreach (var (method, row) in rows)
        {
            long[] counts = (long[])row[6], wait = (long[])row[7], hold = (long[])row[8]; // histograms: count, total (ns), ...
            Assert.Equal(counts[0], m["locktime.acquisitions"][method].Value);
            Assert.Equal(counts[1], m["locktime.contentions"][method].Value);
            Assert.Equal(wait[1] / 1e9, m["locktime.wait.time"][method].Value, 12);
            Assert.Equal(hold[1] / 1e9, m["locktime.hold.time"][method].Value, 12);
            var tags = m["locktime.acquisitions"][method].Tags;
            Assert.Equal(3, tags.Count);
            Assert.Equal(method, tags["code.function.name"]);
            Assert.Equal((string)row[3], tags["code.file.path"]);
            Assert.Equal((int)row[4], tags["code.line.number"]);
        }
        // What the locks were: exact counts, and the times the stub's timestamps give.
        Assert.Equal(10, m["locktime.acquisitions"]["TwoApp.Type::M0"].Value);
        Assert.Equal(3, m["locktime.contentions"]["TwoApp.Type::M1"].Value);
        Assert.Equal(0, m["locktime.contentions"]["TwoApp.Type::M0"].Value);
        Assert.Equal(7, m["locktime.acquisitions"]["TwoLib.Type::M0"].Value);
        Assert.InRange(m["locktime.wait.time"]["TwoApp.Type::M1"].Value, 0.0149, 0.0160);
        Assert.True(m["locktime.hold.time"]["TwoLib.Type::M0"].Value >= 0.0209); // and a little more: the time the test took to release
        Assert.Equal("/src/TwoLib/F0.cs", m["locktime.hold.time"]["TwoLib.Type::M0"].Tags["code.file.path"]);
        Assert.Equal(1, m["locktime.hold.time"]["TwoLib.Type::M0"].Tags["code.line.number"]);

        // One Meter for the two copies (its owner's), with the four observable counters and their units.
        var instruments = m.Values.SelectMany(byMethod => byMethod.Values).Select(p => p.Instrument).Distinct().ToArray();
        Assert.Equal(4, instruments.Length);
        Assert.Single(instruments.Select(i => i.Meter).Distinct());
        Assert.Equal([("locktime.acquisitions", "{acquisition}", typeof(ObservableCounter<long>)),
                      ("locktime.contentions", "{contention}", typeof(ObservableCounter<long>)),
                      ("locktime.hold.time", "s", typeof(ObservableCounter<double>)),
                      ("locktime.wait.time", "s", typeof(ObservableCounter<double>))],
                     instruments.Select(i => (i.Name, i.Unit, i.GetType())).OrderBy(x => x.Name));

        // Every collection reads a new snapshot.
        for (int i = 0; i < 5; i++)
            app.Lock(a, 0, holdMs: 2);
        m = reader.Collect("Two");
        Assert.Equal(15, m["locktime.acquisitions"]["TwoApp.Type::M0"].Value);
        Assert.Equal(((long[])Snapshot()["TwoApp.Type::M0"][8])[1] / 1e9, m["locktime.hold.time"]["TwoApp.Type::M0"].Value, 12);
        app.Finish();
    }

    [Fact]
    public void SeriesAreBoundedAndASiteKeepsItsOwn()
    {
        string sink = Path.Combine(dir, "cap.log");
        var copy = new RuntimeCopy("metrics-cap");
        Assert.False(copy.Start("MetCap", 3, slot, sink, summary: "0", metrics: "2"));
        object l = new();
        copy.Lock(l, 0, holdMs: 1);
        copy.Lock(l, 1, waitMs: 10, contended: true);
        copy.Lock(l, 2, waitMs: 20, contended: true);
        using var reader = new MetricsReader();
        var m = reader.First("MetCap");
        foreach (var byMethod in m.Values) // the two that waited most
            Assert.Equal(["MetCap.Type::M1", "MetCap.Type::M2"], byMethod.Keys.Order());

        copy.Lock(l, 0, waitMs: 100, contended: true); // now the most wait: still no room
        copy.Lock(l, 1);
        m = reader.Collect("MetCap");
        foreach (var byMethod in m.Values)
            Assert.Equal(["MetCap.Type::M1", "MetCap.Type::M2"], byMethod.Keys.Order());
        Assert.Equal(2, m["locktime.acquisitions"]["MetCap.Type::M1"].Value);
        copy.Finish();
    }

    /// <summary>The durations a histogram given as the run-time's data (count, total, max, low, buckets) holds, as its buckets' middles in seconds.</summary>
    private static List<double> Middles(long[] histogram)
    {
        var values = new List<double>();
        for (int b = 3; b < histogram.Length; b++)
        {
            int d = (b - 4) / 90, k = (b - 4) % 90;
            double ns = b == 3 ? 50 : (k + 10.5) * Math.Pow(10, d + 1);
            for (long i = 0; i < histogram[b]; i++)
                values.Add(ns / 1e9);
        }
        return values;
    }

    [Fact]
    public void HistogramsRecordEachAcquisitionOnceWithTheBoundariesAdvised()
    {
        string sink = Path.Combine(dir, "hist.log");
        var copy = new RuntimeCopy("metrics-hist");
        Assert.False(copy.Start("Hist", 1, slot, sink, summary: "0"));
        object l = new();
        double[] holdsMs = [0.5, 2, 3, 40];
        foreach (double ms in holdsMs)
            copy.Lock(l, 0, holdMs: ms);
        using var reader = new MetricsReader();
        reader.First("Hist");
        var points = reader.Recorded["locktime.hold.duration"]["Hist.Type::M0"];
        var hold = points.Select(p => p.Value).ToList();
        var wait = reader.Recorded["locktime.wait.duration"]["Hist.Type::M0"].Select(p => p.Value).ToList();
        var row = Snapshot()["Hist.Type::M0"];
        // each acquisition once, as the middle of its bucket of the run-time's histogram: within 5% of the hold
        Assert.Equal(Middles((long[])row[8]), hold.Order());
        Assert.Equal(Middles((long[])row[7]), wait.Order());
        Assert.Equal(4, hold.Count);
        foreach (var (recorded, ms) in hold.Order().Zip(holdsMs))
            Assert.InRange(recorded, ms / 1000 * 0.95, ms / 1000 * 1.05 + 0.005); // and the time the test took to release (the first: its calls compiled)
        Assert.All(wait, w => Assert.Equal(50e-9, w)); // uncontended: below 100 ns
        Assert.Equal("Hist.Type::M0", points[0].Tags["code.function.name"]);
        Assert.Equal(1, points[0].Tags["code.line.number"]);

        // seconds, with the boundaries 1, 2 and 5 per decade from 1 us to 10 s
        var histogram = (Histogram<double>)points[0].Instrument;
        Assert.Equal("s", histogram.Unit);
        double[] boundaries = Enumerable.Range(-6, 7).SelectMany(e => new[] { 1, 2, 5 }.Select(m => m * Math.Pow(10, e))).Append(10).ToArray();
        Assert.Equal(boundaries, histogram.Advice!.HistogramBucketBoundaries!, (a, b) => Math.Abs(a - b) <= 1e-12 * b);

        copy.Lock(l, 0, holdMs: 7);
        copy.Lock(l, 0, holdMs: 9);
        reader.Collect("Hist");
        var later = reader.Recorded["locktime.hold.duration"]["Hist.Type::M0"].Select(p => p.Value).Order().ToArray();
        Assert.Equal(2, later.Length); // only what came since
        Assert.InRange(later[1], 0.009 * 0.95, 0.009 * 1.05 + 0.005);
        reader.Collect("Hist");
        Assert.False(reader.Recorded.ContainsKey("locktime.hold.duration"));
        copy.Finish();
    }

    [Fact]
    public void ZeroSitesMakeNoMeter()
    {
        string sink = Path.Combine(dir, "none.log");
        var copy = new RuntimeCopy("metrics-none");
        Assert.False(copy.Start("MetNone", 1, slot, sink, summary: "0", threshold: "0", metrics: "0"));
        Thread.Sleep(TimeSpan.FromSeconds(Runtime.LateStartS + 0.2));
        copy.Lock(new object(), 0);
        // The writer thread makes the Meter (or not) before it writes the lines queued after the delay: once this
        // line is out, it is past that.
        for (int i = 0; i < 400 && !(File.Exists(sink) && File.ReadAllText(sink).Contains(" held ")); i++)
            Thread.Sleep(50);
        Assert.Contains(" held ", File.ReadAllText(sink));
        Assert.Null(copy.Field("Runtime", "meter"));
        using var reader = new MetricsReader();
        Assert.Empty(reader.Collect("MetNone"));
        copy.Finish();
    }
}
