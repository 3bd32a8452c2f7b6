// One lock (Inventory.Reserve) held 20 ms each time, reached from Checkout and from Restock on four threads, and
// once from an async method after an await; `flood` instead holds it 6 ms 150 times in a row from one caller.
// Prints what it did, one "name count" a line, for tests/integration/stacks.sh.
using System;
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

        static int Main(string[] args)
        {
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
