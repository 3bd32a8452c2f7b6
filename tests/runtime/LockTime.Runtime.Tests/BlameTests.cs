// BlameTests.cs - a contended wait shared among the holders that told their part of it (Blame).
using LockTime.Runtime;
using Xunit;

namespace LockTime.Runtime.Tests;

public class BlameTests
{
    const long Ms = 1_000_000; // ticks of the tests' collectors (1 ns) and of Clock on Linux

    // The calling thread begins to wait for `gate` at site `site` (its record listed in c); returns when the wait began (ticks).
    static (ThreadRecord w, long began) Wait(Collector c, object gate, int site, byte mode = Frame.Exclusive)
    {
        ThreadRecord w = c.Thread();
        w.BeginWait(site, gate, mode);
        return (w, w.WaitingSince);
    }

    // The waiter w acquires `gate` at site `site` `waitMs` after its wait began and releases it 1 ms later: the wait is
    // charged. Returns its statistics.
    static SiteStats AcquiredAndReleased(Collector c, ThreadRecord w, object gate, int site, long began, long waitMs, byte mode = Frame.Exclusive)
    {
        w.Push(gate, site, began + waitMs * Ms, waitMs * Ms, true, mode);
        c.Released(w, w.Remove(w.Find(gate, mode)), began + (waitMs + 1) * Ms);
        return w.Stats(site);
    }

    [Fact]
    public void AWaitThroughThreeHoldsInTurnIsSharedAmongThemAndNamesTheLongest()
    {
        var lines = new List<object[]>();
        var c = CollectorTests.Make(4, 0, lines);
        object gate = new();
        var (w, began) = Wait(c, gate, 3);
        var other = new ThreadRecord(4); // the holders' thread: any record but the waiter's
        Blame.Released(c, other, gate, 0, Frame.Exclusive, began - 5 * Ms, began + 10 * Ms); // held before the wait began: 10 ms of it
        Blame.Released(c, other, gate, 1, Frame.Exclusive, began + 10 * Ms, began + 40 * Ms); // 30 ms
        w.Push(gate, 3, began + 60 * Ms, 60 * Ms, true, Frame.Exclusive); // the waiter has it before the last holder told (it tells after its release)
        Blame.Released(c, other, gate, 2, Frame.Exclusive, began + 40 * Ms, began + 58 * Ms); // 18 ms, and the hand-over after its release: 2
        Blame.Released(c, other, gate, 0, Frame.Exclusive, began + 62 * Ms, began + 70 * Ms); // held after the waiter: nothing
        Frame f = w.Remove(w.Find(gate, Frame.Exclusive));
        c.Released(w, f, began + 61 * Ms);

        SiteStats s = w.Stats(3);
        var shares = Enumerable.Range(0, s.HolderN).ToDictionary(i => s.Holders[i][2], i => (s.HolderWait[i] / Ms, s.HolderCount[i]));
        Assert.Equal(new Dictionary<string, (long, long)> { ["F.cs:1"] = (10, 0), ["F.cs:2"] = (30, 1), ["F.cs:3"] = (20, 0) }, shares);
        Assert.Equal(new[] { "LockTime: T::M3 held 1.000 ms, waited 60.000 ms at F.cs:4 (held by T::M1 at F.cs:2)" },
                     lines.Select(LineWriter.Format).ToArray());
        Assert.Null(w.WaitingFor); // charged: the next holders tell it nothing
    }

    [Fact]
    public void ReadersHoldingTogetherShareTheWaitScaledToIt()
    {
        var lines = new List<object[]>();
        var c = CollectorTests.Make(3, 1000, lines);
        object rw = new();
        var (w, began) = Wait(c, rw, 2); // a writer
        var other = new ThreadRecord(3);
        Blame.Released(c, other, rw, 0, Frame.Read, began - Ms, began + 10 * Ms);
        Blame.Released(c, other, rw, 1, Frame.Read, began - Ms, began + 10 * Ms);
        SiteStats s = AcquiredAndReleased(c, w, rw, 2, began, 10);
        Assert.Equal(2, s.HolderN);
        Assert.Equal(10 * Ms, s.HolderWait[0] + s.HolderWait[1]); // 10 + 10 told, the wait 10
        Assert.Equal(1L, s.HolderCount[0] + s.HolderCount[1]); // one wait: counted once
    }

