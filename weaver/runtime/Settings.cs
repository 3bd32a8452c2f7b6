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

        internal bool Disabled;
        internal double ThresholdMs = 1;
        /// <summary>"stderr", "stdout", or a file path.</summary>
        internal string Output = "stderr";
        internal int SummaryRows = 10;
        /// <summary>The report path with {pid} not yet replaced; null = no report.</summary>
        internal string ReportPath;
        /// <summary>Seconds between reports while running; 0 = at exit only.</summary>
        internal double ReportIntervalS;
        /// <summary>Whether the lock order is followed for potential deadlocks (LOCKTIME_LOCK_ORDER).</summary>
        internal bool LockOrder = true;
        /// <summary>The most sites the Meter "LockTime" tags (LOCKTIME_METRICS); 0 = no Meter.</summary>
        internal int MetricsSites = MetricsDefault;
        internal readonly List<string> Warnings = new List<string>();

        /// <summary>Every variable the run-time reads (<see cref="FromEnvironment"/>).</summary>
        internal static readonly string[] Known = {
            "LOCKTIME_DISABLED", "LOCKTIME_THRESHOLD_MS", "LOCKTIME_OUTPUT", "LOCKTIME_SUMMARY", "LOCKTIME_REPORT",
            "LOCKTIME_REPORT_INTERVAL_S", "LOCKTIME_LOCK_ORDER", "LOCKTIME_METRICS",
        };

        /// <summary>The prefix of the run-time's variables: any other name with it is taken for a mistyped one.</summary>
        internal const string Prefix = "LOCKTIME_";

        /// <summary>A name this many edits (insertions, deletions, substitutions) or fewer from a known one is close to it.</summary>
        internal const int CloseEdits = 2;

        /// <summary>The settings from the process environment and the baked defaults.</summary>
        internal static Settings FromEnvironment()
        {
            Settings s = Parse(Environment.GetEnvironmentVariable("LOCKTIME_DISABLED"),
                         Environment.GetEnvironmentVariable("LOCKTIME_THRESHOLD_MS"),
                         Environment.GetEnvironmentVariable("LOCKTIME_OUTPUT"),
                         Environment.GetEnvironmentVariable("LOCKTIME_SUMMARY"),
                         Environment.GetEnvironmentVariable("LOCKTIME_REPORT"),
                         Environment.GetEnvironmentVariable("LOCKTIME_REPORT_INTERVAL_S"),
                         Baked.ThresholdMs(), Baked.Output(), Baked.Summary(), Baked.Report());
            s.ParseLockOrder(Environment.GetEnvironmentVariable("LOCKTIME_LOCK_ORDER"), Baked.LockOrder());
            s.ParseMetrics(Environment.GetEnvironmentVariable("LOCKTIME_METRICS"));
            s.WarnUnknown(Environment.GetEnvironmentVariables().Keys, System.IO.Path.DirectorySeparatorChar == '\\');
            return s;
        }

        /// <summary>
        /// Adds one warning for each of <paramref name="names"/> (environment variable names; other
        /// objects are skipped) that starts with <see cref="Prefix"/> in any case and is not one of
        /// <see cref="Known"/>: <c>LockTime: warning: LOCKTIME_REPROT is not a LockTime variable (did you mean
        /// LOCKTIME_REPORT?); ignored</c>, the suggestion when a known name is close (<see cref="Nearest"/>).
        /// Names are compared ignoring case when <paramref name="ignoreCase"/> (Windows, whose variables are).
        /// </summary>
        internal void WarnUnknown(ICollection names, bool ignoreCase)
        {
            List<string> unknown = new List<string>();
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
                Warnings.Add("LockTime: warning: " + unknown[i] + " is not a LockTime variable" +
                             (near == null ? " (they are " + string.Join(", ", Known) + ")" : " (did you mean " + near + "?)") +
                             "; ignored");
            }
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
            if (Number("LOCKTIME_METRICS", value, MetricsMax, true, MetricsDefault.ToString(CultureInfo.InvariantCulture), out d))
                MetricsSites = (int)d;
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
            if (s.Number("the baked threshold (--threshold-ms)", bakedThresholdMs, ThresholdMsMax, false, "1", out d))
                s.ThresholdMs = d;
            if (s.Number("LOCKTIME_THRESHOLD_MS", thresholdMs, ThresholdMsMax, false, Ms(s.ThresholdMs), out d))
                s.ThresholdMs = d;

            if (!IsEmpty(bakedOutput))
                s.Output = Sink(bakedOutput);
            if (!IsEmpty(output))
                s.Output = Sink(output);

            if (s.Number("the baked summary rows (--summary)", bakedSummary, SummaryMax, true, "10", out d))
                s.SummaryRows = (int)d;
            if (s.Number("LOCKTIME_SUMMARY", summary, SummaryMax, true, s.SummaryRows.ToString(CultureInfo.InvariantCulture), out d))
                s.SummaryRows = (int)d;

            if (!IsEmpty(bakedReport))
                s.ReportPath = bakedReport;
            if (!IsEmpty(report))
                s.ReportPath = report;

            if (s.Number("LOCKTIME_REPORT_INTERVAL_S", intervalS, IntervalMax, false, "0 (a report at exit only)", out d))
                s.ReportIntervalS = d;
            if (s.ReportIntervalS > 0 && s.ReportPath == null) {
                s.Warnings.Add("LockTime: warning: LOCKTIME_REPORT_INTERVAL_S=\"" + intervalS.Trim() +
                               "\" without a report path (LOCKTIME_REPORT); using no report");
                s.ReportIntervalS = 0;
            }
            return s;
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
            if (string.Equals(v, "stderr", StringComparison.OrdinalIgnoreCase))
                return "stderr";
            if (string.Equals(v, "stdout", StringComparison.OrdinalIgnoreCase))
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
            string v = value.Trim();
            if (Is(v, "1") || Is(v, "true") || Is(v, "yes") || Is(v, "on"))
                return true;
            if (Is(v, "0") || Is(v, "false") || Is(v, "no") || Is(v, "off"))
                return false;
            Warnings.Add("LockTime: warning: " + name + "=\"" + value + "\" is not 1/true/yes/on or 0/false/no/off; using " +
                         (fallback ? onText : offText));
            return fallback;
        }

        static bool Is(string value, string word)
        {
            return string.Equals(value, word, StringComparison.OrdinalIgnoreCase);
        }

        /// <summary>
        /// A number from 0 to <paramref name="max"/> (a whole one when <paramref name="whole"/>), parsed
        /// with the invariant culture. True with the value when it is one; false when unset, and false
        /// with one warning naming <paramref name="name"/> and <paramref name="used"/> when it is not.
        /// </summary>
        bool Number(string name, string value, double max, bool whole, string used, out double result)
        {
            result = 0;
            if (IsEmpty(value))
                return false;
            double d;
            bool ok = double.TryParse(value.Trim(), NumberStyles.Float, CultureInfo.InvariantCulture, out d) &&
                      d >= 0 && d <= max && (!whole || Math.Floor(d) == d);
            if (!ok) {
                string what = whole ? "a whole number" : "a number";
                Warnings.Add("LockTime: warning: " + name + "=\"" + value + "\" is not " + what + " from 0 to " +
                             max.ToString("R", CultureInfo.InvariantCulture) + "; using " + used);
                return false;
            }
            result = d;
            return true;
        }
    }
}
