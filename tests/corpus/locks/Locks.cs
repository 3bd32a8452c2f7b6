// Each lock type tests/integration/locks.sh looks for: every acquisition carries a marker
// "// site: KIND" on its line (the kind `locktime list` must print there), and calls that are not
// acquisitions of a lock a "// not a site" marker. Main runs a contended case of each type (a 60 ms
// hold, a waiter), readers that overlap, an async holder of a semaphore, and the misuses whose
// exceptions must stay as they are; it prints what happened, nothing that depends on timing.
using System;
using System.Threading;
using System.Threading.Tasks;

namespace Locks
{
    /// <summary>A 60 ms hold on one thread while another waits: Hold runs first, Wait once it holds.</summary>
    static class Contended
    {
        public static void Run(Action hold, Action wait)
        {
            using (var held = new ManualResetEventSlim(false))
            {
                var holder = new Thread(() => { hold(); });
                Holding = held;
                holder.Start();
                held.Wait();
                wait();
                holder.Join();
            }
        }

        /// <summary>Set by the holder once it has the lock.</summary>
        public static ManualResetEventSlim Holding;
    }

    sealed class Cache
    {
        readonly ReaderWriterLockSlim rw = new ReaderWriterLockSlim(LockRecursionPolicy.SupportsRecursion);
        int value;

        public void Write(int v)
        {
            rw.EnterWriteLock(); // site: ReaderWriterLockSlim.EnterWriteLock
            try { Contended.Holding.Set(); Thread.Sleep(60); value = v; }
            finally { rw.ExitWriteLock(); }
        }

        public int Read()
        {
            rw.EnterReadLock(); // site: ReaderWriterLockSlim.EnterReadLock
            try { return value; }
            finally { rw.ExitReadLock(); }
        }

        public int SlowRead(Barrier together)
        {
            if (!rw.TryEnterReadLock(5000)) // site: ReaderWriterLockSlim.TryEnterReadLock
                return -1;
            try { together.SignalAndWait(); Thread.Sleep(60); return value; }
            finally { rw.ExitReadLock(); }
        }

        public bool TryWrite(TimeSpan timeout)
        {
            if (!rw.TryEnterWriteLock(timeout)) // site: ReaderWriterLockSlim.TryEnterWriteLock
                return false;
            rw.ExitWriteLock();
            return true;
        }

        public void Upgrade(int v)
        {
            rw.EnterUpgradeableReadLock(); // site: ReaderWriterLockSlim.EnterUpgradeableReadLock
            try
            {
                if (value != v)
                {
                    rw.EnterWriteLock(); // site: ReaderWriterLockSlim.EnterWriteLock
                    value = v;
                    rw.ExitWriteLock();
                }
            }
            finally { rw.ExitUpgradeableReadLock(); }
            if (rw.TryEnterUpgradeableReadLock(100)) // site: ReaderWriterLockSlim.TryEnterUpgradeableReadLock
                rw.ExitUpgradeableReadLock();
        }

        public static void Misuse()
        {
            var once = new ReaderWriterLockSlim(LockRecursionPolicy.NoRecursion);
            try { once.ExitReadLock(); } catch (SynchronizationLockException e) { Console.WriteLine("rw exit unheld: " + e.GetType().Name); }
            once.EnterReadLock(); // site: ReaderWriterLockSlim.EnterReadLock
            try { once.EnterReadLock(); } // site: ReaderWriterLockSlim.EnterReadLock
            catch (LockRecursionException e) { Console.WriteLine("rw recursion: " + e.GetType().Name); }
            once.ExitReadLock();
        }
    }

    static class Gates
    {
        static readonly SemaphoreSlim gate = new SemaphoreSlim(1, 1);
        static readonly SemaphoreSlim pool = new SemaphoreSlim(3, 3);

        public static void Hold()
        {
            gate.Wait(); // site: SemaphoreSlim.Wait
            Contended.Holding.Set();
            Thread.Sleep(60);
            gate.Release();
        }

        public static bool Take()
        {
            if (!gate.Wait(5000)) // site: SemaphoreSlim.Wait
                return false;
            gate.Release();
            using (var cts = new CancellationTokenSource())
            {
                if (!gate.Wait(TimeSpan.FromSeconds(5), cts.Token)) // site: SemaphoreSlim.Wait
                    return false;
                gate.Release();
                gate.Wait(cts.Token); // site: SemaphoreSlim.Wait
                gate.Release();
            }
            return true;
        }

