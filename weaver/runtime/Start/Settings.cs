// Settings.cs - the LOCKTIME_* variables over the baked defaults, each bad value named in one warning.
using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.Runtime.CompilerServices;

namespace LockTime.Runtime
{
    /// <summary>
    /// The settings of one copy of the run-time: each LOCKTIME_* variable when set and valid, else the
    /// baked default (<see cref="Baked"/>), else the built-in one. Every value that cannot be used adds
    /// one line to <see cref="Warnings"/>: <c>LockTime: warning: VAR="value" ...; using X</c>; so does
    /// every other LOCKTIME_* variable set (<see cref="WarnUnknown"/>): a mistyped name is not silent.
    /// </summary>
    [CompilerGenerated]
    internal sealed class Settings
    {
        /// <summary>The largest threshold accepted, in milliseconds (the weaver's limit too).</summary>
        internal const double ThresholdMsMax = 1e12;

        /// <summary>The largest summary row count and report interval accepted.</summary>
        internal const int SummaryMax = 1000000;
        internal const double IntervalMax = 1e9;

        /// <summary>The most sites the Meter gives a series of their own (LOCKTIME_METRICS): the default and the largest accepted.</summary>
        internal const int MetricsDefault = 20;
        internal const int MetricsMax = 1000;
        /// <summary>The frames of a slow lock's stack (LOCKTIME_STACK_DEPTH): the default and the largest accepted.</summary>
        internal const int StackDepthDefault = 32;
        internal const int StackDepthMax = 256;
        /// <summary>Slow-lock lines a second per site after the first ones (LOCKTIME_LINES, <see cref="LineLimit"/>): the default and the largest number accepted.</summary>
        internal const double LinesDefault = 2;
        internal const double LinesMax = 1e6;
        /// <summary>The slow locks the timeline keeps (LOCKTIME_TIMELINE): the default and the largest accepted.</summary>
        internal const int TimelineDefault = 10000;
        internal const int TimelineMax = 1000000;

        internal bool Disabled;
        internal double ThresholdMs = 1;
        /// <summary>"stderr", "stdout", or a file path.</summary>
        internal string Output = "stderr";
        internal int SummaryRows = 10;
        /// <summary>The report path with {pid} not yet replaced; null = no report.</summary>
        internal string ReportPath;
        /// <summary>Whether <see cref="ReportPath"/> is the build's (baked in), not LOCKTIME_REPORT's: a warning names the one it came from.</summary>
        internal bool ReportBaked;
        /// <summary>Seconds between reports while running; 0 = at exit only.</summary>
        internal double ReportIntervalS;
        /// <summary>Whether the lock order is followed for potential deadlocks (LOCKTIME_LOCK_ORDER).</summary>
        internal bool LockOrder = true;
        /// <summary>The most sites the Meter "LockTime" tags (LOCKTIME_METRICS); 0 = no Meter.</summary>
        internal int MetricsSites = MetricsDefault;
        /// <summary>The most frames a slow lock's call stack keeps (LOCKTIME_STACK_DEPTH); 0 = no stacks.</summary>
        internal int StackDepth = StackDepthDefault;
        /// <summary>
        /// Slow-lock lines a second per site after the first <see cref="LineLimit.Burst"/> (LOCKTIME_LINES), the
        /// others rolled up; 0 = the first ones only; positive infinity = every line (<c>all</c>).
        /// </summary>
        internal double LinesPerSecond = LinesDefault;
        /// <summary>The last slow locks the process's timeline keeps (LOCKTIME_TIMELINE); 0 = no timeline.</summary>
        internal int Timeline = TimelineDefault;
        internal readonly List<string> Warnings = new List<string>();

