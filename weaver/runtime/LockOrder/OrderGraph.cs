// OrderGraph.cs - the lock-order graph's nodes and edges, kept in a topological order of its
// strongly connected components, so that an edge which agrees with the order costs no search.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;

namespace LockTime.Runtime
{
    /// <summary>
    /// The nodes (lock objects, by id) and edges of the lock order, under <see cref="LockOrder"/>'s gate.
    /// Nodes that lie on a common cycle form one component (union-find); the components are kept in a
    /// topological order (Pearce and Kelly's dynamic order): a new edge from an earlier component to a
    /// later one closes no cycle and costs no search; one against the order searches only the components
    /// placed between its ends, then moves them (or, when it closes a cycle, joins the components on it).
    /// An edge inside one component closes a cycle at once. Components only grow until <see cref="Compact"/>,
    /// which drops dead nodes and keeps the rest as they were (a component may then be larger than the
    /// cycles left: a cycle it claims is still looked for edge by edge, <see cref="Path"/>, before a report).
    /// Lists are chains of edge ids in arrays (no object per node or edge).
    /// </summary>
    [CompilerGenerated]
    internal sealed class OrderGraph
    {
        /* per node */
        int[] ord = new int[64];          /* per component (its representative): its place in the order */
        int[] parent = new int[64];       /* union-find parent; a representative is its own; -1: a free id */
        int[] outHead = new int[64];      /* the node's edges, chained by nextOut (for Path) */
        int[] acrossHead = new int[64], acrossTail = new int[64];  /* per component: edges out of it (nextAcross) */
        int[] inHead = new int[64], inTail = new int[64];          /* per component: edges into it (nextIn) */
        int[] mark = new int[64];         /* search scratch: current when equal to stamp */
        int[] via = new int[64];          /* Path: the edge that reached a node */
        int[] reached = new int[64];      /* Reorder: the stamp of the forward search that reached a component */
        int nextOrd, stamp;

        /* per edge */
        /// <summary>Per edge id: its ends (node ids; From is -1 for a free id), the sites that held and acquired, and the thread.</summary>
        internal int[] From = new int[64], To = new int[64], Held = new int[64], Acquired = new int[64], Thread = new int[64];
        int[] nextOut = new int[64], nextAcross = new int[64], nextIn = new int[64];
        int edgeTop, freeEdge = -1;       /* free ids chained by nextOut */

        readonly List<int> forward = new List<int>(), backward = new List<int>(), stack = new List<int>();
        long[] keys = new long[64];

        /// <summary>Components searched (visited) by reorders since the graph was made: what edges against the order cost.</summary>
        internal long Searched;

        /// <summary>The place in the order of <paramref name="node"/>'s component.</summary>
        internal int Place(int node)
        {
            return ord[Find(node)];
        }

        /// <summary>Edge ids in use or free: every edge is below it.</summary>
        internal int EdgeTop { get { return edgeTop; } }

        /// <summary>Makes node <paramref name="id"/> (new, or free again) a component of its own, last in the order.</summary>
        [MethodImpl((MethodImplOptions)Jit.Optimized)]
        internal void AddNode(int id)
        {
            if (id >= parent.Length) {
                int n = Math.Max(parent.Length * 2, id + 1);
                Array.Resize(ref ord, n);
                Array.Resize(ref parent, n);
                Array.Resize(ref outHead, n);
                Array.Resize(ref acrossHead, n);
                Array.Resize(ref acrossTail, n);
                Array.Resize(ref inHead, n);
                Array.Resize(ref inTail, n);
                Array.Resize(ref mark, n);
                Array.Resize(ref via, n);
                Array.Resize(ref reached, n);
            }
            parent[id] = id;
            ord[id] = nextOrd++;
            outHead[id] = acrossHead[id] = acrossTail[id] = inHead[id] = inTail[id] = -1;
            mark[id] = 0;
            reached[id] = 0;
        }

        /// <summary>The representative of <paramref name="node"/>'s component.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal int Find(int node)
        {
            while (parent[node] != node) {
                parent[node] = parent[parent[node]];
                node = parent[node];
            }
            return node;
        }

        /// <summary>
        /// Adds the edge <paramref name="from"/> -> <paramref name="to"/> (sites that held and acquired, thread)
        /// and keeps the order; returns its id. <paramref name="cycle"/>: it closes a cycle (the node it
        /// leads to already reaches the node it leaves).
        /// </summary>
        [MethodImpl((MethodImplOptions)Jit.Optimized)]
        internal int AddEdge(int from, int to, int heldSite, int acquiredSite, int thread, out bool cycle)
        {
            int e = freeEdge;
            if (e >= 0) {
                freeEdge = nextOut[e];
            } else {
                e = edgeTop++;
                if (e == From.Length) {
                    int n = From.Length * 2;
                    Array.Resize(ref From, n);
                    Array.Resize(ref To, n);
                    Array.Resize(ref Held, n);
                    Array.Resize(ref Acquired, n);
                    Array.Resize(ref Thread, n);
                    Array.Resize(ref nextOut, n);
                    Array.Resize(ref nextAcross, n);
                    Array.Resize(ref nextIn, n);
                }
            }
            From[e] = from;
            To[e] = to;
            Held[e] = heldSite;
            Acquired[e] = acquiredSite;
            Thread[e] = thread;
            nextOut[e] = outHead[from];
            outHead[from] = e;
            int cu = Find(from), cv = Find(to);
            if (cu == cv) {
                cycle = true;
                return e;
            }
            Append(acrossHead, acrossTail, nextAcross, cu, e);
            Append(inHead, inTail, nextIn, cv, e);
            cycle = ord[cu] > ord[cv] && Reorder(cu, cv);
            return e;
        }

