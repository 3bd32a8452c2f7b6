// `ltcheck template`: fails on anything in the run-time template that the weaver's merger does not copy.
using System.Reflection;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;

namespace LtCheck;

/// <summary>
/// Checks the run-time template (weaver/runtime, README.md "What the merger copies") against the subset
/// the merger supports: top-level, non-generic, non-public types in one namespace, each marked
/// [CompilerGenerated], with fields, methods, parameters and IL only. Each violation is one line naming
/// the type or member and what it is (a closure, a state machine, field RVA data...).
/// </summary>
internal static class TemplateChecker
{
    private const string Namespace = "LockTime.Runtime";

    // Custom attributes the merger copies, by the kind of row that carries them.
    private static readonly HashSet<(HandleKind Parent, string Attribute)> Allowed =
    [
        (HandleKind.TypeDefinition, "System.Runtime.CompilerServices.CompilerGeneratedAttribute"),
        (HandleKind.FieldDefinition, "System.ThreadStaticAttribute"),
    ];

    // Tables the merger does not copy (II.22): each must be empty.
    private static readonly (TableIndex Table, string What)[] Unsupported =
    [
        (TableIndex.FieldRva, "field RVA data (a static array initializer of primitive values)"),
        (TableIndex.FieldLayout, "explicit field offsets"),
        (TableIndex.ClassLayout, "explicit type layout"),
        (TableIndex.FieldMarshal, "marshalling information"),
        (TableIndex.ImplMap, "P/Invoke methods"),
        (TableIndex.Property, "properties (use methods)"),
        (TableIndex.Event, "events"),
        (TableIndex.MethodImpl, "explicit interface implementations"),
        (TableIndex.InterfaceImpl, "interface implementations"),
        (TableIndex.DeclSecurity, "security declarations"),
        (TableIndex.GenericParam, "generic parameters"),
    ];

    // The methods the weaver relies on (weaver/runtime/README.md): stubs call the Api, the merger
    // rewrites the bodies of the baked defaults, the site table and (for a core library without
    // Stopwatch) the clock. Body "ldstr": exactly `ldstr; ret`; "ret": exactly `ret`; null: any.
    private static readonly (string Type, string Method, string Signature, string? Body)[] Hooks =
    [
        ("Clock", "Ticks", "int64()", null),
        ("Clock", "Frequency", "int64()", null),
        ("Baked", "ThresholdMs", "string()", "ldstr"),
        ("Baked", "Output", "string()", "ldstr"),
        ("Baked", "Summary", "string()", "ldstr"),
        ("Baked", "Report", "string()", "ldstr"),
        ("Baked", "LockOrder", "string()", "ldstr"),
        ("SiteList", "Load", "void(LockTime.Runtime.SiteTable)", "ret"),
        ("SiteTable", "Begin", "instance void(string,int32)", null),
        ("SiteTable", "Define", "instance void(int32,string,string,string,int32,string)", null),
        ("Api", "Acquired", "void(object,int32,int64,int64,bool)", null),
        ("Api", "Waiting", "void(object)", null),
        ("Api", "AcquiredScope", "void(object,int32,int64,int64,bool)", null),
        ("Api", "Released", "void(object)", null),
        ("Api", "ReleasedScope", "void()", null),
        ("Api", "WaitBegins", "void(object)", null),
        ("Api", "Waited", "void(object,int64)", null),
        ("Api", "NotAcquired", "void(int32,int64,int64)", null),
        ("Api", "TypeOf", "object([netstandard]System.RuntimeTypeHandle)", null),
        ("Api", "AcquiredRead", "void(object,int32,int64,int64,bool)", null),
        ("Api", "AcquiredUpgradeable", "void(object,int32,int64,int64,bool)", null),
        ("Api", "WaitingToRead", "void(object)", null),
        ("Api", "WaitingToUpgrade", "void(object)", null),
        ("Api", "ReleasedRead", "void(object)", null),
        ("Api", "ReleasedUpgradeable", "void(object)", null),
        ("Api", "AcquiredSpin", "void(int32,int64,int64,bool)", null),
        ("Api", "ReleasedSpin", "void()", null),
        ("Api", "AcquiredSemaphore", "void(object,int32,int64,int64,bool)", null),
        ("Api", "AcquiredWhenDone", "void([netstandard]System.Threading.Tasks.Task,object,int32,int64)", null),
        ("Api", "ReleasingSemaphore", "void(object)", null),
        ("Api", "ReleasedSemaphore", "void(object)", null),
    ];

