// A lock held 30 ms, built by xbuild and run under Mono.
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
