// LockOrder.cs - the order in which each thread takes lock objects, and its cycles: potential deadlocks.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Text;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>
    /// The lock-order graph of the process: nodes are lock objects (named by the sites that took them),
    /// an edge A -> B means "a thread acquired B while A was the innermost lock it held". An edge that closes a cycle is a
    /// potential deadlock, reported once per set of sites (<see cref="Cycles"/>, a line on the sink) as
    /// soon as it appears. One instance per process, owned by the registry's first copy; every copy
    /// calls it through delegates (registry index 5) with process-wide site ids (<see cref="Join"/>).
    /// Cost: an acquisition with no lock held pushes onto the thread's list; one under held locks looks
    /// the (innermost held, new) pair up in <see cref="OrderTables"/> without a lock. A pair not known yet is kept
    /// on the thread (<see cref="HeldLocks.PendingN"/>) and added - under the gate - when the thread next
    /// holds no lock, so no critical section waits for it (a thread that keeps more than
    /// <see cref="HeldLocks.MaxPending"/> new pairs adds them then). The graph (<see cref="OrderGraph"/>) keeps a
    /// topological order of its components: an edge that agrees with it costs no search; a cycle is followed
    /// edge by edge only when the order says one closed and no cycle through the same pair of sites was
    /// found before. Memory is bounded: <see cref="MaxLocks"/> nodes and <see cref="MaxEdges"/> edges; dead
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
        /// <summary>Nodes the search for a cycle's edges visits at most.</summary>
        internal const int MaxCycleSearch = 4096;
        /// <summary>GCs between two sweeps at most, while a cap holds and sweeps find no room.</summary>
        internal const int MaxSweepGap = 64;
        /// <summary>Sets of sites with a cycle (and their edges' pairs of sites) remembered at most, kept or not.</summary>
        internal const int MaxCycleSets = 1024;

        readonly object gate = new object();
        readonly Deadlocks deadlocks = new Deadlocks();
        OrderTables tables = new OrderTables(64, 64);

        /* under the gate */
        int nodeCount;                                 /* live node ids: 0..nodeTop-1, minus free ones */
        int nodeTop;
        readonly List<int> freeNodes = new List<int>();
        readonly OrderGraph graph = new OrderGraph();   /* nodes, edges and their topological order */
        int edgeCount;
        int nextSweepGc;                               /* while a cap holds after a sweep: no sweep again before this GC count */
        int sweepGap = 1;                              /* GCs between sweeps that found no room: doubled each time, up to MaxSweepGap */
        readonly List<string> methods = new List<string>(), locations = new List<string>();
        readonly Dictionary<string, bool> seen = new Dictionary<string, bool>();   /* sets of sites with a cycle */
        readonly Dictionary<long, bool> cyclePairs = new Dictionary<long, bool>(); /* (held, acquired) sites of their edges */
        readonly List<int[]> cycles = new List<int[]>();  /* per cycle: held, acquired, thread per edge */
        int moreCycles;
        long followed;                                 /* cycles followed edge by edge (Work) */
        bool locksCapped, edgesCapped;
        volatile bool full;                            /* a cap held after a sweep: callers skip the gate until a GC */

        /// <summary>Where a new cycle's line goes (the owner's sink); null: nowhere.</summary>
        internal Action<string> CycleLine;
        /// <summary>Gives the event of a potential deadlock (false) or a deadlock (true) with its line (<see cref="Events.Cycle"/>); null: none.</summary>
        internal Action<bool, string> CycleEvent;

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
                LookupOrKeep(h, lockObject, site);
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
            LookupOrKeep(h, lockObject, site);
            if (h.PendingN > 0)
                AddPending(h);
            if (!exclusive)
                return;
            int[] d = deadlocks.Begin(h, lockObject, site);
            Action<string> report = CycleLine;
            if (d == null)
                return;
            string line = "LockTime: deadlock: " + Deadlocks.Describe(d, this);
            Action<bool, string> ev = CycleEvent;
            if (ev != null)
                ev(true, line);
            if (report != null)
                report(line);
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

        /// <summary>
        /// The deadlocks found, in framework types for the lock gate of a test run (registry entry 5's fifth
        /// element): per deadlock, <c>string[] { its words (<see cref="Deadlocks.Describe"/>), the method and
        /// location where its first edge's thread - the last to wait - waits, those where the lock it waits for was taken }</c>.
        /// </summary>
        internal object[] DeadlockRows()
        {
            int[][] found = deadlocks.Found();
            object[] rows = new object[found.Length];
            for (int i = 0; i < found.Length; i++)
                rows[i] = new string[] { Deadlocks.Describe(found[i], this), Method(found[i][1]), Location(found[i][1]), Method(found[i][0]), Location(found[i][0]) };
            return rows;
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
                if (d == 0 && h.PendingN > 0) {
                    AddPending(h);
                    if (!lookupWarm)
                        WarmLookup();
                }
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
        /// True once <see cref="Lookup"/> is compiled (<see cref="WarmLookup"/>). Before, a nested acquisition keeps its
        /// pair with its nodes unknown (<see cref="AddPending"/> finds them after the outermost release): compiling the
        /// optimized lookup at a process's first nested acquisition took milliseconds inside the holds - a first
        /// <c>lock (a) { lock (b) { } }</c> that held its locks for microseconds was reported held 12 and 28 ms.
        /// </summary>
        volatile bool lookupWarm;

        /// <summary>As <see cref="Lookup"/> once it is compiled; until then the pair is kept for <see cref="AddPending"/> (<see cref="Pend"/>, the JIT's first code).</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        void LookupOrKeep(HeldLocks h, object lockObject, int site)
        {
            if (lookupWarm)
                Lookup(h, lockObject, site);
            else if (!Full())
                Pend(h, h.Locks[h.Depth - 1].Lock, h.Locks[h.Depth - 1].Site, -1, lockObject, site, -1);
        }

        /// <summary>
        /// Compiles <see cref="Lookup"/> and what it calls by one lookup in a list of the run-time's own, then sets
        /// <see cref="lookupWarm"/>: after an outermost release (no timed lock held), once. The scratch list's pair is
        /// kept in it and dropped with it: nothing enters the order.
        /// </summary>
        void WarmLookup()
        {
            lookupWarm = true;
            HeldLocks scratch = new HeldLocks();
            scratch.Locks[0].Lock = new object();
            scratch.Locks[0].Node = -1;
            scratch.Depth = 1;
            Lookup(scratch, new object(), -1);
        }

        /// <summary>
        /// Looks up the edge from the innermost held lock to <paramref name="lockObject"/> without a lock;
        /// a pair whose nodes or edge are not known yet is kept for <see cref="AddPending"/>. Only the
        /// innermost: the held locks are already joined in the order they were taken (each by the edge
        /// its own acquisition gave), so an edge from every one of them would add nothing a cycle search
        /// does not find through that chain, and would cost the acquisition a lookup per held lock while
        /// they are all held (50 nested locks lengthened the outer holds by 13 ms).
        /// </summary>
        [MethodImpl((MethodImplOptions)Jit.Optimized)]
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
                Pend(h, held[i].Lock, held[i].Site, from, lockObject, site, to);
        }

        /// <summary>
        /// Keeps the pair (<paramref name="held"/>, <paramref name="acquired"/>) with their nodes (-1: not known yet), unless it is among the last
        /// few kept (a pair kept twice is added once); when the thread keeps too many, adds them now. Left to the tiering:
        /// the first nested acquisitions call it inside their holds (<see cref="LookupOrKeep"/>).
        /// </summary>
        void Pend(HeldLocks h, object held, int heldSite, int from, object acquired, int site, int to)
        {
            for (int k = Math.Max(0, h.PendingN - 8); k < h.PendingN; k++)
                if (ReferenceEquals(h.PendingHeld[k], held) && ReferenceEquals(h.PendingAcquired[k], acquired))
                    return;
            if (!h.Room())
                AddPending(h);
            int n = h.PendingN;
            h.PendingHeld[n] = held;
            h.PendingAcquired[n] = acquired;
            h.PendingHeldSite[n] = heldSite;
            h.PendingSite[n] = site;
            h.PendingFrom[n] = from;
            h.PendingTo[n] = to;
            h.PendingN = n + 1;
        }

        /// <summary>
        /// Adds the thread's kept pairs as nodes and edges, all under one hold of the gate (an edge that
        /// goes against the order searched for a cycle), and forgets them; the lines of new cycles go out
        /// after the gate is released.
        /// </summary>
        [MethodImpl((MethodImplOptions)Jit.Optimized)]
        void AddPending(HeldLocks h)
        {
            int n = h.PendingN;
            h.PendingN = 0;
            List<string> lines = null;
            if (!Full()) {
                lock (gate) {
                    int thread = h.ThreadId;
                    for (int k = 0; k < n && !Full(); k++) {
                        /* a node looked up stays valid: its object, held here, is not swept */
                        int from = h.PendingFrom[k], to = h.PendingTo[k];
                        if (from < 0)
                            from = AddLocked(h.PendingHeld[k]);
                        if (from >= 0 && to < 0)
                            to = AddLocked(h.PendingAcquired[k]);
                        if (from < 0 || to < 0 || from == to)
                            continue;
                        string line = NewEdgeLocked(from, to, h.PendingHeldSite[k], h.PendingSite[k], thread);
                        if (line != null)
                            (lines ?? (lines = new List<string>())).Add(line);
                    }
                }
            }
            Array.Clear(h.PendingHeld, 0, n);
            Array.Clear(h.PendingAcquired, 0, n);
            Action<string> report = CycleLine;
            Action<bool, string> ev = CycleEvent;
            for (int k = 0; lines != null && k < lines.Count; k++) {
                if (ev != null)
                    ev(false, lines[k]);
                if (report != null)
                    report(lines[k]);
            }
        }

        static long Key(int from, int to)
        {
            return ((long)(from + 1) << 32) | (uint)(to + 1);
        }

        /// <summary>The node of <paramref name="o"/>, added when new (the gate held); -1 when the nodes are full even after a sweep.</summary>
        [MethodImpl((MethodImplOptions)Jit.Optimized)]
        int AddLocked(object o)
        {
            int hash = RuntimeHelpers.GetHashCode(o);
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
            }
            graph.AddNode(id);
            nodeCount++;
            if (nodeCount * 2 > tables.Nodes.Length)
                Rebuild(tables.Nodes.Length * 2, tables.Edges.Length);
            Insert(tables, new WeakReference(o), hash, id);
            return id;
        }

        [MethodImpl((MethodImplOptions)Jit.Optimized)]
        static void Insert(OrderTables t, WeakReference w, int hash, int id)
        {
            NodeSlot[] nodes = t.Nodes;
            int mask = nodes.Length - 1;
            int i = hash & mask;
            while (nodes[i].Ref != null)
                i = (i + 1) & mask;
            nodes[i].Hash = hash;
            nodes[i].Id = id;
            Volatile.Write(ref nodes[i].Ref, w);
        }

        [MethodImpl((MethodImplOptions)Jit.Optimized)]
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
        [MethodImpl((MethodImplOptions)Jit.Optimized)]
        void Rebuild(int nodeSlots, int edgeSlots)
        {
            OrderTables old = tables, t = new OrderTables(nodeSlots, edgeSlots);
            bool[] dead = new bool[nodeTop];
            bool[] live = new bool[nodeTop];
            for (int i = 0; i < old.Nodes.Length; i++) {
                WeakReference w = old.Nodes[i].Ref;
                if (w == null)
                    continue;
                if (w.Target == null) {
                    dead[old.Nodes[i].Id] = true;
                    continue;
                }
                live[old.Nodes[i].Id] = true;
                Insert(t, w, old.Nodes[i].Hash, old.Nodes[i].Id);
            }
            bool any = false;
            for (int id = 0; id < nodeTop; id++) {
                dead[id] = dead[id] && !live[id];
                if (!dead[id])
                    continue;
                freeNodes.Add(id);
                nodeCount--;
                any = true;
            }
            if (any)
                edgeCount -= graph.Compact(dead, nodeTop);
            InsertEdges(t);
            Volatile.Write(ref tables, t);
        }

        /// <summary>The edges into <paramref name="t"/>'s edge table.</summary>
        void InsertEdges(OrderTables t)
        {
            int[] from = graph.From, to = graph.To;
            for (int e = 0; e < graph.EdgeTop; e++)
                if (from[e] >= 0)
                    InsertEdge(t, Key(from[e], to[e]));
        }

        /// <summary>The edge table twice as large, the nodes' table shared (its slots are only ever filled): under the gate, published whole.</summary>
        void GrowEdges()
        {
            OrderTables t = new OrderTables(0, tables.Edges.Length * 2);
            t.Nodes = tables.Nodes;
            InsertEdges(t);
            Volatile.Write(ref tables, t);
        }

        /// <summary>
        /// Drops the nodes of collected objects (when the nodes or edges are full), at most once per GC, and
        /// after sweeps that found no room, once per 2, 4 ... <see cref="MaxSweepGap"/> GCs (a program that
        /// allocates much and keeps its locks pays a sweep of the whole graph only that often). Returns
        /// true when there is room again; false sets <see cref="full"/> until then.
        /// </summary>
        bool Sweep()
        {
            int gc = GC.CollectionCount(0);
            bool swept = !full || gc >= nextSweepGc;
            if (swept)
                Rebuild(tables.Nodes.Length, tables.Edges.Length);
            if (nodeCount < MaxLocks && edgeCount < MaxEdges) {
                full = false;
                sweepGap = 1;
                return true;
            }
            if (swept) {
                nextSweepGc = gc + sweepGap;
                sweepGap = Math.Min(sweepGap * 2, MaxSweepGap);
            }
            full = true;
            return false;
        }

        /// <summary>True while a cap holds and the GCs since the last sweep are too few for another: nothing new can be tracked.</summary>
        bool Full()
        {
            return full && GC.CollectionCount(0) < nextSweepGc;
        }

        /// <summary>
        /// Adds edge <paramref name="from"/> -> <paramref name="to"/> (sites held, acquired; the thread that
        /// took them) under the gate; returns the line of a cycle it closes, or null. An edge that agrees
        /// with the order closes none; one that closes a cycle is followed edge by edge (<see cref="OrderGraph.Path"/>)
        /// unless a cycle through its pair of sites was already found.
        /// </summary>
        [MethodImpl((MethodImplOptions)Jit.Optimized)]
        string NewEdgeLocked(int from, int to, int heldSite, int acquiredSite, int thread)
        {
            long key = Key(from, to);
            if (tables.HasEdge(key))
                return null;
            if (edgeCount >= MaxEdges && !Sweep()) {
                edgesCapped = true;
                return null;
            }
            bool cycle;
            int e = graph.AddEdge(from, to, heldSite, acquiredSite, thread, out cycle);
            edgeCount++;
            if (edgeCount * 2 > tables.Edges.Length)
                GrowEdges();
            else
                InsertEdge(tables, key);
            if (!cycle || cyclePairs.ContainsKey(SitePair(heldSite, acquiredSite)))
                return null;
            followed++;
            List<int> path = graph.Path(to, from, MaxCycleEdges - 1, MaxCycleSearch);
            if (path == null)
                return null;
            path.Add(e);
            return Found(path);
        }

        /// <summary>
        /// Keeps a new cycle (edges in order, the new one last) unless its set of sites was seen; returns its
        /// line, or null. Its edges' pairs of sites are remembered either way: an edge with one of them is
        /// not followed again.
        /// </summary>
        string Found(List<int> path)
        {
            int[] c = new int[path.Count * 3];
            for (int i = 0; i < path.Count; i++) {
                c[i * 3] = graph.Held[path[i]];
                c[i * 3 + 1] = graph.Acquired[path[i]];
                c[i * 3 + 2] = graph.Thread[path[i]];
            }
            for (int i = 0; i < path.Count; i++)
                if (cyclePairs.Count < MaxCycleSets)
                    cyclePairs[SitePair(c[i * 3], c[i * 3 + 1])] = true;
            string key = SiteKey(c);
            if (seen.ContainsKey(key))
                return null;
            if (seen.Count < MaxCycleSets)
                seen[key] = true;
            if (cycles.Count >= MaxCycles) {
                moreCycles++;
                return null;
            }
            cycles.Add(c);
            return Line(c);
        }

        static long SitePair(int held, int acquired)
        {
            return ((long)held << 32) | (uint)acquired;
        }

        /// <summary>The cycle's set of sites (each once, in order of id): cycles through the same sites are one, whatever their length.</summary>
        static string SiteKey(int[] c)
        {
            List<int> sites = new List<int>();
            for (int i = 0; i < c.Length; i += 3) {
                if (!sites.Contains(c[i]))
                    sites.Add(c[i]);
                if (!sites.Contains(c[i + 1]))
                    sites.Add(c[i + 1]);
            }
            sites.Sort();
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < sites.Count; i++)
                sb.Append(sites[i]).Append(' ');
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

        /// <summary>
        /// The graph work so far: { components the reorders visited (<see cref="OrderGraph.Searched"/>),
        /// cycles followed edge by edge (<see cref="OrderGraph.Path"/>) }. An edge that agrees with the
        /// order adds to neither; one in a set of sites with a cycle already found adds to the first only.
        /// </summary>
        internal long[] Work()
        {
            lock (gate)
                return new long[] { graph.Searched, followed };
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
