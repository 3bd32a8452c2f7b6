// Shelf.cs - the library's locks: a monitor held 30 ms, a SemaphoreSlim(1, 1) held 30 ms.
using System.Threading;

namespace TrimLib
{
    public static class Shelf
    {
        private static readonly object Gate = new object();
        private static readonly SemaphoreSlim Slot = new SemaphoreSlim(1, 1);
        private static int count;

        public static int Add()
        {
            lock (Gate)
            {
                Thread.Sleep(30);
                return ++count;
            }
        }

        public static void Reserve()
        {
            Slot.Wait();
            Thread.Sleep(30);
            Slot.Release();
        }
    }
}
