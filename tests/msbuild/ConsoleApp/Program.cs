// One lock held 30 ms (reported at the default 1 ms threshold) and one held for next to no time.
using System;
using System.Threading;

static class Program
{
    static readonly object Gate = new object();

    static void Slow()
    {
        lock (Gate)
            Thread.Sleep(30);
    }

    static int Fast(int x)
    {
        lock (Gate)
            return x + 1;
    }

    static void Main()
    {
        Slow();
        Console.WriteLine("done " + Fast(41));
    }
}
