// Library.cs - the library's lock site, taken through its own stubs and its own copy of the run-time.
using TestHost;

namespace HostLib
{
    public static class Library
    {
        static readonly object Gate = new object();
        static bool started;

        /// <summary>Takes the library's lock <paramref name="times"/> times.</summary>
        public static void Work(int times)
        {
            if (!started) {
                Stubs.Start("HostLib", new string[] { "HostLib.Library::Work" });
                started = true;
            }
            for (int i = 0; i < times; i++) {
                Stubs.Enter(Gate, 0);
                Stubs.Exit(Gate);
            }
        }
    }
}
