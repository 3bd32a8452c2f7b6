// StackCapture.cs - the calling thread's stack as frames (method, file, line), named as the user wrote them.
using System;
using System.Diagnostics;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Text;
using System.Threading;

namespace LockTime.Runtime
{
    /// <summary>
    /// Takes the calling thread's call stack (<see cref="StackTrace"/>, with file and line where the PDB has
    /// them), leaving out LockTime's own frames (the run-time's types and the weaver's stubs, named
    /// <c>&lt;LockTime&gt;</c>...), and names each frame's method as reports name sites: <c>Type::Method</c>,
    /// nested types with <c>/</c>, a lambda <c>Type::Outer (lambda)</c>, a local function <c>Type::Outer &gt; Local</c>,
    /// an async method's or iterator's <c>MoveNext</c> the method itself (as .NET's exception stack traces do).
    /// </summary>
    [CompilerGenerated]
    internal static class StackCapture
    {
        const int Cold = 0, Warming = 1, Warm = 2;

        /// <summary>
        /// Whether a capture has been taken in this copy: the first one loads the stack trace's symbol reader and this
        /// module's PDB (30-70 ms on a first call, against 0.05-0.2 ms after).
        /// </summary>
        static int state;

        /// <summary>
        /// Whether a capture now costs what a capture costs once warm: false until one has been taken in this copy (on
        /// a lock's thread, or by <see cref="WarmUp"/>).
        /// </summary>
        internal static bool IsWarm { get { return Volatile.Read(ref state) == Warm; } }

        /// <summary>
        /// Takes this copy's first capture on a thread of its own, once: the capture a lock's thread would otherwise
        /// pay for while it holds other locks (lengthening their holds by tens of milliseconds). The run-time's own
        /// frames are in the woven module, so the capture loads its PDB. Never throws.
        /// </summary>
        internal static void WarmUp()
        {
            if (Interlocked.CompareExchange(ref state, Warming, Cold) != Cold)
                return;
            try {
                Thread thread = new Thread(new ThreadStart(WarmUpLoop));
                thread.IsBackground = true;
                thread.Name = "LockTime stacks";
                Runtime.StartUnflowed(thread);
            } catch (Exception) {
                Volatile.Write(ref state, Cold);
            }
        }

        /// <summary>The warm-up thread's body (<see cref="WarmUp"/>): its locks are not recorded.</summary>
        static void WarmUpLoop()
        {
            ThreadRecord.MakeOwn();
            Take(1, null, null, 0);
            Volatile.Write(ref state, Warm);
        }

        /// <summary>
        /// The stack's innermost <paramref name="depth"/> frames at most, as a captured <see cref="StackEntry"/> (methods,
        /// files or null, lines or 0, key); null when there is none to take (no frame, or the platform gives none: a
        /// trimmed app without stack trace support). The innermost frame is the lock site's method, taken after the
        /// release: it is named as the site is (<paramref name="siteMethod"/>, <paramref name="siteFile"/> or null,
        /// <paramref name="siteLine"/> or 0), the line of the acquisition rather than the release's. Never throws. Costs
        /// tens of microseconds: slow locks only.
        /// </summary>
        [System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessage("Trimming", "IL2026", Justification = "StackFrame.GetMethod gives null for a method whose metadata was trimmed: that frame is left out")]
        internal static StackEntry Take(int depth, string siteMethod, string siteFile, int siteLine)
        {
            try {
                StackFrame[] frames = new StackTrace(1, true).GetFrames();
                if (frames == null)
                    return null;
                string[] methods = new string[depth], files = new string[depth];
                int[] lines = new int[depth];
                int n = 0;
                for (int i = 0; i < frames.Length && n < depth; i++) {
                    StackFrame f = frames[i];
                    MethodBase m = f == null ? null : f.GetMethod();
                    if (m == null || Own(m.DeclaringType))
                        continue;
                    methods[n] = Name(m);
                    string file = f.GetFileName();
                    files[n] = string.IsNullOrEmpty(file) ? null : file;
                    lines[n] = f.GetFileLineNumber();
                    n++;
                }
                if (n == 0)
                    return null;
                methods[0] = siteMethod ?? methods[0];
                if (siteLine > 0) {
                    files[0] = string.IsNullOrEmpty(siteFile) ? files[0] : siteFile;
                    lines[0] = siteLine;
                }
                Volatile.Write(ref state, Warm);
                StackEntry e = StackSet.Special(StackSet.Captured);
                Array.Resize(ref methods, n);
                Array.Resize(ref files, n);
                Array.Resize(ref lines, n);
                e.Methods = methods;
                e.Files = files;
                e.Lines = lines;
                e.Key = StackSet.KeyOf(methods, files, lines);
                return e;
            } catch (Exception) {
                return null;
            }
        }

