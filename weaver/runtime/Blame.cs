// Blame.cs - a contended wait's time shared among the holders it waited behind, each told by the holder itself.
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>
    /// One holder's share of a wait, posted into the waiting thread's record (<see cref="ThreadRecord.Posts"/>)
    /// by the thread that released the lock: for wait number <see cref="Seq"/> of that thread, the holder's
    /// site name and how long of the wait it held the lock. <see cref="Seq"/> is written last (0: free,
    /// -1: being written), so the waiter takes a post whole or not at all.
    /// </summary>
    [CompilerGenerated]
    internal struct BlamePost
    {
        internal int Seq;
        internal string[] Holder;
        internal long Ticks;
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
                    Post(w, seq, c.HolderNames[site], to - from);
            }
        }

        /// <summary>
        /// Puts a share of <paramref name="ticks"/> by <paramref name="holder"/> into <paramref name="w"/>'s posts for its
        /// wait <paramref name="seq"/>; a slot another holder is writing at the same moment is left to it (the share is lost).
        /// </summary>
        static void Post(ThreadRecord w, int seq, string[] holder, long ticks)
        {
            BlamePost[] posts = w.Posts;
            if (posts == null)
                return;
            int i = (Interlocked.Increment(ref w.PostNext) - 1) & (posts.Length - 1);
            int old = Volatile.Read(ref posts[i].Seq);
            if (old == -1 || Interlocked.CompareExchange(ref posts[i].Seq, -1, old) != old)
                return;
            posts[i].Holder = holder;
            posts[i].Ticks = ticks;
            Volatile.Write(ref posts[i].Seq, seq);
        }

        /// <summary>Whether a post before slot <paramref name="i"/> of wait <paramref name="seq"/> names the site <paramref name="holder"/>: a wait counts once per holder site.</summary>
        static bool Told(BlamePost[] posts, int i, int seq, string[] holder)
        {
            for (int j = 0; j < i; j++)
                if (Volatile.Read(ref posts[j].Seq) == seq && posts[j].Holder != null && SiteStats.Same(posts[j].Holder, holder))
                    return true;
            return false;
        }

        /// <summary>
        /// Charges wait number <paramref name="seq"/> of <paramref name="w"/> (the calling thread, or the one that
        /// waited), <paramref name="waitTicks"/> long, to its holders in <paramref name="s"/>'s
        /// <see cref="SiteStats.WaitedBehind"/> (one count per holder site): each holder that told its share (scaled down when the shares exceed
        /// the wait), the rest to <paramref name="found"/>, the holder found as the wait began, when it told nothing (it is in
        /// another copy: else the rest is the hand-over between holds, no one's).
        /// <paramref name="seq"/> 0 (no wait begun): all to <paramref name="found"/>. Returns the holder waited behind
        /// longest, or null.
        /// </summary>
        internal static string[] Charge(Collector c, ThreadRecord w, int seq, SiteStats s, long waitTicks, string[] found)
        {
            BlamePost[] posts = w.Posts;
            long told = 0;
            if (seq != 0 && posts != null)
                for (int i = 0; i < posts.Length; i++)
                    if (Volatile.Read(ref posts[i].Seq) == seq)
                        told += posts[i].Ticks;
            if (told <= 0) {
                if (found != null)
                    s.WaitedBehind(found, c.Ns(waitTicks), 1);
                return found;
            }
            double scale = told > waitTicks ? (double)waitTicks / told : 1;
            long charged = 0, longestTicks = 0;
            string[] longest = null;
            bool foundTold = false;
            for (int i = 0; i < posts.Length; i++) {
                if (Volatile.Read(ref posts[i].Seq) != seq)
                    continue;
                string[] holder = posts[i].Holder;
                long share = Math.Min((long)(posts[i].Ticks * scale), waitTicks - charged);
                if (holder == null || Volatile.Read(ref posts[i].Seq) != seq || share <= 0)
                    continue;
                s.WaitedBehind(holder, c.Ns(share), Told(posts, i, seq, holder) ? 0 : 1);
                charged += share;
                foundTold |= found != null && SiteStats.Same(holder, found);
                if (share > longestTicks) {
                    longestTicks = share;
                    longest = holder;
                }
            }
            long rest = waitTicks - charged;
            if (rest > 0 && found != null && !foundTold) {
                s.WaitedBehind(found, c.Ns(rest), 1);
                if (rest > longestTicks)
                    longest = found;
            }
            return longest;
        }
    }
}
