// ExitOrder.cs - the run-time's exit handler put last among ProcessExit's just before the exit calls them.
using System.Runtime.CompilerServices;

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
    /// every 10 ms instead.
    /// </summary>
    [CompilerGenerated]
    internal static class ExitOrder
    {
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

        /// <summary>The exit is about to call <c>ProcessExit</c>'s handlers: the run-time's goes last. Never throws.</summary>
        static void OnUnloading(object context)
        {
            Runtime.MoveExitLast();
        }
    }
}
