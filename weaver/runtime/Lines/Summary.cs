// Summary.cs - the table printed at exit: totals, then the top sites by total wait, then total hold.
using System.Collections.Generic;
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Text;

namespace LockTime.Runtime
{
    /// <summary>
    /// The summary's lines. The first gives the totals; then, unless no site took a lock, the top
    /// <c>rows</c> sites in <see cref="SiteTotals.Compare"/> order as a table whose columns are aligned:
    /// text to the left, numbers (milliseconds with three decimals) to the right. Every line starts
    /// with <c>LockTime:</c>, like the slow-lock lines, so it can be told from the program's output.
    /// </summary>
    [CompilerGenerated]
    internal static class Summary
    {
        internal const int Columns = 13;

        /// <summary>
        /// The lines for <paramref name="sites"/> (already sorted), at most <paramref name="rows"/> table
        /// rows, then the potential deadlocks of <paramref name="order"/> (null: none) and its caps if reached.
        /// </summary>
        internal static string[] Format(List<SiteTotals> sites, int rows, long droppedLines, LockOrder order)
        {
            List<string> lines = new List<string>();
            long acquisitions = 0, contended = 0, failed = 0, reentries = 0, wait = 0, hold = 0;
            List<string> assemblies = new List<string>();
            for (int i = 0; i < sites.Count; i++) {
                SiteStats s = sites[i].Stats;
                acquisitions += s.Acquisitions;
                contended += s.Contended;
                failed += s.Failed;
                reentries += s.Reentries;
                wait += s.Wait.Total;
                hold += s.Hold.Total;
                if (!assemblies.Contains(sites[i].Assembly))
                    assemblies.Add(sites[i].Assembly);
            }
            StringBuilder head = new StringBuilder("LockTime: summary: ");
            head.Append(Count(sites.Count, "site", "sites")).Append(" in ").Append(Count(assemblies.Count, "assembly", "assemblies"));
            head.Append("; ").Append(Count(acquisitions, "acquisition", "acquisitions"));
            head.Append(", ").Append(N(contended)).Append(" contended, ").Append(Count(failed, "failed try", "failed tries"));
            if (reentries > 0)
                head.Append(", ").Append(Count(reentries, "re-entry", "re-entries"));
            head.Append("; wait ").Append(LineWriter.Ms(wait)).Append(" ms, hold ").Append(LineWriter.Ms(hold)).Append(" ms");
            if (droppedLines > 0)
                head.Append("; ").Append(Count(droppedLines, "line", "lines")).Append(" dropped (queue full)");
            lines.Add(head.ToString());
            int shown = sites.Count < rows ? sites.Count : rows;
            if (shown > 0)
                Table(lines, sites, shown);
            TopStacks(lines, sites, shown);
            InProgress(lines, sites, rows, false);
            InProgress(lines, sites, rows, true);
            if (order != null)
                Cycles(lines, order);
            return lines.ToArray();
        }

        static void Table(List<string> lines, List<SiteTotals> sites, int shown)
        {
            lines.Add("LockTime: top " + Count(shown, "site", "sites") + " by total wait, then total hold (times in ms):");

            string[][] cells = new string[shown + 1][];
            cells[0] = "method|location|kind|acquired|contended|failed|wait total|wait max|wait p99|hold total|hold max|hold p99|made others wait".Split('|');
            for (int i = 0; i < shown; i++) {
                SiteTotals t = sites[i];
                string[] c = new string[Columns];
                c[0] = t.Method;
                c[1] = t.Location;
                c[2] = t.Kind;
                c[3] = N(t.Stats.Acquisitions);
                c[4] = N(t.Stats.Contended);
                c[5] = N(t.Stats.Failed);
                c[6] = LineWriter.Ms(t.Stats.Wait.Total);
                c[7] = LineWriter.Ms(t.Stats.Wait.Max);
                c[8] = LineWriter.Ms(t.Stats.Wait.Percentile(0.99));
                bool held = t.Stats.HoldApplies();
                c[9] = held ? LineWriter.Ms(t.Stats.Hold.Total) : "n/a";
                c[10] = held ? LineWriter.Ms(t.Stats.Hold.Max) : "n/a";
                c[11] = held ? LineWriter.Ms(t.Stats.Hold.Percentile(0.99)) : "n/a";
                c[12] = LineWriter.Ms(t.BlamedNs);
                cells[i + 1] = c;
            }
            int[] width = new int[Columns];
            for (int r = 0; r < cells.Length; r++)
                for (int k = 0; k < Columns; k++)
                    if (cells[r][k].Length > width[k])
                        width[k] = cells[r][k].Length;
            for (int r = 0; r < cells.Length; r++) {
                StringBuilder sb = new StringBuilder("LockTime:  ");
                for (int k = 0; k < Columns; k++) {
                    string v = cells[r][k];
                    Spaces(sb, k == 0 ? 1 : 2);
                    if (k < 3) {
                        sb.Append(v);
                        if (k < Columns - 1)
                            Spaces(sb, width[k] - v.Length);
                    } else {
                        Spaces(sb, width[k] - v.Length);
                        sb.Append(v);
                    }
                }
                lines.Add(sb.ToString());
            }
        }

