// Program.cs - a [ModuleInitializer] with a side effect (what Main prints), and the program's only lock held 20 ms
// inside a ProcessExit handler: woven, the module initializer still runs, and the lock has its line, summary and
// report although the run-time starts inside the exit (tests/integration/woven.sh).
using System;
using System.Runtime.CompilerServices;
using System.Threading;

internal static class Program
{
    private static readonly object atExit = new object();
    private static string opened = "the module initializer did not run";

    [ModuleInitializer]
    internal static void Open()
    {
        opened = "the module initializer ran";
    }

    private static void HoldAtExit(object sender, EventArgs e)
    {
        lock (atExit)
            Thread.Sleep(20);
    }

    private static void Main()
    {
        AppDomain.CurrentDomain.ProcessExit += HoldAtExit;
        Console.WriteLine(opened);
    }
}
