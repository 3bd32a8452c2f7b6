// What LockTime leaves alone: an attribute named LockTimeIgnoreAttribute, of the project's own (no
// package reference), on a method - its lambdas and iterators go with it - and on a type (its nested
// types too). tests/integration/filter.sh builds it (Debug, Release) and checks that none of these
// is woven and the rest is; its patterns (--include/--exclude) pick among Kept's methods.
using System;
using System.Collections.Generic;
using System.Linq;

namespace Filter
{

    [AttributeUsage(AttributeTargets.Assembly | AttributeTargets.Class | AttributeTargets.Struct | AttributeTargets.Method)]
    internal sealed class LockTimeIgnoreAttribute : Attribute
    {
    }

    public static class Kept
    {
        private static readonly object Gate = new object();
        private static int _count;

        public static void Timed()
        {
            lock (Gate)
                _count++;
        }

        [LockTimeIgnore]
        public static void Untimed()
        {
            lock (Gate)
                _count++;
            Action inLambda = () => { lock (Gate) _count++; };
            inLambda();
            _count += Numbers().Sum();
        }

        private static IEnumerable<int> Numbers()
        {
            lock (Gate)
                yield return 1;
        }

        public static void Counted()
        {
            lock (Gate)
                _count += 2;
        }

        public static void Run()
        {
            Timed();
            Counted();
            Untimed();
            Ignored.Run();
            Console.WriteLine($"kept: {_count}");
        }
    }

    public static class Program
    {
        public static void Main()
        {
            Kept.Run();
            Console.WriteLine("done");
        }
    }

    [LockTimeIgnore]
    public static class Ignored
    {
        private static readonly object Gate = new object();

        public static void Run()
        {
            lock (Gate)
                Nested.Run();
        }

        private static class Nested
        {
            public static void Run()
            {
                lock (Gate)
                    Console.WriteLine("ignored: ran");
            }
        }
    }
}