        public static async Task HoldAcrossAwait()
        {
            await gate.WaitAsync(); // site: SemaphoreSlim.WaitAsync
            try { Contended.Holding.Set(); await Task.Delay(60); }
            finally { gate.Release(); }
        }

        public static async Task<bool> TakeAsync()
        {
            if (!await gate.WaitAsync(5000)) // site: SemaphoreSlim.WaitAsync
                return false;
            gate.Release();
            using (var cts = new CancellationTokenSource())
            {
                await gate.WaitAsync(cts.Token); // site: SemaphoreSlim.WaitAsync
                gate.Release();
                if (!await gate.WaitAsync(TimeSpan.FromSeconds(5), cts.Token)) // site: SemaphoreSlim.WaitAsync
                    return false;
                gate.Release();
            }
            return true;
        }

        static readonly SemaphoreSlim queue = new SemaphoreSlim(1, 1);
        static int served;

        // Eight workers serialized on one SemaphoreSlim(1, 1), 200 turns each: every WaitAsync but the
        // first waits, and its task's continuations run as work items of their own.
        static async Task Serve()
        {
            for (int i = 0; i < 200; i++)
            {
                await queue.WaitAsync(); // site: SemaphoreSlim.WaitAsync
                try { served++; await Task.Yield(); }
                finally { queue.Release(); }
            }
        }

        public static int Serialized()
        {
            var workers = new Task[8];
            for (int k = 0; k < workers.Length; k++)
                workers[k] = Task.Run(Serve);
            Task.WaitAll(workers);
            return served;
        }

        public static int Counting()
        {
            pool.Wait(); // site: SemaphoreSlim.Wait
            pool.Wait(); // site: SemaphoreSlim.Wait
            int left = pool.CurrentCount;
            pool.Release(2);
            return left;
        }

        public static void Misuse()
        {
            try { gate.Release(); } catch (SemaphoreFullException e) { Console.WriteLine("semaphore over: " + e.GetType().Name); }
        }
    }

    sealed class Spinner
    {
        SpinLock spin = new SpinLock(true);
        long count;

        public void Hold()
        {
            bool taken = false;
            spin.Enter(ref taken); // site: SpinLock.Enter
            Contended.Holding.Set();
            Thread.Sleep(60);
            count++;
            spin.Exit();
        }

        public bool Add()
        {
            bool taken = false;
            spin.TryEnter(5000, ref taken); // site: SpinLock.TryEnter
            if (!taken)
                return false;
            count++;
            spin.Exit(false);
            var local = new SpinLock(false);
            bool mine = false;
            local.TryEnter(ref mine); // site: SpinLock.TryEnter
            if (mine)
                local.Exit();
            return true;
        }

        public void Misuse()
        {
            try { spin.Exit(); } catch (SynchronizationLockException e) { Console.WriteLine("spin exit unheld: " + e.GetType().Name); }
        }
    }

    sealed class Mutexes
    {
        readonly Mutex owned = new Mutex();
        readonly AutoResetEvent signal = new AutoResetEvent(true);

        Mutex Gate { get { return owned; } }

        public void Hold()
        {
            owned.WaitOne(); // site: Mutex.WaitOne
            Contended.Holding.Set();
            Thread.Sleep(60);
            owned.ReleaseMutex();
        }

        public bool Take()
        {
            Gate.WaitOne(); // site: Mutex.WaitOne
            Gate.ReleaseMutex();
            if (!owned.WaitOne(5000)) // site: Mutex.WaitOne
                return false;
            owned.ReleaseMutex();
            var local = new Mutex(false);
            local.WaitOne(TimeSpan.FromSeconds(1)); // site: Mutex.WaitOne
            local.ReleaseMutex();
            local.Dispose();
            return TakeOf(owned);
        }

        static bool TakeOf(Mutex m)
        {
            bool got = m.WaitOne(1000, false); // site: Mutex.WaitOne
            if (got)
                m.ReleaseMutex();
            if (AsHandle(m).WaitOne(1000)) // site: WaitHandle.WaitOne
                m.ReleaseMutex();
            return got;
        }

