// Library.cs - the library's lock sites, taken through its own stubs and its own copy of the run-time.
using System;
using TestHost;

namespace HostLib
{
    public static class Library
    {
        static readonly object Gate = new object();
        static bool started;

        static void Start()
        {
            if (!started) {
                Stubs.Start("HostLib", "Library.cs", new string[] { "HostLib.Library::Work", "HostLib.Library::Under", "HostLib.Library::Around" });
                started = true;
            }
        }

        /// <summary>Takes the library's lock <paramref name="times"/> times.</summary>
        public static void Work(int times)
        {
            Start();
            for (int i = 0; i < times; i++) {
                Stubs.Enter(Gate, 0);
                Stubs.Exit(Gate);
            }
        }

        /// <summary>Takes <paramref name="lockObject"/> (at Library.cs:11), under whatever the caller holds.</summary>
        public static void Under(object lockObject)
        {
            Start();
            Stubs.Enter(lockObject, 1);
            Stubs.Exit(lockObject);
        }

        /// <summary>Holds <paramref name="lockObject"/> (taken at Library.cs:12) while <paramref name="inside"/> runs.</summary>
        public static void Around(object lockObject, Action inside)
        {
            Start();
            Stubs.Enter(lockObject, 2);
            try {
                inside();
            } finally {
                Stubs.Exit(lockObject);
            }
        }
    }
}