        /// <summary>Every variable the run-time reads (<see cref="FromEnvironment"/>).</summary>
        internal static readonly string[] Known = {
            "LOCKTIME_DISABLED", "LOCKTIME_THRESHOLD_MS", "LOCKTIME_OUTPUT", "LOCKTIME_SUMMARY", "LOCKTIME_REPORT",
            "LOCKTIME_REPORT_INTERVAL_S", "LOCKTIME_LOCK_ORDER", "LOCKTIME_METRICS", "LOCKTIME_STACK_DEPTH",
            "LOCKTIME_LINES",
            "LOCKTIME_TIMELINE",
        };

        /// <summary>The prefix of the run-time's variables: any other name with it is taken for a mistyped one.</summary>
        internal const string Prefix = "LOCKTIME_";

        /// <summary>A name this many edits (insertions, deletions, substitutions) or fewer from a known one is close to it.</summary>
        internal const int CloseEdits = 2;

        /// <summary>
        /// The settings from the process environment and the baked defaults; when LOCKTIME_DISABLED turns
        /// timing off, only that (nothing else is read). Other LOCKTIME_* names are not looked for here:
        /// listing the environment takes a millisecond or two, which the owner's writer thread spends
        /// (<see cref="Unknown"/>), not the first lock's thread. Nothing here loads culture data.
        /// </summary>
        internal static Settings FromEnvironment()
        {
            string disabled = Environment.GetEnvironmentVariable("LOCKTIME_DISABLED");
            if (disabled != null && On(disabled)) {
                Settings off = new Settings();
                off.Disabled = true;
                return off;
            }
            Settings s = Parse(disabled,
                         Environment.GetEnvironmentVariable("LOCKTIME_THRESHOLD_MS"),
                         Environment.GetEnvironmentVariable("LOCKTIME_OUTPUT"),
                         Environment.GetEnvironmentVariable("LOCKTIME_SUMMARY"),
                         Environment.GetEnvironmentVariable("LOCKTIME_REPORT"),
                         Environment.GetEnvironmentVariable("LOCKTIME_REPORT_INTERVAL_S"),
                         Baked.ThresholdMs(), Baked.Output(), Baked.Summary(), Baked.Report());
            s.ParseLockOrder(Environment.GetEnvironmentVariable("LOCKTIME_LOCK_ORDER"), Baked.LockOrder());
            s.ParseMetrics(Environment.GetEnvironmentVariable("LOCKTIME_METRICS"));
            s.ParseStackDepth(Environment.GetEnvironmentVariable("LOCKTIME_STACK_DEPTH"));
            s.ParseLines(Environment.GetEnvironmentVariable("LOCKTIME_LINES"), Baked.Lines());
            s.ParseTimeline(Environment.GetEnvironmentVariable("LOCKTIME_TIMELINE"));
            return s;
        }

        /// <summary>The warnings of <see cref="Unknown(ICollection, bool)"/> for the process environment.</summary>
        internal static List<string> Unknown()
        {
            return Unknown(Environment.GetEnvironmentVariables().Keys, System.IO.Path.DirectorySeparatorChar == '\\');
        }

        /// <summary>
        /// One warning for each of <paramref name="names"/> (environment variable names; other objects
        /// are skipped) that starts with <see cref="Prefix"/> in any case and is not one of
        /// <see cref="Known"/>: <c>LockTime: warning: LOCKTIME_REPROT is not a LockTime variable (did you mean
        /// LOCKTIME_REPORT?); ignored</c>, the suggestion when a known name is close (<see cref="Nearest"/>),
        /// in the names' ordinal order. Names are compared ignoring case when <paramref name="ignoreCase"/>
        /// (Windows, whose variables are).
        /// </summary>
        internal static List<string> Unknown(ICollection names, bool ignoreCase)
        {
            List<string> warnings = new List<string>(), unknown = new List<string>();
            foreach (object o in names) {
                string name = o as string;
                if (name == null || !name.StartsWith(Prefix, StringComparison.OrdinalIgnoreCase))
                    continue;
                bool known = false;
                for (int i = 0; i < Known.Length && !known; i++)
                    known = string.Equals(name, Known[i], ignoreCase ? StringComparison.OrdinalIgnoreCase : StringComparison.Ordinal);
                if (!known)
                    unknown.Add(name);
            }
            unknown.Sort(StringComparer.Ordinal); /* the environment's order is no order */
            for (int i = 0; i < unknown.Count; i++) {
                string near = Nearest(unknown[i]);
                warnings.Add("LockTime: warning: " + unknown[i] + " is not a LockTime variable" +
                             (near == null ? " (they are " + string.Join(", ", Known) + ")" : " (did you mean " + near + "?)") +
                             "; ignored");
            }
            return warnings;
        }

