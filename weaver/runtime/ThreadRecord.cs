// ThreadRecord.cs - one thread's record: the locks it holds now, and its statistics per site.
using System;
using System.Runtime.CompilerServices;

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
        internal bool Scope;      /* taken by Lock.EnterScope: released by Scope.Dispose */
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

        internal Frame[] Frames = new Frame[8];
        internal int Depth;

        /// <summary>Per site id, null until this thread records the site.</summary>
        internal SiteStats[] Sites;

        /// <summary>
        /// Set while the run-time itself works on this thread (the line writer, the summary at exit):
        /// locks taken there are not recorded, so a woven framework does not time its own reporting.
        /// </summary>
        internal bool Busy;

        /// <summary>True once the collector lists this record for its summaries.</summary>
        internal bool Listed;

        internal ThreadRecord(int sites)
        {
            Sites = new SiteStats[sites];
        }

        /// <summary>Pushes a frame, doubling the stack when full.</summary>
        internal void Push(object lockObject, int site, long acquired, long wait, bool contended, bool scope)
        {
            if (Depth == Frames.Length) {
                Frame[] grown = new Frame[Frames.Length * 2];
                Array.Copy(Frames, grown, Depth);
                Frames = grown;
            }
            Frames[Depth].Lock = lockObject;
            Frames[Depth].Site = site;
            Frames[Depth].Acquired = acquired;
            Frames[Depth].Wait = wait;
            Frames[Depth].Contended = contended;
            Frames[Depth].Scope = scope;
            Depth++;
        }

        /// <summary>The index of the innermost frame of <paramref name="lockObject"/>, or -1.</summary>
        internal int FindLock(object lockObject)
        {
            for (int i = Depth - 1; i >= 0; i--)
                if (ReferenceEquals(Frames[i].Lock, lockObject))
                    return i;
            return -1;
        }

        /// <summary>The index of the innermost frame taken by EnterScope, or -1.</summary>
        internal int FindScope()
        {
            for (int i = Depth - 1; i >= 0; i--)
                if (Frames[i].Scope)
                    return i;
            return -1;
        }

        /// <summary>Removes frame <paramref name="i"/> and returns it; the frames above move down.</summary>
        internal Frame Remove(int i)
        {
            Frame f = Frames[i];
            Depth--;
            if (i < Depth)
                Array.Copy(Frames, i + 1, Frames, i, Depth - i);
            Frames[Depth] = default(Frame);
            return f;
        }

        /// <summary>The statistics of <paramref name="site"/>, made on first use; null for an unknown id.</summary>
        internal SiteStats Stats(int site)
        {
            if ((uint)site >= (uint)Sites.Length)
                return null;
            SiteStats s = Sites[site];
            if (s == null) {
                s = new SiteStats();
                Sites[site] = s;
            }
            return s;
        }
    }
}
