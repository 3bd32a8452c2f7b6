// Metrics.cs - the process's Meter "LockTime": observable instruments read from every copy's snapshot.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Reflection;
using System.Runtime.CompilerServices;

namespace LockTime.Runtime
{
    /// <summary>
    /// The live metrics of the process (docs/metrics.md): a <c>System.Diagnostics.Metrics.Meter</c> named
    /// <c>LockTime</c> with four observable counters - <c>locktime.acquisitions</c>,
    /// <c>locktime.contentions</c>, <c>locktime.wait.time</c> and <c>locktime.hold.time</c> (seconds) -
    /// and two histograms (<see cref="MeterHistograms"/>), one series per site, tagged with OpenTelemetry's <c>code.function.name</c>, <c>code.file.path</c>
    /// and <c>code.line.number</c>. The template is netstandard2.0 and merges into frameworks that have
    /// no Meter (Mono's mscorlib, net48), so everything of <c>System.Diagnostics.Metrics</c> is reached
    /// through reflection; without it there is nothing, silently. The callbacks run only when a listener
    /// collects (dotnet-counters, OpenTelemetry, a <c>MeterListener</c>): they read
    /// <see cref="Runtime.Gather"/>, as the summary does, and add nothing to the lock path.
    /// <para>
    /// A callback must return <c>IEnumerable&lt;Measurement&lt;T&gt;&gt;</c>, a type the template cannot
    /// name, and delegates are made only from methods. So each instrument's delegate is
    /// <c>Enumerable.Cast&lt;Measurement&lt;T&gt;&gt;</c> closed over
    /// <c>Enumerable.SelectMany(Enumerable.Range(0, 1), observe)</c>: each collection enumerates it
    /// anew, which calls <c>observe</c> (a method here returning the boxed measurements) once.
    /// </para>
    /// Series are bounded: a site keeps its series once it has one, and new ones are given, in the
    /// summary's order (most wait, then most hold), until <see cref="Settings.MetricsSites"/> exist; sites
    /// with the same tags (two locks on one line) share theirs. The four instruments of one collection
    /// read one snapshot: a new one is taken when an instrument is observed a second time.
    /// </summary>
    /// <para>
    /// A trimmed or NativeAOT app: the members reached by reflection are kept (<c>DynamicDependency</c> on
    /// <see cref="Start"/>) and the analysis warnings of the generic instantiations hidden: a trimmed app
    /// has the Meter; under NativeAOT, <c>MakeGenericMethod</c> over <c>long</c> and <c>double</c> has no
    /// code unless the program instantiates the same, and <see cref="Start"/> then gives no Meter (the
    /// exception caught), as documented in docs/metrics.md.
    /// </para>
    [CompilerGenerated]
    [System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessage("Trimming", "IL2060", Justification = "The generic methods are kept by Start's DynamicDependency; their arguments are long, double, int and object")]
    [System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessage("Trimming", "IL2065", Justification = "Measurement<T>'s constructor is kept by Start's DynamicDependency")]
    [System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessage("Trimming", "IL2070", Justification = "Meter's and Enumerable's methods looked for are kept by Start's DynamicDependency")]
    [System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessage("AOT", "IL3050", Justification = "Under NativeAOT an instantiation without code throws, which Start catches: no Meter")]
    internal sealed class Metrics
    {
        internal const string MeterName = "LockTime";
        internal const int Acquisitions = 0, Contentions = 1, WaitTime = 2, HoldTime = 3, Instruments = 4;

        readonly Collector owner;
        readonly int maxSeries;
        readonly ConstructorInfo longMeasurement;   /* Measurement<long>(long, KeyValuePair<string, object>[]) */
        readonly ConstructorInfo doubleMeasurement; /* Measurement<double>(double, ...) */
        readonly object gate = new object();

        /* the series: by key (function, file, line), their tags, and the last snapshot's values */
        readonly Dictionary<string, int> series = new Dictionary<string, int>();
        readonly List<KeyValuePair<string, object>[]> tags = new List<KeyValuePair<string, object>[]>();
        readonly long[] acquired, contended;
        readonly double[] waitS, holdS;
        readonly bool[] observed = new bool[Instruments];
        /// <summary>The histograms of wait and hold, recorded at each <see cref="Refresh"/>; null when the framework has none.</summary>
        MeterHistograms histograms;

