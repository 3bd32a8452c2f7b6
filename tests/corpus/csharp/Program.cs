// C# lock corpus: runs every lock form once and prints deterministic lines (no timings, no thread ids).
using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace LockCorpus;

public static class Program
{
    public static int Main()
    {
        Statements.Run();
        ExplicitMonitor.Run();
        LockType.Run();
        Shapes.Run();
        Generics.Run();
        Closures.Run();
        StateMachines.Run().GetAwaiter().GetResult();
        Exceptions.Run();
        Threads.Run();
        Console.WriteLine("done");
        return 0;
    }
}

/// <summary>The `lock` statement on an object: Monitor.Enter(obj, ref taken) inside try/finally.</summary>
public static class Statements
{
    private static readonly object Gate = new object();
    private static int _counter;

    public static void Run()
    {
        lock (Gate)
        {
            _counter++;
        }
        Nested();
        Reentrant(3);
        Console.WriteLine($"statements: counter={_counter}");
    }

    private static void Nested()
    {
        var inner = new object();
        lock (Gate)
        {
            lock (inner)
            {
                _counter += 10;
            }
        }
    }

    private static void Reentrant(int depth)
    {
        lock (Gate)
        {
            _counter += 100;
            if (depth > 1)
                Reentrant(depth - 1);
        }
    }
}

/// <summary>Monitor called by hand: both Enter overloads, all six TryEnter overloads, Exit, Wait and Pulse.</summary>
public static class ExplicitMonitor
{
    private static readonly object Gate = new object();

    public static void Run()
    {
        int held = 0;
        Monitor.Enter(Gate);
        held++;
        Monitor.Exit(Gate);

        bool taken = false;
        Monitor.Enter(Gate, ref taken);
        if (taken) { held++; Monitor.Exit(Gate); }

        if (Monitor.TryEnter(Gate)) { held++; Monitor.Exit(Gate); }
        if (Monitor.TryEnter(Gate, 100)) { held++; Monitor.Exit(Gate); }
        if (Monitor.TryEnter(Gate, TimeSpan.FromMilliseconds(100))) { held++; Monitor.Exit(Gate); }
        taken = false;
        Monitor.TryEnter(Gate, ref taken);
        if (taken) { held++; Monitor.Exit(Gate); }
        taken = false;
        Monitor.TryEnter(Gate, 100, ref taken);
        if (taken) { held++; Monitor.Exit(Gate); }
        taken = false;
        Monitor.TryEnter(Gate, TimeSpan.FromMilliseconds(100), ref taken);
        if (taken) { held++; Monitor.Exit(Gate); }
        Console.WriteLine($"monitor: held {held} of 8");
        Console.WriteLine($"monitor: enter in one method, exit in another: {SplitEnterExit()}");
    }

    // Enter and Exit sit in different methods, as hand-written code may do.
    private static void Acquire() => Monitor.Enter(Gate);
    private static void Release() => Monitor.Exit(Gate);

    private static bool SplitEnterExit()
    {
        Acquire();
        bool inside = Monitor.IsEntered(Gate);
        Release();
        return inside && !Monitor.IsEntered(Gate);
    }
}

/// <summary>C# 13 System.Threading.Lock: `lock` on a Lock field (EnterScope), and its explicit API.</summary>
public static class LockType
{
    private static readonly Lock Gate = new Lock();
    private static readonly Lock Other = new Lock();

    public static void Run()
    {
        int held = 0;
        lock (Gate)
        {
            held++;
        }
        Gate.Enter();
        held++;
        Gate.Exit();
        if (Gate.TryEnter()) { held++; Gate.Exit(); }
        if (Gate.TryEnter(100)) { held++; Gate.Exit(); }
        if (Gate.TryEnter(TimeSpan.FromMilliseconds(100))) { held++; Gate.Exit(); }
        using (Gate.EnterScope())
        {
            held++;
        }
        lock (Gate)
        {
            lock (Other)
            {
                held++;
            }
        }
        // A Lock seen as object falls back to Monitor (CS9216).
        object boxed = Other;
        lock (boxed)
        {
            held++;
        }
        Console.WriteLine($"lock type: held {held} of 8");
    }
}
