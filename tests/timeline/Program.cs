// A thread named "holder" holds a lock (Ledger.Post) 100 ms once the three threads "waiter-1" to "waiter-3" are
// about to take it (Ledger.Read), so that each waits behind that hold. Each thread prints what it measured with
// its own Stopwatch, one line "measured: ROLE THREAD_ID INNER_MS OUTER_MS": the holder its hold between the
// lock's entry and its exit (inner) and around the whole lock statement (outer), a waiter its wait from before
// the lock statement to inside it (outer; inner 0). For tests/integration/timeline.sh.
using System;
using System.Diagnostics;
using System.Globalization;
using System.Threading;

namespace Books
{
    class Ledger
    {
        readonly object gate = new object();

        public void Post(ManualResetEventSlim held, CountdownEvent coming)
        {
            long h0 = Stopwatch.GetTimestamp(), h1, h2;
            lock (gate) { // Post site
                h1 = Stopwatch.GetTimestamp();
                held.Set();
                coming.Wait(); // every waiter is about to take the lock
                Thread.Sleep(100);
                h2 = Stopwatch.GetTimestamp();
            }
            Program.Measured("hold", h2 - h1, Stopwatch.GetTimestamp() - h0);
        }

        public void Read(CountdownEvent coming)
        {
            coming.Signal();
            long w0 = Stopwatch.GetTimestamp(), w1;
            lock (gate) { // Read site
                w1 = Stopwatch.GetTimestamp();
            }
            Program.Measured("wait", 0, w1 - w0);
        }
    }

    static class Program
    {
        static readonly string[] measured = new string[4];
        static int n;

        /// <summary>Keeps the calling thread's line, printed by Main at the end (no lock of the program's own meanwhile).</summary>
        internal static void Measured(string role, long inner, long outer)
        {
            measured[Interlocked.Increment(ref n) - 1] =
                string.Format(CultureInfo.InvariantCulture, "measured: {0} {1} {2:F6} {3:F6}", role, Environment.CurrentManagedThreadId,
                              inner * 1000.0 / Stopwatch.Frequency, outer * 1000.0 / Stopwatch.Frequency);
        }

        static void Main()
        {
            var ledger = new Ledger();
            using var coming = new CountdownEvent(3);
            using var held = new ManualResetEventSlim();
            var holder = new Thread(() => ledger.Post(held, coming)) { Name = "holder" };
            holder.Start();
            held.Wait();
            var waiters = new Thread[3];
            for (int i = 0; i < waiters.Length; i++) {
                waiters[i] = new Thread(() => ledger.Read(coming)) { Name = "waiter-" + (i + 1).ToString(CultureInfo.InvariantCulture) };
                waiters[i].Start();
            }
            foreach (var t in waiters)
                t.Join();
            holder.Join();
            foreach (string line in measured)
                Console.WriteLine(line);
        }
    }
}
