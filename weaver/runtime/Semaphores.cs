// Semaphores.cs - SemaphoreSlim: which semaphores are locks (a maximum of 1), the hold of each held now, and WaitAsync's end.
using System;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace LockTime.Runtime
{
    /// <summary>
    /// One semaphore as this copy knows it: whether it is a lock (created with a maximum count of 1), and
    /// while one holds it, that hold (<see cref="Frame.Lock"/> the semaphore). No lock guards it: the
    /// acquisition writes <see cref="Hold"/>, then sets <see cref="Held"/>; the release (on whichever
    /// thread) claims the hold by exchanging <see cref="Held"/> to 0, then reads it - before the original
    /// <c>Release</c>, so no other acquisition of a semaphore of maximum 1 can write it meanwhile.
    /// </summary>
    [CompilerGenerated]
    internal sealed class SemaphoreState
    {
        internal bool IsLock;
        /// <summary>1 while <see cref="Hold"/> is a hold not yet released (Interlocked), else 0.</summary>
        internal int Held;
        internal Frame Hold;
        /// <summary>Counts the holds kept: a thread's lock-order entry is of the hold whose number it kept (<see cref="SemaphoreThread"/>).</summary>
        internal int Generation;
    }

    /// <summary>
    /// What one thread keeps of the semaphores (<see cref="ThreadRecord.Semaphores"/>): the last one it
    /// looked up, so that the common Wait / Release on one semaphore does not search the table (the
    /// thread keeps that one semaphore alive while it uses no other), and the holds it entered into the
    /// lock order, for a release on another thread: that thread cannot take them off this thread's
    /// order, so this one does when it next takes a lock (<see cref="DropReleased"/>).
    /// </summary>
    [CompilerGenerated]
    internal sealed class SemaphoreThread
    {
        internal object Last;
        internal SemaphoreState LastState;

        internal object[] Ordered = new object[4];
        internal SemaphoreState[] OrderedStates = new SemaphoreState[4];
        internal int[] OrderedHolds = new int[4];
        internal int OrderedN;

        /// <summary>Keeps hold number <paramref name="hold"/> of <paramref name="semaphore"/>, entered into the lock order now.</summary>
        internal void Entered(object semaphore, SemaphoreState s, int hold)
        {
            if (OrderedN == Ordered.Length) {
                Array.Resize(ref Ordered, OrderedN * 2);
                Array.Resize(ref OrderedStates, OrderedN * 2);
                Array.Resize(ref OrderedHolds, OrderedN * 2);
            }
            Ordered[OrderedN] = semaphore;
            OrderedStates[OrderedN] = s;
            OrderedHolds[OrderedN] = hold;
            OrderedN++;
        }

        /// <summary>The holds of <paramref name="s"/> this thread (record <paramref name="t"/>) entered: forgotten, and taken off <paramref name="c"/>'s lock order.</summary>
        internal void Released(SemaphoreState s, Collector c, ThreadRecord t)
        {
            for (int i = OrderedN - 1; i >= 0; i--)
                if (ReferenceEquals(OrderedStates[i], s))
                    Drop(i, c, t);
        }

        /// <summary>The entered holds released since (on another thread): taken off <paramref name="c"/>'s lock order for this thread (record <paramref name="t"/>).</summary>
        internal void DropReleased(Collector c, ThreadRecord t)
        {
            for (int i = OrderedN - 1; i >= 0; i--) {
                SemaphoreState s = OrderedStates[i];
                if (Volatile.Read(ref s.Held) == 0 || Volatile.Read(ref s.Generation) != OrderedHolds[i])
                    Drop(i, c, t);
            }
        }

        void Drop(int i, Collector c, ThreadRecord t)
        {
            object semaphore = Ordered[i];
            OrderedN--;
            Ordered[i] = Ordered[OrderedN];
            OrderedStates[i] = OrderedStates[OrderedN];
            OrderedHolds[i] = OrderedHolds[OrderedN];
            Ordered[OrderedN] = null;
            OrderedStates[OrderedN] = null;
            if (c != null)
                c.OrderReleased(t, semaphore);
        }
    }

    /// <summary>
    /// The semaphores of one copy, by object, without keeping one alive (a <c>ConditionalWeakTable</c>).
    /// A semaphore used as a lock is held by no thread: its hold is kept here, from the acquisition to the
    /// <c>Release</c> on whichever thread or continuation releases it, not in a thread's frames.
    /// </summary>
    [CompilerGenerated]
    internal sealed class SemaphoreTable
    {
        readonly ConditionalWeakTable<object, SemaphoreState> states = new ConditionalWeakTable<object, SemaphoreState>();

        /// <summary>The state of <paramref name="semaphore"/>, made on its first acquisition (its maximum read once); the last one <paramref name="t"/> looked up without a search.</summary>
        internal SemaphoreState Of(ThreadRecord t, object semaphore)
        {
            SemaphoreThread mine = Mine(t);
            if (ReferenceEquals(mine.Last, semaphore))
                return mine.LastState;
            SemaphoreState s;
            if (!states.TryGetValue(semaphore, out s)) {
                SemaphoreState made = new SemaphoreState();
                made.IsLock = MaximumIsOne(semaphore);
                lock (states) {
                    if (!states.TryGetValue(semaphore, out s)) {
                        states.Add(semaphore, made);
                        s = made;
                    }
                }
            }
            mine.Last = semaphore;
            mine.LastState = s;
            return s;
        }

        /// <summary>The state of <paramref name="semaphore"/> when it was ever acquired, else null; the last one <paramref name="t"/> looked up without a search.</summary>
        internal SemaphoreState Find(ThreadRecord t, object semaphore)
        {
            SemaphoreThread mine = Mine(t);
            if (ReferenceEquals(mine.Last, semaphore))
                return mine.LastState;
            SemaphoreState s;
            if (!states.TryGetValue(semaphore, out s))
                return null;
            mine.Last = semaphore;
            mine.LastState = s;
            return s;
        }

        internal static SemaphoreThread Mine(ThreadRecord t)
        {
            SemaphoreThread mine = t.Semaphores;
            if (mine == null) {
                mine = new SemaphoreThread();
                t.Semaphores = mine;
            }
            return mine;
        }

        /// <summary>
        /// Whether <paramref name="semaphore"/> was created with a maximum count of 1: SemaphoreSlim keeps it
        /// in the private field <c>m_maxCount</c> (.NET and Mono alike) and has no property for it. Not
        /// found: false (counted as a counting semaphore).
        /// </summary>
        static bool MaximumIsOne(object semaphore)
        {
            FieldInfo f = semaphore.GetType().GetField("m_maxCount", BindingFlags.Instance | BindingFlags.NonPublic);
            object v = f == null ? null : f.GetValue(semaphore);
            return v is int && (int)v == 1;
        }

        /// <summary>The site that holds <paramref name="lockObject"/> now when it is a semaphore used as a lock, else -1.</summary>
        internal int HeldAt(object lockObject)
        {
            SemaphoreState s;
            if (lockObject == null || !states.TryGetValue(lockObject, out s) || Volatile.Read(ref s.Held) == 0)
                return -1;
            return s.Hold.Site;
        }
    }

    /// <summary>
    /// A <c>WaitAsync</c> that did not complete at once: its continuation, made from this object's
    /// <see cref="Done"/> (no lambda), records the acquisition when the task completes - acquired when it
    /// ran to completion (and its <c>bool</c>, for the timed overloads, is true), else not acquired.
    /// </summary>
    [CompilerGenerated]
    internal sealed class PendingWait
    {
        internal object Semaphore;
        internal int Site;
        internal long Start;
        internal string[] Behind;

        internal void Done(Task task)
        {
            try {
                long now = Clock.Ticks();
                Task<bool> timed = task as Task<bool>;
                bool acquired = task.Status == TaskStatus.RanToCompletion && (timed == null || timed.Result);
                if (acquired)
                    Api.SemaphoreAcquired(Semaphore, Site, Start, now, true, Behind, false);
                else
                    Api.NotAcquired(Site, Start, now);
            } catch (Exception) {
            }
        }
    }
}
