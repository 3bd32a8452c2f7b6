// Timeline.cs - the process's last slow locks, each with its wait, its hold and the holds it waited behind: a ring of plain records.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Text;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>
    /// The last <see cref="Capacity"/> slow locks of the process (a hold or wait at the threshold or over,
    /// <c>LOCKTIME_TIMELINE</c>), for the report's <c>timeline</c> (docs/report-format.md): the owner's, reached
    /// by every copy through the registry (entry 12, <see cref="Add"/>). Each event is <see cref="Fields"/>
    /// longs copied from the thread's own scratch array (<see cref="ThreadRecord.Event"/>) into a ring made at
    /// the first event (about <see cref="Capacity"/> x 120 bytes), with the site's name and the thread's name
    /// as references: nothing allocated per event. A slot is written between two stamps (odd while written),
    /// so the report takes an event whole or leaves it out; an event that was overwritten by a newer one is
    /// gone (the ring keeps the last ones).
    /// </summary>
    [CompilerGenerated]
    internal sealed class Timeline
    {
        /// <summary>The holds one wait is linked to at most: the ones it waited behind longest.</summary>
        internal const int Links = 3;
        /// <summary>An event's fields, as <see cref="ThreadRecord.Event"/> holds them (ticks of <see cref="Clock"/>).</summary>
        internal const int Thread = 0, WaitFrom = 1, Acquired = 2, Released = 3, Kind = 4, Linked = 5, Link = 6;
        /// <summary>The longs of one event: the fields above, then per link the holder's thread id and the start of its hold.</summary>
        internal const int Fields = Link + 2 * Links;
        /// <summary><see cref="Kind"/>: acquired and held; acquired, its hold not measured (a counting semaphore); not acquired (a failed try).</summary>
        internal const long Held = 0, HoldNotMeasured = 1, NotAcquired = 2;

        /// <summary>The events kept at most.</summary>
        internal readonly int Capacity;
        readonly object making = new object();
        long[] data;       /* Capacity x Fields, published last: null until the first event */
        long[] stamps;     /* per slot: 2n+1 while event n is written, 2n+2 once written */
        string[][] sites;  /* per slot: the site's { assembly, method, location } */
        string[] names;    /* per slot: the thread's name, or null */
        long added;        /* events added so far */
        long[] copies;     /* the events whole at the last report (Kept), by slot, and their names: under the report's lock */
        string[][] copiedSites;
        string[] copiedNames;

        /// <summary>A timeline of <paramref name="capacity"/> events (more than 0); nothing is allocated until the first.</summary>
        internal Timeline(int capacity)
        {
            Capacity = capacity;
        }

        /// <summary>
        /// Adds one slow lock: <paramref name="site"/> its name ({ assembly, method, location }),
        /// <paramref name="threadName"/> its thread's name (or null), <paramref name="e"/> its <see cref="Fields"/> longs
        /// (read before this returns). The first call makes the ring; when that fails, nothing is kept. Never throws.
        /// </summary>
        internal void Add(string[] site, string threadName, long[] e)
        {
            try {
                long[] d = Volatile.Read(ref data) ?? Make();
                if (d == null || e == null || e.Length < Fields)
                    return;
                long n = Interlocked.Increment(ref added) - 1;
                int slot = (int)(n % Capacity);
                Volatile.Write(ref stamps[slot], 2 * n + 1);
                Array.Copy(e, 0, d, slot * Fields, Fields);
                sites[slot] = site;
                names[slot] = threadName;
                Volatile.Write(ref stamps[slot], 2 * n + 2);
            } catch (Exception) {
            }
        }

        /// <summary>Makes the ring (once, under a lock of its own) and returns it; null when it cannot be made.</summary>
        long[] Make()
        {
            lock (making) {
                if (data == null) {
                    stamps = new long[Capacity];
                    sites = new string[Capacity][];
                    names = new string[Capacity];
                    Volatile.Write(ref data, new long[(long)Capacity * Fields]);
                }
                return data;
            }
        }

        /// <summary>
        /// Fills <paramref name="e"/> (<see cref="Fields"/> longs) with one event of thread <paramref name="thread"/>: its
        /// wait from <paramref name="waitFrom"/> to <paramref name="acquired"/>, its hold to <paramref name="released"/>
        /// (ticks), of <paramref name="kind"/>, and links to the holds it waited behind, the longest shares first (at most
        /// <see cref="Links"/>): those of the first <paramref name="n"/> shares of <paramref name="posts"/> that have a thread,
        /// and the hold of <paramref name="found"/> (the holder found as the wait began, a thread id; 0: none) that began at
        /// <paramref name="foundFrom"/>, by the part of the wait no share covered, which <see cref="Blame.Charge"/> gives it (a
        /// holder whose hold was logged after the wait was charged: its first log compiled while the lock went on to others).
        /// </summary>
        internal static void Fill(long[] e, int thread, long waitFrom, long acquired, long released, long kind, BlamePost[] posts, int n,
                                  int found, long foundFrom)
        {
            e[Thread] = thread;
            e[WaitFrom] = waitFrom;
            e[Acquired] = acquired;
            e[Released] = released;
            e[Kind] = kind;
            long told = 0;
            bool foundTold = false;
            for (int i = 0; posts != null && i < n && i < posts.Length; i++) {
                told += posts[i].Ticks;
                foundTold |= posts[i].Thread == found;
            }
            long untold = found != 0 && !foundTold ? acquired - waitFrom - told : 0;
            bool foundLinked = untold <= 0;
            int linked = 0;
            long below = long.MaxValue;
            while (linked < Links) {
                int best = -1;
                for (int i = 0; posts != null && i < n && i < posts.Length; i++)
                    if (posts[i].Thread != 0 && posts[i].Ticks < below && (best < 0 || posts[i].Ticks > posts[best].Ticks))
                        best = i;
                if (!foundLinked && untold <= below && (best < 0 || untold > posts[best].Ticks)) {
                    foundLinked = true;
                    below = untold;
                    e[Link + 2 * linked] = found;
                    e[Link + 2 * linked + 1] = foundFrom;
                    linked++;
                    continue;
                }
                if (best < 0)
                    break;
                below = posts[best].Ticks;
                e[Link + 2 * linked] = posts[best].Thread;
                e[Link + 2 * linked + 1] = posts[best].HoldFrom;
                linked++;
            }
            if (linked == 0 && found != 0) {
                e[Link] = found;
                e[Link + 1] = foundFrom;
                linked = 1;
            }
            e[Linked] = linked;
        }

        /// <summary>
        /// Appends <c>, "timeline": {...}</c> (docs/report-format.md): the capacity, the events added in all, and the
        /// events kept, by the start of their wait, times in ms since <paramref name="startTicks"/> (the process's
        /// start as the report gives it), <paramref name="nsPerTick"/> the clock's. A timeline that is off (null) gives
        /// capacity 0 and no events.
        /// </summary>
        internal static void AppendTo(StringBuilder sb, Timeline timeline, long startTicks, double nsPerTick)
        {
            List<int> order = timeline != null ? timeline.Kept() : new List<int>();
            sb.Append(",\n ");
            Json.Key(sb, "timeline");
            sb.Append("{\"capacity\": ");
            Json.Integer(sb, timeline != null ? timeline.Capacity : 0);
            sb.Append(", \"added\": ");
            Json.Integer(sb, timeline != null ? Volatile.Read(ref timeline.added) : 0);
            sb.Append(", \"events\": [");
            for (int i = 0; i < order.Count; i++) {
                sb.Append(i == 0 ? "\n  " : ",\n  ");
                timeline.Event(sb, order[i], startTicks, nsPerTick);
            }
            sb.Append(order.Count == 0 ? "]}" : "\n ]}");
        }

        /// <summary>Copies the events whole now (<see cref="copies"/>) and returns their slots, ordered by the start of their wait.</summary>
        List<int> Kept()
        {
            List<int> kept = new List<int>();
            long[] d = Volatile.Read(ref data);
            if (d == null)
                return kept;
            copies = copies ?? new long[(long)Capacity * Fields];
            copiedSites = copiedSites ?? new string[Capacity][];
            copiedNames = copiedNames ?? new string[Capacity];
            List<KeyValuePair<long, int>> byStart = new List<KeyValuePair<long, int>>();
            for (int slot = 0; slot < Capacity; slot++) {
                long stamp = Volatile.Read(ref stamps[slot]);
                if (stamp == 0 || (stamp & 1) != 0)
                    continue;
                Array.Copy(d, slot * Fields, copies, slot * Fields, Fields);
                copiedSites[slot] = sites[slot];
                copiedNames[slot] = names[slot];
                if (Volatile.Read(ref stamps[slot]) != stamp || copiedSites[slot] == null)
                    continue;
                byStart.Add(new KeyValuePair<long, int>(copies[slot * Fields + WaitFrom], slot));
            }
            byStart.Sort(new Comparison<KeyValuePair<long, int>>(ByStart));
            for (int i = 0; i < byStart.Count; i++)
                kept.Add(byStart[i].Value);
            return kept;
        }

        static int ByStart(KeyValuePair<long, int> a, KeyValuePair<long, int> b)
        {
            return a.Key.CompareTo(b.Key);
        }

        /// <summary>Appends the copied event of <paramref name="slot"/> as a JSON object.</summary>
        void Event(StringBuilder sb, int slot, long startTicks, double nsPerTick)
        {
            int at = slot * Fields;
            string[] site = copiedSites[slot];
            long kind = copies[at + Kind];
            sb.Append("{\"thread\": ");
            Json.Integer(sb, copies[at + Thread]);
            sb.Append(", \"thread_name\": ");
            if (copiedNames[slot] != null)
                Json.String(sb, copiedNames[slot]);
            else
                sb.Append("null");
            sb.Append(", \"assembly\": ");
            Json.String(sb, site[0]);
            sb.Append(", \"method\": ");
            Json.String(sb, site[1]);
            sb.Append(", \"location\": ");
            Json.String(sb, site[2]);
            Time(sb, "wait_from_ms", copies[at + WaitFrom], startTicks, nsPerTick);
            Time(sb, "acquired_ms", copies[at + Acquired], startTicks, nsPerTick);
            if (kind == Held)
                Time(sb, "released_ms", copies[at + Released], startTicks, nsPerTick);
            else
                sb.Append(kind == NotAcquired ? ", \"released_ms\": null, \"acquired\": false" : ", \"released_ms\": null");
            sb.Append(", \"behind\": [");
            long linked = copies[at + Linked];
            for (int k = 0; k < linked && k < Links; k++) {
                sb.Append(k == 0 ? "{\"thread\": " : ", {\"thread\": ");
                Json.Integer(sb, copies[at + Link + 2 * k]);
                Time(sb, "hold_from_ms", copies[at + Link + 2 * k + 1], startTicks, nsPerTick);
                sb.Append('}');
            }
            sb.Append("]}");
        }

        /// <summary>Appends <c>, "name": ms</c>: <paramref name="ticks"/> as ms since <paramref name="startTicks"/> (0 for earlier).</summary>
        static void Time(StringBuilder sb, string name, long ticks, long startTicks, double nsPerTick)
        {
            sb.Append(", ");
            Json.Key(sb, name);
            Json.Ms(sb, ticks <= startTicks ? 0 : (long)((ticks - startTicks) * nsPerTick));
        }
    }
}
