// LineWriter.cs - the process's one writer of lines: the line ring (LineRing.cs) drained, formatted and written by a background thread.
using System;
using System.Collections.Generic;
using System.IO;
using System.Runtime.CompilerServices;
using System.Text;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>
    /// All of a slow-lock line but its numbers, for one sink, method, location and holder, acquired or
    /// not: the writer makes it once and keeps it (<see cref="LineWriter"/>'s shapes), so that a line costs
    /// three copies and two numbers (<c>LockTime: M held </c>, hold, <c> ms, waited </c>, wait,
    /// <c> ms at L (held by M2 at L2)</c>), each kept as UTF-8 bytes, not a dozen appends and a look-up of its sink.
    /// </summary>
    [CompilerGenerated]
    internal sealed class LineShape
    {
        internal object Sink, Method, Location, Holder;
        internal bool Acquired;
        /// <summary>The text before the first number, between the two (null when not acquired: one number), after the last and the line end.</summary>
        internal byte[] Head, Middle, Tail;
        /// <summary>Bytes a line of this shape takes at most.</summary>
        internal int Room;
        /// <summary>Where the writer writes these lines.</summary>
        internal LineSink Out;

        /// <summary>True when a line of these sink, method, location and holder (compared by reference) has this shape.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal bool Fits(string sink, string method, string location, object holder, bool acquired)
        {
            return acquired == Acquired && ReferenceEquals(method, Method) && ReferenceEquals(location, Location) &&
                   ReferenceEquals(holder, Holder) && ReferenceEquals(sink, Sink);
        }

        /// <summary>
        /// The shape of a line of <paramref name="method"/> at <paramref name="location"/>: <c>LockTime: M held
        /// X ms, waited Y ms at L</c>, or (not <paramref name="acquired"/>) <c>LockTime: M waited Y ms, not
        /// acquired at L</c>, followed by <c> (held by M2 at L2)</c> when the <paramref name="holder"/>'s name
        /// <c>{ assembly, method, location }</c> is known, or <c> (held by TEXT)</c> for a holder given as text;
        /// then <paramref name="end"/> (the line end, or none).
        /// </summary>
        internal static LineShape Of(string sink, string method, string location, object holder, bool acquired, string end)
        {
            LineShape s = new LineShape();
            s.Sink = sink;
            s.Method = method;
            s.Location = location;
            s.Holder = holder;
            s.Acquired = acquired;
            string held = "";
            string[] name = holder as string[];
            if (name != null && name.Length >= 3)
                held = " (held by " + name[1] + " at " + name[2] + ")";
            else if (holder is string)
                held = " (held by " + (string)holder + ")";
            s.Head = Encoding.UTF8.GetBytes("LockTime: " + method + (acquired ? " held " : " waited "));
            s.Middle = acquired ? Encoding.UTF8.GetBytes(" ms, waited ") : null;
            s.Tail = Encoding.UTF8.GetBytes((acquired ? " ms at " : " ms, not acquired at ") + location + held + end);
            s.Room = s.Head.Length + (acquired ? s.Middle.Length : 0) + s.Tail.Length + 2 * LineText.MsLength;
            return s;
        }

        /// <summary>Appends the line of <paramref name="holdNs"/> and <paramref name="waitNs"/> to <paramref name="t"/>, which has <see cref="Room"/> bytes of room.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal void Format(LineText t, long holdNs, long waitNs)
        {
            t.Append(Head);
            if (Acquired)
                t.Ms(holdNs).Append(Middle);
            t.Ms(waitNs).Append(Tail);
        }
    }

    /// <summary>
    /// Writes the slow-lock lines of every copy of the run-time in the process. Copies queue them through
    /// the registry's delegates, into one bounded ring (<see cref="LineRing"/>): a slow lock as a plain
    /// record (<see cref="Record"/>: the copy's line source, the site, hold, wait and holder - nothing
    /// allocated), a whole line or a copy of an older LockTime's line as an entry (framework data:
    /// <see cref="Enqueue"/>). A thread that holds no timed lock waits for room in a crowded ring
    /// (<see cref="AwaitRoom"/>: the writer gets the CPU to catch up); a full ring drops the line and counts it,
    /// so a thread that holds a lock never waits, and no lock's thread does I/O. One background thread formats them, as bytes, straight into their sink's buffer
    /// (<see cref="LineSink"/>): a file sink stays open (appended to, written 64 KiB at a time and flushed
    /// after each batch), a console's line is one write, so lines are whole and never mixed.
    /// </summary>
    [CompilerGenerated]
    internal sealed class LineWriter
    {
        /// <summary>Lines the queue holds at most.</summary>
        internal const int Capacity = LineRing.Capacity;

        readonly LineRing ring = new LineRing();
        readonly object gate = new object();
        /* what only writing uses, made by the first writing (Open), under the gate: not by the start that every thread's first lock waits for */
        Dictionary<string, LineSink> sinks;
        LineShape[] shapes;
        LineShape last;
        /// <summary>Each open file sink's full path (as opened: a later change of directory moves nothing), by sink.</summary>
        Dictionary<string, string> files;
        /// <summary><see cref="Clock"/> ticks between two looks for a file sink removed or renamed meanwhile, and the next look's time.</summary>
        readonly long lookTicks;
        long nextLook;
        /// <summary>The sinks stderr and stdout (<see cref="Consoles"/>), made at their first line.</summary>
        LineSink stderr, stdout;
        /// <summary>Ring positions written and flushed to their sinks (<see cref="Written"/>): after each batch, and after each line written to a console.</summary>
        long written;

        /// <summary>A writer whose file sinks are looked for once a second (<see cref="Reopen"/>).</summary>
        internal LineWriter() : this(Clock.Frequency())
        {
        }

        /// <summary>A writer whose file sinks are looked for every <paramref name="lookTicks"/> ticks of <see cref="Clock"/> (0: at each batch).</summary>
        internal LineWriter(long lookTicks)
        {
            this.lookTicks = lookTicks;
        }

        /// <summary>
        /// A copy's line source, what its records name (<see cref="Record"/>): <c>{ sink, methods, locations }</c>,
        /// the methods and locations by site id.
        /// </summary>
        internal static object[] Source(string sink, string[] methods, string[] locations)
        {
            object[] s = new object[3];
            s[0] = sink;
            s[1] = methods;
            s[2] = locations;
            return s;
        }

        /// <summary>
        /// An entry of the line of a slow lock, as copies queue it through the registry's entry 1 when it has no
        /// entry 8 (an owner of an older LockTime): the sink, the site's method and location, hold (-1: not acquired) and wait in ns,
        /// and the holder it waited behind - its name <c>{ assembly, method, location }</c> (formatted by the
        /// writer, not by the lock's thread) or the text <c>"M at L"</c> - or null.
        /// </summary>
        internal static object[] Entry(string sink, string method, string location, long holdNs, long waitNs, object holder)
        {
            object[] e = new object[5];
            e[0] = sink;
            e[1] = method;
            e[2] = location;
            long[] times = new long[2];
            times[0] = holdNs;
            times[1] = waitNs;
            e[3] = times;
            e[4] = holder;
            return e;
        }

        /// <summary>A queue entry of a whole line (a potential deadlock): <c>{ sink, line }</c>.</summary>
        internal static object[] TextEntry(string sink, string line)
        {
            object[] e = new object[2];
            e[0] = sink;
            e[1] = line;
            return e;
        }

        /// <summary>
        /// The line of an entry, the format of the slow-lock lines since the first LockTime
        /// (<see cref="LineShape.Of"/>); a whole line as it is.
        /// </summary>
        internal static string Format(object[] entry)
        {
            if (entry.Length == 2)
                return (string)entry[1];
            long[] times = (long[])entry[3];
            LineShape s = LineShape.Of(entry[0] as string, entry[1] as string, entry[2] as string, entry[4], times[0] >= 0, "");
            LineText t = new LineText(s.Room);
            s.Format(t, times[0], times[1]);
            return t.Text();
        }

        /// <summary>Shapes the writer keeps, by the identity hash of the location (a power of two).</summary>
        internal const int Shapes = 64;

        /// <summary>
        /// The kept shape of a line (<see cref="LineShape.Of"/>), made (and its sink opened) when there is none:
        /// the last line's when it fits (a slow site gives runs of lines), else by the location's identity hash.
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        LineShape Shape(string sink, string method, string location, object holder, bool acquired)
        {
            LineShape s = last;
            if (s != null && s.Fits(sink, method, location, holder, acquired))
                return s;
            int slot = RuntimeHelpers.GetHashCode(location) & (Shapes - 1);
            s = shapes[slot];
            if (s == null || !s.Fits(sink, method, location, holder, acquired)) {
                s = LineShape.Of(sink, method, location, holder, acquired, NewLine);
                s.Out = Sink(sink);
                shapes[slot] = s;
            }
            last = s;
            return s;
        }

        /// <summary>Nanoseconds as milliseconds with three decimals, rounded to the nearest microsecond (<see cref="LineText.Ms"/>).</summary>
        internal static string Ms(long ns)
        {
            return new LineText(LineText.MsLength).Ms(ns).Text();
        }

        /// <summary>
        /// Queues the line of a slow lock of <paramref name="site"/> in <paramref name="source"/> (<see cref="Source"/>):
        /// hold (-1: not acquired) and wait in ns, and the holder it waited behind (<see cref="LineRecord.Holder"/>);
        /// dropped and counted when the queue is full (a thread that may wait for room waits before: <see cref="AwaitRoom"/>). The registry's entry 8 (a delegate, which no caller inlines). Allocates nothing, never blocks, never throws.
        /// </summary>
        internal void Record(object source, int site, long holdNs, long waitNs, object holder)
        {
            ring.Add(source, site, holdNs, waitNs, holder);
        }

        /// <summary>Milliseconds a thread waits for room in the queue while the writer takes no line: then the writer is taken for stalled.</summary>
        internal const int RoomStallMs = 100;
        /// <summary>The ring position the writer had taken when a wait for room gave up (-1: none did): until the writer takes more, no thread waits.</summary>
        long stalledAt = -1;
        /// <summary>
        /// Every copy's "the calling thread holds one of its timed locks" (<see cref="Collector.Holding"/>), the registry's
        /// entry 14: a thread that holds another copy's lock does not wait for room either. Read through <see cref="Registry.Items"/>.
        /// </summary>
        internal readonly List<Func<bool>> Holding = new List<Func<bool>>();
        Delegate[] holdingItems;

        /// <summary>
        /// Waits, sleeping a millisecond at a time, until the queue has room again (<see cref="LineRing.Crowded"/>), for a
        /// thread that holds no timed lock and is about to queue a line: a program whose threads queue lines faster than
        /// the writer thread is given the CPU to write them (64 threads on 2 cores) waits for it instead of losing them.
        /// Gives up when the writer took no line for <see cref="RoomStallMs"/> (its sink blocks: a pipe nobody reads), and
        /// then no thread waits until it takes one. Returns at once when there is room, and when the thread holds a timed
        /// lock of any copy (<see cref="Holding"/>: its hold would be longer by the wait; the caller has seen that it holds
        /// none of its own). The registry's entry 13. Never throws.
        /// </summary>
        internal void AwaitRoom()
        {
            if (ring.Crowded())
                AwaitRoomSlowly();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        void AwaitRoomSlowly()
        {
            try {
                long taken = ring.Taken();
                if (taken == Volatile.Read(ref stalledAt) || HoldsAnyLock())
                    return;
                if (!Await(true, 0, RoomStallMs, int.MaxValue))
                    Volatile.Write(ref stalledAt, ring.Taken());
            } catch (Exception) {
            }
        }

        /// <summary>True when a copy in <see cref="Holding"/> says that the calling thread holds one of its timed locks.</summary>
        bool HoldsAnyLock()
        {
            Delegate[] all = Registry.Items(Holding, ref holdingItems);
            for (int i = 0; i < all.Length; i++)
                if (((Func<bool>)all[i])())
                    return true;
            return false;
        }

        /// <summary>Queues an entry (<see cref="Entry"/>, <see cref="TextEntry"/>), or drops and counts it when the queue is full: the registry's entry 1. Never blocks, never throws.</summary>
        internal void Enqueue(object[] entry)
        {
            ring.Add(entry, -1, 0, 0, null);
        }

        /// <summary>Lines dropped because the queue was full.</summary>
        internal long Dropped()
        {
            return ring.Dropped();
        }

        /// <summary>Lines queued so far (a ring position: the line queued next comes after them).</summary>
        internal long Queued()
        {
            return ring.Claimed();
        }

        /// <summary>The ring position up to which lines were written to their sinks and flushed.</summary>
        internal long Written()
        {
            return Volatile.Read(ref written);
        }

        /// <summary>Lines queued and not (yet) written to their sinks: at the exit, after <see cref="AwaitWritten"/> gave up, the lines lost.</summary>
        internal long Unwritten()
        {
            return Math.Max(0, ring.Claimed() - Written());
        }

        /// <summary>
        /// Waits, polling every millisecond, until the writer thread has written the lines queued before
        /// position <paramref name="end"/> (<see cref="Queued"/>). Gives up when it took no line for
        /// <paramref name="stallMs"/> (its sink does not take what it writes: a pipe nobody reads, a FIFO
        /// nobody opened) or after <paramref name="maxMs"/> in all. True when they were written.
        /// </summary>
        internal bool AwaitWritten(long end, int stallMs, int maxMs)
        {
            return Await(false, end, stallMs, maxMs);
        }

        /// <summary>
        /// Sleeps a millisecond at a time until the queue has room (<paramref name="room"/>: <see cref="LineRing.Crowded"/>
        /// no more), else until the lines queued before position <paramref name="end"/> are written. True then; false
        /// when the writer took no line for <paramref name="stallMs"/> or <paramref name="maxMs"/> passed in all.
        /// </summary>
        bool Await(bool room, long end, int stallMs, int maxMs)
        {
            long frequency = Clock.Frequency(), start = Clock.Ticks(), moved = start;
            long taken = ring.Taken();
            while (room ? ring.Crowded() : Written() < end) {
                long now = Clock.Ticks(), t = ring.Taken();
                if (t != taken) {
                    taken = t;
                    moved = now;
                }
                if ((now - moved) * 1000 >= stallMs * frequency || (now - start) * 1000 >= maxMs * frequency)
                    return false;
                Thread.Sleep(1);
            }
            return true;
        }

        /// <summary>Writes every queued entry, batch after batch, and flushes; false when there was none.</summary>
        internal bool Drain()
        {
            bool any = false;
            lock (gate)
                while (DrainHeld())
                    any = true;
            return any;
        }

        /// <summary>
        /// One batch of <see cref="Drain"/> unless another thread holds the gate now (a <see cref="Drain"/>): then
        /// nothing, false. The writer thread's: it never waits for a lock, as a thread blocked in
        /// <c>Monitor.Enter</c> while <c>Environment.Exit</c> shuts the process down hangs Mono (about 1 exit
        /// in 15 on a loaded machine, in its native shutdown, both threads waiting).
        /// </summary>
        internal bool TryDrain()
        {
            if (!Monitor.TryEnter(gate))
                return false;
            try {
                return DrainHeld();
            } finally {
                Monitor.Exit(gate);
            }
        }

        bool DrainHeld()
        {
            if (!ring.Pending())
                return false;
            Open();
            if (files.Count > 0 && Clock.Ticks() >= nextLook)
                Reopen();
            bool any = WriteReady();
            if (any)
                Flush();
            Volatile.Write(ref written, ring.Taken());
            return any;
        }

        /// <summary>Lines a batch writes at most before its flush: what <see cref="Written"/> says follows a flood.</summary>
        const int BatchLines = 4096;

        /// <summary>
        /// Writes the lines the ring has ready (<see cref="LineRing.Next"/>), each read in its slot, at most <see cref="BatchLines"/>; false when there was none.
        /// A process without slow locks and without a summary never compiles it, nor the per-line methods it calls.
        /// </summary>
        bool WriteReady()
        {
            int n = 0, i;
            LineRecord[] c;
            for (; n < BatchLines && (c = ring.Next(out i)) != null; n++) {
                bool console = Write(ref c[i]);
                ring.Free(c, i);
                if (console)
                    Volatile.Write(ref written, ring.Taken()); /* a console's line is written now */
            }
            return n > 0;
        }

        /// <summary>
        /// Writes the line of <paramref name="r"/> to its sink: a record's site named by its source
        /// (<see cref="Source"/>), an entry's (<see cref="Entry"/>) line, a whole line (<see cref="TextEntry"/>);
        /// true when it went to a console, which has it now (a file's waits in its buffer). Never throws. A method of its own, so that the loop around it is small: the JIT compiles that
        /// loop again, optimized, while it runs (on-stack replacement), and a short loop costs it little.
        /// </summary>
        bool Write(ref LineRecord r)
        {
            LineSink sink = null;
            try {
                object[] e = r.Source as object[];
                long[] times = r.Site < 0 && e.Length > 4 ? e[3] as long[] : null;
                LineShape shape = null;
                if (r.Site >= 0)
                    shape = Shape(e[0] as string, ((string[])e[1])[r.Site], ((string[])e[2])[r.Site], r.Holder, r.HoldNs >= 0);
                else if (times != null && times.Length >= 2)
                    shape = Shape(e[0] as string, e[1] as string, e[2] as string, e[4], times[0] >= 0);
                if (shape != null) {
                    sink = shape.Out;
                    shape.Format(sink.Line(shape.Room), times == null ? r.HoldNs : times[0], times == null ? r.WaitNs : times[1]);
                } else {
                    string whole = e.Length > 1 ? e[1] as string : null;
                    sink = Sink(e.Length > 0 ? e[0] as string : null);
                    sink.Line(LineText.Room(whole) + NewLineBytes.Length).Append(whole).Append(NewLineBytes);
                }
                sink.End();
                return sink.Console;
            } catch (Exception ex) {
                Failed(sink, ex);
                return false;
            }
        }

        /// <summary>
        /// Queues <paramref name="lines"/> (the summary) for <paramref name="sink"/>, after every line queued
        /// before; returns the position after them, for <see cref="AwaitWritten"/>. Never blocks.
        /// </summary>
        internal long Queue(string sink, string[] lines)
        {
            for (int i = 0; i < lines.Length; i++)
                Enqueue(TextEntry(sink, lines[i]));
            return ring.Claimed();
        }

        /// <summary>The line end of the platform, as <c>WriteLine</c> writes it.</summary>
        static readonly string NewLine = Environment.NewLine;
        static readonly byte[] NewLineBytes = Encoding.UTF8.GetBytes(NewLine);

        /// <summary>Makes the sinks, the line text and the kept shapes at the first writing (the caller holds the gate).</summary>
        void Open()
        {
            if (sinks != null)
                return;
            shapes = new LineShape[Shapes];
            files = new Dictionary<string, string>();
            sinks = new Dictionary<string, LineSink>();
        }

        void Flush()
        {
            LineSink failed = null;
            Exception error = null;
            foreach (KeyValuePair<string, LineSink> s in sinks) {
                try {
                    s.Value.Flush();
                } catch (Exception ex) {
                    failed = s.Value;
                    error = ex;
                }
            }
            if (failed != null && Failed(failed, error))
                Flush(); /* the lines moved to stderr, and any other sink that failed */
        }

        /// <summary>
        /// A file sink whose write or flush failed with <paramref name="error"/> (a full disk, an I/O error):
        /// one warning naming it, then its lines go to stderr, as when it cannot be opened (<see cref="Sink"/>);
        /// the lines it held in its buffer are lost. True when a sink was moved; false for the consoles or a
        /// null <paramref name="w"/> (nothing to move to).
        /// </summary>
        bool Failed(LineSink w, Exception error)
        {
            if (w == null || ReferenceEquals(w, stderr) || ReferenceEquals(w, stdout))
                return false;
            List<string> names = new List<string>();
            foreach (KeyValuePair<string, LineSink> s in sinks)
                if (ReferenceEquals(s.Value, w))
                    names.Add(s.Key);
            for (int i = 0; i < names.Count; i++) {
                sinks[names[i]] = Stderr();
                files.Remove(names[i]);
                Warn(Settings.OutputSetting(names[i]) + " cannot be written (" + error.GetType().Name + ": " + error.Message + "); using stderr");
            }
            ForgetShapes();
            w.Close();
            return names.Count > 0;
        }

        /// <summary>
        /// The file sinks whose path names no file any more - removed, or renamed by a log rotation - are
        /// closed (their buffered lines go to the file they were opened on), so that the next line opens
        /// the path again, a new file. Looked for before a batch, at most every <see cref="lookTicks"/>.
        /// </summary>
        void Reopen()
        {
            nextLook = Clock.Ticks() + lookTicks;
            List<string> gone = null;
            foreach (KeyValuePair<string, string> f in files) {
                try {
                    if (!File.Exists(f.Value))
                        (gone ?? (gone = new List<string>())).Add(f.Key);
                } catch (Exception) {
                }
            }
            if (gone == null)
                return;
            for (int i = 0; i < gone.Count; i++) {
                LineSink w;
                if (sinks.TryGetValue(gone[i], out w))
                    w.Close();
                sinks.Remove(gone[i]);
                files.Remove(gone[i]);
            }
            ForgetShapes();
        }

        /// <summary>Drops the kept shapes: they keep their sink's writer, which was just closed or moved.</summary>
        void ForgetShapes()
        {
            Array.Clear(shapes, 0, shapes.Length);
            last = null;
        }

        /// <summary>The sink stderr, made at its first use (<see cref="Consoles"/>).</summary>
        LineSink Stderr()
        {
            return stderr ?? (stderr = Consoles.Open(true));
        }

        /// <summary>Writes the line <c>LockTime: warning: </c><paramref name="text"/> to stderr now; never throws.</summary>
        void Warn(string text)
        {
            try {
                LineSink e = Stderr();
                string line = "LockTime: warning: " + text;
                e.Line(LineText.Room(line) + NewLineBytes.Length).Append(line).Append(NewLineBytes);
                e.End();
            } catch (Exception) {
            }
        }

        /// <summary>The sink of a name (null: stderr); a file that cannot be opened warns once and writes to stderr instead.</summary>
        LineSink Sink(string sink)
        {
            LineSink w;
            if (sink == null)
                sink = "stderr";
            if (sinks.TryGetValue(sink, out w))
                return w;
            if (sink == "stderr") {
                w = Stderr();
            } else if (sink == "stdout") {
                w = stdout ?? (stdout = Consoles.Open(false));
            } else {
                try {
                    /* no buffer of the stream's own: the sink's 64 KiB go to the file in one write */
                    FileStream fs = new FileStream(sink, FileMode.Append, FileAccess.Write, FileShare.ReadWrite | FileShare.Delete, 1);
                    w = new LineSink(fs, false);
                    files[sink] = fs.Name;
                } catch (Exception ex) {
                    w = Stderr();
                    Warn(Settings.OutputSetting(sink) + " cannot be opened (" + ex.GetType().Name + ": " + ex.Message + "); using stderr");
                }
            }
            sinks[sink] = w;
            return w;
        }
    }
}
