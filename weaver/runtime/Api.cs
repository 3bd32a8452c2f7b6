// Api.cs - the entry points the weaver's call-site stubs call: acquired, released, waited, not acquired.
using System;
using System.Runtime.CompilerServices;

namespace LockTime.Runtime
{
    /// <summary>
    /// What the call-site stubs call (docs/report-format.md has the data; README.md the stub shapes).
    /// A stub reads <see cref="Clock.Ticks"/> before and after the lock call and passes the site's id
    /// (0-based, from the site table). Every entry point catches everything: timing never throws into
    /// the program, and a lock's thread never blocks or does I/O here. When the fast try fails, the stub
    /// calls <see cref="Waiting"/> before it blocks: only then is the holder looked for.
    /// </summary>
    [CompilerGenerated]
    internal static class Api
    {
        /// <summary>
        /// True when timing is off (LOCKTIME_DISABLED, or the start failed): a stub then calls only the
        /// original. A static readonly field of an initialized class, so the JIT folds the test. Reading
        /// it first starts this copy of the run-time (<see cref="Runtime.Start"/>).
        /// </summary>
        internal static readonly bool Off = Runtime.Start();

        /// <summary>
        /// A lock of <paramref name="site"/> was acquired: the stub read <paramref name="start"/> before
        /// the attempt and <paramref name="acquired"/> when it had the lock (equal when the fast try took
        /// it); <paramref name="contended"/> when the fast try failed and the thread had to wait.
        /// </summary>
        internal static void Acquired(object lockObject, int site, long start, long acquired, bool contended)
        {
            Push(lockObject, site, start, acquired, contended, false);
        }

        /// <summary>As <see cref="Acquired"/>, for <c>Lock.EnterScope</c>: released by <see cref="ReleasedScope"/>.</summary>
        internal static void AcquiredScope(object lockObject, int site, long start, long acquired, bool contended)
        {
            Push(lockObject, site, start, acquired, contended, true);
        }

        /// <summary>
        /// The fast try of <paramref name="lockObject"/> failed and the thread is about to block in the
        /// lock call: the site that holds it now (any copy's) is kept for the contended acquisition that
        /// follows, which charges its wait to that site.
        /// </summary>
        internal static void Waiting(object lockObject)
        {
            try {
                Collector c = Runtime.Current;
                ThreadRecord t = Recorder(c);
                if (t != null)
                    t.Behind = c.FindHolder(lockObject);
            } catch (Exception) {
            }
        }

        static void Push(object lockObject, int site, long start, long acquired, bool contended, bool scope)
        {
            try {
                Collector c = Runtime.Current;
                ThreadRecord t = Recorder(c);
                if (t == null)
                    return;
                t.Push(lockObject, site, acquired, acquired - start, contended, scope);
                Action<object, int> order = c.OrderEnter;
                if (order != null)
                    order(lockObject, c.OrderBase + site);
            } catch (Exception) {
            }
        }

        /// <summary>The calling thread's record when <paramref name="c"/> records it (started, and not the run-time's own work), else null.</summary>
        static ThreadRecord Recorder(Collector c)
        {
            if (c == null)
                return null;
            ThreadRecord t = c.Thread();
            return t.Busy ? null : t;
        }

        /// <summary>
        /// <paramref name="lockObject"/> was released (the stub calls this after the original release):
        /// the innermost frame of that object ends, its wait and hold are recorded. No frame: nothing.
        /// </summary>
        internal static void Released(object lockObject)
        {
            Pop(lockObject, false);
        }

        /// <summary>A <c>Lock.Scope</c> was disposed: the innermost frame taken by EnterScope ends.</summary>
        internal static void ReleasedScope()
        {
            Pop(null, true);
        }

        static void Pop(object lockObject, bool scope)
        {
            try {
                long now = Clock.Ticks();
                Collector c = Runtime.Current;
                ThreadRecord t = ThreadRecord.Current;
                if (c == null || t == null || t.Depth == 0)
                    return;
                int i = scope ? t.FindScope() : t.FindLock(lockObject);
                if (i < 0)
                    return;
                Frame f = t.Remove(i);
                if (t.Busy)
                    return;
                c.Released(t, f, now);
                Action<object> order = c.OrderExit;
                if (order != null)
                    order(f.Lock);
            } catch (Exception) {
            }
        }

        /// <summary>
        /// The thread is about to call <c>Monitor.Wait</c> on <paramref name="lockObject"/>, which gives the
        /// lock up until it returns: a waiter meanwhile does not take this thread for its holder.
        /// </summary>
        internal static void WaitBegins(object lockObject)
        {
            try {
                ThreadRecord t = ThreadRecord.Current;
                if (t != null)
                    t.SetInWait(lockObject, true);
            } catch (Exception) {
            }
        }

        /// <summary>
        /// The thread spent <paramref name="ticks"/> inside <c>Monitor.Wait</c> on <paramref name="lockObject"/>:
        /// not hold time, so the innermost frame of that object starts that much later; it holds the lock again.
        /// </summary>
        internal static void Waited(object lockObject, long ticks)
        {
            try {
                ThreadRecord t = ThreadRecord.Current;
                if (t == null)
                    return;
                t.SetInWait(lockObject, false);
                int i = t.FindLock(lockObject);
                if (i >= 0)
                    t.Frames[i].Acquired += ticks;
            } catch (Exception) {
            }
        }

        /// <summary>
        /// The lock of a static <c>[MethodImpl(Synchronized)]</c> method: the <see cref="Type"/> of its
        /// class, which the runtime locks around the body (the stub passes <c>ldtoken</c> of the class).
        /// </summary>
        internal static object TypeOf(RuntimeTypeHandle type)
        {
            return Type.GetTypeFromHandle(type);
        }

        /// <summary>A TryEnter of <paramref name="site"/> failed after waiting from <paramref name="start"/> to <paramref name="end"/>.</summary>
        internal static void NotAcquired(int site, long start, long end)
        {
            try {
                Collector c = Runtime.Current;
                ThreadRecord t = Recorder(c);
                if (t != null)
                    c.Failed(t, site, end - start);
            } catch (Exception) {
            }
        }
    }
}