    /// <summary>Prints each violation (with <paramref name="libraries"/>, also each framework reference they lack) and "template: N types, N methods: ok" or "... N violations"; true when none.</summary>
    public static bool Run(string file, string[] libraries, TextWriter output)
    {
        using var stream = File.OpenRead(file);
        using var pe = new PEReader(stream);
        var r = pe.GetMetadataReader();
        var problems = new List<string>();
        foreach (var (table, what) in Unsupported)
            if (r.GetTableRowCount(table) > 0)
                problems.Add($"{table} table: {r.GetTableRowCount(table)} rows: {what}");
        int types = 0, methods = 0;
        foreach (var th in r.TypeDefinitions)
        {
            var td = r.GetTypeDefinition(th);
            string name = Names.TypeDef(r, th);
            if (name == "<Module>")
                continue;
            types++;
            CheckType(r, td, name, problems);
            foreach (var fh in td.GetFields())
                CheckField(r, r.GetFieldDefinition(fh), name, problems);
            foreach (var mh in td.GetMethods())
            {
                methods++;
                CheckMethod(r, td, r.GetMethodDefinition(mh), name, problems);
            }
        }
        foreach (var ch in r.CustomAttributes)
        {
            var ca = r.GetCustomAttribute(ch);
            if (ca.Parent.Kind is HandleKind.AssemblyDefinition or HandleKind.ModuleDefinition)
                continue; // not merged: the merger copies types only
            string attr = AttributeType(r, ca);
            if (!Allowed.Contains((ca.Parent.Kind, attr)))
                problems.Add($"{Owner(r, ca.Parent)}: custom attribute {attr}{Why(attr)}");
        }
        CheckHooks(r, pe, problems);
        if (libraries.Length > 0)
            TemplateFramework.Check(pe, libraries, problems, output);
        foreach (var p in problems)
            output.WriteLine(p);
        output.WriteLine(problems.Count == 0
            ? $"template: {types} types, {methods} methods: ok"
            : $"template: {types} types, {methods} methods: {problems.Count} violations");
        return problems.Count == 0;
    }

    private static void CheckType(MetadataReader r, TypeDefinition td, string name, List<string> problems)
    {
        if (!td.GetDeclaringType().IsNil)
            problems.Add($"{name}: nested type{NestedWhy(r.GetString(td.Name))}");
        else if (r.GetString(td.Namespace) != Namespace)
            problems.Add($"{name}: outside namespace {Namespace}{(r.GetString(td.Name).StartsWith('<') ? " (a compiler-generated helper type)" : "")}");
        if ((td.Attributes & TypeAttributes.VisibilityMask) is not (TypeAttributes.NotPublic or TypeAttributes.NestedAssembly or TypeAttributes.NestedPrivate))
            problems.Add($"{name}: public (the merged types must be internal)");
        if (td.GetGenericParameters().Count > 0)
            problems.Add($"{name}: generic type definition");
        if ((td.Attributes & TypeAttributes.Interface) != 0)
            problems.Add($"{name}: interface");
        if (!td.BaseType.IsNil)
        {
            string baseName = Names.WithoutScope(new SignatureText(r).Type(td.BaseType));
            if (baseName is not ("System.Object" or "System.ValueType"))
                problems.Add($"{name}: derives from {baseName} (only System.Object and System.ValueType)");
        }
        bool generated = td.GetCustomAttributes().Any(ch =>
            AttributeType(r, r.GetCustomAttribute(ch)) == "System.Runtime.CompilerServices.CompilerGeneratedAttribute");
        if (!generated)
            problems.Add($"{name}: not marked [CompilerGenerated] (test suites that check types by reflection skip only those)");
    }

    private static void CheckField(MetadataReader r, FieldDefinition fd, string type, List<string> problems)
    {
        string name = $"{type}::{r.GetString(fd.Name)}";
        if ((fd.Attributes & FieldAttributes.HasFieldRVA) != 0)
            problems.Add($"{name}: field RVA data");
        if ((fd.Attributes & FieldAttributes.Literal) == 0 && !fd.GetDefaultValue().IsNil)
            problems.Add($"{name}: default value on a non-literal field");
    }

