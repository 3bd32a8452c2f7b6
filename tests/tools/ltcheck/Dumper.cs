// `ltcheck dump`: a normalized text listing of an assembly's types, fields and method bodies, for diffing.
using System.Globalization;
using System.Reflection;
using System.Reflection.Emit;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;

namespace LtCheck;

/// <summary>
/// Prints what should survive a rewrite unchanged, free of anything a writer may legitimately
/// renumber: tokens become names, byte offsets become instruction indexes (#n), and types and
/// methods are listed in name order, not row order. Two dumps then differ only where the IL or
/// the declarations differ.
/// </summary>
internal static class Dumper
{
    /// <summary>Writes the listing of FILE to output; throws BadImageFormatException on unreadable input.</summary>
    public static void Run(string file, TextWriter output)
    {
        using var stream = File.OpenRead(file);
        using var pe = new PEReader(stream);
        var r = pe.GetMetadataReader();
        var text = new SignatureText(r);
        var types = r.TypeDefinitions.Select(h => (Name: Names.TypeDef(r, h), Handle: h))
                     .OrderBy(t => t.Name, StringComparer.Ordinal).ThenBy(t => MetadataTokens.GetRowNumber(t.Handle));
        foreach (var (name, handle) in types)
        {
            var td = r.GetTypeDefinition(handle);
            string extends = td.BaseType.IsNil ? "" : " extends " + text.Type(td.BaseType);
            output.WriteLine($"type {name}{extends} [{td.Attributes}]");
            var fields = td.GetFields().Select(h => r.GetFieldDefinition(h))
                           .Select(f => $"  field {r.GetString(f.Name)} : {f.DecodeSignature(text, null)} [{f.Attributes}]")
                           .OrderBy(s => s, StringComparer.Ordinal);
            foreach (string f in fields)
                output.WriteLine(f);
            var methods = td.GetMethods()
                .Select(h => (Head: Head(r, text, h), Handle: h))
                .OrderBy(m => m.Head, StringComparer.Ordinal).ThenBy(m => MetadataTokens.GetRowNumber(m.Handle));
            foreach (var (head, mh) in methods)
            {
                output.WriteLine("  method " + head);
                Body(pe, r, text, mh, output);
            }
        }
    }

    private static string Head(MetadataReader r, SignatureText text, MethodDefinitionHandle h)
    {
        var md = r.GetMethodDefinition(h);
        return $"{r.GetString(md.Name)} {SignatureText.Method(md.DecodeSignature(text, null))} [{md.Attributes}] [{md.ImplAttributes}]";
    }

    private static void Body(PEReader pe, MetadataReader r, SignatureText text, MethodDefinitionHandle h, TextWriter output)
    {
        var md = r.GetMethodDefinition(h);
        if (md.RelativeVirtualAddress == 0 || (md.ImplAttributes & MethodImplAttributes.CodeTypeMask) != MethodImplAttributes.IL)
            return;
        var body = pe.GetMethodBody(md.RelativeVirtualAddress);
        output.WriteLine($"    maxstack {body.MaxStack}{(body.LocalVariablesInitialized ? " initlocals" : "")}");
        if (!body.LocalSignature.IsNil)
        {
            var locals = r.GetStandaloneSignature(body.LocalSignature).DecodeLocalSignature(text, null);
            for (int i = 0; i < locals.Length; i++)
                output.WriteLine($"    local [{i}] {locals[i]}");
        }
        var code = IlDecoder.Decode(body.GetILReader());
        var index = IlDecoder.IndexByOffset(code);
        int end = body.GetILReader().Length;
        // An EH clause may end at the end of the body, which has no instruction: call that index code.Count.
        string At(int offset) => offset == end ? $"#{code.Count}" : index.TryGetValue(offset, out int i) ? $"#{i}" : $"IL_{offset:x4}?";
        for (int i = 0; i < code.Count; i++)
            output.WriteLine($"    #{i} {Instruction(r, text, code[i], At)}");
        foreach (var eh in body.ExceptionRegions)
        {
            string kind = eh.Kind switch
            {
                ExceptionRegionKind.Catch => "catch " + text.Type(eh.CatchType),
                ExceptionRegionKind.Filter => "filter " + At(eh.FilterOffset),
                _ => eh.Kind.ToString().ToLowerInvariant(),
            };
            output.WriteLine($"    try {At(eh.TryOffset)}..{At(eh.TryOffset + eh.TryLength)} " +
                             $"handler {At(eh.HandlerOffset)}..{At(eh.HandlerOffset + eh.HandlerLength)} {kind}");
        }
    }

    // A token that does not resolve is shown, not fatal: the diff then points at it (verify reports it).
    private static string TokenText(MetadataReader r, SignatureText text, int token)
    {
        try { return Names.Token(r, text, token); }
        catch (BadImageFormatException) { return $"<bad token 0x{token:x8}>"; }
    }

    private static string Instruction(MetadataReader r, SignatureText text, Instruction ins, Func<int, string> at)
    {
        string operand = ins.OpCode.OperandType switch
        {
            OperandType.InlineNone => "",
            OperandType.ShortInlineBrTarget or OperandType.InlineBrTarget => at(ins.Targets[0]),
            OperandType.InlineSwitch => "(" + string.Join(",", ins.Targets.Select(at)) + ")",
            OperandType.ShortInlineR or OperandType.InlineR => ins.Real.ToString("R", CultureInfo.InvariantCulture),
            _ when IlDecoder.HasToken(ins.OpCode) => TokenText(r, text, ins.Token),
            _ => ins.Number.ToString(CultureInfo.InvariantCulture),
        };
        return operand.Length == 0 ? ins.OpCode.Name! : $"{ins.OpCode.Name} {operand}";
    }
}
