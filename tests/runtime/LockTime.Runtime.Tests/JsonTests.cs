// JsonTests.cs - the JSON writer's escaping, and the report against docs/report-format.schema.json.
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using Json.Schema;
using LockTime.Runtime;
using Xunit;

namespace LockTime.Runtime.Tests;

public class JsonTests
{
    private static string Quote(string? s)
    {
        var sb = new StringBuilder();
        LockTime.Runtime.Json.String(sb, s);
        return sb.ToString();
    }

    [Theory]
    [InlineData("Shop.Inventory::Reserve")]
    [InlineData("Ns.<>c__DisplayClass0_0::<Main>b__0")]
    [InlineData("Program::<Main>g__Local|0_0")]
    [InlineData("VB._Closure$__::_Lambda$__3-0")]
    [InlineData("quote \" backslash \\ slash /")]
    [InlineData("C:\\src\\app\\Program.cs")]
    [InlineData("tab\tnewline\ncr\rnul\0bell\u0007 esc\u001b del\u007f")]
    [InlineData("line sep \u2028 para sep \u2029")]
    [InlineData("Ünïcödé 日本語 😀")]
    [InlineData("")]
    public void StringsRoundTripThroughAJsonParser(string s)
    {
        string json = Quote(s);
        Assert.Equal(s, JsonSerializer.Deserialize<string>(json));
        Assert.DoesNotContain(json, c => c < ' '); // control characters are escaped
    }

    [Fact]
    public void EscapesAreTheShortFormsWhereJsonHasThem()
    {
        Assert.Equal("\"a\\\"b\\\\c\\n\\r\\t\\b\\f\\u0001\\u2028\"", Quote("a\"b\\c\n\r\t\b\f\u0001\u2028"));
        Assert.Equal("null", Quote(null));
    }

    [Fact]
    public void UnpairedSurrogatesAreEscapedSoTheFileStaysUtf8()
    {
        string json = Quote("a\ud800b\udc00c");
        Assert.Equal("\"a\\ud800b\\udc00c\"", json);
        string pair = Quote("\ud83d\ude00");
        Assert.Equal("\"\ud83d\ude00\"", pair); // a pair is one character, kept as is
    }

    [Fact]
    public void MillisecondsKeepNanoseconds()
    {
        var sb = new StringBuilder();
        LockTime.Runtime.Json.Ms(sb, 1);
        sb.Append(' ');
        LockTime.Runtime.Json.Ms(sb, 52_114_003);
        sb.Append(' ');
        LockTime.Runtime.Json.Ms(sb, 0);
        Assert.Equal("0.000001 52.114003 0", sb.ToString());
    }

    internal static SiteTotals Site(string assembly, string method, string location, string file, int line, string kind,
                                    long[] holdsNs, long[] waitsNs, long contended = 0, long failed = 0)
    {
        var t = new SiteTotals { Assembly = assembly, Method = method, Location = location, File = file, Line = line, Kind = kind };
        foreach (var h in holdsNs) t.Stats.Hold.Record(h);
        foreach (var w in waitsNs) t.Stats.Wait.Record(w);
        t.Stats.Acquisitions = holdsNs.Length;
        t.Stats.Contended = contended;
        t.Stats.Failed = failed;
        return t;
    }

    internal static string SchemaPath => Path.Combine(AppContext.BaseDirectory, "report-format.schema.json");

    internal static void Validate(string reportJson)
    {
        var schema = JsonSchema.FromFile(SchemaPath);
        var result = schema.Evaluate(JsonNode.Parse(reportJson), new EvaluationOptions { OutputFormat = OutputFormat.List });
        Assert.True(result.IsValid, "report does not match the schema:\n" + string.Join("\n",
            (result.Details ?? []).Where(d => d.Errors != null).SelectMany(d => d.Errors!.Select(e => $"{d.InstanceLocation}: {e.Value}"))) +
            "\n" + reportJson);
    }

