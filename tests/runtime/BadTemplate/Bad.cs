// Bad.cs - each type breaks one rule of the template subset (weaver/runtime/README.md).
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace LockTime.Runtime
{
    [CompilerGenerated]
    internal static class Closure
    {
        internal static Func<int> Capture(int x) { return () => x; }
    }

    [CompilerGenerated]
    internal static class Async
    {
        internal static async Task Run() { await Task.Yield(); }
    }

    [CompilerGenerated]
    internal static class Iterator
    {
        internal static IEnumerable<int> Numbers() { yield return 1; }
    }

    [CompilerGenerated]
    internal sealed class Generic<T>
    {
        internal T Value;
    }

    [CompilerGenerated]
    internal static class RvaData
    {
        internal static long[] Table() { return new long[] { 1, 2, 3, 4, 5, 6, 7, 8 }; }
    }

    [CompilerGenerated]
    internal static class ExplicitCctor
    {
        static int x;
        static ExplicitCctor() { x = Environment.TickCount; }
    }

    [CompilerGenerated]
    internal static class OtherAttribute
    {
        [Obsolete("no")]
        internal static void Old() { }
    }

    [CompilerGenerated]
    internal sealed class Property
    {
        internal int Size { get { return 1; } }
    }

    [CompilerGenerated]
    public static class Public
    {
    }

    internal static class Unmarked
    {
    }

    // Process is outside Mono's mscorlib (in System.dll): `ltcheck template FILE mscorlib.dll` names it.
    [CompilerGenerated]
    internal static class OutsideCoreLibrary
    {
        internal static int Id() { return System.Diagnostics.Process.GetCurrentProcess().Id; }
    }
}

namespace LockTime.Runtime
{
    // A baked default the merger cannot rewrite (not `ldstr; ret`); the other hooks are missing.
    [System.Runtime.CompilerServices.CompilerGenerated]
    internal static class Baked
    {
        internal static string ThresholdMs() { return string.Concat("1", "0"); }
    }
}
