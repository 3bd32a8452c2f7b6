// RegistryTests.cs - two copies of the run-time (the template loaded twice) meet in one registry.
using System.Reflection;
using System.Runtime.Loader;
using System.Text.RegularExpressions;
using System.Text.Json.Nodes;
using Xunit;

namespace LockTime.Runtime.Tests;

/// <summary>
/// One copy of the run-time: the template assembly loaded from its bytes into a load context of its
/// own, with statics of its own, as each woven assembly has its merged copy. Driven by reflection.
/// </summary>
internal sealed class RuntimeCopy
{
    private readonly Assembly asm;

    public RuntimeCopy(string name)
    {
        var context = new AssemblyLoadContext(name);
        asm = context.LoadFromStream(new MemoryStream(File.ReadAllBytes(typeof(LockTime.Runtime.Histogram).Assembly.Location)));
        // the copy writes stderr through a stream of its own: here, to what the test sees as Console.Error now
        T("Consoles").GetField("ErrorOverride", BindingFlags.Static | BindingFlags.NonPublic)!.SetValue(null, Console.Error);
    }

    private Type T(string name) => asm.GetType("LockTime.Runtime." + name, throwOnError: true)!;

    public object? Call(string type, string method, params object?[] args) =>
        T(type).GetMethod(method, BindingFlags.Static | BindingFlags.NonPublic | BindingFlags.Public)!.Invoke(null, args);

    /// <summary>Starts the copy with sites "Asm.Type::M{i}" at "F{i}.cs:{i+1}" and the given settings; true when off.</summary>
    public bool Start(string assembly, int sites, string slot, string output, string summary = "10", string report = "",
                      string? threshold = null, string? metrics = null)
    {
        object table = Activator.CreateInstance(T("SiteTable"), nonPublic: true)!;
        T("SiteTable").GetMethod("Begin", BindingFlags.Instance | BindingFlags.NonPublic)!.Invoke(table, [assembly, sites]);
        for (int i = 0; i < sites; i++)
            T("SiteTable").GetMethod("Define", BindingFlags.Instance | BindingFlags.NonPublic)!
                .Invoke(table, [i, $"{assembly}.Type::M{i}", $"F{i}.cs:{i + 1}", $"/src/{assembly}/F{i}.cs", i + 1, "Monitor.Enter"]);
        object settings = Call("Settings", "Parse", null, threshold, output, summary, report, null, "1000", "stderr", "10", "")!;
        T("Settings").GetMethod("ParseMetrics", BindingFlags.Instance | BindingFlags.NonPublic)!.Invoke(settings, [metrics]);
        return (bool)Call("Runtime", "StartWith", table, settings, slot)!;
    }

    /// <summary>A static field of the copy's type <paramref name="type"/>.</summary>
    public object? Field(string type, string field) =>
        T(type).GetField(field, BindingFlags.Static | BindingFlags.NonPublic)!.GetValue(null);

    public long Ticks() => (long)Call("Clock", "Ticks")!;

    /// <summary>Takes and releases a lock at <paramref name="site"/>, held for about <paramref name="holdMs"/> (by the timestamps given).</summary>
    public void Lock(object lockObject, int site, double holdMs = 0, double waitMs = 0, bool contended = false)
    {
        long freq = (long)Call("Clock", "Frequency")!;
        long now = Ticks();
        long acquired = now - (long)(holdMs * freq / 1000), start = acquired - (long)(waitMs * freq / 1000);
        Call("Api", "Acquired", lockObject, site, start, acquired, contended);
        Call("Api", "Released", lockObject, Ticks());
    }

    public void Finish() => Call("Runtime", "Finish");

    /// <summary>Api.Off, read as a call-site stub reads it first: this starts the copy from the environment.</summary>
    public bool Off() => (bool)T("Api").GetField("Off", BindingFlags.Static | BindingFlags.NonPublic)!.GetValue(null)!;
}

public class RegistryTests : IDisposable
{
    private readonly string dir = Directory.CreateTempSubdirectory("lt-registry").FullName;
    private readonly string slot = "LockTime.Tests.Registry." + Guid.NewGuid().ToString("N");

    public void Dispose()
    {
        AppDomain.CurrentDomain.SetData(slot, null);
        Directory.Delete(dir, true);
    }

