// ExitOrder.cs - the run-time's exit handler put last among ProcessExit's just before the exit calls them.
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>
    /// <c>ProcessExit</c> calls its handlers in the order they were added, and only those added before it
    /// began: a handler the program adds after the first timed lock would run after the summary and report,
    /// its locks in neither. On .NET Core 3+ the exit raises <c>AssemblyLoadContext.Default.Unloading</c> just
    /// before it reads <c>ProcessExit</c>'s handlers, so the owner watches it (<see cref="WatchUnloading"/>, in
    /// the start) and moves its exit handler last there (<see cref="Runtime.MoveExitLast"/>): every handler
    /// the program added until the exit, up to its last instant, runs before the summary and report.
    /// Elsewhere (Mono, .NET Framework, a copy in a netstandard2.0 library) the run-time's thread moves it
    /// every 10 ms instead. The watch begins before the program runs (<see cref="Watch"/>, which the weaver calls
    /// first from the module initializer or the entry point), so that a first timed lock inside a
    /// <c>ProcessExit</c> handler, after the exit read their list, still finds the exit handler there.
    /// </summary>
    [CompilerGenerated]
    internal static class ExitOrder
    {
        /// <summary>0 until <see cref="OnUnloading"/> is subscribed, 1 once it is (or being), 2 when it cannot be.</summary>
        static int watching;

        /// <summary>
        /// Subscribes <see cref="OnUnloading"/> once (<see cref="WatchUnloading"/>) without starting the run-time, and
        /// returns whether it is subscribed; registers the SIGINT handler of a program (<see cref="Signals.WatchInterrupt"/>),
        /// which must run after the program's handlers as the exit handler after theirs. The weaver calls it first in the
        /// woven assembly's module initializer (<c>&lt;Module&gt;</c>'s type initializer, ECMA-335 II.10.5.3), else its
        /// entry point (weave_early.c): one event subscription and one signal registration at the program's start; the
        /// start calls it again. Never throws.
        /// </summary>
        internal static bool Watch()
        {
            Signals.WatchInterrupt();
            if (Interlocked.CompareExchange(ref watching, 1, 0) == 0) {
                bool watched = false;
                try {
                    watched = WatchUnloading();
                } catch (Exception) {
                }
                if (!watched)
                    Volatile.Write(ref watching, 2);
            }
            return Volatile.Read(ref watching) == 1;
        }

        /// <summary>
        /// Adds <see cref="OnUnloading"/> to <c>AssemblyLoadContext.Default.Unloading</c> by a direct call, and
        /// returns true: the weaver writes this body for a target whose framework has the type
        /// (weave_merge_direct.c). This body, which the other targets keep, returns false: the run-time's thread
        /// then moves the exit handler last every 10 ms. May throw: the caller catches.
        /// </summary>
        internal static bool WatchUnloading()
        {
            return false;
        }

        /// <summary>
        /// The exit is about to call <c>ProcessExit</c>'s handlers: the run-time's goes last, also when the run-time has
        /// not started (it may start inside one of them; its exit handler then writes what it recorded, else nothing:
        /// <see cref="Runtime.Finish"/>). Never throws.
        /// </summary>
        static void OnUnloading(object context)
        {
            Runtime.MoveExitLast();
        }
    }
}
