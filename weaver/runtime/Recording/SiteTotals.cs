// SiteTotals.cs - one site's merged statistics with its names, and their framework-data form.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;

namespace LockTime.Runtime
{
    /// <summary>
    /// A site with its statistics summed over threads, as summaries and reports show it. Copies of the
    /// run-time exchange sites as rows of framework types only (version 1 of the registry):
    /// <c>object[] { string assembly, string method, string location, string file, int line,
    /// string kind, long[] { acquisitions, contended, failed }, long[] wait, long[] hold, object[] behind,
    /// long[] { heldNow, longestHeldNs } }</c>, the histograms as <see cref="Histogram.ToArray"/> gives
    /// them, <c>behind</c> the holder sites waited behind as <c>object[] { string assembly, string method,
    /// string location, long[] { waitNs, count } }</c>, the last the holds in progress when the row was
    /// made (<see cref="Collector.HeldNow"/>), then <c>long[] { waitingNow, longestWaitingNs }</c>, the waits in
    /// progress (<see cref="Collector.WaitingNow"/>; a deadlocked thread's site has one), then <c>long[] { reentries }</c>
    /// (<see cref="SiteStats.Reentries"/>), then <c>object[]</c> the stacks of the slow acquisitions (<see cref="StackSet.ToRow"/>),
    /// then <c>string[] { kind, method, what }</c> or null, the lambda or local function the site is in (<see cref="SiteTable.Within"/>).
    /// Rows of 14 (without the lambda), 13 (without the stacks), 9 (without <c>behind</c>), 10 (without the holds in progress),
    /// 11 (without the waits) and 12 (without the re-entries), from older copies, are read too.
    /// </summary>
    [CompilerGenerated]
    internal sealed class SiteTotals
    {
        internal const int RowLength = 15;

        internal string Assembly = "";
        internal string Method = "";
        internal string Location = "";
        internal string File = "";
        internal int Line;
        internal string Kind = "";
        /// <summary>The lambda or local function the site is in, <c>{ kind, method, what }</c> (<see cref="SiteTable.Within"/>), or null.</summary>
        internal string[] Within;
        internal readonly SiteStats Stats = new SiteStats();
        /// <summary>The wait of others behind this site, in ns (<see cref="Blame"/>).</summary>
        internal long BlamedNs;
        /// <summary>Holds of this site in progress when the statistics were read, and the longest of them so far, in ns.</summary>
        internal long HeldNow, LongestHeldNs;
        /// <summary>Threads waiting at this site when the statistics were read, and the longest wait of them so far, in ns.</summary>
        internal long WaitingNow, LongestWaitingNs;

        /// <summary>
        /// Site <paramref name="site"/> of <paramref name="sites"/> with <paramref name="stats"/> as a row, and
        /// <paramref name="heldNow"/> holds in progress, the longest <paramref name="longestHeldNs"/> ns so far.
        /// </summary>
        internal static object[] ToRow(SiteTable sites, int site, SiteStats stats, long heldNow, long longestHeldNs)
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
            object[] behind = new object[stats.HolderN];
            for (int i = 0; i < behind.Length; i++) {
                object[] b = new object[4];
                b[0] = stats.Holders[i][0];
                b[1] = stats.Holders[i][1];
                b[2] = stats.Holders[i][2];
                long[] n = new long[2];
                n[0] = stats.HolderWait[i];
                n[1] = stats.HolderCount[i];
                b[3] = n;
                behind[i] = b;
            }
            row[9] = behind;
            row[10] = Pair(heldNow, longestHeldNs);
            long[] again = new long[1];
            again[0] = stats.Reentries;
            row[12] = again;
            row[13] = stats.Stacks == null ? new object[0] : stats.Stacks.ToRow();
            row[14] = sites.Withins[site];
            return row;
        }

        /// <summary>A count and a duration in ns, as a row carries the holds or the waits in progress.</summary>
        internal static long[] Pair(long count, long ns)
        {
            long[] p = new long[2];
            p[0] = count;
            p[1] = ns;
            return p;
        }

        /// <summary>A site from a row; null when the row is not one (another layout).</summary>
        internal static SiteTotals FromRow(object row)
        {
            object[] r = row as object[];
            if (r == null || r.Length < 9 || !(r[4] is int))
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
            long[] now = r.Length >= 11 ? r[10] as long[] : null;
            if (now != null && now.Length >= 2) {
                t.HeldNow = now[0];
                t.LongestHeldNs = now[1];
            }
            long[] waits = r.Length >= 12 ? r[11] as long[] : null;
            if (waits != null && waits.Length >= 2) {
                t.WaitingNow = waits[0];
                t.LongestWaitingNs = waits[1];
            }
            long[] again = r.Length >= 13 ? r[12] as long[] : null;
            if (again != null && again.Length >= 1)
                t.Stats.Reentries = again[0];
            object[] stacks = r.Length >= 14 ? r[13] as object[] : null;
            if (stacks != null && stacks.Length > 0)
                t.Stats.StacksMade().AddRow(stacks);
            string[] within = r.Length >= 15 ? r[14] as string[] : null;
            if (within != null && within.Length == 3)
                t.Within = within;
            object[] behind = r.Length >= 10 ? r[9] as object[] : null;
            for (int i = 0; behind != null && i < behind.Length; i++) {
                object[] b = behind[i] as object[];
                long[] n = b != null && b.Length >= 4 ? b[3] as long[] : null;
                if (n == null || n.Length < 2 || !(b[0] is string) || !(b[1] is string) || !(b[2] is string))
                    continue;
                string[] holder = new string[3];
                holder[0] = (string)b[0];
                holder[1] = (string)b[1];
                holder[2] = (string)b[2];
                t.Stats.WaitedBehind(holder, n[0], n[1]);
            }
            return t;
        }

        /// <summary>
        /// Sets every site's <see cref="BlamedNs"/>: the waits of every site behind it (sites are the same
        /// when assembly, method and location are), and orders each site's holders by wait, largest first.
        /// </summary>
        internal static void Blame(List<SiteTotals> sites)
        {
            Dictionary<string, SiteTotals> byName = new Dictionary<string, SiteTotals>();
            for (int i = 0; i < sites.Count; i++)
                byName[Name(sites[i].Assembly, sites[i].Method, sites[i].Location)] = sites[i];
            for (int i = 0; i < sites.Count; i++) {
                SiteStats s = sites[i].Stats;
                for (int k = 0; k < s.HolderN; k++) {
                    SiteTotals holder;
                    if (byName.TryGetValue(Name(s.Holders[k][0], s.Holders[k][1], s.Holders[k][2]), out holder))
                        holder.BlamedNs += s.HolderWait[k];
                }
                for (int k = 1; k < s.HolderN; k++) /* insertion sort: a handful of holders */
                    for (int j = k; j > 0 && s.HolderWait[j] > s.HolderWait[j - 1]; j--) {
                        string[] h = s.Holders[j];
                        s.Holders[j] = s.Holders[j - 1];
                        s.Holders[j - 1] = h;
                        long w = s.HolderWait[j];
                        s.HolderWait[j] = s.HolderWait[j - 1];
                        s.HolderWait[j - 1] = w;
                        long n = s.HolderCount[j];
                        s.HolderCount[j] = s.HolderCount[j - 1];
                        s.HolderCount[j - 1] = n;
                    }
            }
        }

        static string Name(string assembly, string method, string location)
        {
            return assembly + "\n" + method + "\n" + location;
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