    [Fact]
    public void TwoCopiesGiveOneSummaryAndOneReport()
    {
        string sink = Path.Combine(dir, "locks.log"), report = Path.Combine(dir, "run-{pid}.json");
        RuntimeCopy app = new("app"), lib = new("lib");
        Assert.False(app.Start("App", 2, slot, sink, report: report, threshold: "0"));
        Assert.False(lib.Start("Lib", 1, slot, sink, report: "", threshold: "0"));
        object a = new(), b = new();
        for (int i = 0; i < 100; i++)
            app.Lock(a, 0, holdMs: 1);
        app.Lock(b, 1, holdMs: 2, waitMs: 40, contended: true);
        var threads = Enumerable.Range(0, 4).Select(_ => new Thread(() => { for (int i = 0; i < 250; i++) lib.Lock(b, 0, holdMs: 60); })).ToArray();
        foreach (var t in threads) t.Start();
        foreach (var t in threads) t.Join();
        app.Finish();
        lib.Finish(); // not the owner: writes nothing

        var lines = File.ReadAllLines(sink);
        var slow = lines.Where(l => l.Contains(" held ")).ToArray();
        Assert.All(slow, l => Assert.Matches(@"^LockTime: (App|Lib)\.Type::M\d held \d+\.\d{3} ms, waited \d+\.\d{3} ms at F\d\.cs:\d$", l));
        int head = Array.FindIndex(lines, l => l.StartsWith("LockTime: summary: "));
        Assert.True(head > 0, "no summary in:\n" + string.Join("\n", lines.TakeLast(10)));
        // threshold 0: every lock slow, its line written or counted in a roll-up of its copy, before the summary
        var rolled = lines.Take(head).Select(l => Regex.Match(l, @"^LockTime: ((?:App|Lib)\.Type::M\d) had (\d+) more slow locks? at F\d\.cs:\d in the last \d+\.\d s, max hold \d+\.\d{3} ms, max wait \d+\.\d{3} ms$"))
                          .Where(m => m.Success).ToArray();
        long Slow(string method) => slow.Count(l => l.StartsWith($"LockTime: {method} held ")) +
                                    rolled.Where(m => m.Groups[1].Value == method).Sum(m => long.Parse(m.Groups[2].Value));
        Assert.Equal(100, Slow("App.Type::M0"));
        Assert.Equal(1, Slow("App.Type::M1"));
        Assert.Equal(1000, Slow("Lib.Type::M0"));
        Assert.Equal(["App.Type::M0", "Lib.Type::M0"], rolled.Select(m => m.Groups[1].Value).Order()); // 100 and 1,000 at once: past the first 10 of each copy's site
        Assert.DoesNotContain(lines.Skip(head), l => l.Contains(" more slow lock"));
        Assert.Equal(1, lines.Count(l => l.StartsWith("LockTime: summary: ")));
        Assert.StartsWith("LockTime: summary: 3 sites in 2 assemblies; 1101 acquisitions, 1 contended, 0 failed tries; wait ", lines[head]);
        var after = lines.Skip(head + 6).ToArray(); // header, title, column names, three sites; then their top stacks
        Assert.StartsWith("LockTime: top stacks ", after[0]);
        Assert.All(after.Skip(1), l => Assert.Matches(@"^LockTime:   (App|Lib)\.Type::M\d at F\d\.cs:\d: \d+ slow (wait|hold)s?, \d+\.\d{3} ms, ", l));
        Assert.StartsWith("LockTime:   App.Type::M1 ", lines[head + 3]); // most wait first
        Assert.StartsWith("LockTime:   Lib.Type::M0 ", lines[head + 4]); // then most hold
        Assert.StartsWith("LockTime:   App.Type::M0 ", lines[head + 5]);

        var files = Directory.GetFiles(dir, "run-*.json");
        Assert.Equal(new[] { Path.Combine(dir, $"run-{Environment.ProcessId}.json") }, files);
        string json = File.ReadAllText(files[0]);
        JsonTests.Validate(json);
        var sites = JsonNode.Parse(json)!["sites"]!.AsArray();
        Assert.Equal(new[] { "App", "Lib", "App" }, sites.Select(s => (string)s!["assembly"]!).ToArray());
        Assert.Equal(1000, (long)sites[1]!["acquisitions"]!);
        Assert.True((double)sites[1]!["hold_ms"]!["max"]! >= 60);
        Assert.True((double)sites[0]!["wait_ms"]!["max"]! >= 40);
        Assert.Equal(1, (long)sites[0]!["contended"]!);
        Assert.Equal(Environment.ProcessId, (int)JsonNode.Parse(json)!["process"]!["pid"]!);
    }

