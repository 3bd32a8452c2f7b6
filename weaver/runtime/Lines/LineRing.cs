// LineRing.cs - the process's one queue of lines: a bounded ring of plain records, filled by every lock's thread.
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>
    /// One queued line: what the lock's thread knows (a slow lock's site, hold and wait) or an entry given
    /// through the registry (<see cref="LineWriter.Entry"/>, <see cref="LineWriter.TextEntry"/>), which the
    /// writer formats later. <see cref="State"/> says whose the slot is (<see cref="LineRing"/>).
    /// </summary>
    [CompilerGenerated]
    internal struct LineRecord
    {
        /// <summary>2 x lap: free for the thread that claims the slot in that lap; 2 x lap + 1: written, the writer's to take.</summary>
        internal long State;
        /// <summary><see cref="Site"/> 0 or more: the copy's line source <c>object[] { string sink, string[] methods, string[] locations }</c>; else an entry (an <c>object[]</c>).</summary>
        internal object Source;
        /// <summary>The holder the lock waited behind: its name <c>string[] { assembly, method, location }</c>, the text <c>"M at L"</c>, or null.</summary>
        internal object Holder;
        /// <summary>Hold (-1: not acquired) and wait, in nanoseconds.</summary>
        internal long HoldNs, WaitNs;
        /// <summary>The site's id in its source; -1 for an entry.</summary>
        internal int Site;
    }

    /// <summary>
    /// The bounded queue of lines between every lock's thread and the one writer: <see cref="Capacity"/>
    /// slots of plain records, so that queueing a line allocates nothing. Any number of threads add (a
    /// position claimed by one compare-and-swap on <see cref="tail"/>, then the slot written and handed
    /// over by its <see cref="LineRecord.State"/>); one thread at a time takes (the writer, under its
    /// gate: <see cref="Next"/>, <see cref="Free"/>), in the order the positions were claimed, up to a
    /// slot still being written. A full ring drops the line and counts it: an adding thread never waits. The slots come in
    /// <see cref="Chunks"/> arrays of <see cref="ChunkSize"/>, each made when the first lap reaches it:
    /// a program with few slow locks keeps one (48 KB), and none is large enough for the large object
    /// heap (3 MB at once there cost the first line a garbage collection).
    /// </summary>
    [CompilerGenerated]
    internal sealed class LineRing
    {
        /// <summary>Slots, a power of two: lines queued at most.</summary>
        internal const int Capacity = 1 << Shift;
        const int Shift = 18, ChunkShift = 10;
        /// <summary>Slot arrays, and slots in each.</summary>
        internal const int Chunks = 1 << (Shift - ChunkShift), ChunkSize = 1 << ChunkShift;

        /// <summary>The slot arrays by position / <see cref="ChunkSize"/> mod <see cref="Chunks"/>; null until the first lap reaches one.</summary>
        readonly LineRecord[][] chunks = new LineRecord[Chunks][];
        /// <summary>The next position a thread claims; position p is slot p mod <see cref="Capacity"/> in lap p / <see cref="Capacity"/>.</summary>
        long tail;
        /// <summary>The next position the writer takes (the taking thread's only).</summary>
        long head;
        long dropped;

        /// <summary>
        /// Queues a line: <paramref name="source"/> and <paramref name="site"/> (-1: <paramref name="source"/>
        /// is an entry), hold (-1: not acquired) and wait in ns, the holder (<see cref="LineRecord.Holder"/>).
        /// False when the ring was full: the line is dropped and counted. Never blocks but while another
        /// thread makes a chunk, never throws. Every line of every thread comes here.
        /// </summary>
        internal bool Add(object source, int site, long holdNs, long waitNs, object holder)
        {
            try {
                long pos = Volatile.Read(ref tail);
                LineRecord[] c;
                while (true) {
                    c = chunks[(int)(pos >> ChunkShift) & (Chunks - 1)] ?? Chunk(pos);
                    long free = (pos >> Shift) << 1, state = Volatile.Read(ref c[(int)pos & (ChunkSize - 1)].State);
                    if (state == free) {
                        long seen = Interlocked.CompareExchange(ref tail, pos + 1, pos);
                        if (seen == pos)
                            break;
                        pos = seen;
                    } else if (state < free) {
                        /* the slot still holds the line of the lap before: full */
                        Interlocked.Increment(ref dropped);
                        return false;
                    } else {
                        pos = Volatile.Read(ref tail); /* another thread claimed it: on to the next */
                    }
                }
                ref LineRecord slot = ref c[(int)pos & (ChunkSize - 1)];
                slot.Source = source;
                slot.Holder = holder;
                slot.HoldNs = holdNs;
                slot.WaitNs = waitNs;
                slot.Site = site;
                Volatile.Write(ref slot.State, ((pos >> Shift) << 1) + 1);
                return true;
            } catch (Exception) {
                return false;
            }
        }

        /// <summary>The chunk of position <paramref name="pos"/>, made by the first thread to reach it (others wait for it, once per chunk).</summary>
        LineRecord[] Chunk(long pos)
        {
            int k = (int)(pos >> ChunkShift) & (Chunks - 1);
            lock (chunks) {
                if (chunks[k] == null)
                    Volatile.Write(ref chunks[k], new LineRecord[ChunkSize]);
                return chunks[k];
            }
        }

        /// <summary>Yields <see cref="Next"/> makes at most for a line claimed but not yet written.</summary>
        const int Patience = 100;

        /// <summary>
        /// The slot of the next line: its chunk, and its index there in <paramref name="index"/>; null when there
        /// is none. The caller reads the line in place (no copy of the record) and then frees the slot
        /// (<see cref="Free"/>) before it asks for the next. A line claimed but not yet written - its thread
        /// preempted between the claim and the write, for as long as the scheduler runs the others: tens of
        /// milliseconds with 64 threads on 2 cores - is waited for, the CPU given up meanwhile (up to
        /// <see cref="Patience"/> times; then null, it comes at the next call): the lines behind it wait for it,
        /// and the ring would fill. One thread at a time.
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal LineRecord[] Next(out int index)
        {
            LineRecord[] c = Volatile.Read(ref chunks[(int)(head >> ChunkShift) & (Chunks - 1)]);
            int i = (int)head & (ChunkSize - 1);
            long written = ((head >> Shift) << 1) + 1;
            for (int yields = 0; c == null || Volatile.Read(ref c[i].State) != written; yields++) {
                if (yields == Patience || Volatile.Read(ref tail) <= head) {
                    index = 0;
                    return null;
                }
                Thread.Yield();
                c = Volatile.Read(ref chunks[(int)(head >> ChunkShift) & (Chunks - 1)]);
            }
            index = i;
            return c;
        }

        /// <summary>Frees the slot <see cref="Next"/> gave (<paramref name="c"/>, <paramref name="index"/>): the line is taken.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal void Free(LineRecord[] c, int index)
        {
            c[index].Source = null; /* nothing kept alive by a taken slot */
            c[index].Holder = null;
            Volatile.Write(ref c[index].State, ((head >> Shift) << 1) + 2);
            Volatile.Write(ref head, head + 1);
        }

        /// <summary>Slots kept for the threads that may not wait for room (<see cref="Crowded"/>): more than there are threads adding at once.</summary>
        internal const int Reserve = 4096;

        /// <summary>True when fewer than <see cref="Reserve"/> slots are free: a thread that may wait waits for room (<see cref="LineWriter.AwaitRoom"/>).</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal bool Crowded()
        {
            return Volatile.Read(ref tail) - Volatile.Read(ref head) > Capacity - Reserve;
        }

        /// <summary>True when a line was queued and not yet taken (it may still be being written: <see cref="Next"/> waits for it).</summary>
        internal bool Pending()
        {
            return Volatile.Read(ref tail) != head;
        }

        /// <summary>Positions claimed so far: every line queued (taken or not), dropped ones not counted.</summary>
        internal long Claimed()
        {
            return Volatile.Read(ref tail);
        }

        /// <summary>Positions taken so far by the writer (any thread may read it).</summary>
        internal long Taken()
        {
            return Volatile.Read(ref head);
        }

        /// <summary>Lines dropped because the ring was full.</summary>
        internal long Dropped()
        {
            return Interlocked.Read(ref dropped);
        }
    }
}
