// Two threads, each holding one lock and then waiting for the other's: a deadlock for every lock type
// whose blocking wait LockTime follows (args[0] names it), or "none": the two orders one after the
// other. The lines marked "// KIND waits" are where each thread blocks; the program hangs there.
using System;
using System.Threading;

static class Deadlocks
{
    static readonly Barrier Both = new Barrier(2);

    static void Run(Action first, Action second)
    {
        var t1 = new Thread(() => first()) { IsBackground = true };
        var t2 = new Thread(() => second()) { IsBackground = true };
        t1.Start();
        t2.Start();
        t1.Join();
        t2.Join();
    }

    static void Monitors()
    {
        object a = new object(), b = new object();
        Run(() => {
            lock (a) {
                Both.SignalAndWait();
                lock (b) { } // monitor waits
            }
        }, () => {
            lock (b) {
                Both.SignalAndWait();
                lock (a) { } // monitor waits
            }
        });
    }

    static void Locks()
    {
        Lock a = new Lock(), b = new Lock();
        Run(() => {
            lock (a) {
                Both.SignalAndWait();
                lock (b) { } // lock waits
            }
        }, () => {
            lock (b) {
                Both.SignalAndWait();
                lock (a) { } // lock waits
            }
        });
    }

    static void WriteLock(bool reader)
    {
        var rw = new ReaderWriterLockSlim();
        object m = new object();
        Run(() => {
            if (reader)
                rw.EnterReadLock();
            else
                rw.EnterWriteLock();
            Both.SignalAndWait();
            lock (m) { } // rw waits
        }, () => {
            lock (m) {
                Both.SignalAndWait();
                rw.EnterWriteLock(); // rw waits
            }
        });
    }

    static void Semaphore()
    {
        var s = new SemaphoreSlim(1, 1);
        object m = new object();
        Run(() => {
            s.Wait();
            Both.SignalAndWait();
            lock (m) { } // semaphore waits
        }, () => {
            lock (m) {
                Both.SignalAndWait();
                s.Wait(); // semaphore waits
            }
        });
    }

    static void Mutexes()
    {
        var x = new Mutex();
        object m = new object();
        Run(() => {
            x.WaitOne();
            Both.SignalAndWait();
            lock (m) { } // mutex waits
        }, () => {
            lock (m) {
                Both.SignalAndWait();
                x.WaitOne(); // mutex waits
            }
        });
    }

    static int Main(string[] args)
    {
        switch (args[0]) {
        case "monitor": Monitors(); break;
        case "lock": Locks(); break;
        case "rw": WriteLock(false); break;
        case "reader": WriteLock(true); break;
        case "semaphore": Semaphore(); break;
        case "mutex": Mutexes(); break;
        case "none": {
            object a = new object(), b = new object();
            lock (a) {
                lock (b) { }
            }
            lock (b) {
                lock (a) { }
            }
            break;
        }
        }
        Console.WriteLine("done");
        return 0;
    }
}