        /// <summary>
        /// The known name closest to <paramref name="name"/> (ignoring case) when close: at most
        /// <see cref="CloseEdits"/> edits away, or one of the two a prefix of the other past
        /// <see cref="Prefix"/> (LOCKTIME_THRESHOLD, LOCKTIME_REPORT_PATH); the fewest edits first, then
        /// the order of <see cref="Known"/>. Null when none is close.
        /// </summary>
        internal static string Nearest(string name)
        {
            string n = name.ToUpperInvariant(), best = null;
            int bestEdits = int.MaxValue;
            for (int i = 0; i < Known.Length; i++) {
                string k = Known[i];
                int edits = Edits(n, k);
                bool close = edits <= CloseEdits || (n.Length > Prefix.Length && (k.StartsWith(n, StringComparison.Ordinal) ||
                                                                                n.StartsWith(k + "_", StringComparison.Ordinal)));
                if (close && edits < bestEdits) {
                    best = k;
                    bestEdits = edits;
                }
            }
            return best;
        }

        /// <summary>The edit (Levenshtein) distance of <paramref name="a"/> and <paramref name="b"/>: insertions, deletions and substitutions.</summary>
        internal static int Edits(string a, string b)
        {
            int[] row = new int[b.Length + 1];
            for (int j = 0; j <= b.Length; j++)
                row[j] = j;
            for (int i = 1; i <= a.Length; i++) {
                int diagonal = row[0];
                row[0] = i;
                for (int j = 1; j <= b.Length; j++) {
                    int above = row[j];
                    int d = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
                    d = Math.Min(d, Math.Min(above, row[j - 1]) + 1);
                    row[j] = d;
                    diagonal = above;
                }
            }
            return row[b.Length];
        }

        /// <summary>
        /// <see cref="LockOrder"/> from LOCKTIME_LOCK_ORDER over the baked default (a switch each; a bad
        /// baked value warns too and gives the built-in on).
        /// </summary>
        internal void ParseLockOrder(string value, string baked)
        {
            LockOrder = Switch("the baked lock order (LockTimeLockOrder)", baked, true, "1 (lock order on)", "0 (lock order off)");
            LockOrder = Switch("LOCKTIME_LOCK_ORDER", value, LockOrder, "1 (lock order on)", "0 (lock order off)");
        }

        /// <summary><see cref="MetricsSites"/> from LOCKTIME_METRICS: a whole number of sites, 0 = no Meter.</summary>
        internal void ParseMetrics(string value)
        {
            double d;
            if (Number("LOCKTIME_METRICS", value, MetricsMax, true, MetricsSites, null, out d))
                MetricsSites = (int)d;
        }

        /// <summary><see cref="StackDepth"/> from LOCKTIME_STACK_DEPTH: a whole number of frames, 0 = no stacks.</summary>
        internal void ParseStackDepth(string value)
        {
            double d;
            if (Number("LOCKTIME_STACK_DEPTH", value, StackDepthMax, true, StackDepth, null, out d))
                StackDepth = (int)d;
        }

        /// <summary><see cref="Timeline"/> from LOCKTIME_TIMELINE: a whole number of slow locks, 0 = no timeline.</summary>
        internal void ParseTimeline(string value)
        {
            double d;
            if (Number("LOCKTIME_TIMELINE", value, TimelineMax, true, Timeline, null, out d))
                Timeline = (int)d;
        }