        Metrics(Collector owner, int maxSeries, ConstructorInfo longMeasurement, ConstructorInfo doubleMeasurement)
        {
            this.owner = owner;
            this.maxSeries = maxSeries;
            this.longMeasurement = longMeasurement;
            this.doubleMeasurement = doubleMeasurement;
            acquired = new long[maxSeries];
            contended = new long[maxSeries];
            waitS = new double[maxSeries];
            holdS = new double[maxSeries];
            for (int i = 0; i < Instruments; i++)
                observed[i] = true; /* the first observation takes a snapshot */
        }

        /// <summary>
        /// Creates the Meter and its instruments, reading the snapshots of the registry
        /// <paramref name="owner"/>'s copy joined, at most <paramref name="maxSeries"/> series each.
        /// Returns the Meter, or null when the framework has none (or <paramref name="maxSeries"/> is 0,
        /// or anything fails). Never throws. Called once per process, by the registry's owner.
        /// </summary>
        [System.Diagnostics.CodeAnalysis.DynamicDependency("#ctor(System.String)", "System.Diagnostics.Metrics.Meter", "System.Diagnostics.DiagnosticSource")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("CreateObservableCounter``1(System.String,System.Func{System.Collections.Generic.IEnumerable{System.Diagnostics.Metrics.Measurement{``0}}},System.String,System.String)",
                                                           "System.Diagnostics.Metrics.Meter", "System.Diagnostics.DiagnosticSource")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("#ctor(`0,System.Collections.Generic.KeyValuePair{System.String,System.Object}[])",
                                                           "System.Diagnostics.Metrics.Measurement`1", "System.Diagnostics.DiagnosticSource")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("Range(System.Int32,System.Int32)", "System.Linq.Enumerable", "System.Linq")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("Cast``1(System.Collections.IEnumerable)", "System.Linq.Enumerable", "System.Linq")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("SelectMany``2(System.Collections.Generic.IEnumerable{``0},System.Func{``0,System.Collections.Generic.IEnumerable{``1}})",
                                                           "System.Linq.Enumerable", "System.Linq")]
        internal static object Start(Collector owner, int maxSeries)
        {
            try {
                if (maxSeries <= 0)
                    return null;
                Type meterType = Type.GetType("System.Diagnostics.Metrics.Meter, System.Diagnostics.DiagnosticSource", false);
                if (meterType == null)
                    return null;
                Type linq = Type.GetType("System.Linq.Enumerable, System.Linq", false);
                if (linq == null)
                    linq = Type.GetType("System.Linq.Enumerable, System.Core, Version=4.0.0.0, Culture=neutral, PublicKeyToken=b77a5c561934e089", false);
                MethodInfo counter = ObservableCounter(meterType);
                Type[] name = new Type[1];
                name[0] = typeof(string);
                ConstructorInfo create = meterType.GetConstructor(name);
                if (linq == null || counter == null || create == null)
                    return null;
                MethodInfo selectMany = SelectMany(linq), range = linq.GetMethod("Range"), cast = linq.GetMethod("Cast");
                if (selectMany == null || range == null || cast == null)
                    return null;
                MethodInfo longCounter = counter.MakeGenericMethod(typeof(long));
                MethodInfo doubleCounter = counter.MakeGenericMethod(typeof(double));
                ConstructorInfo longMeasurement = MeasurementOf(longCounter, typeof(long));
                ConstructorInfo doubleMeasurement = MeasurementOf(doubleCounter, typeof(double));
                if (longMeasurement == null || doubleMeasurement == null)
                    return null;
                Metrics m = new Metrics(owner, maxSeries, longMeasurement, doubleMeasurement);
                object[] args = new object[1];
                args[0] = MeterName;
                object meter = create.Invoke(args);
                m.histograms = MeterHistograms.Create(meterType, meter);
                Add(meter, longCounter, cast, Lazy(selectMany, range, new Func<int, IEnumerable<object>>(m.ObserveAcquisitions)),
                    "locktime.acquisitions", "{acquisition}", "Locks acquired (and released) at the site");
                Add(meter, longCounter, cast, Lazy(selectMany, range, new Func<int, IEnumerable<object>>(m.ObserveContentions)),
                    "locktime.contentions", "{contention}", "Tries at the site that found the lock held by another thread: acquisitions that waited, and failed tries");
                Add(meter, doubleCounter, cast, Lazy(selectMany, range, new Func<int, IEnumerable<object>>(m.ObserveWait)),
                    "locktime.wait.time", "s", "Time threads waited to acquire the lock at the site");
                Add(meter, doubleCounter, cast, Lazy(selectMany, range, new Func<int, IEnumerable<object>>(m.ObserveHold)),
                    "locktime.hold.time", "s", "Time the lock taken at the site was held (not counting Monitor.Wait)");
                return meter;
            } catch (Exception) {
                return null;
            }
        }

