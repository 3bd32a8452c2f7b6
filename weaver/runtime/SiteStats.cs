// SiteStats.cs - what one thread recorded for one lock site, and the merge of several threads.
using System.Runtime.CompilerServices;

namespace LockTime.Runtime
{
    /// <summary>
    /// The statistics of one lock site: acquisitions (counted when released), contended ones (the
    /// fast try failed), failed TryEnters, and the wait and hold durations in nanoseconds. Each thread
    /// writes its own instance; a summary adds them (<see cref="Add"/>).
    /// </summary>
    [CompilerGenerated]
    internal sealed class SiteStats
    {
        internal long Acquisitions;
        internal long Contended;
        internal long Failed;
        internal readonly Histogram Wait = new Histogram();
        internal readonly Histogram Hold = new Histogram();

        /// <summary>Adds every count of <paramref name="other"/>.</summary>
        internal void Add(SiteStats other)
        {
            Acquisitions += other.Acquisitions;
            Contended += other.Contended;
            Failed += other.Failed;
            Wait.Add(other.Wait);
            Hold.Add(other.Hold);
        }

        /// <summary>True when nothing was recorded.</summary>
        internal bool IsEmpty()
        {
            return Acquisitions == 0 && Failed == 0;
        }
    }
}
