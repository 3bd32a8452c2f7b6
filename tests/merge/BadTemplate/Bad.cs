// One of each construct the merger refuses (weave_merge.h, weave_merge_check).
using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Threading.Tasks;

namespace LockTime.BadTemplate
{
    internal static class Bad
    {
        private static readonly byte[] Table = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

        public static Func<int> Closure(int x)
        {
            return () => x + Table[0];
        }

        public static IEnumerable<int> Iterator()
        {
            yield return 1;
        }

        public static async Task<int> Async()
        {
            await Task.Yield();
            return 1;
        }

        public static T Generic<T>(T value)
        {
            return value;
        }

        [DllImport("libc")]
        public static extern int getpid();

        [Obsolete("not copied")]
        public static int Attributed()
        {
            return 1;
        }

        public static int Property
        {
            get { return 1; }
        }
    }

    // A static constructor of its own: the type is not beforefieldinit.
    internal static class ExplicitCctor
    {
        private static readonly int Ticks;

        static ExplicitCctor()
        {
            Ticks = Environment.TickCount;
        }

        public static int Get()
        {
            return Ticks;
        }
    }

    internal sealed class Box<T>
    {
        public T Value;
    }
}
