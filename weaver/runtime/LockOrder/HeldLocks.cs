// HeldLocks.cs - the locks each thread holds, for the lock order, and the pairs it has yet to add.
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>One lock a thread holds, for the lock order: object, site (process-wide id) and node.</summary>
    [CompilerGenerated]
    internal struct HeldLock
    {
        internal object Lock;
        internal int Site;
        internal int Node;   /* -1 until looked up (only when a lock is taken under it) */
    }

    /// <summary>The locks one thread holds, for the lock order, innermost last.</summary>
    [CompilerGenerated]
    internal sealed class HeldLocks
    {
        [ThreadStatic]
        internal static HeldLocks Current;

        internal HeldLock[] Locks = new HeldLock[8];
        internal int Depth;

        /// <summary>While the thread blocks in a lock call holding locks: the lock it waits for (<see cref="Deadlocks"/>), else null.</summary>
        internal object WaitingFor;
        /// <summary>The site of that wait, and the count of the thread's waits (its last one's number).</summary>
        internal int WaitSite, WaitSeq;
        internal readonly int ThreadId = Thread.CurrentThread.ManagedThreadId;

        /// <summary>Pairs (held, acquired) not found among the known edges, added when the thread holds no lock.</summary>
        internal const int MaxPending = 4096;
        internal object[] PendingHeld, PendingAcquired;    /* made on the first pair, doubled up to MaxPending */
        internal int[] PendingHeldSite, PendingSite;
        internal int[] PendingFrom, PendingTo;              /* their nodes when known at the lookup, else -1 */
        internal int PendingN;

        /// <summary>Room for one more pending pair; false when <see cref="MaxPending"/> are kept.</summary>
        internal bool Room()
        {
            if (PendingHeld != null && PendingN < PendingHeld.Length)
                return true;
            int n = PendingHeld == null ? 16 : PendingHeld.Length * 2;
            if (n > MaxPending)
                return false;
            Array.Resize(ref PendingHeld, n);
            Array.Resize(ref PendingAcquired, n);
            Array.Resize(ref PendingHeldSite, n);
            Array.Resize(ref PendingSite, n);
            Array.Resize(ref PendingFrom, n);
            Array.Resize(ref PendingTo, n);
            return true;
        }
    }
}
