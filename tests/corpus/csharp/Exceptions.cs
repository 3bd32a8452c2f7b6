// Locks and exceptions (throws inside and after locks, locks in catch and finally), and two threads contending.
using System;
using System.Threading;

namespace LockCorpus;

public static class Exceptions
{
    private static readonly object Gate = new object();

    public static void Run()
    {
        try
        {
            ThrowInside();
        }
        catch (InvalidOperationException e)
        {
            Console.WriteLine($"exceptions: caught '{e.Message}', lock free: {!Monitor.IsEntered(Gate)}");
        }
        try
        {
            ThrowAfter();
        }
        catch (ArgumentException e)
        {
            Console.WriteLine($"exceptions: caught '{e.Message}'");
        }
        Console.WriteLine($"exceptions: lock in catch {LockInCatch()}");
        Console.WriteLine($"exceptions: lock in finally {LockInFinally()}");
        try
        {
            OnlyThrows();
        }
        catch (NotSupportedException e)
        {
            Console.WriteLine($"exceptions: only throws '{e.Message}'");
        }
        Misuse();
    }

    // Lock APIs misused: the same exception types, woven or not, and no lock left held.
    private static void Misuse()
    {
        object none = null;
        Console.WriteLine($"exceptions: Enter(null) {Thrown(() => Monitor.Enter(none))}");
        Console.WriteLine($"exceptions: Enter(null, ref taken) {Thrown(() => { bool t = false; Monitor.Enter(none, ref t); })}");
        Console.WriteLine($"exceptions: Enter(taken already true) {Thrown(() => { bool t = true; Monitor.Enter(Gate, ref t); })}");
        Console.WriteLine($"exceptions: TryEnter(null) {Thrown(() => Monitor.TryEnter(none))}");
        Console.WriteLine($"exceptions: TryEnter(negative timeout) {Thrown(() => Monitor.TryEnter(Gate, -5))}");
        Console.WriteLine($"exceptions: Exit(not held) {Thrown(() => Monitor.Exit(new object()))}");
        Console.WriteLine($"exceptions: Wait(not held) {Thrown(() => Monitor.Wait(new object(), 1))}");
#if NET9_0_OR_GREATER
        Lock noLock = null;
        Console.WriteLine($"exceptions: Lock.Enter(null) {Thrown(() => noLock.Enter())}");
        Console.WriteLine($"exceptions: lock (null Lock) {Thrown(() => { lock (noLock) { } })}");
        Console.WriteLine($"exceptions: Lock.Exit(not held) {Thrown(() => new Lock().Exit())}");
#endif
        Console.WriteLine($"exceptions: misuse left the lock free: {!Monitor.IsEntered(Gate)}");
    }

    private static string Thrown(Action action)
    {
        try
        {
            action();
            return "nothing";
        }
        catch (Exception e)
        {
            return e.GetType().Name;
        }
    }

    private static void ThrowInside()
    {
        lock (Gate)
        {
            throw new InvalidOperationException("thrown inside the lock");
        }
    }

    private static void ThrowAfter()
    {
        lock (Gate)
        {
            Console.WriteLine("exceptions: inside before throw");
        }
        throw new ArgumentException("thrown after the lock");
    }

    private static string LockInCatch()
    {
        try
        {
            throw new FormatException("bad");
        }
        catch (FormatException e)
        {
            lock (Gate)
            {
                return e.Message;
            }
        }
    }

    private static int LockInFinally()
    {
        int value = 0;
        try
        {
            value = 1;
        }
        finally
        {
            lock (Gate)
            {
                value += 1;
            }
        }
        return value;
    }

    // A method whose whole body is a throw: no ret at all.
    private static void OnlyThrows() => throw new NotSupportedException("nothing else here");
}

/// <summary>Threads: a contended lock (one holds it ~50 ms), and Monitor.Wait/Pulse inside locks.</summary>
public static class Threads
{
    private static readonly object Gate = new object();
    private static readonly object Queue = new object();

    public static void Run()
    {
        Contended();
        WaitPulse();
    }

    // The holder takes the lock and signals; the waiter then blocks on the lock until the holder leaves.
    private static void Contended()
    {
        var held = new ManualResetEventSlim();
        string order = "";
        var holder = new Thread(() =>
        {
            lock (Gate)
            {
                held.Set();
                Thread.Sleep(50);
                order += "holder;";
            }
        });
        holder.Start();
        held.Wait();
        lock (Gate)
        {
            order += "waiter;";
        }
        holder.Join();
        Console.WriteLine($"threads: contended order {order}");
    }

    // A one-slot queue: the consumer waits inside the lock, the producer pulses inside it.
    private static void WaitPulse()
    {
        int? slot = null;
        int sum = 0;
        var consumer = new Thread(() =>
        {
            for (int i = 0; i < 3; i++)
            {
                lock (Queue)
                {
                    while (slot == null)
                        Monitor.Wait(Queue);
                    sum += slot.Value;
                    slot = null;
                    Monitor.PulseAll(Queue);
                }
            }
        });
        consumer.Start();
        for (int i = 1; i <= 3; i++)
        {
            lock (Queue)
            {
                while (slot != null)
                    Monitor.Wait(Queue);
                slot = i;
                Monitor.Pulse(Queue);
            }
        }
        consumer.Join();
        Console.WriteLine($"threads: wait/pulse sum {sum}");
    }
}
