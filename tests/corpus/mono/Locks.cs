// Mono lock corpus (compiled with mcs, runs under mono): the lock forms mcs emits, with deterministic output.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading;

public static class MonoLocks
{
    private static readonly object Gate = new object();
    private static int _count;

    public static int Main()
    {
        lock (Gate) { _count++; }
        Nested();
        Console.WriteLine("mono: count " + _count);
        Console.WriteLine("mono: monitor " + Explicit() + " of 8");
        Console.WriteLine("mono: iterator " + string.Join(",", Numbers(3)));
        Func<int, int> twice = x => { lock (Gate) { return x * 2; } };
        Console.WriteLine("mono: lambda " + twice(21));
        var box = new Box<string>();
        box.Put("a");
        box.Put("b");
        Console.WriteLine("mono: generic " + box.Count + " " + box.First<int>(s => s.Length));
        var sync = new Sync();
        sync.Bump();
        Console.WriteLine("mono: synchronized " + sync.Value);
        try { ThrowInside(); }
        catch (InvalidOperationException e) { Console.WriteLine("mono: caught '" + e.Message + "'"); }
        Console.WriteLine("mono: switch " + Arm(0) + " " + Arm(1) + " " + Arm(2));
        Console.WriteLine("mono: wait/pulse " + WaitPulse());
        Console.WriteLine("mono: released " + Released(Gate, sync, typeof(Sync)) + " of 3");
        Console.WriteLine("mono: semaphore " + Gated());
        Console.WriteLine("mono: done");
        return 0;
    }

    private static readonly SemaphoreSlim Slim = new SemaphoreSlim(1, 1);

    /// <summary>One SemaphoreSlim.Wait: reported once, also when Mono's mscorlib is woven (its Wait() calls Wait(int, CancellationToken)).</summary>
    private static int Gated()
    {
        Slim.Wait();
        try { return Slim.CurrentCount; }
        finally { Slim.Release(); }
    }

    private static void Nested()
    {
        object inner = new object();
        lock (Gate) { lock (inner) { lock (Gate) { _count += 10; } } }
    }

    private static int Explicit()
    {
        int held = 0;
        bool taken;
        Monitor.Enter(Gate); held++; Monitor.Exit(Gate);
        taken = false; Monitor.Enter(Gate, ref taken); if (taken) { held++; Monitor.Exit(Gate); }
        if (Monitor.TryEnter(Gate)) { held++; Monitor.Exit(Gate); }
        if (Monitor.TryEnter(Gate, 100)) { held++; Monitor.Exit(Gate); }
        if (Monitor.TryEnter(Gate, TimeSpan.FromMilliseconds(100))) { held++; Monitor.Exit(Gate); }
        taken = false; Monitor.TryEnter(Gate, ref taken); if (taken) { held++; Monitor.Exit(Gate); }
        taken = false; Monitor.TryEnter(Gate, 100, ref taken); if (taken) { held++; Monitor.Exit(Gate); }
        taken = false; Monitor.TryEnter(Gate, TimeSpan.FromMilliseconds(100), ref taken); if (taken) { held++; Monitor.Exit(Gate); }
        return held;
    }

    private static IEnumerable<int> Numbers(int n)
    {
        lock (Gate)
        {
            for (int i = 0; i < n; i++)
                yield return i;
        }
    }

    private static void ThrowInside()
    {
        lock (Gate) { throw new InvalidOperationException("thrown inside the lock"); }
    }

    private static string Arm(int arm)
    {
        switch (arm)
        {
            case 0: lock (Gate) { return "zero"; }
            case 1: lock (Gate) { _count++; } return "one";
            default: return "other";
        }
    }

    // Another thread takes and releases each lock: none was left held.
    private static int Released(params object[] locks)
    {
        int free = 0;
        var other = new Thread(() =>
        {
            foreach (object o in locks)
            {
                if (Monitor.TryEnter(o, 1000))
                {
                    free++;
                    Monitor.Exit(o);
                }
            }
        });
        other.Start();
        other.Join();
        return free;
    }

    private static int WaitPulse()
    {
        object queue = new object();
        int slot = 0, sum = 0;
        var consumer = new Thread(() =>
        {
            for (int i = 0; i < 3; i++)
            {
                lock (queue)
                {
                    while (slot == 0) Monitor.Wait(queue);
                    sum += slot;
                    slot = 0;
                    Monitor.PulseAll(queue);
                }
            }
        });
        consumer.Start();
        for (int i = 1; i <= 3; i++)
        {
            lock (queue)
            {
                while (slot != 0) Monitor.Wait(queue);
                slot = i;
                Monitor.Pulse(queue);
            }
        }
        consumer.Join();
        return sum;
    }

    private sealed class Box<T>
    {
        private readonly List<T> _items = new List<T>();
        public int Count { get { lock (_items) { return _items.Count; } } }
        public void Put(T item) { lock (_items) { _items.Add(item); } }
        public TOut First<TOut>(Func<T, TOut> map) { lock (_items) { return map(_items[0]); } }
    }

    private sealed class Sync
    {
        public int Value;
        [MethodImpl(MethodImplOptions.Synchronized)]
        public void Bump() { Value++; }
    }
}
