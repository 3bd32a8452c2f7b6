// A program whose only locks are [MethodImpl(Synchronized)] methods (no Monitor or Lock call in its IL):
// an instance method, a static one returning a value, and one that only throws.
using System;
using System.Runtime.CompilerServices;

public sealed class SyncOnly
{
    private int _count;
    private static int _total;

    [MethodImpl(MethodImplOptions.Synchronized)]
    public void Bump() { _count++; }

    [MethodImpl(MethodImplOptions.Synchronized)]
    public static int Add(int x)
    {
        if (x < 0)
            return _total;
        _total += x;
        return _total;
    }

    [MethodImpl(MethodImplOptions.Synchronized)]
    public static void Refuse() { throw new InvalidOperationException("refused"); }

    public static int Main()
    {
        var s = new SyncOnly();
        s.Bump();
        s.Bump();
        Console.WriteLine("synconly: count " + s._count + ", total " + Add(5) + " " + Add(-1));
        try { Refuse(); }
        catch (InvalidOperationException e) { Console.WriteLine("synconly: caught '" + e.Message + "'"); }
        Console.WriteLine("synconly: done");
        return 0;
    }
}
