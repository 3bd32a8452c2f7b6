// SettingsTests.cs - LOCKTIME_* values over the baked defaults; each bad value gives one warning naming it.
using LockTime.Runtime;
using Xunit;

namespace LockTime.Runtime.Tests;

public class SettingsTests
{
    private static Settings Parse(string? disabled = null, string? threshold = null, string? output = null,
                                  string? summary = null, string? report = null, string? interval = null,
                                  string bakedThreshold = "1", string bakedOutput = "stderr", string bakedSummary = "10",
                                  string bakedReport = "") =>
        Settings.Parse(disabled, threshold, output, summary, report, interval, bakedThreshold, bakedOutput, bakedSummary, bakedReport);

    [Fact]
    public void UnsetGivesTheBakedDefaults()
    {
        var s = Parse(bakedThreshold: "2.5", bakedOutput: "StdOut", bakedSummary: "3", bakedReport: "run-{pid}.json");
        Assert.False(s.Disabled);
        Assert.Equal(2.5, s.ThresholdMs);
        Assert.Equal("stdout", s.Output);
        Assert.Equal(3, s.SummaryRows);
        Assert.Equal("run-{pid}.json", s.ReportPath);
        Assert.Equal("run-4242.json", s.ReportFile(4242));
        Assert.Equal(0, s.ReportIntervalS);
        Assert.Empty(s.Warnings);
    }

    [Theory]
    [InlineData("1", true)] [InlineData("true", true)] [InlineData("YES", true)] [InlineData(" On ", true)]
    [InlineData("0", false)] [InlineData("False", false)] [InlineData("no", false)] [InlineData("OFF", false)]
    [InlineData("", false)]
    public void SwitchesTakeEveryFormInAnyCase(string value, bool disabled)
    {
        var s = Parse(disabled: value);
        Assert.Equal(disabled, s.Disabled);
        Assert.Empty(s.Warnings);
    }

    [Fact]
    public void TimingOffFromTheEnvironmentReadsNothingElse()
    {
        string[] names = { "LOCKTIME_DISABLED", "LOCKTIME_THRESHOLD_MS", "LOCKTIME_SUMMARY", "LOCKTIME_REPORT_INTERVAL_S", "LOCKTIME_METRICS" };
        var before = names.Select(Environment.GetEnvironmentVariable).ToArray();
        try
        {
            Environment.SetEnvironmentVariable("LOCKTIME_DISABLED", "on");
            Environment.SetEnvironmentVariable("LOCKTIME_THRESHOLD_MS", "abc");
            Environment.SetEnvironmentVariable("LOCKTIME_SUMMARY", "-1");
            Environment.SetEnvironmentVariable("LOCKTIME_REPORT_INTERVAL_S", "5");
            Environment.SetEnvironmentVariable("LOCKTIME_METRICS", "x");
            var off = Settings.FromEnvironment();
            Assert.True(off.Disabled);
            Assert.Empty(off.Warnings); // their values were not looked at
            Assert.Equal(1, off.ThresholdMs);
            Environment.SetEnvironmentVariable("LOCKTIME_DISABLED", "0");
            var on = Settings.FromEnvironment();
            Assert.False(on.Disabled);
            Assert.Equal(4, on.Warnings.Count);
        }
        finally
        {
            for (int i = 0; i < names.Length; i++)
                Environment.SetEnvironmentVariable(names[i], before[i]);
        }
    }

    [Fact]
    public void VariablesOverrideTheBakedValues()
    {
        var s = Parse(threshold: "0", output: "/tmp/locks.log", summary: "0", report: "r.json", interval: "2.5",
                      bakedReport: "baked.json");
        Assert.Equal(0, s.ThresholdMs);
        Assert.Equal("/tmp/locks.log", s.Output);
        Assert.Equal(0, s.SummaryRows);
        Assert.Equal("r.json", s.ReportPath);
        Assert.Equal(2.5, s.ReportIntervalS);
        Assert.Empty(s.Warnings);
    }

