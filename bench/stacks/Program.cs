// Program.cs - what a slow lock's call stack costs. Prints "elapsed N cpu M" (ms) for its loop, after a warm-up:
//   locks N D      N acquisitions of one lock, each D calls deep; woven and run at threshold 0 every one is slow
//   capture N D    N calls, D deep, of the woven run-time's own StackCapture.Take (found by reflection: its types
//                  are internal, named <LockTime>X), as each slow lock captured within the per-site limit pays
using System;
using System.Diagnostics;
using System.Reflection;

internal static class Program
{
    private static readonly object gate = new object();
    private static long sink;
    private static MethodInfo take;

    private static TimeSpan Cpu()
    {
        return Process.GetCurrentProcess().TotalProcessorTime;
    }

    private static void Deep(int depth, bool capture)
    {
        if (depth > 0) {
            Deep(depth - 1, capture);
            return;
        }
        if (capture) {
            sink += take.Invoke(null, new object[] { 32, "Program::Deep", "Program.cs", 30 }) == null ? 0 : 1;
            return;
        }
        lock (gate)
            sink++;
    }

    private static void Loop(int n, int depth, bool capture)
    {
        for (int i = 0; i < n; i++)
            Deep(depth, capture);
    }

    private static int Main(string[] args)
    {
        bool capture = args[0] == "capture";
        int n = int.Parse(args[1]), depth = int.Parse(args[2]);
        if (capture) {
            take = typeof(Program).Assembly.GetType("<LockTime>StackCapture")?.GetMethod("Take", BindingFlags.Static | BindingFlags.NonPublic);
            if (take == null) {
                Console.Error.WriteLine("not woven: no <LockTime>StackCapture::Take");
                return 1;
            }
        }
        Loop(Math.Max(n / 10, 1), depth, capture);
        TimeSpan cpu = Cpu();
        var watch = Stopwatch.StartNew();
        Loop(n, depth, capture);
        double ms = watch.Elapsed.TotalMilliseconds;
        Console.WriteLine("elapsed " + ms.ToString("0.000", System.Globalization.CultureInfo.InvariantCulture) + " cpu " +
                          (Cpu() - cpu).TotalMilliseconds.ToString("0.000", System.Globalization.CultureInfo.InvariantCulture));
        return sink > 0 ? 0 : 1;
    }
}
