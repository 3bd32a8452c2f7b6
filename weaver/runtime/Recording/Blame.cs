// Blame.cs - a contended wait's time shared among the holders it waited behind, from a log of their holds.
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>
    /// One hold in a <see cref="HoldLog"/>: the holder's site name, the lock's identity hash (<see cref="Lock"/>) and the
    /// mode it was held in, the hold's start (<see cref="HoldFrom"/>), end and length in ticks,
    /// the holder's managed thread id. Copied into a waiter's <see cref="ThreadRecord.Taken"/>, the part of its wait the
    /// hold covered. <see cref="Seq"/> is the slot's version, written last (0: never written, -1: being written), so a
    /// reader takes a hold whole or not at all.
    /// </summary>
    [CompilerGenerated]
    internal struct BlamePost
    {
        internal int Seq;
        internal string[] Holder;
        internal long Ticks, End;
        internal int Thread;
        internal long HoldFrom;
        internal int Lock;
        internal byte Mode;
    }

    /// <summary>
    /// The last holds released while a thread waited: a ring of <see cref="BlamePost"/> slots (a power of two), each written
    /// by the releasing thread in O(1) (<see cref="Add"/>), read by the waiters as they charge their waits (<see cref="Take"/>).
    /// A hold older than the ring's length of holds is overwritten: a wait that outlasts it charges the rest as
    /// <see cref="Blame.Charge"/> says.
    /// </summary>
    [CompilerGenerated]
    internal sealed class HoldLog
    {
        readonly BlamePost[] slots = new BlamePost[Blame.LogHolds];
        int next;

        /// <summary>
        /// Logs a hold of the lock whose identity hash is <paramref name="lockKey"/> in
        /// <paramref name="mode"/>, at site <paramref name="holder"/>, from <paramref name="acquired"/> to
        /// <paramref name="released"/> (ticks), by managed thread <paramref name="thread"/>. A slot another thread is writing
        /// at the same moment is left to it (the hold is not logged).
        /// </summary>
        [MethodImpl((MethodImplOptions)Jit.Optimized)]
        internal void Add(string[] holder, int lockKey, byte mode, long acquired, long released, int thread)
        {
            int i = (Interlocked.Increment(ref next) - 1) & (slots.Length - 1);
            int old = Volatile.Read(ref slots[i].Seq);
            if (old == -1 || Interlocked.CompareExchange(ref slots[i].Seq, -1, old) != old)
                return;
            slots[i].Holder = holder;
            slots[i].Lock = lockKey;
            slots[i].Mode = mode;
            slots[i].HoldFrom = acquired;
            slots[i].End = released;
            slots[i].Ticks = released - acquired;
            slots[i].Thread = thread;
            Volatile.Write(ref slots[i].Seq, old == int.MaxValue ? 1 : old + 1);
        }

        /// <summary>
        /// Copies into <paramref name="w"/>'s <see cref="ThreadRecord.Taken"/> (the calling thread's own) the part of a wait
        /// from <paramref name="from"/> to <paramref name="to"/> (ticks) in <paramref name="mode"/> that each logged hold of
        /// lock <paramref name="lockKey"/> covered, for the holds in a mode that blocks it, and returns how many,
        /// also kept in <see cref="ThreadRecord.TakenCount"/> (the timeline's links). Reads every slot once: a releasing
        /// thread preempted before it logged its hold logs it after later ones. Sets <see cref="ThreadRecord.TakenPart"/>
        /// when the shares may be only part of the wait's holds: more than <see cref="Blame.Posts"/>, or every slot written
        /// with a hold that ended after the wait began (older holds, the wait's first ones among them, overwritten).
        /// </summary>
        [MethodImpl((MethodImplOptions)Jit.Optimized)]
        internal int Take(ThreadRecord w, int lockKey, byte mode, long from, long to)
        {
            BlamePost[] taken = w.Taken ?? (w.Taken = new BlamePost[Blame.Posts]);
            int n = 0, written = 0;
            long oldest = long.MaxValue;
            for (int i = 0; i < slots.Length; i++) {
                int seq = Volatile.Read(ref slots[i].Seq);
                if (seq <= 0)
                    continue;
                written++;
                oldest = Math.Min(oldest, slots[i].End);
                if (n == taken.Length || slots[i].Lock != lockKey || slots[i].End <= from || slots[i].HoldFrom >= to)
                    continue;
                taken[n] = slots[i];
                if (Volatile.Read(ref slots[i].Seq) != seq || taken[n].Holder == null || taken[n].Lock != lockKey ||
                    !Frame.Blocks(taken[n].Mode, mode))
                    continue;
                long lo = Math.Max(taken[n].HoldFrom, from), hi = Math.Min(taken[n].End, to);
                taken[n].Ticks = hi - lo;
                taken[n].End = hi;
                if (taken[n].Ticks > 0)
                    n++;
            }
            w.TakenCount = n;
            w.TakenPart = n == taken.Length || (written == slots.Length && oldest > from);
            return n;
        }
    }

    /// <summary>
    /// Holder blame from the holders' own record of their holds. A waiter finds the holder once, as it begins to wait
    /// (<see cref="Collector.FindHolder"/>); on the thread pool that misses a thread just handed the lock, which has not
    /// yet recorded its frame, and a wait that lasts through several holders in turn was all charged to the first. So
    /// every holder that releases a lock while a thread of this copy waits (<see cref="WaitersNow"/> not 0: one read on
    /// the release path) logs its hold in the log of the lock's identity hash (<see cref="Released"/>, O(1)), and the
    /// waiter, when it charges its wait, takes the part of it each hold of that lock covered (<see cref="Charge"/>); what
    /// no hold covered (a holder in another woven assembly, the hand-over between two holds) goes to the holder found at
    /// the start. Shares of holders that held the lock together (readers) add up to more than the wait: they are scaled
    /// to it. Until 2026-12-07 each releasing holder posted its share into every waiting thread's record: with 64 threads
    /// on 8 locks, about 7 posts per release, each taking two cache lines from another core.
    /// </summary>
    [CompilerGenerated]
    internal static class Blame
    {
        /// <summary>
        /// Threads of this copy whose last wait is not charged yet (<see cref="ThreadRecord.WaitingFor"/> set: from
        /// <see cref="ThreadRecord.BeginWait"/> to <see cref="ThreadRecord.Charged"/>) - the last holder of a lock
        /// logs its hold after the release, when the waiter may have the lock already.
        /// </summary>
        internal static int WaitersNow;

        /// <summary>Shares one wait takes at most (<see cref="ThreadRecord.Taken"/>): the holds beyond these go as the rest of the wait.</summary>
        internal const int Posts = 16;

        /// <summary>Logs of the threads' waits, by the lock's identity hash (a power of two), and holds kept in each.</summary>
        internal const int Logs = 64, LogHolds = 32;

        /// <summary>This copy's logs of holds for the threads' waits, each made at its first hold (<see cref="Released"/>).</summary>
        static HoldLog[] logs;

        /// <summary>The log of the lock whose identity hash is <paramref name="key"/>; null when none was made and <paramref name="make"/> is false.</summary>
        static HoldLog Log(int key, bool make)
        {
            HoldLog[] all = Volatile.Read(ref logs);
            if (all == null) {
                if (!make)
                    return null;
                Interlocked.CompareExchange(ref logs, new HoldLog[Logs], null);
                all = logs;
            }
            int i = key & (Logs - 1);
            HoldLog log = Volatile.Read(ref all[i]);
            if (log == null && make) {
                Interlocked.CompareExchange(ref all[i], new HoldLog(), null);
                log = all[i];
            }
            return log;
        }

        /// <summary>
        /// <paramref name="holder"/>'s thread released <paramref name="lockObject"/>, held in <paramref name="mode"/> at
        /// <paramref name="site"/> from <paramref name="acquired"/> to <paramref name="now"/> (ticks): the hold goes into the
        /// log of the lock's identity hash, where each thread of this copy that waited for the lock in a mode the hold
        /// blocks takes its share as it charges its wait. Called only while <see cref="WaitersNow"/> is not 0.
        /// </summary>
        [MethodImpl((MethodImplOptions)Jit.Optimized)]
        internal static void Released(Collector c, ThreadRecord holder, object lockObject, int site, byte mode, long acquired, long now)
        {
            if (lockObject == null || (uint)site >= (uint)c.HolderNames.Length || now <= acquired)
                return;
            int key = RuntimeHelpers.GetHashCode(lockObject);
            Log(key, true).Add(c.HolderNames[site], key, mode, acquired, now, holder.ThreadId);
        }

        /// <summary>
        /// <paramref name="holder"/>'s thread gives <paramref name="lockObject"/> up at <paramref name="now"/> as it enters
        /// <c>Monitor.Wait</c>: the stretch it held it since it took it or last came back from a Wait
        /// (<see cref="ThreadRecord.Stretch"/>) is logged as a hold (<see cref="Released"/>), once, for its outermost frame
        /// (a re-entry's hold is the outer frame's). Called only while <see cref="WaitersNow"/> is not 0.
        /// </summary>
        internal static void GivenUp(Collector c, ThreadRecord holder, object lockObject, long now)
        {
            for (int i = 0; i < holder.Depth; i++) {
                Frame f = holder.Frames[i];
                if (ReferenceEquals(f.Lock, lockObject) && !f.Reentry && !f.InWait) {
                    Released(c, holder, lockObject, f.Site, f.Mode, holder.Stretch(f.Lock, f.Acquired), now);
                    return;
                }
            }
        }

        /// <summary>
        /// Charges <paramref name="w"/>'s wait (the calling thread, the one that waited) for <paramref name="lockObject"/> in
        /// <paramref name="mode"/>, from <paramref name="from"/> to <paramref name="to"/> (ticks), to its holders in
        /// <paramref name="s"/>'s <see cref="SiteStats.WaitedBehind"/> (the wait counted once, to the holder it waited behind
        /// longest): each logged hold's part of it (scaled down when the parts exceed the wait; scaled up to it when they may
        /// be only part of the holds, <see cref="ThreadRecord.TakenPart"/>: a wait through more holds than the log keeps), the rest to
        /// <paramref name="found"/>, the holder found as the wait began, when no hold of it was logged (it is in another copy),
        /// else to the holder that released last: the hand-over after its release (the waiter woken) is its. Returns the
        /// holder waited behind longest, or null.
        /// </summary>
        internal static string[] Charge(Collector c, ThreadRecord w, object lockObject, byte mode, long from, long to, SiteStats s, string[] found)
        {
            int key = lockObject == null ? 0 : RuntimeHelpers.GetHashCode(lockObject);
            HoldLog log = lockObject == null ? null : Log(key, false);
            return Share(c, w, log != null ? log.Take(w, key, mode, from, to) : Untaken(w), s, to - from, found);
        }

        /// <summary>No share taken: <paramref name="w"/>'s <see cref="ThreadRecord.TakenCount"/> 0; returns 0.</summary>
        static int Untaken(ThreadRecord w)
        {
            w.TakenCount = 0;
            w.TakenPart = false;
            return 0;
        }

        /// <summary>Charges <paramref name="waitTicks"/> to the <paramref name="n"/> shares taken into <paramref name="w"/>'s <see cref="ThreadRecord.Taken"/>, as <see cref="Charge"/> says.</summary>
        [MethodImpl((MethodImplOptions)Jit.Optimized)]
        static string[] Share(Collector c, ThreadRecord w, int n, SiteStats s, long waitTicks, string[] found)
        {
            BlamePost[] taken = w.Taken;
            long told = 0;
            for (int i = 0; i < n; i++)
                told += taken[i].Ticks;
            if (told <= 0) {
                if (found != null)
                    s.WaitedBehind(found, c.Ns(waitTicks), 1);
                return found;
            }
            double scale = told > waitTicks || w.TakenPart ? (double)waitTicks / told : 1; /* part of the holds: scaled up to the wait */
            long charged = 0, longestTicks = 0, lastEnd = long.MinValue;
            string[] longest = null, last = null;
            bool foundTold = false;
            for (int i = 0; i < n; i++) {
                long share = Math.Min((long)(taken[i].Ticks * scale), waitTicks - charged);
                taken[i].Ticks = share > 0 ? share : 0;
                charged += taken[i].Ticks;
                if (taken[i].Ticks > 0 && taken[i].End > lastEnd) {
                    lastEnd = taken[i].End;
                    last = taken[i].Holder;
                }
                foundTold |= found != null && SiteStats.Same(taken[i].Holder, found);
            }
            long rest = waitTicks - charged;
            string[] restTo = found != null && !foundTold ? found : last;
            for (int i = 0; i < n; i++)
                if (ReferenceEquals(taken[i].Holder, restTo)) {
                    taken[i].Ticks += rest; /* the hand-over after the last release */
                    rest = 0;
                    break;
                }
            for (int i = 0; i < n; i++)
                if (taken[i].Ticks > longestTicks) {
                    longestTicks = taken[i].Ticks;
                    longest = taken[i].Holder;
                }
            if (rest > 0 && restTo != null && rest > longestTicks)
                longest = restTo;
            long counted = 1; /* the wait counts once, to the first share of the holder it waited behind longest */
            for (int i = 0; i < n; i++) {
                if (taken[i].Ticks > 0) {
                    long count = ReferenceEquals(taken[i].Holder, longest) ? counted : 0;
                    s.WaitedBehind(taken[i].Holder, c.Ns(taken[i].Ticks), count);
                    counted -= count;
                }
                taken[i].Holder = null;
            }
            if (rest > 0 && restTo != null)
                s.WaitedBehind(restTo, c.Ns(rest), ReferenceEquals(restTo, longest) ? counted : 0);
            return longest;
        }
    }
}
