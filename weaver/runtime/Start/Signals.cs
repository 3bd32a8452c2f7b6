// Signals.cs - the summary and report when the process is asked to terminate (SIGTERM) or interrupted (SIGINT, Ctrl+C).
using System;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>
    /// SIGTERM ends a process without <c>AppDomain.ProcessExit</c> on .NET 10 and later (the runtime no
    /// longer handles it), on .NET Framework and on Mono: a service stopped by <c>kill</c>, systemd or a
    /// container runtime would write no summary and no report. On a framework with
    /// <c>System.Runtime.InteropServices.PosixSignalRegistration</c> (.NET 6+, Unix) the registry's owner
    /// registers a handler for SIGTERM that writes what the exit writes (<see cref="Runtime.Terminating"/>) and
    /// does not cancel the signal: the process then ends as it would have, with the same exit code (143 when
    /// nothing else handles it). A program woven for .NET 6+ registers it in the start, before its first timed
    /// lock returns, by a direct call (<see cref="RegisterDirect"/>, about half a millisecond); any other copy
    /// (a netstandard2.0 library's, whose framework the weaver cannot know) through reflection, from the
    /// run-time's thread (<see cref="Register"/>: the process's first look-up of a type by name takes 11-40 ms
    /// of CPU, which the first lock must not wait for). The program's own
    /// handlers are untouched: .NET calls the handlers of a signal from the last registered to the first
    /// (.NET 10 calls all of them, each seeing whether one before it cancelled; .NET 6 to 9 stop at the
    /// first that cancels). So a handler of the program's registered later (the Generic Host's, when the
    /// host starts after the first timed lock) runs first, and when it cancels, this one does nothing: the
    /// program goes on, and the summary comes at its exit as always. One registered earlier runs after this
    /// one; if it cancels, the program goes on: the summary was written at the signal, and the report is
    /// written again at the exit (<see cref="Runtime.Finish"/>) or at the next SIGTERM.
    /// <para>
    /// SIGINT (Ctrl+C) also ends a .NET process without <c>ProcessExit</c> (exit code 130), yet programs often cancel it to
    /// go on (a shell's command interrupted, a graceful shutdown). So its handler must run after every handler of the
    /// program, and write only when none cancelled: a woven program (an assembly with an entry point, for .NET 6+)
    /// registers it before its own code runs (<see cref="WatchInterrupt"/>, from the module initializer or the entry
    /// point, <see cref="ExitOrder.Watch"/>), and .NET calls the handlers of a signal from the last registered to the
    /// first: the program's, registered later, run before it (.NET 10 then calls it with their verdict, .NET 6 to 9 not
    /// at all once one cancelled). It never cancels the signal: the process ends as it would have. A library's copy
    /// registers none (the program's handlers may come before it).
    /// </para>
    /// </summary>
    [CompilerGenerated]
    internal static class Signals
    {
        /// <summary><c>PosixSignal.SIGTERM</c>: the enum's raw value, the same on every Unix.</summary>
        const int Sigterm = -4;

        /// <summary><c>PosixSignalContext.Cancel</c>, found at the first signal: whether a handler that ran before cancelled it.</summary>
        static PropertyInfo cancel;

        /// <summary>
        /// Registers <see cref="OnTerminate"/> for SIGTERM by a direct call to <c>PosixSignalRegistration.Create</c>:
        /// the weaver writes this body for a target whose framework has the type (.NET 6+, weave_merge_direct.c).
        /// Returns the registration (kept alive by the caller: its finalizer would unregister it), or null: this
        /// body, which the other targets keep (their run-time's thread tries <see cref="Register"/>). May throw
        /// (no signals on this platform): the caller catches.
        /// </summary>
        internal static object RegisterDirect()
        {
            return null;
        }

        /// <summary>
        /// Registers <see cref="OnTerminate"/> for SIGTERM through reflection. Returns the registration (kept alive
        /// by the caller), or null when the framework has none or anything fails. Never throws.
        /// </summary>
        internal static object Register()
        {
            try {
                Type registration = Type.GetType("System.Runtime.InteropServices.PosixSignalRegistration, System.Runtime.InteropServices", false);
                if (registration == null)
                    return null;
                MethodInfo create = registration.GetMethod("Create", BindingFlags.Public | BindingFlags.Static);
                if (create == null)
                    return null;
                ParameterInfo[] parameters = create.GetParameters();
                if (parameters.Length != 2 || !parameters[0].ParameterType.IsEnum)
                    return null;
                /* Action<PosixSignalContext> bound to a method taking object: a delegate's parameter may be more general */
                MethodInfo handler = typeof(Signals).GetMethod("OnTerminate", BindingFlags.NonPublic | BindingFlags.Static);
                Delegate action = Delegate.CreateDelegate(parameters[1].ParameterType, handler, false);
                if (action == null)
                    return null;
                object[] args = new object[2];
                args[0] = Enum.ToObject(parameters[0].ParameterType, Sigterm);
                args[1] = action;
                return create.Invoke(null, args);
            } catch (Exception) {
                return null; /* PlatformNotSupportedException: no signal handling here */
            }
        }

        /// <summary>
        /// The SIGTERM handler: the summary and report now, unless a handler that ran before cancelled the
        /// signal (the program goes on); this one never cancels it. Never throws.
        /// </summary>
        static void OnTerminate(object context)
        {
            try {
                if (!Cancelled(context))
                    Runtime.Terminating();
            } catch (Exception) {
            }
        }

        /// <summary>True when a handler that ran before cancelled the signal of <paramref name="context"/> (a <c>PosixSignalContext</c>).</summary>
        static bool Cancelled(object context)
        {
            if (cancel == null) {
                Type type = Type.GetType("System.Runtime.InteropServices.PosixSignalContext, System.Runtime.InteropServices", false);
                cancel = type != null ? type.GetProperty("Cancel", BindingFlags.Public | BindingFlags.Instance) : null;
            }
            object cancelled = cancel != null ? cancel.GetValue(context, null) : null;
            return cancelled is bool && (bool)cancelled;
        }

        /// <summary>The SIGINT registration (<see cref="RegisterInterruptDirect"/>), kept alive: its finalizer would unregister it.</summary>
        static object interrupt;
        static int interruptWatched;

        /// <summary>
        /// Registers <see cref="OnInterrupt"/> for SIGINT once, before the program's code runs (<see cref="ExitOrder.Watch"/>):
        /// in a program woven for .NET 6+ only (<see cref="RegisterInterruptDirect"/>), not starting the run-time. Never throws.
        /// </summary>
        internal static void WatchInterrupt()
        {
            if (Interlocked.CompareExchange(ref interruptWatched, 1, 0) != 0)
                return;
            try {
                interrupt = RegisterInterruptDirect();
            } catch (Exception) {
            }
        }

        /// <summary>
        /// Registers <see cref="OnInterrupt"/> for SIGINT by a direct call to <c>PosixSignalRegistration.Create</c>: the
        /// weaver writes this body for an assembly with an entry point whose framework has the type (.NET 6+,
        /// weave_merge_direct.c). Returns the registration, or null: this body, which libraries and the other targets
        /// keep. May throw (no signals on this platform): the caller catches.
        /// </summary>
        internal static object RegisterInterruptDirect()
        {
            return null;
        }

        /// <summary>
        /// The SIGINT handler, the last of the process's: unless a handler of the program's cancelled the signal, the
        /// summary and report now (the owner's, <see cref="Runtime.Interrupted"/>; nothing when no timed lock was taken
        /// yet), then the process ends as it would have. Never throws.
        /// </summary>
        static void OnInterrupt(object context)
        {
            try {
                if (!Cancelled(context))
                    Runtime.Interrupted();
            } catch (Exception) {
            }
        }
    }
}
