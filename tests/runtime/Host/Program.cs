// Program.cs - lock scenarios through hand-written call-site stubs, for tests/integration/runtime.sh.
//   Host nested | threads | contended | exit | interval REPORT
using System;
using System.IO;
using System.Threading;
using LockTime.Runtime;

internal static class Program
{
    private static readonly string[] Names = { "Host.Program::Nested", "Host.Program::Count", "Host.Program::Hold", "Host.Program::Wait" };

    // The stubs the weaver will generate for Monitor.Enter(object) and Monitor.Exit(object).
    private static void Enter(object o, int site)
    {
        if (Api.Off) {
            Monitor.Enter(o);
            return;
        }
        long t0 = Clock.Ticks();
        if (Monitor.TryEnter(o)) {
            Api.Acquired(o, site, t0, t0, false);
            return;
        }
        Monitor.Enter(o);
        Api.Acquired(o, site, t0, Clock.Ticks(), true);
    }

    private static void Exit(object o)
    {
        Monitor.Exit(o);
        if (!Api.Off)
            Api.Released(o);
    }

    private static void Nested(object[] locks, int depth)
    {
        if (depth == locks.Length) {
            Thread.Sleep(20);
            return;
        }
        Enter(locks[depth], 0);
        try {
            Nested(locks, depth + 1);
        } finally {
            Exit(locks[depth]);
        }
    }

    private static int Main(string[] args)
    {
        // What SiteList.Load will do in a woven assembly: the weaver writes this table.
        var table = new SiteTable();
        table.Begin("Host", Names.Length);
        for (int i = 0; i < Names.Length; i++)
            table.Define(i, Names[i], "Program.cs:" + (10 + i), "/src/Host/Program.cs", 10 + i, "Monitor.Enter");
        Runtime.StartWith(table, Settings.FromEnvironment(), Registry.Slot);

        switch (args[0]) {
        case "nested": {
            var locks = new object[50];
            for (int i = 0; i < locks.Length; i++)
                locks[i] = new object();
            Nested(locks, 0);
            break;
        }
        case "threads": {
            object one = new object();
            var threads = new Thread[16];
            for (int k = 0; k < threads.Length; k++) {
                threads[k] = new Thread(() => { for (int i = 0; i < 1000; i++) { Enter(one, 1); Exit(one); } });
                threads[k].Start();
            }
            foreach (var t in threads)
                t.Join();
            break;
        }
        case "contended": {
            object l = new object();
            using var held = new ManualResetEventSlim();
            var holder = new Thread(() => { Enter(l, 2); held.Set(); Thread.Sleep(60); Exit(l); });
            holder.Start();
            held.Wait();
            Enter(l, 3);
            Exit(l);
            holder.Join();
            break;
        }
        case "exit": {
            object l = new object();
            Enter(l, 1);
            Exit(l);
            Environment.Exit(3);
            break;
        }
        case "interval": {
            object l = new object();
            Enter(l, 1);
            Exit(l);
            Thread.Sleep(600); // several intervals: the writer thread writes the report while running
            Console.WriteLine(File.Exists(args[1]) ? "report while running: " + File.ReadAllText(args[1]).Length + " bytes" : "no report while running");
            break;
        }
        }
        return 0;
    }
}