        /// <summary><c>Meter.CreateObservableCounter&lt;T&gt;(string, Func&lt;IEnumerable&lt;Measurement&lt;T&gt;&gt;&gt;, string, string)</c> (.NET 6+), or null.</summary>
        static MethodInfo ObservableCounter(Type meterType)
        {
            MethodInfo[] all = meterType.GetMethods(BindingFlags.Public | BindingFlags.Instance);
            for (int i = 0; i < all.Length; i++) {
                MethodInfo m = all[i];
                if (m.Name != "CreateObservableCounter" || !m.IsGenericMethodDefinition)
                    continue;
                ParameterInfo[] p = m.GetParameters();
                if (p.Length != 4 || p[0].ParameterType != typeof(string) || p[2].ParameterType != typeof(string) ||
                    p[3].ParameterType != typeof(string))
                    continue;
                Type observe = p[1].ParameterType;
                if (!observe.IsGenericType || observe.GetGenericTypeDefinition() != typeof(Func<>))
                    continue;
                Type result = observe.GetGenericArguments()[0];
                if (result.IsGenericType && result.GetGenericTypeDefinition() == typeof(IEnumerable<>))
                    return m;
            }
            return null;
        }

        /// <summary>The constructor <c>Measurement&lt;T&gt;(T, KeyValuePair&lt;string, object&gt;[])</c> of <paramref name="counter"/>'s measurements, or null.</summary>
        static ConstructorInfo MeasurementOf(MethodInfo counter, Type value)
        {
            Type measurement = counter.GetParameters()[1].ParameterType.GetGenericArguments()[0].GetGenericArguments()[0];
            Type[] p = new Type[2];
            p[0] = value;
            p[1] = typeof(KeyValuePair<string, object>[]);
            return measurement.GetConstructor(p);
        }

        /// <summary><c>Enumerable.SelectMany&lt;TSource, TResult&gt;(IEnumerable&lt;TSource&gt;, Func&lt;TSource, IEnumerable&lt;TResult&gt;&gt;)</c> (not the overload with the index), or null.</summary>
        static MethodInfo SelectMany(Type linq)
        {
            MethodInfo[] all = linq.GetMethods(BindingFlags.Public | BindingFlags.Static);
            for (int i = 0; i < all.Length; i++) {
                MethodInfo m = all[i];
                if (m.Name != "SelectMany" || m.GetGenericArguments().Length != 2)
                    continue;
                ParameterInfo[] p = m.GetParameters();
                if (p.Length == 2 && p[1].ParameterType.GetGenericArguments().Length == 2)
                    return m;
            }
            return null;
        }

        /// <summary><c>Enumerable.SelectMany(Enumerable.Range(0, 1), observe)</c>: each enumeration calls <paramref name="observe"/> once.</summary>
        static object Lazy(MethodInfo selectMany, MethodInfo range, Func<int, IEnumerable<object>> observe)
        {
            object[] one = new object[2];
            one[0] = 0;
            one[1] = 1;
            object[] many = new object[2];
            many[0] = range.Invoke(null, one);
            many[1] = observe;
            return selectMany.MakeGenericMethod(typeof(int), typeof(object)).Invoke(null, many);
        }

        /// <summary>
        /// Creates the observable counter <paramref name="name"/> of <paramref name="meter"/> whose callback is
        /// <c>Enumerable.Cast&lt;Measurement&lt;T&gt;&gt;</c> bound to <paramref name="lazy"/> (see the class).
        /// </summary>
        static void Add(object meter, MethodInfo counter, MethodInfo cast, object lazy, string name, string unit, string description)
        {
            Type callback = counter.GetParameters()[1].ParameterType;
            Type measurement = callback.GetGenericArguments()[0].GetGenericArguments()[0];
            Delegate observeValues = Delegate.CreateDelegate(callback, lazy, cast.MakeGenericMethod(measurement));
            object[] args = new object[4];
            args[0] = name;
            args[1] = observeValues;
            args[2] = unit;
            args[3] = description;
            counter.Invoke(meter, args);
        }

