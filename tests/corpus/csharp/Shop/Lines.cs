// Where a lock is reported: each acquisition below carries a "site:" marker on its line, which the
// line tests (tests/integration/lines.sh) look up. C# 13 `lock` on a Lock has no sequence point of
// its own: first statement of a method or not, with and without braces, after a comment that says
// lock (x), two on one line (reported with their columns), Monitor beside it. In a subfolder, so that
// reports name it Shop/Lines.cs.
using System;
using System.Threading;

namespace LockCorpus.Shop;

#if NET9_0_OR_GREATER
public static class Lines
{
    private static readonly Lock Gate = new Lock();
    private static readonly object Monitor = new object();
    private static int _count;

    private static int FirstStatement()
    {
        lock (Gate) // site: first
        {
            _count++;
        }
        return _count;
    }

    private static int NotFirst(int by)
    {
        _count += by;

        // lock (Monitor) in a comment is not a lock
        lock (Gate) // site: not-first
        {
            _count++;
        }
        return _count;
    }

    private static int NoBraces()
    {
        lock (Gate) // site: no-braces
            return _count;
    }

    private static void TwoOnOneLine()
    {
        lock (Gate) { _count++; } lock (Gate) { _count--; } // site: two
    }

    private static void MonitorBeside()
    {
        string text = "lock (Gate)";
        lock (Monitor) // site: monitor
        {
            _count += text.Length;
        }
    }

    public static void Run()
    {
        FirstStatement();
        NotFirst(2);
        NoBraces();
        TwoOnOneLine();
        MonitorBeside();
        Console.WriteLine($"lines: {_count}");
    }
}
#endif
