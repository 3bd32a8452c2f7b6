// Program.cs - takes the woven library's monitor and semaphore once each.
using System;

internal static class Program
{
    private static void Main()
    {
        Console.WriteLine("added " + TrimLib.Shelf.Add());
        TrimLib.Shelf.Reserve();
    }
}
