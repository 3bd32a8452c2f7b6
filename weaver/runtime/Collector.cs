// Collector.cs - one copy's statistics: recording after each release, and the merge over its threads.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>
    /// The state of one copy of the run-time (one woven assembly): its sites, threshold and sink, the
    /// record of every thread that took one of its locks, and where slow-lock lines go. Recording
    /// touches only the calling thread's <see cref="ThreadRecord"/>; only a thread's first record takes
    /// a lock (to list it), and a summary reads every thread's counts (<see cref="Merge"/>).
    /// </summary>
    [CompilerGenerated]
    internal sealed class Collector
    {
        internal readonly SiteTable Sites;
        internal readonly Settings Settings;
        /// <summary>Report threshold in ticks: a hold or wait at least this long gives a line.</summary>
        internal readonly long ThresholdTicks;
        /// <summary>Nanoseconds per tick of <see cref="Clock"/>.</summary>
        internal readonly double NsPerTick;

        /// <summary>The process's line queue: entries as <see cref="LineWriter.Entry"/> makes them.</summary>
        internal Action<object[]> Lines;
        /// <summary>The thread that writes lines: its own locks give no line (no feedback).</summary>
        internal Thread Writer;

        readonly List<ThreadRecord> threads = new List<ThreadRecord>();

        internal Collector(SiteTable sites, Settings settings, long frequency)
        {
            Sites = sites;
            Settings = settings;
            if (frequency <= 0)
                frequency = 1;
            NsPerTick = 1e9 / frequency;
            double t = settings.ThresholdMs * frequency / 1000.0;
            ThresholdTicks = t >= long.MaxValue ? long.MaxValue : (long)t;
        }

        /// <summary>The calling thread's record, made (and listed) on first use.</summary>
        internal ThreadRecord Thread()
        {
            ThreadRecord t = ThreadRecord.Current;
            if (t == null) {
                t = new ThreadRecord(Sites.Count());
                ThreadRecord.Current = t;
            }
            return t;
        }

        internal long Ns(long ticks)
        {
            return ticks <= 0 ? 0 : (long)(ticks * NsPerTick);
        }

        /// <summary>
        /// Records a released lock of <paramref name="site"/> (called after the release: nothing here
        /// lengthens the hold) and queues a line when hold or wait reached the threshold.
        /// </summary>
        internal void Released(ThreadRecord t, Frame f, long now)
        {
            SiteStats s = t.Stats(f.Site);
            if (s == null)
                return;
            List(t);
            long hold = now - f.Acquired;
            long holdNs = Ns(hold), waitNs = Ns(f.Wait);
            s.Acquisitions++;
            if (f.Contended)
                s.Contended++;
            s.Wait.Record(waitNs);
            s.Hold.Record(holdNs);
            if (hold >= ThresholdTicks || f.Wait >= ThresholdTicks)
                Slow(f.Site, holdNs, waitNs);
        }

        /// <summary>Records a TryEnter of <paramref name="site"/> that did not acquire, after waiting <paramref name="waitTicks"/>.</summary>
        internal void Failed(ThreadRecord t, int site, long waitTicks)
        {
            SiteStats s = t.Stats(site);
            if (s == null)
                return;
            List(t);
            s.Failed++;
            if (waitTicks >= ThresholdTicks)
                Slow(site, -1, Ns(waitTicks));
        }

        void List(ThreadRecord t)
        {
            if (t.Listed)
                return;
            lock (threads)
                threads.Add(t);
            t.Listed = true;
        }

        /// <summary>Queues the line of a slow lock; <paramref name="holdNs"/> -1 = not acquired.</summary>
        void Slow(int site, long holdNs, long waitNs)
        {
            Action<object[]> lines = Lines;
            if (lines == null || ReferenceEquals(System.Threading.Thread.CurrentThread, Writer))
                return;
            lines(LineWriter.Entry(Settings.Output, Sites.Methods[site], Sites.Locations[site], holdNs, waitNs));
        }

        /// <summary>The statistics of every site summed over every thread, by site id (null where none).</summary>
        internal SiteStats[] Merge()
        {
            ThreadRecord[] all;
            lock (threads)
                all = threads.ToArray();
            SiteStats[] sum = new SiteStats[Sites.Count()];
            for (int i = 0; i < all.Length; i++) {
                SiteStats[] mine = all[i].Sites;
                for (int site = 0; site < sum.Length && site < mine.Length; site++) {
                    SiteStats s = mine[site];
                    if (s == null)
                        continue;
                    if (sum[site] == null)
                        sum[site] = new SiteStats();
                    sum[site].Add(s);
                }
            }
            return sum;
        }

        /// <summary>
        /// This copy's sites that recorded anything, as framework data for the registry
        /// (<see cref="SiteTotals.ToRow"/>): what another copy's summary reads.
        /// </summary>
        internal object[] Snapshot()
        {
            SiteStats[] sum = Merge();
            List<object> rows = new List<object>();
            for (int site = 0; site < sum.Length; site++)
                if (sum[site] != null && !sum[site].IsEmpty())
                    rows.Add(SiteTotals.ToRow(Sites, site, sum[site]));
            return rows.ToArray();
        }
    }
}
