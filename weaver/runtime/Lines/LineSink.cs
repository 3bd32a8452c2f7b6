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
            if (stream != null)
                stream.Write(Text.Bytes, 0, n);
            else
                writer.Write(Encoding.UTF8.GetString(Text.Bytes, 0, n));
        }

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
