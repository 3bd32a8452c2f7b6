// LineSink.cs - one place the writer writes lines to (a file, stderr or stdout) and the bytes buffered for it.
using System;
using System.IO;
using System.Runtime.CompilerServices;
using System.Text;

namespace LockTime.Runtime
{
    /// <summary>
    /// One sink of lines and its buffer (<see cref="Text"/>): the writer formats each line straight into
    /// the buffer, as UTF-8 bytes, and the buffer goes to the sink's stream in one write when the next line
    /// would not fit or at the end of a batch (<see cref="Flush"/>). A console's line is written at its end
    /// (<see cref="End"/>: one write per line, so that lines stay whole beside the program's own output). A
    /// sink over a <c>TextWriter</c> (<c>Console.Error</c> when the run-time cannot have a stream of its own,
    /// or a test's) gets each write as text.
    /// </summary>
    [CompilerGenerated]
    internal sealed class LineSink
    {
        /// <summary>Bytes buffered at most between two writes (a longer line grows the buffer): a write per 64 KiB of lines.</summary>
        internal const int BufferSize = 65536;

        /// <summary>The lines not yet written to the sink.</summary>
        internal readonly LineText Text;
        /// <summary>True for stderr and stdout: each line written at its end.</summary>
        internal readonly bool Console;
        readonly Stream stream;
        readonly TextWriter writer;

        /// <summary>A sink writing to <paramref name="stream"/>, a console's (<paramref name="console"/>) or a file's.</summary>
        internal LineSink(Stream stream, bool console)
        {
            this.stream = stream;
            Console = console;
            Text = new LineText(console ? 4096 : BufferSize);
        }

        /// <summary>A console sink writing to <paramref name="writer"/>, a line at a time as text.</summary>
        internal LineSink(TextWriter writer)
        {
            this.writer = writer;
            Console = true;
            Text = new LineText(4096);
        }

        /// <summary>
        /// The buffer, with room for a line of at most <paramref name="room"/> bytes: what it held is written
        /// to the sink first when the line would not fit. Throws what the sink's write throws.
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal LineText Line(int room)
        {
            if (Text.Length + room > Text.Bytes.Length && Text.Length > 0)
                Write();
            return Text.Reserve(room);
        }

        /// <summary>Ends a line formatted into <see cref="Line"/>'s buffer: a console's is written now. Throws what the sink's write throws.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal void End()
        {
            if (Console)
                Write();
        }

        /// <summary>Writes the buffered lines to the sink (emptying the buffer even when the write throws: those lines are lost).</summary>
        void Write()
        {
            int n = Text.Length;
            Text.Length = 0;
            if (n == 0)
                return;
            FileStream file = Console ? null : stream as FileStream;
            if (file != null)
                Append(file, n);
            else if (stream != null)
                stream.Write(Text.Bytes, 0, n);
            else
                writer.Write(Encoding.UTF8.GetString(Text.Bytes, 0, n));
        }

        /// <summary>The byte of a file sink that its writers lock around each write (<see cref="Append"/>): far past any data, so that no reader or writer of the data waits for it.</summary>
        const long LockAt = 1L << 62;
        /// <summary>Tries for that lock before a write goes ahead without it, a millisecond apart: another writer holds it for one write.</summary>
        const int LockTries = 100;

        /// <summary>
        /// Writes the first <paramref name="n"/> bytes of the buffer at the end the file has now, in one write, under a lock
        /// shared with every other process's writer of it (a byte lock, <see cref="LockAt"/>): .NET's <c>FileMode.Append</c>
        /// seeks to the end once, at the open, and then writes at the stream's own position, so two processes writing one
        /// file (the hosts of a test run sharing <c>LOCKTIME_OUTPUT</c>) wrote over each other's lines. A lock not had within
        /// <see cref="LockTries"/> ms, or that the platform does not have, is done without: the write still goes to the end
        /// as it is then. Throws what the write throws.
        /// </summary>
#pragma warning disable CA1416 // FileStream.Lock and Unlock throw PlatformNotSupportedException on macOS: caught, the write goes ahead
        void Append(FileStream file, int n)
        {
            bool locked = false;
            for (int tries = 0; !locked && tries < LockTries; tries++) {
                try {
                    file.Lock(LockAt, 1);
                    locked = true;
                } catch (IOException) {
                    System.Threading.Thread.Sleep(1); /* another process writes */
                } catch (Exception) {
                    break; /* no byte locks here */
                }
            }
            try {
                file.Seek(0, SeekOrigin.End);
                file.Write(Text.Bytes, 0, n);
            } finally {
                if (locked)
                    Unlock(file);
            }
        }

        /// <summary>Gives the lock of <see cref="Append"/> back; never throws (the process's end gives it back too).</summary>
        static void Unlock(FileStream file)
        {
            try {
                file.Unlock(LockAt, 1);
            } catch (Exception) {
            }
        }
#pragma warning restore CA1416

        /// <summary>Writes the buffered lines and flushes the sink. Throws what the sink throws.</summary>
        internal void Flush()
        {
            Write();
            if (stream != null)
                stream.Flush();
            else
                writer.Flush();
        }

        /// <summary>Writes the buffered lines, flushes and closes a file sink; never throws.</summary>
        internal void Close()
        {
            try {
                Flush();
            } catch (Exception) {
            }
            try {
                if (stream != null)
                    stream.Dispose();
            } catch (Exception) {
            }
        }
    }
}