        /// <summary>A Mutex as a WaitHandle: its WaitOne is a Mutex's when the stub finds one at run time.</summary>
        static WaitHandle AsHandle(Mutex m)
        {
            return m;
        }

        public bool Signal()
        {
            return signal.WaitOne(0); // not a site
        }

        public static void Misuse()
        {
            var m = new Mutex();
            var t = new Thread(() => { m.WaitOne(); }); // site: Mutex.WaitOne
            t.Start();
            t.Join();
            try { m.WaitOne(); } // site: Mutex.WaitOne
            catch (AbandonedMutexException e) { Console.WriteLine("mutex abandoned: " + e.GetType().Name); Thread.Sleep(60); m.ReleaseMutex(); }
            try { m.ReleaseMutex(); } catch (ApplicationException e) { Console.WriteLine("mutex release unheld: " + e.GetType().Name); }
        }
    }

    /// <summary>A Mutex reached as a WaitHandle, and WaitAny / WaitAll over a Mutex and events.</summary>
    sealed class Handles
    {
        readonly Mutex owned = new Mutex();
        readonly ManualResetEvent never = new ManualResetEvent(false);
        readonly AutoResetEvent ready = new AutoResetEvent(true);

        public void Hold()
        {
            Handle().WaitOne(); // site: WaitHandle.WaitOne
            Contended.Holding.Set();
            Thread.Sleep(60);
            owned.ReleaseMutex();
        }

        public int Take()
        {
            int i = WaitHandle.WaitAny(new WaitHandle[] { never, owned }, 5000); // site: WaitHandle.WaitAny
            if (i == 1)
                owned.ReleaseMutex();
            bool all = WaitHandle.WaitAll(new WaitHandle[] { owned, ready }, 5000); // site: WaitHandle.WaitAll
            if (all)
                owned.ReleaseMutex();
            bool events = WaitHandle.WaitAny(new WaitHandle[] { never, ready }, 0) == 1; // site: WaitHandle.WaitAny
            bool signalled = Event().WaitOne(0); // site: WaitHandle.WaitOne
            return i + (all ? 10 : 0) + (events ? 100 : 0) + (signalled ? 1000 : 0);
        }

        /// <summary>WaitAny acquires a Mutex whose owner ended holding it: AbandonedMutexException, with its index.</summary>
        public static void Abandoned()
        {
            var m = new Mutex();
            var t = new Thread(() => { m.WaitOne(); }); // site: Mutex.WaitOne
            t.Start();
            t.Join();
            using (var never = new ManualResetEvent(false))
            {
                try { WaitHandle.WaitAny(new WaitHandle[] { never, m }); } // site: WaitHandle.WaitAny
                catch (AbandonedMutexException e) { Console.WriteLine("any abandoned at " + e.MutexIndex); Thread.Sleep(60); m.ReleaseMutex(); }
            }
        }

        WaitHandle Handle()
        {
            return owned;
        }

        WaitHandle Event()
        {
            return ready;
        }
    }

    sealed class OldRw
    {
        readonly ReaderWriterLock rw = new ReaderWriterLock();

        public void Hold()
        {
            rw.AcquireWriterLock(Timeout.Infinite); // site: ReaderWriterLock.AcquireWriterLock
            Contended.Holding.Set();
            Thread.Sleep(60);
            rw.ReleaseWriterLock();
        }

        public bool Read()
        {
            rw.AcquireReaderLock(TimeSpan.FromSeconds(5)); // site: ReaderWriterLock.AcquireReaderLock
            LockCookie cookie = rw.UpgradeToWriterLock(5000); // site: ReaderWriterLock.UpgradeToWriterLock
            bool writer = rw.IsWriterLockHeld;
            rw.DowngradeFromWriterLock(ref cookie);
            rw.ReleaseReaderLock();
            return writer;
        }

        /// <summary>ReleaseLock gives the writer lock up for 60 ms, RestoreLock takes it back: not hold time.</summary>
        public bool Pause()
        {
            rw.AcquireWriterLock(1000); // site: ReaderWriterLock.AcquireWriterLock
            LockCookie cookie = rw.ReleaseLock();
            bool released = !rw.IsWriterLockHeld;
            Thread.Sleep(60);
            rw.RestoreLock(ref cookie);
            bool restored = rw.IsWriterLockHeld;
            rw.ReleaseWriterLock();
            return released && restored;
        }

