// Events.cs - the process's EventSource "LockTime": an event per slow lock, potential deadlock and deadlock, for EventPipe and ETW.
using System;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>
    /// One copy's way to the process's <c>EventSource</c> named <c>LockTime</c> (docs/tracing.md):
    /// <c>dotnet-trace collect --providers LockTime</c>, PerfView and dotnet-monitor record its events
    /// with EventPipe's call stacks, beside the runtime's own. Events (self-describing, TraceLogging):
    /// <c>SlowLock</c> (level Informational, payload <see cref="SlowLockEvent"/>), <c>PotentialDeadlock</c>
    /// (Warning) and <c>Deadlock</c> (Error), both with <see cref="CycleEvent"/>. The level chooses them
    /// (<c>--providers LockTime::3</c>: the cycles only), not keywords: EventPipe leaves out an event
    /// with keywords from a session that names none (<c>--providers LockTime</c> recorded no event of
    /// keyword 0x1), so the events have none.
    /// <para>
    /// The source is one per process: the registry's owner makes it on the run-time's thread
    /// (<see cref="Create"/>) and keeps it in registry entry 10 (a framework type: every copy can hold
    /// it), beside the list of the copies' <see cref="Join"/>s, which the same thread calls (every copy
    /// adds its own as it starts): the reflection over the source runs there, never on a lock's thread.
    /// A slow lock released before its copy joined (the process's first ~50 ms: making the source took
    /// 35 ms and a join 10 ms of a fresh process here) gives no event. The template is netstandard2.0
    /// and merges into frameworks whose <c>EventSource</c> the merger cannot name (it lives outside
    /// System.Runtime), so the source and its methods are found by reflection; a framework without them
    /// gives no events, and Mono (no EventPipe) none that a tool records: nothing else changes. When no session listens, an event
    /// costs one call to <c>EventSource.IsEnabled()</c>; nothing is added to the lock's path: only slow
    /// locks (after the release), and cycles, once each, give events.
    /// </para>
    /// </summary>
    [CompilerGenerated]
    [System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessage("Trimming", "IL2026", Justification = "Write<T> serializes the payload classes' properties, which their constructors' DynamicDependency keeps")]
    [System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessage("Trimming", "IL2060", Justification = "Write<T> is kept by Create's DynamicDependency; T is a payload class of the run-time")]
    [System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessage("Trimming", "IL2070", Justification = "EventSource's members looked for are kept by Create's DynamicDependency")]
    [System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessage("Trimming", "IL2075", Justification = "EventSource's members looked for are kept by Create's DynamicDependency")]
    [System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessage("AOT", "IL3050", Justification = "Write<T> over a reference type shares its code; an instantiation without code throws, which is caught: no event")]
    internal sealed class Events
    {
        internal const string SourceName = "LockTime";
        /// <summary>The events' levels (<c>EventLevel</c>): a session at a level gets the events at it and below.</summary>
        internal const int Error = 2, Warning = 3, Informational = 4;
        /// <summary>A slow lock's <c>HoldNs</c> when the call did not acquire (a failed try).</summary>
        internal const long NotAcquired = -1;
        /// <summary>A slow lock's <c>HoldNs</c> when it acquired but its hold is not measured (a counting <c>SemaphoreSlim</c>).</summary>
        internal const long HoldNotMeasured = -2;
        const int SelfDescribing = 8; /* EventSourceSettings.EtwSelfDescribingEventFormat */
        const string Tracing = "System.Diagnostics.Tracing.";

        readonly SiteTable sites;
        object source;
        Func<bool> enabled;    /* the source's IsEnabled, set last by Join: null, no events */
        MethodInfo writeSlow, writeCycle;
        object slowOptions, potentialOptions, deadlockOptions; /* boxed EventSourceOptions */

        /// <summary>A copy's events, given once it joined the process's source; <paramref name="sites"/> names the copy's sites.</summary>
        internal Events(SiteTable sites)
        {
            this.sites = sites;
        }

        /// <summary>
        /// The process's source: the <c>EventSource</c> named <c>LockTime</c> that the process has already (made by
        /// a copy of another registry: a process holds one source of a name, a second one gets no session), else
        /// a new one, <c>new EventSource("LockTime", EtwSelfDescribingEventFormat)</c>. Null when the framework has
        /// none. Never throws. The registry's owner calls it once, on the run-time's thread.
        /// </summary>
        [System.Diagnostics.CodeAnalysis.DynamicDependency("#ctor(System.String,System.Diagnostics.Tracing.EventSourceSettings)", "System.Diagnostics.Tracing.EventSource", "System.Private.CoreLib")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("GetSources", "System.Diagnostics.Tracing.EventSource", "System.Private.CoreLib")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("get_Name", "System.Diagnostics.Tracing.EventSource", "System.Private.CoreLib")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("IsEnabled", "System.Diagnostics.Tracing.EventSource", "System.Private.CoreLib")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("Write``1(System.String,System.Diagnostics.Tracing.EventSourceOptions,``0)", "System.Diagnostics.Tracing.EventSource", "System.Private.CoreLib")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("set_Level(System.Diagnostics.Tracing.EventLevel)", "System.Diagnostics.Tracing.EventSourceOptions", "System.Private.CoreLib")]
        internal static object Create()
        {
            try {
                Type type = Type.GetType(Tracing + "EventSource", false);
                Type settings = Type.GetType(Tracing + "EventSourceSettings", false);
                if (type == null || settings == null)
                    return null;
                object existing = Existing(type);
                if (existing != null)
                    return existing;
                Type[] signature = new Type[2];
                signature[0] = typeof(string);
                signature[1] = settings;
                ConstructorInfo make = type.GetConstructor(signature);
                if (make == null)
                    return null;
                object[] args = new object[2];
                args[0] = SourceName;
                args[1] = Enum.ToObject(settings, SelfDescribing);
                return make.Invoke(args);
            } catch (Exception) {
                return null;
            }
        }

        /// <summary>The source of type <paramref name="type"/> itself (not a program's own subclass) named LockTime that the process has, or null.</summary>
        static object Existing(Type type)
        {
            MethodInfo all = type.GetMethod("GetSources", Type.EmptyTypes);
            PropertyInfo name = type.GetProperty("Name");
            System.Collections.IEnumerable sources = all != null ? all.Invoke(null, null) as System.Collections.IEnumerable : null;
            if (sources == null || name == null)
                return null;
            foreach (object es in sources)
                if (es != null && es.GetType() == type && (name.GetValue(es, null) as string) == SourceName)
                    return es;
            return null;
        }

        /// <summary>
        /// Gives the event of a slow lock at site <paramref name="site"/> when a session listens: hold and wait
        /// in nanoseconds (<paramref name="holdNs"/> <see cref="NotAcquired"/> or <see cref="HoldNotMeasured"/>), <paramref name="holder"/> the site it
        /// waited behind ({ assembly, method, location }) or null. Called on the lock's thread after the
        /// release, so that the event's stack is the code that took the lock. Never throws.
        /// </summary>
        internal void Slow(int site, long holdNs, long waitNs, string[] holder)
        {
            try {
                if (!Enabled() || (uint)site >= (uint)sites.Count())
                    return;
                SlowLockEvent e = new SlowLockEvent(sites.Assembly, sites.Methods[site], sites.Files[site], sites.Lines[site],
                                                    sites.Locations[site], sites.Kinds[site], waitNs, holdNs, holder);
                Write(writeSlow, "SlowLock", slowOptions, e);
            } catch (Exception) {
            }
        }

        /// <summary>
        /// Gives the event of a potential deadlock (<paramref name="deadlock"/> false) or a deadlock: its
        /// <paramref name="line"/> as LockTime prints it. Never throws.
        /// </summary>
        internal void Cycle(bool deadlock, string line)
        {
            try {
                if (!Enabled())
                    return;
                Write(writeCycle, deadlock ? "Deadlock" : "PotentialDeadlock", deadlock ? deadlockOptions : potentialOptions,
                      new CycleEvent(line));
            } catch (Exception) {
            }
        }

        /// <summary>Whether this copy joined the process's source and a session listens to it.</summary>
        bool Enabled()
        {
            Func<bool> f = Volatile.Read(ref enabled);
            return f != null && f();
        }

        /// <summary>
        /// Joins the process's source <paramref name="es"/>: finds the methods this copy calls on it. Called
        /// once, by the owner's run-time thread (registry entry 10). On any failure this copy gives no events.
        /// Never throws.
        /// </summary>
        internal void Join(object es)
        {
            try {
                Type type = es.GetType();
                Type optionsType = Type.GetType(Tracing + "EventSourceOptions", false);
                MethodInfo write = optionsType == null ? null : WriteOf(type, optionsType);
                MethodInfo isEnabled = type.GetMethod("IsEnabled", Type.EmptyTypes);
                if (write == null || isEnabled == null)
                    return;
                source = es;
                writeSlow = write.MakeGenericMethod(typeof(SlowLockEvent));
                writeCycle = write.MakeGenericMethod(typeof(CycleEvent));
                slowOptions = Options(optionsType, Informational);
                potentialOptions = Options(optionsType, Warning);
                deadlockOptions = Options(optionsType, Error);
                Volatile.Write(ref enabled, (Func<bool>)Delegate.CreateDelegate(typeof(Func<bool>), es, isEnabled));
            } catch (Exception) {
            }
        }

        /// <summary><c>EventSource.Write&lt;T&gt;(string, EventSourceOptions, T)</c>, or null.</summary>
        static MethodInfo WriteOf(Type type, Type optionsType)
        {
            MethodInfo[] methods = type.GetMethods();
            for (int i = 0; i < methods.Length; i++) {
                MethodInfo m = methods[i];
                if (m.Name != "Write" || !m.IsGenericMethodDefinition)
                    continue;
                ParameterInfo[] p = m.GetParameters();
                if (p.Length == 3 && p[0].ParameterType == typeof(string) && p[1].ParameterType == optionsType)
                    return m;
            }
            return null;
        }

        /// <summary>A boxed <c>EventSourceOptions</c> of level <paramref name="level"/>, no keywords.</summary>
        static object Options(Type optionsType, int level)
        {
            object options = Array.CreateInstance(optionsType, 1).GetValue(0); /* a default one, boxed */
            PropertyInfo property = optionsType.GetProperty("Level");
            property.SetValue(options, Enum.ToObject(property.PropertyType, level), null);
            return options;
        }

        /// <summary>Writes one event through <paramref name="write"/> (a <c>Write&lt;T&gt;</c>) on the process's source.</summary>
        void Write(MethodInfo write, string name, object options, object payload)
        {
            object[] args = new object[3];
            args[0] = name;
            args[1] = options;
            args[2] = payload;
            write.Invoke(source, args);
        }
    }

    /// <summary>
    /// The payload of the event <c>SlowLock</c> (<see cref="Events.Slow"/>): what the slow-lock line says,
    /// by field. Its public properties are the event's fields, in this order, as TraceLogging reads them.
    /// </summary>
    [CompilerGenerated]
    internal sealed class SlowLockEvent
    {
        readonly string assembly, method, file, location, kind, holderMethod, holderLocation;
        readonly int line;
        readonly long waitNs, holdNs;

        [System.Diagnostics.CodeAnalysis.DynamicDependency("Assembly")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("Method")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("File")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("Line")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("Location")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("Kind")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("WaitNs")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("HoldNs")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("HolderMethod")]
        [System.Diagnostics.CodeAnalysis.DynamicDependency("HolderLocation")]
        internal SlowLockEvent(string assembly, string method, string file, int line, string location, string kind,
                               long waitNs, long holdNs, string[] holder)
        {
            this.assembly = assembly;
            this.method = method;
            this.file = file;
            this.line = line;
            this.location = location;
            this.kind = kind;
            this.waitNs = waitNs;
            this.holdNs = holdNs;
            holderMethod = holder != null ? holder[1] : "";
            holderLocation = holder != null ? holder[2] : "";
        }

        /// <summary>The woven assembly's simple name.</summary>
        public string Assembly { get { return assembly; } }
        /// <summary>The method that took the lock, as the line names it.</summary>
        public string Method { get { return method; } }
        /// <summary>The source file's full path, "" when unknown.</summary>
        public string File { get { return file; } }
        /// <summary>The source line, 0 when unknown.</summary>
        public int Line { get { return line; } }
        /// <summary><c>File.cs:42</c>, or the IL offset without a PDB.</summary>
        public string Location { get { return location; } }
        /// <summary>The lock call, e.g. <c>Monitor.Enter</c>.</summary>
        public string Kind { get { return kind; } }
        /// <summary>The wait, in nanoseconds.</summary>
        public long WaitNs { get { return waitNs; } }
        /// <summary>The hold, in nanoseconds; -1 when the call did not acquire.</summary>
        public long HoldNs { get { return holdNs; } }
        /// <summary>The method of the site the wait was behind, "" when none or unknown.</summary>
        public string HolderMethod { get { return holderMethod; } }
        /// <summary>The location of the site the wait was behind, "" when none or unknown.</summary>
        public string HolderLocation { get { return holderLocation; } }
    }

    /// <summary>The payload of the events <c>PotentialDeadlock</c> and <c>Deadlock</c> (<see cref="Events.Cycle"/>).</summary>
    [CompilerGenerated]
    internal sealed class CycleEvent
    {
        readonly string text;

        [System.Diagnostics.CodeAnalysis.DynamicDependency("Text")]
        internal CycleEvent(string text)
        {
            this.text = text;
        }

        /// <summary>The line LockTime prints for it.</summary>
        public string Text { get { return text; } }
    }
}