        /// <summary>
        /// <see cref="LinesPerSecond"/> from LOCKTIME_LINES over the baked default (<c>all</c> in any case, or a
        /// number of lines a second from 0 to <see cref="LinesMax"/>; a bad baked value warns too and gives the
        /// built-in default).
        /// </summary>
        internal void ParseLines(string value, string baked)
        {
            LinesPerSecond = Lines("the baked lines (LockTimeLines)", baked, LinesDefault);
            LinesPerSecond = Lines("LOCKTIME_LINES", value, LinesPerSecond);
        }

        /// <summary>
        /// Lines a second from <paramref name="value"/> of <paramref name="name"/>: <c>all</c> (positive infinity) or a
        /// number (<see cref="Decimal"/>) from 0 to <see cref="LinesMax"/>; unset gives <paramref name="fallback"/>, and
        /// anything else one warning naming it and <paramref name="fallback"/>.
        /// </summary>
        double Lines(string name, string value, double fallback)
        {
            if (IsEmpty(value))
                return fallback;
            double d;
            if (Is(value.Trim(), "all"))
                return double.PositiveInfinity;
            if (Decimal(value.Trim(), out d) && d >= 0 && d <= LinesMax)
                return d;
            Warnings.Add("LockTime: warning: " + name + "=\"" + value + "\" is not all or a number of lines a second from 0 to " + Ms(LinesMax) +
                         "; using " + (double.IsPositiveInfinity(fallback) ? "all" : Ms(fallback)));
            return fallback;
        }

        /// <summary>
        /// The settings from the variables' values (null or empty = unset) and the baked defaults'.
        /// A bad baked value (a merger bug) warns too and falls back to the built-in default.
        /// </summary>
        internal static Settings Parse(string disabled, string thresholdMs, string output, string summary,
                                       string report, string intervalS, string bakedThresholdMs,
                                       string bakedOutput, string bakedSummary, string bakedReport)
        {
            Settings s = new Settings();
            s.Disabled = s.Switch("LOCKTIME_DISABLED", disabled, false, "1 (timing off)", "0 (timing on)");

            double d;
            if (s.Number("the baked threshold (--threshold-ms)", bakedThresholdMs, ThresholdMsMax, false, s.ThresholdMs, null, out d))
                s.ThresholdMs = d;
            if (s.Number("LOCKTIME_THRESHOLD_MS", thresholdMs, ThresholdMsMax, false, s.ThresholdMs, null, out d))
                s.ThresholdMs = d;

            if (!IsEmpty(bakedOutput))
                s.Output = Sink(bakedOutput);
            if (!IsEmpty(output))
                s.Output = Sink(output);

            if (s.Number("the baked summary rows (--summary)", bakedSummary, SummaryMax, true, s.SummaryRows, null, out d))
                s.SummaryRows = (int)d;
            if (s.Number("LOCKTIME_SUMMARY", summary, SummaryMax, true, s.SummaryRows, null, out d))
                s.SummaryRows = (int)d;

            if (!IsEmpty(bakedReport)) {
                s.ReportPath = bakedReport;
                s.ReportBaked = true;
            }
            if (!IsEmpty(report)) {
                s.ReportPath = report;
                s.ReportBaked = false;
            }

            if (s.Number("LOCKTIME_REPORT_INTERVAL_S", intervalS, IntervalMax, false, s.ReportIntervalS, "(a report at exit only)", out d))
                s.ReportIntervalS = d;
            if (s.ReportIntervalS > 0 && s.ReportPath == null) {
                s.Warnings.Add("LockTime: warning: LOCKTIME_REPORT_INTERVAL_S=\"" + intervalS.Trim() +
                               "\" without a report path (LOCKTIME_REPORT, or the build's LockTimeReport); using no report");
                s.ReportIntervalS = 0;
            }
            return s;
        }

