// Consoles.cs - the run-time's own writers of the process's standard error and output, apart from Console's.
using System;
using System.IO;
using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;

namespace LockTime.Runtime
{
    /// <summary>
    /// The sinks the line writer uses for <c>stderr</c> and <c>stdout</c> (<see cref="LineSink"/>), over
    /// streams of their own. Not <c>Console.Error</c>: .NET on Unix writes every console stream under the lock of
    /// <c>Console.Out</c> (its cursor tracking), so a line blocked in <c>write()</c> on a stderr that nobody
    /// reads (a pipe into a process that stalled) would stop the program's own <c>Console.Out</c> too. On
    /// Unix the writers go straight to file descriptors 2 and 1 (a <c>FileStream</c> on the descriptor, not
    /// closed by it); elsewhere to <c>Console.OpenStandardError()</c> / <c>OpenStandardOutput()</c>. Each
    /// line is one write (the writer flushes after each), so lines stay whole beside the program's own.
    /// </summary>
    [CompilerGenerated]
    internal static class Consoles
    {
        /// <summary>When set, the writer of the sink <c>stderr</c> instead of the process's standard error (the unit tests capture it).</summary>
#pragma warning disable 0649 // set by the unit tests only
        internal static TextWriter ErrorOverride;
#pragma warning restore 0649

        /// <summary>
        /// On Mono (on Unix), makes the process's <c>Console</c> (its class constructor: the program's <c>Console.Out</c> and
        /// <c>Console.Error</c>) on the calling thread - the program's, in the start, before the run-time's threads
        /// exist -, so that no thread of the run-time is the one that runs it: Mono writes the sinks through
        /// <c>Console.Error</c> (a <c>FileStream</c> cannot take its descriptors), and when the writer thread's first
        /// line made <c>Console</c> while the program's first <c>Console.WriteLine</c> waited for it, Mono let the
        /// program's <c>Console.Out</c> be made before <c>TextWriter</c>'s class constructor had set its line end:
        /// the program's <c>WriteLine</c> threw <c>NullReferenceException</c> (in 1 of about 600 runs). Not in the
        /// core library's own copy (a woven mscorlib's: its start may come inside any of the library's locks, and
        /// <c>Console</c>'s would re-enter it). Elsewhere nothing: .NET makes its console writers lazily, under a
        /// lock. Called before the copy joins the registry (<see cref="Runtime.StartWith"/>). Never throws.
        /// </summary>
        internal static void Prepare()
        {
            try {
                /* Mono on Unix: '/' paths and a core library named mscorlib (.NET's is System.Private.CoreLib; .NET
                   Framework's, on Windows, mscorlib). On .NET only under a host without TRUSTED_PLATFORM_ASSEMBLIES
                   (Runtime.StartWith), 0.3 ms JIT-compiled at load 8; not a look-up of the type Mono.Runtime (the
                   first Assembly.GetType costs .NET's start 25-58 ms) nor Environment.Version (System.Version is not
                   a type the weaver can name in a .NET target) */
                if (Path.DirectorySeparatorChar == '/' && typeof(object).Assembly.FullName.StartsWith("mscorlib,", StringComparison.Ordinal) &&
                    typeof(Consoles).Assembly != typeof(object).Assembly)
                    GC.KeepAlive(Console.Error);
            } catch (Exception) {
            }
        }

        /// <summary>A new sink of the process's standard error (<paramref name="error"/>) or output; over <c>Console.Error</c> / <c>Console.Out</c> when no stream of its own can be made (only then made: a program that never wrote to <c>Console.Error</c> does not pay for its start). Never throws.</summary>
        internal static LineSink Open(bool error)
        {
            try {
                if (error && ErrorOverride != null)
                    return new LineSink(ErrorOverride);
                Stream s;
                if (Path.DirectorySeparatorChar == '/') {
                    s = new FileStream(new SafeFileHandle((IntPtr)(error ? 2 : 1), false), FileAccess.Write, 1);
                    // A regular file: a FileStream writes it at a position of its own (pwrite), over what the
                    // program's Console.Out writes at the descriptor's; and a file never blocks: Console's.
                    if (s.CanSeek) {
                        s.Dispose();
                        return new LineSink(Fallback(error));
                    }
                } else {
                    s = error ? Console.OpenStandardError() : Console.OpenStandardOutput();
                }
                return new LineSink(s, true);
            } catch (Exception) {
                return new LineSink(Fallback(error));
            }
        }

        /// <summary><c>Console.Error</c> (<paramref name="error"/>) or <c>Console.Out</c>; <c>TextWriter.Null</c> when that fails. Never throws.</summary>
        static TextWriter Fallback(bool error)
        {
            try {
                return error ? Console.Error : Console.Out;
            } catch (Exception) {
                return TextWriter.Null;
            }
        }
    }
}
