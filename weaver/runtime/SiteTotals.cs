// SiteTotals.cs - one site's merged statistics with its names, and their framework-data form.
using System;
using System.Runtime.CompilerServices;

namespace LockTime.Runtime
{
    /// <summary>
    /// A site with its statistics summed over threads, as summaries and reports show it. Copies of the
    /// run-time exchange sites as rows of framework types only (version 1 of the registry):
    /// <c>object[] { string assembly, string method, string location, string file, int line,
    /// string kind, long[] { acquisitions, contended, failed }, long[] wait, long[] hold }</c>, the
    /// histograms as <see cref="Histogram.ToArray"/> gives them.
    /// </summary>
    [CompilerGenerated]
    internal sealed class SiteTotals
    {
        internal const int RowLength = 9;

        internal string Assembly = "";
        internal string Method = "";
        internal string Location = "";
        internal string File = "";
        internal int Line;
        internal string Kind = "";
        internal readonly SiteStats Stats = new SiteStats();

        /// <summary>Site <paramref name="site"/> of <paramref name="sites"/> with <paramref name="stats"/> as a row.</summary>
        internal static object[] ToRow(SiteTable sites, int site, SiteStats stats)
        {
            object[] row = new object[RowLength];
            row[0] = sites.Assembly;
            row[1] = sites.Methods[site] ?? "";
            row[2] = sites.Locations[site] ?? "";
            row[3] = sites.Files[site] ?? "";
            row[4] = sites.Lines[site];
            row[5] = sites.Kinds[site] ?? "";
            long[] counts = new long[3];
            counts[0] = stats.Acquisitions;
            counts[1] = stats.Contended;
            counts[2] = stats.Failed;
            row[6] = counts;
            row[7] = stats.Wait.ToArray();
            row[8] = stats.Hold.ToArray();
            return row;
        }

        /// <summary>A site from a row; null when the row is not one (another layout).</summary>
        internal static SiteTotals FromRow(object row)
        {
            object[] r = row as object[];
            if (r == null || r.Length != RowLength || !(r[4] is int))
                return null;
            long[] counts = r[6] as long[];
            if (counts == null || counts.Length != 3)
                return null;
            SiteTotals t = new SiteTotals();
            t.Assembly = r[0] as string ?? "";
            t.Method = r[1] as string ?? "";
            t.Location = r[2] as string ?? "";
            t.File = r[3] as string ?? "";
            t.Line = (int)r[4];
            t.Kind = r[5] as string ?? "";
            t.Stats.Acquisitions = counts[0];
            t.Stats.Contended = counts[1];
            t.Stats.Failed = counts[2];
            if (!t.Stats.Wait.AddArray(r[7] as long[]) || !t.Stats.Hold.AddArray(r[8] as long[]))
                return null;
            return t;
        }

        /// <summary>
        /// The summary's order: total wait, then total hold, both descending; ties by assembly,
        /// method and location (ordinal), so the order does not depend on the threads' timing.
        /// </summary>
        internal static int Compare(SiteTotals a, SiteTotals b)
        {
            int c = b.Stats.Wait.Total.CompareTo(a.Stats.Wait.Total);
            if (c == 0)
                c = b.Stats.Hold.Total.CompareTo(a.Stats.Hold.Total);
            if (c == 0)
                c = string.CompareOrdinal(a.Assembly, b.Assembly);
            if (c == 0)
                c = string.CompareOrdinal(a.Method, b.Method);
            if (c == 0)
                c = string.CompareOrdinal(a.Location, b.Location);
            return c;
        }
    }
}
