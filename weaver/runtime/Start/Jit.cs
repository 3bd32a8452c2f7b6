// Jit.cs - the run-time's one request to the JIT: optimized code at a method's first call.
using System.Runtime.CompilerServices;

namespace LockTime.Runtime
{
    /// <summary>
    /// <c>MethodImplOptions.AggressiveOptimization</c>, which netstandard2.0 has no name for: a method
    /// marked <c>[MethodImpl((MethodImplOptions)Jit.Optimized)]</c> is compiled optimized at its first
    /// call instead of running as the JIT's first, unoptimized code until the tiering (all of a short
    /// program, much of a test run or a service's start). Only methods that no process without nested or
    /// contended locks calls have it - the lock order's that run while a nested lock is held, and the contended
    /// path's (a wait's start and its search for the holder, the holds' log, the charge of a wait): such a method
    /// is never precompiled (crossgen leaves it to the JIT), nor compiled again with a profile, and the entry
    /// points and the writer's line path, compiled so at every process's start and exit, cost it more than they
    /// saved (weaver/runtime/README.md, "Before the tiering"). Runtimes that do
    /// not know the flag ignore it. An <c>int</c>, not the enum: the merged copy's field then needs no
    /// type of the target's framework.
    /// </summary>
    [CompilerGenerated]
    internal static class Jit
    {
        internal const int Optimized = 512;
    }
}
