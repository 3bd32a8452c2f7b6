// LineWriter.cs - the process's one writer of lines: a bounded queue drained by a background thread.
using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Runtime.CompilerServices;
using System.Text;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>
    /// Writes the slow-lock lines of every copy of the run-time in the process. Copies queue entries
    /// (framework data: <see cref="Entry"/>) through the registry's delegate; the queue is bounded and
    /// a full queue drops the entry and counts it, so a lock's thread never blocks and never does I/O.
    /// One background thread formats and writes them; each line is one WriteLine on its sink, a file
    /// sink stays open (appended to, flushed after each batch), so lines are whole and never mixed.
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
        readonly StringBuilder line = new StringBuilder(160);

        /// <summary>
        /// A queue entry: the sink, the site's method and location, hold (-1: not acquired) and wait in ns,
        /// and the holder it waited behind (<c>"M at L"</c>) or null.
        /// </summary>
        internal static object[] Entry(string sink, string method, string location, long holdNs, long waitNs, string holder)
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
            return Format(entry, new StringBuilder(160));
        }

        /// <summary>As <see cref="Format(object[])"/>, built in <paramref name="sb"/> (cleared first): the writer reuses one.</summary>
        internal static string Format(object[] entry, StringBuilder sb)
        {
            if (entry.Length == 2)
                return (string)entry[1];
            long[] times = (long[])entry[3];
            string holder = entry.Length > 4 ? entry[4] as string : null;
            sb.Length = 0;
            sb.Append("LockTime: ").Append((string)entry[1]);
            if (times[0] < 0) {
                AppendMs(sb.Append(" waited "), times[1]).Append(" ms, not acquired at ");
            } else {
                AppendMs(sb.Append(" held "), times[0]).Append(" ms, waited ");
                AppendMs(sb, times[1]).Append(" ms at ");
            }
            sb.Append((string)entry[2]);
            if (holder != null)
                sb.Append(" (held by ").Append(holder).Append(')');
            return sb.ToString();
        }

        /// <summary>Nanoseconds as milliseconds with three decimals, rounded to the nearest microsecond.</summary>
        internal static string Ms(long ns)
        {
            return AppendMs(new StringBuilder(24), ns).ToString();
        }

        /// <summary>
        /// Appends <paramref name="ns"/> nanoseconds as milliseconds with three decimals (<c>12.345</c>), in
        /// integer arithmetic: the writer formats every line, and a double's formatting costs it most.
        /// </summary>
        internal static StringBuilder AppendMs(StringBuilder sb, long ns)
        {
            if (ns < 0) {
                sb.Append('-');
                ns = ns == long.MinValue ? long.MaxValue : -ns;
            }
            long us = ns / 1000 + (ns % 1000 >= 500 ? 1 : 0);
            long frac = us % 1000;
            sb.Append((us / 1000).ToString(CultureInfo.InvariantCulture)).Append('.');
            if (frac < 100)
                sb.Append('0');
            if (frac < 10)
                sb.Append('0');
            return sb.Append(frac.ToString(CultureInfo.InvariantCulture));
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
                    Write((string)e[0], Format(e, line));
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
                for (int i = 0; i < lines.Length; i++)
                    Write(sink, lines[i]);
                Flush();
            }
        }

        void Write(string sink, string line)
        {
            try {
                Sink(sink).WriteLine(line);
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
                    FileStream fs = new FileStream(sink, FileMode.Append, FileAccess.Write, FileShare.ReadWrite | FileShare.Delete);
                    w = new StreamWriter(fs, new UTF8Encoding(false));
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
