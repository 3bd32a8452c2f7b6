// Signals.cs - the summary and report when the process is asked to terminate (SIGTERM), through reflection.
using System;
using System.Reflection;
using System.Runtime.CompilerServices;

namespace LockTime.Runtime
{
    /// <summary>
    /// SIGTERM ends a process without <c>AppDomain.ProcessExit</c> on .NET 10 and later (the runtime no
    /// longer handles it), on .NET Framework and on Mono: a service stopped by <c>kill</c>, systemd or a
    /// container runtime would write no summary and no report. On a framework with
    /// <c>System.Runtime.InteropServices.PosixSignalRegistration</c> (.NET 6+, Unix) the registry's owner
    /// registers a handler for SIGTERM (<see cref="Register"/>, from the writer thread) that writes what the
    /// exit writes (<see cref="Runtime.Terminating"/>) and does not cancel the signal: the process then ends as
    /// it would have, with the same exit code (143 when nothing else handles it). The program's own
    /// handlers are untouched: .NET calls the handlers of a signal from the last registered to the first
    /// until one cancels, so a handler of the program's that was registered later (and cancels, like the
    /// Generic Host's) runs first and this one not at all - the summary comes at the program's exit, as
    /// always; one registered earlier runs after this one, and if it cancels the program goes on: then the
    /// summary was written at the signal and the report is written again at the exit
    /// (<see cref="Runtime.Finish"/>). SIGINT (Ctrl+C) is left alone: programs cancel it to go on.
    /// The template is netstandard2.0 and merges into frameworks without the type (Mono's mscorlib, net48),
    /// so the type, its <c>Create(PosixSignal, Action&lt;PosixSignalContext&gt;)</c> and the delegate are
    /// reached by reflection; without them nothing is registered, silently.
    /// </summary>
    [CompilerGenerated]
    internal static class Signals
    {
        /// <summary><c>PosixSignal.SIGTERM</c>: the enum's raw value, the same on every Unix.</summary>
        const int Sigterm = -4;

        /// <summary>
        /// Registers <see cref="OnTerminate"/> for SIGTERM. Returns the registration (kept alive by the
        /// caller: its finalizer would unregister it), or null when the framework has none or anything
        /// fails. Never throws.
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

        /// <summary>The SIGTERM handler: the summary and report now; the signal is not cancelled.</summary>
        static void OnTerminate(object context)
        {
            Runtime.Terminating();
        }
    }
}
