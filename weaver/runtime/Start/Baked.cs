// Baked.cs - the defaults the weaver bakes into each woven assembly (its --threshold-ms, --output-sink, ...).
using System.Runtime.CompilerServices;

namespace LockTime.Runtime
{
    /// <summary>
    /// The baked defaults, one method each whose body is <c>ldstr "..."; ret</c>: the merger replaces
    /// the string literal with the weave's option (README.md, "Baked defaults"). The values are parsed
    /// like the LOCKTIME_* variables that override them (<see cref="Settings"/>).
    /// </summary>
    [CompilerGenerated]
    internal static class Baked
    {
        /// <summary>Report threshold in milliseconds (<c>--threshold-ms</c>).</summary>
        internal static string ThresholdMs()
        {
            return "1";
        }

        /// <summary>Line sink: stderr, stdout or a file path (<c>--output-sink</c>).</summary>
        internal static string Output()
        {
            return "stderr";
        }

        /// <summary>Rows of the summary at exit; 0 = no summary (<c>--summary</c>).</summary>
        internal static string Summary()
        {
            return "10";
        }

        /// <summary>Report file path, <c>{pid}</c> replaced; empty = no report (<c>--report</c>).</summary>
        internal static string Report()
        {
            return "";
        }

        /// <summary>Whether the lock order is followed: a switch (MSBuild <c>LockTimeLockOrder</c> once the weaver bakes it).</summary>
        internal static string LockOrder()
        {
            return "1";
        }

        /// <summary>Slow-lock lines a second per site after the first ones, or <c>all</c> (<c>--lines</c>, MSBuild <c>LockTimeLines</c>).</summary>
        internal static string Lines()
        {
            return "2";
        }
    }
}
