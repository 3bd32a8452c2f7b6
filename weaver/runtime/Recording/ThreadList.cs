// ThreadList.cs - what each thread has listed (its record, its lock-order list), and the sweep of the threads that ended.
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>
    /// One entry per thread (a <see cref="ThreadRecord"/> in a copy's <see cref="Collector"/>, a
    /// <see cref="HeldLocks"/> in the <see cref="Deadlocks"/> search), each with the thread that listed
    /// it. Appended under a lock - once per thread, on its first lock - and read without one
    /// (<see cref="Items"/>). netstandard2.0 tells no one of a thread's end, so the entries of threads
    /// that ended are taken off by a sweep (<see cref="Sweep"/>), run off every lock's thread: the line
    /// writer's when the list doubled since the last one (<see cref="Due"/>), a summary, report or metrics
    /// reading. A sweep never changes an array a reader may hold: it publishes a new one, built under the
    /// lock in the time a growth of the list takes.
    /// </summary>
    [CompilerGenerated]
    internal sealed class ThreadList
    {
        /// <summary>The length under which the list is not swept for its growth alone.</summary>
        internal const int MinSweep = 64;

        readonly object gate = new object();
        object[] items = new object[16];   /* the entries, then nulls: published whole (Volatile) */
        Thread[] owners = new Thread[16];  /* under the gate: the thread of each entry */
        int count;
        int sweepAt = MinSweep;

        /// <summary>Lists <paramref name="item"/>, the calling thread's (kept until that thread has ended and a sweep takes it).</summary>
        internal void Add(object item)
        {
            Thread me = Thread.CurrentThread;
            lock (gate) {
                object[] all = items;
                if (count == all.Length) {
                    object[] grown = new object[all.Length * 2];
                    Thread[] grownOwners = new Thread[grown.Length];
                    Array.Copy(all, grown, count);
                    Array.Copy(owners, grownOwners, count);
                    all = grown;
                    owners = grownOwners;
                }
                owners[count] = me;
                Volatile.Write(ref all[count], item);
                Volatile.Write(ref items, all);
                Volatile.Write(ref count, count + 1);
            }
        }

        /// <summary>
        /// The entries now, for a reader without the lock: an array whose entries run up to its first null
        /// (or its end). One appended meanwhile may be missing; one swept meanwhile may be there.
        /// </summary>
        internal object[] Items()
        {
            return Volatile.Read(ref items);
        }

        /// <summary>The number of entries now.</summary>
        internal int Count()
        {
            return Volatile.Read(ref count);
        }

        /// <summary>True when the list has doubled since the last sweep (and has at least <see cref="MinSweep"/> entries): a sweep is due.</summary>
        internal bool Due()
        {
            return Volatile.Read(ref count) >= Volatile.Read(ref sweepAt);
        }

        /// <summary>
        /// Takes off the entries whose thread has ended (<c>Thread.IsAlive</c> false) for which
        /// <paramref name="take"/> returns true (null: every one); <paramref name="take"/> is called once per
        /// such entry, before it goes, and may read it without a race: its thread writes nothing any more.
        /// Callers must not sweep one list at once (the caller's lock). Returns the number taken off.
        /// </summary>
        internal int Sweep(Func<object, bool> take)
        {
            object[] all;
            Thread[] who;
            int n;
            lock (gate) {
                all = items;
                who = owners;
                n = count;
            }
            /* entries below n stay where they are until the Drop below: only a sweep moves them */
            bool[] gone = null;
            int goneN = 0;
            for (int i = 0; i < n; i++) {
                if (who[i].IsAlive || (take != null && !take(all[i])))
                    continue;
                if (gone == null)
                    gone = new bool[n];
                gone[i] = true;
                goneN++;
            }
            lock (gate) {
                if (goneN > 0)
                    Drop(gone, count - goneN);
                sweepAt = Math.Max(MinSweep, count * 2);
            }
            return goneN;
        }

        /// <summary>New arrays of the <paramref name="keep"/> entries <paramref name="gone"/> does not mark (by index), published whole; under the gate.</summary>
        void Drop(bool[] gone, int keep)
        {
            int length = 16;
            while (length < keep * 2)
                length *= 2;
            object[] kept = new object[length];
            Thread[] keptOwners = new Thread[length];
            int j = 0;
            for (int i = 0; i < count; i++) {
                if (i < gone.Length && gone[i])
                    continue;
                kept[j] = items[i];
                keptOwners[j] = owners[i];
                j++;
            }
            owners = keptOwners;
            Volatile.Write(ref items, kept);
            Volatile.Write(ref count, j);
        }
    }
}
