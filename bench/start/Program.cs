// bench/start: the smallest woven program - one uncontended lock, then one line - whose whole run is mostly the
// run-time's start and exit (issue 40 part 2: what LockTime adds to every woven process).
using System;

internal static class Program
{
    private static readonly object gate = new object();
    private static int count;

    private static void Main()
    {
        lock (gate)
            count++;
        Console.WriteLine("one lock: " + count);
    }
}
