// MeterHistograms.cs - the Meter's histograms of wait and hold durations: each acquisition recorded once, at a collection.
using System;
using System.Collections.Generic;
using System.Reflection;
using System.Runtime.CompilerServices;

namespace LockTime.Runtime
{
    /// <summary>
    /// The histogram instruments of the Meter <c>LockTime</c> (docs/metrics.md): <c>locktime.wait.duration</c>
    /// and <c>locktime.hold.duration</c>, <c>Histogram&lt;double&gt;</c> in seconds, tagged as the counters
    /// (<see cref="Metrics"/>), with explicit bucket boundaries advised (<see cref="Boundaries"/>, .NET 9+:
    /// <c>InstrumentAdvice&lt;double&gt;</c>), so that an OpenTelemetry pipeline gives p50 and p99 per site.
    /// <para>
    /// The Meter has no observable histogram, and a lock's thread records nothing more than it does now, so
    /// the acquisitions are recorded at a collection: <see cref="Record"/> takes a series' histograms (the
    /// run-time's own, summed over its sites: <see cref="Histogram"/>, two significant digits) and calls the
    /// instrument's <c>Record</c> once per acquisition counted since the last collection, with the middle of
    /// its bucket. Every run-time bucket lies inside one advised bucket (the boundaries 1, 2 and 5 x 10^k
    /// are bucket edges of the run-time's), so the exported bucket counts are exact; only a duration of
    /// exactly a boundary counts in the bucket above it. The cost is one <c>Record</c> call per acquisition,
    /// on the collecting thread, and none while no listener enables the instrument.
    /// </para>
    /// </summary>
    [CompilerGenerated]
    [System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessage("Trimming", "IL2055", Justification = "InstrumentAdvice<double> is kept by Create's DynamicDependency")]
    [System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessage("Trimming", "IL2060", Justification = "CreateHistogram<double> is kept by Create's DynamicDependency")]
    [System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessage("Trimming", "IL2070", Justification = "Meter's methods looked for are kept by Create's DynamicDependency")]
    [System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessage("Trimming", "IL2075", Justification = "Histogram<double>'s and InstrumentAdvice<double>'s members are kept by Create's DynamicDependency")]
    [System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessage("AOT", "IL3050", Justification = "Under NativeAOT an instantiation without code throws, which Create catches: no histograms")]
    internal sealed class MeterHistograms
    {
        const string Namespace = "System.Diagnostics.Metrics.";
        const string Assembly = ", System.Diagnostics.DiagnosticSource";

        readonly Action<double, KeyValuePair<string, object>[]> recordWait, recordHold;
        readonly Func<bool> waitEnabled, holdEnabled;
        /* per series: what was recorded so far, as Histogram.ToArray data (only the low count and buckets used) */
        readonly List<long[]> waitSeen = new List<long[]>(), holdSeen = new List<long[]>();

        MeterHistograms(object wait, object hold)
        {
            recordWait = Recorder(wait);
            recordHold = Recorder(hold);
            waitEnabled = Enabled(wait);
            holdEnabled = Enabled(hold);
        }

        /// <summary>The bucket boundaries advised, in seconds: 1, 2 and 5 per decade from 1 us to 10 s (22 boundaries).</summary>
        internal static double[] Boundaries()
        {
            double[] b = new double[22];
            double decade = 1e-6;
            for (int i = 0; i < 21; i += 3, decade *= 10) {
                b[i] = decade;
                b[i + 1] = 2 * decade;
                b[i + 2] = 5 * decade;
            }
            b[21] = 10;
            return b;
        }

        /// <summary>
        /// Creates the two histograms on <paramref name="meter"/> (of type <paramref name="meterType"/>), with the
        /// boundaries advised where the framework takes advice (.NET 9+), else without. Returns null when the
        /// framework has no histogram or anything fails. Never throws.
        /// </summary>
        [System.Diagnostics.CodeAnalysis.DynamicDependency("CreateHistogram``1(System.String,System.String,System.String,System.Collections.Generic.IEnumerable{System.Collections.Generic.KeyValuePair{System.String,System.Object}},System.Diagnostics.Metrics.InstrumentAdvice{``0})",
                                                           "System.Diagnostics.Metrics.Meter", "System.Diagnostics.DiagnosticSource")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("CreateHistogram``1(System.String,System.String,System.String)", "System.Diagnostics.Metrics.Meter", "System.Diagnostics.DiagnosticSource")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("#ctor", "System.Diagnostics.Metrics.InstrumentAdvice`1", "System.Diagnostics.DiagnosticSource")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("set_HistogramBucketBoundaries(System.Collections.Generic.IReadOnlyList{`0})", "System.Diagnostics.Metrics.InstrumentAdvice`1", "System.Diagnostics.DiagnosticSource")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("Record(`0,System.Collections.Generic.KeyValuePair{System.String,System.Object}[])", "System.Diagnostics.Metrics.Histogram`1", "System.Diagnostics.DiagnosticSource")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("get_Enabled", "System.Diagnostics.Metrics.Instrument", "System.Diagnostics.DiagnosticSource")]
        internal static MeterHistograms Create(Type meterType, object meter)
        {
            try {
                object advice = Advice();
                MethodInfo create = CreateHistogram(meterType, advice != null);
                if (create == null && advice != null) {
                    advice = null; /* advice without the overload that takes it: none */
                    create = CreateHistogram(meterType, false);
                }
                if (create == null)
                    return null;
                create = create.MakeGenericMethod(typeof(double));
                object wait = create.Invoke(meter, Arguments("locktime.wait.duration", "Time threads waited to acquire the lock at the site, per try", advice));
                object hold = create.Invoke(meter, Arguments("locktime.hold.duration", "Time the lock taken at the site was held, per acquisition (not counting Monitor.Wait)", advice));
                return new MeterHistograms(wait, hold);
            } catch (Exception) {
                return null;
            }
        }

