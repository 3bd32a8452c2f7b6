// Registry.cs - where every copy of the run-time in a process meets: one AppDomain slot, versioned.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>
    /// The process-wide registry: <c>AppDomain.CurrentDomain.GetData(Slot)</c> holds an <c>object[]</c>
    /// of framework types only, so copies merged into different assemblies - and by different LockTime
    /// versions - can read it. Version 1's layout (weaver/runtime/README.md, "One registry per process"):
    /// <list type="table">
    /// <item>[0] <c>int</c> 1, the layout's version</item>
    /// <item>[1] <c>Action&lt;object[]&gt;</c> queues a line as an entry: a whole line (<see cref="LineWriter.TextEntry"/>), a slow-lock line of a copy whose registry has no entry 8 (<see cref="LineWriter.Entry"/>)</item>
    /// <item>[2] <c>List&lt;Func&lt;object[]&gt;&gt;</c> every copy's snapshot (<see cref="SiteTotals"/> rows); lock it to use it</item>
    /// <item>[3] <c>Dictionary&lt;string, bool&gt;</c> the warnings already printed; lock it to use it</item>
    /// <item>[4] <c>Thread</c> the line writer's thread</item>
    /// <item>[5] <c>object[] { Func&lt;string[], string[], int&gt; join, Action&lt;object, int&gt; enter, Action&lt;object&gt; exit, Action&lt;object, int, bool&gt; waiting, Func&lt;object[]&gt; deadlocks }</c> the lock order (<see cref="LockOrder"/>; <c>waiting</c>, a thread about to block, came later: an array of three has none; <c>deadlocks</c>, those found (<see cref="LockOrder.DeadlockRows"/>), which the lock gate of a test run reads, later still: an array of four has none)</item>
    /// <item>[6] <c>List&lt;Func&lt;object, string[]&gt;&gt;</c> every copy's holder finder (<see cref="Collector.Holder"/>); lock it to use it</item>
    /// <item>[7] <c>List&lt;Action&gt;</c> every copy's "the calling thread works for the run-time" (<see cref="Collector.MarkBusy"/>): the owner calls them all on the thread that writes the summary and report; lock it to use it</item>
    /// <item>[8] <c>Action&lt;object, int, long, long, object&gt;</c> queues a slow-lock line as a record (<see cref="LineWriter.Record"/>): the copy's line source, site, hold and wait in ns, holder</item>
    /// <item>[9] <c>List&lt;Func&lt;bool, int&gt;&gt;</c> every copy's sweep of the records of threads that ended (<see cref="Collector.Sweep"/>): the owner's run-time thread (<see cref="Runtime"/>'s MainLoop) calls them all; lock it to use it</item>
    /// <item>[10] <c>object[] { EventSource source, List&lt;Action&lt;object&gt;&gt; joins }</c>: the process's <c>EventSource</c> "LockTime" once the owner's run-time thread made it (null until then, or when the framework has none), and the copies' <see cref="Events.Join"/>s that thread has yet to finish with it (each leaves the list once done: <see cref="Events"/>); lock the list to use it</item>
    /// <item>[11] <c>List&lt;Action&lt;bool&gt;&gt;</c> every copy's roll-up of the slow-lock lines its limit held back (<see cref="Collector.RollUp"/>): the owner's run-time thread calls them all once a second (false: those due), its exit with true (all, before the summary); lock it to use it</item>
    /// <item>[12] <c>Action&lt;string[], string, long[]&gt;</c> adds a slow lock to the process's timeline (<see cref="Timeline.Add"/>): the site's name, the thread's name, the event's longs; null when the timeline is off</item>
    /// <item>[13] <c>Action</c> waits for room in the line queue (<see cref="LineWriter.AwaitRoom"/>): a copy calls it before it queues a line on a thread that holds none of its locks</item>
    /// <item>[14] <c>List&lt;Func&lt;bool&gt;&gt;</c> every copy's "the calling thread holds one of its timed locks" (<see cref="Collector.Holding"/>): the wait for room (entry 13) asks them all, so that a thread holding another copy's lock does not wait; lock it to use it</item>
    /// <item>[15] <c>Action</c> writes what the exit writes, now, as at SIGTERM (<see cref="Runtime.Terminating"/>): a program's SIGINT handler, in whichever copy, calls it (<see cref="Signals.WatchInterrupt"/>)</item>
    /// </list>
    /// Entries 5 to 15 came after the first layout of version 1: a registry without them is still
    /// version 1, and its copies follow no lock order, find holders only in their own copy, a copy
    /// that does not own it records the locks the exit's writing takes (a woven framework's), they
    /// queue slow-lock lines as entries through entry 1, and a copy that does not own it sweeps the
    /// records of ended threads only when a summary, report or metrics reading merges them, and a copy
    /// gives no events (<see cref="Events"/>) when its registry has no entry 10, and every slow-lock line (no
    /// limit: nothing would roll up what it held back) when its registry has no entry 11, and keeps no timeline without entry 12, and never waits for room in the line queue without entry 13; without entry 14 a thread waits for room while it holds another copy's lock; without entry 15 a SIGINT writes nothing.
    /// The first copy to start creates it and owns the writer, the summary and the report; later
    /// copies add their snapshot. Joining locks the <c>AppDomain</c> object, once per copy.
    /// </summary>
    [CompilerGenerated]
    internal static class Registry
    {
        internal const string Slot = "LockTime.Runtime.Registry";
        internal const int Version = 1;
        internal const int Length = 5;
        /// <summary>The length with every entry this layout defines (the later ones optional, see above).</summary>
        internal const int FullLength = 16;

        /// <summary>A new registry of version 1 around <paramref name="writer"/> (its thread not yet started), <paramref name="order"/>, <paramref name="timeline"/> (null: none) and the owner's writing at a signal, <paramref name="atSignal"/>.</summary>
        internal static object[] Create(LineWriter writer, Thread writerThread, LockOrder order, Timeline timeline, Action atSignal)
        {
            object[] r = new object[FullLength];
            r[0] = Version;
            r[1] = new Action<object[]>(writer.Enqueue);
            r[2] = new List<Func<object[]>>();
            r[3] = new Dictionary<string, bool>();
            r[4] = writerThread;
            object[] o = new object[5];
            o[0] = new Func<string[], string[], int>(order.Join);
            o[1] = new Action<object, int>(order.Enter);
            o[2] = new Action<object>(order.Exit);
            o[3] = new Action<object, int, bool>(order.Waiting);
            o[4] = new Func<object[]>(order.DeadlockRows);
            r[5] = o;
            r[6] = new List<Func<object, string[]>>();
            r[7] = new List<Action>();
            r[8] = new Action<object, int, long, long, object>(writer.Record);
            r[9] = new List<Func<bool, int>>();
            object[] events = new object[2];
            events[1] = new List<Action<object>>();
            r[10] = events;
            r[11] = new List<Action<bool>>();
            if (timeline != null)
                r[12] = new Action<string[], string, long[]>(timeline.Add);
            r[13] = new Action(writer.AwaitRoom);
            r[14] = writer.Holding;
            r[15] = atSignal;
            return r;
        }

        /// <summary>The lock order's delegates (entry 5), or null when the registry has none.</summary>
        internal static object[] Order(object[] registry)
        {
            object[] o = registry.Length > 5 ? registry[5] as object[] : null;
            if (o == null || o.Length < 3 || !(o[0] is Func<string[], string[], int>) || !(o[1] is Action<object, int>) ||
                !(o[2] is Action<object>))
                return null;
            return o;
        }

        /// <summary>The holder finders (entry 6), or null when the registry has none.</summary>
        internal static List<Func<object, string[]>> Finders(object[] registry)
        {
            return registry.Length > 6 ? registry[6] as List<Func<object, string[]>> : null;
        }

        /// <summary>Every copy's busy marker (entry 7), or null when the registry has none.</summary>
        internal static List<Action> Markers(object[] registry)
        {
            return registry.Length > 7 ? registry[7] as List<Action> : null;
        }

        /// <summary>The queue of line records (entry 8), or null when the registry has none: lines are then entries (entry 1).</summary>
        internal static Action<object, int, long, long, object> Records(object[] registry)
        {
            return registry.Length > 8 ? registry[8] as Action<object, int, long, long, object> : null;
        }

        /// <summary>Every copy's sweep (entry 9), or null when the registry has none.</summary>
        internal static List<Func<bool, int>> Sweeps(object[] registry)
        {
            return registry.Length > 9 ? registry[9] as List<Func<bool, int>> : null;
        }

        /// <summary>The process's EventSource and the joins to call (entry 10), or null when the registry has none.</summary>
        internal static object[] Events(object[] registry)
        {
            object[] events = registry.Length > 10 ? registry[10] as object[] : null;
            return events != null && events.Length == 2 && events[1] is List<Action<object>> ? events : null;
        }

        /// <summary>Every copy's roll-up of held-back lines (entry 11), or null when the registry has none.</summary>
        internal static List<Action<bool>> RollUps(object[] registry)
        {
            return registry.Length > 11 ? registry[11] as List<Action<bool>> : null;
        }

        /// <summary>The process's timeline (entry 12), or null when the registry has none or it is off.</summary>
        internal static Action<string[], string, long[]> Timeline(object[] registry)
        {
            return registry.Length > 12 ? registry[12] as Action<string[], string, long[]> : null;
        }

        /// <summary>The wait for room in the line queue (entry 13), or null when the registry has none.</summary>
        internal static Action Room(object[] registry)
        {
            return registry.Length > 13 ? registry[13] as Action : null;
        }

        /// <summary>Every copy's "the calling thread holds one of its timed locks" (entry 14), or null when the registry has none.</summary>
        internal static List<Func<bool>> Holding(object[] registry)
        {
            return registry.Length > 14 ? registry[14] as List<Func<bool>> : null;
        }

        /// <summary>The owner's writing at a signal (entry 15), or null when the registry has none.</summary>
        internal static Action AtSignal(object[] registry)
        {
            return registry.Length > 15 ? registry[15] as Action : null;
        }

        /// <summary>True when <paramref name="data"/> is a registry of this version.</summary>
        internal static bool IsCurrent(object data)
        {
            object[] r = data as object[];
            return r != null && r.Length >= Length && r[0] is int && (int)r[0] == Version &&
                   r[1] is Action<object[]> && r[2] is List<Func<object[]>> && r[3] is Dictionary<string, bool> &&
                   r[4] is Thread;
        }

        /// <summary>A readable name for what another copy left in the slot.</summary>
        internal static string Describe(object data)
        {
            object[] r = data as object[];
            if (r != null && r.Length > 0 && r[0] is int)
                return "registry version " + ((int)r[0]).ToString(System.Globalization.CultureInfo.InvariantCulture);
            return "a " + data.GetType().FullName;
        }

        /// <summary>Adds a copy's snapshot.</summary>
        internal static void AddSource(object[] registry, Func<object[]> snapshot)
        {
            List<Func<object[]>> sources = (List<Func<object[]>>)registry[2];
            lock (sources)
                sources.Add(snapshot);
        }

        /// <summary>Every copy's snapshot.</summary>
        internal static Func<object[]>[] Sources(object[] registry)
        {
            List<Func<object[]>> sources = (List<Func<object[]>>)registry[2];
            lock (sources)
                return sources.ToArray();
        }

        /// <summary>
        /// The items of one of the registry's lists of every copy's delegates (<see cref="Finders"/>, <see cref="Holding"/>),
        /// which copies only add to: <paramref name="copy"/>, an array of them taken under the list's lock, while it has as
        /// many items as the list, else a new copy. So a caller on a lock's path locks nothing and allocates nothing but when
        /// a copy joined (64 threads on 8 locks all took one list's lock at every contended acquisition). Never null.
        /// </summary>
        internal static Delegate[] Items(System.Collections.ICollection list, ref Delegate[] copy)
        {
            Delegate[] items = Volatile.Read(ref copy);
            if (items != null && items.Length == list.Count)
                return items;
            lock (list) {
                items = new Delegate[list.Count];
                list.CopyTo(items, 0);
            }
            Volatile.Write(ref copy, items);
            return items;
        }

        /// <summary>True the first time <paramref name="warning"/> is given in this registry.</summary>
        internal static bool FirstTime(object[] registry, string warning)
        {
            Dictionary<string, bool> warned = (Dictionary<string, bool>)registry[3];
            lock (warned) {
                if (warned.ContainsKey(warning))
                    return false;
                warned[warning] = true;
                return true;
            }
        }
    }
}