    [Theory]
    [InlineData("maybe", null, null, null, "LockTime: warning: LOCKTIME_DISABLED=\"maybe\" is not 1/true/yes/on or 0/false/no/off; using 0 (timing on)")]
    [InlineData(null, "abc", null, null, "LockTime: warning: LOCKTIME_THRESHOLD_MS=\"abc\" is not a number from 0 to 1000000000000; using 1")]
    [InlineData(null, "-5", null, null, "LockTime: warning: LOCKTIME_THRESHOLD_MS=\"-5\" is not a number from 0 to 1000000000000; using 1")]
    [InlineData(null, "NaN", null, null, "LockTime: warning: LOCKTIME_THRESHOLD_MS=\"NaN\" is not a number from 0 to 1000000000000; using 1")]
    [InlineData(null, null, "abc", null, "LockTime: warning: LOCKTIME_SUMMARY=\"abc\" is not a whole number from 0 to 1000000; using 10")]
    [InlineData(null, null, "2.5", null, "LockTime: warning: LOCKTIME_SUMMARY=\"2.5\" is not a whole number from 0 to 1000000; using 10")]
    [InlineData(null, null, "-1", null, "LockTime: warning: LOCKTIME_SUMMARY=\"-1\" is not a whole number from 0 to 1000000; using 10")]
    [InlineData(null, null, null, "soon", "LockTime: warning: LOCKTIME_REPORT_INTERVAL_S=\"soon\" is not a number from 0 to 1000000000; using 0 (a report at exit only)")]
    public void EachBadValueWarnsOnceNamingTheVariableAndWhatIsUsed(string? disabled, string? threshold, string? summary,
                                                                      string? interval, string warning)
    {
        var s = Parse(disabled: disabled, threshold: threshold, summary: summary, interval: interval, report: "r.json");
        Assert.Equal(new[] { warning }, s.Warnings);
        Assert.False(s.Disabled);
        Assert.Equal(1, s.ThresholdMs);
        Assert.Equal(10, s.SummaryRows);
        Assert.Equal(0, s.ReportIntervalS);
    }

    [Fact]
    public void AnIntervalWithoutAReportWarns()
    {
        var s = Parse(interval: "5");
        Assert.Equal(new[] { "LockTime: warning: LOCKTIME_REPORT_INTERVAL_S=\"5\" without a report path (LOCKTIME_REPORT, or the build's LockTimeReport); using no report" },
                     s.Warnings);
        Assert.Equal(0, s.ReportIntervalS);
    }

    [Fact]
    public void ABadBakedValueWarnsAndFallsBackToTheBuiltInDefault()
    {
        var s = Parse(bakedThreshold: "x", bakedSummary: "-2");
        Assert.Equal(1, s.ThresholdMs);
        Assert.Equal(10, s.SummaryRows);
        Assert.Equal(new[]
        {
            "LockTime: warning: the baked threshold (--threshold-ms)=\"x\" is not a number from 0 to 1000000000000; using 1",
            "LockTime: warning: the baked summary rows (--summary)=\"-2\" is not a whole number from 0 to 1000000; using 10",
        }, s.Warnings);
    }

    [Fact]
    public void AVariableThatIsBadKeepsTheBakedValue()
    {
        var s = Parse(threshold: "1,5", bakedThreshold: "50");
        Assert.Equal(50, s.ThresholdMs);
        Assert.Equal(new[] { "LockTime: warning: LOCKTIME_THRESHOLD_MS=\"1,5\" is not a number from 0 to 1000000000000; using 50" }, s.Warnings);
    }

    [Theory]
    [InlineData(null, "1", true, null)]
    [InlineData("0", "1", false, null)]
    [InlineData("Off", "1", false, null)]
    [InlineData(" yes ", "0", true, null)]
    [InlineData(null, "false", false, null)]
    [InlineData("", "no", false, null)]
    [InlineData("sometimes", "1", true, "LockTime: warning: LOCKTIME_LOCK_ORDER=\"sometimes\" is not 1/true/yes/on or 0/false/no/off; using 1 (lock order on)")]
    [InlineData("2", "off", false, "LockTime: warning: LOCKTIME_LOCK_ORDER=\"2\" is not 1/true/yes/on or 0/false/no/off; using 0 (lock order off)")]
    [InlineData(null, "x", true, "LockTime: warning: the baked lock order (LockTimeLockOrder)=\"x\" is not 1/true/yes/on or 0/false/no/off; using 1 (lock order on)")]
    public void TheLockOrderIsASwitchOverItsBakedDefault(string? value, string baked, bool on, string? warning)
    {
        var s = Parse();
        s.ParseLockOrder(value, baked);
        Assert.Equal(on, s.LockOrder);
        if (warning == null)
            Assert.Empty(s.Warnings);
        else
            Assert.Equal([warning], s.Warnings);
    }