        IEnumerable<object> ObserveAcquisitions(int unused)
        {
            return Observe(Acquisitions);
        }

        IEnumerable<object> ObserveContentions(int unused)
        {
            return Observe(Contentions);
        }

        IEnumerable<object> ObserveWait(int unused)
        {
            return Observe(WaitTime);
        }

        IEnumerable<object> ObserveHold(int unused)
        {
            return Observe(HoldTime);
        }

        /// <summary>
        /// The boxed measurements of instrument <paramref name="instrument"/>, one per series; none when
        /// anything fails. The listener's thread is the run-time's own meanwhile (its locks are not timed).
        /// </summary>
        internal object[] Observe(int instrument)
        {
            try {
                lock (gate) {
                    ThreadRecord t = owner.Thread();
                    bool busy = t.Busy;
                    t.Busy = true;
                    try {
                        if (observed[instrument])
                            Refresh();
                        observed[instrument] = true;
                        return Measurements(instrument);
                    } finally {
                        t.Busy = busy;
                    }
                }
            } catch (Exception) {
                return new object[0];
            }
        }

        /// <summary>A new snapshot of every copy's sites, summed into the series (new series as room allows), and recorded into the histograms.</summary>
        void Refresh()
        {
            for (int i = 0; i < Instruments; i++)
                observed[i] = false;
            Array.Clear(acquired, 0, maxSeries);
            Array.Clear(contended, 0, maxSeries);
            Array.Clear(waitS, 0, maxSeries);
            Array.Clear(holdS, 0, maxSeries);
            List<SiteTotals> sites = Runtime.Gather();
            Histogram[] wait = histograms != null ? new Histogram[maxSeries] : null, hold = histograms != null ? new Histogram[maxSeries] : null;
            for (int k = 0; k < sites.Count; k++) {
                SiteTotals s = sites[k];
                string key = s.Method + "\n" + s.File + "\n" + s.Line.ToString(CultureInfo.InvariantCulture);
                int i;
                if (!series.TryGetValue(key, out i)) {
                    if (tags.Count >= maxSeries)
                        continue;
                    i = tags.Count;
                    series[key] = i;
                    tags.Add(Tags(s));
                }
                acquired[i] += s.Stats.Acquisitions;
                contended[i] += s.Stats.Contended;
                waitS[i] += s.Stats.Wait.Total / 1e9;
                holdS[i] += s.Stats.Hold.Total / 1e9;
                if (wait != null) {
                    (wait[i] ?? (wait[i] = new Histogram())).Add(s.Stats.Wait);
                    (hold[i] ?? (hold[i] = new Histogram())).Add(s.Stats.Hold);
                }
            }
            for (int i = 0; wait != null && i < tags.Count; i++)
                if (wait[i] != null)
                    histograms.Record(i, tags[i], wait[i], hold[i]);
        }

        /// <summary>A site's tags: its method, and its source file and line when known (a site without a PDB has only the method).</summary>
        static KeyValuePair<string, object>[] Tags(SiteTotals s)
        {
            bool source = s.File.Length > 0 && s.Line > 0;
            KeyValuePair<string, object>[] t = new KeyValuePair<string, object>[source ? 3 : 1];
            t[0] = new KeyValuePair<string, object>("code.function.name", s.Method);
            if (source) {
                t[1] = new KeyValuePair<string, object>("code.file.path", s.File);
                t[2] = new KeyValuePair<string, object>("code.line.number", s.Line);
            }
            return t;
        }

        object[] Measurements(int instrument)
        {
            object[] result = new object[tags.Count];
            object[] args = new object[2];
            for (int i = 0; i < result.Length; i++) {
                args[1] = tags[i];
                if (instrument == Acquisitions)
                    args[0] = acquired[i];
                else if (instrument == Contentions)
                    args[0] = contended[i];
                else if (instrument == WaitTime)
                    args[0] = waitS[i];
                else
                    args[0] = holdS[i];
                result[i] = (instrument <= Contentions ? longMeasurement : doubleMeasurement).Invoke(args);
            }
            return result;
        }
    }
}