    [Fact]
    public void AReaderWaitsBehindAWriterNotBehindReaders()
    {
        var c = CollectorTests.Make(3, 1000, new List<object[]>());
        object rw = new();
        var (w, began) = Wait(c, rw, 2, Frame.Read);
        var other = new ThreadRecord(3);
        Blame.Released(c, other, rw, 0, Frame.Read, began, began + 5 * Ms);      // a reader does not block a reader
        Blame.Released(c, other, new object(), 1, Frame.Exclusive, began, began + 5 * Ms); // another lock
        Blame.Released(c, other, rw, 1, Frame.Exclusive, began, began + 8 * Ms); // the writer
        SiteStats s = AcquiredAndReleased(c, w, rw, 2, began, 8, Frame.Read);
        Assert.Equal(1, s.HolderN);
        Assert.Equal(("F.cs:2", 8 * Ms, 1L), (s.Holders[0][2], s.HolderWait[0], s.HolderCount[0]));
    }

    [Fact]
    public void AHolderInMonitorWaitIsNoHolderMeanwhile()
    {
        // the consumer holds the gate 100 ms, enters Monitor.Wait; the producer holds it 95 ms of the waiter's wait; the
        // consumer comes back and holds it 30 ms more: the waiter waited 90 ms behind the producer, 30 behind the consumer
        var c = CollectorTests.Make(3, 1000, new List<object[]>());
        object gate = new();
        var (w, began) = Wait(c, gate, 2);
        var consumer = new ThreadRecord(3);
        consumer.Push(gate, 0, began - 110 * Ms, 0, false, Frame.Exclusive);
        Blame.GivenUp(c, consumer, gate, began - 10 * Ms); // its first stretch: before the wait began
        consumer.SetInWait(gate, true);
        Blame.Released(c, new ThreadRecord(3), gate, 1, Frame.Exclusive, began - 5 * Ms, began + 90 * Ms);
        consumer.Resume(gate, 100 * Ms, began + 90 * Ms);
        Frame f = consumer.Remove(consumer.Find(gate, Frame.Exclusive));
        Assert.Equal((130 * Ms, began + 90 * Ms), (began + 120 * Ms - f.Acquired, consumer.Stretch(f.Lock, f.Acquired))); // held 100 + 30 ms, from 90 on without a break
        Blame.Released(c, consumer, gate, 0, f.Mode, consumer.Stretch(f.Lock, f.Acquired), began + 120 * Ms);
        SiteStats s = AcquiredAndReleased(c, w, gate, 2, began, 121);
        var shares = Enumerable.Range(0, s.HolderN).ToDictionary(i => s.Holders[i][2], i => (s.HolderWait[i] / Ms, s.HolderCount[i]));
        Assert.Equal(new Dictionary<string, (long, long)> { ["F.cs:2"] = (90, 1), ["F.cs:1"] = (31, 0) }, shares);
    }

    [Fact]
    public void AWaiterThatEntersMonitorWaitIsChargedForItsWaitNotForItsTimeInWait()
    {
        // the waiter waited 90 ms behind the producer, took the gate, then spent 100 ms in Monitor.Wait while another
        // thread held it 90 ms: its wait is the 90 ms before it took the gate
        var c = CollectorTests.Make(3, 1000, new List<object[]>());
        object gate = new();
        var (w, began) = Wait(c, gate, 2);
        Blame.Released(c, new ThreadRecord(3), gate, 1, Frame.Exclusive, began - 5 * Ms, began + 90 * Ms);
        w.Push(gate, 2, began + 90 * Ms, 90 * Ms, true, Frame.Exclusive);
        w.SetInWait(gate, true);
        Blame.Released(c, new ThreadRecord(3), gate, 0, Frame.Exclusive, began + 95 * Ms, began + 185 * Ms);
        w.Resume(gate, 100 * Ms, began + 191 * Ms);
        c.Released(w, w.Remove(w.Find(gate, Frame.Exclusive)), began + 192 * Ms);
        SiteStats s = w.Stats(2);
        Assert.Equal(1, s.HolderN);
        Assert.Equal(("F.cs:2", 90 * Ms, 1L), (s.Holders[0][2], s.HolderWait[0], s.HolderCount[0]));
    }

    [Fact]
    public void WhatNoHolderToldGoesToTheHolderFoundAtTheStart()
    {
        var lines = new List<object[]>();
        var c = CollectorTests.Make(3, 1000, lines);
        object gate = new();
        var (w, began) = Wait(c, gate, 2);
        w.Behind = c.HolderNames[0]; // found as the wait began (a holder in another woven assembly tells nothing)
        Blame.Released(c, new ThreadRecord(3), gate, 1, Frame.Exclusive, began + 4 * Ms, began + 10 * Ms);
        SiteStats s = AcquiredAndReleased(c, w, gate, 2, began, 10);
        var shares = Enumerable.Range(0, s.HolderN).ToDictionary(i => s.Holders[i][2], i => (s.HolderWait[i] / Ms, s.HolderCount[i]));
        Assert.Equal(new Dictionary<string, (long, long)> { ["F.cs:2"] = (6, 1), ["F.cs:1"] = (4, 0) }, shares);
    }

