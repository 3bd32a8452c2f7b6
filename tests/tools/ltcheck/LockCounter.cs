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
    // Lock has Enter, EnterScope and three TryEnter; SemaphoreSlim.Wait and WaitAsync 6 each...).
    // Exits, releases and Wait/Pulse are not acquisitions.
    private static readonly HashSet<(string Type, string Method)> Acquire =
    [
        ("System.Threading.Monitor", "Enter"),
        ("System.Threading.Monitor", "TryEnter"),
        ("System.Threading.Lock", "Enter"),
        ("System.Threading.Lock", "EnterScope"),
        ("System.Threading.Lock", "TryEnter"),
        ("System.Threading.ReaderWriterLockSlim", "EnterReadLock"),
        ("System.Threading.ReaderWriterLockSlim", "TryEnterReadLock"),
        ("System.Threading.ReaderWriterLockSlim", "EnterWriteLock"),
        ("System.Threading.ReaderWriterLockSlim", "TryEnterWriteLock"),
        ("System.Threading.ReaderWriterLockSlim", "EnterUpgradeableReadLock"),
        ("System.Threading.ReaderWriterLockSlim", "TryEnterUpgradeableReadLock"),
        ("System.Threading.SemaphoreSlim", "Wait"),
        ("System.Threading.SemaphoreSlim", "WaitAsync"),
        ("System.Threading.SpinLock", "Enter"),
        ("System.Threading.SpinLock", "TryEnter"),
        ("System.Threading.Mutex", "WaitOne"),
        ("System.Threading.ReaderWriterLock", "AcquireReaderLock"),
        ("System.Threading.ReaderWriterLock", "AcquireWriterLock"),
        ("System.Threading.ReaderWriterLock", "UpgradeToWriterLock"),
        // Static over an array of handles: a site whatever the handles are (timed when a Mutex is among them).
        ("System.Threading.WaitHandle", "WaitAny"),
        ("System.Threading.WaitHandle", "WaitAll"),
    ];

    // WaitOne is declared on WaitHandle: a call of it is a site when the receiver on the stack is
    // statically a Mutex or a WaitHandle (StackTypes; a WaitHandle's is timed when it is a Mutex).
    private const string WaitHandle = "System.Threading.WaitHandle";
    private const string Mutex = "System.Threading.Mutex";

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
            if (InLockType(r, md.GetDeclaringType()))
                continue;
            string where = $"{Names.TypeDef(r, md.GetDeclaringType())}::{r.GetString(md.Name)}";
            if ((md.ImplAttributes & MethodImplAttributes.Synchronized) != 0)
            {
                output.WriteLine($"{where} synchronized");
                synchronized++;
            }
            if (md.RelativeVirtualAddress == 0 || (md.ImplAttributes & MethodImplAttributes.CodeTypeMask) != MethodImplAttributes.IL)
                continue;
            var body = pe.GetMethodBody(md.RelativeVirtualAddress);
            var code = IlDecoder.Decode(body.GetILReader());
            var receivers = new StackTypes(r, text, md, body).Before(code, ins => WaitOneArguments(r, text, ins));
            foreach (var ins in code)
            {
                if (ins.OpCode != OpCodes.Call && ins.OpCode != OpCodes.Callvirt)
                    continue;
                var callee = MetadataTokens.EntityHandle(ins.Token);
                var (type, name) = Names.MethodOwner(r, text, callee);
                bool mutex = receivers.TryGetValue(ins.Offset, out var receiver) && (receiver == Mutex || receiver == WaitHandle);
                if ((!Acquire.Contains((Names.WithoutScope(type), name)) && !mutex) || !IsApi(r, callee))
                    continue;
                output.WriteLine($"{where} IL_{ins.Offset:x4} {Callee(r, text, callee)}");
                calls++;
            }
        }
        output.WriteLine($"total {calls + synchronized}: {calls} call sites, {synchronized} synchronized methods");
    }

    // The lock types whose own methods (nested types' too) are their implementation, not sites: a
    // framework's SemaphoreSlim.Wait() calls its own Wait(int, CancellationToken).
    private static readonly HashSet<string> LockTypes =
    [
        "System.Threading.Monitor", "System.Threading.Lock", "System.Threading.ReaderWriterLockSlim",
        "System.Threading.SemaphoreSlim", "System.Threading.SpinLock", Mutex, WaitHandle,
        "System.Threading.ReaderWriterLock",
    ];

    /// <summary>Whether the type, or the outermost type enclosing it, is one of <see cref="LockTypes"/> defined here.</summary>
    private static bool InLockType(MetadataReader r, TypeDefinitionHandle type)
    {
        var t = r.GetTypeDefinition(type);
        for (int depth = 0; !t.GetDeclaringType().IsNil && depth < 64; depth++)
            t = r.GetTypeDefinition(t.GetDeclaringType());
        return LockTypes.Contains($"{r.GetString(t.Namespace)}.{r.GetString(t.Name)}");
    }

    /// <summary>
    /// Whether the callee can be the lock API: a reference into another assembly is public, and inside the
    /// core library only a public method is (a private overload, such as ReaderWriterLockSlim's
    /// TryEnterReadLock(TimeoutTracker) under Mono, is its implementation).
    /// </summary>
    private static bool IsApi(MetadataReader r, EntityHandle callee)
    {
        if (callee.Kind == HandleKind.MethodSpecification)
            callee = r.GetMethodSpecification((MethodSpecificationHandle)callee).Method;
        return callee.Kind != HandleKind.MethodDefinition ||
               (r.GetMethodDefinition((MethodDefinitionHandle)callee).Attributes & MethodAttributes.MemberAccessMask) == MethodAttributes.Public;
    }

    /// <summary>For a call of WaitHandle.WaitOne, its number of arguments (the receiver is that deep), else null.</summary>
    private static int? WaitOneArguments(MetadataReader r, SignatureText text, Instruction ins)
    {
        if (ins.OpCode != OpCodes.Call && ins.OpCode != OpCodes.Callvirt)
            return null;
        var callee = MetadataTokens.EntityHandle(ins.Token);
        if (callee.Kind != HandleKind.MemberReference && callee.Kind != HandleKind.MethodDefinition)
            return null;
        var (type, name) = Names.MethodOwner(r, text, callee);
        if (Names.WithoutScope(type) != WaitHandle || name != "WaitOne")
            return null;
        return callee.Kind == HandleKind.MethodDefinition
            ? r.GetMethodDefinition((MethodDefinitionHandle)callee).DecodeSignature(text, null).ParameterTypes.Length
            : r.GetMemberReference((MemberReferenceHandle)callee).DecodeMethodSignature(text, null).ParameterTypes.Length;
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
