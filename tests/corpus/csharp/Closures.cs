// Locks in generic code, lambdas, local functions, async methods and iterators.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;

namespace LockCorpus;

/// <summary>Generic methods of generic types, and a lock on a type parameter (boxing).</summary>
public static class Generics
{
    public static void Run()
    {
        var box = new Box<string>();
        box.Put("a");
        box.Put("b");
        Console.WriteLine($"generics: box {box.Count} {box.Convert(s => s.ToUpperInvariant())}");
        Console.WriteLine($"generics: lock on T {LockOnValue(7)} {LockOnValue("seven")}");
    }

    // `lock` on a value of type T: the compiler boxes it first, so a value type gets a fresh box.
    private static string LockOnValue<T>(T value)
    {
        lock (value)
        {
            return value.ToString();
        }
    }

    private sealed class Box<T>
    {
        private readonly List<T> _items = new List<T>();

        public int Count
        {
            get { lock (_items) { return _items.Count; } }
        }

        public void Put(T item)
        {
            lock (_items)
            {
                _items.Add(item);
            }
        }

        public string Convert<TOut>(Func<T, TOut> map)
        {
            lock (_items)
            {
                return string.Join(",", _items.Select(map));
            }
        }
    }
}

/// <summary>Locks inside lambdas (closure classes) and local functions.</summary>
public static class Closures
{
    private static readonly object Gate = new object();

    public static void Run()
    {
        int captured = 0;
        Action add = () =>
        {
            lock (Gate) { captured += 5; }
        };
        add();
        add();
        Func<int, int> twice = x => { lock (Gate) { return x * 2; } };
        int Local(int x)
        {
            lock (Gate) { return x + captured; }
        }
        static int StaticLocal(int x)
        {
            lock (Gate) { return x - 1; }
        }
        Console.WriteLine($"closures: {captured} {twice(21)} {Local(1)} {StaticLocal(1)}");
    }
}

/// <summary>Locks in compiler-generated state machines.</summary>
public static class StateMachines
{
    private static readonly object Gate = new object();
#if NET9_0_OR_GREATER
    private static readonly Lock Typed = new Lock();
#else
    private static readonly object Typed = new object();
#endif

    public static async Task Run()
    {
        int total = await BetweenAwaits();
        Console.WriteLine($"async: total {total}");
        Console.WriteLine($"iterator: {string.Join(",", Numbers(3))}");
        Console.WriteLine($"iterator: generic {string.Join(",", Repeat("x", 2))}");
    }

    // The lock sits between two awaits (await inside a lock is CS1996).
    private static async Task<int> BetweenAwaits()
    {
        int value = 1;
        await Task.Yield();
        lock (Gate)
        {
            value += 10;
        }
        await Task.Delay(1);
        lock (Typed)
        {
            value += 100;
        }
        await Task.Yield();
        return value;
    }

    // yield inside a lock: the finally moves into a <>m__Finally method, so Exit leaves this method.
    private static IEnumerable<int> Numbers(int count)
    {
        lock (Gate)
        {
            for (int i = 0; i < count; i++)
                yield return i;
        }
    }

    private static IEnumerable<T> Repeat<T>(T item, int count)
    {
        for (int i = 0; i < count; i++)
        {
            lock (Gate)
            {
                yield return item;
            }
        }
    }
}