        /// <summary>An <c>InstrumentAdvice&lt;double&gt;</c> with <see cref="Boundaries"/>, or null when the framework has none (before .NET 9).</summary>
        static object Advice()
        {
            Type open = Type.GetType(Namespace + "InstrumentAdvice`1" + Assembly, false);
            if (open == null)
                return null;
            Type type = open.MakeGenericType(typeof(double));
            ConstructorInfo make = type.GetConstructor(Type.EmptyTypes);
            PropertyInfo boundaries = type.GetProperty("HistogramBucketBoundaries");
            if (make == null || boundaries == null)
                return null;
            object advice = make.Invoke(null);
            boundaries.SetValue(advice, Boundaries(), null);
            return advice;
        }

        /// <summary><c>Meter.CreateHistogram&lt;T&gt;(string, string, string)</c>, or with <paramref name="advised"/> the overload that also takes tags and advice; null when none.</summary>
        static MethodInfo CreateHistogram(Type meterType, bool advised)
        {
            MethodInfo[] all = meterType.GetMethods(BindingFlags.Public | BindingFlags.Instance);
            for (int i = 0; i < all.Length; i++) {
                MethodInfo m = all[i];
                if (m.Name != "CreateHistogram" || !m.IsGenericMethodDefinition)
                    continue;
                ParameterInfo[] p = m.GetParameters();
                if (p.Length < 3 || p[0].ParameterType != typeof(string) || p[1].ParameterType != typeof(string) ||
                    p[2].ParameterType != typeof(string))
                    continue;
                if (!advised && p.Length == 3)
                    return m;
                if (advised && p.Length == 5 && p[4].ParameterType.Name == "InstrumentAdvice`1")
                    return m;
            }
            return null;
        }

        /// <summary>The arguments of <c>CreateHistogram</c>: name, unit (seconds), description, then no tags and <paramref name="advice"/> when there is advice.</summary>
        static object[] Arguments(string name, string description, object advice)
        {
            object[] args = new object[advice != null ? 5 : 3];
            args[0] = name;
            args[1] = "s";
            args[2] = description;
            if (advice != null)
                args[4] = advice;
            return args;
        }

        /// <summary><c>histogram.Record(double, params KeyValuePair&lt;string, object&gt;[])</c> as a delegate.</summary>
        static Action<double, KeyValuePair<string, object>[]> Recorder(object histogram)
        {
            Type[] p = new Type[2];
            p[0] = typeof(double);
            p[1] = typeof(KeyValuePair<string, object>[]);
            MethodInfo record = histogram.GetType().GetMethod("Record", p);
            return (Action<double, KeyValuePair<string, object>[]>)Delegate.CreateDelegate(typeof(Action<double, KeyValuePair<string, object>[]>), histogram, record);
        }

        /// <summary><c>instrument.Enabled</c> (a listener takes its measurements) as a delegate.</summary>
        static Func<bool> Enabled(object instrument)
        {
            MethodInfo get = instrument.GetType().GetProperty("Enabled").GetGetMethod();
            return (Func<bool>)Delegate.CreateDelegate(typeof(Func<bool>), instrument, get);
        }

        /// <summary>
        /// Records what series <paramref name="series"/> (tagged <paramref name="tags"/>) counted since the last
        /// call, from its sites' histograms summed: <paramref name="wait"/> and <paramref name="hold"/>. Called
        /// at each collection, for every series, in the order the series were made.
        /// </summary>
        internal void Record(int series, KeyValuePair<string, object>[] tags, Histogram wait, Histogram hold)
        {
            Replay(recordWait, waitEnabled(), Seen(waitSeen, series), wait, tags);
            Replay(recordHold, holdEnabled(), Seen(holdSeen, series), hold, tags);
        }

        static long[] Seen(List<long[]> seen, int series)
        {
            while (seen.Count <= series)
                seen.Add(new long[Histogram.ArrayLength]);
            return seen[series];
        }

        /// <summary>
        /// Calls <paramref name="record"/> once per duration <paramref name="now"/> counted past <paramref name="seen"/>
        /// (when <paramref name="on"/>: else they are only taken as seen), with its bucket's middle in seconds.
        /// </summary>
        static void Replay(Action<double, KeyValuePair<string, object>[]> record, bool on, long[] seen, Histogram now,
                           KeyValuePair<string, object>[] tags)
        {
            Repeat(record, on, ref seen[3], now.Low, Histogram.LowLimit / 2 / 1e9, tags);
            for (int d = 0; d < Histogram.Decades; d++) {
                long[] row = now.Rows[d];
                if (row == null)
                    continue;
                for (int k = 0; k < Histogram.PerDecade; k++)
                    Repeat(record, on, ref seen[4 + d * Histogram.PerDecade + k], row[k], Histogram.Middle(d, k) / 1e9, tags);
            }
        }

        static void Repeat(Action<double, KeyValuePair<string, object>[]> record, bool on, ref long seen, long count, double seconds,
                           KeyValuePair<string, object>[] tags)
        {
            long n = count - seen;
            if (n <= 0)
                return;
            seen = count;
            if (on)
                for (long i = 0; i < n; i++)
                    record(seconds, tags);
        }
    }
}