    [Fact]
    public void ACopyJoiningAnOwnerWithoutARecordQueueQueuesEntries()
    {
        // an owner of a LockTime before entry 8: its registry ends at entry 7, its writer takes entries only
        string sink = Path.Combine(dir, "locks.log");
        RuntimeCopy owner = new("older-owner"), copy = new("newer-copy");
        Assert.False(owner.Start("Old", 1, slot, sink, threshold: "0"));
        var full = (object[])AppDomain.CurrentDomain.GetData(slot)!;
        Assert.Equal(Registry.FullLength, full.Length);
        AppDomain.CurrentDomain.SetData(slot, full[..8]);
        Assert.False(copy.Start("New", 1, slot, sink, threshold: "0"));
        Assert.Null(copy.Field("Runtime", "Current")!.GetType().GetField("Records", BindingFlags.Instance | BindingFlags.NonPublic)!
                        .GetValue(copy.Field("Runtime", "Current")));
        Assert.Null(copy.Field("Runtime", "Current")!.GetType().GetField("Limit", BindingFlags.Instance | BindingFlags.NonPublic)!
                        .GetValue(copy.Field("Runtime", "Current"))); // no entry 11, nothing would roll up what it held back: every line
        owner.Lock(new object(), 0, holdMs: 1);
        copy.Lock(new object(), 0, holdMs: 2);
        owner.Finish();
        var slow = File.ReadAllLines(sink).Where(l => l.Contains(" held ")).ToArray();
        Assert.Equal(2, slow.Length);
        Assert.Matches(@"^LockTime: Old\.Type::M0 held \d+\.\d{3} ms, waited 0\.000 ms at F0\.cs:1$", slow[0]); // 1 ms and the call's own time
        Assert.Matches(@"^LockTime: New\.Type::M0 held \d+\.\d{3} ms, waited 0\.000 ms at F0\.cs:1$", slow[1]);
    }

    [Fact]
    public void NoCopyRecordsTheLocksOfTheExitsWriting()
    {
        // A woven framework's copy (Mono's mscorlib) times the console's lock that the owner's exit takes
        // to write the summary: recorded, at threshold 0 each gave a line that the exit wrote in turn.
        string sink = Path.Combine(dir, "locks.log");
        RuntimeCopy app = new("app"), framework = new("framework");
        Assert.False(app.Start("App", 1, slot, sink, threshold: "0"));
        Assert.False(framework.Start("Framework", 1, slot, sink, threshold: "0"));
        object console = new();
        framework.Lock(console, 0); // the framework copy's record of this thread, made before the exit
        app.Finish();               // the owner's exit: this thread writes for the run-time now
        framework.Lock(console, 0); // a lock that writing takes
        object copy = framework.Field("Runtime", "Current")!;
        var merged = (Array)copy.GetType().GetMethod("Merge", BindingFlags.Instance | BindingFlags.NonPublic)!.Invoke(copy, null)!;
        object site = merged.GetValue(0)!;
        Assert.Equal(1L, site.GetType().GetField("Acquisitions", BindingFlags.Instance | BindingFlags.NonPublic)!.GetValue(site));
    }

    [Fact]
    public void AVersionMismatchWarnsOnceAndTheCopiesOfThisVersionMeetBesideIt()
    {
        AppDomain.CurrentDomain.SetData(slot, new object[] { 2, "from a later LockTime" });
        using var err = new StderrCapture();
        {
            string sink = Path.Combine(dir, "own.log");
            RuntimeCopy a = new("old-a"), b = new("old-b");
            Assert.False(a.Start("OldA", 1, slot, sink));
            Assert.False(b.Start("OldB", 1, slot, sink));
            a.Lock(new object(), 0);
            b.Lock(new object(), 0);
            a.Finish();
            Assert.Equal("LockTime: warning: another LockTime run-time in this process uses registry version 2 (this one: version 1); " +
                         "the assemblies of version 1 give a separate summary and report\n", err.Text);
            Assert.StartsWith("LockTime: summary: 2 sites in 2 assemblies; 2 acquisitions,", File.ReadAllLines(sink)[0]);
            Assert.Equal(2, ((object[])AppDomain.CurrentDomain.GetData(slot)!)[0]); // the other version's slot is left alone
            Assert.Equal(1, ((object[])AppDomain.CurrentDomain.GetData(slot + ".v1")!)[0]);
        }
        AppDomain.CurrentDomain.SetData(slot + ".v1", null);
    }

    [Fact]
    public void CopiesPrintEachWarningOnce()
    {
        using var err = new StderrCapture();
        {
            string sink = Path.Combine(dir, "w.log");
            var owner = new RuntimeCopy("w1");
            Assert.False(owner.Start("W1", 1, slot, sink, threshold: "abc"));
            Assert.False(new RuntimeCopy("w2").Start("W2", 1, slot, sink, threshold: "abc"));
            owner.Finish(); // before the folder goes: the summary at exit would find no folder
            Assert.Equal("LockTime: warning: LOCKTIME_THRESHOLD_MS=\"abc\" is not a number from 0 to 1000000000000; using 1000\n", err.Text);
        }
    }