    [Fact]
    public void AHoldLoggedAfterALaterOneStillGetsItsShare()
    {
        // the first holder's thread was preempted between its release and its log: the next hold is logged first
        var c = CollectorTests.Make(3, 1000, new List<object[]>());
        object gate = new();
        var (w, began) = Wait(c, gate, 2);
        Blame.Released(c, new ThreadRecord(3), gate, 1, Frame.Exclusive, began + 10 * Ms, began + 20 * Ms);
        Blame.Released(c, new ThreadRecord(3), gate, 0, Frame.Exclusive, began - 5 * Ms, began + 10 * Ms);
        SiteStats s = AcquiredAndReleased(c, w, gate, 2, began, 20);
        var shares = Enumerable.Range(0, s.HolderN).ToDictionary(i => s.Holders[i][2], i => s.HolderWait[i] / Ms);
        Assert.Equal(new Dictionary<string, long> { ["F.cs:1"] = 10, ["F.cs:2"] = 10 }, shares);
    }

    [Fact]
    public void HoldsOfAnotherLockInTheSameLogAreNotShares()
    {
        var c = CollectorTests.Make(3, 1000, new List<object[]>());
        object gate = new();
        int key = System.Runtime.CompilerServices.RuntimeHelpers.GetHashCode(gate);
        object other;
        do // a lock whose hash picks the same log
            other = new object();
        while (((System.Runtime.CompilerServices.RuntimeHelpers.GetHashCode(other) ^ key) & (Blame.Logs - 1)) != 0 ||
               System.Runtime.CompilerServices.RuntimeHelpers.GetHashCode(other) == key);
        var (w, began) = Wait(c, gate, 2);
        Blame.Released(c, new ThreadRecord(3), other, 0, Frame.Exclusive, began, began + 9 * Ms); // the other lock: not a share
        Blame.Released(c, new ThreadRecord(3), gate, 1, Frame.Exclusive, began, began + 6 * Ms);
        SiteStats s = AcquiredAndReleased(c, w, gate, 2, began, 6);
        Assert.Equal(1, s.HolderN);
        Assert.Equal(("F.cs:2", 6 * Ms, 1L), (s.Holders[0][2], s.HolderWait[0], s.HolderCount[0]));
    }

    [Fact]
    public void AWaitThroughMoreHoldsThanTheLogKeepsIsStillChargedWhole()
    {
        // 40 holds of 1 ms in turn during a 40 ms wait: the log keeps the last 32, a wait takes 16 shares, the rest goes
        // to the holder that released last
        var c = CollectorTests.Make(3, 1000, new List<object[]>());
        object gate = new();
        var (w, began) = Wait(c, gate, 2);
        for (int i = 0; i < 40; i++)
            Blame.Released(c, new ThreadRecord(3), gate, i % 2, Frame.Exclusive, began + i * Ms, began + (i + 1) * Ms);
        SiteStats s = AcquiredAndReleased(c, w, gate, 2, began, 40);
        Assert.Equal(2, s.HolderN);
        Assert.Equal(40 * Ms, s.HolderWait[0] + s.HolderWait[1]); // the whole wait, charged once
        Assert.Equal(1L, s.HolderCount[0] + s.HolderCount[1]);
    }

    [Fact]
    public void AWaitThroughMoreHoldsThanTheLogKeepsIsNotLeftToItsFirstHolder()
    {
        // found as the wait began: site 0's 8 ms hold, then 40 holds of 1 ms at site 1: the log has only site 1's
        var c = CollectorTests.Make(3, 1000, new List<object[]>());
        object gate = new();
        var (w, began) = Wait(c, gate, 2);
        w.Behind = c.HolderNames[0];
        Blame.Released(c, new ThreadRecord(3), gate, 0, Frame.Exclusive, began - Ms, began + 8 * Ms);
        for (int i = 0; i < 40; i++)
            Blame.Released(c, new ThreadRecord(3), gate, 1, Frame.Exclusive, began + (8 + i) * Ms, began + (9 + i) * Ms);
        SiteStats s = AcquiredAndReleased(c, w, gate, 2, began, 48);

        var shares = Enumerable.Range(0, s.HolderN).ToDictionary(i => s.Holders[i][2], i => (s.HolderWait[i] / Ms, s.HolderCount[i]));
        Assert.Equal(new Dictionary<string, (long, long)> { ["F.cs:2"] = (48, 1) }, shares); // before: 32 ms to F.cs:1
    }
}
