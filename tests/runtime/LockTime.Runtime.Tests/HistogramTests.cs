// HistogramTests.cs - percentiles against the exact sorted values, merging, the framework-data form.
using LockTime.Runtime;
using Xunit;

namespace LockTime.Runtime.Tests;

public class HistogramTests
{
    // Exact quantile as Histogram.Percentile defines it: the value of rank ceil(f * n).
    private static long Exact(long[] sorted, double f)
    {
        long rank = Math.Clamp((long)Math.Ceiling(f * sorted.Length), 1, sorted.Length);
        return sorted[rank - 1];
    }

    // Within half a bucket: 5% of the value, or under 100 ns for values below 100 ns.
    private static void Close(long exact, long got, string what)
    {
        double allowed = exact < Histogram.LowLimit ? Histogram.LowLimit : exact * 0.05;
        Assert.True(Math.Abs(got - exact) <= allowed, $"{what}: histogram {got} ns, exact {exact} ns (allowed {allowed})");
    }

    private static long[] LogUniform(Random rng, int n, double minNs, double maxNs)
    {
        var v = new long[n];
        for (int i = 0; i < n; i++)
            v[i] = (long)Math.Exp(Math.Log(minNs) + rng.NextDouble() * (Math.Log(maxNs) - Math.Log(minNs)));
        return v;
    }

    [Theory]
    [InlineData(1, 1000, 20.0, 2e9)]          // 20 ns .. 2 s
    [InlineData(2, 10000, 100.0, 1e12)]       // the whole range, 100 ns .. 1000 s
    [InlineData(3, 50, 1e5, 1e6)]             // few values in one decade
    [InlineData(4, 5000, 1.0, 99.0)]          // all below 100 ns
    [InlineData(5, 3000, 1e11, 5e12)]         // beyond 1000 s: the last bucket
    public void PercentilesMatchTheSortedValues(int seed, int n, double minNs, double maxNs)
    {
        var values = LogUniform(new Random(seed), n, minNs, maxNs);
        var h = new Histogram();
        foreach (var v in values)
            h.Record(v);
        Array.Sort(values);
        Assert.Equal(n, h.Count);
        Assert.Equal(values.Sum(), h.Total);
        Assert.Equal(values[^1], h.Max);
        foreach (var f in new[] { 0.5, 0.9, 0.99 })
        {
            long exact = Exact(values, f), got = h.Percentile(f);
            if (exact >= 990_000_000_000 && values[^1] >= 1_000_000_000_000)
                Assert.Equal(values[^1], got); // the last bucket is open-ended then: its quantiles are the max
            else
                Close(exact, got, $"p{f * 100}");
            Assert.True(got <= h.Max);
        }
    }

    [Fact]
    public void BucketEdgesKeepTwoSignificantDigits()
    {
        // A value alone, then beside a larger one: the median is in its bucket, never above the max.
        foreach (long v in new long[] { 100, 109, 110, 999, 1000, 1049, 99_999, 100_000, 123_456_789, 999_999_999_999 })
        {
            var h = new Histogram();
            h.Record(v);
            long alone = h.Percentile(0.5);
            Close(v, alone, $"{v} alone");
            Assert.True(alone <= v, $"{v} alone: {alone} is above the max");
            if (v * 10 >= 1_000_000_000_000)
                continue; // the open-ended last bucket: PercentilesMatchTheSortedValues covers it
            var two = new Histogram();
            two.Record(v);
            two.Record(v * 10);
            Close(v, two.Percentile(0.5), $"{v} beside {v * 10}");
        }
    }

    [Fact]
    public void OneValueGivesItselfAsEveryPercentile()
    {
        // 1.690 ms is in the bucket [1.6, 1.7) ms, whose middle is 1.650 ms: the only value is the max.
        foreach (long v in new long[] { 1_690_000, 42, 100, 199, 999_999_999_999, 3_000_000_000_000 })
        {
            var h = new Histogram();
            h.Record(v);
            foreach (var f in new[] { 0.0, 0.5, 0.9, 0.99, 1.0 })
                Assert.Equal(v, h.Percentile(f));
        }
    }

    [Fact]
    public void TheLargestRankIsTheMax()
    {
        var h = new Histogram();
        h.Record(1_000_000);
        h.Record(1_690_000);
        Assert.Equal(1_690_000, h.Percentile(0.99)); // rank ceil(0.99 * 2) = 2: the max
        Assert.Equal(1_050_000, h.Percentile(0.5));  // rank 1: the middle of [1.0, 1.1) ms
    }

    [Fact]
    public void EmptyAndZeroValues()
    {
        var h = new Histogram();
        Assert.Equal(0, h.Percentile(0.99));
        h.Record(0);
        h.Record(-5); // a clock step back counts as 0
        Assert.Equal(2, h.Count);
        Assert.Equal(2, h.Low);
        Assert.Equal(0, h.Max);
        Assert.Equal(0, h.Percentile(0.99));
        Assert.All(h.Rows, row => Assert.Null(row)); // no bucket memory for waits of 0
    }

    [Fact]
    public void MergingIsAddingCounts()
    {
        var rng = new Random(7);
        var a = LogUniform(rng, 2000, 50, 1e8);
        var b = LogUniform(rng, 3000, 1e3, 1e10);
        Histogram ha = new(), hb = new(), all = new();
        foreach (var v in a) { ha.Record(v); all.Record(v); }
        foreach (var v in b) { hb.Record(v); all.Record(v); }
        ha.Add(hb);
        Assert.Equal(all.ToArray(), ha.ToArray());
        var sorted = a.Concat(b).OrderBy(v => v).ToArray();
        Close(Exact(sorted, 0.99), ha.Percentile(0.99), "p99 of the merge");
    }

    [Fact]
    public void ArrayFormRoundTrips()
    {
        var h = new Histogram();
        foreach (var v in LogUniform(new Random(11), 500, 10, 1e11))
            h.Record(v);
        long[] a = h.ToArray();
        Assert.Equal(Histogram.ArrayLength, a.Length);
        var back = new Histogram();
        Assert.True(back.AddArray(a));
        Assert.Equal(a, back.ToArray());
        Assert.False(back.AddArray(new long[3]));
        Assert.Equal(a, back.ToArray()); // a bad array adds nothing
    }
}
