// ReentryTests.cs - a lock taken again by the thread that holds it is no new hold: the recursion of a
// Monitor and of ReaderWriterLockSlim's locks through a copy of the run-time's entry points, as the stubs call them;
// and a SpinLock without owner tracking exited by another thread than the one that entered it.
using System.Diagnostics;
using System.Text.Json.Nodes;
using Xunit;

namespace LockTime.Runtime.Tests;

public class ReentryTests : IDisposable
{
    private readonly string dir = Directory.CreateTempSubdirectory("lt-reentry").FullName;
    private readonly string slot = "LockTime.Tests.Reentry." + Guid.NewGuid().ToString("N");

    public void Dispose()
    {
        AppDomain.CurrentDomain.SetData(slot, null);
        Directory.Delete(dir, true);
    }

    private string Sink => Path.Combine(dir, "locks.log");
    private string Report => Path.Combine(dir, "run.json");

    // A copy at threshold 0 (a line per hold) writing its lines and report into dir.
    private RuntimeCopy Start(int sites)
    {
        var copy = new RuntimeCopy("reentry");
        Assert.False(copy.Start("App", sites, slot, Sink, report: Report, threshold: "0"));
        return copy;
    }

    private JsonNode Site(int site)
    {
        string json = File.ReadAllText(Report);
        JsonTests.Validate(json);
        return JsonNode.Parse(json)!["sites"]!.AsArray().Single(s => (string)s!["method"]! == $"App.Type::M{site}")!;
    }

    private int Lines(int site) => File.ReadAllLines(Sink).Count(l => l.StartsWith($"LockTime: App.Type::M{site} held "));

    // Monitor.Enter's stub, the fast try taking it.
    private static void Enter(RuntimeCopy copy, object o, int site)
    {
        long t0 = copy.Ticks();
        Monitor.Enter(o);
        copy.Call("Api", "Acquired", o, site, t0, t0, false);
    }

    private static void Exit(RuntimeCopy copy, object o)
    {
        Monitor.Exit(o);
        copy.Call("Api", "Released", o, copy.Ticks());
    }

    private static void Recurse(RuntimeCopy copy, object o, int depth)
    {
        Enter(copy, o, 0);
        if (depth == 0)
            Thread.Sleep(10);
        else
            Recurse(copy, o, depth - 1);
        Exit(copy, o);
    }

    [Fact]
    public void AMonitorTakenAgainByItsHolderIsOneHold()
    {
        var copy = Start(1);
        object o = new();
        var watch = Stopwatch.StartNew();
        Recurse(copy, o, 1000); // 1,001 Enters on one thread, the innermost sleeping 10 ms
        double took = watch.Elapsed.TotalMilliseconds;
        copy.Finish();

        var site = Site(0);
        Assert.Equal(1, (long)site["acquisitions"]!);
        Assert.Equal(1000, (long)site["reentries"]!);
        Assert.Equal(0, (long)site["contended"]!);
        double hold = (double)site["hold_ms"]!["total"]!;
        Assert.True(hold >= 10 && hold <= took, $"held {hold} ms in all, the recursion took {took} ms");
        Assert.Equal(1, site["hold_histogram"]!.AsArray().Sum(b => (long)b![1]!));
        Assert.Equal(0, (long)site["held_now"]!["count"]!);
        Assert.Equal(1, Lines(0)); // one slow-lock line, the outermost hold's
    }

    [Fact]
    public void AReentryHeldNowIsNotASecondHold()
    {
        var copy = Start(2);
        object o = new();
        Enter(copy, o, 0);
        Enter(copy, o, 1); // a re-entry at another site
        copy.Finish();     // the report while both are held
        Exit(copy, o);
        Exit(copy, o);

        var outer = Site(0);
        Assert.Equal(1, (long)outer["held_now"]!["count"]!);
        Assert.Equal(0, (long)outer["acquisitions"]!);
        Assert.Throws<InvalidOperationException>(() => Site(1)); // the re-entry's site holds nothing yet: not listed
    }

