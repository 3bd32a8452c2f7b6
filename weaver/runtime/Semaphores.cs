// Semaphores.cs - SemaphoreSlim: which semaphores are locks (a maximum of 1), the hold of each held now, and WaitAsync's end.
using System;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace LockTime.Runtime
{
    /// <summary>
    /// One semaphore as this copy knows it: whether it is a lock (created with a maximum count of 1), and
    /// while one holds it, that hold (<see cref="Frame.Lock"/> the semaphore). Read and written under a
    /// lock of this object: the acquiring and the releasing thread may differ.
    /// </summary>
    [CompilerGenerated]
    internal sealed class SemaphoreState
    {
        internal bool IsLock;
        internal bool Held;
        internal Frame Hold;
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

        /// <summary>The state of <paramref name="semaphore"/>, made on its first acquisition (its maximum read once).</summary>
        internal SemaphoreState Of(object semaphore)
        {
            SemaphoreState s;
            if (states.TryGetValue(semaphore, out s))
                return s;
            SemaphoreState made = new SemaphoreState();
            made.IsLock = MaximumIsOne(semaphore);
            lock (states) {
                if (!states.TryGetValue(semaphore, out s)) {
                    states.Add(semaphore, made);
                    s = made;
                }
            }
            return s;
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

        /// <summary>The state of <paramref name="semaphore"/> when it was ever acquired, else null.</summary>
        internal SemaphoreState Find(object semaphore)
        {
            SemaphoreState s;
            return states.TryGetValue(semaphore, out s) ? s : null;
        }

        /// <summary>The site that holds <paramref name="lockObject"/> now when it is a semaphore used as a lock, else -1.</summary>
        internal int HeldAt(object lockObject)
        {
            SemaphoreState s;
            if (lockObject == null || !states.TryGetValue(lockObject, out s))
                return -1;
            lock (s)
                return s.Held ? s.Hold.Site : -1;
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
                    Api.SemaphoreAcquired(Semaphore, Site, Start, now, true, Behind);
                else
                    Api.NotAcquired(Site, Start, now);
            } catch (Exception) {
            }
        }
    }
}
