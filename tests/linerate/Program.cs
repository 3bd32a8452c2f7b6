// Slow locks by the thousand (tests/integration/linerate.sh; built for .NET and with mcs for Mono): the main thread takes
// Solo N times, sleeping PAUSE ms after each, while four threads take Shared N times each; prints the milliseconds from
// before the first lock to after the last. Usage: LineRate N [PAUSE]
using System;
using System.Diagnostics;
using System.Globalization;
using System.Threading;

static class Program
{
    static readonly object Solo = new object(), Shared = new object();

    static void Main(string[] args)
    {
        int n = int.Parse(args[0], CultureInfo.InvariantCulture);
        int pause = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 0;
        Stopwatch watch = Stopwatch.StartNew();
        Thread[] workers = new Thread[4];
        for (int i = 0; i < workers.Length; i++) {
            workers[i] = new Thread(Worker);
            workers[i].Start(n);
        }
        for (int i = 0; i < n; i++) {
            lock (Solo) { } // site: solo
            if (pause > 0)
                Thread.Sleep(pause);
        }
        foreach (Thread t in workers)
            t.Join();
        Console.WriteLine("elapsed_ms " + watch.ElapsedMilliseconds.ToString(CultureInfo.InvariantCulture));
    }

    static void Worker(object n)
    {
        for (int i = 0; i < (int)n; i++)
            lock (Shared) { } // site: shared
    }
}