    [Fact]
    public void AReentryAddsNoLockOrderEdge()
    {
        var copy = Start(3);
        object a = new(), b = new();
        Enter(copy, a, 0);
        Enter(copy, b, 1);
        Enter(copy, a, 2); // a again while holding b: a re-entry, no order b then a
        Exit(copy, a);
        Exit(copy, b);
        Exit(copy, a);
        copy.Finish();

        var report = JsonNode.Parse(File.ReadAllText(Report))!;
        Assert.Equal(1, (long)report["lock_order"]!["edges"]!); // a then b only
        Assert.Empty(report["lock_order_cycles"]!.AsArray());
        Assert.DoesNotContain(File.ReadAllLines(Sink), l => l.Contains("potential deadlock"));
        Assert.Equal(1, (long)Site(2)["reentries"]!);
        Assert.Equal(0, (long)Site(2)["acquisitions"]!);
        Assert.Equal(1, (long)Site(0)["acquisitions"]!);
    }

    [Fact]
    public void ReaderWriterLockSlimRecursionIsOneHoldOfItsOutermostLock()
    {
        var copy = Start(4);
        using var rw = new ReaderWriterLockSlim(LockRecursionPolicy.SupportsRecursion);
        void Write(int depth)
        {
            long t0 = copy.Ticks();
            rw.EnterWriteLock();
            copy.Call("Api", "Acquired", rw, 0, t0, t0, false);
            if (depth > 0)
                Write(depth - 1);
            else
            {
                long r0 = copy.Ticks();
                rw.EnterReadLock(); // a read lock inside the write lock
                copy.Call("Api", "AcquiredRead", rw, 1, r0, r0, false);
                Thread.Sleep(10);
                rw.ExitReadLock();
                copy.Call("Api", "ReleasedRead", rw, copy.Ticks());
            }
            rw.ExitWriteLock();
            copy.Call("Api", "Released", rw, copy.Ticks());
        }
        void Read(int depth)
        {
            long t0 = copy.Ticks();
            rw.EnterReadLock();
            copy.Call("Api", "AcquiredRead", rw, 2, t0, t0, false);
            if (depth > 0)
                Read(depth - 1);
            else
                Thread.Sleep(10);
            rw.ExitReadLock();
            copy.Call("Api", "ReleasedRead", rw, copy.Ticks());
        }
        var watch = Stopwatch.StartNew();
        Write(100);
        double wrote = watch.Elapsed.TotalMilliseconds;
        watch.Restart();
        Read(100);
        double read = watch.Elapsed.TotalMilliseconds;
        copy.Finish();

        var write = Site(0);
        Assert.Equal(1, (long)write["acquisitions"]!);
        Assert.Equal(100, (long)write["reentries"]!);
        double held = (double)write["hold_ms"]!["total"]!;
        Assert.True(held >= 10 && held <= wrote, $"write lock held {held} ms, the recursion took {wrote} ms");
        Assert.Equal(0, (long)Site(1)["acquisitions"]!); // the read lock inside the write lock
        Assert.Equal(1, (long)Site(1)["reentries"]!);
        var reads = Site(2);
        Assert.Equal(1, (long)reads["acquisitions"]!);
        Assert.Equal(100, (long)reads["reentries"]!);
        held = (double)reads["hold_ms"]!["total"]!;
        Assert.True(held >= 10 && held <= read, $"read lock held {held} ms, the recursion took {read} ms");
        Assert.Equal(2, Lines(0) + Lines(1) + Lines(2));
    }

    [Fact]
    public void AWriteLockExitedBeforeTheReadLockInsideLeavesTheReadLockHeld()
    {
        var copy = Start(2);
        using var rw = new ReaderWriterLockSlim(LockRecursionPolicy.SupportsRecursion);
        var watch = Stopwatch.StartNew();
        long t0 = copy.Ticks();
        rw.EnterWriteLock();
        copy.Call("Api", "Acquired", rw, 0, t0, t0, false);
        t0 = copy.Ticks();
        rw.EnterReadLock();
        copy.Call("Api", "AcquiredRead", rw, 1, t0, t0, false);
        rw.ExitWriteLock(); // the downgrade: the read lock goes on
        copy.Call("Api", "Released", rw, copy.Ticks());
        var downgraded = Stopwatch.StartNew();
        Thread.Sleep(10);
        rw.ExitReadLock();
        copy.Call("Api", "ReleasedRead", rw, copy.Ticks());
        double readOnly = downgraded.Elapsed.TotalMilliseconds, took = watch.Elapsed.TotalMilliseconds;
        copy.Finish();

        var read = Site(1);
        Assert.Equal(1, (long)read["acquisitions"]!);
        Assert.Equal(0, (long)read["reentries"]!);
        double held = (double)read["hold_ms"]!["total"]!;
        Assert.True(held >= 10 && held <= took - (double)Site(0)["hold_ms"]!["total"]!,
                    $"read lock held {held} ms after the write lock's {Site(0)["hold_ms"]!["total"]} ms, of {took} ms (read only {readOnly} ms)");
        Assert.Equal(1, (long)Site(0)["acquisitions"]!);
    }

