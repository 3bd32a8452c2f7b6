// Clock.cs - the run-time's only clock: every timestamp and the tick frequency come from here.
using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace LockTime.Runtime
{
    /// <summary>
    /// The clock of the run-time, in ticks of <see cref="Frequency"/> per second. These two methods are
    /// the only place that reads time, so the merger can substitute their bodies for a target without
    /// <c>Stopwatch</c> (Mono's mscorlib: the 100 ns wall clock, frequency 10,000,000; README.md).
    /// </summary>
    [CompilerGenerated]
    internal static class Clock
    {
        /// <summary>A monotonic timestamp in ticks.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal static long Ticks()
        {
            return Stopwatch.GetTimestamp();
        }

        /// <summary>Ticks per second of <see cref="Ticks"/>.</summary>
        internal static long Frequency()
        {
            return Stopwatch.Frequency;
        }
    }
}