        /// <summary>
        /// Appends <paramref name="n"/> spaces one by one: <c>StringBuilder.Append(char, int)</c> fills through a generic
        /// span helper that the framework's precompiled code lacks, and the JIT compiled it at every exit with a summary,
        /// also published ReadyToRun (862 bytes of IL, at tier 0 with the profile's counters).
        /// </summary>
        static void Spaces(StringBuilder sb, int n)
        {
            for (int i = 0; i < n; i++)
                sb.Append(' ');
        }

        /// <summary>Sites of the table whose top stacks the summary shows at most, stacks per role, and callers shown per stack.</summary>
        internal const int StackSites = 3, StacksPerRole = 2, StackCallers = 4;

        /// <summary>
        /// After the table: for the first <see cref="StackSites"/> of its <paramref name="shown"/> sites that have stacks,
        /// the <see cref="StacksPerRole"/> costliest stacks of the waits, then of the holds (<see cref="StackSet.Sorted"/>),
        /// each a line with its callers (<see cref="StackLine"/>); nothing when no site has one.
        /// </summary>
        static void TopStacks(List<string> lines, List<SiteTotals> sites, int shown)
        {
            int told = 0;
            for (int i = 0; i < shown && told < StackSites; i++) {
                StackSet set = sites[i].Stats.Stacks;
                StackEntry[] all = set == null ? new StackEntry[0] : set.Sorted();
                int[] perRole = new int[2];
                for (int k = 0; k < all.Length; k++) {
                    StackEntry e = all[k];
                    if (e.What != StackSet.Captured || perRole[e.Role]++ >= StacksPerRole)
                        continue;
                    if (told == 0)
                        lines.Add("LockTime: top stacks (of each top site, the stacks of the longest waits, then of the longest holds; callers innermost first):");
                    if (perRole[0] + perRole[1] == 1)
                        told++;
                    lines.Add("LockTime:   " + StackLine(sites[i], e));
                }
            }
        }

        /// <summary>
        /// <c>M at L: 3 slow waits, 276.541 ms, from A (Program.cs:21) &lt; B (Program.cs:30) &lt; ...</c> (or <c>slow holds</c>):
        /// the stack's count, its total (wait or hold), and its first <see cref="StackCallers"/> callers (the frames after the
        /// site's own). Neither "held" nor "waited": a slow-lock line's words, which its readers look for.
        /// </summary>
        internal static string StackLine(SiteTotals site, StackEntry e)
        {
            StringBuilder sb = new StringBuilder(site.Method).Append(" at ").Append(site.Location).Append(": ");
            sb.Append(e.Role == StackSet.Waiter ? Count(e.Count, "slow wait", "slow waits") : Count(e.Count, "slow hold", "slow holds"));
            sb.Append(", ").Append(LineWriter.Ms(StackSet.Cost(e))).Append(" ms,");
            if (e.Methods.Length < 2)
                return sb.Append(" no caller seen").ToString();
            for (int k = 1; k < e.Methods.Length && k <= StackCallers; k++) {
                sb.Append(k == 1 ? " from " : " < ").Append(e.Methods[k]);
                if (e.Lines[k] > 0)
                    sb.Append(" (").Append(System.IO.Path.GetFileName(e.Files[k] ?? "")).Append(':').Append(N(e.Lines[k])).Append(')');
            }
            if (e.Methods.Length > StackCallers + 1)
                sb.Append(" < ...");
            return sb.ToString();
        }