    [Theory]
    [InlineData(null, 20, null)]
    [InlineData("", 20, null)]
    [InlineData("0", 0, null)]
    [InlineData(" 5 ", 5, null)]
    [InlineData("1000", 1000, null)]
    [InlineData("1001", 20, "LockTime: warning: LOCKTIME_METRICS=\"1001\" is not a whole number from 0 to 1000; using 20")]
    [InlineData("on", 20, "LockTime: warning: LOCKTIME_METRICS=\"on\" is not a whole number from 0 to 1000; using 20")]
    [InlineData("2.5", 20, "LockTime: warning: LOCKTIME_METRICS=\"2.5\" is not a whole number from 0 to 1000; using 20")]
    public void MetricsTakeANumberOfSites(string? value, int sites, string? warning)
    {
        var s = Parse();
        s.ParseMetrics(value);
        Assert.Equal(sites, s.MetricsSites);
        if (warning == null)
            Assert.Empty(s.Warnings);
        else
            Assert.Equal([warning], s.Warnings);
    }

    [Theory]
    [InlineData(null, 32, null)]
    [InlineData("0", 0, null)]
    [InlineData("8", 8, null)]
    [InlineData("256", 256, null)]
    [InlineData("257", 32, "LockTime: warning: LOCKTIME_STACK_DEPTH=\"257\" is not a whole number from 0 to 256; using 32")]
    [InlineData("deep", 32, "LockTime: warning: LOCKTIME_STACK_DEPTH=\"deep\" is not a whole number from 0 to 256; using 32")]
    public void StackDepthTakesANumberOfFrames(string? value, int frames, string? warning)
    {
        var s = Parse();
        s.ParseStackDepth(value);
        Assert.Equal(frames, s.StackDepth);
        if (warning == null)
            Assert.Empty(s.Warnings);
        else
            Assert.Equal([warning], s.Warnings);
    }

    [Theory]
    [InlineData(null, "2", 2.0, null)]
    [InlineData("all", "2", double.PositiveInfinity, null)]
    [InlineData(" ALL ", "2", double.PositiveInfinity, null)]
    [InlineData("0", "2", 0.0, null)]
    [InlineData("0.5", "2", 0.5, null)]
    [InlineData("1e6", "2", 1e6, null)]
    [InlineData(null, "all", double.PositiveInfinity, null)]
    [InlineData("5", "all", 5.0, null)]
    [InlineData("lots", "2", 2.0, "LockTime: warning: LOCKTIME_LINES=\"lots\" is not all or a number of lines a second from 0 to 1000000; using 2")]
    [InlineData("-1", "0", 0.0, "LockTime: warning: LOCKTIME_LINES=\"-1\" is not all or a number of lines a second from 0 to 1000000; using 0")]
    [InlineData("2e6", "all", double.PositiveInfinity, "LockTime: warning: LOCKTIME_LINES=\"2e6\" is not all or a number of lines a second from 0 to 1000000; using all")]
    [InlineData(null, "some", 2.0, "LockTime: warning: the baked lines (LockTimeLines)=\"some\" is not all or a number of lines a second from 0 to 1000000; using 2")]
    public void LinesTakeAllOrARateOverTheBakedOne(string? value, string baked, double perSecond, string? warning)
    {
        var s = Parse();
        s.ParseLines(value, baked);
        Assert.Equal(perSecond, s.LinesPerSecond);
        if (warning == null)
            Assert.Empty(s.Warnings);
        else
            Assert.Equal([warning], s.Warnings);
    }

    [Theory]
    [InlineData("LOCKTIME_DISABLE", "LOCKTIME_DISABLED")]
    [InlineData("LOCKTIME_REPROT", "LOCKTIME_REPORT")]
    [InlineData("LOCKTIME_THRESHOLD", "LOCKTIME_THRESHOLD_MS")]
    [InlineData("LOCKTIME_REPORT_PATH", "LOCKTIME_REPORT")]
    [InlineData("LOCKTIME_REPORT_INTERVAL", "LOCKTIME_REPORT_INTERVAL_S")]
    [InlineData("LOCKTIME_LOCKORDER", "LOCKTIME_LOCK_ORDER")]
    [InlineData("LOCKTIME_METRIC", "LOCKTIME_METRICS")]
    [InlineData("locktime_summary", "LOCKTIME_SUMMARY")]
    [InlineData("LOCKTIME_OUTPUTS", "LOCKTIME_OUTPUT")]
    public void AMistypedNameWarnsWithTheNearestKnownOne(string name, string nearest)
    {
        Assert.Equal(["LockTime: warning: " + name + " is not a LockTime variable (did you mean " + nearest + "?); ignored"],
                     Settings.Unknown(new[] { "PATH", name, "HOME" }, false));
    }

