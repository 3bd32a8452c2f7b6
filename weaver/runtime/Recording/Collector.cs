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
    /// a lock (to list it), and a summary reads every thread's counts (<see cref="Merge"/>). A thread
    /// about to wait reads the listed records' frames to find who holds its lock (<see cref="Holder"/>). The
    /// record of a thread that has ended is folded into per-site totals and taken off the list
    /// (<see cref="Sweep(bool)"/>): a program that makes threads keeps no record per thread it ever ran.
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
        /// <summary>A tick is a nanosecond (Stopwatch on Linux and macOS): <see cref="Ns"/> needs no multiplication.</summary>
        readonly bool tickIsNs;

        /// <summary>
        /// The process's line queue: <see cref="Records"/> takes a slow lock's line as a record naming
        /// <see cref="LineSource"/> (nothing allocated); <see cref="Lines"/> takes entries - whole lines
        /// (<see cref="LineWriter.TextEntry"/>), and slow locks' (<see cref="LineWriter.Entry"/>) when the
        /// registry's owner has no record queue (an older LockTime: <see cref="Registry.Records"/>).
        /// </summary>
        internal Action<object, int, long, long, object> Records;
        internal Action<object[]> Lines;
        /// <summary>Waits for room in the line queue (<see cref="LineWriter.AwaitRoom"/>), called before a line is queued by a thread that holds none of this copy's locks (the wait asks the other copies: <see cref="LineWriter.Holding"/>); null when the registry has none (<see cref="Registry.Room"/>).</summary>
        internal Action Room;
        /// <summary>What this copy's line records name: its sink, methods and locations (<see cref="LineWriter.Source"/>).</summary>
        internal readonly object[] LineSource;
        /// <summary>The thread that writes lines: its locks are not recorded (<see cref="NewThread"/>).</summary>
        internal Thread Writer;
        /// <summary>Which slow locks get their line, the others rolled up (<see cref="RollUp"/>); null: every one (LOCKTIME_LINES=all, or an owner that rolls up nothing).</summary>
        internal LineLimit Limit;
        /// <summary>Held by a roll-up (<see cref="RollUp"/>): the exit's waits for the run-time thread's, which never waits.</summary>
        readonly object rollingUp = new object();
        /// <summary>This copy's way to the process's EventSource (<see cref="LockTime.Runtime.Events"/>); null: no events.</summary>
        internal Events Events;
        /// <summary>The process's timeline (<see cref="Timeline.Add"/>, registry entry 12); null: off.</summary>
        internal Action<string[], string, long[]> TimelineAdd;

        /// <summary>The process's holder finders (every copy's <see cref="Holder"/>); read through <see cref="Registry.Items"/>. Null: none.</summary>
        internal List<Func<object, string[]>> Finders;
        Delegate[] finderItems;
        /// <summary>The process's lock order (<see cref="LockOrder.Enter"/>, <see cref="LockOrder.Exit"/>) and this copy's first site there; null when off.</summary>
        internal Action<object, int> OrderEnter;
        internal Action<object> OrderExit;
        internal Action<object, int, bool> OrderWait;   /* null: the owner's lock order knows no waits */
        internal int OrderBase;
        /// <summary>The lock order itself when this copy owns it (the delegates' target): called directly, on the thread's <see cref="ThreadRecord.Held"/>.</summary>
        internal LockOrder Order;

        /// <summary>The semaphores this copy has seen acquired: which are locks, and who holds those now.</summary>
        internal readonly SemaphoreTable Semaphores = new SemaphoreTable();

        /// <summary>Per site, its name as a holder: { assembly, method, location } (one array per site, compared by reference first).</summary>
        internal readonly string[][] HolderNames;

        /// <summary>Every thread's record not folded into <see cref="ended"/>.</summary>
        readonly ThreadList threads = new ThreadList();
        /// <summary>
        /// Held by a sweep and by <see cref="Merge"/>, so that a merge counts each record once, listed or
        /// folded; never taken on a lock's path.
        /// </summary>
        readonly object sweeping = new object();
        /// <summary>Per site id, the statistics of the records of threads that ended (null where none); under <see cref="sweeping"/>.</summary>
        readonly SiteStats[] ended;
        readonly Func<object, bool> fold;

        /// <summary>Stacks captured a second per site at most (<see cref="Capture"/>).</summary>
        internal const int CapturesPerSecond = 20;
        /// <summary>Distinct stacks kept in this copy's thread records at most (the threads that ended folded in are counted off).</summary>
        internal const int MaxStacks = 4096;
        /// <summary>Per site id, the second (<see cref="Clock"/> ticks / <see cref="ticksPerSecond"/>) of the captures counted in <see cref="captureCount"/>.</summary>
        readonly long[] captureSecond;
        readonly int[] captureCount;
        readonly long ticksPerSecond;
        /// <summary>Distinct stacks in the listed thread records (<see cref="Keep"/>, <see cref="Fold"/>).</summary>
        int stacksKept;

        internal Collector(SiteTable sites, Settings settings, long frequency)
        {
            Sites = sites;
            Settings = settings;
            if (frequency <= 0)
                frequency = 1;
            NsPerTick = 1e9 / frequency;
            tickIsNs = frequency == 1000000000;
            double t = settings.ThresholdMs * frequency / 1000.0;
            ThresholdTicks = t >= long.MaxValue ? long.MaxValue : (long)t;
            LineSource = LineWriter.Source(settings.Output, sites.Methods, sites.Locations);
            Limit = LineLimit.Of(settings, sites.Count(), frequency);
            HolderNames = new string[sites.Count()][];
            ended = new SiteStats[sites.Count()];
            fold = new Func<object, bool>(Fold);
            ticksPerSecond = frequency;
            captureSecond = new long[sites.Count()];
            captureCount = new int[sites.Count()];
            for (int i = 0; i < HolderNames.Length; i++) {
                string[] name = new string[3];
                name[0] = sites.Assembly;
                name[1] = sites.Methods[i] ?? "";
                name[2] = sites.Locations[i] ?? "";
                HolderNames[i] = name;
            }
        }

        /// <summary>
        /// The calling thread works for the run-time from now on (the owner's exit writes the summary and
        /// report on it): its locks are not recorded by this copy either, so that a woven framework's locks
        /// that the writing takes give no statistics and no line (which the writing would write again).
        /// </summary>
        internal void MarkBusy()
        {
            try {
                Thread().Busy = true;
            } catch (Exception) {
            }
        }

        /// <summary>True when the calling thread holds one of this copy's timed locks (its record has a frame): the registry's entry 14. Never throws.</summary>
        internal bool Holding()
        {
            ThreadRecord t = ThreadRecord.Current;
            return t != null && t.Depth > 0;
        }

        /// <summary>The calling thread's record, made (and listed) on first use.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal ThreadRecord Thread()
        {
            return ThreadRecord.Current ?? NewThread();
        }

        /// <summary>
        /// Makes and lists the calling thread's record (its first lock); the writer thread's is busy from
        /// the start: the run-time's own writing records nothing and gives no line (no feedback).
        /// </summary>
        ThreadRecord NewThread()
        {
            ThreadRecord t = new ThreadRecord(Sites.Count());
            t.Busy = ReferenceEquals(System.Threading.Thread.CurrentThread, Writer);
            t.ThreadId = System.Threading.Thread.CurrentThread.ManagedThreadId;
            ThreadRecord.Current = t;
            threads.Add(t);
            return t;
        }

        /// <summary>
        /// The calling thread, whose record is <paramref name="t"/>, acquired <paramref name="lockObject"/> at
        /// <paramref name="site"/>: the process's lock order follows it (when on). Directly when this copy owns
        /// the lock order, else through its delegate.
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal void OrderAcquired(ThreadRecord t, object lockObject, int site)
        {
            LockOrder order = Order;
            if (order != null)
                order.Enter(t.Held ?? t.HoldList(order), lockObject, OrderBase + site);
            else if (OrderEnter != null)
                OrderEnter(lockObject, OrderBase + site);
        }

        /// <summary>
        /// As <see cref="OrderAcquired"/>, for a thread about to block on <paramref name="lockObject"/> at
        /// <paramref name="site"/>; <paramref name="exclusive"/>: any holder blocks it (not a reader's wait).
        /// A lock order of a copy that knows no waits (an older one) learns the edge at the acquisition.
        /// </summary>
        internal void OrderWaiting(ThreadRecord t, object lockObject, int site, bool exclusive)
        {
            LockOrder order = Order;
            if (order != null)
                order.Waiting(t.Held ?? t.HoldList(order), lockObject, OrderBase + site, exclusive);
            else if (OrderWait != null)
                OrderWait(lockObject, OrderBase + site, exclusive);
        }

        /// <summary>As <see cref="OrderAcquired"/>, for a release of <paramref name="lockObject"/>.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal void OrderReleased(ThreadRecord t, object lockObject)
        {
            LockOrder order = Order;
            if (order != null) {
                if (t.Held != null)
                    order.Exit(t.Held, lockObject);
            } else if (OrderExit != null) {
                OrderExit(lockObject);
            }
        }

        /// <summary>
        /// The site at which another thread holds <paramref name="lockObject"/> now, as its name
        /// (<see cref="HolderNames"/>), or null: the frames of every listed thread, read without a lock
        /// (a slot's object and site only when its sequence was even and the same around them, see
        /// <see cref="Frame.Seq"/>), and the semaphore held as a lock. Called only by a thread about to
        /// wait; the finder every copy lists in the registry (a waiter for an exclusive hold).
        /// </summary>
        internal string[] Holder(object lockObject)
        {
            return Holder(lockObject, Frame.Exclusive);
        }

        /// <summary>As <see cref="Holder(object)"/> for a waiter in mode <paramref name="waiter"/>: frames it is not blocked by (<see cref="Frame.Blocks"/>: readers by readers) are passed over.</summary>
        [MethodImpl((MethodImplOptions)Jit.Optimized)]
        internal string[] Holder(object lockObject, byte waiter)
        {
            try {
                ThreadRecord me = ThreadRecord.Current;
                if (me != null)
                    me.FoundThread = 0;
                int held = Semaphores.HeldAt(lockObject);
                if ((uint)held < (uint)HolderNames.Length)
                    return HolderNames[held];
                foreach (ThreadRecord t in Others(me)) {
                    Frame[] frames = t.Frames;
                    int depth = t.Depth;
                    for (int i = 0; i < depth && i < frames.Length; i++) {
                        Frame f;
                        if (!ThreadRecord.Read(frames, i, out f) || !ReferenceEquals(f.Lock, lockObject) || f.InWait ||
                            !Frame.Blocks(f.Mode, waiter) || (uint)f.Site >= (uint)HolderNames.Length)
                            continue;
                        if (me != null) { /* the hold's event in the timeline, when no holder tells its share in time */
                            me.FoundThread = t.ThreadId;
                            me.FoundFrom = f.Acquired;
                        }
                        return HolderNames[f.Site];
                    }
                }
            } catch (Exception) {
            }
            return null;
        }

        /// <summary>
        /// Who holds <paramref name="lockObject"/> so that a waiter in mode <paramref name="waiter"/> waits,
        /// asked of every copy in the process (<see cref="Finders"/>); null when none knows. A reader's or
        /// upgrader's is looked for in this copy only: the registry's finders know no modes.
        /// </summary>
        [MethodImpl((MethodImplOptions)Jit.Optimized)]
        internal string[] FindHolder(object lockObject, byte waiter)
        {
            List<Func<object, string[]>> finders = Finders;
            if (finders == null || waiter != Frame.Exclusive)
                return Holder(lockObject, waiter);
            Delegate[] all = Registry.Items(finders, ref finderItems);
            for (int i = 0; i < all.Length; i++) {
                string[] h = ((Func<object, string[]>)all[i])(lockObject);
                if (h != null)
                    return h;
            }
            return null;
        }

        /// <summary>Ticks of <see cref="Clock"/> as nanoseconds (0 for none or fewer).</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal long Ns(long ticks)
        {
            if (ticks <= 0)
                return 0;
            return tickIsNs ? ticks : (long)(ticks * NsPerTick);
        }

        /// <summary>
        /// Records a released lock of <paramref name="site"/> (called after the release: nothing here
        /// lengthens the hold) and queues a line when hold or wait reached the threshold. Inlined into
        /// <see cref="Api"/>'s release.
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal void Released(ThreadRecord t, Frame f, long now)
        {
            SiteStats s = t.Stats(f.Site);
            if (s == null)
                return;
            long hold = now - f.Acquired;
            long holdNs = Ns(hold), waitNs = Ns(f.Wait);
            s.Acquisitions++;
            if (f.Contended)
                s.Contended++;
            s.Wait.Record(waitNs);
            s.Hold.Record(holdNs);
            string[] behind = f.Holder;
            if (f.Contended && f.WaitSeq >= 0) {
                long took = t.Took(f.Lock, f.Acquired); /* the wait's end, whatever a Monitor.Wait since moved Acquired by */
                behind = Blame.Charge(this, t, f.Lock, f.Mode, took - f.Wait, took, s, f.Holder);
                t.Charged(f.WaitSeq);
            }
            if (hold >= ThresholdTicks || f.Wait >= ThresholdTicks) {
                Slow(t, s, f.Site, holdNs, waitNs, behind, f.Wait >= ThresholdTicks, hold >= ThresholdTicks);
                if (TimelineAdd != null) {
                    long took = t.Took(f.Lock, f.Acquired);
                    Timed(t, f.Site, took - f.Wait, took, now, Timeline.Held, f.Contended && f.WaitSeq >= 0 ? t.TakenCount : 0,
                          f.Contended && f.WaitSeq == t.WaitSeq ? t.FoundThread : 0);
                }
            }
        }

        /// <summary>
        /// A SpinLock at address <paramref name="spin"/> that <paramref name="me"/> holds no frame of was exited by it (a
        /// SpinLock without owner tracking may be exited by any thread): the frame of another listed thread with that
        /// address ends - claimed by setting its <see cref="Frame.Ended"/>, so that it is no hold now and its owner drops
        /// it (<see cref="ThreadRecord.DropEnded"/>) - and its hold, up to <paramref name="now"/>, is recorded on
        /// <paramref name="me"/>'s record, as a semaphore's released elsewhere. False when no thread has one.
        /// </summary>
        internal bool EndSpinElsewhere(ThreadRecord me, long spin, long now)
        {
            foreach (ThreadRecord t in Others(me)) {
                Frame[] frames = t.Frames;
                int depth = t.Depth;
                for (int i = depth - 1; i >= 0 && i < frames.Length; i--) {
                    Frame f;
                    int seq = Volatile.Read(ref frames[i].Seq);
                    if (!ThreadRecord.Read(frames, i, out f) || f.Mode != Frame.Spin || f.SpinAt != spin || f.Ended != 0 ||
                        Interlocked.CompareExchange(ref frames[i].Ended, 1, 0) != 0)
                        continue;
                    if (Volatile.Read(ref frames[i].Seq) != seq) { /* the owner rewrote the slot meanwhile: not that frame's mark */
                        Volatile.Write(ref frames[i].Ended, 0);
                        continue;
                    }
                    Volatile.Write(ref t.SpinsEnded, 1);
                    if (!me.Busy)
                        Released(me, f, now);
                    return true;
                }
            }
            return false;
        }

        /// <summary>
        /// Counts a re-entry of <paramref name="site"/> released (<see cref="Frame.Reentry"/>): the thread held the
        /// lock already, so it neither waited nor held anything of its own - no acquisition, no wait, no hold, no line.
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal void Reentered(ThreadRecord t, int site)
        {
            SiteStats s = t.Stats(site);
            if (s != null)
                s.Reentries++;
        }

        /// <summary>
        /// Records an acquisition of <paramref name="site"/> whose hold is not measured (a counting
        /// semaphore: the thread that releases it need not be the one that took it): the wait only, and
        /// the line of a slow wait as a whole line, "hold not applicable".
        /// </summary>
        internal void WaitOnly(ThreadRecord t, int site, long waitTicks, bool contended, string[] holder)
        {
            SiteStats s = t.Stats(site);
            if (s == null)
                return;
            long waitNs = Ns(waitTicks);
            s.Acquisitions++;
            if (contended)
                s.Contended++;
            s.Wait.Record(waitNs);
            if (holder != null)
                s.WaitedBehind(holder, waitNs, 1);
            if (waitTicks < ThresholdTicks)
                return;
            Events events = Events;
            if (events != null)
                events.Slow(site, Events.HoldNotMeasured, waitNs, holder);
            Action<object[]> lines = Lines;
            LineLimit limit = Limit;
            if (lines != null && (limit == null || limit.Take(site, -1, waitNs)))
                lines(LineWriter.TextEntry(Settings.Output, "LockTime: " + Sites.Methods[site] + " waited " + LineWriter.Ms(waitNs) +
                                       " ms at " + Sites.Locations[site] + " (hold not applicable)" +
                                       (holder == null ? "" : " (held by " + holder[1] + " at " + holder[2] + ")")));
            Capture(t, s, site, waitNs, 0, waitNs > 0, false);
            if (TimelineAdd != null) {
                long now = Clock.Ticks();
                Timed(t, site, now - waitTicks, now, now, Timeline.HoldNotMeasured, 0, 0);
            }
        }

        /// <summary>
        /// Records an acquisition of <paramref name="site"/> that did not acquire (a failed TryEnter, a
        /// timed-out or cancelled WaitAsync) after waiting <paramref name="waitTicks"/>: it counts as failed,
        /// its wait counts in the site's wait like any other, and it counts as contended, since its try
        /// did not get the lock; <paramref name="holder"/>, when known, the site it waited behind, as for
        /// an acquisition, charged the whole wait unless <paramref name="charged"/> (the caller shared it among the
        /// holders already, <see cref="Blame.Charge"/>).
        /// </summary>
        internal void Failed(ThreadRecord t, int site, long waitTicks, string[] holder, bool charged)
        {
            SiteStats s = t.Stats(site);
            if (s == null)
                return;
            long waitNs = Ns(waitTicks);
            s.Failed++;
            s.Contended++;
            s.Wait.Record(waitNs);
            if (holder != null && !charged)
                s.WaitedBehind(holder, waitNs, 1);
            if (waitTicks >= ThresholdTicks)
                Slow(t, s, site, -1, waitNs, holder, true, false);
            if (waitTicks >= ThresholdTicks && TimelineAdd != null) {
                long now = Clock.Ticks();
                Timed(t, site, now - waitTicks, now, now, Timeline.NotAcquired, 0, holder != null ? t.FoundThread : 0);
            }
        }

        /// <summary>
        /// Gives the process's timeline (<see cref="TimelineAdd"/>) a slow lock of <paramref name="site"/> on <paramref name="t"/>'s thread:
        /// its wait from <paramref name="waitFrom"/> to <paramref name="acquired"/> and its hold to <paramref name="released"/>
        /// (ticks), of
        /// <paramref name="kind"/> (<see cref="Timeline.Held"/>...), linked to the holds of the first
        /// <paramref name="linked"/> posts the wait's charge took (<see cref="ThreadRecord.Taken"/>), else, when
        /// <paramref name="found"/> is not 0, to the hold found as the wait began (<see cref="ThreadRecord.FoundFrom"/>). No
        /// allocation but the thread's first event's array.
        /// </summary>
        void Timed(ThreadRecord t, int site, long waitFrom, long acquired, long released, long kind, int linked, int found)
        {
            if ((uint)site >= (uint)HolderNames.Length)
                return;
            long[] e = t.Event ?? (t.Event = new long[Timeline.Fields]);
            Timeline.Fill(e, t.ThreadId, waitFrom, acquired, released, kind, t.Taken, linked, found, t.FoundFrom);
            TimelineAdd(HolderNames[site], System.Threading.Thread.CurrentThread.Name, e);
        }

        /// <summary>
        /// Gives the event of a slow lock of <paramref name="site"/> (<see cref="Events"/>), queues its line unless the
        /// limit holds it back (<see cref="Limit"/>) and records its stack on <paramref name="t"/>'s
        /// <paramref name="s"/> (<see cref="Capture"/>); <paramref name="holdNs"/> -1 = not acquired; <paramref name="holder"/>
        /// the site it waited behind, or null; <paramref name="slowWait"/>, <paramref name="slowHold"/>: the wait, the hold reached the
        /// threshold (a wait or hold of 0, slow only at threshold 0, gives no stack of its role: nothing was waited or held).
        /// </summary>
        void Slow(ThreadRecord t, SiteStats s, int site, long holdNs, long waitNs, string[] holder, bool slowWait, bool slowHold)
        {
            Events events = Events;
            if (events != null)
                events.Slow(site, holdNs, waitNs, holder);
            Action<object, int, long, long, object> records = Records;
            Action<object[]> lines = Lines;
            LineLimit limit = Limit;
            if (limit == null || limit.Take(site, holdNs, waitNs)) { /* else held back: counted for the roll-up */
                if (records != null) {
                    Action room = Room;
                    if (room != null && t.Depth == 0)
                        room();
                    records(LineSource, site, holdNs, waitNs, holder);
                }
                else if (lines != null)
                    lines(LineWriter.Entry(Settings.Output, Sites.Methods[site], Sites.Locations[site], holdNs, waitNs, holder));
            }
            Capture(t, s, site, waitNs, holdNs < 0 ? 0 : holdNs, slowWait && waitNs > 0, slowHold && holdNs > 0);
        }

        /// <summary>
        /// Records the calling thread's stack for a slow acquisition of <paramref name="site"/> on <paramref name="s"/>
        /// (its thread's statistics): as a waiter's when <paramref name="asWaiter"/>, as a holder's when
        /// <paramref name="asHolder"/> (both: the one stack under each role), with its wait and hold in ns. Called on the
        /// lock's thread after the release or the failed try, never on a fast acquisition. At most
        /// <see cref="CapturesPerSecond"/> captures a second per site, and <see cref="MaxStacks"/> distinct stacks in
        /// this copy's thread records: the others counted as not captured, or as other stacks. Off when the stack depth
        /// is 0 (<c>LOCKTIME_STACK_DEPTH</c>). A thread that still holds other locks does not take this copy's first
        /// capture (tens of milliseconds, which those locks' holds would carry): that stack is not captured, and the
        /// capture is warmed up on a thread of its own (<see cref="StackCapture.WarmUp"/>).
        /// </summary>
        internal void Capture(ThreadRecord t, SiteStats s, int site, long waitNs, long holdNs, bool asWaiter, bool asHolder)
        {
            int depth = Settings.StackDepth;
            if (depth <= 0 || (!asWaiter && !asHolder))
                return;
            StackEntry e = null;
            if (t.Depth > 0 && !StackCapture.IsWarm) {
                StackCapture.WarmUp();
            } else if (MayCapture(site)) {
                bool busy = t.Busy;
                t.Busy = true; /* the capture's own locks (a woven framework's) are not the program's */
                try {
                    e = StackCapture.Take(depth, Sites.Methods[site], Sites.Files[site], Sites.Lines[site]);
                } finally {
                    t.Busy = busy;
                }
            }
            if (e == null)
                e = StackSet.Uncaptured;
            StackSet set = s.StacksMade();
            if (asWaiter)
                Keep(set, StackSet.Waiter, e, waitNs, holdNs);
            if (asHolder)
                Keep(set, StackSet.Holder, e, waitNs, holdNs);
        }

        /// <summary>Adds one acquisition of <paramref name="role"/> with stack <paramref name="e"/> to <paramref name="set"/>, a new stack only within <see cref="MaxStacks"/>.</summary>
        void Keep(StackSet set, int role, StackEntry e, long waitNs, long holdNs)
        {
            bool room = Volatile.Read(ref stacksKept) < MaxStacks;
            if (set.Add(role, e, 1, waitNs, holdNs, room))
                Interlocked.Increment(ref stacksKept);
        }

        /// <summary>
        /// Whether a stack of <paramref name="site"/> may be captured now: fewer than <see cref="CapturesPerSecond"/> this
        /// second (a race may let a few more through). Once the second's are taken it only reads the count: the slow locks
        /// of many threads at one site (every acquisition at threshold 0) do not each take its cache line from the others.
        /// </summary>
        bool MayCapture(int site)
        {
            if ((uint)site >= (uint)captureSecond.Length)
                return false;
            long second = Clock.Ticks() / ticksPerSecond;
            if (Volatile.Read(ref captureSecond[site]) != second) {
                Volatile.Write(ref captureCount[site], 0);
                Volatile.Write(ref captureSecond[site], second);
            } else if (Volatile.Read(ref captureCount[site]) >= CapturesPerSecond) {
                return false;
            }
            return Interlocked.Increment(ref captureCount[site]) <= CapturesPerSecond;
        }

        /// <summary>
        /// Lists this copy's <see cref="RollUp"/> in <paramref name="rollUps"/>, the registry's entry 11; null (an owner
        /// of an older LockTime, which would never call it): no limit, every slow lock gets its line.
        /// </summary>
        internal void JoinRollUps(List<Action<bool>> rollUps)
        {
            if (rollUps == null) {
                Limit = null;
                return;
            }
            lock (rollUps)
                rollUps.Add(new Action<bool>(RollUp));
        }

        /// <summary>
        /// Queues the roll-up lines of the slow locks whose lines the limit held back (<see cref="LineLimit.RollUp"/>)
        /// to this copy's sink: when <see cref="LineLimit.RollUpS"/> seconds have passed since the last, or every one
        /// now at the exit (<paramref name="atExit"/>), which waits for a roll-up in progress; the run-time's thread
        /// (not <paramref name="atExit"/>) passes when one is in progress, it never waits for a lock. The owner calls
        /// every copy's (the registry's entry 11). Never throws.
        /// </summary>
        internal void RollUp(bool atExit)
        {
            LineLimit limit = Limit;
            Action<object[]> queue = Lines;
            bool taken = false;
            try {
                if (limit == null || queue == null || (!atExit && !limit.Due(Clock.Ticks())))
                    return;
                if (atExit)
                    Monitor.Enter(rollingUp, ref taken);
                else
                    Monitor.TryEnter(rollingUp, ref taken);
                if (!taken)
                    return;
                List<string> lines = limit.RollUp(Clock.Ticks(), Sites.Methods, Sites.Locations);
                for (int i = 0; i < lines.Count; i++)
                    queue(LineWriter.TextEntry(Settings.Output, lines[i]));
            } catch (Exception) {
            } finally {
                if (taken)
                    Monitor.Exit(rollingUp);
            }
        }

        /// <summary>
        /// The statistics of every site summed over every thread, by site id (null where none): the totals
        /// of the threads that ended, then every listed record, after a sweep (<see cref="Sweep(bool)"/>).
        /// </summary>
        internal SiteStats[] Merge()
        {
            SiteStats[] sum = new SiteStats[Sites.Count()];
            lock (sweeping) {
                SweepNow();
                Add(sum, ended);
                object[] all = threads.Items();
                for (int i = 0; i < all.Length; i++) {
                    ThreadRecord t = all[i] as ThreadRecord;
                    if (t == null)
                        break;
                    Add(sum, t.Sites);
                }
            }
            return sum;
        }

        /// <summary>Adds the statistics of every site of <paramref name="from"/> (by site id, null where none) into <paramref name="sum"/>'s, made where needed.</summary>
        static void Add(SiteStats[] sum, SiteStats[] from)
        {
            for (int site = 0; site < sum.Length && site < from.Length; site++) {
                SiteStats s = from[site];
                if (s == null)
                    continue;
                if (sum[site] == null)
                    sum[site] = new SiteStats();
                sum[site].Add(s);
            }
        }

        /// <summary>
        /// Folds the record of every thread that has ended into the totals of ended threads and takes it off
        /// the list that the holder search, the holds in progress and the merge walk (the lock order's lists
        /// are the owner's to sweep: <see cref="LockOrder.SweepThreads"/>). A record whose thread ended holding a
        /// lock (a monitor it never exited) stays: that hold is still in progress, and its frame still names
        /// the holder. Returns the number of records taken off. Runs off every lock's thread (the line
        /// writer, a summary, a report, the metrics); the only lock it shares with a lock's thread is the
        /// list's, held for the time a growth of the list takes (<see cref="ThreadList"/>). <paramref name="due"/>:
        /// only when the list doubled since the last sweep, and not while a merge runs (which sweeps): what
        /// the line writer asks, often, and it never waits for a lock the exit's summary holds. Never throws.
        /// </summary>
        internal int Sweep(bool due)
        {
            bool taken = false;
            try {
                if (due && !threads.Due())
                    return 0;
                if (due)
                    Monitor.TryEnter(sweeping, ref taken);
                else
                    Monitor.Enter(sweeping, ref taken);
                return taken ? SweepNow() : 0;
            } catch (Exception) {
                return 0;
            } finally {
                if (taken)
                    Monitor.Exit(sweeping);
            }
        }

        /// <summary>The sweep of the records, under <see cref="sweeping"/>; returns the number taken off.</summary>
        int SweepNow()
        {
            return threads.Sweep(fold);
        }

        /// <summary>
        /// The record of a thread that ended, at a sweep: added into <see cref="ended"/> (true), or kept when it
        /// still holds a lock (false). A Mutex is not held by a thread that ended: the end abandoned it (the
        /// next WaitOne gets <c>AbandonedMutexException</c>, and has it), so frames of Mutexes alone do not
        /// keep the record; their holds, ended at a moment no one knows, are not recorded.
        /// </summary>
        bool Fold(object record)
        {
            ThreadRecord t = (ThreadRecord)record;
            for (int i = 0; i < t.Depth; i++)
                if (!Handles.IsMutex(t.Frames[i].Lock))
                    return false;
            t.EndWait(); /* a thread that ended in a wait (one that threw) waits no more */
            Add(ended, t.Sites);
            for (int site = 0; site < t.Sites.Length; site++)
                if (t.Sites[site] != null && t.Sites[site].Stacks != null)
                    Interlocked.Add(ref stacksKept, -t.Sites[site].Stacks.Kept());
            return true;
        }

        /// <summary>The listed thread records but <paramref name="me"/>'s, read without a lock (a record listed meanwhile may be missed): for <c>foreach</c>, no allocation.</summary>
        internal OtherThreads Others(ThreadRecord me)
        {
            return new OtherThreads(threads.Items(), me);
        }

        /// <summary>The number of thread records listed now (a sweep takes those of threads that ended off).</summary>
        internal int Listed()
        {
            return threads.Count();
        }

        /// <summary>
        /// This copy's sites that recorded anything, as framework data for the registry
        /// (<see cref="SiteTotals.ToRow"/>): what another copy's summary reads.
        /// </summary>
        internal object[] Snapshot()
        {
            SiteStats[] sum = Merge();
            long now = Clock.Ticks();
            long[] held = new long[sum.Length], longest = new long[sum.Length];
            long[] waiting = new long[sum.Length], longestWait = new long[sum.Length];
            InProgress(held, longest, waiting, longestWait, now);
            List<object> rows = new List<object>();
            for (int site = 0; site < sum.Length; site++) {
                if ((sum[site] == null || sum[site].IsEmpty()) && held[site] == 0 && waiting[site] == 0)
                    continue;
                object[] row = SiteTotals.ToRow(Sites, site, sum[site] ?? new SiteStats(), held[site], Ns(longest[site]));
                row[11] = SiteTotals.Pair(waiting[site], Ns(longestWait[site]));
                rows.Add(row);
            }
            return rows.ToArray();
        }

        /// <summary>
        /// The holds in progress at <paramref name="now"/> (ticks), per site id: how many
        /// (<paramref name="count"/>) and the longest so far (<paramref name="longest"/>, ticks), from the
        /// frames of every listed thread, read without a lock (<see cref="ThreadRecord.Read"/>): a slot being
        /// written is passed over (the figures may miss a hold taken or released meanwhile, never give
        /// another site's). A frame inside <c>Monitor.Wait</c> holds no lock; a semaphore used as a lock is
        /// not held by a thread and not counted. The lock path pays nothing for it.
        /// </summary>
        internal void HeldNow(long[] count, long[] longest, long now)
        {
            InProgress(count, longest, null, null, now);
        }

        /// <summary>
        /// The waits in progress at <paramref name="now"/> (ticks), per site id: threads blocked in a lock call of
        /// this copy's (<see cref="ThreadRecord.BeginWait"/>, a deadlocked one among them), how many
        /// (<paramref name="count"/>) and the longest so far (<paramref name="longest"/>, ticks). Read without a
        /// lock: a wait that ends meanwhile may be counted.
        /// </summary>
        internal void WaitingNow(long[] count, long[] longest, long now)
        {
            InProgress(null, null, count, longest, now);
        }

        /// <summary>The holds (<see cref="HeldNow"/>) and the waits (<see cref="WaitingNow"/>) in progress, either pair of arrays null: not counted.</summary>
        void InProgress(long[] held, long[] longestHeld, long[] waiting, long[] longestWait, long now)
        {
            try {
                object[] all = threads.Items();
                for (int k = 0; k < all.Length; k++) {
                    ThreadRecord t = all[k] as ThreadRecord;
                    if (t == null)
                        break;
                    if (held != null)
                        HoldsOf(t, held, longestHeld, now);
                    if (waiting != null)
                        WaitOf(t, waiting, longestWait, now);
                }
            } catch (Exception) {
            }
        }

        /// <summary>Counts the holds in progress in the frames of <paramref name="t"/> (<see cref="HeldNow"/>).</summary>
        static void HoldsOf(ThreadRecord t, long[] count, long[] longest, long now)
        {
            Frame[] frames = t.Frames;
            int depth = t.Depth;
            for (int i = 0; i < depth && i < frames.Length; i++) {
                Frame f;
                if (!ThreadRecord.Read(frames, i, out f) || f.InWait || f.Reentry || f.Ended != 0 || (f.Lock == null && f.Mode != Frame.Spin) ||
                    (uint)f.Site >= (uint)count.Length || (uint)f.Site >= (uint)longest.Length)
                    continue;
                count[f.Site]++;
                if (now - f.Acquired > longest[f.Site])
                    longest[f.Site] = now - f.Acquired;
            }
        }

        /// <summary>Counts the wait of <paramref name="t"/> in progress, if any (<see cref="WaitingNow"/>).</summary>
        static void WaitOf(ThreadRecord t, long[] count, long[] longest, long now)
        {
            long since = Volatile.Read(ref t.WaitingSince);
            int site = t.WaitingSite;
            if (since == 0 || (uint)site >= (uint)count.Length || (uint)site >= (uint)longest.Length)
                return;
            count[site]++;
            if (now - since > longest[site])
                longest[site] = now - since;
        }
    }

    /// <summary>An enumeration of the thread records of a list (<see cref="ThreadList.Items"/>: records, then nulls) but one (<see cref="Collector.Others"/>).</summary>
    [CompilerGenerated]
    internal struct OtherThreads
    {
        readonly object[] all;
        readonly ThreadRecord me;
        int k;

        internal OtherThreads(object[] all, ThreadRecord me)
        {
            this.all = all;
            this.me = me;
            k = -1;
        }

        public OtherThreads GetEnumerator()
        {
            return this;
        }

        public ThreadRecord Current
        {
            get { return (ThreadRecord)all[k]; }
        }

        public bool MoveNext()
        {
            while (++k < all.Length) {
                ThreadRecord t = all[k] as ThreadRecord;
                if (t == null)
                    return false;
                if (!ReferenceEquals(t, me))
                    return true;
            }
            return false;
        }
    }
}
