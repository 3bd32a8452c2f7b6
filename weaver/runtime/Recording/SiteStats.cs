// SiteStats.cs - what one thread recorded for one lock site, and the merge of several threads.
using System;
using System.Runtime.CompilerServices;

namespace LockTime.Runtime
{
    /// <summary>
    /// The statistics of one lock site: acquisitions (counted when released), contended tries (the
    /// fast try failed: acquired after a wait, or failed), failed tries (a TryEnter or WaitAsync that
    /// did not acquire), the wait of every try and the hold durations in nanoseconds, and the holder
    /// sites its contended waits were behind (the holder blame). Each thread
    /// writes its own instance; a summary adds them (<see cref="Add"/>).
    /// </summary>
    [CompilerGenerated]
    internal sealed class SiteStats
    {
        internal long Acquisitions;
        internal long Contended;
        internal long Failed;
        /// <summary>Acquisitions by a thread that held the lock already (<see cref="Frame.Reentry"/>): not in <see cref="Acquisitions"/>, no wait, no hold.</summary>
        internal long Reentries;
        internal readonly Histogram Wait = new Histogram();
        internal readonly Histogram Hold = new Histogram();

        /// <summary>Holder sites this site waited behind kept at most (further ones are not kept).</summary>
        internal const int MaxHolders = 64;

        /// <summary>The holder sites this site waited behind ({ assembly, method, location }), the wait (ns) and count behind each.</summary>
        internal string[][] Holders;
        internal long[] HolderWait;
        internal long[] HolderCount;
        internal int HolderN;

        /// <summary>The call stacks of the slow acquisitions (<see cref="Collector.Capture"/>); null until the first.</summary>
        internal StackSet Stacks;

        /// <summary>Adds every count of <paramref name="other"/>.</summary>
        internal void Add(SiteStats other)
        {
            Acquisitions += other.Acquisitions;
            Contended += other.Contended;
            Failed += other.Failed;
            Reentries += other.Reentries;
            Wait.Add(other.Wait);
            Hold.Add(other.Hold);
            /* other may be another thread's, growing now: its arrays read once, each entry checked */
            string[][] holders = other.Holders;
            long[] wait = other.HolderWait, count = other.HolderCount;
            int n = other.HolderN;
            for (int i = 0; holders != null && i < n && i < holders.Length && i < wait.Length && i < count.Length; i++)
                if (holders[i] != null)
                    WaitedBehind(holders[i], wait[i], count[i]);
            StackSet stacks = other.Stacks;
            if (stacks != null)
                StacksMade().AddAll(stacks);
        }

        /// <summary>The site's <see cref="Stacks"/>, made on first use.</summary>
        internal StackSet StacksMade()
        {
            if (Stacks == null)
                Stacks = new StackSet();
            return Stacks;
        }

        /// <summary>Adds <paramref name="count"/> waits of <paramref name="waitNs"/> in all behind <paramref name="holder"/> (equal names are one holder).</summary>
        internal void WaitedBehind(string[] holder, long waitNs, long count)
        {
            int i = 0;
            while (i < HolderN && !Same(Holders[i], holder))
                i++;
            if (i == HolderN) {
                if (HolderN == MaxHolders)
                    return;
                if (Holders == null || HolderN == Holders.Length) {
                    int n = Holders == null ? 2 : Holders.Length * 2;
                    Array.Resize(ref Holders, n);
                    Array.Resize(ref HolderWait, n);
                    Array.Resize(ref HolderCount, n);
                }
                Holders[i] = holder;
                HolderN++;
            }
            HolderWait[i] += waitNs;
            HolderCount[i] += count;
        }

        /// <summary>True when two holder names ({ assembly, method, location }) are the same site.</summary>
        internal static bool Same(string[] a, string[] b)
        {
            return ReferenceEquals(a, b) || (a[0] == b[0] && a[1] == b[1] && a[2] == b[2]);
        }

        /// <summary>
        /// False when acquisitions were recorded without any hold: a counting semaphore's (its hold is not
        /// applicable, <see cref="Collector.WaitOnly"/>).
        /// </summary>
        internal bool HoldApplies()
        {
            return Acquisitions == 0 || Hold.Count > 0;
        }

        /// <summary>True when nothing was recorded.</summary>
        internal bool IsEmpty()
        {
            return Acquisitions == 0 && Failed == 0 && Reentries == 0;
        }
    }
}
