// `ltcheck template FILE CORELIB...`: every framework type and member the template uses exists in the given libraries.
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;

namespace LtCheck;

/// <summary>
/// Resolves the template's TypeRefs and MemberRefs by name in one or more framework libraries (for
/// example Mono's mscorlib.dll, which the merger must be able to target): a type by its full name
/// (or a type forwarder), a method by name and parameter count, a field by name, searched up the base
/// types. References made only from the clock's methods (Clock::Ticks, Clock::Frequency) are the
/// merger's to substitute and are listed as such, not as missing.
/// </summary>
internal sealed class TemplateFramework
{
    private const string ClockType = "LockTime.Runtime.Clock";
    private readonly List<(PEReader Pe, MetadataReader R)> libraries = [];
    private readonly Dictionary<string, (MetadataReader R, TypeDefinitionHandle Handle)?> types = new();

    private TemplateFramework(IEnumerable<string> paths)
    {
        foreach (var path in paths)
        {
            var pe = new PEReader(File.OpenRead(path));
            var r = pe.GetMetadataReader();
            libraries.Add((pe, r));
            foreach (var th in r.TypeDefinitions)
                types.TryAdd(Names.TypeDef(r, th), (r, th));
            foreach (var eh in r.ExportedTypes)
            {
                var et = r.GetExportedType(eh);
                string ns = r.GetString(et.Namespace), name = r.GetString(et.Name);
                types.TryAdd(ns.Length > 0 ? ns + "." + name : name, null); // forwarded: exists elsewhere
            }
        }
    }

    /// <summary>Appends a problem per missing reference and prints the substituted ones; the libraries are closed after.</summary>
    public static void Check(PEReader template, IEnumerable<string> libraryPaths, List<string> problems, TextWriter output)
    {
        var f = new TemplateFramework(libraryPaths);
        try
        {
            f.Run(template, problems, output);
        }
        finally
        {
            foreach (var (pe, _) in f.libraries)
                pe.Dispose();
        }
    }

    private void Run(PEReader template, List<string> problems, TextWriter output)
    {
        var r = template.GetMetadataReader();
        var text = new SignatureText(r);
        var users = Users(template, r);
        foreach (var th in r.TypeReferences)
        {
            string name = Names.WithoutScope(Names.TypeRef(r, th));
            if (types.ContainsKey(name))
                continue;
            if (ClockOnly(r, text, users, th, name))
                output.WriteLine($"substituted by the merger (clock): {name}");
            else
                problems.Add($"framework type {name}: not in {LibraryNames()}");
        }
        foreach (var mh in r.MemberReferences)
        {
            var mr = r.GetMemberReference(mh);
            string member = r.GetString(mr.Name);
            string owner = Names.WithoutScope(Owner(r, text, mr.Parent));
            if (owner.StartsWith("LockTime.Runtime."))
                continue; // a member of the template's own generic instantiation: none today
            int token = MetadataTokens.GetToken(mh);
            bool clockOnly = UsedOnlyByClock(users, token);
            bool method = mr.GetKind() == MemberReferenceKind.Method;
            int parameters = method ? mr.DecodeMethodSignature(text, null).ParameterTypes.Length : 0;
            if (Find(owner, member, method, parameters))
                continue;
            if (clockOnly)
                output.WriteLine($"substituted by the merger (clock): {owner}::{member}");
            else
                problems.Add($"framework member {owner}::{member}: not in {LibraryNames()}");
        }
    }

    private static bool UsedOnlyByClock(Dictionary<int, HashSet<string>> users, int token) =>
        users.TryGetValue(token, out var by) && by.All(u => u == ClockType);

    // A type that the IL names only inside the clock, directly or as the parent of the members it uses.
    private static bool ClockOnly(MetadataReader r, SignatureText text, Dictionary<int, HashSet<string>> users,
                                  TypeReferenceHandle type, string name)
    {
        if (users.ContainsKey(MetadataTokens.GetToken(type)) && !UsedOnlyByClock(users, MetadataTokens.GetToken(type)))
            return false;
        bool any = false;
        foreach (var mh in r.MemberReferences)
        {
            if (Names.WithoutScope(Owner(r, text, r.GetMemberReference(mh).Parent)) != name)
                continue;
            if (!UsedOnlyByClock(users, MetadataTokens.GetToken(mh)))
                return false;
            any = true;
        }
        return any;
    }

    private string LibraryNames() => string.Join(", ", libraries.Select(l => l.R.GetString(l.R.GetAssemblyDefinition().Name)));

    // The declaring type of each token an IL instruction uses, by token.
    private static Dictionary<int, HashSet<string>> Users(PEReader pe, MetadataReader r)
    {
        var users = new Dictionary<int, HashSet<string>>();
        foreach (var mh in r.MethodDefinitions)
        {
            var md = r.GetMethodDefinition(mh);
            if (md.RelativeVirtualAddress == 0)
                continue;
            string type = Names.TypeDef(r, md.GetDeclaringType());
            foreach (var ins in IlDecoder.Decode(pe.GetMethodBody(md.RelativeVirtualAddress).GetILReader()))
            {
                if (!IlDecoder.HasToken(ins.OpCode))
                    continue;
                if (!users.TryGetValue(ins.Token, out var set))
                    users[ins.Token] = set = [];
                set.Add(type);
            }
        }
        return users;
    }

    // A MemberRef's parent as a type name; a generic instantiation as its generic type ("List`1").
    private static string Owner(MetadataReader r, SignatureText text, EntityHandle parent)
    {
        string name = text.Type(parent);
        int generic = name.IndexOf('<');
        return generic > 0 ? name[..generic] : name;
    }

    // True when the type or a base type in the libraries has the member (a method with that many
    // parameters, or a field), or the type is forwarded to another library.
    private bool Find(string typeName, string member, bool method, int parameters)
    {
        for (int depth = 0; depth < 32 && typeName.Length > 0; depth++)
        {
            if (!types.TryGetValue(typeName, out var found))
                return false;
            if (found == null)
                return true;
            var (lib, th) = found.Value;
            var td = lib.GetTypeDefinition(th);
            if (method)
            {
                foreach (var h in td.GetMethods())
                {
                    var md = lib.GetMethodDefinition(h);
                    if (lib.GetString(md.Name) == member && md.DecodeSignature(new SignatureText(lib), null).ParameterTypes.Length == parameters)
                        return true;
                }
            }
            else
            {
                foreach (var h in td.GetFields())
                    if (lib.GetString(lib.GetFieldDefinition(h).Name) == member)
                        return true;
            }
            typeName = td.BaseType.IsNil ? "" : Names.WithoutScope(new SignatureText(lib).Type(td.BaseType));
            int generic = typeName.IndexOf('<');
            if (generic > 0)
                typeName = typeName[..generic];
        }
        return false;
    }
}
