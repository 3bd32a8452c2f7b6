// Program.cs - per-object locks taken nested, on one thread; prints the wall time of the loop in ms
// and the process's CPU time over it ("elapsed N cpu M"), after a warm-up of the same code on other
// objects. On a shared machine the CPU time is the steadier figure: the wall time waits for a core.
//   accounts N T [random]  N accounts, T transfers between two of them: lock (first) { lock (second) }
//                          with the lower id first (a consistent order), or in the order drawn
//   fresh T                T times a new object locked in both orders with one global lock
using System;
using System.Diagnostics;

internal sealed class Account
{
    internal readonly int Id;
    internal long Balance = 1000;

    internal Account(int id)
    {
        Id = id;
    }
}

internal static class Program
{
    private static readonly object global = new object();
    private static long sink;
    private static double cpuMs;

    private static TimeSpan Cpu()
    {
        return Process.GetCurrentProcess().TotalProcessorTime;
    }

    private static void Transfer(Account first, Account second, long amount)
    {
        lock (first) {
            lock (second) {
                first.Balance -= amount;
                second.Balance += amount;
            }
        }
    }

    private static double Accounts(int n, int transfers, bool random, int seed)
    {
        var accounts = new Account[n];
        for (int i = 0; i < n; i++)
            accounts[i] = new Account(i);
        var rng = new Random(seed);
        TimeSpan cpu = Cpu();
        var watch = Stopwatch.StartNew();
        for (int t = 0; t < transfers; t++) {
            Account a = accounts[rng.Next(n)], b = accounts[rng.Next(n)];
            if (a == b)
                continue;
            if (!random && a.Id > b.Id)
                (a, b) = (b, a);
            Transfer(a, b, 1);
        }
        double ms = watch.Elapsed.TotalMilliseconds;
        cpuMs = (Cpu() - cpu).TotalMilliseconds;
        long total = 0;
        foreach (Account a in accounts)
            total += a.Balance;
        sink += total;
        return ms;
    }

    private static void Both(object fresh)
    {
        lock (global) {
            lock (fresh)
                sink++;
        }
        lock (fresh) {
            lock (global)
                sink++;
        }
    }

    private static double Fresh(int times)
    {
        TimeSpan cpu = Cpu();
        var watch = Stopwatch.StartNew();
        for (int t = 0; t < times; t++)
            Both(new object());
        double ms = watch.Elapsed.TotalMilliseconds;
        cpuMs = (Cpu() - cpu).TotalMilliseconds;
        return ms;
    }

    private static int Main(string[] args)
    {
        double ms;
        if (args.Length >= 3 && args[0] == "accounts") {
            int n = int.Parse(args[1]), transfers = int.Parse(args[2]);
            bool random = args.Length > 3 && args[3] == "random";
            Accounts(64, 2000, random, 1);
            ms = Accounts(n, transfers, random, 2);
        } else if (args.Length >= 2 && args[0] == "fresh") {
            Fresh(2000);
            ms = Fresh(int.Parse(args[1]));
        } else {
            Console.Error.WriteLine("usage: accounts N TRANSFERS [random] | fresh TIMES");
            return 2;
        }
        var invariant = System.Globalization.CultureInfo.InvariantCulture;
        Console.WriteLine("elapsed " + ms.ToString("F1", invariant) + " cpu " + cpuMs.ToString("F1", invariant) + " check " + sink);
        return 0;
    }
}