    [Fact]
    public void TheReportParsesAndValidatesAgainstTheSchema()
    {
        var sites = new List<SiteTotals>
        {
            Site("Shop", "Shop.Inventory::Reserve", "Inventory.cs:42", "/src/Shop/Inventory.cs", 42, "Monitor.Enter",
                 [60_000_000, 1_000], [45_000_000, 0], contended: 1),
            Site("Odd \"lib\"", "N.<>c::<Run>b__0_0 \\ \u0001", "IL_001c", "", 0, "Monitor.TryEnter", [], [], failed: 3),
        };
        var p = new ProcessInfo { Name = "app \"x\"", Pid = 1234, StartUtc = new DateTime(2026, 12, 1, 9, 30, 0, 5, DateTimeKind.Utc), DurationNs = 1_500_000_000 };
        string json = Report.Format(p, sites, 7, null, null, 0, 1);
        Validate(json);
        var doc = JsonNode.Parse(json)!;
        Assert.Equal("locktime-report", (string?)doc["format"]);
        Assert.Equal(3, (int)doc["version"]!);
        Assert.Equal("app \"x\"", (string?)doc["process"]!["name"]);
        Assert.Equal(1234, (int)doc["process"]!["pid"]!);
        Assert.Equal("2026-12-01T09:30:00.005Z", (string?)doc["process"]!["start_utc"]);
        Assert.Equal(1500.0, (double)doc["process"]!["duration_ms"]!);
        Assert.Equal(7, (long)doc["dropped_lines"]!);
        var s0 = doc["sites"]![0]!;
        Assert.Equal("Inventory.cs:42", (string?)s0["location"]);
        Assert.Equal("/src/Shop/Inventory.cs", (string?)s0["file"]);
        Assert.Equal(42, (int)s0["line"]!);
        Assert.Equal(2, (long)s0["acquisitions"]!);
        Assert.Equal(1, (long)s0["contended"]!);
        Assert.Equal(60.001, (double)s0["hold_ms"]!["total"]!);
        Assert.Equal(60.0, (double)s0["hold_ms"]!["max"]!);
        Assert.Equal(45.0, (double)s0["wait_ms"]!["max"]!);
        var s1 = doc["sites"]![1]!;
        Assert.Equal("N.<>c::<Run>b__0_0 \\ \u0001", (string?)s1["method"]);
        Assert.Null(s1["file"]);
        Assert.Null(s1["line"]);
        Assert.Equal(3, (long)s1["failed"]!);
        Assert.Equal(0.0, (double)s1["hold_ms"]!["p99"]!);
    }

    /// <summary>
    /// What <see cref="SiteTable.Within"/> says of a site goes through the copies' rows into the report's
    /// <c>within</c>: a lambda (with and without its line) and a local function with their enclosing method,
    /// null for a method the user wrote.
    /// </summary>
    [Fact]
    public void TheReportSaysWhichLambdaOrLocalFunctionASiteIsIn()
    {
        var table = new SiteTable();
        table.Begin("App", 4);
        table.Define(0, "App.P::Main (lambda at P.cs:9)", "P.cs:10", "/src/P.cs", 10, "Monitor.Enter");
        table.Within(0, "lambda", "App.P::Main", "P.cs:9");
        table.Define(1, "App.P::Main (lambda)", "IL_0004", "", 0, "Monitor.Enter");
        table.Within(1, "lambda", "App.P::Main", "");
        table.Define(2, "App.P::Main > Work", "P.cs:14", "/src/P.cs", 14, "Monitor.Enter");
        table.Within(2, "local function", "App.P::Main", "Work");
        table.Define(3, "App.P::Run", "P.cs:20", "/src/P.cs", 20, "Monitor.Enter");
        table.Within(9, "lambda", "App.P::Run", "P.cs:1");
        var sites = Enumerable.Range(0, 4).Select(i => SiteTotals.FromRow(SiteTotals.ToRow(table, i, new SiteStats(), 0, 0))!).ToList();
        string json = Report.Format(new ProcessInfo { Name = "x" }, sites, 0, null, null, 0, 1);
        Validate(json);
        var got = JsonNode.Parse(json)!["sites"]!.AsArray().Select(s => s!["within"]?.ToJsonString() ?? "null").ToList();
        Assert.Equal(new[] {
            "{\"kind\":\"lambda\",\"method\":\"App.P::Main\",\"location\":\"P.cs:9\"}",
            "{\"kind\":\"lambda\",\"method\":\"App.P::Main\",\"location\":null}",
            "{\"kind\":\"local function\",\"method\":\"App.P::Main\",\"name\":\"Work\"}",
            "null" }, got);
    }

