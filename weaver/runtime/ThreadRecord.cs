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

        /// <summary>The holder found by <see cref="Api.Waiting"/>, taken by the next contended acquisition.</summary>
        internal string[] Behind;

        /// <summary>The hold of a semaphore this thread is releasing (<see cref="Api.ReleasingSemaphore"/>), until <see cref="Api.ReleasedSemaphore"/> records it.</summary>
        internal Frame Releasing;
        internal bool HasReleasing;

        internal ThreadRecord(int sites)
        {
            Sites = new SiteStats[sites];
        }

        /// <summary>
        /// Pushes a frame, doubling the stack when full. The slot is written between <see cref="Begin"/>
        /// and <see cref="End"/>: a waiter reading this record from another thread
        /// (<see cref="Collector.Holder"/>) takes an object with its own site or nothing.
        /// </summary>
        internal void Push(object lockObject, int site, long acquired, long wait, bool contended, byte mode)
        {
            if (Depth == Frames.Length) {
                Frame[] grown = new Frame[Frames.Length * 2];
                Array.Copy(Frames, grown, Depth);
                Frames = grown;
            }
            int seq = Begin(Depth);
            Volatile.Write(ref Frames[Depth].Site, site);
            Frames[Depth].Acquired = acquired;
            Frames[Depth].Wait = wait;
            Frames[Depth].Contended = contended;
            Frames[Depth].Mode = mode;
            if (contended) { /* else Holder stays null: a free slot is cleared (Remove) */
                Frames[Depth].Holder = Behind;
                Behind = null;
            }
            Volatile.Write(ref Frames[Depth].Lock, lockObject);
            End(Depth, seq);
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

        /// <summary>
        /// The index of the innermost frame a release in <paramref name="mode"/> ends, or -1: of
        /// <paramref name="lockObject"/> held exclusively (a Lock.Scope frame too), read or upgradeable;
        /// for <see cref="Frame.Scope"/> and <see cref="Frame.Spin"/> the innermost frame of that mode.
        /// </summary>
        internal int Find(object lockObject, byte mode)
        {
            for (int i = Depth - 1; i >= 0; i--) {
                byte m = Frames[i].Mode;
                if (mode == Frame.Scope || mode == Frame.Spin) {
                    if (m == mode)
                        return i;
                } else if (ReferenceEquals(Frames[i].Lock, lockObject) &&
                           (m == mode || (mode == Frame.Exclusive && m == Frame.Scope))) {
                    return i;
                }
            }
            return -1;
        }

        /// <summary>The index of the innermost frame taken by EnterScope, or -1.</summary>
        internal int FindScope()
        {
            return Find(null, Frame.Scope);
        }

        /// <summary>Marks slot <paramref name="i"/> as being written (its sequence odd); returns the even sequence it had.</summary>
        int Begin(int i)
        {
            int seq = Frames[i].Seq;
            Volatile.Write(ref Frames[i].Seq, seq + 1);
            return seq;
        }

        /// <summary>Marks slot <paramref name="i"/> as written (its sequence even again, and new).</summary>
        void End(int i, int seq)
        {
            Volatile.Write(ref Frames[i].Seq, seq + 2);
        }

        /// <summary>
        /// Removes frame <paramref name="i"/> and returns it; the frames above move down. Each slot is
        /// changed between <see cref="Begin"/> and <see cref="End"/>; a free slot keeps its sequence
        /// and has no object and no holder.
        /// </summary>
        internal Frame Remove(int i)
        {
            Frame f = Frames[i];
            Depth--;
            for (int j = i; j < Depth; j++) {
                int seq = Begin(j);
                Frame above = Frames[j + 1];
                Volatile.Write(ref Frames[j].Site, above.Site);
                Frames[j].Acquired = above.Acquired;
                Frames[j].Wait = above.Wait;
                Frames[j].Contended = above.Contended;
                Frames[j].Mode = above.Mode;
                Frames[j].Holder = above.Holder;
                Frames[j].InWait = above.InWait;
                Volatile.Write(ref Frames[j].Lock, above.Lock);
                End(j, seq);
            }
            int top = Begin(Depth);
            Volatile.Write(ref Frames[Depth].Lock, null);
            Frames[Depth].Holder = null;
            Frames[Depth].InWait = false;
            End(Depth, top);
            return f;
        }

        /// <summary>Marks every frame of <paramref name="lockObject"/> as inside <c>Monitor.Wait</c> (<paramref name="inWait"/>) or holding again.</summary>
        internal void SetInWait(object lockObject, bool inWait)
        {
            for (int i = 0; i < Depth; i++) {
                if (!ReferenceEquals(Frames[i].Lock, lockObject))
                    continue;
                int seq = Begin(i);
                Frames[i].InWait = inWait;
                End(i, seq);
            }
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
