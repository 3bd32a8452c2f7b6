// StacksTests.cs - the call stacks of slow acquisitions: captured on the lock's thread, named as written, counted
// by role, bounded (stacks kept per role, captures a second), carried between copies, merged over threads.
using System.Runtime.CompilerServices;
using Xunit;

namespace LockTime.Runtime.Tests;

public class StacksTests
{
    [Theory]
    [InlineData("<Main>b__0_0", "Main (lambda)")]
    [InlineData("<Main>g__Work|0_1", "Main > Work")]
    [InlineData("<<Main>b__0_0>g__Inner|0_2", "Main (lambda) > Inner")]
    [InlineData("Reserve", "Reserve")]
    [InlineData("<>m__Finally1", "<>m__Finally1")]
    [InlineData("<Weird", "<Weird")]
    public void CompilerGeneratedNamesAreTheMethodsTheUserWrote(string name, string written)
    {
        Assert.Equal(written, StackCapture.Generated(name));
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static StackEntry Caller() => StackCapture.Take(8, "T::Site", "/src/F.cs", 7);

    private static async Task<StackEntry> CallerAsync()
    {
        await Task.Yield();
        return Caller();
    }

    [Fact]
    public void TheStackStartsAtTheSiteThenItsCallersWithFilesAndLines()
    {
        var e = Caller();
        Assert.Equal(StackSet.Captured, e.What);
        Assert.Equal("T::Site", e.Methods[0]); // the innermost frame is the site, named as the site
        Assert.Equal(("/src/F.cs", 7), (e.Files[0], e.Lines[0]));
        // Caller, where the "lock" is, is the site; its caller comes next, with its file and line
        Assert.Equal("LockTime.Runtime.Tests.StacksTests::TheStackStartsAtTheSiteThenItsCallersWithFilesAndLines", e.Methods[1]);
        Assert.EndsWith("StacksTests.cs", e.Files[1]);
        Assert.True(e.Lines[1] > 0);
        Assert.True(e.Methods.Length <= 8);
        Assert.Equal(StackSet.KeyOf(e.Methods, e.Files, e.Lines), e.Key);
    }

    [Fact]
    public async Task AnAsyncMethodsMoveNextIsNamedAsTheMethod()
    {
        var e = await CallerAsync();
        Assert.Equal("LockTime.Runtime.Tests.StacksTests::CallerAsync", e.Methods[1]); // after the await: the pool's frames follow
        Assert.DoesNotContain(e.Methods, m => m.Contains("MoveNext") && m.Contains("StacksTests"));
    }

    [Fact]
    public void ADepthOfOneKeepsTheSiteOnly()
    {
        var e = StackCapture.Take(1, "T::Site", "", 0);
        Assert.Single(e.Methods);
        Assert.Equal("T::Site", e.Methods[0]);
        Assert.EndsWith("StacksTests.cs", e.Files[0]); // a site without a line keeps its frame's own file and line
    }

    private static StackEntry Stack(params string[] methods) =>
        new() { What = StackSet.Captured, Methods = methods, Files = new string[methods.Length], Lines = new int[methods.Length],
                Key = string.Join("\n", methods) };

    [Fact]
    public void PastTheStacksKeptPerRoleTheRestAreOtherAndTheCountsStayExact()
    {
        var set = new StackSet();
        for (int i = 0; i < StackSet.MaxPerRole + 5; i++)
            for (int k = 0; k <= i % 3; k++)
                set.Add(StackSet.Holder, Stack("T::Site", "Caller" + i), 1, 0, 10, true);
        set.Add(StackSet.Waiter, Stack("T::Site", "Caller0"), 1, 7, 10, true);
        var holders = set.Sorted().Where(e => e.Role == StackSet.Holder).ToList();
        Assert.Equal(StackSet.MaxPerRole, holders.Count(e => e.What == StackSet.Captured));
        var other = holders.Single(e => e.What == StackSet.Other);
        int all = Enumerable.Range(0, StackSet.MaxPerRole + 5).Sum(i => i % 3 + 1);
        Assert.Equal(all, holders.Sum(e => e.Count));
        Assert.Equal(10L * all, holders.Sum(e => e.HoldNs));
        Assert.Null(other.Methods);
        Assert.Equal(StackSet.Waiter, set.Sorted()[0].Role); // waiters first
        Assert.Equal(7, set.Sorted()[0].WaitNs);
    }

    [Fact]
    public void ARowCarriesTheStacksToAnotherCopy()
    {
        var set = new StackSet();
        set.Add(StackSet.Waiter, Stack("T::Site", "A"), 2, 30, 4, true);
        set.Add(StackSet.Holder, StackSet.Special(StackSet.NotCaptured), 3, 0, 90, true);
        var back = new StackSet();
        back.AddRow(set.ToRow());
        back.AddRow(set.ToRow());
        var e = back.Sorted();
        Assert.Equal(2, e.Length);
        Assert.Equal((4L, 60L, 8L), (e[0].Count, e[0].WaitNs, e[0].HoldNs));
        Assert.Equal(new[] { "T::Site", "A" }, e[0].Methods);
        Assert.Equal((StackSet.NotCaptured, 6L, 180L), (e[1].What, e[1].Count, e[1].HoldNs));
        back.AddRow(new object[] { new object?[] { new long[] { 5, 0, 1, 1, 1 }, null, null, null }, "junk" }); // another layout: passed over
        Assert.Equal(2, back.N);
    }

    [Fact]
    public void SlowAcquisitionsRecordTheirStacksByRoleFastOnesNone()
    {
        var lines = new List<object[]>();
        var c = CollectorTests.Make(2, 1, lines); // 1 ms
        var t = c.Thread();
        c.Released(t, CollectorTests.F(0, 0, 0), 100_000);                                   // fast: nothing
        c.Released(t, CollectorTests.F(0, 2_000_000, 2_000_000, contended: true), 2_100_000); // a slow wait
        c.Released(t, CollectorTests.F(0, 0, 0), 3_000_000);                                  // a slow hold
        c.Released(t, CollectorTests.F(1, 0, 2_000_000, contended: true), 5_000_000);         // both
        c.Failed(t, 1, 4_000_000, null, false);                                                      // a slow failed try: a waiter
        var sum = c.Merge();
        var s0 = sum[0].Stacks.Sorted();
        Assert.Equal(new[] { (StackSet.Waiter, 1L, 2_000_000L, 100_000L), (StackSet.Holder, 1L, 0L, 3_000_000L) },
                     s0.Select(e => (e.Role, e.Count, e.WaitNs, e.HoldNs)).ToArray());
        Assert.Equal("T::M0", s0[0].Methods[0]);
        Assert.Equal(3, sum[0].Acquisitions); // the fast one counted too, without a stack
        var s1 = sum[1].Stacks.Sorted();
        Assert.Equal(new[] { (StackSet.Waiter, 2L, 6_000_000L), (StackSet.Holder, 1L, 2_000_000L) },
                     s1.Select(e => (e.Role, e.Count, e.WaitNs)).ToArray());
    }

    [Fact]
    public void CapturesPastTheLimitASecondAreCountedAsNotCaptured()
    {
        var lines = new List<object[]>();
        var c = CollectorTests.Make(1, 1, lines);
        var t = c.Thread();
        int n = Collector.CapturesPerSecond * 3;
        for (int i = 0; i < n; i++)
            c.Released(t, CollectorTests.F(0, 0, 0), 2_000_000);
        var holders = c.Merge()[0].Stacks.Sorted();
        long captured = holders.Where(e => e.What == StackSet.Captured).Sum(e => e.Count);
        long missed = holders.Where(e => e.What == StackSet.NotCaptured).Sum(e => e.Count);
        Assert.Equal(n, captured + missed);
        Assert.InRange(captured, 1, 2 * Collector.CapturesPerSecond); // the loop may cross one second's end
        Assert.Equal(2_000_000L * n, holders.Sum(e => e.HoldNs));
    }

    [Fact]
    public void ADepthOfZeroCapturesNothing()
    {
        var lines = new List<object[]>();
        var c = CollectorTests.Make(1, 1, lines);
        c.Settings.StackDepth = 0;
        var t = c.Thread();
        c.Released(t, CollectorTests.F(0, 0, 0), 2_000_000);
        Assert.Null(c.Merge()[0].Stacks);
        Assert.Single(lines); // the slow line all the same
    }
}
