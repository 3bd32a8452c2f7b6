// Mono .mdb corpus (tests/integration/mdb.sh compiles it with mcs -debug): exceptions thrown inside
// and after woven locks, whose stack traces must name the same lines woven and un-woven, and a slow
// lock whose report must name its line.  Each lock carries a "site: NAME" marker on its line.
using System;
using System.Threading;

namespace Traces
{
    public static class Program
    {
        private static readonly object Gate = new object();
        private static int _count;

        public static int Main()
        {
            Slow();
            Trace(Inside);
            Trace(After);
            Trace(Nested);
            Console.WriteLine("count " + _count);
            return 0;
        }

        // The frames of the stack trace, one a line: "at METHOD in FILE:LINE" (Mono's own IL offsets left out).
        private static void Trace(Action a)
        {
            try { a(); }
            catch (InvalidOperationException e)
            {
                foreach (string frame in e.StackTrace.Split('\n'))
                    Console.WriteLine("trace " + e.Message + ": " + frame.Trim());
            }
        }

        private static void Slow()
        {
            lock (Gate) // site: slow
            {
                Thread.Sleep(30);
                _count++;
            }
        }

        private static void Inside()
        {
            _count++;
            lock (Gate) // site: inside
            {
                _count++;
                throw new InvalidOperationException("inside");
            }
        }

        private static void After()
        {
            lock (Gate) { _count += 2; } // site: after
            if (_count > 0)
                throw new InvalidOperationException("after");
        }

        private static void Nested()
        {
            object inner = new object();
            lock (Gate) { lock (inner) { _count++; } } // site: nested
            lock (inner)
            {
                Monitor.Enter(Gate); // site: monitor
                try { throw new InvalidOperationException("nested"); }
                finally { Monitor.Exit(Gate); }
            }
        }
    }
}