        static void Append(int[] head, int[] tail, int[] next, int c, int e)
        {
            next[e] = -1;
            if (head[c] < 0)
                head[c] = e;
            else
                next[tail[c]] = e;
            tail[c] = e;
        }

        /// <summary>
        /// Pearce-Kelly: the new edge <paramref name="cu"/> -> <paramref name="cv"/> goes against the order.
        /// The components reachable from cv placed up to cu (forward) and those reaching cu placed from cv
        /// on (backward) are given the same places, the backward ones first; the components in both lie on
        /// a cycle with the new edge and become one, placed between. Returns true for a cycle.
        /// </summary>
        [MethodImpl((MethodImplOptions)Jit.Optimized)]
        bool Reorder(int cu, int cv)
        {
            int lb = ord[cv], ub = ord[cu];
            int f = NextStamp();
            Collect(cv, f, lb, ub, true, forward);
            bool cycle = mark[cu] == f;
            int b = NextStamp();
            Collect(cu, b, lb, ub, false, backward);
            Searched += forward.Count + backward.Count;
            /* each side by place (place << 32 | component: a sort of longs), the components both reached
               (on the cycle) left out of the backward side; then the places they had, merged in order */
            int nf = forward.Count, nb = 0;
            if (keys.Length < nf + backward.Count)
                keys = new long[Math.Max(keys.Length * 2, nf + backward.Count)];
            for (int i = 0; i < nf; i++)
                keys[i] = (long)ord[forward[i]] << 32 | (uint)forward[i];
            for (int i = 0; i < backward.Count; i++) {
                int c = backward[i];
                if (reached[c] != f)
                    keys[nf + nb++] = (long)ord[c] << 32 | (uint)c;
            }
            Array.Sort(keys, 0, nf);
            Array.Sort(keys, nf, nb);
            List<int> places = stack;
            places.Clear();
            for (int x = 0, y = nf; x < nf || y < nf + nb; ) {
                if (y == nf + nb || (x < nf && keys[x] < keys[y]))
                    places.Add((int)(keys[x++] >> 32));
                else
                    places.Add((int)(keys[y++] >> 32));
            }
            /* the backward side first, then the joined cycle, then the forward side last */
            for (int i = 0; i < nb; i++)
                ord[(int)keys[nf + i]] = places[i];
            if (cycle) {
                for (int i = 0; i < nf; i++) {
                    int c = (int)keys[i];
                    if (mark[c] == b && c != cu)
                        Join(cu, c);
                }
                ord[cu] = places[nb];
            }
            int last = places.Count - 1;
            for (int i = nf - 1; i >= 0; i--) {
                int c = (int)keys[i];
                if (mark[c] != b)
                    ord[c] = places[last--];
            }
            return cycle;
        }

        /// <summary>
        /// The components reached from <paramref name="start"/> (forward along edges, or backward) whose
        /// places lie in [<paramref name="lb"/>, <paramref name="ub"/>], marked <paramref name="stampValue"/>,
        /// into <paramref name="found"/>. A forward search leaves its stamp in <see cref="reached"/> too, so the
        /// backward one can tell the components both reached. An edge met that a join made internal leaves
        /// its component's chain.
        /// </summary>
        [MethodImpl((MethodImplOptions)Jit.Optimized)]
        void Collect(int start, int stampValue, int lb, int ub, bool isForward, List<int> found)
        {
            int[] head = isForward ? acrossHead : inHead, tail = isForward ? acrossTail : inTail;
            int[] next = isForward ? nextAcross : nextIn, ends = isForward ? To : From;
            found.Clear();
            List<int> todo = stack;
            todo.Clear();
            todo.Add(start);
            mark[start] = stampValue;
            if (isForward)
                reached[start] = stampValue;
            while (todo.Count > 0) {
                int c = todo[todo.Count - 1];
                todo.RemoveAt(todo.Count - 1);
                found.Add(c);
                for (int e = head[c], prev = -1; e >= 0; ) {
                    int y = Find(ends[e]), after = next[e];
                    if (y == c) {
                        if (prev < 0)
                            head[c] = after;
                        else
                            next[prev] = after;
                        if (tail[c] == e)
                            tail[c] = prev;
                        e = after;
                        continue;
                    }
                    if (mark[y] != stampValue && ord[y] >= lb && ord[y] <= ub) {
                        mark[y] = stampValue;
                        if (isForward)
                            reached[y] = stampValue;
                        todo.Add(y);
                    }
                    prev = e;
                    e = after;
                }
            }
        }