    // SpinLock.Enter's and Exit's stubs, given the SpinLock's address as the weaver's stubs pass it.
    private static void SpinEnter(RuntimeCopy copy, ref SpinLock spin, IntPtr address, int site)
    {
        bool taken = false;
        long t0 = copy.Ticks();
        spin.Enter(ref taken);
        copy.Call("Api", "AcquiredSpin", address, site, t0, t0, false);
    }

    private static void SpinExit(RuntimeCopy copy, ref SpinLock spin, IntPtr address)
    {
        spin.Exit();
        copy.Call("Api", "ReleasedSpin", address, copy.Ticks());
    }

    private static SpinLock handed = new(false), kept = new(false);

    [Fact]
    public void ASpinLockExitedByAnotherThreadIsHeldNoMore()
    {
        var copy = Start(3);
        IntPtr a = new(0x1000), b = new(0x2000); // two SpinLocks' addresses
        using var entered = new ManualResetEventSlim();
        using var exited = new ManualResetEventSlim();
        using var done = new ManualResetEventSlim();
        using var finished = new ManualResetEventSlim();
        var watch = Stopwatch.StartNew();
        var owner = new Thread(() =>
        {
            SpinEnter(copy, ref kept, b, 1);   // entered first, kept
            SpinEnter(copy, ref handed, a, 0); // exited by the test's thread
            entered.Set();
            exited.Wait();
            SpinEnter(copy, ref handed, a, 2); // taken again here, and exited here
            SpinExit(copy, ref handed, a);
            done.Set();
            finished.Wait(); // alive, holding `kept`, while the report is made
        });
        owner.Start();
        entered.Wait();
        Thread.Sleep(10);
        SpinExit(copy, ref handed, a);
        double took = watch.Elapsed.TotalMilliseconds;
        exited.Set();
        done.Wait();
        copy.Finish(); // the owner still holds `kept`
        finished.Set();
        owner.Join();

        var handedOff = Site(0);
        Assert.Equal(1, (long)handedOff["acquisitions"]!);
        Assert.Equal(0, (long)handedOff["held_now"]!["count"]!);
        double hold = (double)handedOff["hold_ms"]!["total"]!;
        Assert.True(hold >= 10 && hold <= took, $"held {hold} ms, entered and exited within {took} ms");
        Assert.Equal(1, (long)Site(2)["acquisitions"]!); // the owner's own Exit ended its own frame, not `kept`
        Assert.Equal(0, (long)Site(2)["held_now"]!["count"]!);
        var stillHeld = Site(1);
        Assert.Equal(1, (long)stillHeld["held_now"]!["count"]!);
        Assert.Equal(0, (long)stillHeld["acquisitions"]!);
    }

    [Theory]
    [InlineData(Frame.Exclusive, Frame.Exclusive, true)]
    [InlineData(Frame.Scope, Frame.Exclusive, true)]
    [InlineData(Frame.Exclusive, Frame.Scope, true)]
    [InlineData(Frame.Exclusive, Frame.Read, true)]
    [InlineData(Frame.Exclusive, Frame.Upgradeable, true)]
    [InlineData(Frame.Upgradeable, Frame.Read, true)]
    [InlineData(Frame.Upgradeable, Frame.Upgradeable, true)]
    [InlineData(Frame.Upgradeable, Frame.Exclusive, false)] // the upgrade waits for the readers: a hold of its own
    [InlineData(Frame.Read, Frame.Read, true)]
    public void AReentryIsATakingThatTheHoldCovers(byte held, byte taken, bool reentry)
    {
        var t = new ThreadRecord(2);
        object o = new();
        Assert.False(t.Push(o, 0, 0, 0, false, held));
        Assert.Equal(reentry, t.Push(o, 1, 0, 0, false, taken));
        Assert.False(t.Push(new object(), 1, 0, 0, false, taken)); // another lock: never
        Assert.False(t.Push(null, 1, 0, 0, false, Frame.Spin));   // a SpinLock: no object to tell
        t.SetInWait(o, true);                                       // inside Monitor.Wait, it holds no lock
        Assert.False(t.Push(o, 1, 0, 0, false, taken));
    }
}