        /// <summary>
        /// The report path as a warning names it, with where it came from: <c>LOCKTIME_REPORT="path"</c>, or the
        /// build's <c>LockTimeReport="path"</c> (baked in by MSBuild, or by <c>locktime weave --report</c>).
        /// </summary>
        internal string ReportSetting()
        {
            return ReportBaked ? "LockTimeReport=\"" + ReportPath + "\" (baked in by the build, or by locktime weave --report)"
                               : "LOCKTIME_REPORT=\"" + ReportPath + "\"";
        }

        /// <summary>
        /// The sink <paramref name="sink"/> (a file path) as a warning names it, with where it came from: <c>LOCKTIME_OUTPUT="path"</c>
        /// when that variable names it, else the build's <c>LockTimeOutput="path"</c> (baked in by MSBuild, or by
        /// <c>locktime weave --output-sink</c>). The line writer knows a sink by its path only: whichever copy of the
        /// run-time queued lines to it, the variable overrides the baked value in every copy.
        /// </summary>
        internal static string OutputSetting(string sink)
        {
            string variable = null;
            try {
                variable = Environment.GetEnvironmentVariable("LOCKTIME_OUTPUT");
            } catch (Exception) {
            }
            if (!IsEmpty(variable) && Sink(variable) == sink)
                return "LOCKTIME_OUTPUT=\"" + sink + "\"";
            return "LockTimeOutput=\"" + sink + "\" (baked in by the build, or by locktime weave --output-sink)";
        }

        /// <summary>The report path with every <c>{pid}</c> replaced by <paramref name="pid"/>; null when none.</summary>
        internal string ReportFile(int pid)
        {
            if (ReportPath == null)
                return null;
            return ReportPath.Replace("{pid}", pid.ToString(CultureInfo.InvariantCulture));
        }

        /// <summary>"stderr" and "stdout" in any case become lower case; any other value is a file path.</summary>
        internal static string Sink(string value)
        {
            string v = value.Trim();
            if (Is(v, "stderr"))
                return "stderr";
            if (Is(v, "stdout"))
                return "stdout";
            return value;
        }

        static bool IsEmpty(string value)
        {
            return value == null || value.Trim().Length == 0;
        }

        static string Ms(double ms)
        {
            return ms.ToString("R", CultureInfo.InvariantCulture);
        }

        /// <summary>
        /// A switch: 1/true/yes/on or 0/false/no/off in any case; anything else warns, giving
        /// <paramref name="fallback"/> (named by <paramref name="onText"/> or <paramref name="offText"/>).
        /// </summary>
        bool Switch(string name, string value, bool fallback, string onText, string offText)
        {
            if (IsEmpty(value))
                return fallback;
            if (On(value))
                return true;
            string v = value.Trim();
            if (Is(v, "0") || Is(v, "false") || Is(v, "no") || Is(v, "off"))
                return false;
            Warnings.Add("LockTime: warning: " + name + "=\"" + value + "\" is not 1/true/yes/on or 0/false/no/off; using " +
                         (fallback ? onText : offText));
            return fallback;
        }

        /// <summary>True when <paramref name="value"/> (not null) is a switch's on: 1/true/yes/on in any case, blanks around.</summary>
        static bool On(string value)
        {
            string v = value.Trim();
            return Is(v, "1") || Is(v, "true") || Is(v, "yes") || Is(v, "on");
        }

        /// <summary>
        /// True when <paramref name="value"/> is <paramref name="word"/> (lower-case ASCII) in any case of its
        /// ASCII letters: compared by hand, as the first ignore-case comparison of a process costs
        /// about half a millisecond.
        /// </summary>
        static bool Is(string value, string word)
        {
            if (value.Length != word.Length)
                return false;
            for (int i = 0; i < word.Length; i++) {
                char c = value[i];
                if (c >= 'A' && c <= 'Z')
                    c = (char)(c + ('a' - 'A'));
                if (c != word[i])
                    return false;
            }
            return true;
        }

