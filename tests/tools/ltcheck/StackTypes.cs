// The static types on the evaluation stack of a method body, followed forward through straight-line code.
using System.Reflection.Emit;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;

namespace LtCheck;

/// <summary>
/// Simulates the evaluation stack of one body forward, instruction by instruction, with the type of each
/// value as text when a load or a call says it (ldloc, ldarg, ldfld, ldsfld, call, callvirt, newobj,
/// castclass, isinst, dup) and null otherwise. Where another path may enter (a branch or switch target, an
/// EH block's start) or after an instruction that does not fall through, what was on the stack is no longer
/// known: values popped from below that point are null. Pops and pushes come from the runtime's own opcode
/// table (OpCode.StackBehaviourPop/Push) and, for calls, from the callee's signature (III.1.7.5).
/// </summary>
internal sealed class StackTypes
{
    private readonly MetadataReader _r;
    private readonly SignatureText _text;
    private readonly MethodDefinition _method;
    private readonly MethodBodyBlock _body;

    public StackTypes(MetadataReader r, SignatureText text, MethodDefinition method, MethodBodyBlock body)
    {
        _r = r;
        _text = text;
        _method = method;
        _body = body;
    }

    /// <summary>
    /// For each instruction of <paramref name="code"/> that <paramref name="wanted"/> picks, the type (without
    /// scope) of the value <c>depth</c> items below the top of the stack before it runs, or null when unknown.
    /// </summary>
    public Dictionary<int, string?> Before(List<Instruction> code, Func<Instruction, int?> wanted)
    {
        var entries = new HashSet<int>(code.SelectMany(i => i.Targets));
        foreach (var region in _body.ExceptionRegions)
        {
            entries.Add(region.TryOffset);
            entries.Add(region.HandlerOffset);
            if (region.Kind == ExceptionRegionKind.Filter)
                entries.Add(region.FilterOffset);
        }
        var found = new Dictionary<int, string?>();
        var stack = new List<string?>();
        foreach (var ins in code)
        {
            if (entries.Contains(ins.Offset))
                stack.Clear();
            if (wanted(ins) is int depth)
                found[ins.Offset] = depth < stack.Count ? stack[stack.Count - 1 - depth] : null;
            var (pops, pushes) = Effect(ins);
            string? pushed = Pushed(ins, stack);
            stack.RemoveRange(Math.Max(0, stack.Count - pops), Math.Min(pops, stack.Count));
            for (int k = 0; k < pushes; k++)
                stack.Add(pushed);
            var flow = ins.OpCode.FlowControl;
            if (flow is FlowControl.Branch or FlowControl.Return or FlowControl.Throw)
                stack.Clear();
        }
        return found;
    }

    /// <summary>Items popped and pushed by <paramref name="ins"/>.</summary>
    private (int Pops, int Pushes) Effect(Instruction ins)
    {
        var op = ins.OpCode;
        if (op.StackBehaviourPop == StackBehaviour.Varpop || op.StackBehaviourPush == StackBehaviour.Varpush)
        {
            if (op == OpCodes.Ret)
                return (int.MaxValue, 0);
            if (op == OpCodes.Calli)
            {
                var sig = _r.GetStandaloneSignature((StandaloneSignatureHandle)MetadataTokens.EntityHandle(ins.Token)).DecodeMethodSignature(_text, null);
                return (sig.ParameterTypes.Length + (sig.Header.IsInstance ? 1 : 0) + 1, sig.ReturnType == "void" ? 0 : 1);
            }
            var m = Signature(MetadataTokens.EntityHandle(ins.Token));
            if (op == OpCodes.Newobj)
                return (m.ParameterTypes.Length, 1);
            return (m.ParameterTypes.Length + (m.Header.IsInstance ? 1 : 0), m.ReturnType == "void" ? 0 : 1);
        }
        return (Count(op.StackBehaviourPop.ToString(), "Pop0"), op == OpCodes.Dup ? 2 : Count(op.StackBehaviourPush.ToString(), "Push0"));
    }

    // "Popi_popi" is two items, "Pop0" none, anything else one per part.
    private static int Count(string behaviour, string none) =>
        behaviour == none ? 0 : behaviour.Split('_').Length;

    private MethodSignature<string> Signature(EntityHandle h) => h.Kind switch
    {
        HandleKind.MethodDefinition => _r.GetMethodDefinition((MethodDefinitionHandle)h).DecodeSignature(_text, null),
        HandleKind.MemberReference => _r.GetMemberReference((MemberReferenceHandle)h).DecodeMethodSignature(_text, null),
        HandleKind.MethodSpecification => Signature(_r.GetMethodSpecification((MethodSpecificationHandle)h).Method),
        _ => throw new BadImageFormatException($"token 0x{MetadataTokens.GetToken(h):x8} is not a method"),
    };

    /// <summary>The type of what <paramref name="ins"/> pushes, or null.</summary>
    private string? Pushed(Instruction ins, List<string?> stack)
    {
        var op = ins.OpCode;
        string? type = null;
        if (op == OpCodes.Dup)
            return stack.Count > 0 ? stack[^1] : null;
        if (op == OpCodes.Ldloc_0 || op == OpCodes.Ldloc_1 || op == OpCodes.Ldloc_2 || op == OpCodes.Ldloc_3)
            type = Local(op.Value - OpCodes.Ldloc_0.Value);
        else if (op == OpCodes.Ldloc_S || op == OpCodes.Ldloc)
            type = Local((int)ins.Number);
        else if (op == OpCodes.Ldarg_0 || op == OpCodes.Ldarg_1 || op == OpCodes.Ldarg_2 || op == OpCodes.Ldarg_3)
            type = Argument(op.Value - OpCodes.Ldarg_0.Value);
        else if (op == OpCodes.Ldarg_S || op == OpCodes.Ldarg)
            type = Argument((int)ins.Number);
        else if (op == OpCodes.Ldfld || op == OpCodes.Ldsfld)
            type = FieldType(MetadataTokens.EntityHandle(ins.Token));
        else if (op == OpCodes.Call || op == OpCodes.Callvirt)
            type = Signature(MetadataTokens.EntityHandle(ins.Token)).ReturnType;
        else if (op == OpCodes.Newobj)
            type = Names.MethodOwner(_r, _text, MetadataTokens.EntityHandle(ins.Token)).Type;
        else if (op == OpCodes.Castclass || op == OpCodes.Isinst)
            type = _text.Type(MetadataTokens.EntityHandle(ins.Token));
        return type is null ? null : Names.WithoutScope(type);
    }

    private string? Local(int index)
    {
        if (_body.LocalSignature.IsNil)
            return null;
        var locals = _r.GetStandaloneSignature(_body.LocalSignature).DecodeLocalSignature(_text, null);
        return index < locals.Length ? locals[index] : null;
    }

    private string? Argument(int index)
    {
        var sig = _method.DecodeSignature(_text, null);
        if (sig.Header.IsInstance)
        {
            if (index == 0)
                return Names.TypeDef(_r, _method.GetDeclaringType());
            index--;
        }
        return index < sig.ParameterTypes.Length ? sig.ParameterTypes[index] : null;
    }

    private string? FieldType(EntityHandle h) => h.Kind switch
    {
        HandleKind.FieldDefinition => _r.GetFieldDefinition((FieldDefinitionHandle)h).DecodeSignature(_text, null),
        HandleKind.MemberReference => _r.GetMemberReference((MemberReferenceHandle)h).DecodeFieldSignature(_text, null),
        _ => null,
    };
}