        /// <summary>True for LockTime's own types: the run-time's (merged as <c>&lt;LockTime&gt;X</c>, or <c>LockTime.Runtime.X</c> unmerged) and the weaver's stubs.</summary>
        static bool Own(Type type)
        {
            for (; type != null; type = type.DeclaringType) {
                if (type.Name.StartsWith("<LockTime>", StringComparison.Ordinal) || type.Namespace == "LockTime.Runtime")
                    return true;
            }
            return false;
        }

        /// <summary>The name of <paramref name="m"/> as reports give it (<see cref="StackCapture"/>).</summary>
        internal static string Name(MethodBase m)
        {
            Type type = m.DeclaringType;
            string method = m.Name;
            /* compiler-generated types nested in the user's: a state machine's MoveNext is its method; closures and lambda caches are their outer type's */
            while (type != null && type.DeclaringType != null && type.Name.StartsWith("<", StringComparison.Ordinal)) {
                int d = type.Name.LastIndexOf(">d", StringComparison.Ordinal);
                if (d > 1 && method == "MoveNext")
                    method = type.Name.Substring(1, d - 1);
                type = type.DeclaringType;
            }
            return (type == null ? "" : TypeName(type) + "::") + Generated(method);
        }

        /// <summary>
        /// A compiler-generated method's name as the user wrote it: <c>&lt;Outer&gt;b__0_1</c> is <c>Outer (lambda)</c>,
        /// <c>&lt;Outer&gt;g__Local|0_1</c> <c>Outer &gt; Local</c> (nested ones within); any other name as it is.
        /// </summary>
        internal static string Generated(string method)
        {
            if (method.Length < 4 || method[0] != '<')
                return method;
            int close = Close(method);
            if (close < 2 || close + 1 >= method.Length)
                return method;
            string outer = Generated(method.Substring(1, close - 1));
            string rest = method.Substring(close + 1);
            if (rest.StartsWith("b__", StringComparison.Ordinal))
                return outer + " (lambda)";
            int bar = rest.IndexOf('|');
            if (rest.StartsWith("g__", StringComparison.Ordinal) && bar > 3)
                return outer + " > " + rest.Substring(3, bar - 3);
            return method;
        }

        /// <summary>The index of the '&gt;' that closes the name's first '&lt;' (nested pairs counted); -1 when none.</summary>
        static int Close(string s)
        {
            int open = 0;
            for (int i = 0; i < s.Length; i++) {
                if (s[i] == '<')
                    open++;
                else if (s[i] == '>' && --open == 0)
                    return i;
            }
            return -1;
        }

        /// <summary>A type's name as sites give it: the namespace, then each enclosing type outermost first, nested ones after a <c>/</c>.</summary>
        static string TypeName(Type type)
        {
            StringBuilder sb = new StringBuilder(type.Name);
            for (Type outer = type.DeclaringType; outer != null; outer = outer.DeclaringType)
                sb.Insert(0, outer.Name + "/");
            string ns = type.Namespace;
            for (Type outer = type.DeclaringType; outer != null; outer = outer.DeclaringType)
                ns = outer.Namespace;
            if (!string.IsNullOrEmpty(ns))
                sb.Insert(0, ns + ".");
            return sb.ToString();
        }
    }
}