        /// <summary>
        /// A number from 0 to <paramref name="max"/> (a whole one when <paramref name="whole"/>) in the
        /// invariant form (<see cref="Decimal"/>). True with the value when it is one; false when unset,
        /// and false with one warning naming <paramref name="name"/> and what is used instead,
        /// <paramref name="fallback"/> followed by <paramref name="note"/> (null: none), when it is not.
        /// </summary>
        bool Number(string name, string value, double max, bool whole, double fallback, string note, out double result)
        {
            result = 0;
            if (IsEmpty(value))
                return false;
            double d;
            bool ok = Decimal(value.Trim(), out d) && d >= 0 && d <= max && (!whole || Math.Floor(d) == d);
            if (!ok) {
                string what = whole ? "a whole number" : "a number";
                Warnings.Add("LockTime: warning: " + name + "=\"" + value + "\" is not " + what + " from 0 to " + Ms(max) +
                             "; using " + Ms(fallback) + (note == null ? "" : " " + note));
                return false;
            }
            result = d;
            return true;
        }

        /// <summary>Significant digits <see cref="Decimal"/> reads; later digits only scale the value.</summary>
        const int DecimalDigits = 18;

        /// <summary>
        /// Parses <paramref name="text"/> as a decimal number: an optional sign, digits with an optional
        /// point (<c>5</c>, <c>2.5</c>, <c>.5</c>, <c>5.</c>), an optional exponent (<c>1e3</c>, <c>2E-1</c>), nothing
        /// else (no group separators, no <c>NaN</c> or <c>Infinity</c>) - what the invariant culture's
        /// <c>double.Parse</c> takes with <c>NumberStyles.Float</c>, without the culture data it loads (a few
        /// milliseconds at a process's first lock). The value is <c>double.Parse</c>'s (the nearest double) for
        /// up to 15 significant digits scaled by at most 10^22 either way; past that it may be one unit in the
        /// last place off (16 to 18 digits are rounded twice, later ones dropped), and a value below about
        /// 1e-308 is 0. False with 0 when it is not a number.
        /// </summary>
        internal static bool Decimal(string text, out double result)
        {
            result = 0;
            int i = 0, n = text.Length, significant = 0, scale = 0;
            long mantissa = 0;
            bool negative = i < n && text[i] == '-', any = false;
            if (i < n && (text[i] == '-' || text[i] == '+'))
                i++;
            for (bool point = false; i < n; i++) {
                char c = text[i];
                if (c == '.' && !point) {
                    point = true;
                    continue;
                }
                if (c < '0' || c > '9')
                    break;
                any = true;
                if (significant < DecimalDigits) {
                    mantissa = mantissa * 10 + (c - '0');
                    if (mantissa != 0)
                        significant++;
                    if (point)
                        scale--;
                } else if (!point) {
                    scale++;
                }
            }
            if (!any)
                return false;
            if (i < n && (text[i] == 'e' || text[i] == 'E')) {
                int j = i + 1, exponent = 0;
                bool down = j < n && text[j] == '-';
                if (j < n && (text[j] == '-' || text[j] == '+'))
                    j++;
                if (j == n)
                    return false;
                for (; j < n && text[j] >= '0' && text[j] <= '9'; j++)
                    exponent = Math.Min(exponent * 10 + (text[j] - '0'), 100000);
                scale += down ? -exponent : exponent;
                i = j;
            }
            if (i != n)
                return false;
            double v = mantissa;
            if (mantissa != 0 && scale > 0)
                v *= Math.Pow(10, scale);
            else if (mantissa != 0 && scale < 0)
                v /= Math.Pow(10, -scale);
            result = negative ? -v : v;
            return true;
        }
    }
}