    /// <summary>
    /// Every value falls in one listed bucket [upper - P/100, upper) (P the smallest power of ten at or
    /// above upper; [0, 0.0001) for the values under 100 ns), the buckets ascend and count every value.
    /// </summary>
    [Theory]
    [InlineData(new long[] { 60_000_000, 1_000, 999, 0, 99, 100, 1_000_000_000_000, 5_000_000_000_000, 60_000_000 })]
    [InlineData(new long[] { })]
    public void TheReportListsTheHistogramBuckets(long[] holdsNs)
    {
        string json = Report.Format(new ProcessInfo { Name = "x" }, [Site("a", "m", "l", "", 0, "k", holdsNs, [])], 0, null, null, 0, 1);
        Validate(json);
        var pairs = JsonNode.Parse(json)!["sites"]![0]!["hold_histogram"]!.AsArray()
            .Select(p => (upperNs: (long)Math.Round((double)p![0]! * 1e6), count: (long)p![1]!)).ToList();
        Assert.Equal(holdsNs.Length, pairs.Sum(p => p.count));
        for (int i = 1; i < pairs.Count; i++)
            Assert.True(pairs[i].upperNs > pairs[i - 1].upperNs);
        foreach (var p in pairs) {
            long pow = 1;
            while (pow < p.upperNs)
                pow *= 10;
            long lower = p.upperNs == 100 ? 0 : p.upperNs - pow / 100;
            bool last = p.upperNs == 1_000_000_000_000;
            long inside = holdsNs.Count(v => v >= lower && (v < p.upperNs || last));
            Assert.Equal(inside, p.count);
        }
        Assert.Empty(JsonNode.Parse(json)!["sites"]![0]!["wait_histogram"]!.AsArray());
    }

    [Fact]
    public void BlameAndPotentialDeadlocksAreInTheReport()
    {
        var order = LockOrderTests.Transfers();
        var waiter = Site("Shop", "Shop.Orders::Add", "Orders.cs:20", "/src/Shop/Orders.cs", 20, "Monitor.Enter", [10_000, 10_000], [130_754_000, 61_000_000], contended: 2);
        waiter.Stats.WaitedBehind(["Shop", "Shop.Inventory::Reserve", "Inventory.cs:42"], 61_000_000, 1);
        waiter.Stats.WaitedBehind(["Shop", "Shop.Inventory::Reserve", "Inventory.cs:42"], 130_754_000, 1);
        var holder = Site("Shop", "Shop.Inventory::Reserve", "Inventory.cs:42", "/src/Shop/Inventory.cs", 42, "Monitor.Enter", [200_000_000], [0]);
        var sites = new List<SiteTotals> { waiter, holder };
        SiteTotals.Blame(sites);
        string json = Report.Format(new ProcessInfo { Name = "shop" }, sites, 0, order, null, 0, 1);
        Validate(json);
        var doc = JsonNode.Parse(json)!;
        var behind = Assert.Single(doc["sites"]![0]!["waited_behind"]!.AsArray())!;
        Assert.Equal("Shop.Inventory::Reserve", (string?)behind["method"]);
        Assert.Equal("Inventory.cs:42", (string?)behind["location"]);
        Assert.Equal(191.754, (double)behind["wait_ms"]!);
        Assert.Equal(2, (long)behind["count"]!);
        Assert.Equal(0.0, (double)doc["sites"]![0]!["blamed_wait_ms"]!);
        Assert.Equal(191.754, (double)doc["sites"]![1]!["blamed_wait_ms"]!);
        Assert.Empty(doc["sites"]![1]!["waited_behind"]!.AsArray());
        var edges = Assert.Single(doc["lock_order_cycles"]!.AsArray())!["edges"]!.AsArray();
        Assert.Equal(2, edges.Count);
        Assert.All(edges, e =>
        {
            Assert.Equal("Bank::Transfer", (string?)e!["held"]!["method"]);
            Assert.Equal("Bank.cs:12", (string?)e!["held"]!["location"]);
            Assert.Equal("Bank.cs:13", (string?)e!["acquired"]!["location"]);
            Assert.Equal(Environment.CurrentManagedThreadId, (int)e!["thread"]!);
        });
        Assert.Equal(2, (long)doc["lock_order"]!["locks"]!);
        Assert.Equal(2, (long)doc["lock_order"]!["edges"]!);
        Assert.False((bool)doc["lock_order"]!["locks_cap_reached"]!);
    }

