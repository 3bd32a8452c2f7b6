// `ltcheck jit`: loads an assembly into a collectible load context and asks the JIT to compile every method body.
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.Loader;

namespace LtCheck;

/// <summary>
/// The runtime's JIT is the strictest reader of IL there is: it rejects bad stacks, bad branches and
/// bad tokens with InvalidProgramException or BadImageFormatException. PrepareMethod compiles a
/// method without running it (and without running static constructors).
/// </summary>
internal static class JitChecker
{
    /// <summary>
    /// Resolves an assembly's dependencies from the given folders, except the shared framework's own
    /// assemblies, which stay in the default context (as they would at run time; it also keeps a copy
    /// of, say, Mono's System.dll lying in the same folder from shadowing the real one).
    /// </summary>
    private sealed class FolderLoadContext(IReadOnlyList<string> dirs) : AssemblyLoadContext("ltcheck-jit", isCollectible: true)
    {
        private static readonly HashSet<string> Framework = ((string?)AppContext.GetData("TRUSTED_PLATFORM_ASSEMBLIES") ?? "")
            .Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries)
            .Select(Path.GetFileNameWithoutExtension)
            .OfType<string>()
            .ToHashSet(StringComparer.OrdinalIgnoreCase);

        protected override Assembly? Load(AssemblyName name)
        {
            if (name.Name == null || Framework.Contains(name.Name))
                return null;
            foreach (string dir in dirs)
                foreach (string ext in new[] { ".dll", ".exe" })
                {
                    string path = Path.Combine(dir, name.Name + ext);
                    if (File.Exists(path))
                        return LoadFromAssemblyPath(path);
                }
            return null;
        }
    }

    private sealed class Tally
    {
        public int Prepared, Skipped, Unresolved;
        public readonly List<string> Failures = [];
        public readonly List<string> Missing = [];
    }

    /// <summary>Prepares every method body of FILE; prints the counts and each failure; true when none failed.</summary>
    public static bool Run(string file, IEnumerable<string> dirs, TextWriter output)
    {
        string full = Path.GetFullPath(file);
        var search = new[] { Path.GetDirectoryName(full)! }.Concat(dirs.Select(Path.GetFullPath)).ToList();
        var context = new FolderLoadContext(search);
        var tally = new Tally();
        try
        {
            var assembly = context.LoadFromAssemblyPath(full);
            foreach (var type in LoadableTypes(assembly, tally))
                PrepareType(type, tally);
        }
        catch (Exception e) when (e is BadImageFormatException or FileLoadException or FileNotFoundException)
        {
            tally.Failures.Add($"load: {e.GetType().Name}: {e.Message}");
        }
        finally
        {
            context.Unload();
        }
        foreach (string f in tally.Failures)
            output.WriteLine("FAIL " + f);
        foreach (string m in tally.Missing.Distinct())
            output.WriteLine("unresolved " + m);
        output.WriteLine($"{(tally.Failures.Count == 0 ? "ok" : "FAIL")} {file}: prepared {tally.Prepared}, " +
                         $"skipped {tally.Skipped}, unresolved {tally.Unresolved}, failed {tally.Failures.Count}");
        return tally.Failures.Count == 0;
    }

    /// <summary>The assembly's types; a type the loader rejects is a failure, the others are still checked.</summary>
    private static IEnumerable<Type> LoadableTypes(Assembly assembly, Tally tally)
    {
        try
        {
            return assembly.GetTypes();
        }
        catch (ReflectionTypeLoadException e)
        {
            foreach (var le in e.LoaderExceptions.OfType<Exception>())
                Record(tally, "type load", le);
            return e.Types.OfType<Type>();
        }
    }

    private static void PrepareType(Type type, Tally tally)
    {
        const BindingFlags all = BindingFlags.DeclaredOnly | BindingFlags.Public | BindingFlags.NonPublic |
                                 BindingFlags.Instance | BindingFlags.Static;
        var methods = type.GetMethods(all).Cast<MethodBase>().Concat(type.GetConstructors(all)).Where(HasBody).ToList();
        Type target = type;
        if (type.IsGenericTypeDefinition)
        {
            var closed = InstantiateOverObject(type.GetGenericArguments(), type.MakeGenericType);
            if (closed == null)
            {
                tally.Skipped += methods.Count;
                return;
            }
            target = closed;
        }
        foreach (var method in methods)
        {
            // Bind the definition's method to its counterpart in the instantiated type via its metadata token.
            MethodBase? m = target == type ? method : MethodBase.GetMethodFromHandle(method.MethodHandle, target.TypeHandle);
            if (m is MethodInfo { IsGenericMethodDefinition: true } gm)
                m = InstantiateOverObject(gm.GetGenericArguments(), gm.MakeGenericMethod);
            if (m == null)
            {
                tally.Skipped++;
                continue;
            }
            try
            {
                RuntimeHelpers.PrepareMethod(m.MethodHandle);
                tally.Prepared++;
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                Record(tally, $"{type.FullName}::{method.Name}", e);
            }
        }
    }

    /// <summary>
    /// A dependency that is not on the search path is not a defect of the checked image, so it is
    /// counted apart; anything else the JIT or loader throws is a failure.
    /// </summary>
    private static void Record(Tally tally, string where, Exception e)
    {
        if (e is FileNotFoundException fnf)
        {
            tally.Unresolved++;
            tally.Missing.Add(fnf.FileName ?? fnf.Message);
            return;
        }
        tally.Failures.Add($"{where}: {e.GetType().Name}: {e.Message}");
    }

    /// <summary>Methods with IL to compile: not abstract, not P/Invoke, not runtime-implemented or internal calls.</summary>
    private static bool HasBody(MethodBase m)
    {
        if (m.IsAbstract || (m.Attributes & MethodAttributes.PinvokeImpl) != 0)
            return false;
        var impl = m.MethodImplementationFlags;
        return (impl & MethodImplAttributes.CodeTypeMask) == MethodImplAttributes.IL &&
               (impl & (MethodImplAttributes.InternalCall | MethodImplAttributes.Runtime)) == 0;
    }

    /// <summary>Instantiates every parameter with object when its constraints allow it, else returns null.</summary>
    private static T? InstantiateOverObject<T>(Type[] parameters, Func<Type[], T> make) where T : class
    {
        foreach (var p in parameters)
        {
            // II.10.1.7: a struct (or unmanaged) constraint, or any constraint type other than object, rules object out.
            if ((p.GenericParameterAttributes & GenericParameterAttributes.NotNullableValueTypeConstraint) != 0 ||
                p.GetGenericParameterConstraints().Any(c => c != typeof(object)))
                return null;
        }
        try
        {
            return make(parameters.Select(_ => typeof(object)).ToArray());
        }
        catch (ArgumentException)
        {
            return null;
        }
    }
}
