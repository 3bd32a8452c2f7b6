// Api.cs - the entry points the weaver's call-site stubs call: acquired, released, waited, not acquired.
using System;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace LockTime.Runtime
{
    /// <summary>
    /// What the call-site stubs call (docs/report-format.md has the data; README.md the stub shapes).
    /// A stub reads <see cref="Clock.Ticks"/> before and after the lock call and passes the site's id
    /// (0-based, from the site table). Every entry point catches everything: timing never throws into
    /// the program, and a lock's thread never blocks or does I/O here. When the fast try fails, the stub
    /// calls <see cref="Waiting"/> before it blocks: only then is the holder looked for.
    /// </summary>
    [CompilerGenerated]
    internal static class Api
    {
        /// <summary>
        /// True when timing is off (LOCKTIME_DISABLED, or the start failed): a stub then calls only the
        /// original. A static readonly field of an initialized class, so the JIT folds the test. Reading
        /// it first starts this copy of the run-time (<see cref="Runtime.Start"/>).
        /// </summary>
        internal static readonly bool Off = Runtime.Start();

        /// <summary>
        /// A lock of <paramref name="site"/> was acquired: the stub read <paramref name="start"/> before
        /// the attempt and <paramref name="acquired"/> when it had the lock (equal when the fast try took
        /// it); <paramref name="contended"/> when the fast try failed and the thread had to wait.
        /// </summary>
        internal static void Acquired(object lockObject, int site, long start, long acquired, bool contended)
        {
            Push(lockObject, site, start, acquired, contended, Frame.Exclusive);
        }

        /// <summary>As <see cref="Acquired"/>, for <c>Lock.EnterScope</c>: released by <see cref="ReleasedScope"/>.</summary>
        internal static void AcquiredScope(object lockObject, int site, long start, long acquired, bool contended)
        {
            Push(lockObject, site, start, acquired, contended, Frame.Scope);
        }

        /// <summary>
        /// As <see cref="Acquired"/>, for a read lock (<c>ReaderWriterLockSlim.EnterReadLock</c>,
        /// <c>ReaderWriterLock.AcquireReaderLock</c>): a reader waiting meanwhile is not taken to wait
        /// behind it; released by <see cref="ReleasedRead"/>.
        /// </summary>
        internal static void AcquiredRead(object lockObject, int site, long start, long acquired, bool contended)
        {
            Push(lockObject, site, start, acquired, contended, Frame.Read);
        }

        /// <summary>As <see cref="AcquiredRead"/>, for an upgradeable read lock (<c>EnterUpgradeableReadLock</c>): readers share it; released by <see cref="ReleasedUpgradeable"/>.</summary>
        internal static void AcquiredUpgradeable(object lockObject, int site, long start, long acquired, bool contended)
        {
            Push(lockObject, site, start, acquired, contended, Frame.Upgradeable);
        }

        /// <summary>
        /// As <see cref="Acquired"/>, for a <c>SpinLock</c>: a struct, which the stub cannot pass as an
        /// object, so the frame has none - no holder is found for its waiters, no lock order is followed. The stub
        /// passes the SpinLock's address <paramref name="spin"/> (its managed pointer as a number, which the GC does
        /// not follow): <see cref="ReleasedSpin"/> ends the frame of that address, on this thread or another.
        /// </summary>
        internal static void AcquiredSpin(IntPtr spin, int site, long start, long acquired, bool contended)
        {
            try {
                Collector c = Runtime.Current;
                ThreadRecord t = Recorder(c);
                if (t == null)
                    return;
                t.DropEnded();
                t.Push(null, site, acquired, acquired - start, contended, Frame.Spin, (long)spin);
            } catch (Exception) {
            }
        }

        /// <summary>
        /// A <c>SemaphoreSlim.Wait</c> of <paramref name="semaphore"/> acquired (the stub's fast try is
        /// <c>Wait(0)</c>). A semaphore created with a maximum of 1 is a lock: its hold lasts until
        /// <see cref="ReleasedSemaphore"/>, on whichever thread, and it is followed in the lock order (the
        /// thread that blocked in Wait goes on holding it). A
        /// counting semaphore's wait is recorded now, its hold not (not applicable).
        /// </summary>
        internal static void AcquiredSemaphore(object semaphore, int site, long start, long acquired, bool contended)
        {
            AcquiredSemaphoreAs(semaphore, site, start, acquired, contended, HeldInOrder);
        }

        /// <summary>
        /// As <see cref="AcquiredSemaphore"/>, for a <c>SemaphoreSlim.Wait</c> inside an async state machine's
        /// <c>MoveNext</c> (the weaver tells): the wait and the hold are recorded alike, but the hold is not
        /// followed in the lock order, as a <c>WaitAsync</c>'s (<see cref="AcquiredWhenDone"/>): the async
        /// method may give its thread up at an <c>await</c> while it holds the semaphore, and that thread's
        /// next work, ordered after it, would give edges the program never takes. But the acquisition is an
        /// edge from the locks this thread holds now (<see cref="EdgeInOrder"/>): a Wait inside a <c>lock</c>
        /// of an async method is that order, certainly. The wait itself was followed (<see cref="Waiting"/>):
        /// this thread blocked in it, holding what it holds.
        /// </summary>
        internal static void AcquiredSemaphoreInAsync(object semaphore, int site, long start, long acquired, bool contended)
        {
            AcquiredSemaphoreAs(semaphore, site, start, acquired, contended, EdgeInOrder);
        }

        /// <summary>
        /// How a semaphore's acquisition enters the lock order (<see cref="Kept"/>): held by the thread that took it
        /// until its release; only as the edge from the locks the thread holds now (taken and left at once); not.
        /// </summary>
        const byte HeldInOrder = 0, EdgeInOrder = 1, OutOfOrder = 2;

        static void AcquiredSemaphoreAs(object semaphore, int site, long start, long acquired, bool contended, byte order)
        {
            try {
                Collector c = Runtime.Current;
                ThreadRecord t = Recorder(c);
                if (t == null)
                    return;
                string[] behind = contended ? t.Behind : null;
                int wait = contended && t.WaitingSince != 0 ? t.WaitSeq : 0;
                t.Behind = null;
                if (wait != 0)
                    t.WaitAcquired();
                else
                    t.EndWait();
                Kept(c, t, semaphore, site, start, acquired, contended, behind, wait, order, false);
            } catch (Exception) {
            }
        }

        /// <summary>
        /// After <c>SemaphoreSlim.WaitAsync</c> (any overload) returned <paramref name="task"/>, the stub
        /// having read <paramref name="start"/> before the call: the wait ends when the task completes. A
        /// task completed already is recorded at once, with no allocation; else a continuation (of a
        /// <see cref="PendingWait"/>, run synchronously when the task completes) records it then, the
        /// semaphore's holder now being the one it waited behind. A <c>Task&lt;bool&gt;</c> that gives
        /// false, a faulted or cancelled task: not acquired. Not followed in the lock order: the async
        /// method gives its thread up at its next <c>await</c> while it holds the semaphore, and that
        /// thread's next work, ordered after it, would give edges the program never takes.
        /// </summary>
        internal static void AcquiredWhenDone(Task task, object semaphore, int site, long start)
        {
            try {
                Collector c = Runtime.Current;
                ThreadRecord t = Recorder(c);
                if (t == null || task == null)
                    return;
                if (task.IsCompleted) {
                    if (PendingWait.Acquired(task))
                        Kept(c, t, semaphore, site, start, start, false, null, 0, OutOfOrder, false);
                    else
                        c.Failed(t, site, Clock.Ticks() - start, null, false);
                    return;
                }
                PendingWait p = new PendingWait();
                p.Semaphore = semaphore;
                p.Site = site;
                p.Start = start;
                p.Behind = c.FindHolder(semaphore, Frame.Exclusive);
                p.Task = task;
                SemaphoreState s = semaphore == null ? null : c.Semaphores.Of(t, semaphore);
                if (s != null && s.IsLock) {
                    p.State = s;
                    lock (s) {
                        p.Next = s.Pending;
                        Volatile.Write(ref s.Pending, p);
                    }
                }
                task.ContinueWith(new Action<Task>(p.Done), TaskContinuationOptions.ExecuteSynchronously);
            } catch (Exception) {
            }
        }

        /// <summary>
        /// What a <see cref="PendingWait"/> records, on the thread that completed its task (<paramref name="ordered"/> false:
        /// not followed in the lock order, see <see cref="AcquiredWhenDone"/>); <paramref name="logged"/>: it was listed
        /// on a lock's state, so the semaphore's holds meanwhile were logged: it shares its wait among them
        /// (<see cref="Blame.Charge"/>), the rest to <paramref name="behind"/>, the holder found as it began.
        /// </summary>
        internal static void SemaphoreAcquired(object semaphore, int site, long start, long acquired, bool contended, string[] behind, bool ordered,
                                               bool logged)
        {
            Collector c = Runtime.Current;
            ThreadRecord t = Recorder(c);
            if (t != null)
                Kept(c, t, semaphore, site, start, acquired, contended, behind, 0, ordered ? HeldInOrder : OutOfOrder, logged);
        }

        /// <summary>
        /// What a <see cref="PendingWait"/> that did not acquire records (its task gave false, was cancelled or faulted),
        /// on the thread that completed its task: a failed try waiting from <paramref name="start"/> to <paramref name="end"/>,
        /// shared among the logged holds of <paramref name="semaphore"/> (when the wait was listed on its state, else null:
        /// <see cref="Blame.Charge"/>), the rest to <paramref name="behind"/>, the holder found as it began, as an
        /// acquisition's wait is.
        /// </summary>
        internal static void SemaphoreNotAcquired(object semaphore, int site, long start, long end, string[] behind)
        {
            Collector c = Runtime.Current;
            ThreadRecord t = Recorder(c);
            if (t == null)
                return;
            SiteStats stats = semaphore == null ? null : t.Stats(site);
            if (stats != null)
                behind = Blame.Charge(c, t, semaphore, Frame.Exclusive, start, end, stats, behind);
            c.Failed(t, site, end - start, behind, stats != null);
        }

        /// <summary>
        /// Keeps the hold of a semaphore used as a lock on its state (a counting semaphore's wait is
        /// recorded now). <paramref name="order"/> <see cref="HeldInOrder"/>: the acquiring thread goes on holding
        /// it, so it enters the lock order, and this thread keeps it to leave the order when another thread
        /// releases it (<see cref="OrderedSemaphores.DropStale"/>); <see cref="EdgeInOrder"/>: it enters and
        /// leaves the order at once, the edge from what the thread holds now given; <see cref="OutOfOrder"/>: not.
        /// A signal (<see cref="SemaphoreState.Signal"/>) is never in the order. <paramref name="wait"/>: the number of the
        /// thread's wait before a contended acquisition (0: none), whose holders told their shares before they released
        /// (<see cref="ReleasingSemaphore"/>): charged now (<see cref="Blame.Charge"/>), the hold released perhaps elsewhere.
        /// <paramref name="logged"/>: a <c>WaitAsync</c> that waited listed on the state, shared among the holds of its log
        /// (<see cref="Blame.ChargeLogged"/>) now too.
        /// </summary>
        static void Kept(Collector c, ThreadRecord t, object semaphore, int site, long start, long acquired, bool contended,
                         string[] behind, int wait, byte order, bool logged)
        {
            if (semaphore == null)
                return;
            SemaphoreState s = c.Semaphores.Of(t, semaphore);
            if (!s.IsLock) {
                c.WaitOnly(t, site, acquired - start, contended, behind);
                return;
            }
            bool charged = wait != 0 || logged;
            if (charged) {
                SiteStats stats = t.Stats(site);
                if (stats != null)
                    behind = Blame.Charge(c, t, semaphore, Frame.Exclusive, start, acquired, stats, behind);
                if (wait != 0)
                    t.Charged(wait);
            }
            bool ordered = !s.Signal && c.OrderEnter != null;
            OrderedSemaphores mine = null;
            if (ordered && order != OutOfOrder)
                DropStale(c, t);
            if (ordered && order == HeldInOrder) {
                mine = t.Ordered ?? (t.Ordered = new OrderedSemaphores());
            }
            s.Hold.Site = site;
            s.Hold.Acquired = acquired >= s.Known ? acquired : s.Known; /* not before the run-time knew it (SemaphoreState.Known) */
            s.Hold.Wait = acquired - start;
            s.Hold.Contended = contended;
            s.Hold.WaitSeq = charged ? -1 : 0; /* -1: charged here, Collector.Released names the holder only */
            if (behind != null || s.Hold.Holder != null) /* the references only when they change: no write barrier else */
                s.Hold.Holder = behind;
            ThreadRecord orderer = mine == null ? null : t;
            if (!ReferenceEquals(s.Orderer, orderer))
                s.Orderer = orderer;
            Volatile.Write(ref s.Held, 1);
            if (ordered && order == EdgeInOrder) {
                c.OrderAcquired(t, semaphore, site);
                c.OrderReleased(t, semaphore);
            }
            if (mine == null)
                return;
            c.OrderAcquired(t, semaphore, site);
            mine.Entered(s);
        }

        /// <summary>
        /// The holds of semaphores that <paramref name="t"/> entered into the lock order and another thread
        /// released since (<see cref="ThreadRecord.Stale"/>) leave it: before this thread enters a lock there.
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        static void DropStale(Collector c, ThreadRecord t)
        {
            if (Volatile.Read(ref t.Stale) != 0 && Interlocked.Exchange(ref t.Stale, 0) != 0 && t.Ordered != null)
                t.Ordered.DropStale(c, t);
        }

        /// <summary>
        /// <paramref name="semaphore"/> is about to be released (before the original <c>Release</c>): when
        /// it is a lock held now, its hold is taken off the semaphore now - once <c>Release</c> returns,
        /// a waiter may have taken it already - and kept on this thread for <see cref="ReleasedSemaphore"/>,
        /// to which the stub passes what this returns: this thread's record, or null when there is no hold
        /// to record. The hold leaves the lock order: at once when this thread entered it, else the thread
        /// that did is told (<see cref="ThreadRecord.Stale"/>). A semaphore of maximum 1 released while not
        /// held is a signal from then on (<see cref="SemaphoreState.Signal"/>): its state is made here if it has none.
        /// </summary>
        internal static object ReleasingSemaphore(object semaphore)
        {
            try {
                Collector c = Runtime.Current;
                ThreadRecord t = Recorder(c);
                if (t == null || semaphore == null)
                    return null;
                SemaphoreState s = c.Semaphores.Of(t, semaphore);
                if (Volatile.Read(ref s.Pending) != null) /* a waiter's continuation ran before anyone recorded it */
                    Settle(s, Clock.Ticks());
                if (Volatile.Read(ref s.Held) == 0) {
                    if (s.IsLock && !s.Signal)
                        s.Signal = true; /* released with no hold: a signal, not a lock (SemaphoreState.Signal) */
                    return null;
                }
                Volatile.Write(ref s.Held, 0);
                t.Releasing.Site = s.Hold.Site;
                t.Releasing.Acquired = s.Hold.Acquired;
                t.Releasing.Wait = s.Hold.Wait;
                t.Releasing.Contended = s.Hold.Contended;
                t.Releasing.WaitSeq = s.Hold.WaitSeq;
                string[] holder = s.Hold.Holder;
                if (holder != null || t.Releasing.Holder != null)
                    t.Releasing.Holder = holder;
                ThreadRecord orderer = s.Orderer; /* kept: the hold's until the next acquisition */
                if (orderer != null) {
                    if (!ReferenceEquals(orderer, t))
                        Volatile.Write(ref orderer.Stale, 1);
                    else if (t.Ordered != null)
                        t.Ordered.Left(s, c, t);
                }
                bool waiters = Volatile.Read(ref Blame.WaitersNow) != 0, pending = Volatile.Read(ref s.Pending) != null;
                if (waiters || pending) /* logged before the release: a waiter that takes it finds the hold */
                    Blame.Released(c, t, semaphore, t.Releasing.Site, Frame.Exclusive, t.Releasing.Acquired, Clock.Ticks());
                return t;
            } catch (Exception) {
                return null;
            }
        }

        /// <summary>
        /// After the original <c>Release</c>: <paramref name="releasing"/> is what <see cref="ReleasingSemaphore"/>
        /// returned before it. When that is a thread's record, the hold it took off the semaphore ends at
        /// <paramref name="now"/> (read before the release, as every release hook's time) and is recorded there
        /// (whichever thread took the semaphore meanwhile); else nothing.
        /// </summary>
        internal static void ReleasedSemaphore(object releasing, long now)
        {
            try {
                ThreadRecord t = releasing as ThreadRecord;
                if (t == null)
                    return;
                Collector c = Runtime.Current;
                if (c == null)
                    return;
                c.Released(t, t.Releasing, now);
                SemaphoreState s = t.LastSemaphoreState; /* the released one (ReleasingSemaphore looked it up) */
                if (s != null && Volatile.Read(ref s.Pending) != null)
                    Settle(s, now);
            } catch (Exception) {
            }
        }

        /// <summary>
        /// Records, as acquired at <paramref name="now"/> (or not acquired), every <c>WaitAsync</c> of
        /// <paramref name="s"/> whose task has completed and that nothing recorded yet: after the
        /// <c>Release</c> that completed one (its acquisition is then), and before a release that finds the
        /// semaphore not held (a waiter's own continuation ran late: the hold is recorded, shorter, not lost).
        /// </summary>
        static void Settle(SemaphoreState s, long now)
        {
            lock (s) { /* recorded before it leaves the list: a release meanwhile waits here, then finds it held */
                PendingWait p = s.Pending;
                while (p != null) {
                    PendingWait next = p.Next;
                    if (p.Task != null && p.Task.IsCompleted) {
                        if (p.Take())
                            p.Record(p.Task, now);
                        p.Unlist(s);
                    }
                    p = next;
                }
            }
        }

        /// <summary>
        /// The fast try of <paramref name="lockObject"/> failed at <paramref name="site"/> and the thread is
        /// about to block in the lock call: the site that holds it now (any copy's) is kept for the contended
        /// acquisition that follows, which charges its wait to that site; the lock order learns the wait
        /// (<see cref="LockOrder.Waiting(HeldLocks, object, int, bool)"/>): its edge from the locks this
        /// thread holds, and the threads that wait for each other now (a deadlock).
        /// </summary>
        internal static void Waiting(object lockObject, int site)
        {
            WaitingAs(lockObject, site, Frame.Exclusive, true);
        }

        /// <summary>As <see cref="Waiting"/>, before a blocking read lock call: only a holder that excludes readers (a writer) is its holder.</summary>
        internal static void WaitingToRead(object lockObject, int site)
        {
            WaitingAs(lockObject, site, Frame.Read, false);
        }

        /// <summary>As <see cref="Waiting"/>, before a blocking upgradeable read lock call: readers are not its holders.</summary>
        internal static void WaitingToUpgrade(object lockObject, int site)
        {
            WaitingAs(lockObject, site, Frame.Upgradeable, false);
        }

        /// <summary>
        /// As <see cref="Waiting"/>, before a call with a timeout (<c>TryEnter(object, int)</c>, <c>Wait(int)</c>,
        /// <c>WaitOne(int)</c>...) whose try with 0 failed: the holder is found and the lock order gets the edge
        /// from the locks this thread holds, but no deadlock is searched for through this wait - it ends, and
        /// one that ends without the lock (<see cref="NotAcquired"/>) says nothing to the lock order.
        /// </summary>
        internal static void WaitingTimed(object lockObject, int site)
        {
            WaitingAs(lockObject, site, Frame.Exclusive, false);
        }

        /// <summary>The wait of <see cref="Waiting"/> and its kin; <paramref name="blocks"/>: until it has the lock, so a deadlock is searched for through it.</summary>
        [MethodImpl((MethodImplOptions)Jit.Optimized)]
        static void WaitingAs(object lockObject, int site, byte mode, bool blocks)
        {
            try {
                Collector c = Runtime.Current;
                ThreadRecord t = Recorder(c);
                if (t == null)
                    return;
                t.Behind = c.FindHolder(lockObject, mode);
                t.BeginWait(site, lockObject, mode);
                if (lockObject != null) {
                    DropStale(c, t);
                    c.OrderWaiting(t, lockObject, site, blocks);
                }
            } catch (Exception) {
            }
        }

        /// <summary>
        /// What every acquisition's entry point does: the frame pushed, the lock order told. Left to the tiering, as
        /// <see cref="Pop"/> (precompiled in an app published ReadyToRun): compiled optimized at their first call, the
        /// two and the writer's line path cost every process 11-15 ms of CPU JIT-compiled and 11-18 ms published
        /// ReadyToRun, which crossgen leaves such methods to (weaver/runtime/README.md, "Before the tiering").
        /// </summary>
        static void Push(object lockObject, int site, long start, long acquired, bool contended, byte mode)
        {
            try {
                Collector c = Runtime.Current;
                ThreadRecord t = Recorder(c);
                if (t == null)
                    return;
                if (t.Push(lockObject, site, acquired, acquired - start, contended, mode))
                    return; /* a re-entry: the lock order has the lock already, no edge */
                if (lockObject != null) {
                    DropStale(c, t);
                    c.OrderAcquired(t, lockObject, site);
                }
            } catch (Exception) {
            }
        }

        /// <summary>The calling thread's record when <paramref name="c"/> records it (started, and not the run-time's own work), else null.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        static ThreadRecord Recorder(Collector c)
        {
            if (c == null)
                return null;
            ThreadRecord t = c.Thread();
            return t.Busy ? null : t;
        }

        /// <summary>
        /// <paramref name="lockObject"/> was released (the stub calls this after the original release, with the
        /// time <paramref name="now"/> it read just before it, in <see cref="Clock"/> ticks: the hold ends there, not
        /// after whatever ran between - on a busy CPU the waiter the release woke): the innermost frame of that
        /// object ends, its wait and hold are recorded. No frame: nothing.
        /// </summary>
        internal static void Released(object lockObject, long now)
        {
            Pop(lockObject, Frame.Exclusive, now);
        }

        /// <summary>A <c>Lock.Scope</c> was disposed (at <paramref name="now"/>, as <see cref="Released"/>): the innermost frame taken by EnterScope ends.</summary>
        internal static void ReleasedScope(long now)
        {
            Pop(null, Frame.Scope, now);
        }

        /// <summary>A read lock of <paramref name="lockObject"/> was released (at <paramref name="now"/>, as <see cref="Released"/>): its innermost read frame ends (a write frame of the same lock, taken with recursion, stays).</summary>
        internal static void ReleasedRead(object lockObject, long now)
        {
            Pop(lockObject, Frame.Read, now);
        }

        /// <summary>An upgradeable read lock of <paramref name="lockObject"/> was released (at <paramref name="now"/>, as <see cref="Released"/>): its innermost upgradeable frame ends.</summary>
        internal static void ReleasedUpgradeable(object lockObject, long now)
        {
            Pop(lockObject, Frame.Upgradeable, now);
        }

        /// <summary>
        /// The <c>SpinLock</c> at address <paramref name="spin"/> was released (<c>Exit</c>): the innermost frame of this
        /// thread's with that address ends. None: a SpinLock without owner tracking entered on another thread and exited
        /// here - that thread's frame of the address ends, its hold recorded here (<see cref="Collector.EndSpinElsewhere"/>);
        /// else (a SpinLock the GC moved while held: its address changed) this thread's innermost SpinLock frame.
        /// <paramref name="now"/>: the release's time, as <see cref="Released"/>'s.
        /// </summary>
        internal static void ReleasedSpin(IntPtr spin, long now)
        {
            try {
                Collector c = Runtime.Current;
                if (c == null)
                    return;
                ThreadRecord t = c.Thread(); /* made here for a thread that exits a SpinLock it never entered */
                t.DropEnded();
                int i = t.FindSpin((long)spin);
                if (i < 0 && c.EndSpinElsewhere(t, (long)spin, now))
                    return;
                if (i < 0)
                    i = t.Find(null, Frame.Spin);
                if (i < 0)
                    return;
                Frame f = t.Remove(i);
                if (!t.Busy)
                    c.Released(t, f, now);
            } catch (Exception) {
            }
        }

        /// <summary>
        /// What every release's entry point does: the innermost frame of the lock ended and recorded (<see cref="Collector.Released"/>,
        /// inlined), the lock order told. A re-entry's frame is counted only (<see cref="Collector.Reentered"/>): the outer
        /// frame's hold is the hold. An outer frame released before a re-entry above it (a write lock before the read lock
        /// taken inside it) leaves the lock held by that re-entry from now on (<see cref="ThreadRecord.Promote"/>).
        /// </summary>
        static void Pop(object lockObject, byte mode, long now)
        {
            try {
                Collector c = Runtime.Current;
                ThreadRecord t = ThreadRecord.Current;
                if (c == null || t == null)
                    return;
                int i = t.Find(lockObject, mode);
                if (i < 0)
                    return;
                Frame f = t.Remove(i);
                if (t.Busy)
                    return;
                if (f.Reentry) {
                    c.Reentered(t, f.Site);
                    return;
                }
                bool gone = f.Lock != null && (i == t.Depth || !t.Promote(i, f.Lock, now)); /* else an inner re-entry holds it on */
                /* Waiters first, before this thread's own recording (a slow lock's line, stack and timeline event): a
                 * waiter that takes the lock and releases it quickly finds the share posted */
                if (gone && Volatile.Read(ref Blame.WaitersNow) != 0)
                    Blame.Released(c, t, f.Lock, f.Site, f.Mode, t.Stretch(f.Lock, f.Acquired), now);
                c.Released(t, f, now);
                if (gone)
                    c.OrderReleased(t, f.Lock);
            } catch (Exception) {
            }
        }

        /// <summary>
        /// The thread is about to call <c>Monitor.Wait</c> on <paramref name="lockObject"/>, which gives the
        /// lock up until it returns: a waiter meanwhile does not take this thread for its holder.
        /// </summary>
        internal static void WaitBegins(object lockObject)
        {
            try {
                ThreadRecord t = ThreadRecord.Current;
                if (t == null)
                    return;
                Collector c = Runtime.Current;
                if (c != null && !t.Busy && Volatile.Read(ref Blame.WaitersNow) != 0)
                    Blame.GivenUp(c, t, lockObject, Clock.Ticks());
                t.SetInWait(lockObject, true);
            } catch (Exception) {
            }
        }

        /// <summary>
        /// The thread spent <paramref name="ticks"/> inside <c>Monitor.Wait</c> on <paramref name="lockObject"/>:
        /// not hold time, so every frame of that object starts that much later - Wait gives up the monitor
        /// however often the thread entered it (a re-entrant <c>lock</c>, a synchronized method) and takes it
        /// back as often; it holds the lock again (<see cref="ThreadRecord.Resume"/>).
        /// </summary>
        internal static void Waited(object lockObject, long ticks)
        {
            try {
                ThreadRecord t = ThreadRecord.Current;
                if (t != null)
                    t.Resume(lockObject, ticks, Clock.Ticks());
            } catch (Exception) {
            }
        }

        /// <summary>
        /// ReaderWriterLock.ReleaseLock released every hold of <paramref name="lockObject"/> this thread had
        /// (RestoreLock takes them again): its frames pause - not hold time, and no holder for a waiter
        /// meanwhile (like <see cref="WaitBegins"/>) - and leave the lock order until <see cref="Restored"/>.
        /// <paramref name="now"/>: the release's time, read before it (as <see cref="Released"/>'s).
        /// </summary>
        internal static void Paused(object lockObject, long now)
        {
            Gap(lockObject, true, now);
        }

        /// <summary>RestoreLock took the holds <see cref="Paused"/> paused again: they go on from their hold so far, and are back in the lock order (from now: RestoreLock may have waited for them).</summary>
        internal static void Restored(object lockObject)
        {
            Gap(lockObject, false, Clock.Ticks());
        }

        /// <summary>
        /// The frames of <paramref name="lockObject"/> pause (<paramref name="pause"/>) or go on, at <paramref name="now"/>.
        /// A paused frame's <see cref="Frame.Acquired"/> keeps its hold so far, negated (acquired - now); going on
        /// makes it now - that hold again, so the time between is not counted.
        /// </summary>
        static void Gap(object lockObject, bool pause, long now)
        {
            try {
                Collector c = Runtime.Current;
                ThreadRecord t = ThreadRecord.Current;
                if (c == null || t == null || lockObject == null)
                    return;
                for (int i = 0; i < t.Depth; i++) {
                    if (!ReferenceEquals(t.Frames[i].Lock, lockObject) || t.Frames[i].InWait == pause)
                        continue;
                    t.Frames[i].Acquired += pause ? -now : now;
                    if (t.Frames[i].Reentry)
                        continue; /* never in the lock order */
                    if (pause)
                        c.OrderReleased(t, lockObject);
                    else if (!t.Busy)
                        c.OrderAcquired(t, lockObject, t.Frames[i].Site);
                }
                t.SetInWait(lockObject, pause);
            } catch (Exception) {
            }
        }

        /// <summary>
        /// WaitHandle.WaitAny over <paramref name="handles"/> (which hold a Mutex) gave <paramref name="index"/>,
        /// having waited from <paramref name="start"/> to <paramref name="end"/>: when the handle at that index
        /// is a Mutex, it was acquired (held until its ReleaseMutex); a timeout (WaitTimeout) or another
        /// handle: a wait not acquired, no hold.
        /// </summary>
        internal static void AcquiredAny(object handles, int index, int site, long start, long end)
        {
            object[] all = handles as object[];
            if (all != null && (uint)index < (uint)all.Length && Handles.IsMutex(all[index]))
                Push(all[index], site, start, end, false, Frame.Exclusive);
            else
                NotAcquired(site, start, end);
        }

        /// <summary>WaitHandle.WaitAll over <paramref name="handles"/> gave <paramref name="all"/>: when true, every Mutex among them was acquired (one frame each, in the array's order); false (a timeout): none.</summary>
        internal static void AcquiredAll(object handles, bool all, int site, long start, long end)
        {
            object[] each = handles as object[];
            if (!all || each == null) {
                NotAcquired(site, start, end);
                return;
            }
            for (int i = 0; i < each.Length; i++)
                if (Handles.IsMutex(each[i]))
                    Push(each[i], site, start, end, false, Frame.Exclusive);
        }

        /// <summary>
        /// The filter around a Mutex's WaitOne stub: <paramref name="exception"/> came out of it. An
        /// <c>AbandonedMutexException</c> says the previous owner ended holding <paramref name="mutex"/>, which
        /// this thread has acquired now: recorded as an acquisition (held until its ReleaseMutex). Always
        /// false: the exception goes on to the program as it was.
        /// </summary>
        internal static bool Abandoned(object exception, object mutex, int site, long start)
        {
            try {
                if (IsAbandoned(exception) && Handles.IsMutex(mutex))
                    Push(mutex, site, start, Clock.Ticks(), false, Frame.Exclusive);
            } catch (Exception) {
            }
            return false;
        }

        /// <summary>As <see cref="Abandoned"/> for WaitAny: the Mutex acquired is the one at the exception's <c>MutexIndex</c>.</summary>
        internal static bool AbandonedAny(object exception, object handles, int site, long start)
        {
            try {
                object[] all = handles as object[];
                if (!IsAbandoned(exception) || all == null)
                    return false;
                PropertyInfo p = exception.GetType().GetProperty("MutexIndex");
                object index = p == null ? null : p.GetValue(exception, null);
                if (index is int && (uint)(int)index < (uint)all.Length && Handles.IsMutex(all[(int)index]))
                    Push(all[(int)index], site, start, Clock.Ticks(), false, Frame.Exclusive);
            } catch (Exception) {
            }
            return false;
        }

        /// <summary>As <see cref="Abandoned"/> for WaitAll: it acquired every handle, each Mutex among them.</summary>
        internal static bool AbandonedAll(object exception, object handles, int site, long start)
        {
            try {
                object[] all = handles as object[];
                if (IsAbandoned(exception) && all != null)
                    AcquiredAll(all, true, site, start, Clock.Ticks());
            } catch (Exception) {
            }
            return false;
        }

        internal static bool IsAbandoned(object exception)
        {
            return exception != null && exception.GetType().FullName == "System.Threading.AbandonedMutexException";
        }

        /// <summary>
        /// The lock of a static <c>[MethodImpl(Synchronized)]</c> method: the <see cref="Type"/> of its
        /// class, which the runtime locks around the body (the stub passes <c>ldtoken</c> of the class).
        /// </summary>
        internal static object TypeOf(RuntimeTypeHandle type)
        {
            return Type.GetTypeFromHandle(type);
        }

        /// <summary>
        /// <paramref name="exception"/> was thrown on the calling thread, whose record <paramref name="t"/> has a wait
        /// begun and not acquired: its lock call threw (a <c>Thread.Interrupt</c> on a thread blocked in <c>lock</c> or
        /// <c>Mutex.WaitOne</c>), seen first-chance (<see cref="Deadlocks.Thrown"/>, which ends the wait after this). The
        /// try did not acquire: a failed try of the wait's site, from the wait's start to now, charged to the holders
        /// that told their shares and the holder found as it began, as a timed try that gives up. Not an
        /// <c>AbandonedMutexException</c>, with which <c>WaitOne</c> acquired the mutex (<see cref="Abandoned"/> records it).
        /// </summary>
        internal static void Threw(object exception, ThreadRecord t)
        {
            Collector c = Runtime.Current;
            if (c == null || t.Busy || IsAbandoned(exception))
                return;
            int site = t.WaitingSite;
            long since = Volatile.Read(ref t.WaitingSince), now = Clock.Ticks();
            SiteStats stats = t.Stats(site);
            if (stats == null || now < since)
                return;
            string[] behind = Blame.Charge(c, t, t.WaitingFor, t.WaitingMode, since, now, stats, t.Behind);
            long ticks = now - since;
            t.Behind = null;
            c.Failed(t, site, ticks, behind, true);
        }

        /// <summary>
        /// A TryEnter of <paramref name="site"/> failed after waiting from <paramref name="start"/> to <paramref name="end"/>:
        /// behind the holder <see cref="WaitingTimed"/> found, when its try with 0 failed first.
        /// </summary>
        internal static void NotAcquired(int site, long start, long end)
        {
            try {
                Collector c = Runtime.Current;
                ThreadRecord t = Recorder(c);
                if (t == null)
                    return;
                string[] behind = t.Behind;
                t.Behind = null;
                t.EndWait();
                c.Failed(t, site, end - start, behind, false);
            } catch (Exception) {
            }
        }
    }
}
