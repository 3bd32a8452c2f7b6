// Program.cs - a SemaphoreSlim(1, 1) held 60 ms by one thread while another waits, a lock held 30 ms, then
// what the Meter "LockTime" published, read by a MeterListener (which names no instrument of its own). With
// the argument "serve": then the lock taken until a signal ends the process.
using System;
using System.Diagnostics.Metrics;
using System.Threading;

internal static class Program
{
    private static readonly object Gate = new object();
    private static readonly SemaphoreSlim Mutex = new SemaphoreSlim(1, 1);

    private static void Main(string[] args)
    {
        using var held = new ManualResetEventSlim();
        var holder = new Thread(() => { Mutex.Wait(); held.Set(); Thread.Sleep(60); Mutex.Release(); });
        holder.Start();
        held.Wait();
        Mutex.Wait();
        Mutex.Release();
        holder.Join();
        lock (Gate)
            Thread.Sleep(30);
        int instruments = 0;
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) => { if (instrument.Meter.Name == "LockTime") instruments++; };
        listener.Start();
        Thread.Sleep(1500); // the run-time makes its Meter 1 s after its start
        Console.WriteLine("LockTime instruments: " + instruments);
        if (args.Length > 0 && args[0] == "serve") {
            Console.WriteLine("serving");
            while (true) {
                lock (Gate)
                    instruments++;
                Thread.Sleep(1);
            }
        }
    }
}
