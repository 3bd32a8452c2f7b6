// Program.cs - lock scenarios through hand-written call-site stubs, for tests/integration/runtime.sh.
//   Host nested | threads | contended | exit | library | many | interval REPORT
using System;
using System.IO;
using System.Threading;
using LockTime.Runtime;
using TestHost;

internal static class Program
{
    private static readonly string[] Names = { "Host.Program::Nested", "Host.Program::Count", "Host.Program::Hold", "Host.Program::Wait" };

    private static void Enter(object o, int site) => Stubs.Enter(o, site);

    private static void Exit(object o) => Stubs.Exit(o);

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
        Stubs.Start("Host", Names);

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
        case "library": { // two woven assemblies, two copies of the run-time: one summary, one report
            object l = new object();
            Enter(l, 1);
            Exit(l);
            HostLib.Library.Work(100);
            break;
        }
        case "many": { // 64 threads on 8 locks: at threshold 0 a line per lock, all through one writer
            var locks = new object[8];
            for (int i = 0; i < locks.Length; i++)
                locks[i] = new object();
            var threads = new Thread[64];
            for (int k = 0; k < threads.Length; k++) {
                object mine = locks[k % locks.Length];
                threads[k] = new Thread(() => { for (int i = 0; i < 500; i++) { Enter(mine, 1); Exit(mine); } });
                threads[k].Start();
            }
            foreach (var t in threads)
                t.Join();
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
