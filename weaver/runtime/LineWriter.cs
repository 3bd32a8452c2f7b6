// LineWriter.cs - the process's one writer of lines: a bounded queue drained by a background thread.
using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.IO;
using System.Runtime.CompilerServices;
using System.Text;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>
    /// A line built in a reusable array of characters: the writer formats every line into one, with the
    /// numbers as digits, and writes it whole in one call - no string per line, none per number. Room is
    /// made once per line (<see cref="Start"/>): the appends do not check it, so that a line costs few
    /// calls also before the JIT optimizes them (a short program's writer runs its first code).
    /// </summary>
    [CompilerGenerated]
    internal sealed class LineText
    {
        /// <summary>Characters <see cref="Ms"/> appends at most: a sign, 16 digits, the point, 3 decimals.</summary>
        internal const int MsLength = 21;

        internal char[] Chars = new char[256];
        internal int Length;

        /// <summary>Empties the text and makes room for <paramref name="room"/> characters, which the appends may use.</summary>
        internal LineText Start(int room)
        {
            Length = 0;
            if (room > Chars.Length)
                Chars = new char[Math.Max(room, Chars.Length * 2)];
            return this;
        }

        /// <summary>Appends <paramref name="s"/> (null: nothing) into the room made.</summary>
        internal LineText Append(string s)
        {
            if (s != null) {
                s.CopyTo(0, Chars, Length, s.Length);
                Length += s.Length;
            }
            return this;
        }

        /// <summary>Appends <paramref name="c"/> (null: nothing) into the room made.</summary>
        internal LineText Append(char[] c)
        {
            if (c != null) {
                Array.Copy(c, 0, Chars, Length, c.Length);
                Length += c.Length;
            }
            return this;
        }

        /// <summary>"000" to "999", three characters each: the digits of a number three at a time.</summary>
        static readonly char[] Triples = MakeTriples();

        /// <summary>Powers of ten, 10^0 to 10^18: a number's count of digits by comparisons.</summary>
        static readonly long[] Tens = MakeTens();

        static char[] MakeTriples()
        {
            char[] t = new char[3000];
            for (int i = 0; i < 1000; i++) {
                t[3 * i] = (char)('0' + i / 100);
                t[3 * i + 1] = (char)('0' + i / 10 % 10);
                t[3 * i + 2] = (char)('0' + i % 10);
            }
            return t;
        }

        static long[] MakeTens()
        {
            long[] t = new long[19];
            t[0] = 1;
            for (int i = 1; i < t.Length; i++)
                t[i] = t[i - 1] * 10;
            return t;
        }

        /// <summary>
        /// Appends <paramref name="ns"/> nanoseconds as milliseconds with three decimals (<c>12.345</c>),
        /// rounded to the nearest microsecond, in integer arithmetic (<see cref="MsLength"/> characters at
        /// most): two divisions, and one more per three digits past the first three (the writer runs this
        /// twice a line, often before the JIT optimizes it, which then leaves each division a division).
        /// </summary>
        internal LineText Ms(long ns)
        {
            char[] c = Chars;
            if (ns < 0) {
                c[Length++] = '-';
                ns = ns == long.MinValue ? long.MaxValue : -ns;
            }
            long us = ns / 1000;
            if (ns - us * 1000 >= 500)
                us++;
            long ms = us / 1000;
            int frac = (int)(us - ms * 1000), digits = 1;
            while (digits < Tens.Length && ms >= Tens[digits])
                digits++;
            int end = Length + digits, i = end;
            for (; ms >= 1000; i -= 3) {
                long rest = ms / 1000;
                Array.Copy(Triples, 3 * (int)(ms - rest * 1000), c, i - 3, 3);
                ms = rest;
            }
            Array.Copy(Triples, 3 * (int)ms + 3 - (i - Length), c, Length, i - Length);
            c[end] = '.';
            Array.Copy(Triples, 3 * frac, c, end + 1, 3);
            Length = end + 4;
            return this;
        }

        /// <summary>The characters as a string.</summary>
        internal string Text()
        {
            return new string(Chars, 0, Length);
        }
    }

    /// <summary>
    /// All of a slow-lock line but its numbers, for one sink, method, location and holder, acquired or
    /// not: the writer makes it once and keeps it (<see cref="LineWriter"/>'s shapes), so that a line costs
    /// three copies and two numbers (<c>LockTime: M held </c>, hold, <c> ms, waited </c>, wait,
    /// <c> ms at L (held by M2 at L2)</c>), not a dozen appends and a look-up of its sink.
    /// </summary>
    [CompilerGenerated]
    internal sealed class LineShape
    {
        internal object Sink, Method, Location, Holder;
        internal bool Acquired;
        /// <summary>The text before the first number, between the two (null when not acquired: one number), after the last.</summary>
        internal char[] Head, Middle, Tail;
        /// <summary>Where the writer writes these lines.</summary>
        internal TextWriter Writer;

        /// <summary>True when <paramref name="entry"/> (<see cref="LineWriter.Entry"/>) has this shape: the same objects (references).</summary>
        internal bool Fits(object[] entry, bool acquired)
        {
            return acquired == Acquired && ReferenceEquals(entry[1], Method) && ReferenceEquals(entry[2], Location) &&
                   ReferenceEquals(entry[4], Holder) && ReferenceEquals(entry[0], Sink);
        }

        /// <summary>
        /// The shape of <paramref name="entry"/>: <c>LockTime: M held X ms, waited Y ms at L</c>, or (not
        /// <paramref name="acquired"/>) <c>LockTime: M waited Y ms, not acquired at L</c>, followed by
        /// <c> (held by M2 at L2)</c> when the holder's name <c>{ assembly, method, location }</c> is known, or
        /// <c> (held by TEXT)</c> for a holder given as text.
        /// </summary>
        internal static LineShape Of(object[] entry, bool acquired)
        {
            LineShape s = new LineShape();
            s.Sink = entry[0];
            s.Method = entry[1];
            s.Location = entry[2];
            s.Holder = entry[4];
            s.Acquired = acquired;
            string method = entry[1] as string, location = entry[2] as string, held = "";
            string[] name = entry[4] as string[];
            if (name != null && name.Length >= 3)
                held = " (held by " + name[1] + " at " + name[2] + ")";
            else if (entry[4] is string)
                held = " (held by " + (string)entry[4] + ")";
            s.Head = ("LockTime: " + method + (acquired ? " held " : " waited ")).ToCharArray();
            s.Middle = acquired ? " ms, waited ".ToCharArray() : null;
            s.Tail = ((acquired ? " ms at " : " ms, not acquired at ") + location + held).ToCharArray();
            return s;
        }

        /// <summary>The line of <paramref name="times"/> (hold, wait in ns; <see cref="LineWriter.Entry"/>) into <paramref name="t"/>, emptied first, with room for <paramref name="more"/> characters after it.</summary>
        internal void Format(LineText t, long[] times, int more)
        {
            t.Start(Head.Length + (Middle == null ? 0 : Middle.Length) + Tail.Length + 2 * LineText.MsLength + more).Append(Head);
            if (Acquired)
                t.Ms(times[0]).Append(Middle);
            t.Ms(times[1]).Append(Tail);
        }
    }

    /// <summary>
    /// Writes the slow-lock lines of every copy of the run-time in the process. Copies queue entries
    /// (framework data: <see cref="Entry"/>) through the registry's delegate; the queue is bounded and
    /// a full queue drops the entry and counts it, so a lock's thread never blocks and never does I/O.
    /// One background thread formats and writes them; each line is one write on its sink, a file
    /// sink stays open (appended to, buffered, flushed after each batch), so lines are whole and never mixed.
    /// </summary>
    [CompilerGenerated]
    internal sealed class LineWriter
    {
        /// <summary>Entries the queue holds at most.</summary>
        internal const int Capacity = 65536;

        readonly ConcurrentQueue<object[]> queue = new ConcurrentQueue<object[]>();
        int queued;
        long dropped;
        readonly object gate = new object();
        readonly Dictionary<string, TextWriter> sinks = new Dictionary<string, TextWriter>();
        readonly LineText line = new LineText();
        readonly LineShape[] shapes = new LineShape[Shapes];
        LineShape last;
        /// <summary>Each open file sink's full path (as opened: a later change of directory moves nothing), by sink.</summary>
        readonly Dictionary<string, string> files = new Dictionary<string, string>();
        /// <summary><see cref="Clock"/> ticks between two looks for a file sink removed or renamed meanwhile, and the next look's time.</summary>
        readonly long lookTicks;
        long nextLook;

        /// <summary>A writer whose file sinks are looked for once a second (<see cref="Reopen"/>).</summary>
        internal LineWriter() : this(Clock.Frequency())
        {
        }

        /// <summary>A writer whose file sinks are looked for every <paramref name="lookTicks"/> ticks of <see cref="Clock"/> (0: at each batch).</summary>
        internal LineWriter(long lookTicks)
        {
            this.lookTicks = lookTicks;
        }

        /// <summary>Characters a file sink buffers (and bytes its stream buffers) between writes: a write per 64 KiB, not per 4 KiB.</summary>
        internal const int FileBuffer = 65536;

        /// <summary>
        /// A queue entry: the sink, the site's method and location, hold (-1: not acquired) and wait in ns,
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
            LineText t = new LineText();
            if (entry.Length == 2)
                return (string)entry[1];
            long[] times = (long[])entry[3];
            LineShape.Of(entry, times[0] >= 0).Format(t, times, 0);
            return t.Text();
        }

        /// <summary>Shapes the writer keeps, by the identity hash of the location (a power of two).</summary>
        internal const int Shapes = 64;

        /// <summary>
        /// The kept shape of <paramref name="entry"/>, made (and its sink opened) when there is none: the
        /// last line's when it fits (a slow site gives runs of lines), else by the location's identity hash.
        /// </summary>
        LineShape Shape(object[] entry, bool acquired)
        {
            LineShape s = last;
            if (s != null && s.Fits(entry, acquired))
                return s;
            int slot = RuntimeHelpers.GetHashCode(entry[2]) & (Shapes - 1);
            s = shapes[slot];
            if (s == null || !s.Fits(entry, acquired)) {
                s = LineShape.Of(entry, acquired);
                s.Writer = Sink(entry[0] as string);
                shapes[slot] = s;
            }
            last = s;
            return s;
        }

        /// <summary>Nanoseconds as milliseconds with three decimals, rounded to the nearest microsecond (<see cref="LineText.Ms"/>).</summary>
        internal static string Ms(long ns)
        {
            return new LineText().Start(LineText.MsLength).Ms(ns).Text();
        }

        /// <summary>Queues an entry, or drops and counts it when the queue is full. Never blocks, never throws.</summary>
        internal void Enqueue(object[] entry)
        {
            try {
                if (Volatile.Read(ref queued) >= Capacity) {
                    Interlocked.Increment(ref dropped);
                    return;
                }
                Interlocked.Increment(ref queued);
                queue.Enqueue(entry);
            } catch (Exception) {
            }
        }

        /// <summary>Entries dropped because the queue was full.</summary>
        internal long Dropped()
        {
            return Interlocked.Read(ref dropped);
        }

        /// <summary>Entries the writer takes before it gives their room in the queue back (one Interlocked per batch, not per entry).</summary>
        const int Batch = 256;

        /// <summary>Writes every queued entry and flushes; false when there was none.</summary>
        internal bool Drain()
        {
            lock (gate)
                return DrainHeld();
        }

        /// <summary>
        /// As <see cref="Drain"/> unless another thread writes now (the exit, <see cref="WriteNow"/>): then
        /// nothing, false. The writer thread's: it never waits for the exit's lock, as a thread blocked in
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
            int taken = 0;
            bool any = false;
            object[] e;
            if (files.Count > 0 && !queue.IsEmpty && Clock.Ticks() >= nextLook)
                Reopen();
            while (queue.TryDequeue(out e)) {
                any = true;
                if (++taken == Batch) {
                    Interlocked.Add(ref queued, -taken);
                    taken = 0;
                }
                Write(e);
            }
            Interlocked.Add(ref queued, -taken);
            if (any)
                Flush();
            return any;
        }

        /// <summary>
        /// Writes the line of <paramref name="e"/> (<see cref="Entry"/>, <see cref="TextEntry"/>) to its sink;
        /// never throws. A method of its own, so that the loop around it is small: the JIT compiles that
        /// loop again, optimized, while it runs (on-stack replacement), and a short loop costs it little.
        /// </summary>
        void Write(object[] e)
        {
            TextWriter w = null;
            try {
                long[] times = e.Length > 4 ? e[3] as long[] : null;
                if (times != null && times.Length >= 2) {
                    LineShape shape = Shape(e, times[0] >= 0);
                    shape.Format(line, times, NewLine.Length);
                    w = shape.Writer;
                } else {
                    string whole = e.Length > 1 ? e[1] as string : null;
                    line.Start((whole == null ? 0 : whole.Length) + NewLine.Length).Append(whole);
                    w = Sink(e.Length > 0 ? e[0] as string : null);
                }
                w.Write(line.Append(NewLine).Chars, 0, line.Length);
            } catch (Exception ex) {
                Failed(w, ex);
            }
        }

        /// <summary>Writes <paramref name="lines"/> to <paramref name="sink"/> now, after every queued entry, and flushes.</summary>
        internal void WriteNow(string sink, string[] lines)
        {
            lock (gate) {
                Drain();
                for (int i = 0; i < lines.Length; i++) {
                    line.Start((lines[i] == null ? 0 : lines[i].Length) + NewLine.Length).Append(lines[i]).Append(NewLine);
                    TextWriter w = null;
                    try {
                        w = Sink(sink);
                        w.Write(line.Chars, 0, line.Length);
                    } catch (Exception ex) {
                        Failed(w, ex);
                    }
                }
                Flush();
            }
        }

        /// <summary>The line end of the platform, as <c>WriteLine</c> writes it.</summary>
        static readonly string NewLine = Environment.NewLine;

        void Flush()
        {
            TextWriter failed = null;
            Exception error = null;
            foreach (KeyValuePair<string, TextWriter> s in sinks) {
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
        bool Failed(TextWriter w, Exception error)
        {
            if (w == null || ReferenceEquals(w, Console.Error) || ReferenceEquals(w, Console.Out))
                return false;
            List<string> names = new List<string>();
            foreach (KeyValuePair<string, TextWriter> s in sinks)
                if (ReferenceEquals(s.Value, w))
                    names.Add(s.Key);
            for (int i = 0; i < names.Count; i++) {
                sinks[names[i]] = Console.Error;
                files.Remove(names[i]);
                try {
                    Console.Error.WriteLine("LockTime: warning: LOCKTIME_OUTPUT=\"" + names[i] + "\" cannot be written (" +
                                            error.GetType().Name + ": " + error.Message + "); using stderr");
                } catch (Exception) {
                }
            }
            ForgetShapes();
            try {
                w.Dispose();
            } catch (Exception) {
            }
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
                TextWriter w;
                if (sinks.TryGetValue(gone[i], out w)) {
                    try {
                        w.Dispose();
                    } catch (Exception) {
                    }
                }
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

        /// <summary>The writer of a sink (null: stderr); a file that cannot be opened warns once and writes to stderr instead.</summary>
        TextWriter Sink(string sink)
        {
            TextWriter w;
            if (sink == null)
                sink = "stderr";
            if (sinks.TryGetValue(sink, out w))
                return w;
            if (sink == "stderr") {
                w = Console.Error;
            } else if (sink == "stdout") {
                w = Console.Out;
            } else {
                try {
                    FileStream fs = new FileStream(sink, FileMode.Append, FileAccess.Write, FileShare.ReadWrite | FileShare.Delete,
                                                   FileBuffer);
                    w = new StreamWriter(fs, new UTF8Encoding(false), FileBuffer);
                    files[sink] = fs.Name;
                } catch (Exception ex) {
                    Console.Error.WriteLine("LockTime: warning: LOCKTIME_OUTPUT=\"" + sink + "\" cannot be opened (" +
                                            ex.GetType().Name + ": " + ex.Message + "); using stderr");
                    w = Console.Error;
                }
            }
            sinks[sink] = w;
            return w;
        }
    }
}
