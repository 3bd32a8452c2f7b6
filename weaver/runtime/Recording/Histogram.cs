// Histogram.cs - a log-linear histogram of durations: two significant digits from 100 ns to 1000 s.
using System.Runtime.CompilerServices;

namespace LockTime.Runtime
{
    /// <summary>
    /// Durations in nanoseconds, counted in buckets that keep two significant digits: decade d (0..9)
    /// covers [100 * 10^d, 1000 * 10^d) ns in 90 buckets of width 10^(d+1) ns, so 100 ns to 1000 s;
    /// values below 100 ns count in <see cref="Low"/>, values of 1000 s or more in the last bucket.
    /// Count, total and maximum are exact. A decade's buckets are allocated on its first value, so an
    /// uncontended lock's waits (all 0) cost no bucket memory. Recording is O(1) and takes no lock: one
    /// histogram is written by one thread; a reader on another thread sees counts at most one value
    /// behind (64-bit reads do not tear on 64-bit runtimes).
    /// </summary>
    [CompilerGenerated]
    internal sealed class Histogram
    {
        /// <summary>Decades of buckets (100 ns .. 1000 s).</summary>
        internal const int Decades = 10;

        /// <summary>Buckets per decade: leading digits 10..99.</summary>
        internal const int PerDecade = 90;

        /// <summary>Values below this many nanoseconds count in <see cref="Low"/>.</summary>
        internal const long LowLimit = 100;

        /// <summary>Length of <see cref="ToArray"/>: count, total, max, low, then every bucket.</summary>
        internal const int ArrayLength = 4 + Decades * PerDecade;

        internal long Count;
        internal long Total;
        internal long Max;
        internal long Low;
        internal readonly long[][] Rows = new long[Decades][];

        /// <summary>Counts one duration of <paramref name="ns"/> nanoseconds (negative counts as 0).</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal void Record(long ns)
        {
            if (ns < 0)
                ns = 0;
            Count++;
            Total += ns;
            if (ns > Max)
                Max = ns;
            if (ns < LowLimit)
                Low++;
            else
                Bucket(ns);
        }

        /// <summary>Counts a duration of at least <see cref="LowLimit"/> ns in its bucket. Most releases call it.</summary>
        void Bucket(long ns)
        {
            int d = 0;
            long unit = 10; /* bucket width of decade d, 10^(d+1) ns */
            while (d < Decades - 1 && ns >= unit * 100) {
                unit *= 10;
                d++;
            }
            long m = ns / unit; /* 10..99; more only in the last decade, clamped */
            if (m > 99)
                m = 99;
            long[] row = Rows[d];
            if (row == null) {
                row = new long[PerDecade];
                Rows[d] = row;
            }
            row[m - 10]++;
        }

        /// <summary>Adds every count of <paramref name="other"/> (merging is adding counts).</summary>
        internal void Add(Histogram other)
        {
            Count += other.Count;
            Total += other.Total;
            if (other.Max > Max)
                Max = other.Max;
            Low += other.Low;
            for (int d = 0; d < Decades; d++) {
                long[] from = other.Rows[d];
                if (from == null)
                    continue;
                long[] to = Rows[d];
                if (to == null) {
                    to = new long[PerDecade];
                    Rows[d] = to;
                }
                for (int k = 0; k < PerDecade; k++)
                    to[k] += from[k];
            }
        }

        /// <summary>
        /// The <paramref name="fraction"/> quantile (0.5 = median, 0.99 = p99) in nanoseconds: the
        /// bucket holding the value of rank ceil(fraction * n) in sorted order, given as the bucket's
        /// middle (within half a bucket, at most 5%, of the exact value), never above the maximum;
        /// for the values below 100 ns, 50 ns or the maximum if smaller; for the last bucket when the
        /// maximum is 1000 s or more, the maximum. The value of rank n (the largest: one value, or a
        /// fraction past the last but one) is the exact maximum, so one value gives p50 = p90 = p99 = max.
        /// 0 when nothing was counted.
        /// </summary>
        internal long Percentile(double fraction)
        {
            long n = Low;
            for (int d = 0; d < Decades; d++) {
                long[] row = Rows[d];
                if (row != null)
                    for (int k = 0; k < PerDecade; k++)
                        n += row[k];
            }
            if (n == 0)
                return 0;
            long rank = (long)System.Math.Ceiling(fraction * n);
            if (rank < 1)
                rank = 1;
            if (rank >= n)
                return Max;
            long seen = Low;
            if (rank <= seen)
                return System.Math.Min(LowLimit / 2, Max);
            long unit = 10;
            for (int d = 0; d < Decades; d++, unit *= 10) {
                long[] row = Rows[d];
                if (row == null)
                    continue;
                for (int k = 0; k < PerDecade; k++) {
                    seen += row[k];
                    if (rank > seen)
                        continue;
                    if (d == Decades - 1 && k == PerDecade - 1 && Max >= unit * 100)
                        return Max; /* the last bucket also holds everything from 1000 s: open-ended */
                    return System.Math.Min(Middle(d, k), Max);
                }
            }
            return Max;
        }

        /// <summary>The middle of bucket <paramref name="k"/> (0..89) of decade <paramref name="d"/> (0..9), in nanoseconds: <c>(k + 10.5) * 10^(d+1)</c>.</summary>
        internal static long Middle(int d, int k)
        {
            long unit = 10;
            for (int i = 0; i < d; i++)
                unit *= 10;
            return (k + 10) * unit + unit / 2;
        }

        /// <summary>The histogram as framework data: count, total, max, low, then the 900 buckets.</summary>
        internal long[] ToArray()
        {
            long[] a = new long[ArrayLength];
            a[0] = Count;
            a[1] = Total;
            a[2] = Max;
            a[3] = Low;
            for (int d = 0; d < Decades; d++) {
                long[] row = Rows[d];
                if (row != null)
                    System.Array.Copy(row, 0, a, 4 + d * PerDecade, PerDecade);
            }
            return a;
        }

        /// <summary>
        /// Adds a histogram given as <see cref="ToArray"/> data (from another copy of the run-time).
        /// Returns false, adding nothing, when the array has another length.
        /// </summary>
        internal bool AddArray(long[] a)
        {
            if (a == null || a.Length != ArrayLength)
                return false;
            Count += a[0];
            Total += a[1];
            if (a[2] > Max)
                Max = a[2];
            Low += a[3];
            for (int d = 0; d < Decades; d++) {
                long[] row = null;
                for (int k = 0; k < PerDecade; k++) {
                    long v = a[4 + d * PerDecade + k];
                    if (v == 0)
                        continue;
                    if (row == null) {
                        row = Rows[d];
                        if (row == null) {
                            row = new long[PerDecade];
                            Rows[d] = row;
                        }
                    }
                    row[k] += v;
                }
            }
            return true;
        }
    }
}
