// LineText.cs - lines built as UTF-8 bytes in a reusable array: the writer's formatting, numbers as digits.
using System;
using System.Runtime.CompilerServices;
using System.Text;

namespace LockTime.Runtime
{
    /// <summary>
    /// Lines built as UTF-8 bytes in a reusable array: a sink's buffer (<see cref="LineSink"/>), one line
    /// after another, written to the sink as they are - no string per line or per number, no encoding of
    /// characters on the way out. Room is made once per line (<see cref="Reserve"/>): the appends do not
    /// check it, so that a line costs few calls also before the JIT optimizes them.
    /// </summary>
    [CompilerGenerated]
    internal sealed class LineText
    {
        /// <summary>Bytes <see cref="Ms"/> appends at most: a sign, 16 digits, the point, 3 decimals.</summary>
        internal const int MsLength = 21;

        internal byte[] Bytes;
        internal int Length;

        /// <summary>An empty text of <paramref name="capacity"/> bytes (more when a line needs it).</summary>
        internal LineText(int capacity)
        {
            Bytes = new byte[capacity];
        }

        /// <summary>Makes room for <paramref name="room"/> more bytes, which the appends may use (the array grows when they would not fit).</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal LineText Reserve(int room)
        {
            if (Length + room > Bytes.Length) {
                byte[] b = new byte[Math.Max(Length + room, Bytes.Length * 2)];
                Array.Copy(Bytes, 0, b, 0, Length);
                Bytes = b;
            }
            return this;
        }

        /// <summary>Bytes <see cref="Append(string)"/> may take for <paramref name="s"/> (null: none).</summary>
        internal static int Room(string s)
        {
            return s == null ? 0 : Encoding.UTF8.GetMaxByteCount(s.Length);
        }

        /// <summary>Appends <paramref name="s"/> (null: nothing) as UTF-8 into the room made (<see cref="Room(string)"/>).</summary>
        internal LineText Append(string s)
        {
            if (s != null)
                Length += Encoding.UTF8.GetBytes(s, 0, s.Length, Bytes, Length);
            return this;
        }

        /// <summary>Appends <paramref name="b"/> (null: nothing) into the room made.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal LineText Append(byte[] b)
        {
            if (b != null) {
                Array.Copy(b, 0, Bytes, Length, b.Length);
                Length += b.Length;
            }
            return this;
        }

        /// <summary>"000" to "999", three ASCII digits each: the digits of a number three at a time.</summary>
        static readonly byte[] Triples = MakeTriples();

        /// <summary>Powers of ten, 10^0 to 10^18: a number's count of digits by comparisons.</summary>
        static readonly long[] Tens = MakeTens();

        static byte[] MakeTriples()
        {
            byte[] t = new byte[3000];
            for (int i = 0; i < 1000; i++) {
                t[3 * i] = (byte)('0' + i / 100);
                t[3 * i + 1] = (byte)('0' + i / 10 % 10);
                t[3 * i + 2] = (byte)('0' + i % 10);
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
        /// rounded to the nearest microsecond, in integer arithmetic (<see cref="MsLength"/> bytes at
        /// most): two divisions, and one more per three digits past the first three, the digits copied one
        /// by one (a call of `Array.Copy` per three bytes costs more than the copy).
        /// </summary>
        internal LineText Ms(long ns)
        {
            byte[] c = Bytes;
            if (ns < 0) {
                c[Length++] = (byte)'-';
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
            byte[] t = Triples;
            for (; ms >= 1000; i -= 3) {
                long rest = ms / 1000;
                int k = 3 * (int)(ms - rest * 1000);
                c[i - 3] = t[k];
                c[i - 2] = t[k + 1];
                c[i - 1] = t[k + 2];
                ms = rest;
            }
            for (int k = 3 * (int)ms + 2; i > Length; k--)
                c[--i] = t[k]; /* the first one to three digits: the end of ms's triple */
            c[end] = (byte)'.';
            c[end + 1] = t[3 * frac];
            c[end + 2] = t[3 * frac + 1];
            c[end + 3] = t[3 * frac + 2];
            Length = end + 4;
            return this;
        }

        /// <summary>The bytes as a string.</summary>
        internal string Text()
        {
            return Encoding.UTF8.GetString(Bytes, 0, Length);
        }
    }
}
