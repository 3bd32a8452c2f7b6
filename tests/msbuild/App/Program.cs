// Takes its own lock (30 ms) and the library's.
using System;
using System.Threading;

static class Program
{
    static readonly object Gate = new object();

    static void Main()
    {
        lock (Gate)
            Thread.Sleep(30);
        Console.WriteLine("total " + new Lib.Counter().Add(2));
    }
}
