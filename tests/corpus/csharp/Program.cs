// C# lock corpus: runs every lock form once and prints deterministic lines (no timings, no thread ids).
// Built for net10.0 (LockCorpus) and, from the same files, for net48 (tests/corpus/net48, run under Mono):
// what needs System.Threading.Lock is under NET9_0_OR_GREATER.
using System;
using System.Collections.Generic;
using System.Reflection;
using System.Threading;
using System.Threading.Tasks;

namespace LockCorpus;

public static class Program
{
    public static int Main()
    {
        Statements.Run();
        ExplicitMonitor.Run();
#if NET9_0_OR_GREATER
        LockType.Run();
        Shop.Lines.Run();
#endif
        Shapes.Run();
        Generics.Run();
        Closures.Run();
        StateMachines.Run().GetAwaiter().GetResult();
        Exceptions.Run();
        Threads.Run();
        Burst.Run();
        Released.Check();
        Console.WriteLine("done");
        return 0;
    }
}

/// <summary>Several threads take one lock many times at once: with threshold 0 each release writes a
/// report line at the same time as the others (the lines must not mix).</summary>
public static class Burst
{
    public const int Threads = 4, Rounds = 250;
    private static readonly object Gate = new object();
    private static int _count;

    public static void Run()
    {
        var threads = new Thread[Threads];
        for (int t = 0; t < Threads; t++)
        {
            threads[t] = new Thread(() =>
            {
                for (int i = 0; i < Rounds; i++)
                {
                    lock (Gate) { _count++; }
                }
            });
            threads[t].Start();
        }
        foreach (var t in threads)
            t.Join();
        Console.WriteLine($"burst: {Threads} threads x {Rounds} locks: {_count}");
    }
}

/// <summary>After everything ran, another thread must be able to take every lock: the static lock objects
/// of every type (found by reflection), and the instance and type locks registered with Track.</summary>
public static class Released
{
    private static readonly List<object> Tracked = new List<object>();

    public static void Track(object lockObject) => Tracked.Add(lockObject);

    public static void Check()
    {
        var locks = new List<object>();
        foreach (var type in typeof(Released).Assembly.GetTypes())
        {
            // Compiler-generated types (names starting with '<') are not the program's own.
            if (type.ContainsGenericParameters || type.Name.StartsWith("<"))
                continue;
            foreach (var field in type.GetFields(BindingFlags.Static | BindingFlags.Public | BindingFlags.NonPublic))
            {
                if (IsLockType(field.FieldType) && field.GetValue(null) is object value)
                    locks.Add(value);
            }
        }
        locks.AddRange(Tracked);
        int free = 0;
        var other = new Thread(() =>
        {
            foreach (var lockObject in locks)
                free += TakeAndRelease(lockObject) ? 1 : 0;
        });
        other.Start();
        other.Join();
        Console.WriteLine($"released: {free} of {locks.Count} locks free");
    }

    private static bool IsLockType(Type t)
    {
#if NET9_0_OR_GREATER
        if (t == typeof(Lock))
            return true;
#endif
        return t == typeof(object);
    }

    private static bool TakeAndRelease(object lockObject)
    {
#if NET9_0_OR_GREATER
        if (lockObject is Lock typed)
        {
            if (!typed.TryEnter(1000))
                return false;
            typed.Exit();
            return true;
        }
#endif
        if (!Monitor.TryEnter(lockObject, 1000))
            return false;
        Monitor.Exit(lockObject);
        return true;
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
        Reentrant(20); // deeper than the 8 frames the per-thread record starts with
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

#if NET9_0_OR_GREATER
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
#endif