    private static void CheckMethod(MetadataReader r, TypeDefinition td, MethodDefinition md,
                                    string type, List<string> problems)
    {
        string name = $"{type}::{r.GetString(md.Name)}";
        if (md.GetGenericParameters().Count > 0)
            problems.Add($"{name}: generic method definition");
        if ((md.Attributes & MethodAttributes.PinvokeImpl) != 0 || (md.ImplAttributes & MethodImplAttributes.CodeTypeMask) != MethodImplAttributes.IL)
            problems.Add($"{name}: not an IL method");
        if ((md.Attributes & MethodAttributes.Abstract) == 0 && md.RelativeVirtualAddress == 0)
            problems.Add($"{name}: no body");
        if (r.GetString(md.Name) == ".cctor" && (td.Attributes & TypeAttributes.BeforeFieldInit) == 0)
            problems.Add($"{name}: explicit static constructor (use field initializers: the type stays beforefieldinit)");
        foreach (var ph in md.GetParameters())
        {
            var p = r.GetParameter(ph);
            if (!p.GetDefaultValue().IsNil)
                problems.Add($"{name}: parameter {r.GetString(p.Name)} has a default value (optional parameters)");
            if (!p.GetMarshallingDescriptor().IsNil)
                problems.Add($"{name}: parameter {r.GetString(p.Name)} has marshalling information");
        }
    }

    private static void CheckHooks(MetadataReader r, PEReader pe, List<string> problems)
    {
        var text = new SignatureText(r);
        var methods = new Dictionary<string, MethodDefinition>();
        foreach (var mh in r.MethodDefinitions)
        {
            var md = r.GetMethodDefinition(mh);
            methods[$"{Names.TypeDef(r, md.GetDeclaringType())}::{r.GetString(md.Name)}"] = md;
        }
        foreach (var (type, method, signature, body) in Hooks)
        {
            string name = $"{Namespace}.{type}::{method}";
            if (!methods.TryGetValue(name, out var md))
            {
                problems.Add($"{name}: missing (the weaver calls or rewrites it)");
                continue;
            }
            string sig = SignatureText.Method(md.DecodeSignature(text, null));
            if (sig != signature)
                problems.Add($"{name}: signature {sig}, the weaver expects {signature}");
            if (body == null || md.RelativeVirtualAddress == 0)
                continue;
            var ops = IlDecoder.Decode(pe.GetMethodBody(md.RelativeVirtualAddress).GetILReader()).Select(i => i.OpCode.Name).ToArray();
            string[] want = body == "ldstr" ? ["ldstr", "ret"] : ["ret"];
            if (!ops.SequenceEqual(want))
                problems.Add($"{name}: body {string.Join("; ", ops)}, the merger rewrites only `{string.Join("; ", want)}`");
        }
    }

    private static string AttributeType(MetadataReader r, CustomAttribute ca)
    {
        var (owner, _) = Names.MethodOwner(r, new SignatureText(r), ca.Constructor);
        return Names.WithoutScope(owner);
    }

    private static string Owner(MetadataReader r, EntityHandle parent) => parent.Kind switch
    {
        HandleKind.TypeDefinition => Names.TypeDef(r, (TypeDefinitionHandle)parent),
        HandleKind.FieldDefinition => FieldName(r, (FieldDefinitionHandle)parent),
        HandleKind.MethodDefinition => MethodName(r, (MethodDefinitionHandle)parent),
        HandleKind.Parameter => "parameter " + r.GetString(r.GetParameter((ParameterHandle)parent).Name),
        _ => $"{parent.Kind} row {MetadataTokens.GetRowNumber(parent)}",
    };

    private static string FieldName(MetadataReader r, FieldDefinitionHandle h)
    {
        var fd = r.GetFieldDefinition(h);
        return $"{Names.TypeDef(r, fd.GetDeclaringType())}::{r.GetString(fd.Name)}";
    }

    private static string MethodName(MetadataReader r, MethodDefinitionHandle h)
    {
        var md = r.GetMethodDefinition(h);
        return $"{Names.TypeDef(r, md.GetDeclaringType())}::{r.GetString(md.Name)}";
    }

    // What a compiler-generated nested type is for (Roslyn's names, GeneratedNameKind).
    private static string NestedWhy(string name) =>
        name.StartsWith("<>c__DisplayClass") ? " (a closure: a lambda or local function that captures)"
        : name == "<>c" ? " (a lambda's cache)"
        : name == "<>O" ? " (a method group delegate's cache)"
        : name.Contains(">d__") ? " (an async or iterator state machine)"
        : "";

    private static string Why(string attribute) => attribute switch
    {
        "System.Runtime.CompilerServices.AsyncStateMachineAttribute" => " (an async method)",
        "System.Runtime.CompilerServices.IteratorStateMachineAttribute" => " (an iterator)",
        "System.ParamArrayAttribute" => " (a params parameter)",
        "System.Runtime.CompilerServices.NullableAttribute" or "System.Runtime.CompilerServices.NullableContextAttribute" => " (nullable reference types)",
        "System.Runtime.CompilerServices.IsReadOnlyAttribute" => " (a readonly struct or in parameter)",
        _ => "",
    };
}
