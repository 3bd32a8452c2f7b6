// SummaryTests.cs - the exit summary: totals, the order of the sites, aligned columns, the row limit.
using LockTime.Runtime;
using Xunit;

namespace LockTime.Runtime.Tests;

public class SummaryTests
{
    private static List<SiteTotals> Sites()
    {
        var sites = new List<SiteTotals>
        {
            JsonTests.Site("App", "App.Program::Main", "Program.cs:9", "/a/Program.cs", 9, "Monitor.Enter", [1_000_000, 2_000_000], [0, 0]),
            JsonTests.Site("Lib", "Lib.Cache::Get", "Cache.cs:120", "/l/Cache.cs", 120, "Monitor.Enter",
                           [50_000_000], [45_000_000], contended: 1),
            JsonTests.Site("Lib", "Lib.Cache::<Refresh>b__4_0", "IL_001c", "", 0, "Lock.EnterScope", [30_000_000, 30_000_000, 30_000_000], [0, 0, 0]),
            JsonTests.Site("App", "App.Program::Poll", "Program.cs:30", "/a/Program.cs", 30, "Monitor.TryEnter", [], [], failed: 4),
        };
        sites[1].BlamedNs = 12_500_000; // Cache::Get made others wait 12.5 ms
        sites.Sort(SiteTotals.Compare);
        return sites;
    }

    [Fact]
    public void SitesAreOrderedByTotalWaitThenTotalHold()
    {
        var order = Sites().Select(s => s.Method).ToArray();
        Assert.Equal(new[] { "Lib.Cache::Get", "Lib.Cache::<Refresh>b__4_0", "App.Program::Main", "App.Program::Poll" }, order);
    }

    [Fact]
    public void TheHeaderHasTheTotals()
    {
        var lines = Summary.Format(Sites(), 10, 0, null);
        Assert.Equal("LockTime: summary: 4 sites in 2 assemblies; 6 acquisitions, 1 contended, 4 failed tries; " +
                     "wait 45.000 ms, hold 143.000 ms", lines[0]);
        Assert.Equal("LockTime: top 4 sites by total wait, then total hold (times in ms):", lines[1]);
        Assert.EndsWith("; 3 lines dropped (queue full)", Summary.Format(Sites(), 10, 3, null)[0]);
    }

    [Fact]
    public void ColumnsAreAligned()
    {
        var lines = Summary.Format(Sites(), 10, 0, null);
        var table = lines.Skip(2).ToArray();
        Assert.Equal(5, table.Length); // column names and four sites
        Assert.Equal("LockTime:   method                      location       kind              acquired  contended  failed  wait total  wait max  wait p99  hold total  hold max  hold p99  made others wait",
                     table[0]);
        Assert.Equal("LockTime:   Lib.Cache::Get              Cache.cs:120   Monitor.Enter            1          1       0      45.000    45.000    45.000      50.000    50.000    50.000            12.500",
                     table[1]);
        // Every number column ends where its name ends; every text column starts where its name starts.
        foreach (var name in new[] { "acquired", "contended", "failed", "wait total", "wait max", "wait p99", "hold total", "hold max", "hold p99", "made others wait" })
        {
            int end = table[0].IndexOf(name, StringComparison.Ordinal) + name.Length;
            foreach (var row in table.Skip(1))
                Assert.True(row[end - 1] != ' ' && (end == row.Length || row[end] == ' '), $"{name} not right-aligned in: {row}");
        }
        foreach (var name in new[] { "location", "kind" })
        {
            int start = table[0].IndexOf(name, StringComparison.Ordinal);
            foreach (var row in table.Skip(1))
                Assert.True(row[start] != ' ' && row[start - 1] == ' ', $"{name} not left-aligned in: {row}");
        }
    }

    [Fact]
    public void RowsAreLimited()
    {
        var lines = Summary.Format(Sites(), 2, 0, null);
        Assert.Equal(2 + 1 + 2, lines.Length);
        Assert.Equal("LockTime: top 2 sites by total wait, then total hold (times in ms):", lines[1]);
        Assert.Contains("Lib.Cache::<Refresh>b__4_0", lines[4]);
    }

    [Fact]
    public void HoldsInProgressFollowTheTableLongestFirst()
    {
        var sites = Sites();
        Assert.DoesNotContain(Summary.Format(sites, 10, 0, null), l => l.StartsWith("LockTime: held now"));
        sites[2].HeldNow = 1;
        sites[2].LongestHeldNs = 1_534_250_000;
        sites[3].HeldNow = 2;
        sites[3].LongestHeldNs = 2_000_000_000;
        var lines = Summary.Format(sites, 10, 0, null);
        int at = Array.IndexOf(lines, "LockTime: held now, as this summary was made (longest first):");
        Assert.Equal(2 + 5, at); // after the header, the table's title and its five lines
        Assert.Equal("LockTime:   App.Program::Poll at Program.cs:30: 2 holds, the longest 2000.000 ms so far", lines[at + 1]);
        Assert.Equal("LockTime:   App.Program::Main at Program.cs:9: 1 hold, the longest 1534.250 ms so far", lines[at + 2]);
        Assert.Equal(at + 3, lines.Length);
        var one = Summary.Format(sites, 1, 0, null); // one row: one table row, one hold
        Assert.Equal(6, one.Length);
        Assert.Equal(lines[at + 1], one[5]);
    }

    [Fact]
    public void NoSitesGivesTheHeaderOnly()
    {
        Assert.Equal(new[] { "LockTime: summary: 0 sites in 0 assemblies; 0 acquisitions, 0 contended, 0 failed tries; wait 0.000 ms, hold 0.000 ms" },
                     Summary.Format([], 10, 0, null));
    }

    [Fact]
    public void PotentialDeadlocksFollowTheTable()
    {
        var order = LockOrderTests.Transfers();
        var lines = Summary.Format(Sites(), 10, 0, order);
        Assert.Equal(new[]
        {
            "LockTime: 1 potential deadlock (locks taken in opposite orders; sites that held, then sites that acquired):",
            "LockTime:   Bank.cs:12 then Bank.cs:13 (Bank::Transfer), and in the other order at Bank.cs:12 then Bank.cs:13 (Bank::Transfer)",
        }, lines[^2..]);
        Assert.Equal(2 + 5 + 2, lines.Length); // header, title, table, cycles
        Assert.Equal(lines.Length - 2, Summary.Format(Sites(), 10, 0, new LockOrder()).Length); // none: nothing after the table
    }
}
