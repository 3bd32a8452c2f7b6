// Framework.cs - the assembly resolver and the references to framework types and members that
// the injected helper needs, taken from the target's own framework (never the weaver's runtime).
using Mono.Cecil;

namespace CecilWeaver;

sealed class Framework
{
    // Where Debian's Mono keeps its 4.5 profile (mscorlib, System, ...).
    const string MonoProfileDir = "/usr/lib/mono/4.5";

    // Assemblies tried, in order, for a type the target's own references do not hold: Mono's
    // profile, or the .NET shared framework (never the other: Cecil's resolver would otherwise fall
    // back to the weaver's own runtime for a Mono target).
    static readonly string[] MonoCandidates = { "mscorlib", "System" };
    static readonly string[] NetCandidates = { "System.Runtime", "System.Console", "System.Threading" };

    readonly ModuleDefinition _module;
    readonly IAssemblyResolver _resolver;
    readonly bool _isCoreLibrary;
    readonly Dictionary<string, TypeReference?> _types = new();

    readonly string _frameworkDir;

    public Framework(ModuleDefinition module, IAssemblyResolver resolver, string frameworkDir)
    {
        _module = module;
        _resolver = resolver;
        _frameworkDir = Path.GetFullPath(frameworkDir);
        _isCoreLibrary = module.GetType("System", "Object") != null;
    }

    public ModuleDefinition Module => _module;
    public TypeSystem TypeSystem => _module.TypeSystem;

    /// True for a core library (it defines System.Object): it may reference nothing outside itself.
    public bool IsCoreLibrary => _isCoreLibrary;

    /// A resolver that searches the input's folder, then the target's framework folder: Mono's
    /// profile for an assembly built against mscorlib, else the shared .NET runtime this tool runs on.
    public static DefaultAssemblyResolver MakeResolver(string inputPath)
    {
        var resolver = new DefaultAssemblyResolver();
        foreach (var dir in resolver.GetSearchDirectories())
            resolver.RemoveSearchDirectory(dir);
        resolver.AddSearchDirectory(Path.GetDirectoryName(Path.GetFullPath(inputPath))!);
        return resolver;
    }

    /// Adds the framework folder once the module is read (its references say which framework).
    public static string AddFrameworkDir(DefaultAssemblyResolver resolver, ModuleDefinition module)
    {
        bool mono = module.GetType("System", "Object") != null
            || module.AssemblyReferences.Any(r => r.Name == "mscorlib")
               && !module.AssemblyReferences.Any(r => r.Name is "System.Runtime" or "netstandard");
        string dir = mono && Directory.Exists(MonoProfileDir)
            ? MonoProfileDir
            : Path.GetDirectoryName(typeof(object).Assembly.Location)!;
        resolver.AddSearchDirectory(dir);
        return dir;
    }

    /// The type ns.name as the target must reference it: its own TypeDef; else through one of its
    /// AssemblyRefs that defines or forwards it; else through a framework assembly, whose reference
    /// is then added. Null when none has it (a core library looks only at itself).
    public TypeReference? FindType(string ns, string name, bool isValueType)
    {
        string key = ns + "." + name;
        if (_types.TryGetValue(key, out var cached))
            return cached;
        TypeReference? found = _module.GetType(ns, name);
        if (found == null && !_isCoreLibrary)
        {
            foreach (var reference in _module.AssemblyReferences)
            {
                if (Holds(TryResolve(reference), ns, name))
                {
                    found = new TypeReference(ns, name, _module, reference, isValueType);
                    break;
                }
            }
            if (found == null)
            {
                foreach (var candidate in _frameworkDir == MonoProfileDir ? MonoCandidates : NetCandidates)
                {
                    var asm = TryResolve(AssemblyNameReference.Parse(candidate));
                    if (asm == null || Path.GetDirectoryName(Path.GetFullPath(asm.MainModule.FileName)) != _frameworkDir
                        || !Holds(asm, ns, name))
                        continue;
                    var scope = _module.AssemblyReferences.FirstOrDefault(r => r.Name == asm!.Name.Name);
                    if (scope == null)
                    {
                        scope = new AssemblyNameReference(asm!.Name.Name, asm.Name.Version)
                        {
                            PublicKeyToken = asm.Name.PublicKeyToken,
                            Culture = asm.Name.Culture,
                        };
                        _module.AssemblyReferences.Add(scope);
                    }
                    found = new TypeReference(ns, name, _module, scope, isValueType);
                    break;
                }
            }
        }
        _types[key] = found;
        return found;
    }

    public TypeReference Type(string ns, string name, bool isValueType = false) =>
        FindType(ns, name, isValueType)
        ?? throw new InvalidOperationException($"cannot find {ns}.{name} in the target's framework");

    /// A method of `declaring`: its MethodDef when the type is defined here, else a new MemberRef.
    public MethodReference Method(TypeReference declaring, string name, TypeReference returnType, bool hasThis,
        params TypeReference[] parameters)
    {
        if (declaring is TypeDefinition def)
        {
            var match = def.Methods.FirstOrDefault(m => m.Name == name && m.HasThis == hasThis
                && m.Parameters.Count == parameters.Length
                && m.Parameters.Select(p => p.ParameterType.FullName)
                    .SequenceEqual(parameters.Select(p => p.FullName)));
            return match ?? throw new InvalidOperationException($"{def.FullName}::{name} not found");
        }
        var reference = new MethodReference(name, returnType, declaring) { HasThis = hasThis };
        foreach (var p in parameters)
            reference.Parameters.Add(new ParameterDefinition(p));
        return reference;
    }

    /// A field of `declaring`: its FieldDef when the type is defined here, else a new MemberRef.
    public FieldReference Field(TypeReference declaring, string name, TypeReference fieldType)
    {
        if (declaring is TypeDefinition def)
            return def.Fields.FirstOrDefault(f => f.Name == name)
                ?? throw new InvalidOperationException($"{def.FullName}::{name} not found");
        return new FieldReference(name, fieldType, declaring);
    }

    AssemblyDefinition? TryResolve(AssemblyNameReference name)
    {
        try
        {
            return _resolver.Resolve(name);
        }
        catch (AssemblyResolutionException)
        {
            return null;
        }
    }

    // Whether `asm` defines ns.name or forwards it (an ExportedType of a facade).
    static bool Holds(AssemblyDefinition? asm, string ns, string name)
    {
        if (asm == null)
            return false;
        var main = asm.MainModule;
        if (main.GetType(ns, name) != null)
            return true;
        return main.ExportedTypes.Any(e => e.DeclaringType == null && e.Namespace == ns && e.Name == name);
    }
}