    [Fact]
    public void AnUnknownNameFarFromAnyWarnsWithTheKnownOnes()
    {
        Assert.Equal(["LockTime: warning: LOCKTIME_COLOUR is not a LockTime variable (they are LOCKTIME_DISABLED, " +
                      "LOCKTIME_THRESHOLD_MS, LOCKTIME_OUTPUT, LOCKTIME_SUMMARY, LOCKTIME_REPORT, LOCKTIME_REPORT_INTERVAL_S, " +
                      "LOCKTIME_LOCK_ORDER, LOCKTIME_METRICS, LOCKTIME_STACK_DEPTH, LOCKTIME_LINES, LOCKTIME_TIMELINE); ignored"], Settings.Unknown(new[] { "LOCKTIME_COLOUR" }, false));
    }

    [Fact]
    public void KnownAndOtherNamesDoNotWarnAndUnknownOnesWarnOnceEachInOrder()
    {
        var names = new List<object>(Settings.Known) { "LOCKTIMEX", "MY_LOCKTIME_REPORT", 42, "LOCKTIME_Z", "LOCKTIME_A" };
        var warnings = Settings.Unknown(names, false);
        Assert.Equal(2, warnings.Count);
        Assert.StartsWith("LockTime: warning: LOCKTIME_A is not", warnings[0]);
        Assert.StartsWith("LockTime: warning: LOCKTIME_Z is not", warnings[1]);
    }

    [Fact]
    public void CaseCountsExceptWhereVariablesIgnoreIt()
    {
        Assert.Empty(Settings.Unknown(new[] { "LockTime_Report" }, true)); // Windows: the run-time reads it as LOCKTIME_REPORT
        Assert.Equal(["LockTime: warning: LockTime_Report is not a LockTime variable (did you mean LOCKTIME_REPORT?); ignored"],
                     Settings.Unknown(new[] { "LockTime_Report" }, false));
    }

    [Theory]
    [InlineData("0")] [InlineData("7")] [InlineData("2.5")] [InlineData(".5")] [InlineData("5.")] [InlineData("+3")]
    [InlineData("-5")] [InlineData("-0")] [InlineData("0.001")] [InlineData("1e3")] [InlineData("2E-1")] [InlineData("1e+2")]
    [InlineData("000123.4500")] [InlineData("1000000000000")] [InlineData("123456789012345678")] [InlineData("0.1")]
    [InlineData("1234567890.0987654321")] [InlineData("1e22")] [InlineData("0e400")] [InlineData("3.14159e-7")]
    public void DecimalsAreWhatTheInvariantCultureParses(string text)
    {
        Assert.True(Settings.Decimal(text, out double d));
        double expected = double.Parse(text, System.Globalization.NumberStyles.Float, System.Globalization.CultureInfo.InvariantCulture);
        Assert.Equal(expected, d, Math.Abs(expected) * 1e-15);
        Assert.Equal(double.IsNegative(expected), double.IsNegative(d));
    }

    [Theory]
    [InlineData("")] [InlineData(".")] [InlineData("-")] [InlineData("abc")] [InlineData("1,5")] [InlineData("1.2.3")] [InlineData("NaN")]
    [InlineData("Infinity")] [InlineData("1e")] [InlineData("1e+")] [InlineData("e5")] [InlineData("5x")] [InlineData("1 000")]
    [InlineData("0x10")] [InlineData("--1")] [InlineData("1e5.5")]
    public void OtherTextIsNoDecimal(string text)
    {
        Assert.False(Settings.Decimal(text, out double d));
        Assert.Equal(0, d);
    }

    [Fact]
    public void TheWarningNamesTheFallbackAndItsNote()
    {
        var s = Parse(threshold: "x", bakedThreshold: "0.25");
        Assert.Equal(new[] { "LockTime: warning: LOCKTIME_THRESHOLD_MS=\"x\" is not a number from 0 to 1000000000000; using 0.25" }, s.Warnings);
    }

    [Theory]
    [InlineData("", "", 0)] [InlineData("abc", "", 3)] [InlineData("kitten", "sitting", 3)] [InlineData("REPROT", "REPORT", 2)]
    [InlineData("DISABLE", "DISABLED", 1)] [InlineData("flaw", "lawn", 2)]
    public void EditsAreTheLevenshteinDistance(string a, string b, int edits)
    {
        Assert.Equal(edits, Settings.Edits(a, b));
        Assert.Equal(edits, Settings.Edits(b, a));
    }
}
