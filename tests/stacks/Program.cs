// One lock (Inventory.Reserve) held 20 ms each time, reached from Checkout and from Restock on four threads, and
// once from an async method after an await; `flood` instead holds it 6 ms 150 times in a row from one caller;
// `nested` holds it 20 ms while holding another lock, twice, one second apart, and prints how long each release
// took (the time from the end of the lock's body to the statement after it, what a capture there adds to the
// outer lock's hold), in microseconds.
// Prints what it did, one "name count" a line, for tests/integration/stacks.sh.
using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;

namespace Shop
{
    class Inventory
    {
        readonly object gate = new object();

        public void Reserve(int ms)
        {
            lock (gate) { // Reserve site
                Thread.Sleep(ms);
            }
        }
    }

    static class Program
    {
        static readonly Inventory inventory = new Inventory();
        static int checkouts, restocks;

        static void Checkout() { Interlocked.Increment(ref checkouts); inventory.Reserve(20); } // Checkout call
        static void Restock() { Interlocked.Increment(ref restocks); inventory.Reserve(20); } // Restock call

        static async Task PayAsync()
        {
            await Task.Yield();
            inventory.Reserve(20); // PayAsync call
        }

        static void Flood(int times)
        {
            for (int i = 0; i < times; i++)
                inventory.Reserve(6); // Flood call
        }

        static readonly object outer = new object();

        static long Nested()
        {
            long released;
            lock (outer) { // NestedOuter site
                long end;
                lock (inventory) { // NestedInner site
                    Thread.Sleep(20);
                    end = Stopwatch.GetTimestamp();
                }
                released = Stopwatch.GetTimestamp() - end;
            }
            return released * 1000000 / Stopwatch.Frequency;
        }

        static int Main(string[] args)
        {
            if (args.Length > 0 && args[0] == "nested") {
                long first = Nested();
                Thread.Sleep(1000);
                long second = Nested();
                Console.WriteLine("first_release_us " + first);
                Console.WriteLine("second_release_us " + second);
                return 0;
            }
            if (args.Length > 0 && args[0] == "flood") {
                Flood(150);
                Console.WriteLine("flood 150");
                return 0;
            }
            Thread[] threads = new Thread[4];
            for (int i = 0; i < threads.Length; i++) {
                int k = i;
                threads[i] = new Thread(() => { for (int n = 0; n < 3; n++) { if (k % 2 == 0) Checkout(); else Restock(); } }); // Main lambda
                threads[i].Start();
            }
            foreach (Thread t in threads)
                t.Join();
            PayAsync().Wait();
            Console.WriteLine("checkout " + checkouts);
            Console.WriteLine("restock " + restocks);
            Console.WriteLine("pay 1");
            return 0;
        }
    }
}