        /// <summary>
        /// The holds (<paramref name="waiting"/> false: a service stopped while it holds a lock, threads in a deadlock) or
        /// the waits (true: the threads of a deadlock, those behind a lock never released) in progress as the summary is
        /// made, longest first, at most <paramref name="rows"/> sites; nothing when there are none.
        /// </summary>
        static void InProgress(List<string> lines, List<SiteTotals> sites, int rows, bool waiting)
        {
            List<SiteTotals> now = new List<SiteTotals>();
            for (int i = 0; i < sites.Count; i++)
                if ((waiting ? sites[i].WaitingNow : sites[i].HeldNow) > 0)
                    now.Add(sites[i]);
            if (now.Count == 0 || rows <= 0)
                return;
            now.Sort(waiting ? new System.Comparison<SiteTotals>(LongestWaitingFirst) : new System.Comparison<SiteTotals>(LongestHeldFirst));
            lines.Add(waiting ? "LockTime: waiting now, as this summary was made (longest first):" : "LockTime: held now, as this summary was made (longest first):");
            for (int i = 0; i < now.Count && i < rows; i++)
                lines.Add("LockTime:   " + now[i].Method + " at " + now[i].Location + ": " +
                          (waiting ? Count(now[i].WaitingNow, "thread", "threads") : Count(now[i].HeldNow, "hold", "holds")) +
                          ", the longest " + LineWriter.Ms(waiting ? now[i].LongestWaitingNs : now[i].LongestHeldNs) + " ms so far");
        }

        static int LongestWaitingFirst(SiteTotals a, SiteTotals b)
        {
            return b.LongestWaitingNs.CompareTo(a.LongestWaitingNs);
        }

        static int LongestHeldFirst(SiteTotals a, SiteTotals b)
        {
            return b.LongestHeldNs.CompareTo(a.LongestHeldNs);
        }

        /// <summary>The potential deadlocks, one line each, the deadlocks found, and the lock order's caps when reached.</summary>
        static void Cycles(List<string> lines, LockOrder order)
        {
            int[][] cycles = order.Cycles();
            long[] counts = order.Counts();
            if (cycles.Length > 0) {
                lines.Add("LockTime: " + Count(cycles.Length, "potential deadlock", "potential deadlocks") +
                          " (locks taken in opposite orders; sites that held, then sites that acquired):");
                for (int i = 0; i < cycles.Length; i++)
                    lines.Add("LockTime:   " + order.Describe(cycles[i]));
            }
            if (counts[2] > 0)
                lines.Add("LockTime: lock order: " + Count(counts[2], "more cycle", "more cycles") + " not kept (at most " +
                          N(LockOrder.MaxCycles) + ")");
            int[][] deadlocks = order.DeadlocksFound();
            if (deadlocks.Length > 0) {
                lines.Add("LockTime: " + Count(deadlocks.Length, "deadlock", "deadlocks") + " (threads that waited for each other):");
                for (int i = 0; i < deadlocks.Length; i++)
                    lines.Add("LockTime:   " + Deadlocks.Describe(deadlocks[i], order));
            }
            if (counts[5] > 0)
                lines.Add("LockTime: " + Count(counts[5], "more deadlock", "more deadlocks") + " not kept (at most " +
                          N(Deadlocks.MaxKept) + ")");
            if (counts[3] != 0)
                lines.Add("LockTime: lock order: the cap of " + N(LockOrder.MaxLocks) + " locks was reached; further locks were not followed");
            if (counts[4] != 0)
                lines.Add("LockTime: lock order: the cap of " + N(LockOrder.MaxEdges) + " edges was reached; further edges were not followed");
        }

        static string N(long n)
        {
            return n.ToString(CultureInfo.InvariantCulture);
        }

        static string Count(long n, string one, string many)
        {
            return N(n) + " " + (n == 1 ? one : many);
        }
    }
}
