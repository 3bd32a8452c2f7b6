// LineLimit.cs - the rate of slow-lock lines per site: the first lines as they come, then a few a second, the rest rolled up.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>
    /// Which slow locks of one copy's sites get their line (LOCKTIME_LINES): per site, the first
    /// <see cref="Burst"/> lines as they come, then at most a rate of lines a second (a token bucket of
    /// <see cref="Burst"/> tokens, kept as one time per site: the generic cell rate algorithm). A slow lock
    /// whose line is held back is counted on its site with its hold and wait (the largest since the last
    /// roll-up); every <see cref="RollUpS"/> seconds, and at the exit, the run-time's thread turns each
    /// site's count into one roll-up line (<see cref="RollUp"/>). The statistics, the report, the events
    /// and the stacks are not limited: only the lines. The lock's thread (<see cref="Take"/>, after the
    /// release) reads the clock once and does one compare-and-swap for a line written, for a line held back
    /// at most two (the largest hold and wait) and an increment; nothing is allocated. Per site, lines written and the counts of its roll-ups add up to its slow locks.
    /// </summary>
    [CompilerGenerated]
    internal sealed class LineLimit
    {
        /// <summary>Lines a site writes in a row before the rate holds them back (refilled at the rate).</summary>
        internal const int Burst = 10;

        /// <summary>Seconds between two roll-ups of a copy's held-back lines.</summary>
        internal const int RollUpS = 10;

        /// <summary>Per site id, the time (<see cref="Clock"/> ticks) at which its bucket is full again: a line is written while that is at most <see cref="tolerance"/> ahead.</summary>
        readonly long[] due;
        /// <summary>Per site id, the slow locks held back since the last roll-up, and the largest hold and wait among them (ns; -1: none).</summary>
        readonly long[] heldBack, maxHold, maxWait;
        /// <summary>Ticks a line takes from the bucket (one over the rate), and how far ahead <see cref="due"/> may be for a line to be written.</summary>
        readonly long interval, tolerance;
        readonly long frequency, rollUpTicks;
        /// <summary>The time of the last roll-up (or of the start), written by the roll-up only.</summary>
        long last;

        /// <summary>
        /// A limit of <paramref name="perSecond"/> lines a second per site (0: the first <see cref="Burst"/> only,
        /// then roll-ups) for <paramref name="sites"/> sites, on a clock of <paramref name="frequency"/> ticks a second,
        /// from <paramref name="now"/> (ticks).
        /// </summary>
        internal LineLimit(int sites, double perSecond, long frequency, long now)
        {
            due = new long[sites];
            heldBack = new long[sites];
            maxHold = new long[sites];
            maxWait = new long[sites];
            for (int i = 0; i < sites; i++) {
                maxHold[i] = -1;
                maxWait[i] = -1;
            }
            this.frequency = Math.Max(1, frequency);
            long never = long.MaxValue / (4 * Burst); /* no line again: far enough, and no overflow below */
            double t = perSecond > 0 ? this.frequency / perSecond : never;
            interval = t >= never ? never : Math.Max(1, (long)t);
            tolerance = (Burst - 1) * interval;
            rollUpTicks = RollUpS * this.frequency;
            last = now;
        }

        /// <summary>
        /// The limit of <paramref name="settings"/> for <paramref name="sites"/> sites, or null when every line is
        /// written (<see cref="Settings.LinesPerSecond"/> infinite: LOCKTIME_LINES=all).
        /// </summary>
        internal static LineLimit Of(Settings settings, int sites, long frequency)
        {
            if (double.IsPositiveInfinity(settings.LinesPerSecond))
                return null;
            return new LineLimit(sites, settings.LinesPerSecond, frequency, Clock.Ticks());
        }

        /// <summary>
        /// Whether the slow lock of <paramref name="site"/> now gets its line: true when its site's bucket has a
        /// token (taken), else false, the lock counted as held back with its hold (<paramref name="holdNs"/>, -1:
        /// none) and wait (<paramref name="waitNs"/>) in ns. A site id out of range gets its line. Never throws,
        /// allocates nothing.
        /// </summary>
        internal bool Take(int site, long holdNs, long waitNs)
        {
            return Take(site, holdNs, waitNs, Clock.Ticks());
        }

        /// <summary>As <see cref="Take(int, long, long)"/> at time <paramref name="now"/> (ticks).</summary>
        internal bool Take(int site, long holdNs, long waitNs, long now)
        {
            if ((uint)site >= (uint)due.Length)
                return true;
            long full = Volatile.Read(ref due[site]);
            while (full - now <= tolerance) {
                long seen = Interlocked.CompareExchange(ref due[site], Math.Max(full, now) + interval, full);
                if (seen == full)
                    return true;
                full = seen;
            }
            /* the largest first, then the count: a roll-up that counts this lock has its hold and wait */
            Max(ref maxHold[site], holdNs);
            Max(ref maxWait[site], waitNs);
            Interlocked.Increment(ref heldBack[site]);
            return false;
        }

        /// <summary>Raises <paramref name="at"/> to <paramref name="value"/> when that is larger (any number of threads).</summary>
        static void Max(ref long at, long value)
        {
            long seen = Volatile.Read(ref at);
            while (value > seen) {
                long was = Interlocked.CompareExchange(ref at, value, seen);
                if (was == seen)
                    return;
                seen = was;
            }
        }

        /// <summary>True when <see cref="RollUpS"/> seconds have passed at <paramref name="now"/> (ticks) since the last roll-up.</summary>
        internal bool Due(long now)
        {
            return now - Volatile.Read(ref last) >= rollUpTicks;
        }

        /// <summary>
        /// The roll-up at <paramref name="now"/> (ticks): for each site that held lines back since the last one,
        /// in site order, <c>LockTime: M had N more slow locks at L in the last S s, max hold H ms, max wait W ms</c>
        /// (<paramref name="methods"/>, <paramref name="locations"/> by site id as the slow-lock lines name them;
        /// <c>1 more slow lock</c>; no max hold when none of them held the lock: failed tries, a counting
        /// semaphore's), S the seconds since the last roll-up to a tenth; the counts start again from 0. One
        /// thread at a time (the run-time's thread, or the exit); a lock held back meanwhile is in this roll-up or
        /// the next, never both.
        /// </summary>
        internal List<string> RollUp(long now, string[] methods, string[] locations)
        {
            List<string> lines = new List<string>();
            string span = Seconds(now - Volatile.Read(ref last));
            Volatile.Write(ref last, now);
            for (int site = 0; site < heldBack.Length; site++) {
                if (Volatile.Read(ref heldBack[site]) == 0)
                    continue;
                long n = Interlocked.Exchange(ref heldBack[site], 0);
                long hold = Interlocked.Exchange(ref maxHold[site], -1), wait = Interlocked.Exchange(ref maxWait[site], -1);
                lines.Add("LockTime: " + methods[site] + " had " + n.ToString(CultureInfo.InvariantCulture) +
                          (n == 1 ? " more slow lock at " : " more slow locks at ") + locations[site] + " in the last " + span + " s" +
                          (hold >= 0 ? ", max hold " + LineWriter.Ms(hold) + " ms" : "") + ", max wait " + LineWriter.Ms(Math.Max(0, wait)) + " ms");
            }
            return lines;
        }

        /// <summary><paramref name="ticks"/> as seconds with one decimal, rounded (<c>10.0</c>).</summary>
        string Seconds(long ticks)
        {
            long tenths = ticks <= 0 ? 0 : (long)(ticks * 10.0 / frequency + 0.5);
            return (tenths / 10).ToString(CultureInfo.InvariantCulture) + "." + (tenths % 10).ToString(CultureInfo.InvariantCulture);
        }
    }
}
