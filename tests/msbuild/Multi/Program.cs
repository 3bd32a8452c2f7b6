// A lock held 30 ms, on .NET Framework (Mono) and on .NET alike.
using System;
using System.Threading;

static class Program
{
    static readonly object Gate = new object();

    static void Main()
    {
        lock (Gate)
            Thread.Sleep(30);
        Console.WriteLine("done");
    }
}
