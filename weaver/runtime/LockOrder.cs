// LockOrder.cs - the order in which each thread takes lock objects, and its cycles: potential deadlocks.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Text;
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
            return true;
        }
    }

    /// <summary>
    /// The tables readers use without a lock: lock objects to nodes (identity hash, open addressing,
    /// weak references) and the known edges (<c>(from + 1) &lt;&lt; 32 | (to + 1)</c>, open addressing).
    /// Entries are only added into free slots, under <see cref="LockOrder"/>'s gate; a sweep or growth
    /// publishes new tables whole, so a reader sees one consistent set.
    /// </summary>
    [CompilerGenerated]
    internal sealed class OrderTables
    {
        internal WeakReference[] Refs;
        internal int[] Hashes;
        internal int[] Ids;
        internal long[] Edges;

        internal OrderTables(int nodeSlots, int edgeSlots)
        {
            Refs = new WeakReference[nodeSlots];
            Hashes = new int[nodeSlots];
            Ids = new int[nodeSlots];
            Edges = new long[edgeSlots];
        }

        /// <summary>The node of <paramref name="o"/> (whose identity hash is <paramref name="hash"/>), or -1.</summary>
        internal int Node(object o, int hash)
        {
            int mask = Refs.Length - 1;
            for (int i = hash & mask; ; i = (i + 1) & mask) {
                WeakReference w = Volatile.Read(ref Refs[i]);
                if (w == null)
                    return -1;
                if (Hashes[i] == hash && ReferenceEquals(w.Target, o))
                    return Ids[i];
            }
        }

        /// <summary>True when the edge <paramref name="key"/> is known.</summary>
        internal bool HasEdge(long key)
        {
            int mask = Edges.Length - 1;
            for (int i = Slot(key, mask); ; i = (i + 1) & mask) {
                long k = Volatile.Read(ref Edges[i]);
                if (k == 0)
                    return false;
                if (k == key)
                    return true;
            }
        }

        internal static int Slot(long key, int mask)
        {
            ulong h = (ulong)key * 0x9E3779B97F4A7C15UL;
            return (int)(h >> 40) & mask;
        }
    }

    /// <summary>
    /// The lock-order graph of the process: nodes are lock objects (named by the sites that took them),
    /// an edge A -> B means "a thread acquired B while A was the innermost lock it held". An edge that closes a cycle is a
    /// potential deadlock, reported once per set of sites (<see cref="Cycles"/>, a line on the sink) as
    /// soon as it appears. One instance per process, owned by the registry's first copy; every copy
    /// calls it through delegates (registry index 5) with process-wide site ids (<see cref="Join"/>).
    /// Cost: an acquisition with no lock held pushes onto the thread's list; one under held locks looks
    /// the (innermost held, new) pair up in <see cref="OrderTables"/> without a lock. A pair not known yet is kept
    /// on the thread (<see cref="HeldLocks.PendingN"/>) and added - under the gate, with the cycle search
    /// - when the thread next holds no lock, so no critical section waits for it (a thread that keeps
    /// more than <see cref="HeldLocks.MaxPending"/> new pairs adds them then). Memory is bounded: <see cref="MaxLocks"/> nodes and <see cref="MaxEdges"/> edges; dead
    /// objects (weak references) are swept when the nodes are full; past a cap nothing new is tracked and
    /// the report says so.
    /// </summary>
    [CompilerGenerated]
    internal sealed class LockOrder
    {
        internal const int MaxLocks = 16384;
        internal const int MaxEdges = 65536;
        internal const int MaxCycles = 100;
        /// <summary>Edges a cycle has at most (longer ones are not looked for).</summary>
        internal const int MaxCycleEdges = 10;

        readonly object gate = new object();
        readonly Deadlocks deadlocks = new Deadlocks();
        OrderTables tables = new OrderTables(64, 64);

        /* under the gate */
        int nodeCount;                                 /* live node ids: 0..nodeTop-1, minus free ones */
        int nodeTop;
        readonly List<int> freeNodes = new List<int>();
        List<int>[] outEdges = new List<int>[32];       /* per node: edge ids */
        readonly List<int> edgeFrom = new List<int>(), edgeTo = new List<int>();
        readonly List<int> edgeHeld = new List<int>(), edgeAcquired = new List<int>(), edgeThread = new List<int>();
        int edgeCount;
        readonly List<int> freeEdges = new List<int>();
        int capGc = -1;                                /* GC count when a cap held after a sweep: no sweep again before the next GC */
        readonly List<string> methods = new List<string>(), locations = new List<string>();
        readonly Dictionary<string, bool> seen = new Dictionary<string, bool>();
        readonly List<int[]> cycles = new List<int[]>();  /* per cycle: held, acquired, thread per edge */
        int moreCycles;
        bool locksCapped, edgesCapped;
        volatile bool full;                            /* a cap held after a sweep: callers skip the gate until a GC */

        /// <summary>Where a new cycle's line goes (the owner's sink); null: nowhere.</summary>
        internal Action<string> CycleLine;

        /// <summary>
        /// Registers a copy's sites (their methods and locations, by site id) and returns the process-wide
        /// id of its site 0: site <c>s</c> of that copy is <c>base + s</c> in <see cref="Enter"/>.
        /// </summary>
        internal int Join(string[] siteMethods, string[] siteLocations)
        {
            lock (gate) {
                int first = methods.Count;
                for (int i = 0; i < siteMethods.Length; i++) {
                    methods.Add(siteMethods[i] ?? "");
                    locations.Add(i < siteLocations.Length ? siteLocations[i] ?? "" : "");
                }
                return first;
            }
        }

        /// <summary>
        /// The calling thread acquired <paramref name="lockObject"/> at process-wide site <paramref name="site"/>:
        /// an edge from the innermost lock it holds (none when it holds this one already: re-entry), then
        /// pushed onto its list. What the other copies call (through the registry's delegate).
        /// </summary>
        internal void Enter(object lockObject, int site)
        {
            try {
                Enter(ThreadHolds(), lockObject, site);
            } catch (Exception) {
            }
        }

        /// <summary>
        /// As <see cref="Enter(object, int)"/>, on <paramref name="h"/>, the calling thread's list (the
        /// owner copy keeps it in its thread record). A thread that holds no other lock only pushes.
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal void Enter(HeldLocks h, object lockObject, int site)
        {
            if (h.WaitingFor != null)
                Deadlocks.Unwait(h);
            int d = h.Depth;
            if (d > 0 && !Holds(h, lockObject))
                Lookup(h, lockObject, site);
            HeldLock[] held = h.Locks;
            if (d >= held.Length)
                held = Grow(h);
            held[d].Lock = lockObject;
            held[d].Site = site;
            held[d].Node = -1;
            h.Depth = d + 1;
        }

        /// <summary>
        /// The calling thread's list (<see cref="HeldLocks.Current"/>), made on first use and then known to
        /// the deadlock search, which reads every thread's.
        /// </summary>
        internal HeldLocks ThreadHolds()
        {
            HeldLocks h = HeldLocks.Current;
            if (h == null) {
                h = new HeldLocks();
                HeldLocks.Current = h;
                deadlocks.Add(h);
            }
            return h;
        }

        /// <summary>
        /// The calling thread is about to block on <paramref name="lockObject"/> at process-wide site
        /// <paramref name="site"/> (<paramref name="exclusive"/>: any holder blocks it). What the other copies
        /// call; see <see cref="Waiting(HeldLocks, object, int, bool)"/>.
        /// </summary>
        internal void Waiting(object lockObject, int site, bool exclusive)
        {
            try {
                Waiting(ThreadHolds(), lockObject, site, exclusive);
            } catch (Exception) {
            }
        }

        /// <summary>
        /// As <see cref="Waiting(object, int, bool)"/>, on <paramref name="h"/>, the calling thread's list. A
        /// thread that holds locks gets the edge from the innermost one now, not at the acquisition, which
        /// a deadlock never reaches (its cycle is searched for and reported before the thread blocks); an
        /// exclusive wait is also followed through the holders (<see cref="Deadlocks"/>), and a deadlock it
        /// closes is reported on its line. A thread that holds none can be in no deadlock: nothing.
        /// </summary>
        internal void Waiting(HeldLocks h, object lockObject, int site, bool exclusive)
        {
            if (h.Depth == 0 || Holds(h, lockObject))
                return;
            Lookup(h, lockObject, site);
            if (h.PendingN > 0)
                AddPending(h);
            if (!exclusive)
                return;
            int[] d = deadlocks.Begin(h, lockObject, site);
            Action<string> report = CycleLine;
            if (d != null && report != null)
                report("LockTime: deadlock: " + Deadlocks.Describe(d, this));
        }

        /// <summary>
        /// Forgets the held-lock lists of the threads that ended (<see cref="Deadlocks.Sweep"/>); their edges
        /// stay. <paramref name="due"/>: only when the lists doubled since the last sweep. What the line
        /// writer calls; returns the number of lists taken off.
        /// </summary>
        internal int SweepThreads(bool due)
        {
            return deadlocks.Sweep(due);
        }

        /// <summary>The number of threads' held-lock lists the deadlock search looks among now.</summary>
        internal int Listed()
        {
            return deadlocks.Listed();
        }

        /// <summary>The deadlocks found: per deadlock, per edge, held site, wait site, waiting thread id, holding thread id (<see cref="Deadlocks.Begin"/>).</summary>
        internal int[][] DeadlocksFound()
        {
            return deadlocks.Found();
        }

        /// <summary>The calling thread released <paramref name="lockObject"/>: its innermost entry goes. What the other copies call.</summary>
        internal void Exit(object lockObject)
        {
            try {
                HeldLocks h = HeldLocks.Current;
                if (h != null)
                    Exit(h, lockObject);
            } catch (Exception) {
            }
        }

        /// <summary>As <see cref="Exit(object)"/>, on <paramref name="h"/>, the calling thread's list; the innermost entry is tried first, inline.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal void Exit(HeldLocks h, object lockObject)
        {
            int d = h.Depth - 1;
            HeldLock[] held = h.Locks;
            if ((uint)d < (uint)held.Length && ReferenceEquals(held[d].Lock, lockObject)) {
                held[d].Lock = null;
                h.Depth = d;
                if (d == 0 && h.PendingN > 0)
                    AddPending(h);
            } else {
                ExitBelow(h, lockObject);
            }
        }

        /// <summary>As <see cref="Exit(HeldLocks, object)"/>, for a lock below the innermost one (released out of order), or none.</summary>
        void ExitBelow(HeldLocks h, object lockObject)
        {
            for (int i = h.Depth - 2; i >= 0; i--) {
                if (!ReferenceEquals(h.Locks[i].Lock, lockObject))
                    continue;
                int d = h.Depth - 1;
                Array.Copy(h.Locks, i + 1, h.Locks, i, d - i);
                h.Locks[d].Lock = null;
                h.Depth = d;
                return;
            }
        }

        static bool Holds(HeldLocks h, object lockObject)
        {
            for (int i = 0; i < h.Depth; i++)
                if (ReferenceEquals(h.Locks[i].Lock, lockObject))
                    return true;
            return false;
        }

        static HeldLock[] Grow(HeldLocks h)
        {
            Array.Resize(ref h.Locks, h.Locks.Length * 2);
            return h.Locks;
        }

        /// <summary>
        /// Looks up the edge from the innermost held lock to <paramref name="lockObject"/> without a lock;
        /// a pair whose nodes or edge are not known yet is kept for <see cref="AddPending"/>. Only the
        /// innermost: the held locks are already joined in the order they were taken (each by the edge
        /// its own acquisition gave), so an edge from every one of them would add nothing a cycle search
        /// does not find through that chain, and would cost the acquisition a lookup per held lock while
        /// they are all held (50 nested locks lengthened the outer holds by 13 ms).
        /// </summary>
        void Lookup(HeldLocks h, object lockObject, int site)
        {
            if (Full())
                return;
            OrderTables t = Volatile.Read(ref tables);
            HeldLock[] held = h.Locks;
            int i = h.Depth - 1;
            int to = t.Node(lockObject, RuntimeHelpers.GetHashCode(lockObject));
            if (held[i].Node < 0)
                held[i].Node = t.Node(held[i].Lock, RuntimeHelpers.GetHashCode(held[i].Lock));
            int from = held[i].Node;
            if (from < 0 || to < 0 || (from != to && !t.HasEdge(Key(from, to))))
                Pend(h, held[i].Lock, held[i].Site, lockObject, site);
        }

        /// <summary>Keeps the pair (<paramref name="held"/>, <paramref name="acquired"/>) once; when the thread keeps too many, adds them now.</summary>
        void Pend(HeldLocks h, object held, int heldSite, object acquired, int site)
        {
            for (int k = 0; k < h.PendingN; k++)
                if (ReferenceEquals(h.PendingHeld[k], held) && ReferenceEquals(h.PendingAcquired[k], acquired))
                    return;
            if (!h.Room())
                AddPending(h);
            int n = h.PendingN;
            h.PendingHeld[n] = held;
            h.PendingAcquired[n] = acquired;
            h.PendingHeldSite[n] = heldSite;
            h.PendingSite[n] = site;
            h.PendingN = n + 1;
        }

        /// <summary>Adds the thread's kept pairs as nodes and edges (each new edge searched for a cycle), and forgets them.</summary>
        void AddPending(HeldLocks h)
        {
            int n = h.PendingN;
            h.PendingN = 0;
            for (int k = 0; k < n; k++) {
                object held = h.PendingHeld[k], acquired = h.PendingAcquired[k];
                h.PendingHeld[k] = null;
                h.PendingAcquired[k] = null;
                int from = Add(held), to = from < 0 ? -1 : Add(acquired);
                if (from >= 0 && to >= 0 && from != to)
                    NewEdge(from, to, h.PendingHeldSite[k], h.PendingSite[k]);
            }
        }

        static long Key(int from, int to)
        {
            return ((long)(from + 1) << 32) | (uint)(to + 1);
        }

        /// <summary>The node of <paramref name="o"/>, added under the gate; -1 when the nodes are full even after a sweep.</summary>
        int Add(object o)
        {
            if (Full())
                return -1;
            int hash = RuntimeHelpers.GetHashCode(o);
            int known = Volatile.Read(ref tables).Node(o, hash);
            if (known >= 0)
                return known;
            lock (gate) {
                int id = tables.Node(o, hash);
                if (id >= 0)
                    return id;
                if (nodeCount >= MaxLocks && !Sweep()) {
                    locksCapped = true;
                    return -1;
                }
                if (freeNodes.Count > 0) {
                    id = freeNodes[freeNodes.Count - 1];
                    freeNodes.RemoveAt(freeNodes.Count - 1);
                } else {
                    id = nodeTop++;
                    if (id == outEdges.Length) {
                        List<int>[] grown = new List<int>[outEdges.Length * 2];
                        Array.Copy(outEdges, grown, outEdges.Length);
                        outEdges = grown;
                    }
                }
                nodeCount++;
                if (nodeCount * 2 > tables.Refs.Length)
                    Rebuild(tables.Refs.Length * 2, tables.Edges.Length);
                Insert(tables, o, hash, id);
                return id;
            }
        }

        static void Insert(OrderTables t, object o, int hash, int id)
        {
            int mask = t.Refs.Length - 1;
            int i = hash & mask;
            while (t.Refs[i] != null)
                i = (i + 1) & mask;
            t.Hashes[i] = hash;
            t.Ids[i] = id;
            Volatile.Write(ref t.Refs[i], new WeakReference(o));
        }

        static void InsertEdge(OrderTables t, long key)
        {
            int mask = t.Edges.Length - 1;
            int i = OrderTables.Slot(key, mask);
            while (t.Edges[i] != 0)
                i = (i + 1) & mask;
            Volatile.Write(ref t.Edges[i], key);
        }

        /// <summary>
        /// New tables of the given sizes with every live node and edge (under the gate), published whole.
        /// A node whose object was collected is dropped, with its edges; its id is free again.
        /// </summary>
        void Rebuild(int nodeSlots, int edgeSlots)
        {
            OrderTables old = tables, t = new OrderTables(nodeSlots, edgeSlots);
            bool[] dead = new bool[nodeTop];
            bool[] live = new bool[nodeTop];
            for (int i = 0; i < old.Refs.Length; i++) {
                WeakReference w = old.Refs[i];
                if (w == null)
                    continue;
                object o = w.Target;
                if (o == null) {
                    dead[old.Ids[i]] = true;
                    continue;
                }
                live[old.Ids[i]] = true;
                Insert(t, o, old.Hashes[i], old.Ids[i]);
            }
            for (int id = 0; id < nodeTop; id++) {
                if (!dead[id] || live[id])
                    continue;
                freeNodes.Add(id);
                nodeCount--;
                outEdges[id] = null;
            }
            for (int e = 0; e < edgeFrom.Count; e++) {
                int from = edgeFrom[e], to = edgeTo[e];
                if (from < 0)
                    continue;
                if ((dead[from] && !live[from]) || (dead[to] && !live[to])) {
                    edgeFrom[e] = -1;    /* a free edge id, skipped until reused */
                    freeEdges.Add(e);
                    edgeCount--;
                    if (outEdges[from] != null)
                        outEdges[from].Remove(e);
                    continue;
                }
                InsertEdge(t, Key(from, to));
            }
            Volatile.Write(ref tables, t);
        }

        /// <summary>
        /// Drops the nodes of collected objects (when the nodes or edges are full), at most once per GC.
        /// Returns true when there is room again; false sets <see cref="full"/> until the next GC.
        /// </summary>
        bool Sweep()
        {
            int gc = GC.CollectionCount(0);
            if (gc != capGc)
                Rebuild(tables.Refs.Length, tables.Edges.Length);
            if (nodeCount < MaxLocks && edgeCount < MaxEdges) {
                full = false;
                return true;
            }
            capGc = gc;
            full = true;
            return false;
        }

        /// <summary>True while a cap holds and no GC has run since the last sweep: nothing new can be tracked.</summary>
        bool Full()
        {
            return full && GC.CollectionCount(0) == capGc;
        }

        /// <summary>Adds edge <paramref name="from"/> -> <paramref name="to"/> (sites held, acquired) and reports a cycle it closes.</summary>
        void NewEdge(int from, int to, int heldSite, int acquiredSite)
        {
            if (Full())
                return;
            string line = null;
            lock (gate) {
                long key = Key(from, to);
                if (tables.HasEdge(key))
                    return;
                if (edgeCount >= MaxEdges && !Sweep()) {
                    edgesCapped = true;
                    return;
                }
                int e;
                if (freeEdges.Count > 0) {
                    e = freeEdges[freeEdges.Count - 1];
                    freeEdges.RemoveAt(freeEdges.Count - 1);
                    edgeFrom[e] = from;
                    edgeTo[e] = to;
                    edgeHeld[e] = heldSite;
                    edgeAcquired[e] = acquiredSite;
                    edgeThread[e] = Thread.CurrentThread.ManagedThreadId;
                } else {
                    e = edgeFrom.Count;
                    edgeFrom.Add(from);
                    edgeTo.Add(to);
                    edgeHeld.Add(heldSite);
                    edgeAcquired.Add(acquiredSite);
                    edgeThread.Add(Thread.CurrentThread.ManagedThreadId);
                }
                edgeCount++;
                if (outEdges[from] == null)
                    outEdges[from] = new List<int>();
                outEdges[from].Add(e);
                if (edgeCount * 2 > tables.Edges.Length)
                    Rebuild(tables.Refs.Length, tables.Edges.Length * 2);
                else
                    InsertEdge(tables, key);
                List<int> path = Path(to, from);
                if (path != null) {
                    path.Add(e);
                    line = Found(path);
                }
            }
            Action<string> report = CycleLine;
            if (line != null && report != null)
                report(line);
        }

        /// <summary>The edges of a shortest path from <paramref name="start"/> to <paramref name="goal"/> (breadth first, at most <see cref="MaxCycleEdges"/> - 1), or null.</summary>
        List<int> Path(int start, int goal)
        {
            Dictionary<int, int> via = new Dictionary<int, int>(); /* node -> the edge that reached it */
            List<int> frontier = new List<int>();
            frontier.Add(start);
            via[start] = -1;
            for (int step = 0; step < MaxCycleEdges - 1 && frontier.Count > 0; step++) {
                List<int> next = new List<int>();
                for (int k = 0; k < frontier.Count; k++) {
                    List<int> outs = outEdges[frontier[k]];
                    if (outs == null)
                        continue;
                    for (int j = 0; j < outs.Count; j++) {
                        int e = outs[j], to = edgeTo[e];
                        if (via.ContainsKey(to))
                            continue;
                        via[to] = e;
                        if (to == goal) {
                            List<int> path = new List<int>();
                            for (int n = goal; via[n] >= 0; n = edgeFrom[via[n]])
                                path.Insert(0, via[n]);
                            return path;
                        }
                        next.Add(to);
                    }
                }
                frontier = next;
            }
            return null;
        }

        /// <summary>Keeps a new cycle (edges in order, the new one last) unless its sites were seen; returns its line, or null.</summary>
        string Found(List<int> path)
        {
            int[] c = new int[path.Count * 3];
            for (int i = 0; i < path.Count; i++) {
                c[i * 3] = edgeHeld[path[i]];
                c[i * 3 + 1] = edgeAcquired[path[i]];
                c[i * 3 + 2] = edgeThread[path[i]];
            }
            string key = SiteKey(c);
            if (seen.ContainsKey(key))
                return null;
            if (cycles.Count >= MaxCycles) {
                moreCycles++;
                return null;
            }
            seen[key] = true;
            cycles.Add(c);
            return Line(c);
        }

        /// <summary>The cycle's sites, from its least rotation: the same sites in the same order are one cycle.</summary>
        static string SiteKey(int[] c)
        {
            int n = c.Length / 3, best = 0;
            for (int r = 1; r < n; r++)
                for (int i = 0; i < n * 2; i++) {
                    int a = c[((r * 2 + i) / 2 % n) * 3 + i % 2], b = c[((best * 2 + i) / 2 % n) * 3 + i % 2];
                    if (a != b) {
                        if (a < b)
                            best = r;
                        break;
                    }
                }
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < n; i++) {
                int k = ((best + i) % n) * 3;
                sb.Append(c[k]).Append('>').Append(c[k + 1]).Append(' ');
            }
            return sb.ToString();
        }

        /// <summary>
        /// The line of a cycle: <c>LockTime: potential deadlock: A.cs:1 then B.cs:2 (M), and in the other order
        /// at B.cs:3 then A.cs:4 (M)</c>; longer cycles list every edge, the last after "and".
        /// </summary>
        internal string Line(int[] c)
        {
            return "LockTime: potential deadlock: " + Describe(c);
        }

        /// <summary>The edges of a cycle as its line gives them (without the line's start).</summary>
        internal string Describe(int[] c)
        {
            int n = c.Length / 3;
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < n; i++) {
                if (i > 0)
                    sb.Append(i < n - 1 ? ", " : n == 2 ? ", and in the other order at " : ", and ");
                int held = c[i * 3], acquired = c[i * 3 + 1];
                sb.Append(Location(held)).Append(" then ").Append(Location(acquired)).Append(" (");
                string m = Method(held), m2 = Method(acquired);
                sb.Append(m);
                if (m2 != m)
                    sb.Append(" then ").Append(m2);
                sb.Append(')');
            }
            return sb.ToString();
        }

        internal string Method(int site)
        {
            lock (gate)
                return (uint)site < (uint)methods.Count ? methods[site] : "";
        }

        internal string Location(int site)
        {
            lock (gate)
                return (uint)site < (uint)locations.Count ? locations[site] : "";
        }

        /// <summary>The cycles found so far: per cycle, per edge, held site, acquired site, thread id.</summary>
        internal int[][] Cycles()
        {
            lock (gate)
                return cycles.ToArray();
        }

        /// <summary>What the report and summary say of the graph: { locks, edges, cycles not kept (past <see cref="MaxCycles"/>), 1 when the lock cap was reached, 1 when the edge cap was, deadlocks not kept (past <see cref="Deadlocks.MaxKept"/>) }.</summary>
        internal long[] Counts()
        {
            long[] r = new long[6];
            r[5] = deadlocks.NotKept();
            lock (gate) {
                r[0] = nodeCount;
                r[1] = edgeCount;
                r[2] = moreCycles;
                r[3] = locksCapped ? 1 : 0;
                r[4] = edgesCapped ? 1 : 0;
            }
            return r;
        }
    }
}
