// Blame.cs - a contended wait's time shared among the holders it waited behind, each told by the holder itself.
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>
    /// One holder's share of a wait, posted into the waiting thread's record (<see cref="ThreadRecord.Posts"/>)
    /// by the thread that released the lock: for wait number <see cref="Seq"/> of that thread, the holder's
    /// site name, how long of the wait it held the lock and when that part ended (ticks), the holder's managed thread id
    /// and the start of its hold (ticks: the hold's event in the timeline, <see cref="Timeline"/>). <see cref="Seq"/> is
    /// written last (0: free, -1: being written), so the waiter takes a post whole or not at all.
    /// </summary>
    [CompilerGenerated]
    internal struct BlamePost
    {
        internal int Seq;
        internal string[] Holder;
        internal long Ticks, End;
        internal int Thread;
        internal long HoldFrom;
    }

    /// <summary>
    /// Holder blame told by the holders. A waiter finds the holder once, as it begins to wait
    /// (<see cref="Collector.FindHolder"/>); on the thread pool that misses a thread just handed the lock,
    /// which has not yet recorded its frame, and a wait that lasts through several holders in turn was
    /// all charged to the first. So every holder that releases a lock while a thread of this copy waits
    /// (<see cref="WaitersNow"/> not 0: one read on the release path) gives each thread waiting for that
    /// lock its share - the part of the wait during which it held it - and the waiter charges its wait to
    /// those holders (<see cref="Charge"/>); what no holder told (a holder in another woven assembly, the
    /// hand-over between two holds) goes to the holder found at the start. Shares of holders that held the
    /// lock together (readers) add up to more than the wait: they are scaled to it.
    /// </summary>
    [CompilerGenerated]
    internal static class Blame
    {
        /// <summary>
        /// Threads of this copy whose last wait is not charged yet (<see cref="ThreadRecord.WaitingFor"/> set: from
        /// <see cref="ThreadRecord.BeginWait"/> to <see cref="ThreadRecord.Charged"/>) - the last holder of a lock
        /// tells its share after the release, when the waiter may have the lock already.
        /// </summary>
        internal static int WaitersNow;

        /// <summary>Posts kept per thread: the holders of one wait told beyond these overwrite the oldest (their time goes to the holder found at the start).</summary>
        internal const int Posts = 16;

        /// <summary>
        /// <paramref name="holder"/>'s thread released <paramref name="lockObject"/>, held in <paramref name="mode"/> at
        /// <paramref name="site"/> since <paramref name="acquired"/> (ticks), at <paramref name="now"/>: every other
        /// thread of this copy waiting for it in a mode that hold blocks is told the part of its wait the hold
        /// covered. Called only while <see cref="WaitersNow"/> is not 0.
        /// </summary>
        internal static void Released(Collector c, ThreadRecord holder, object lockObject, int site, byte mode, long acquired, long now)
        {
            if (lockObject == null || (uint)site >= (uint)c.HolderNames.Length)
                return;
            foreach (ThreadRecord w in c.Others(holder)) {
                int seq = Volatile.Read(ref w.WaitSeq);
                long began = Volatile.Read(ref w.WaitBegan), ended = Volatile.Read(ref w.WaitEnded);
                if (!ReferenceEquals(Volatile.Read(ref w.WaitingFor), lockObject) || !Frame.Blocks(mode, Volatile.Read(ref w.WaitingMode)) ||
                    Volatile.Read(ref w.WaitSeq) != seq)
                    continue;
                long from = Math.Max(acquired, began), to = ended != 0 ? Math.Min(now, ended) : now;
                if (to > from)
                    Post(w.Posts, ref w.PostNext, seq, c.HolderNames[site], to - from, to, holder.ThreadId, acquired);
            }
        }

        /// <summary>Holds kept per semaphore that <c>WaitAsync</c>s wait for (<see cref="SemaphoreState.Holds"/>): a wait through more holds charges the older ones' part as the rest.</summary>
        internal const int HoldLog = 16;

        /// <summary>
        /// <paramref name="holder"/>'s thread releases semaphore state <paramref name="s"/>'s hold, taken at
        /// <paramref name="site"/> at <paramref name="acquired"/> (ticks), at <paramref name="now"/>, while a
        /// <c>WaitAsync</c> waits for it (<see cref="SemaphoreState.Pending"/>: no thread of its own to post to): the
        /// hold goes into the semaphore's log (<see cref="SemaphoreState.Holds"/>), whose holds each wait shares its time
        /// among as it is recorded (<see cref="ChargeLogged"/>). O(1), before the original <c>Release</c>, so that a wait
        /// its release completes finds it.
        /// </summary>
        internal static void ReleasedLogged(Collector c, ThreadRecord holder, SemaphoreState s, int site, long acquired, long now)
        {
            if ((uint)site < (uint)c.HolderNames.Length && now > acquired)
                Post(s.Holds, ref s.HoldNext, 1, c.HolderNames[site], now - acquired, now, holder.ThreadId, acquired);
        }

        /// <summary>
        /// Puts a share of <paramref name="ticks"/> by <paramref name="holder"/> into <paramref name="posts"/> (a waiting
        /// thread's, for its wait <paramref name="seq"/>; or a semaphore's log of holds, seq 1, the hold's whole length),
        /// <paramref name="next"/> its next slot, ending at <paramref name="end"/>, with the holder's
        /// <paramref name="thread"/> and the start of its hold <paramref name="holdFrom"/>; a slot another holder is writing
        /// at the same moment is left to it (the share is lost).
        /// </summary>
        static void Post(BlamePost[] posts, ref int next, int seq, string[] holder, long ticks, long end, int thread, long holdFrom)
        {
            if (posts == null)
                return;
            int i = (Interlocked.Increment(ref next) - 1) & (posts.Length - 1);
            int old = Volatile.Read(ref posts[i].Seq);
            if (old == -1 || Interlocked.CompareExchange(ref posts[i].Seq, -1, old) != old)
                return;
            posts[i].Holder = holder;
            posts[i].Ticks = ticks;
            posts[i].End = end;
            posts[i].Thread = thread;
            posts[i].HoldFrom = holdFrom;
            Volatile.Write(ref posts[i].Seq, seq);
        }

        /// <summary>
        /// Copies the whole posts of wait <paramref name="seq"/> out of <paramref name="posts"/> into <paramref name="w"/>'s
        /// <see cref="ThreadRecord.Taken"/> (the calling thread's own: a holder late to tell may overwrite a slot
        /// meanwhile) and returns how many, also kept in <see cref="ThreadRecord.TakenCount"/> (the timeline's links).
        /// <paramref name="posts"/> is <paramref name="w"/>'s ring, or, with <paramref name="clip"/>, a semaphore's log
        /// of whole holds (<see cref="ReleasedLogged"/>, seq 1), of which each share is the part of the wait from
        /// <paramref name="from"/> to <paramref name="to"/> (ticks) its hold covered.
        /// </summary>
        static int Take(ThreadRecord w, BlamePost[] posts, int seq, bool clip, long from, long to)
        {
            w.TakenCount = 0;
            if (seq == 0 || posts == null)
                return 0;
            BlamePost[] taken = w.Taken ?? (w.Taken = new BlamePost[Posts]);
            int n = 0;
            for (int i = 0; i < posts.Length && n < taken.Length; i++) {
                if (Volatile.Read(ref posts[i].Seq) != seq)
                    continue;
                taken[n].Holder = posts[i].Holder;
                taken[n].Ticks = posts[i].Ticks;
                taken[n].End = posts[i].End;
                taken[n].Thread = posts[i].Thread;
                taken[n].HoldFrom = posts[i].HoldFrom;
                if (Volatile.Read(ref posts[i].Seq) != seq || taken[n].Holder == null)
                    continue;
                if (clip) {
                    long lo = Math.Max(taken[n].HoldFrom, from), hi = Math.Min(taken[n].End, to);
                    taken[n].Ticks = hi - lo;
                    taken[n].End = hi;
                }
                if (taken[n].Ticks > 0)
                    n++;
            }
            w.TakenCount = n;
            return n;
        }

        /// <summary>
        /// Charges wait number <paramref name="seq"/> of <paramref name="w"/> (the calling thread, the one that
        /// waited), <paramref name="waitTicks"/> long, to its holders in <paramref name="s"/>'s
        /// <see cref="SiteStats.WaitedBehind"/> (the wait counted once, to the holder it waited behind longest): each holder that told its share (scaled down when
        /// the shares exceed the wait), the rest to <paramref name="found"/>, the holder found as the wait began, when it told
        /// nothing (it is in another copy), else to the holder that released last: the hand-over after its release (the waiter
        /// woken) is its. <paramref name="seq"/> 0 (no wait begun): all to <paramref name="found"/>. Returns the holder waited
        /// behind longest, or null.
        /// </summary>
        internal static string[] Charge(Collector c, ThreadRecord w, int seq, SiteStats s, long waitTicks, string[] found)
        {
            return Share(c, w, Take(w, w.Posts, seq, false, 0, 0), s, waitTicks, found);
        }

        /// <summary>
        /// As <see cref="Charge"/>, for a <c>WaitAsync</c> from <paramref name="from"/> to <paramref name="to"/> (ticks)
        /// recorded by <paramref name="w"/>'s thread: the shares are the parts of it the holds in the semaphore's
        /// <paramref name="log"/> covered (<see cref="SemaphoreState.Holds"/>, null for none: all to <paramref name="found"/>).
        /// </summary>
        internal static string[] ChargeLogged(Collector c, ThreadRecord w, BlamePost[] log, long from, long to, SiteStats s, string[] found)
        {
            return Share(c, w, Take(w, log, 1, true, from, to), s, to - from, found);
        }

        /// <summary>Charges <paramref name="waitTicks"/> to the <paramref name="n"/> shares taken into <paramref name="w"/>'s <see cref="ThreadRecord.Taken"/>, as <see cref="Charge"/> says.</summary>
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
            double scale = told > waitTicks ? (double)waitTicks / told : 1;
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