    [Fact]
    public void TheWaitForRoomAsksEveryCopyWhetherTheThreadHoldsItsLock()
    {
        RuntimeCopy app = new("app"), lib = new("lib");
        Assert.False(app.Start("App", 1, slot, "stderr", summary: "0"));
        Assert.False(lib.Start("Lib", 1, slot, "stderr", summary: "0"));
        var holding = (List<Func<bool>>)((object[])AppDomain.CurrentDomain.GetData(slot)!)[14];
        bool[] Ask() { lock (holding) return holding.Select(h => h()).ToArray(); }
        Assert.Equal([false, false], Ask());
        object o = new();
        long now = lib.Ticks();
        lib.Call("Api", "Acquired", o, 0, now, now, false); // the library's lock, held by this thread
        Assert.Equal([false, true], Ask());
        bool[] other = [];
        var t = new Thread(() => other = Ask());
        t.Start();
        t.Join();
        Assert.Equal([false, false], other);                // another thread holds none
        lib.Call("Api", "Released", o, lib.Ticks());
        app.Call("Api", "Acquired", o, 0, now, now, false);
        Assert.Equal([true, false], Ask());
        app.Call("Api", "Released", o, app.Ticks());
        Assert.Equal([false, false], Ask());
    }

    [Fact]
    public void ACopyThatJoinsAfterTheListWasReadIsInTheNextRead()
    {
        var finders = new List<Func<object, string[]?>> { _ => null };
        Delegate[]? items = null;
        Delegate[] first = Registry.Items(finders, ref items);
        Assert.Same(finders[0], Assert.Single(first));
        Assert.Same(first, Registry.Items(finders, ref items)); // no copy joined: no new array, no lock
        lock (finders)
            finders.Add(_ => ["Lib", "L::M", "L.cs:1"]);
        Delegate[] second = Registry.Items(finders, ref items);
        Assert.Equal(new Delegate[] { finders[0], finders[1] }, second);
    }

    [Fact]
    public void ReadingOffStartsTheCopyFromTheEnvironment()
    {
        string? disabled = Environment.GetEnvironmentVariable("LOCKTIME_DISABLED");
        string? summary = Environment.GetEnvironmentVariable("LOCKTIME_SUMMARY");
        object? slotBefore = AppDomain.CurrentDomain.GetData(LockTime.Runtime.Registry.Slot);
        try
        {
            Environment.SetEnvironmentVariable("LOCKTIME_SUMMARY", "0"); // no summary from these copies at the test host's exit
            Environment.SetEnvironmentVariable("LOCKTIME_DISABLED", "Yes");
            AppDomain.CurrentDomain.SetData(LockTime.Runtime.Registry.Slot, null);
            Assert.True(new RuntimeCopy("env-off").Off());
            Assert.Null(AppDomain.CurrentDomain.GetData(LockTime.Runtime.Registry.Slot)); // disabled: nothing joined
            Environment.SetEnvironmentVariable("LOCKTIME_DISABLED", null);
            var on = new RuntimeCopy("env-on");
            Assert.False(on.Off());
            var registry = Assert.IsType<object[]>(AppDomain.CurrentDomain.GetData(LockTime.Runtime.Registry.Slot));
            Assert.Equal(1, registry[0]);
            on.Call("Api", "Released", new object(), on.Ticks()); // no site table (the template's is empty), no frame: nothing happens
            on.Call("Api", "NotAcquired", 5, 0L, 10L); // an id outside the table: ignored, never thrown
        }
        finally
        {
            Environment.SetEnvironmentVariable("LOCKTIME_DISABLED", disabled);
            Environment.SetEnvironmentVariable("LOCKTIME_SUMMARY", summary);
            AppDomain.CurrentDomain.SetData(LockTime.Runtime.Registry.Slot, slotBefore);
        }
    }

    [Fact]
    public void SummaryZeroPrintsNothingAndDisabledStartsNothing()
    {
        string sink = Path.Combine(dir, "none.log");
        var copy = new RuntimeCopy("quiet");
        Assert.False(copy.Start("Quiet", 1, slot, sink, summary: "0"));
        copy.Lock(new object(), 0);
        copy.Finish();
        Assert.False(File.Exists(sink));

        var off = new RuntimeCopy("off");
        object settings = off.Call("Settings", "Parse", "yes", null, null, null, null, null, "1", "stderr", "10", "")!;
        Assert.True((bool)off.Call("Runtime", "StartWith", null, settings, slot + ".off")!); // no sites needed: nothing starts
        Assert.Null(AppDomain.CurrentDomain.GetData(slot + ".off"));
    }
}
