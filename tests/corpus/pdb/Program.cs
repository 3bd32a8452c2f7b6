// PdbLocks: throws inside and after woven locks and prints the stack traces' file:line, so that a woven
// build can be compared with the un-woven one; covers nested local scopes, async, lambdas, iterators,
// Monitor and System.Threading.Lock forms, a synchronized method and a type with thousands of methods.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace PdbLocks;

internal sealed class Resource : IDisposable
{
    public int Uses;
    public void Dispose() => Uses = -1;
}

internal static class Program
{
    private static readonly object Gate = new();
    private static readonly Lock TypedGate = new();
    private static int count;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Thrower(string what)
    {
        count++;
        throw new InvalidOperationException(what);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void CallInsideLock()
    {
        lock (Gate)
        {
            count++;
            Thrower("inside a lock");
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowInsideLock(int n)
    {
        lock (Gate)
        {
            if (n > 0)
                throw new ArgumentOutOfRangeException(nameof(n), "thrown inside a lock");
            count += n;
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowAfterLocks()
    {
        lock (Gate)
            count++;
        lock (Gate)
        {
            count += 2;
        }
        int local = count * 3;
        Thrower("after two locks, local " + (local > 0));
    }

    // Nested local scopes: a lock inside a using inside an if, each with locals of its own.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void NestedScopes(bool flag)
    {
        int outer = count;
        if (flag)
        {
            using (var resource = new Resource())
            {
                int middle = outer + resource.Uses;
                lock (Gate)
                {
                    int inner = middle + 1;
                    if (inner >= 0)
                    {
                        string message = "nested " + inner;
                        Thrower(message.Length > 0 ? "nested scopes" : message);
                    }
                }
            }
        }
        Console.WriteLine("not reached " + outer);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void MonitorForms()
    {
        Monitor.Enter(Gate);
        try
        {
            count++;
        }
        finally
        {
            Monitor.Exit(Gate);
        }
        if (Monitor.TryEnter(Gate, 1000))
        {
            try
            {
                count++;
            }
            finally
            {
                Monitor.Exit(Gate);
            }
        }
        bool taken = false;
        try
        {
            Monitor.Enter(Gate, ref taken);
            Thrower("Monitor.Enter(object, ref bool)");
        }
        finally
        {
            if (taken)
                Monitor.Exit(Gate);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void LockType()
    {
        lock (TypedGate)
        {
            count++;
        }
        using (TypedGate.EnterScope())
        {
            Thrower("System.Threading.Lock scope");
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.Synchronized)]
    private static void Synchronized()
    {
        count++;
        Thrower("synchronized method");
    }

    // A lock in an async method: hoisted locals, yield and resume offsets around the locks.
    private static async Task AsyncLocks(int delay)
    {
        int before = count;
        lock (Gate)
        {
            count++;
        }
        await Task.Delay(delay);
        int after = count - before;
        lock (Gate)
        {
            count += after;
        }
        await Task.Yield();
        lock (Gate)
        {
            if (after >= 0)
                Thrower("async, after two awaits");
        }
    }

    private static async Task<int> AsyncThrowAfter()
    {
        await Task.Yield();
        lock (Gate)
            count++;
        await Task.Delay(1);
        throw new TimeoutException("async, after a lock");
    }

    private static IEnumerable<int> Iterator()
    {
        for (int i = 0; i < 3; i++)
        {
            lock (Gate)
                count++;
            yield return i;
        }
        Thrower("iterator, after the locks");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Lambda()
    {
        int captured = count;
        Action act = () =>
        {
            lock (Gate)
            {
                captured++;
                Thrower("lambda");
            }
        };
        act();
    }

    // Prints the exception type and every frame of this program with its file name and line.
    private static void Report(string scenario, Action run)
    {
        try
        {
            run();
            Console.WriteLine($"{scenario}: no exception");
        }
        catch (Exception e)
        {
            if (e is AggregateException { InnerException: not null } a)
                e = a.InnerException;
            Console.WriteLine($"{scenario}: {e.GetType().Name}: {e.Message}");
            foreach (var frame in new StackTrace(e, true).GetFrames())
            {
                var method = frame.GetMethod();
                string file = frame.GetFileName();
                if (method is null || file is null)
                    continue;
                Console.WriteLine($"  at {method.DeclaringType?.Name}.{method.Name} {Path.GetFileName(file)}:{frame.GetFileLineNumber()}");
            }
        }
    }

    private static void Main()
    {
        Report("call inside a lock", CallInsideLock);
        Report("throw inside a lock", () => ThrowInsideLock(1));
        Report("after locks", ThrowAfterLocks);
        Report("nested scopes", () => NestedScopes(true));
        Report("monitor forms", MonitorForms);
        Report("lock type", LockType);
        Report("synchronized", Synchronized);
        Report("async", () => AsyncLocks(1).Wait());
        Report("async throw after", () => AsyncThrowAfter().Wait());
        Report("iterator", () => { foreach (int i in Iterator()) count += i; });
        Report("lambda", Lambda);
        Report("many methods", () => Many.Last(Gate));
        Console.WriteLine($"many methods: sum {Many.Sum()}");
        Console.WriteLine($"count {count}");
    }
}
