// FirstNested.cs - `App firstnested` (tests/integration/woven.sh): the process's first nested lock, held for microseconds.
using System;

internal static class FirstNested
{
    private static readonly object outer = new object(), inner = new object(), single = new object();
    private static int count;

    // One lock alone (the run-time's start), then the first lock taken inside another: what the lock order does the
    // first time a thread nests must not lengthen these holds (it compiled its lookup there: 12 and 28 ms reported).
    internal static void Run()
    {
        lock (single)
            count++;
        lock (outer) {
            lock (inner)
                count++;
        }
        Console.WriteLine("nested " + count);
    }
}
