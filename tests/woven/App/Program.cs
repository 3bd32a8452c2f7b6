// Program.cs - what a woven program's run-time must count exactly: 16 threads taking one lock 1,000
// times each (Count), a holder keeping a lock 60 ms while another thread waits (Hold, Wait), 50
// nested locks around a 20 ms sleep (Nested), a TryEnter that gives up after 5 ms while another
// thread holds its lock 50 ms (GiveUp), the library's lock (Ledger.Post), and two potential
// deadlocks: Transfer both ways, and the app's and the library's locks in both orders. With "settle", a
// lock and a pause come first (Settle).
using System;
using System.Diagnostics;
using System.Threading;
using Woven.Lib;

internal static class Program
{
    private static readonly object counter = new object();
    private static readonly object contended = new object();
    private static readonly object polled = new object();
    private static readonly object[] nest = new object[50];
    private static readonly object account1 = new object(), account2 = new object(), app = new object();
    private static long count;

    // The classic potential deadlock: called once as (1, 2), then as (2, 1), on one thread.
    private static void Transfer(object from, object to)
    {
        lock (from)
        {
            lock (to)
                count++;
        }
    }

    // The app's lock then the library's, and the library's then the app's: a cycle across assemblies.
    private static void AppThenLibrary(Ledger ledger)
    {
        lock (app)
            ledger.Post(0);
    }

    private static void Inside()
    {
        lock (app)
            count++;
    }

    // With the argument "settle": the first lock starts the run-time, whose thread makes its EventSource and
    // joins it some 50 ms later, and the library's first lock its copy, which joins it on that thread too
    // (events.sh); the scenarios come after.
    private static void Settle()
    {
        lock (counter)
            count = 0;
        new Ledger().Post(0);
        Thread.Sleep(500);
    }

    private static void Count()
    {
        for (int i = 0; i < 1000; i++)
            lock (counter)
                count++;
    }

    // The hold as the program measures it (on stderr, "App: measured hold INNER OUTER" in ms): inside the
    // lock statement, and around it; the run-time's hold lies between (woven.sh).
    private static void Hold(ManualResetEventSlim held)
    {
        long inner, outer = Stopwatch.GetTimestamp();
        lock (contended)
        {
            inner = Stopwatch.GetTimestamp();
            held.Set();
            Thread.Sleep(60);
            inner = Stopwatch.GetTimestamp() - inner;
        }
        Measured("hold", inner, Stopwatch.GetTimestamp() - outer);
    }

    private static void Measured(string what, long inner, long outer)
    {
        Console.Error.WriteLine(string.Format(System.Globalization.CultureInfo.InvariantCulture, "App: measured {0} {1:F6} {2:F6}", what,
                                              inner * 1000.0 / Stopwatch.Frequency, outer * 1000.0 / Stopwatch.Frequency));
    }

    // Fails: another thread holds the lock 50 ms.
    private static bool GiveUp()
    {
        if (!Monitor.TryEnter(polled, 5))
            return false;
        Monitor.Exit(polled);
        return true;
    }

    // The wait as the program measures it: from before the lock statement to inside it ("App: measured wait 0 OUTER").
    private static void Wait()
    {
        long outer = Stopwatch.GetTimestamp();
        lock (contended)
        {
            outer = Stopwatch.GetTimestamp() - outer;
            count++;
        }
        Measured("wait", 0, outer);
    }

    private static void Nested(int depth)
    {
        if (depth == nest.Length)
        {
            Thread.Sleep(20);
            return;
        }
        lock (nest[depth])
            Nested(depth + 1);
    }

    // With the argument "reentry", Main runs Reentry.cs's scenarios only; with "busy" Busy.cs's; with "term MS", "interrupt [cancel]", "late", "exitonly" or "modinit" one of Exits.cs's; with "firstnested" FirstNested.cs's. With the argument "throw", Main ends in an unhandled exception after all the locks; with "serve" it
    // goes on posting to the ledger until a signal ends the process (a service stopped by SIGTERM).
    private static void Main(string[] args)
    {
        if (args.Length > 0 && args[0] == "reentry")
        {
            Reentry.Run();
            return;
        }
        if (args.Length > 0 && args[0] == "busy")
        {
            Busy.Run();
            return;
        }
        if (args.Length > 0 && args[0] == "term")
        {
            Exits.Term(int.Parse(args[1]));
            return;
        }
        if (args.Length > 0 && args[0] == "firstnested")
        {
            FirstNested.Run();
            return;
        }
        if (args.Length > 0 && args[0] == "interrupt")
        {
            Exits.Interrupt(args.Length > 1 && args[1] == "cancel");
            return;
        }
        if (args.Length > 0 && args[0] == "late")
        {
            Exits.Late();
            return;
        }
        if (args.Length > 0 && args[0] == "exitonly")
        {
            Exits.ExitOnly();
            return;
        }
        if (args.Length > 0 && args[0] == "modinit")
        {
            Exits.ModuleInitializer();
            return;
        }
        if (args.Length > 0 && args[0] == "settle")
            Settle();
        for (int i = 0; i < nest.Length; i++)
            nest[i] = new object();
        // What the program itself times around the outermost lock statement (on stderr, beside the
        // run-time's lines): no hold the run-time reports may be longer (woven.sh).
        var nestedTime = Stopwatch.StartNew();
        Nested(0);
        Console.Error.WriteLine("App: nested locks took " + nestedTime.Elapsed.TotalMilliseconds.ToString("F3", System.Globalization.CultureInfo.InvariantCulture) + " ms");
        var threads = new Thread[16];
        for (int i = 0; i < threads.Length; i++)
            (threads[i] = new Thread(Count)).Start();
        foreach (var t in threads)
            t.Join();
        var held = new ManualResetEventSlim();
        var holder = new Thread(() => Hold(held));
        holder.Start();
        held.Wait();
        Wait();
        holder.Join();
        var taken = new ManualResetEventSlim();
        var tried = new ManualResetEventSlim();
        var poller = new Thread(() =>
        {
            lock (polled)
            {
                taken.Set();
                Thread.Sleep(50);
                tried.Wait(); // held until the try gave up, however late a loaded machine runs it
            }
        });
        poller.Start();
        taken.Wait();
        bool got = GiveUp();
        tried.Set();
        poller.Join();
        var ledger = new Ledger();
        for (int i = 0; i < 99; i++)
            ledger.Post(i);
        Transfer(account1, account2);
        Transfer(account2, account1);
        AppThenLibrary(ledger);
        ledger.Under(Inside);
        Console.WriteLine("count " + count + ", ledger " + ledger.Total + ", TryEnter got the held lock: " + got);
        if (args.Length > 0 && args[0] == "throw")
            throw new InvalidOperationException("thrown from Main");
        if (args.Length > 0 && args[0] == "serve")
        {
            // no wait: woven for .NET 10, the run-time registered its SIGTERM handler in its start, at the first lock
            Console.WriteLine("serving");
            while (true)
            {
                ledger.Post(1);
                Thread.Sleep(1);
            }
        }
    }
}