    [Fact]
    public void AnEmptyReportValidates()
    {
        string json = Report.Format(new ProcessInfo { Name = "x", StartUtc = DateTime.UnixEpoch }, [], 0, null, null, 0, 1);
        Validate(json);
        Assert.Empty(JsonNode.Parse(json)!["sites"]!.AsArray());
    }

    [Fact]
    public void TheSchemaRejectsWhatIsNotAReport()
    {
        var schema = JsonSchema.FromFile(SchemaPath);
        Assert.False(schema.Evaluate(JsonNode.Parse("{\"format\": \"locktime-report\", \"version\": 2}")).IsValid);
        string good = Report.Format(new ProcessInfo { Name = "x" }, [Site("a", "m", "l", "", 0, "k", [5], [0])], 0, null, null, 0, 1);
        Assert.False(schema.Evaluate(JsonNode.Parse(good.Replace("\"acquisitions\": 1", "\"acquisitions\": -1"))).IsValid);
        Assert.False(schema.Evaluate(JsonNode.Parse(good.Replace("\"p99\"", "\"p98\""))).IsValid);
    }

    [Fact]
    public void TheReportIsWrittenAtomically()
    {
        string dir = Directory.CreateTempSubdirectory("lt-report").FullName;
        try
        {
            string path = Path.Combine(dir, "run.json");
            Assert.Null(Report.Write(path, "first\n", 77));
            Assert.Null(Report.Write(path, "second\n", 77)); // over an existing report: rename over it
            Assert.Equal("second\n", File.ReadAllText(path));
            Assert.Equal(new[] { path }, Directory.GetFiles(dir)); // no temporary file left
            string bad = Path.Combine(dir, "missing", "run.json");
            string? error = Report.Write(bad, "x", 77);
            Assert.NotNull(error);
            Assert.Contains("DirectoryNotFoundException", error);
            Assert.Equal($"it is a folder: give the report's file name, as {Path.Combine(dir, "report.{pid}.json")}", Report.Write(dir, "x", 77));
            Assert.Equal(new[] { path }, Directory.GetFiles(dir)); // nothing written beside it
        }
        finally
        {
            Directory.Delete(dir, true);
        }
    }

    [Fact]
    public void AnEmptyFileOrALinkToOneIsWrittenIntoNotReplaced()
    {
        // A rename over a device made it a regular file (as root: /dev/null, /dev/full); no test touches
        // /dev itself: a link to /dev/null, a link to an empty file and an empty file stand for it.
        string dir = Directory.CreateTempSubdirectory("lt-report").FullName;
        try
        {
            string target = Path.Combine(dir, "target.json"), link = Path.Combine(dir, "link.json");
            File.WriteAllText(target, "");
            File.CreateSymbolicLink(link, target);
            Assert.Null(Report.Write(link, "new\n", 77));
            Assert.NotNull(new FileInfo(link).LinkTarget); // still a link
            Assert.Equal("new\n", File.ReadAllText(target));

            string toNull = Path.Combine(dir, "null.json");
            File.CreateSymbolicLink(toNull, "/dev/null");
            Assert.Null(Report.Write(toNull, "gone\n", 77));
            Assert.Equal("/dev/null", new FileInfo(toNull).LinkTarget);

            string empty = Path.Combine(dir, "empty.json");
            File.WriteAllText(empty, "");
            Assert.Null(Report.Write(empty, "into it\n", 77));
            Assert.Equal("into it\n", File.ReadAllText(empty));
            Assert.Equal(new[] { empty, link, toNull, target }.Order(), Directory.GetFiles(dir).Order()); // no temporary file
        }
        finally
        {
            Directory.Delete(dir, true);
        }
    }
}