        public static void Misuse()
        {
            var rw = new ReaderWriterLock();
            try { rw.ReleaseReaderLock(); } catch (ApplicationException e) { Console.WriteLine("old rw release unheld: " + e.GetType().Name); }
        }
    }

    /// <summary>A SemaphoreSlim used as a lock and a Monitor lock, taken in both orders on one thread: a potential deadlock.</summary>
    static class Ordered
    {
        static readonly SemaphoreSlim gate = new SemaphoreSlim(1, 1);
        static readonly object monitor = new object();

        public static int Run()
        {
            int n = 0;
            lock (monitor) // site: Monitor.Enter
            {
                gate.Wait(); // site: SemaphoreSlim.Wait
                n++;
                gate.Release();
            }
            gate.Wait(); // site: SemaphoreSlim.Wait
            lock (monitor) // site: Monitor.Enter
                n++;
            gate.Release();
            return n;
        }
    }

    /// <summary>Monitor.TryEnter with a timeout (ms or TimeSpan) behind a holder: it tries with 0 first, so the holder is named, also by a try that gives up.</summary>
    static class Timed
    {
        static readonly object gate = new object();

        public static void Hold()
        {
            lock (gate) // site: Monitor.Enter
            {
                Contended.Holding.Set();
                Thread.Sleep(60);
            }
        }

        public static bool Take()
        {
            if (!Monitor.TryEnter(gate, 5000)) // site: Monitor.TryEnter
                return false;
            Monitor.Exit(gate);
            return true;
        }

        public static bool TakeSpan()
        {
            if (!Monitor.TryEnter(gate, TimeSpan.FromSeconds(5))) // site: Monitor.TryEnter
                return false;
            Monitor.Exit(gate);
            return true;
        }

        public static bool GiveUp()
        {
            bool taken = false;
            Monitor.TryEnter(gate, 10, ref taken); // site: Monitor.TryEnter
            if (taken)
                Monitor.Exit(gate);
            return taken;
        }
    }

    static class Program
    {
        static readonly object monitor = new object();

        static int Main()
        {
            var cache = new Cache();
            Contended.Run(() => cache.Write(1), () => Console.WriteLine("read " + cache.Read()));
            using (var together = new Barrier(2))
            {
                var other = new Thread(() => cache.SlowRead(together));
                other.Start();
                Console.WriteLine("slow read " + cache.SlowRead(together));
                other.Join();
            }
            cache.Upgrade(2);
            Console.WriteLine("try write " + cache.TryWrite(TimeSpan.FromSeconds(1)));
            Cache.Misuse();

            Contended.Run(Gates.Hold, () => Console.WriteLine("take " + Gates.Take()));
            Contended.Run(() => Gates.HoldAcrossAwait().Wait(), () => Console.WriteLine("take async " + Gates.TakeAsync().Result));
            Console.WriteLine("counting left " + Gates.Counting());
            Console.WriteLine("serialized " + Gates.Serialized());
            Gates.Misuse();

            var spinner = new Spinner();
            Contended.Run(spinner.Hold, () => Console.WriteLine("spin add " + spinner.Add()));
            spinner.Misuse();

            var mutexes = new Mutexes();
            Contended.Run(mutexes.Hold, () => Console.WriteLine("mutex take " + mutexes.Take()));
            Console.WriteLine("event " + mutexes.Signal());
            Mutexes.Misuse();
            var handles = new Handles();
            Contended.Run(handles.Hold, () => Console.WriteLine("handles take " + handles.Take()));
            Handles.Abandoned();

            var old = new OldRw();
            Contended.Run(old.Hold, () => Console.WriteLine("old rw upgrade " + old.Read()));
            Console.WriteLine("old rw release and restore " + old.Pause());
            OldRw.Misuse();

            Console.WriteLine("ordered " + Ordered.Run());
            Contended.Run(Timed.Hold, () => Console.WriteLine("timed take " + Timed.Take()));
            Contended.Run(Timed.Hold, () => Console.WriteLine("timed give up " + Timed.GiveUp()));
            Contended.Run(Timed.Hold, () => Console.WriteLine("timed take, a TimeSpan " + Timed.TakeSpan()));

            lock (monitor) // site: Monitor.Enter
                Console.WriteLine("done");
            return 0;
        }
    }
}
