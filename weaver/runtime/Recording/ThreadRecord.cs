// ThreadRecord.cs - one thread's record: the locks it holds now, and its statistics per site.
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>One lock a thread holds: which object, taken at which site, when, after how long a wait.</summary>
    [CompilerGenerated]
    internal struct Frame
    {
        internal object Lock;
        internal int Site;
        internal long Acquired;   /* ticks */
        internal long Wait;       /* ticks */
        internal bool Contended;
        /// <summary>How the lock is held: <see cref="Exclusive"/>, <see cref="Scope"/>, <see cref="Read"/>, <see cref="Upgradeable"/> or <see cref="Spin"/>.</summary>
        internal byte Mode;
        /// <summary>Contended: the site that held the lock when this thread began to wait (<see cref="Collector.HolderName"/>), or null.</summary>
        internal string[] Holder;
        /// <summary>Odd while this slot is written (<see cref="ThreadRecord.Begin"/>): a reader on another thread takes Lock and Site only when it was even and unchanged around them.</summary>
        internal int Seq;
        /// <summary>True while the thread is inside <c>Monitor.Wait</c> on this lock: it holds the frame, not the lock.</summary>
        internal bool InWait;
        /// <summary>
        /// A re-entry: the thread held this lock already (an outer frame, <see cref="ThreadRecord.Push"/>) when it took
        /// it again. No wait, no hold and no line of its own - the outer frame's hold is the hold - and no lock order.
        /// </summary>
        internal bool Reentry;
        /// <summary>A SpinLock's frame: the SpinLock's address when it was entered (<see cref="Api.AcquiredSpin"/>), by which an Exit on another thread finds it.</summary>
        internal long SpinAt;
        /// <summary>
        /// 1 when another thread exited this frame's SpinLock (<see cref="Collector.EndSpinElsewhere"/>), which recorded the hold:
        /// no hold now, and the owner drops the frame (<see cref="ThreadRecord.DropEnded"/>). Set by that thread (Interlocked).
        /// </summary>
        internal int Ended;
        /// <summary>Contended: the number of the wait that preceded the acquisition (<see cref="ThreadRecord.WaitSeq"/>), whose holders' shares <see cref="Blame.Charge"/> takes; 0 for none.</summary>
        internal int WaitSeq;

        /// <summary>A lock no other thread shares while it is held (Monitor, Lock, a write lock, a Mutex).</summary>
        internal const byte Exclusive = 0;
        /// <summary>Taken by <c>Lock.EnterScope</c>: released by <c>Scope.Dispose</c>, exclusive.</summary>
        internal const byte Scope = 1;
        /// <summary>A read lock: other readers and one upgradeable holder share it.</summary>
        internal const byte Read = 2;
        /// <summary>An upgradeable read lock: readers share it, other upgradeable and write locks do not.</summary>
        internal const byte Upgradeable = 3;
        /// <summary>A <c>SpinLock</c> (a struct: no object, <see cref="Lock"/> is null); released innermost first.</summary>
        internal const byte Spin = 4;

        /// <summary>Whether a thread asking for a lock in mode <paramref name="waiter"/> can wait for one held in <paramref name="held"/>: read with read or upgradeable do not block each other.</summary>
        internal static bool Blocks(byte held, byte waiter)
        {
            if (held == Read)
                return waiter != Read && waiter != Upgradeable;
            return !(held == Upgradeable && waiter == Read);
        }
    }

    /// <summary>
    /// A frame that came back from <c>Monitor.Wait</c> (<see cref="ThreadRecord.Resume"/>): the frame is the one of
    /// <see cref="Lock"/> whose <see cref="Frame.Acquired"/> is <see cref="Acquired"/>, which the Wait moved on by
    /// <see cref="Paused"/>; <see cref="Resumed"/> is when the Wait last returned. Kept beside the frames, not in them:
    /// only the contended path reads it, and a larger <see cref="Frame"/> slows every uncontended lock.
    /// </summary>
    [CompilerGenerated]
    internal struct Pause
    {
        internal object Lock;
        internal long Acquired;   /* ticks */
        internal long Paused;     /* ticks */
        internal long Resumed;    /* ticks */
    }

    /// <summary>
    /// The record of one thread in one copy of the run-time ([ThreadStatic]: no other thread writes it,
    /// so recording needs no lock and no Interlocked). Frames are a stack searched from the top, since
    /// locks are not always released in the reverse order they were taken.
    /// </summary>
    [CompilerGenerated]
    internal sealed class ThreadRecord
    {
        [ThreadStatic]
        internal static ThreadRecord Current;

        /// <summary>Makes the calling thread one of the run-time's own: a busy record, so that its locks are not recorded.</summary>
        internal static void MakeOwn()
        {
            ThreadRecord own = new ThreadRecord(0);
            own.Busy = true;
            Current = own;
        }

        internal Frame[] Frames = new Frame[8];
        internal int Depth;

        /// <summary>Per site id, null until this thread records the site.</summary>
        internal SiteStats[] Sites;

        /// <summary>
        /// Set while the run-time itself works on this thread (the line writer, the summary at exit):
        /// locks taken there are not recorded, so a woven framework does not time its own reporting.
        /// </summary>
        internal bool Busy;

        /// <summary>The holder found by <see cref="Api.Waiting"/>, taken by the next contended acquisition.</summary>
        internal string[] Behind;

        /// <summary>
        /// The wait this thread is in (<see cref="Api.Waiting"/> and its kin, until the contended acquisition, the
        /// failed try or an exception: <see cref="EndWait"/>): its site, and its start in ticks (volatile; 0: none).
        /// </summary>
        internal int WaitingSite;
        internal long WaitingSince;

        /// <summary>
        /// The lock of the thread's last wait (<see cref="BeginWait"/>), kept until the wait is charged to its holders
        /// (<see cref="Charged"/>: at the release of the lock it waited for, when the last holder has logged its hold), the
        /// mode it was asked in and the wait's number (counted from 1): while a thread has one, the holders of its copy log
        /// their holds (<see cref="Blame.WaitersNow"/>, <see cref="Blame.Released"/>).
        /// </summary>
        internal object WaitingFor;
        internal byte WaitingMode;
        internal int WaitSeq;

        /// <summary>The shares of the wait being charged, taken from the log of its lock's holds (<see cref="Blame.Charge"/>, on this thread only).</summary>
        internal BlamePost[] Taken;
        /// <summary>How many of <see cref="Taken"/> the last wait charged took (the holds its timeline event links to).</summary>
        internal int TakenCount;
        /// <summary>Whether those shares may be only part of the holds the wait waited behind (<see cref="HoldLog.Take"/>): then they are scaled up to the wait, none of it left to the holder found at the start.</summary>
        internal bool TakenPart;

        /// <summary>The thread whose frame <see cref="Collector.Holder(object, byte)"/> found holding the lock of this thread's last wait, and the start of that hold (ticks); 0: none found.</summary>
        internal int FoundThread;
        internal long FoundFrom;

        /// <summary>The thread's managed id (<see cref="Thread.ManagedThreadId"/>), for the holders' posts and the timeline.</summary>
        internal int ThreadId;
        /// <summary>The thread's slow lock being given to the timeline (<see cref="Timeline.Fields"/> longs, made at its first).</summary>
        internal long[] Event;

        /// <summary>The hold of a semaphore this thread is releasing (<see cref="Api.ReleasingSemaphore"/>), until <see cref="Api.ReleasedSemaphore"/> records it.</summary>
        internal Frame Releasing;

        /// <summary>
        /// The thread's list of held locks for the lock order (<see cref="HeldLocks.Current"/>) when this
        /// copy owns the lock order, kept here once looked up (<see cref="HoldList"/>): one thread-static
        /// read per entry point, not two.
        /// </summary>
        internal HeldLocks Held;

        /// <summary>The semaphore this thread looked up last and its state (<see cref="SemaphoreTable.Of"/>): no search for the next.</summary>
        internal object LastSemaphore;
        internal SemaphoreState LastSemaphoreState;

        /// <summary>The holds of semaphores this thread entered into the lock order (made on the first).</summary>
        internal OrderedSemaphores Ordered;

        /// <summary>
        /// 1 (set by another thread, volatile) when a hold in <see cref="Ordered"/> was released elsewhere: this
        /// thread takes such holds off its lock order before it next enters a lock there.
        /// </summary>
        internal int Stale;

        internal ThreadRecord(int sites)
        {
            Sites = new SiteStats[sites];
        }

        /// <summary>
        /// Pushes a frame, doubling the stack when full. The slot is written between the two increments
        /// of its sequence (see <see cref="Begin"/>): a waiter reading this record from another thread
        /// (<see cref="Collector.Holder"/>) takes an object with its own site or nothing. Returns true for a
        /// re-entry (<see cref="Frame.Reentry"/>): this thread holds <paramref name="lockObject"/> already in a mode
        /// that covers <paramref name="mode"/> (<see cref="Covers"/>) - looked for only when it holds any lock.
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal bool Push(object lockObject, int site, long acquired, long wait, bool contended, byte mode)
        {
            return Push(lockObject, site, acquired, wait, contended, mode, 0);
        }

        /// <summary>As <see cref="Push(object, int, long, long, bool, byte)"/>, a SpinLock's frame with its address <paramref name="spin"/> (<see cref="Frame.SpinAt"/>).</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal bool Push(object lockObject, int site, long acquired, long wait, bool contended, byte mode, long spin)
        {
            int d = Depth;
            Frame[] frames = Frames;
            bool again = d != 0 && lockObject != null && HeldAlready(d - 1, lockObject, mode);
            if (d >= frames.Length)
                frames = Grow();
            ref Frame f = ref frames[d];
            int seq = Begin(ref f);
            Volatile.Write(ref f.Site, site);
            f.Acquired = acquired;
            f.Wait = wait;
            f.Contended = contended;
            f.Mode = mode;
            f.Reentry = again;
            f.SpinAt = spin;
            if (contended) { /* else Holder stays null: a free slot is cleared (Remove) */
                f.Holder = Behind;
                Behind = null;
                f.WaitSeq = 0;
                if (WaitingSince != 0) {
                    f.WaitSeq = WaitSeq;
                    WaitAcquired();
                }
            }
            Volatile.Write(ref f.Lock, lockObject);
            End(ref f, seq);
            Depth = d + 1;
            return again;
        }

        /// <summary>
        /// Whether a frame from <paramref name="i"/> down holds <paramref name="lockObject"/> in a mode that covers
        /// <paramref name="mode"/> (<see cref="Covers"/>), not paused inside a wait: searched from the innermost, where a
        /// recursion's last frame is, so a deep recursion costs one comparison per acquisition.
        /// </summary>
        bool HeldAlready(int i, object lockObject, byte mode)
        {
            Frame[] frames = Frames;
            for (; i >= 0 && i < frames.Length; i--) {
                ref Frame f = ref frames[i];
                if (ReferenceEquals(f.Lock, lockObject) && !f.InWait && Covers(f.Mode, mode))
                    return true;
            }
            return false;
        }

        /// <summary>
        /// Whether a thread holding a lock in mode <paramref name="held"/> that takes it again in mode
        /// <paramref name="taken"/> re-enters it (takes nothing it did not have): an exclusive hold covers every mode;
        /// an upgradeable read lock covers a read and another upgradeable one (not a write lock: the upgrade waits
        /// for the readers, a hold of its own); a read lock covers a read.
        /// </summary>
        internal static bool Covers(byte held, byte taken)
        {
            if (held == Frame.Exclusive || held == Frame.Scope)
                return taken != Frame.Spin;
            if (held == Frame.Upgradeable)
                return taken == Frame.Read || taken == Frame.Upgradeable;
            return held == Frame.Read && taken == Frame.Read;
        }

        /// <summary>
        /// After the frame at <paramref name="i"/> that held <paramref name="lockObject"/> ended (the frames above it
        /// moved down to <paramref name="i"/>): the first re-entry of the lock above it, unless a frame below still
        /// covers it, holds the lock from <paramref name="now"/> on - a write lock released before the read lock taken
        /// inside it, whose read lock goes on. True when one does: the ended frame's place in the lock order is its.
        /// </summary>
        internal bool Promote(int i, object lockObject, long now)
        {
            Frame[] frames = Frames;
            for (int j = i; j < Depth && j < frames.Length; j++) {
                ref Frame f = ref frames[j];
                if (!f.Reentry || !ReferenceEquals(f.Lock, lockObject))
                    continue;
                if (i > 0 && HeldAlready(i - 1, lockObject, f.Mode))
                    return false;
                int seq = Begin(ref f);
                f.Reentry = false;
                f.Acquired = now;
                f.Wait = 0;
                f.Contended = false;
                f.Holder = null;
                End(ref f, seq);
                return true;
            }
            return false;
        }

        /// <summary>
        /// This thread begins to wait at <paramref name="site"/> now for <paramref name="lockObject"/> in <paramref name="mode"/>
        /// (read by <see cref="Collector.WaitingNow"/>; the holders that release it meanwhile log their holds: <see cref="Blame.Released"/>).
        /// </summary>
        [MethodImpl((MethodImplOptions)Jit.Optimized)]
        internal void BeginWait(int site, object lockObject, byte mode)
        {
            long now = Math.Max(1, Clock.Ticks());
            int seq = WaitSeq + 1;
            Volatile.Write(ref WaitSeq, seq > 0 ? seq : 1);
            WaitingMode = mode;
            if (WaitingFor == null && lockObject != null)
                Interlocked.Increment(ref Blame.WaitersNow);
            else if (WaitingFor != null && lockObject == null)
                Interlocked.Decrement(ref Blame.WaitersNow);
            Volatile.Write(ref WaitingFor, lockObject);
            WaitingSite = site;
            Volatile.Write(ref WaitingSince, now);
        }

        /// <summary>
        /// This thread's wait ended in an acquisition: it waits no more, but the holders of its copy go on logging their
        /// holds until the wait is <see cref="Charged"/> (the last one logs it after its release).
        /// </summary>
        internal void WaitAcquired()
        {
            Volatile.Write(ref WaitingSince, 0);
        }

        /// <summary>The wait numbered <paramref name="seq"/> is charged to its holders (<see cref="Blame.Charge"/>): when it is the last, it keeps its copy's holders logging no more.</summary>
        internal void Charged(int seq)
        {
            if (seq == WaitSeq && WaitingFor != null) {
                Volatile.Write(ref WaitingFor, null);
                Interlocked.Decrement(ref Blame.WaitersNow);
            }
        }

        /// <summary>This thread waits no more and acquired nothing: the try failed or threw (or the thread ended: <see cref="Collector"/>'s sweep).</summary>
        internal void EndWait()
        {
            if (WaitingSince != 0)
                Volatile.Write(ref WaitingSince, 0);
            Charged(WaitSeq);
        }

        /// <summary>Looks <see cref="Held"/> up (the thread's first lock with the lock order on) and returns it.</summary>
        internal HeldLocks HoldList(LockOrder order)
        {
            Held = order.ThreadHolds();
            return Held;
        }

        /// <summary>Doubles the frame stack; returns the new one.</summary>
        Frame[] Grow()
        {
            Frame[] grown = new Frame[Frames.Length * 2];
            Array.Copy(Frames, grown, Depth);
            Frames = grown;
            return grown;
        }

        /// <summary>
        /// The index of the innermost frame a release in <paramref name="mode"/> ends, or -1: of
        /// <paramref name="lockObject"/> held exclusively (a Lock.Scope frame too), read or upgradeable;
        /// for <see cref="Frame.Scope"/> and <see cref="Frame.Spin"/> the innermost frame of that mode.
        /// The innermost frame is the one in all but out-of-order releases: it is tried first, inline.
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal int Find(object lockObject, byte mode)
        {
            int top = Depth - 1;
            Frame[] frames = Frames;
            if ((uint)top < (uint)frames.Length && Ends(ref frames[top], lockObject, mode))
                return top;
            return FindBelow(top - 1, lockObject, mode);
        }

        /// <summary>As <see cref="Find"/>, from frame <paramref name="i"/> down.</summary>
        int FindBelow(int i, object lockObject, byte mode)
        {
            for (; i >= 0; i--)
                if (Ends(ref Frames[i], lockObject, mode))
                    return i;
            return -1;
        }

        /// <summary>Whether a release of <paramref name="lockObject"/> in <paramref name="mode"/> ends frame <paramref name="f"/> (<see cref="Find"/>).</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        static bool Ends(ref Frame f, object lockObject, byte mode)
        {
            byte m = f.Mode;
            if (mode == Frame.Spin)
                return m == mode && f.Ended == 0;
            if (mode == Frame.Scope)
                return m == mode;
            return ReferenceEquals(f.Lock, lockObject) && (m == mode || (mode == Frame.Exclusive && m == Frame.Scope));
        }

        /// <summary>
        /// The index of the innermost SpinLock frame of address <paramref name="spin"/> that no other thread ended, or -1
        /// (a SpinLock entered on another thread, or moved by the GC since: its address is another).
        /// </summary>
        internal int FindSpin(long spin)
        {
            Frame[] frames = Frames;
            for (int i = Depth - 1; i >= 0 && i < frames.Length; i--)
                if (frames[i].Mode == Frame.Spin && frames[i].SpinAt == spin && Volatile.Read(ref frames[i].Ended) == 0)
                    return i;
            return -1;
        }

        /// <summary>
        /// 1 (set by another thread, volatile) when it ended a SpinLock frame of this thread (<see cref="Frame.Ended"/>):
        /// this thread drops such frames at its next SpinLock call (<see cref="DropEnded"/>).
        /// </summary>
        internal int SpinsEnded;

        /// <summary>Removes the SpinLock frames that other threads ended (<see cref="SpinsEnded"/>), when there are any.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal void DropEnded()
        {
            if (Volatile.Read(ref SpinsEnded) != 0 && Interlocked.Exchange(ref SpinsEnded, 0) != 0)
                for (int i = Depth - 1; i >= 0; i--)
                    if (Frames[i].Mode == Frame.Spin && Volatile.Read(ref Frames[i].Ended) != 0)
                        Remove(i);
        }

        /// <summary>
        /// Slot <paramref name="i"/> of another thread's <paramref name="frames"/>, read without a lock into
        /// <paramref name="copy"/> (its object, site, acquisition time, wait, holder, mode, flags and SpinLock address): true only when its
        /// sequence was even and the same around the reads (<see cref="Frame.Seq"/>), so a slot being written
        /// gives nothing rather than one frame's object with another's site.
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal static bool Read(Frame[] frames, int i, out Frame copy)
        {
            copy = default(Frame);
            int seq = Volatile.Read(ref frames[i].Seq);
            if ((seq & 1) != 0)
                return false;
            copy.Lock = Volatile.Read(ref frames[i].Lock);
            copy.Site = Volatile.Read(ref frames[i].Site);
            copy.Acquired = Volatile.Read(ref frames[i].Acquired);
            copy.InWait = Volatile.Read(ref frames[i].InWait);
            copy.Mode = Volatile.Read(ref frames[i].Mode);
            copy.Reentry = Volatile.Read(ref frames[i].Reentry);
            copy.SpinAt = Volatile.Read(ref frames[i].SpinAt);
            copy.Ended = Volatile.Read(ref frames[i].Ended);
            copy.Wait = Volatile.Read(ref frames[i].Wait);
            copy.Contended = Volatile.Read(ref frames[i].Contended);
            copy.Holder = Volatile.Read(ref frames[i].Holder);
            return Volatile.Read(ref frames[i].Seq) == seq;
        }

        /// <summary>Marks slot <paramref name="f"/> as being written (its sequence odd); returns the even sequence it had.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        static int Begin(ref Frame f)
        {
            int seq = f.Seq;
            Volatile.Write(ref f.Seq, seq + 1);
            return seq;
        }

        /// <summary>Marks slot <paramref name="f"/> as written (its sequence even again, and new).</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        static void End(ref Frame f, int seq)
        {
            Volatile.Write(ref f.Seq, seq + 2);
        }

        /// <summary>
        /// Removes frame <paramref name="i"/> and returns it; the frames above move down. Each slot is
        /// changed between <see cref="Begin"/> and <see cref="End"/>; a free slot keeps its sequence
        /// and has no object and no holder.
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal Frame Remove(int i)
        {
            Frame f = Frames[i];
            if (i != Depth - 1)
                MoveDown(i);
            Depth--;
            ref Frame top = ref Frames[Depth];
            int seq = Begin(ref top);
            Volatile.Write(ref top.Lock, null);
            top.Holder = null;
            top.InWait = false;
            top.Reentry = false;
            top.Ended = 0;
            End(ref top, seq);
            return f;
        }

        /// <summary>Moves the frames above <paramref name="i"/> one down, over it (the innermost slot keeps a copy: <see cref="Remove"/> clears it).</summary>
        void MoveDown(int i)
        {
            for (int j = i; j < Depth - 1; j++) {
                ref Frame f = ref Frames[j];
                Frame above = Frames[j + 1];
                int seq = Begin(ref f);
                Volatile.Write(ref f.Site, above.Site);
                f.Acquired = above.Acquired;
                f.Wait = above.Wait;
                f.Contended = above.Contended;
                f.Mode = above.Mode;
                f.Holder = above.Holder;
                f.InWait = above.InWait;
                f.Reentry = above.Reentry;
                f.SpinAt = above.SpinAt;
                f.Ended = above.Ended;
                f.WaitSeq = above.WaitSeq;
                Volatile.Write(ref f.Lock, above.Lock);
                End(ref f, seq);
            }
        }

        /// <summary>The frames that came back from <c>Monitor.Wait</c>: null until this thread's first; the oldest of <see cref="PausesKept"/> overwritten.</summary>
        Pause[] pauses;
        int pauseNext;
        /// <summary>Frames with a pause kept at once: past them (Waits on that many locks held at once), the oldest frame's hold counts from its acquisition for blame.</summary>
        internal const int PausesKept = 8;

        /// <summary>
        /// <c>Monitor.Wait</c> on <paramref name="lockObject"/> returned at <paramref name="now"/> after <paramref name="ticks"/>:
        /// every frame of it holds again and starts that much later (not hold time: Wait gives up the monitor however often
        /// the thread entered it and takes it back as often); its pause is kept (<see cref="Took"/>, <see cref="Stretch"/>).
        /// </summary>
        internal void Resume(object lockObject, long ticks, long now)
        {
            SetInWait(lockObject, false);
            for (int i = 0; i < Depth; i++) {
                if (!ReferenceEquals(Frames[i].Lock, lockObject))
                    continue;
                int k = PauseOf(lockObject, Frames[i].Acquired);
                if (k < 0) {
                    pauses = pauses ?? new Pause[PausesKept];
                    k = pauseNext;
                    pauseNext = (pauseNext + 1) % PausesKept;
                    pauses[k].Lock = lockObject;
                    pauses[k].Paused = 0;
                }
                Frames[i].Acquired += ticks;
                pauses[k].Acquired = Frames[i].Acquired;
                pauses[k].Paused += ticks;
                pauses[k].Resumed = now;
            }
        }

        /// <summary>The pause kept for the frame of <paramref name="lockObject"/> acquired at <paramref name="acquired"/> (as moved by its Waits), or -1.</summary>
        int PauseOf(object lockObject, long acquired)
        {
            if (pauses == null)
                return -1;
            for (int k = 0; k < PausesKept; k++)
                if (pauses[k].Acquired == acquired && ReferenceEquals(pauses[k].Lock, lockObject))
                    return k;
            return -1;
        }

        /// <summary>
        /// When the frame of <paramref name="lockObject"/> whose <see cref="Frame.Acquired"/> is <paramref name="acquired"/> took
        /// its lock (ticks): the end of its wait, before any <c>Monitor.Wait</c> moved <see cref="Frame.Acquired"/> on. Takes
        /// the frame's fields, not the frame: a <see cref="Frame"/> passed by value is a struct the JIT zeroes in the caller's
        /// prolog, on every release (about 3.5 ns measured).
        /// </summary>
        internal long Took(object lockObject, long acquired)
        {
            int k = PauseOf(lockObject, acquired);
            return k < 0 ? acquired : acquired - pauses[k].Paused;
        }

        /// <summary>Since when that frame (<see cref="Took"/>) holds its lock without a break (ticks): its acquisition, or the return of its last <c>Monitor.Wait</c>.</summary>
        internal long Stretch(object lockObject, long acquired)
        {
            int k = PauseOf(lockObject, acquired);
            return k < 0 ? acquired : pauses[k].Resumed;
        }

        /// <summary>Marks every frame of <paramref name="lockObject"/> as inside <c>Monitor.Wait</c> (<paramref name="inWait"/>) or holding again.</summary>
        internal void SetInWait(object lockObject, bool inWait)
        {
            for (int i = 0; i < Depth; i++) {
                if (!ReferenceEquals(Frames[i].Lock, lockObject))
                    continue;
                ref Frame f = ref Frames[i];
                int seq = Begin(ref f);
                f.InWait = inWait;
                End(ref f, seq);
            }
        }

        /// <summary>The statistics of <paramref name="site"/>, made on first use; null for an unknown id.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal SiteStats Stats(int site)
        {
            SiteStats[] sites = Sites;
            if ((uint)site >= (uint)sites.Length)
                return null;
            return sites[site] ?? NewStats(site);
        }

        SiteStats NewStats(int site)
        {
            SiteStats s = new SiteStats();
            Sites[site] = s;
            return s;
        }
    }
}
