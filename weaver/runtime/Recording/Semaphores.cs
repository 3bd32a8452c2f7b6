// Semaphores.cs - SemaphoreSlim: which semaphores are locks (a maximum of 1), the hold of each held now, its lock-order entry, and WaitAsync's end.
using System;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace LockTime.Runtime
{
    /// <summary>
    /// One semaphore as this copy knows it: whether it is a lock (created with a maximum count of 1), and
    /// while one holds it, that hold. No lock guards it: the acquisition writes <see cref="Hold"/> and
    /// <see cref="Orderer"/>, then sets <see cref="Held"/> (volatile); the release (on whichever thread)
    /// claims the hold by setting <see cref="Held"/> to 0, then reads it - before the original
    /// <c>Release</c>, so no other acquisition of a semaphore of maximum 1 can write it meanwhile. No
    /// Interlocked: of a semaphore of maximum 1 only one hold is out at a time, and only the one
    /// <c>Release</c> that ends it runs between its acquisition and the next (a program that releases
    /// more than it took may see two racing releases both claim one hold, or one throw SemaphoreFullException).
    /// </summary>
    [CompilerGenerated]
    internal sealed class SemaphoreState
    {
        /// <summary>The semaphore itself (the table's key: a value may refer to its key without keeping it alive).</summary>
        internal object Semaphore;
        internal bool IsLock;
        /// <summary>
        /// Released while no hold of it was known: a signal (a <c>SemaphoreSlim(0, 1)</c> that a producer
        /// releases for the waiting consumers), whose waiters wait for the next release, not for the thread that
        /// took it last. Its holds are still timed, but enter no lock order (<c>Api.Kept</c>): no potential
        /// deadlock and no deadlock goes through it. Set once, never cleared.
        /// </summary>
        internal bool Signal;
        /// <summary>
        /// When the run-time knew the semaphore (<see cref="Clock"/> ticks, after its maximum was read by
        /// reflection, milliseconds the first time in a process): no hold starts before (<c>Api.Kept</c>), as
        /// the run-time's own time is no hold of the program's.
        /// </summary>
        internal long Known;
        /// <summary>1 while <see cref="Hold"/> is a hold not yet released, else 0 (volatile).</summary>
        internal int Held;
        /// <summary>The hold (its <see cref="Frame.Lock"/> unused: the semaphore is <see cref="Semaphore"/>).</summary>
        internal Frame Hold;
        /// <summary>
        /// The record of the thread that entered the hold into the lock order, else null (not followed); read by
        /// the release that claims the hold, and left as it is until the next acquisition: a thread's entry is
        /// of a hold released since when <see cref="Held"/> is 0 or another thread's acquisition set this.
        /// </summary>
        internal ThreadRecord Orderer;
        /// <summary>
        /// The <c>WaitAsync</c> calls waiting for this semaphore (a lock's) now, newest first; lock the state to
        /// use it. Their tasks run continuations asynchronously, so a waiter's own continuation may record it
        /// only after the awaiting method has released it: a release settles them first (<c>Api.Settle</c>).
        /// </summary>
        internal PendingWait Pending;
    }

    /// <summary>
    /// The holds of semaphores one thread entered into the lock order (<see cref="ThreadRecord.Ordered"/>).
    /// A hold released on this thread leaves at once (<see cref="Left"/>); one
    /// released on another thread, which cannot take it off this thread's order, sets
    /// <see cref="ThreadRecord.Stale"/>, and this thread takes it off when it next takes a lock
    /// (<see cref="DropStale"/>).
    /// </summary>
    [CompilerGenerated]
    internal sealed class OrderedSemaphores
    {
        internal SemaphoreState[] States = new SemaphoreState[4];
        internal int N;

        /// <summary>Keeps the hold of <paramref name="s"/> this thread entered into the lock order now.</summary>
        internal void Entered(SemaphoreState s)
        {
            if (N == States.Length)
                Array.Resize(ref States, N * 2);
            States[N] = s;
            N++;
        }

        /// <summary>The hold of <paramref name="s"/> this thread (record <paramref name="t"/>) entered ends on this thread: forgotten, and off <paramref name="c"/>'s lock order. The last entered is tried first.</summary>
        internal void Left(SemaphoreState s, Collector c, ThreadRecord t)
        {
            for (int i = N - 1; i >= 0; i--) {
                if (ReferenceEquals(States[i], s)) {
                    Drop(i, c, t);
                    return;
                }
            }
        }

        /// <summary>
        /// The entered holds released since on another thread (not held, or held by another acquisition):
        /// taken off <paramref name="c"/>'s lock order for this thread (record <paramref name="t"/>). Called
        /// before this thread acquires anything: its own acquisitions of these semaphores are all before.
        /// </summary>
        internal void DropStale(Collector c, ThreadRecord t)
        {
            for (int i = N - 1; i >= 0; i--) {
                SemaphoreState s = States[i];
                if (Volatile.Read(ref s.Held) == 0 || !ReferenceEquals(Volatile.Read(ref s.Orderer), t))
                    Drop(i, c, t);
            }
        }

        void Drop(int i, Collector c, ThreadRecord t)
        {
            object semaphore = States[i].Semaphore;
            N--;
            if (i != N)
                States[i] = States[N];
            States[N] = null;
            if (c != null)
                c.OrderReleased(t, semaphore);
        }
    }

    /// <summary>
    /// The semaphores of one copy, by object, without keeping one alive (a <c>ConditionalWeakTable</c>).
    /// A semaphore used as a lock is held by no thread: its hold is kept here, from the acquisition to the
    /// <c>Release</c> on whichever thread or continuation releases it, not in a thread's frames. Each
    /// thread keeps the last one it looked up (<see cref="ThreadRecord.LastSemaphore"/>), so that the
    /// common Wait / Release on one semaphore does not search the table (the thread keeps that one
    /// semaphore alive while it uses no other).
    /// </summary>
    [CompilerGenerated]
    internal sealed class SemaphoreTable
    {
        /// <summary>
        /// Made at the first semaphore seen (<see cref="Table"/>), not at the start that every thread's first lock
        /// waits for: a program that uses no semaphore makes none.
        /// </summary>
        ConditionalWeakTable<object, SemaphoreState> states;

        /// <summary>The table, made by the first thread that needs it (one that makes another at the same time uses the first's).</summary>
        ConditionalWeakTable<object, SemaphoreState> Table()
        {
            ConditionalWeakTable<object, SemaphoreState> t = Volatile.Read(ref states);
            if (t != null)
                return t;
            Interlocked.CompareExchange(ref states, new ConditionalWeakTable<object, SemaphoreState>(), null);
            return Volatile.Read(ref states);
        }

        /// <summary>The state of <paramref name="semaphore"/> (not null), made on its first acquisition or release (its maximum read once); the last one <paramref name="t"/> looked up without a search.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal SemaphoreState Of(ThreadRecord t, object semaphore)
        {
            return ReferenceEquals(t.LastSemaphore, semaphore) ? t.LastSemaphoreState : Look(t, semaphore);
        }

        /// <summary>The table's state of <paramref name="semaphore"/>, made when it has none, kept as <paramref name="t"/>'s last.</summary>
        SemaphoreState Look(ThreadRecord t, object semaphore)
        {
            SemaphoreState s;
            ConditionalWeakTable<object, SemaphoreState> states = Table();
            if (!states.TryGetValue(semaphore, out s)) {
                SemaphoreState made = new SemaphoreState();
                made.Semaphore = semaphore;
                made.IsLock = MaximumIsOne(semaphore);
                made.Known = Clock.Ticks();
                lock (states) {
                    if (!states.TryGetValue(semaphore, out s)) {
                        states.Add(semaphore, made);
                        s = made;
                    }
                }
            }
            t.LastSemaphore = semaphore;
            t.LastSemaphoreState = s;
            return s;
        }

        /// <summary>
        /// Whether <paramref name="semaphore"/> was created with a maximum count of 1: SemaphoreSlim keeps it
        /// in the private field <c>m_maxCount</c> (.NET and Mono alike) and has no property for it. Not
        /// found: false (counted as a counting semaphore). Named on <c>typeof(SemaphoreSlim)</c> with constants
        /// (also for a class derived from it): the trimmer and NativeAOT's compiler see which field is read
        /// by reflection, keep it and warn of nothing.
        /// </summary>
        static bool MaximumIsOne(object semaphore)
        {
            FieldInfo f = typeof(SemaphoreSlim).GetField("m_maxCount", BindingFlags.Instance | BindingFlags.NonPublic);
            object v = f == null || !(semaphore is SemaphoreSlim) ? null : f.GetValue(semaphore);
            return v is int && (int)v == 1;
        }

        /// <summary>The site that holds <paramref name="lockObject"/> now when it is a semaphore used as a lock, else -1.</summary>
        internal int HeldAt(object lockObject)
        {
            SemaphoreState s;
            ConditionalWeakTable<object, SemaphoreState> states = Volatile.Read(ref this.states); /* null: no semaphore seen yet */
            if (lockObject == null || states == null || !states.TryGetValue(lockObject, out s) || Volatile.Read(ref s.Held) == 0)
                return -1;
            return s.Hold.Site;
        }
    }

    /// <summary>
    /// A <c>WaitAsync</c> that did not complete at once: its continuation, made from this object's
    /// <see cref="Done"/> (no lambda), records the acquisition when the task completes - acquired when it
    /// ran to completion (and its <c>bool</c>, for the timed overloads, is true), else not acquired. That
    /// continuation runs as a work item of its own (SemaphoreSlim's tasks run continuations
    /// asynchronously), maybe after the method that awaited the task went on and released the semaphore:
    /// a wait of a semaphore used as a lock is also listed on its state (<see cref="SemaphoreState.Pending"/>),
    /// and whichever comes first records it - the release that completed it, a later release, or this.
    /// </summary>
    [CompilerGenerated]
    internal sealed class PendingWait
    {
        internal object Semaphore;
        internal int Site;
        internal long Start;
        internal string[] Behind;
        internal Task Task;
        /// <summary>The state it is listed on (a lock's), else null.</summary>
        internal SemaphoreState State;
        /// <summary>The next on <see cref="SemaphoreState.Pending"/>.</summary>
        internal PendingWait Next;
        int taken;

        /// <summary>True for the one caller that records this wait (<see cref="Done"/> or <c>Api.Settle</c>).</summary>
        internal bool Take()
        {
            return Interlocked.Exchange(ref taken, 1) == 0;
        }

        /// <summary>Whether <paramref name="task"/> (completed) gave the semaphore: ran to completion, and its <c>bool</c> true for the timed overloads.</summary>
        internal static bool Acquired(Task task)
        {
            Task<bool> timed = task as Task<bool>;
            return task.Status == TaskStatus.RanToCompletion && (timed == null || timed.Result);
        }

        internal void Done(Task task)
        {
            try {
                long now = Clock.Ticks();
                if (State == null) {
                    if (Take())
                        Record(task, now);
                    return;
                }
                lock (State) { /* as Api.Settle: recorded before it leaves the list */
                    if (Take())
                        Record(task, now);
                    Unlist(State);
                }
            } catch (Exception) {
            }
        }

        /// <summary>Records this wait on the calling thread as it ended at <paramref name="now"/>: acquired when <paramref name="task"/> gave the semaphore, else not acquired.</summary>
        internal void Record(Task task, long now)
        {
            if (Acquired(task))
                Api.SemaphoreAcquired(Semaphore, Site, Start, now, true, Behind, false, State != null);
            else
                Api.SemaphoreNotAcquired(State != null ? Semaphore : null, Site, Start, now, Behind);
        }

        /// <summary>Takes this wait off <paramref name="s"/>'s list (the state locked by the caller).</summary>
        internal void Unlist(SemaphoreState s)
        {
            if (ReferenceEquals(s.Pending, this)) {
                s.Pending = Next;
                return;
            }
            for (PendingWait p = s.Pending; p != null; p = p.Next) {
                if (ReferenceEquals(p.Next, this)) {
                    p.Next = Next;
                    return;
                }
            }
        }
    }
}
