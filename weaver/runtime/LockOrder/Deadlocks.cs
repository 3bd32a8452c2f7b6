// Deadlocks.cs - threads blocked in lock calls that wait for each other now: a deadlock, found as its last thread begins to wait.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.ExceptionServices;
using System.Text;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>
    /// The wait-for graph of the threads that block in a lock call while they hold locks: a thread waits
    /// for the lock it is about to block on (<see cref="HeldLocks.WaitingFor"/>), held by the one thread
    /// whose <see cref="HeldLocks"/> lists it, which may itself wait. When the thread that begins to
    /// wait finds the chain of holders coming back to itself, those threads wait for each other: a
    /// deadlock, found the moment it forms - the lock order's cycles (<see cref="LockOrder"/>) say what
    /// could deadlock, this says what does. Only blocking calls without a timeout announce a wait
    /// (<c>Monitor.Enter</c>, <c>Lock.Enter</c>, a write lock, <c>Mutex.WaitOne()</c>,
    /// <c>SemaphoreSlim.Wait()</c>, though no holder is known for it: below); a reader's wait is not followed (readers do not block readers, and
    /// the lists know no modes). An object that two threads' lists hold has no one holder: readers of a
    /// read lock, a thread inside <c>Monitor.Wait</c> and the one that took the monitor meanwhile, a
    /// semaphore released by another thread than its taker's (whose list keeps it until its next lock,
    /// or until a sweep once that thread ended) and taken again - no deadlock is claimed through it. Nor through a <c>SemaphoreSlim</c>: any thread may
    /// release it, and the thread that took it may go on to other work (an async method that called
    /// <c>Wait()</c> before an <c>await</c>) or have had it released meanwhile while it blocks (its list
    /// keeps it until its next lock): the thread a waiter for it waits for is not known. The search reads the other threads' lists
    /// without a lock, then checks that every thread of the chain waited throughout
    /// (<see cref="HeldLocks.WaitSeq"/>) and every holder still is the only one: threads of a deadlock do
    /// not move, a chain read while one of them did is not taken. Nothing here runs on an acquisition
    /// that did not wait, beyond one field read.
    /// </summary>
    [CompilerGenerated]
    internal sealed class Deadlocks
    {
        internal const int MaxKept = 100;

        readonly object gate = new object();
        /* every thread's list that took a lock in the order, until a sweep after the thread ended (Sweep) */
        readonly ThreadList lists = new ThreadList();
        readonly object sweeping = new object();
        readonly List<int[]> found = new List<int[]>();  /* per deadlock, per edge: held site, wait site, waiting thread, holding thread */
        readonly Dictionary<string, bool> seen = new Dictionary<string, bool>();
        int notKept;

        /// <summary>
        /// The thread of <paramref name="h"/> (which holds a lock) is about to block on
        /// <paramref name="lockObject"/> at process-wide site <paramref name="site"/>: it is a waiter until its
        /// next acquisition, or an exception it throws (<see cref="Unwait"/>, <see cref="Thrown"/>): a wait ends in one or the other. Returns the deadlock its wait closes - per
        /// edge: the site where the holder took the lock waited for, the site that waits, the waiting
        /// thread's id, the holder's - when it is one not seen before, else null.
        /// </summary>
        internal int[] Begin(HeldLocks h, object lockObject, int site)
        {
            h.WaitSite = site;
            Volatile.Write(ref h.WaitSeq, h.WaitSeq + 1);
            Interlocked.Exchange(ref h.WaitingFor, lockObject); /* before the others' lists are read: of two threads closing a cycle at once, one sees the other */
            return Search(h);
        }

        /// <summary>The thread of <paramref name="h"/> waits no more (it acquired a lock, or its lock call threw). Full fence: its lists change only after.</summary>
        internal static void Unwait(HeldLocks h)
        {
            Interlocked.Exchange(ref h.WaitingFor, null);
        }

        /// <summary>
        /// An exception thrown on the calling thread (<c>AppDomain.FirstChanceException</c>, before any handler
        /// of the program runs): a thread that announced a wait and throws has left its lock call without the
        /// lock (<c>Thread.Interrupt</c> on a thread blocked in <c>lock</c>, <c>Mutex.WaitOne</c>...), which no
        /// acquisition or release of its own says - and it may go on holding its locks, not waiting, in a
        /// <c>catch</c> inside them: it waits no more (<see cref="Unwait"/>, and its record's wait ends:
        /// <see cref="ThreadRecord.EndWait"/>, recorded first as a try that did not acquire: <see cref="Api.Threw"/>).
        /// </summary>
        internal static void Thrown(object sender, FirstChanceExceptionEventArgs e)
        {
            try {
                HeldLocks h = HeldLocks.Current;
                if (h != null && h.WaitingFor != null)
                    Unwait(h);
                ThreadRecord t = ThreadRecord.Current;
                if (t != null && t.WaitingSince != 0) {
                    Api.Threw(e.Exception, t);
                    t.EndWait();
                }
            } catch (Exception) {
            }
        }

        /// <summary>Lists the calling thread's new <paramref name="h"/>: the search looks for holders among them all.</summary>
        internal void Add(HeldLocks h)
        {
            lists.Add(h);
        }

        /// <summary>
        /// Takes the lists of the threads that ended off (<see cref="ThreadList.Sweep"/>): such a thread waits
        /// for nothing, so no deadlock goes through it, and the locks it still lists are held by no thread
        /// that can release them (a monitor it never exited) or by none (a semaphore released elsewhere: no
        /// one's, see the class). Returns the number taken off. <paramref name="due"/>: only when the lists
        /// doubled since the last sweep. Off every lock's thread; never throws.
        /// </summary>
        internal int Sweep(bool due)
        {
            try {
                if (due && !lists.Due())
                    return 0;
                lock (sweeping)
                    return lists.Sweep(null);
            } catch (Exception) {
                return 0;
            }
        }

        /// <summary>The number of threads' lists the search looks among now.</summary>
        internal int Listed()
        {
            return lists.Count();
        }

        /// <summary>
        /// Follows the holders from <paramref name="h"/>'s wait (at most <see cref="LockOrder.MaxCycleEdges"/>);
        /// a chain back to <paramref name="h"/>, checked, is kept and returned (see <see cref="Begin"/>).
        /// </summary>
        int[] Search(HeldLocks h)
        {
            int max = LockOrder.MaxCycleEdges;
            HeldLocks[] chain = new HeldLocks[max + 1];   /* chain[k] waits for wants[k], held by chain[k + 1] */
            object[] wants = new object[max];
            int[] seqs = new int[max], heldSites = new int[max];
            chain[0] = h;
            for (int k = 0; k < max; k++) {
                HeldLocks w = chain[k];
                seqs[k] = Volatile.Read(ref w.WaitSeq);
                wants[k] = Volatile.Read(ref w.WaitingFor);
                if (wants[k] == null)
                    return null;
                HeldLocks holder = Holder(wants[k], out heldSites[k]);
                if (holder == null)
                    return null;
                for (int j = 1; j <= k; j++)
                    if (ReferenceEquals(chain[j], holder))
                        return null;   /* a deadlock this thread waits behind, not in: its last thread found it */
                chain[k + 1] = holder;
                if (ReferenceEquals(holder, h))
                    return Still(chain, wants, seqs, heldSites, k + 1) ? Keep(chain, heldSites, k + 1) : null;
            }
            return null;
        }

        /// <summary>
        /// The thread's list that holds <paramref name="lockObject"/> when it is the only one and that thread
        /// waits, and the site where it took it; else null (no holder, one that runs, or two lists: see above).
        /// </summary>
        HeldLocks Holder(object lockObject, out int site)
        {
            site = -1;
            if (lockObject is SemaphoreSlim)
                return null; /* its hold is no thread's: see the class */
            object[] all = lists.Items();
            HeldLocks holder = null;
            for (int i = 0; i < all.Length; i++) {
                HeldLocks x = all[i] as HeldLocks;
                if (x == null)
                    break;
                int at = HeldSite(x, lockObject);
                if (at < 0)
                    continue;
                if (holder != null) {
                    site = -1;
                    return null;
                }
                holder = x;
                site = at;
            }
            if (holder == null || Volatile.Read(ref holder.WaitingFor) == null) {
                site = -1;
                return null;
            }
            return holder;
        }

        /// <summary>The site at which the thread of <paramref name="x"/> took <paramref name="lockObject"/>, innermost first; -1 when it holds it not.</summary>
        static int HeldSite(HeldLocks x, object lockObject)
        {
            HeldLock[] held = Volatile.Read(ref x.Locks);
            int depth = Volatile.Read(ref x.Depth);
            for (int i = Math.Min(depth, held.Length) - 1; i >= 0; i--)
                if (ReferenceEquals(held[i].Lock, lockObject))
                    return held[i].Site;
            return -1;
        }

        /// <summary>True when every thread of the chain (<paramref name="n"/> edges) still waits for what it did, in the same wait, and its holder still is the only one.</summary>
        bool Still(HeldLocks[] chain, object[] wants, int[] seqs, int[] heldSites, int n)
        {
            Interlocked.MemoryBarrier();
            for (int k = 0; k < n; k++) {
                int site;
                if (!ReferenceEquals(Volatile.Read(ref chain[k].WaitingFor), wants[k]) || Volatile.Read(ref chain[k].WaitSeq) != seqs[k] ||
                    !ReferenceEquals(Holder(wants[k], out site), chain[k + 1]) || site != heldSites[k])
                    return false;
            }
            return true;
        }

        /// <summary>Keeps the deadlock of <paramref name="n"/> edges unless its sites were seen; returns it, or null.</summary>
        int[] Keep(HeldLocks[] chain, int[] heldSites, int n)
        {
            int[] d = new int[n * 4];
            string[] pairs = new string[n];
            for (int k = 0; k < n; k++) {
                d[k * 4] = heldSites[k];
                d[k * 4 + 1] = chain[k].WaitSite;
                d[k * 4 + 2] = chain[k].ThreadId;
                d[k * 4 + 3] = chain[k + 1].ThreadId;
                pairs[k] = d[k * 4].ToString(System.Globalization.CultureInfo.InvariantCulture) + ">" +
                           d[k * 4 + 1].ToString(System.Globalization.CultureInfo.InvariantCulture);
            }
            Array.Sort(pairs, StringComparer.Ordinal);
            string key = string.Join(" ", pairs);
            lock (gate) {
                if (seen.ContainsKey(key))
                    return null;
                if (found.Count >= MaxKept) {
                    notKept++;
                    return null;
                }
                seen[key] = true;
                found.Add(d);
            }
            return d;
        }

        /// <summary>The deadlocks found so far, in the order found (per edge as <see cref="Begin"/> returns them).</summary>
        internal int[][] Found()
        {
            lock (gate)
                return found.ToArray();
        }

        /// <summary>Deadlocks found past the <see cref="MaxKept"/> kept.</summary>
        internal int NotKept()
        {
            lock (gate)
                return notKept;
        }

        /// <summary>
        /// A deadlock as its line says it (without the line's start), with <paramref name="order"/>'s site
        /// names: <c>thread 5 waits at B.cs:20 (M) for the lock thread 6 took at A.cs:10 (N); thread 6 waits ...</c>.
        /// </summary>
        internal static string Describe(int[] d, LockOrder order)
        {
            StringBuilder sb = new StringBuilder();
            for (int k = 0; k < d.Length / 4; k++) {
                if (k > 0)
                    sb.Append("; ");
                sb.Append("thread ").Append(d[k * 4 + 2]).Append(" waits at ").Append(order.Location(d[k * 4 + 1]));
                sb.Append(" (").Append(order.Method(d[k * 4 + 1])).Append(") for the lock thread ").Append(d[k * 4 + 3]);
                sb.Append(" took at ").Append(order.Location(d[k * 4])).Append(" (").Append(order.Method(d[k * 4])).Append(')');
            }
            return sb.ToString();
        }
    }
}
