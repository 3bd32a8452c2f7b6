// Report.cs - the JSON report file (docs/report-format.md), written atomically.
using System;
using System.Collections.Generic;
using System.IO;
using System.Runtime.CompilerServices;
using System.Text;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>The process a report describes.</summary>
    [CompilerGenerated]
    internal sealed class ProcessInfo
    {
        internal string Name = "";
        internal int Pid;
        internal DateTime StartUtc;
        /// <summary>Nanoseconds from the start to the report.</summary>
        internal long DurationNs;
        /// <summary>Lines queued and not written to their sinks when the report was made (<see cref="LineWriter.Unwritten"/>).</summary>
        internal long UnwrittenLines;
    }

    /// <summary>The report: format "locktime-report", version 3 (docs/report-format.md, docs/report-format.schema.json).</summary>
    [CompilerGenerated]
    internal static class Report
    {
        /// <summary>
        /// The report's JSON text, sites in the order given, then the lock order and <paramref name="timeline"/>'s events
        /// (null: off) in ms since <paramref name="startTicks"/>, the process's start (<paramref name="nsPerTick"/> the
        /// clock's), ending with a newline.
        /// </summary>
        internal static string Format(ProcessInfo process, List<SiteTotals> sites, long droppedLines, LockOrder order,
                                      Timeline timeline, long startTicks, double nsPerTick)
        {
            StringBuilder sb = new StringBuilder();
            sb.Append("{\"format\": \"locktime-report\", \"version\": 3,\n \"process\": {");
            Text(sb, "name", process.Name, false);
            Count(sb, "pid", process.Pid);
            Text(sb, "start_utc", process.StartUtc.ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'", System.Globalization.CultureInfo.InvariantCulture), true);
            Millis(sb, "duration_ms", process.DurationNs);
            sb.Append("},\n ");
            Json.Key(sb, "dropped_lines");
            Json.Integer(sb, droppedLines);
            Count(sb, "unwritten_lines", process.UnwrittenLines);
            sb.Append(",\n ");
            Json.Key(sb, "sites");
            sb.Append('[');
            for (int i = 0; i < sites.Count; i++) {
                sb.Append(i == 0 ? "\n  " : ",\n  ");
                Site(sb, sites[i]);
            }
            sb.Append(sites.Count == 0 ? "]" : "\n ]");
            Order(sb, order);
            Timeline.AppendTo(sb, timeline, startTicks, nsPerTick);
            sb.Append("}\n");
            return sb.ToString();
        }

        /// <summary>
        /// Appends <c>"lock_order"</c> (what the graph holds and whether a cap was reached) and
        /// <c>"lock_order_cycles"</c>, one cycle a line; with no lock order, zeros and no cycles.
        /// </summary>
        static void Order(StringBuilder sb, LockOrder order)
        {
            long[] counts = order != null ? order.Counts() : new long[6];
            int[][] cycles = order != null ? order.Cycles() : new int[0][];
            sb.Append(",\n ");
            Json.Key(sb, "lock_order");
            sb.Append('{');
            Json.Key(sb, "locks");
            Json.Integer(sb, counts[0]);
            Count(sb, "edges", counts[1]);
            Count(sb, "max_locks", LockOrder.MaxLocks);
            Count(sb, "max_edges", LockOrder.MaxEdges);
            sb.Append(", \"locks_cap_reached\": ").Append(counts[3] != 0 ? "true" : "false");
            sb.Append(", \"edges_cap_reached\": ").Append(counts[4] != 0 ? "true" : "false");
            Count(sb, "cycles_not_kept", counts[2]);
            Count(sb, "deadlocks_not_kept", counts[5]);
            sb.Append("},\n ");
            Json.Key(sb, "lock_order_cycles");
            sb.Append('[');
            for (int i = 0; i < cycles.Length; i++) {
                sb.Append(i == 0 ? "\n  {\"edges\": [" : ",\n  {\"edges\": [");
                int[] c = cycles[i];
                for (int e = 0; e < c.Length / 3; e++) {
                    sb.Append(e == 0 ? "{" : ", {");
                    Json.Key(sb, "held");
                    SiteName(sb, order, c[e * 3]);
                    sb.Append(", ");
                    Json.Key(sb, "acquired");
                    SiteName(sb, order, c[e * 3 + 1]);
                    Count(sb, "thread", c[e * 3 + 2]);
                    sb.Append('}');
                }
                sb.Append("]}");
            }
            sb.Append(cycles.Length == 0 ? "]" : "\n ]");
            DeadlockList(sb, order);
        }

        /// <summary>Appends <c>"deadlocks"</c>: the threads found waiting for each other (<see cref="LockOrder.DeadlocksFound"/>), one deadlock a line.</summary>
        static void DeadlockList(StringBuilder sb, LockOrder order)
        {
            int[][] found = order != null ? order.DeadlocksFound() : new int[0][];
            sb.Append(",\n ");
            Json.Key(sb, "deadlocks");
            sb.Append('[');
            for (int i = 0; i < found.Length; i++) {
                sb.Append(i == 0 ? "\n  {\"edges\": [" : ",\n  {\"edges\": [");
                int[] d = found[i];
                for (int e = 0; e < d.Length / 4; e++) {
                    sb.Append(e == 0 ? "{" : ", {");
                    Json.Key(sb, "thread");
                    Json.Integer(sb, d[e * 4 + 2]);
                    sb.Append(", ");
                    Json.Key(sb, "waits");
                    SiteName(sb, order, d[e * 4 + 1]);
                    Count(sb, "holder_thread", d[e * 4 + 3]);
                    sb.Append(", ");
                    Json.Key(sb, "held");
                    SiteName(sb, order, d[e * 4]);
                    sb.Append('}');
                }
                sb.Append("]}");
            }
            sb.Append(found.Length == 0 ? "]" : "\n ]");
        }

        static void SiteName(StringBuilder sb, LockOrder order, int site)
        {
            sb.Append('{');
            Text(sb, "method", order.Method(site), false);
            Text(sb, "location", order.Location(site), true);
            sb.Append('}');
        }

        /// <summary>
        /// The site's <c>"within"</c> field: null for a method the user wrote, else <c>{"kind": "lambda", "method":
        /// enclosing, "location": "File.cs:9" or null}</c> or <c>{"kind": "local function", "method": enclosing,
        /// "name": local}</c> (<see cref="SiteTable.Within"/>).
        /// </summary>
        static void Within(StringBuilder sb, string[] w)
        {
            sb.Append(", ");
            Json.Key(sb, "within");
            if (w == null) {
                sb.Append("null");
                return;
            }
            sb.Append('{');
            Text(sb, "kind", w[0], false);
            Text(sb, "method", w[1], true);
            bool lambda = w[0] == "lambda";
            Text(sb, lambda ? "location" : "name", lambda && w[2].Length == 0 ? null : w[2], true);
            sb.Append('}');
        }

        static void Site(StringBuilder sb, SiteTotals s)
        {
            sb.Append('{');
            Text(sb, "assembly", s.Assembly, false);
            Text(sb, "method", s.Method, true);
            Within(sb, s.Within);
            Text(sb, "location", s.Location, true);
            Text(sb, "file", s.File.Length == 0 ? null : s.File, true);
            sb.Append(", ");
            Json.Key(sb, "line");
            if (s.Line > 0)
                Json.Integer(sb, s.Line);
            else
                sb.Append("null");
            Text(sb, "kind", s.Kind, true);
            Count(sb, "acquisitions", s.Stats.Acquisitions);
            Count(sb, "contended", s.Stats.Contended);
            Count(sb, "failed", s.Stats.Failed);
            Count(sb, "reentries", s.Stats.Reentries);
            sb.Append(", ");
            Json.Key(sb, "wait_ms");
            Durations(sb, s.Stats.Wait);
            sb.Append(", ");
            Json.Key(sb, "hold_ms");
            Durations(sb, s.Stats.Hold);
            if (!s.Stats.HoldApplies()) {
                sb.Append(", ");
                Json.Key(sb, "hold_applies");
                sb.Append("false");
            }
            InProgress(sb, "held_now", s.HeldNow, s.LongestHeldNs);
            InProgress(sb, "waiting_now", s.WaitingNow, s.LongestWaitingNs);
            Millis(sb, "blamed_wait_ms", s.BlamedNs);
            sb.Append(", ");
            Json.Key(sb, "waited_behind");
            sb.Append('[');
            for (int i = 0; i < s.Stats.HolderN; i++) {
                sb.Append(i == 0 ? "{" : ", {");
                Text(sb, "method", s.Stats.Holders[i][1], false);
                Text(sb, "location", s.Stats.Holders[i][2], true);
                Millis(sb, "wait_ms", s.Stats.HolderWait[i]);
                Count(sb, "count", s.Stats.HolderCount[i]);
                sb.Append('}');
            }
            sb.Append("], ");
            Json.Key(sb, "wait_histogram");
            Buckets(sb, s.Stats.Wait);
            sb.Append(", ");
            Json.Key(sb, "hold_histogram");
            Buckets(sb, s.Stats.Hold);
            Stacks(sb, s.Stats.Stacks);
            sb.Append('}');
        }

        /// <summary>
        /// Appends <c>, "stacks": [...]</c>: the site's slow acquisitions by call stack (<see cref="StackSet.Sorted"/>),
        /// each with its role, what it is, count, wait and hold totals and frames innermost first.
        /// </summary>
        static void Stacks(StringBuilder sb, StackSet set)
        {
            StackEntry[] all = set == null ? new StackEntry[0] : set.Sorted();
            sb.Append(", ");
            Json.Key(sb, "stacks");
            sb.Append('[');
            for (int i = 0; i < all.Length; i++) {
                StackEntry e = all[i];
                sb.Append(i == 0 ? "\n   {" : ",\n   {");
                Text(sb, "role", StackSet.RoleName(e.Role), false);
                Text(sb, "what", StackSet.WhatName(e.What), true);
                Count(sb, "count", e.Count);
                Millis(sb, "wait_ms", e.WaitNs);
                Millis(sb, "hold_ms", e.HoldNs);
                sb.Append(", ");
                Json.Key(sb, "frames");
                sb.Append('[');
                for (int k = 0; e.Methods != null && k < e.Methods.Length; k++) {
                    sb.Append(k == 0 ? "{" : ", {");
                    Text(sb, "method", e.Methods[k], false);
                    Text(sb, "file", e.Files[k], true);
                    sb.Append(", ");
                    Json.Key(sb, "line");
                    if (e.Lines[k] > 0)
                        Json.Integer(sb, e.Lines[k]);
                    else
                        sb.Append("null");
                    sb.Append('}');
                }
                sb.Append("]}");
            }
            sb.Append(']');
        }

        /// <summary>Appends <c>, "name": "value"</c> (without the comma when <paramref name="comma"/> is false).</summary>
        static void Text(StringBuilder sb, string name, string value, bool comma)
        {
            if (comma)
                sb.Append(", ");
            Json.Key(sb, name);
            Json.String(sb, value);
        }

        /// <summary>Appends <c>, "name": x</c>, <paramref name="ns"/> nanoseconds as milliseconds.</summary>
        static void Millis(StringBuilder sb, string name, long ns)
        {
            sb.Append(", ");
            Json.Key(sb, name);
            Json.Ms(sb, ns);
        }

        /// <summary>Appends <c>, "name": n</c>.</summary>
        static void Count(StringBuilder sb, string name, long n)
        {
            sb.Append(", ");
            Json.Key(sb, name);
            Json.Integer(sb, n);
        }

        /// <summary>Appends <c>, "NAME": {"count": n, "longest_ms": x}</c>: holds or waits in progress.</summary>
        static void InProgress(StringBuilder sb, string name, long count, long longestNs)
        {
            sb.Append(", ");
            Json.Key(sb, name);
            sb.Append('{');
            Json.Key(sb, "count");
            Json.Integer(sb, count);
            Millis(sb, "longest_ms", longestNs);
            sb.Append('}');
        }

        static void Durations(StringBuilder sb, Histogram h)
        {
            sb.Append("{\"total\": ");
            Json.Ms(sb, h.Total);
            sb.Append(", \"max\": ");
            Json.Ms(sb, h.Max);
            sb.Append(", \"p50\": ");
            Json.Ms(sb, h.Percentile(0.50));
            sb.Append(", \"p90\": ");
            Json.Ms(sb, h.Percentile(0.90));
            sb.Append(", \"p99\": ");
            Json.Ms(sb, h.Percentile(0.99));
            sb.Append('}');
        }

        /// <summary>
        /// Appends the histogram's non-empty buckets, smallest first, as <c>[upper_bound_ms, count]</c>
        /// pairs: the values under 100 ns as <c>[0.0001, n]</c>, then bucket [lo, hi) as <c>[hi, n]</c>
        /// (its lower bound is the previous bucket's upper bound); the last one (1000 s) also holds
        /// everything above.
        /// </summary>
        static void Buckets(StringBuilder sb, Histogram h)
        {
            sb.Append('[');
            bool first = true;
            if (h.Low > 0) {
                Bucket(sb, Histogram.LowLimit, h.Low, first);
                first = false;
            }
            long unit = 10;
            for (int d = 0; d < Histogram.Decades; d++, unit *= 10) {
                long[] row = h.Rows[d];
                if (row == null)
                    continue;
                for (int k = 0; k < Histogram.PerDecade; k++) {
                    if (row[k] == 0)
                        continue;
                    Bucket(sb, (k + 11) * unit, row[k], first);
                    first = false;
                }
            }
            sb.Append(']');
        }

        static void Bucket(StringBuilder sb, long upperNs, long count, bool first)
        {
            if (!first)
                sb.Append(", ");
            sb.Append('[');
            Json.Ms(sb, upperNs);
            sb.Append(", ");
            Json.Integer(sb, count);
            sb.Append(']');
        }

        /// <summary>
        /// Writes <paramref name="text"/> to <paramref name="path"/> atomically: a temporary file beside
        /// it (<c>PATH.PID.tmp</c>), then a rename over it, so a reader sees the old report or the new one,
        /// never half of one - unless the path is to be written into as it is (<see cref="InPlace"/>, by
        /// <see cref="InPlaceWrite"/>: bounded). Returns null, or the reason it could not (the temporary file removed; a
        /// folder at the path named as one).
        /// </summary>
        internal static string Write(string path, string text, int pid)
        {
            string temp = path + "." + pid.ToString(System.Globalization.CultureInfo.InvariantCulture) + ".tmp";
            try {
                if (Directory.Exists(path)) /* a rename over it says only that it "already exists" */
                    return "it is a folder: give the report's file name, as " + Path.Combine(path, "report.{pid}.json");
                if (InPlace(path))
                    return InPlaceWrite.Run(path, text);
                File.WriteAllText(temp, text, new UTF8Encoding(false));
                if (File.Exists(path))
                    File.Replace(temp, path, null);
                else
                    File.Move(temp, path);
                return null;
            } catch (Exception ex) {
                try {
                    File.Delete(temp);
                } catch (Exception) {
                }
                return ex.GetType().Name + ": " + ex.Message;
            }
        }

        /// <summary>
        /// Whether <paramref name="path"/> names something a rename must not replace, written into as it
        /// is instead: a symbolic link (<c>/dev/stdout</c>; the link stays, its target gets the report), or
        /// an empty file - a device (<c>/dev/null</c>), a FIFO, a file made to receive the report - which a
        /// rename would turn into a regular file, a device too when the program runs as root. A report
        /// written there before is a non-empty regular file: replaced atomically. No portable API tells a
        /// device from a file; an empty regular file loses nothing by being written in place.
        /// </summary>
        static bool InPlace(string path)
        {
            try {
                FileInfo f = new FileInfo(path);
                return f.Exists && ((f.Attributes & FileAttributes.ReparsePoint) != 0 || f.Length == 0);
            } catch (Exception) {
                return false;
            }
        }
    }

    /// <summary>
    /// A report written into its path as it is (<see cref="Report.Write"/>: a device, a FIFO, a symbolic link), on a
    /// thread of its own that the caller waits for at most <see cref="WaitMs"/>: a FIFO that nobody reads blocks the
    /// open and the writes for ever, and the exit must go on. While one such write is still blocked, later ones are
    /// not tried (a periodic report would leave a blocked thread each time).
    /// </summary>
    [CompilerGenerated]
    internal sealed class InPlaceWrite
    {
        /// <summary>The longest a report written in place is waited for, in milliseconds.</summary>
        internal const int WaitMs = 1000;

        /// <summary>The write still blocked, if any.</summary>
        static InPlaceWrite blocked;

        readonly string path, text;
        volatile string error;
        volatile bool done;

        InPlaceWrite(string path, string text)
        {
            this.path = path;
            this.text = text;
        }

        /// <summary>Writes <paramref name="text"/> into <paramref name="path"/>; null, or the reason it could not (not done in time).</summary>
        internal static string Run(string path, string text)
        {
            InPlaceWrite before = blocked;
            if (before != null && !before.done)
                return "IOException: a report written before into it is still waiting for a reader";
            InPlaceWrite w = new InPlaceWrite(path, text);
            Thread thread = new Thread(new ThreadStart(w.Write));
            thread.IsBackground = true;
            thread.Name = "LockTime report";
            thread.Start();
            if (thread.Join(WaitMs))
                return w.error;
            blocked = w;
            return "IOException: nothing took the report in " + (WaitMs / 1000).ToString(System.Globalization.CultureInfo.InvariantCulture) + " s";
        }

        void Write()
        {
            try {
                File.WriteAllText(path, text, new UTF8Encoding(false));
            } catch (Exception ex) {
                error = ex.GetType().Name + ": " + ex.Message;
            }
            done = true;
        }
    }
}
