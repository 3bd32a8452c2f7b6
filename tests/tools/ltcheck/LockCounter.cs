// `ltcheck locks`: an independent count of lock acquisition sites, to compare with the weaver's `list`.
using System.Reflection;
using System.Reflection.Emit;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;

namespace LtCheck;

/// <summary>
/// Counts every call or callvirt whose target is a lock acquisition, matched by declaring type and
/// method name whatever assembly it comes from (a TypeRef into System.Runtime, mscorlib or
/// System.Threading, or a MethodDef inside the core library itself), plus each method marked
/// MethodImplAttributes.Synchronized (II.23.1.11), whose lock the runtime takes with no call in the IL.
/// </summary>
internal static class LockCounter
{
    // Acquisitions only: every overload of each name counts (Monitor.Enter has 2, Monitor.TryEnter 6;
    // Lock has Enter, EnterScope and three TryEnter). Exits and Wait/Pulse are not acquisitions.
    private static readonly HashSet<(string Type, string Method)> Acquire =
    [
        ("System.Threading.Monitor", "Enter"),
        ("System.Threading.Monitor", "TryEnter"),
        ("System.Threading.Lock", "Enter"),
        ("System.Threading.Lock", "EnterScope"),
        ("System.Threading.Lock", "TryEnter"),
    ];

    /// <summary>Prints one line per site, "Type::Method IL_xxxx callee" or "Type::Method synchronized", and a total line.</summary>
    public static void Run(string file, TextWriter output)
    {
        using var stream = File.OpenRead(file);
        using var pe = new PEReader(stream);
        var r = pe.GetMetadataReader();
        var text = new SignatureText(r);
        int calls = 0, synchronized = 0;
        foreach (var h in r.MethodDefinitions)
        {
            var md = r.GetMethodDefinition(h);
            string where = $"{Names.TypeDef(r, md.GetDeclaringType())}::{r.GetString(md.Name)}";
            if ((md.ImplAttributes & MethodImplAttributes.Synchronized) != 0)
            {
                output.WriteLine($"{where} synchronized");
                synchronized++;
            }
            if (md.RelativeVirtualAddress == 0 || (md.ImplAttributes & MethodImplAttributes.CodeTypeMask) != MethodImplAttributes.IL)
                continue;
            foreach (var ins in IlDecoder.Decode(pe.GetMethodBody(md.RelativeVirtualAddress).GetILReader()))
            {
                if (ins.OpCode != OpCodes.Call && ins.OpCode != OpCodes.Callvirt)
                    continue;
                var callee = MetadataTokens.EntityHandle(ins.Token);
                var (type, name) = Names.MethodOwner(r, text, callee);
                if (!Acquire.Contains((Names.WithoutScope(type), name)))
                    continue;
                output.WriteLine($"{where} IL_{ins.Offset:x4} {Callee(r, text, callee)}");
                calls++;
            }
        }
        output.WriteLine($"total {calls + synchronized}: {calls} call sites, {synchronized} synchronized methods");
    }

    /// <summary>The callee as "System.Threading.Monitor::TryEnter(object,int32,bool&amp;)", without scope or return type.</summary>
    private static string Callee(MetadataReader r, SignatureText text, EntityHandle callee)
    {
        if (callee.Kind == HandleKind.MethodSpecification)
            callee = r.GetMethodSpecification((MethodSpecificationHandle)callee).Method;
        var (type, name) = Names.MethodOwner(r, text, callee);
        var sig = callee.Kind == HandleKind.MethodDefinition
            ? r.GetMethodDefinition((MethodDefinitionHandle)callee).DecodeSignature(text, null)
            : r.GetMemberReference((MemberReferenceHandle)callee).DecodeMethodSignature(text, null);
        var ps = sig.ParameterTypes.Select(Names.WithoutScope);
        return $"{Names.WithoutScope(type)}::{name}({string.Join(",", ps)})";
    }
}
