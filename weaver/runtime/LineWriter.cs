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

        /// <summary>
        /// Appends <paramref name="ns"/> nanoseconds as milliseconds with three decimals (<c>12.345</c>),
        /// rounded to the nearest microsecond, in integer arithmetic (<see cref="MsLength"/> characters at most).
        /// </summary>
        internal LineText Ms(long ns)
        {
            char[] c = Chars;
            if (ns < 0) {
                c[Length++] = '-';
                ns = ns == long.MinValue ? long.MaxValue : -ns;
            }
            long us = ns / 1000 + (ns % 1000 >= 500 ? 1 : 0);
            long ms = us / 1000;
            int frac = (int)(us % 1000), digits = 1;
            for (long rest = ms / 10; rest > 0; rest /= 10)
                digits++;
            for (int i = Length + digits - 1; i >= Length; i--, ms /= 10)
                c[i] = (char)('0' + (int)(ms % 10));
            Length += digits;
            c[Length] = '.';
            c[Length + 1] = (char)('0' + frac / 100);
            c[Length + 2] = (char)('0' + frac / 10 % 10);
            c[Length + 3] = (char)('0' + frac % 10);
            Length += 4;
            return this;
        }

        /// <summary>The characters as a string.</summary>
        internal string Text()
        {
            return new string(Chars, 0, Length);
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
        /// The line of an entry, the format of the slow-lock lines since the first LockTime:
        /// <c>LockTime: M held X ms, waited Y ms at L</c>, or <c>LockTime: M waited Y ms, not acquired at L</c>,
        /// followed by <c> (held by M2 at L2)</c> when the holder is known; a whole line as it is.
        /// </summary>
        internal static string Format(object[] entry)
        {
            LineText t = new LineText();
            Format(entry, t, 0);
            return t.Text();
        }

        /// <summary>As <see cref="Format(object[])"/>, into <paramref name="t"/> (emptied first), with room for <paramref name="more"/> characters after it.</summary>
        internal static void Format(object[] entry, LineText t, int more)
        {
            if (entry.Length == 2) {
                string whole = (string)entry[1];
                t.Start((whole == null ? 0 : whole.Length) + more).Append(whole);
                return;
            }
            long[] times = (long[])entry[3];
            string method = (string)entry[1], location = (string)entry[2], holderText = null;
            string[] name = entry.Length > 4 ? entry[4] as string[] : null;
            if (name == null && entry.Length > 4)
                holderText = entry[4] as string;
            else if (name != null && name.Length < 3)
                name = null;
            int room = 80 + 2 * LineText.MsLength + Len(method) + Len(location) + Len(holderText) + more;
            if (name != null)
                room += Len(name[1]) + Len(name[2]);
            t.Start(room).Append("LockTime: ").Append(method);
            if (times[0] < 0) {
                t.Append(" waited ").Ms(times[1]).Append(" ms, not acquired at ");
            } else {
                t.Append(" held ").Ms(times[0]).Append(" ms, waited ");
                t.Ms(times[1]).Append(" ms at ");
            }
            t.Append(location);
            if (name != null)
                t.Append(" (held by ").Append(name[1]).Append(" at ").Append(name[2]).Append(")");
            else if (holderText != null)
                t.Append(" (held by ").Append(holderText).Append(")");
        }

        static int Len(string s)
        {
            return s == null ? 0 : s.Length;
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

        /// <summary>Writes every queued entry and flushes; false when there was none.</summary>
        internal bool Drain()
        {
            lock (gate) {
                bool any = false;
                object[] e;
                while (queue.TryDequeue(out e)) {
                    Interlocked.Decrement(ref queued);
                    any = true;
                    Format(e, line, NewLine.Length);
                    line.Append(NewLine);
                    Write((string)e[0], line);
                }
                if (any)
                    Flush();
                return any;
            }
        }

        /// <summary>Writes <paramref name="lines"/> to <paramref name="sink"/> now, after every queued entry, and flushes.</summary>
        internal void WriteNow(string sink, string[] lines)
        {
            lock (gate) {
                Drain();
                for (int i = 0; i < lines.Length; i++) {
                    line.Start((lines[i] == null ? 0 : lines[i].Length) + NewLine.Length).Append(lines[i]).Append(NewLine);
                    Write(sink, line);
                }
                Flush();
            }
        }

        /// <summary>The line end of the platform, as <c>WriteLine</c> writes it.</summary>
        static readonly string NewLine = Environment.NewLine;

        /// <summary>Writes <paramref name="text"/> (a whole line and its end) to <paramref name="sink"/> in one call.</summary>
        void Write(string sink, LineText text)
        {
            try {
                Sink(sink).Write(text.Chars, 0, text.Length);
            } catch (Exception) {
            }
        }

        void Flush()
        {
            foreach (KeyValuePair<string, TextWriter> s in sinks) {
                try {
                    s.Value.Flush();
                } catch (Exception) {
                }
            }
        }

        /// <summary>The writer of a sink; a file that cannot be opened warns once and writes to stderr instead.</summary>
        TextWriter Sink(string sink)
        {
            TextWriter w;
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