        /// <summary>Makes component <paramref name="other"/> part of <paramref name="rep"/>'s (both representatives), its chains appended.</summary>
        void Join(int rep, int other)
        {
            parent[other] = rep;
            Concat(acrossHead, acrossTail, nextAcross, rep, other);
            Concat(inHead, inTail, nextIn, rep, other);
        }

        static void Concat(int[] head, int[] tail, int[] next, int rep, int other)
        {
            if (head[other] < 0)
                return;
            if (head[rep] < 0)
                head[rep] = head[other];
            else
                next[tail[rep]] = head[other];
            tail[rep] = tail[other];
            head[other] = tail[other] = -1;
        }

        int NextStamp()
        {
            if (++stamp == int.MaxValue) {
                Array.Clear(mark, 0, mark.Length);
                Array.Clear(reached, 0, reached.Length);
                stamp = 1;
            }
            return stamp;
        }

        /// <summary>
        /// The edges of a shortest path from <paramref name="start"/> to <paramref name="goal"/> (breadth first,
        /// at most <paramref name="maxEdges"/> edges and <paramref name="maxNodes"/> nodes visited), or null.
        /// </summary>
        internal List<int> Path(int start, int goal, int maxEdges, int maxNodes)
        {
            int s = NextStamp();
            List<int> frontier = new List<int>(), next = new List<int>();
            frontier.Add(start);
            mark[start] = s;
            via[start] = -1;
            int visited = 1;
            for (int step = 0; step < maxEdges && frontier.Count > 0; step++) {
                next.Clear();
                for (int k = 0; k < frontier.Count; k++) {
                    for (int e = outHead[frontier[k]]; e >= 0; e = nextOut[e]) {
                        int to = To[e];
                        if (mark[to] == s)
                            continue;
                        mark[to] = s;
                        via[to] = e;
                        if (to == goal) {
                            List<int> path = new List<int>();
                            for (int n = goal; via[n] >= 0; n = From[via[n]])
                                path.Insert(0, via[n]);
                            return path;
                        }
                        if (++visited > maxNodes)
                            return null;
                        next.Add(to);
                    }
                }
                List<int> t = frontier;
                frontier = next;
                next = t;
            }
            return null;
        }

        /// <summary>
        /// After a sweep: drops the nodes <paramref name="dead"/> says are gone (ids below <paramref name="top"/>)
        /// and their edges, whose ids become free; every live node stays in its component (a dead
        /// representative hands its place to a live member). Returns the number of edges dropped.
        /// </summary>
        internal int Compact(bool[] dead, int top)
        {
            int[] newRep = new int[top];
            int[] oldRep = new int[top];
            for (int n = 0; n < top; n++) {
                newRep[n] = -1;
                oldRep[n] = dead[n] || parent[n] < 0 ? -1 : Find(n);
            }
            int count = 0;
            for (int n = 0; n < top; n++) {
                int r = oldRep[n];
                if (r < 0)
                    continue;
                if (newRep[r] < 0) {
                    newRep[r] = n;
                    ord[n] = ord[r];
                    parent[n] = n;
                    count++;
                } else {
                    parent[n] = newRep[r];
                }
            }
            /* the places, renumbered from 0 in the same order, so they never run out */
            long[] byPlace = new long[count];
            count = 0;
            for (int n = 0; n < top; n++)
                if (newRep[n] >= 0)
                    byPlace[count++] = (long)ord[newRep[n]] << 32 | (uint)newRep[n];
            Array.Sort(byPlace);
            for (int i = 0; i < count; i++)
                ord[(int)byPlace[i]] = i;
            nextOrd = count;
            /* the chains again, of the edges left */
            for (int n = 0; n < top; n++) {
                if (dead[n])
                    parent[n] = -1;
                outHead[n] = acrossHead[n] = acrossTail[n] = inHead[n] = inTail[n] = -1;
            }
            int dropped = 0;
            for (int e = 0; e < edgeTop; e++) {
                int from = From[e], to = To[e];
                if (from < 0)
                    continue;
                if (dead[from] || dead[to]) {
                    From[e] = -1;
                    nextOut[e] = freeEdge;
                    freeEdge = e;
                    dropped++;
                    continue;
                }
                nextOut[e] = outHead[from];
                outHead[from] = e;
                int cu = parent[from], cv = parent[to];
                if (cu != cv) {
                    Append(acrossHead, acrossTail, nextAcross, cu, e);
                    Append(inHead, inTail, nextIn, cv, e);
                }
            }
            return dropped;
        }
    }
}
