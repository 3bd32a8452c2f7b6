// OrderTables.cs - the lock order's tables read without a lock: lock objects to nodes, known edges.
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>One slot of <see cref="OrderTables.Nodes"/>: a lock object (weakly), its identity hash and its node id, together in memory.</summary>
    [CompilerGenerated]
    internal struct NodeSlot
    {
        internal WeakReference Ref;   /* null: a free slot; written last */
        internal int Hash;
        internal int Id;
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
        internal NodeSlot[] Nodes;
        internal long[] Edges;

        internal OrderTables(int nodeSlots, int edgeSlots)
        {
            Nodes = new NodeSlot[nodeSlots];
            Edges = new long[edgeSlots];
        }

        /// <summary>The node of <paramref name="o"/> (whose identity hash is <paramref name="hash"/>), or -1.</summary>
        [MethodImpl((MethodImplOptions)Jit.Optimized)]
        internal int Node(object o, int hash)
        {
            NodeSlot[] nodes = Nodes;
            int mask = nodes.Length - 1;
            for (int i = hash & mask; ; i = (i + 1) & mask) {
                WeakReference w = Volatile.Read(ref nodes[i].Ref);
                if (w == null)
                    return -1;
                if (nodes[i].Hash == hash && ReferenceEquals(w.Target, o))
                    return nodes[i].Id;
            }
        }

        /// <summary>True when the edge <paramref name="key"/> is known.</summary>
        [MethodImpl((MethodImplOptions)Jit.Optimized)]
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
}
