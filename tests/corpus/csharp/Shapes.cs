// IL shapes around locks that a rewriter must handle: branches, switches, scopes, prefixes, structs, cctors.
using System;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;

namespace LockCorpus;

public static class Shapes
{
    private static readonly object Gate = new object();
    private static readonly int[] Table;
    private static int _total;

    // A static constructor that takes a lock.
    static Shapes()
    {
        lock (Gate)
        {
            Table = new[] { 1, 2, 3 };
        }
    }

    public static void Run()
    {
        Console.WriteLine($"shapes: cctor table length {Table.Length}");
        for (int i = 0; i < 4; i++)
            Console.WriteLine($"shapes: switch {i} -> {SwitchArms(i)}");
        Console.WriteLine($"shapes: short branch {ShortBranch(true)} {ShortBranch(false)}");
        EndsWithFinally(5);
        Console.WriteLine($"shapes: total after finally {_total}");
        Console.WriteLine($"shapes: scopes {NestedScopes(true)} {NestedScopes(false)}");
        var counter = new Counter();
        counter.Add(2);
        counter.Add(3);
        Console.WriteLine($"shapes: struct counter {counter.Value}");
        var sync = new SyncCounter();
        Released.Track(sync);
        Released.Track(typeof(SyncCounter));
        Released.Track(typeof(SyncGeneric<string>));
        sync.Increment();
        SyncCounter.StaticIncrement();
        Console.WriteLine($"shapes: synchronized {sync.Value} {SyncCounter.StaticValue}");
        Console.WriteLine($"shapes: synchronized returns {sync.Clamp(-5)} {sync.Clamp(500)} {sync.Clamp(42)} {sync.Value}");
        try
        {
            SyncCounter.Fail();
        }
        catch (InvalidOperationException e)
        {
            Console.WriteLine($"shapes: synchronized throw '{e.Message}', type lock free: {!Monitor.IsEntered(typeof(SyncCounter))}");
        }
        Console.WriteLine($"shapes: synchronized generic {SyncGeneric<string>.Add("a")} {SyncGeneric<int>.Add(1)} {SyncGeneric<string>.Add("b")}");
        Console.WriteLine($"shapes: synchronized wait {SyncCounter.WaitAndSignal(sync)}");
        Console.WriteLine($"shapes: constrained {Constrained(42)} {Constrained("text")}");
    }

    // Each switch arm takes the lock differently (or not at all).
    private static string SwitchArms(int arm)
    {
        switch (arm)
        {
            case 0:
                lock (Gate) { return "zero"; }
            case 1:
                lock (Gate) { _total += 1; }
                return "one";
            case 2:
                if (Monitor.TryEnter(Gate))
                {
                    try { return "two"; }
                    finally { Monitor.Exit(Gate); }
                }
                return "busy";
            default:
                return "other";
        }
    }

    // A forward short branch (brfalse.s) that jumps over a whole small lock.
    private static int ShortBranch(bool take)
    {
        int value = 1;
        if (take)
        {
            lock (Gate) { value = 2; }
        }
        return value;
    }

    // try/finally as the last statement: the leave goes to a ret that follows endfinally directly.
    private static void EndsWithFinally(int amount)
    {
        bool taken = false;
        try
        {
            Monitor.Enter(Gate, ref taken);
            _total += amount;
        }
        finally
        {
            if (taken) Monitor.Exit(Gate);
        }
    }

    // A lock inside a using inside an if, with locals in each scope.
    private static string NestedScopes(bool write)
    {
        string result = "none";
        if (write)
        {
            int before = _total;
            using (var writer = new StringWriter())
            {
                string prefix = "w";
                lock (Gate)
                {
                    int inside = before + 1;
                    writer.Write(prefix + inside.ToString(System.Globalization.CultureInfo.InvariantCulture));
                }
                result = writer.ToString();
            }
        }
        return result;
    }

    // A call through a type parameter (constrained. callvirt) right inside a lock.
    private static string Constrained<T>(T value)
    {
        lock (Gate)
        {
            return value.ToString();
        }
    }

    /// <summary>A struct whose method locks a shared object.</summary>
    private struct Counter
    {
        private static readonly object StructGate = new object();
        public int Value;

        public void Add(int amount)
        {
            lock (StructGate)
            {
                Value += amount;
            }
        }
    }

    /// <summary>[MethodImpl(Synchronized)]: the runtime locks `this` (or the type); no call in the IL.</summary>
    private sealed class SyncCounter
    {
        public int Value;
        public static int StaticValue;

        [MethodImpl(MethodImplOptions.Synchronized)]
        public void Increment() => Value++;

        [MethodImpl(MethodImplOptions.Synchronized)]
        public static void StaticIncrement() => StaticValue++;

        // Several returns of a value, one from inside a try/finally.
        [MethodImpl(MethodImplOptions.Synchronized)]
        public int Clamp(int x)
        {
            if (x < 0)
                return 0;
            try
            {
                if (x > 100)
                    return 100;
            }
            finally
            {
                Value++;
            }
            return x;
        }

        // A body that only throws: no ret at all.
        [MethodImpl(MethodImplOptions.Synchronized)]
        public static void Fail() => throw new InvalidOperationException("synchronized throw");

        private bool _ready;
        private static bool _staticReady;

        // Monitor.Wait inside a synchronized method releases the monitor the runtime took (on this,
        // or on the Type for a static method): the time inside Wait is not hold time.
        [MethodImpl(MethodImplOptions.Synchronized)]
        public void WaitReady()
        {
            while (!_ready)
                Monitor.Wait(this);
        }

        [MethodImpl(MethodImplOptions.Synchronized)]
        public void SetReady()
        {
            _ready = true;
            Monitor.PulseAll(this);
        }

        [MethodImpl(MethodImplOptions.Synchronized)]
        public static void WaitStaticReady()
        {
            while (!_staticReady)
                Monitor.Wait(typeof(SyncCounter));
        }

        [MethodImpl(MethodImplOptions.Synchronized)]
        public static void SetStaticReady()
        {
            _staticReady = true;
            Monitor.PulseAll(typeof(SyncCounter));
        }

        // Two waiters block in Wait ~100 ms until this thread signals them.
        public static string WaitAndSignal(SyncCounter counter)
        {
            var waiter = new Thread(counter.WaitReady);
            var staticWaiter = new Thread(WaitStaticReady);
            waiter.Start();
            staticWaiter.Start();
            Thread.Sleep(100);
            counter.SetReady();
            SetStaticReady();
            waiter.Join();
            staticWaiter.Join();
            return "both woke";
        }
    }

    /// <summary>A static synchronized method of a generic type locks the instantiation's Type.</summary>
    private static class SyncGeneric<T>
    {
        private static int _count;

        [MethodImpl(MethodImplOptions.Synchronized)]
        public static string Add(T item)
        {
            _count++;
            return item + ":" + _count;
        }
    }
}
