// A test template for the merger: each construct the run-time may use, once - static and instance
// classes, a struct, [ThreadStatic] fields, a framework generic (Dictionary<string, long>), string
// literals, try/catch/finally, a nested type, a constant, a property, an explicit interface method,
// calls to Console, Environment, Stopwatch, Interlocked, Thread and Monitor - and the methods the
// merger substitutes (Clock, Defaults).
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;

namespace LockTime.MergeTest
{
    // The clock. Substituted when the target's framework has no Stopwatch (Mono's mscorlib).
    internal static class Clock
    {
        public static long Timestamp()
        {
            return Stopwatch.GetTimestamp();
        }

        public static long Frequency()
        {
            return Stopwatch.Frequency;
        }
    }

    // A baked default and a table the weaver writes: substituted at merge time.
    internal static class Defaults
    {
        public static string Sink()
        {
            return "template-sink";
        }

        public static long Load()
        {
            return -1;
        }
    }

    internal struct Span
    {
        public long Start;
        public long End;

        public long Length()
        {
            return End - Start;
        }
    }

    internal sealed class Counter : IDisposable
    {
        private readonly string name;
        private long count;

        public Counter(string name)
        {
            this.name = name;
        }

        public long Add(long n)
        {
            return Interlocked.Add(ref count, n);
        }

        public long Count
        {
            get { return count; }
        }

        public string Describe()
        {
            return name + "=" + Count.ToString();
        }

        void IDisposable.Dispose()
        {
            count = -1;
        }
    }

    internal static class Registry
    {
        public const string Separator = ";";

        [ThreadStatic]
        private static long[] perThread;

        private static readonly Dictionary<string, long> totals = new Dictionary<string, long>();
        private static readonly object gate = new object();

        public static long Record(string site, long ticks)
        {
            lock (gate)
            {
                long v;
                totals.TryGetValue(site, out v);
                totals[site] = v + ticks;
                return v + ticks;
            }
        }

        public static long Local(int i)
        {
            if (perThread == null)
                perThread = new long[8];
            return ++perThread[i & 7];
        }

        public static int Sites()
        {
            int n = 0;
            foreach (KeyValuePair<string, long> kv in totals)
                if (kv.Value > 0)
                    n++;
            return n;
        }

        internal static class Parse
        {
            public static int Number(string s)
            {
                int result = -1;
                try
                {
                    result = int.Parse(s);
                }
                catch (FormatException)
                {
                    result = -2;
                }
                finally
                {
                    Interlocked.Increment(ref calls);
                }
                return result;
            }

            public static int calls;
        }
    }

    internal static class Probe
    {
        // What the host prints: the same for every target the template is merged into but for the
        // substituted sink and table (Defaults).
        public static string Run()
        {
            long t0 = Clock.Timestamp();
            Registry.Record("a", 2);
            Registry.Record("b", 3);
            long a = Registry.Record("a", 5);
            long local = Registry.Local(3) + Registry.Local(3);
            var counter = new Counter("hits");
            counter.Add(40);
            counter.Add(2);
            string hits = counter.Describe();
            ((IDisposable)counter).Dispose();
            var span = new Span { Start = t0, End = t0 + 5 };
            int parsed = Registry.Parse.Number("42") + Registry.Parse.Number("x");
            string env = Environment.GetEnvironmentVariable("LOCKTIME_MERGE_PROBE") ?? "unset";
            int thread = Thread.CurrentThread.ManagedThreadId > 0 ? 1 : 0;
            long t1 = Clock.Timestamp();
            string clock = Clock.Frequency() > 0 && t1 >= t0 ? "clock ok" : "clock broken";
            Console.Error.WriteLine("LockTime merge probe on stderr");
            return string.Join(Registry.Separator, new[] {
                "sink=" + Defaults.Sink(), "a=" + a.ToString(), "sites=" + Registry.Sites().ToString(),
                "load=" + Defaults.Load().ToString(),
                "local=" + local.ToString(), hits, "disposed=" + counter.Count.ToString(),
                "span=" + span.Length().ToString(), "parsed=" + parsed.ToString(),
                "calls=" + Registry.Parse.calls.ToString(), "env=" + env, "thread=" + thread.ToString(), clock });
        }
    }
}
