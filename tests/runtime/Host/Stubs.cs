// Stubs.cs - the call-site stubs the weaver will generate, written by hand, and the site table it will
// bake; compiled into Host and HostLib, each with its own copy of the run-time (C# 7.3, like the template).
using System.Threading;
using LockTime.Runtime;

namespace TestHost
{
    internal static class Stubs
    {
        /// <summary>What SiteList.Load does in a woven assembly: sites "FILE:10", ":11"... of <paramref name="methods"/>.</summary>
        internal static void Start(string assembly, string file, string[] methods)
        {
            SiteTable table = new SiteTable();
            table.Begin(assembly, methods.Length);
            for (int i = 0; i < methods.Length; i++)
                table.Define(i, methods[i], file + ":" + (10 + i), "/src/" + assembly + "/" + file, 10 + i, "Monitor.Enter");
            Runtime.StartWith(table, Settings.FromEnvironment(), Registry.Slot);
        }

        /// <summary>The stub of Monitor.Enter(object) at site <paramref name="site"/>.</summary>
        internal static void Enter(object o, int site)
        {
            if (Api.Off) {
                Monitor.Enter(o);
                return;
            }
            long t0 = Clock.Ticks();
            if (Monitor.TryEnter(o)) {
                Api.Acquired(o, site, t0, t0, false);
                return;
            }
            Api.Waiting(o);
            Monitor.Enter(o);
            Api.Acquired(o, site, t0, Clock.Ticks(), true);
        }

        /// <summary>The stub of Monitor.Wait(object): the time inside is not hold time.</summary>
        internal static void Wait(object o, int timeoutMs)
        {
            if (Api.Off) {
                Monitor.Wait(o, timeoutMs);
                return;
            }
            Api.WaitBegins(o);
            long t0 = Clock.Ticks();
            Monitor.Wait(o, timeoutMs);
            Api.Waited(o, Clock.Ticks() - t0);
        }

        /// <summary>The stub of Monitor.Exit(object).</summary>
        internal static void Exit(object o)
        {
            Monitor.Exit(o);
            if (!Api.Off)
                Api.Released(o);
        }
    }
}
