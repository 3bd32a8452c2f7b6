// `ltcheck verify`: reads every table row, heap entry, method body and signature of an assembly with SRM.
using System.Reflection;
using System.Reflection.Emit;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;

namespace LtCheck;

/// <summary>
/// Walks a whole ECMA-335 image through System.Reflection.Metadata, which was written independently
/// of the weaver: every handle a row holds must name an existing row, every heap entry must decode,
/// every IL body must decode with valid tokens, branch targets and EH regions, every signature must
/// decode, and the sorted tables must be sorted. Problems are collected, not thrown.
/// </summary>
internal sealed class Verifier
{
    private const int MaxShown = 25;
    private readonly MetadataReader _r;
    private readonly PEReader _pe;
    private readonly SignatureText _text;
    private readonly List<string> _errors = [];
    private int _rows, _heapEntries, _bodies, _instructions, _signatures;

    private Verifier(PEReader pe)
    {
        _pe = pe;
        _r = pe.GetMetadataReader();
        _text = new SignatureText(_r);
    }

    /// <summary>Verifies one file and prints its summary line (and its problems); returns true when clean.</summary>
    public static bool Run(string file, TextWriter output)
    {
        try
        {
            using var stream = File.OpenRead(file);
            using var pe = new PEReader(stream);
            if (!pe.HasMetadata)
            {
                output.WriteLine($"FAIL {file}: no CLI header or metadata (II.25.3.3)");
                return false;
            }
            var v = new Verifier(pe);
            v.VerifyAll();
            return v.Report(file, output);
        }
        catch (Exception e) when (e is BadImageFormatException or IOException or InvalidOperationException)
        {
            output.WriteLine($"FAIL {file}: {e.GetType().Name}: {e.Message}");
            return false;
        }
    }

    private void VerifyAll()
    {
        for (int t = 0; t < MetadataTokens.TableCount; t++)
            for (int row = 1; row <= _r.GetTableRowCount((TableIndex)t); row++, _rows++)
                Guard($"{(TableIndex)t} row {row}", () => Row((TableIndex)t, row));
        Heaps();
        foreach (var h in _r.MethodDefinitions)
            Guard($"MethodDef row {MetadataTokens.GetRowNumber(h)} body", () => Body(h));
        Signatures();
        Guard("sorted tables", () => _errors.AddRange(SortedTables.Check(_r, _pe.GetMetadata().GetContent())));
    }

    private bool Report(string file, TextWriter output)
    {
        int tables = Enumerable.Range(0, MetadataTokens.TableCount).Count(t => _r.GetTableRowCount((TableIndex)t) > 0);
        string counts = $"{tables} tables, {_rows} rows, {_heapEntries} heap entries, {_bodies} method bodies, " +
                        $"{_instructions} instructions, {_signatures} signatures";
        if (_errors.Count == 0)
        {
            output.WriteLine($"ok {file}: {counts}");
            return true;
        }
        output.WriteLine($"FAIL {file}: {_errors.Count} problems ({counts})");
        foreach (var e in _errors.Take(MaxShown))
            output.WriteLine("  " + e);
        if (_errors.Count > MaxShown)
            output.WriteLine($"  ... and {_errors.Count - MaxShown} more");
        return false;
    }

    /// <summary>Runs one check, turning any exception SRM or the checks throw into a recorded problem.</summary>
    private void Guard(string where, Action check)
    {
        try { check(); }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            _errors.Add($"{where}: {e.GetType().Name}: {e.Message}");
        }
    }

    /// <summary>Records a problem unless the handle names an existing row of its table (or is nil where allowed).</summary>
    private void Ref(string where, EntityHandle h, bool nilOk = false)
    {
        if (h.IsNil)
        {
            if (!nilOk)
                _errors.Add($"{where}: nil reference");
            return;
        }
        if (!MetadataTokens.TryGetTableIndex(h.Kind, out TableIndex t))
        {
            _errors.Add($"{where}: handle kind {h.Kind} is not a table");
            return;
        }
        int row = MetadataTokens.GetRowNumber(h);
        if (row < 1 || row > _r.GetTableRowCount(t))
            _errors.Add($"{where}: {t} row {row} does not exist ({_r.GetTableRowCount(t)} rows)");
    }

    // Heap handles are checked by reading them: SRM throws BadImageFormatException out of range.
    private void Str(StringHandle h) => _r.GetString(h);
    private void Blob(BlobHandle h) => _r.GetBlobBytes(h);

    /// <summary>Reads one row through SRM's typed API and checks each reference it holds (II.22).</summary>
    private void Row(TableIndex t, int row)
    {
        var handle = MetadataTokens.EntityHandle(t, row);
        string at = $"{t} row {row}";
        switch (t)
        {
            case TableIndex.Module:
            {
                var m = _r.GetModuleDefinition();
                Str(m.Name);
                _r.GetGuid(m.Mvid);
                break;
            }
            case TableIndex.TypeRef:
            {
                var tr = _r.GetTypeReference((TypeReferenceHandle)handle);
                Str(tr.Name); Str(tr.Namespace);
                Ref(at + " ResolutionScope", tr.ResolutionScope, nilOk: true);
                break;
            }
            case TableIndex.TypeDef:
                TypeDef(at, _r.GetTypeDefinition((TypeDefinitionHandle)handle));
                break;
            case TableIndex.Field:
            {
                var f = _r.GetFieldDefinition((FieldDefinitionHandle)handle);
                Str(f.Name); Blob(f.Signature);
                Ref(at + " default value", f.GetDefaultValue(), nilOk: true);
                Blob(f.GetMarshallingDescriptor());
                f.GetOffset();
                f.GetRelativeVirtualAddress();
                Ref(at + " declaring type", f.GetDeclaringType());
                break;
            }
            case TableIndex.MethodDef:
            {
                var m = _r.GetMethodDefinition((MethodDefinitionHandle)handle);
                Str(m.Name); Blob(m.Signature);
                foreach (var p in m.GetParameters()) Ref(at + " ParamList", p);
                foreach (var g in m.GetGenericParameters()) Ref(at + " generic parameter", g);
                var import = m.GetImport();
                Str(import.Name);
                Ref(at + " ImplMap ImportScope", import.Module, nilOk: true);
                Ref(at + " declaring type", m.GetDeclaringType());
                break;
            }
            case TableIndex.Param:
            {
                var p = _r.GetParameter((ParameterHandle)handle);
                Str(p.Name);
                Ref(at + " default value", p.GetDefaultValue(), nilOk: true);
                Blob(p.GetMarshallingDescriptor());
                break;
            }
            case TableIndex.InterfaceImpl:
                Ref(at + " Interface", _r.GetInterfaceImplementation((InterfaceImplementationHandle)handle).Interface);
                break;
            case TableIndex.MemberRef:
            {
                var mr = _r.GetMemberReference((MemberReferenceHandle)handle);
                Str(mr.Name); Blob(mr.Signature);
                Ref(at + " Class", mr.Parent);
                break;
            }
            case TableIndex.Constant:
            {
                var c = _r.GetConstant((ConstantHandle)handle);
                Ref(at + " Parent", c.Parent);
                Blob(c.Value);
                break;
            }
            case TableIndex.CustomAttribute:
            {
                var ca = _r.GetCustomAttribute((CustomAttributeHandle)handle);
                Ref(at + " Parent", ca.Parent);
                Ref(at + " Type", ca.Constructor);
                Blob(ca.Value);
                break;
            }
            case TableIndex.DeclSecurity:
            {
                var ds = _r.GetDeclarativeSecurityAttribute((DeclarativeSecurityAttributeHandle)handle);
                Ref(at + " Parent", ds.Parent);
                Blob(ds.PermissionSet);
                break;
            }
            case TableIndex.StandAloneSig:
                Blob(_r.GetStandaloneSignature((StandaloneSignatureHandle)handle).Signature);
                break;
            case TableIndex.Event:
            {
                var e = _r.GetEventDefinition((EventDefinitionHandle)handle);
                Str(e.Name);
                Ref(at + " EventType", e.Type, nilOk: true);
                Accessors(at, e.GetAccessors().Adder, e.GetAccessors().Remover, e.GetAccessors().Raiser, e.GetAccessors().Others);
                break;
            }
            case TableIndex.Property:
            {
                var p = _r.GetPropertyDefinition((PropertyDefinitionHandle)handle);
                Str(p.Name); Blob(p.Signature);
                Ref(at + " default value", p.GetDefaultValue(), nilOk: true);
                Accessors(at, p.GetAccessors().Getter, p.GetAccessors().Setter, default, p.GetAccessors().Others);
                break;
            }
            case TableIndex.MethodImpl:
            {
                var mi = _r.GetMethodImplementation((MethodImplementationHandle)handle);
                Ref(at + " Class", mi.Type);
                Ref(at + " MethodBody", mi.MethodBody);
                Ref(at + " MethodDeclaration", mi.MethodDeclaration);
                break;
            }
            case TableIndex.ModuleRef:
                Str(_r.GetModuleReference((ModuleReferenceHandle)handle).Name);
                break;
            case TableIndex.TypeSpec:
                Blob(_r.GetTypeSpecification((TypeSpecificationHandle)handle).Signature);
                break;
            case TableIndex.Assembly:
            {
                var a = _r.GetAssemblyDefinition();
                Str(a.Name); Str(a.Culture); Blob(a.PublicKey);
                break;
            }
            case TableIndex.AssemblyRef:
            {
                var a = _r.GetAssemblyReference((AssemblyReferenceHandle)handle);
                Str(a.Name); Str(a.Culture); Blob(a.PublicKeyOrToken); Blob(a.HashValue);
                break;
            }
            case TableIndex.File:
            {
                var f = _r.GetAssemblyFile((AssemblyFileHandle)handle);
                Str(f.Name); Blob(f.HashValue);
                break;
            }
            case TableIndex.ExportedType:
            {
                var e = _r.GetExportedType((ExportedTypeHandle)handle);
                Str(e.Name); Str(e.Namespace);
                Ref(at + " Implementation", e.Implementation, nilOk: true);
                break;
            }
            case TableIndex.ManifestResource:
            {
                var m = _r.GetManifestResource((ManifestResourceHandle)handle);
                Str(m.Name);
                Ref(at + " Implementation", m.Implementation, nilOk: true);
                break;
            }
            case TableIndex.GenericParam:
            {
                var g = _r.GetGenericParameter((GenericParameterHandle)handle);
                Str(g.Name);
                Ref(at + " Owner", g.Parent);
                foreach (var c in g.GetConstraints()) Ref(at + " constraint", c);
                break;
            }
            case TableIndex.MethodSpec:
            {
                var ms = _r.GetMethodSpecification((MethodSpecificationHandle)handle);
                Ref(at + " Method", ms.Method);
                Blob(ms.Signature);
                break;
            }
            case TableIndex.GenericParamConstraint:
            {
                var c = _r.GetGenericParameterConstraint((GenericParameterConstraintHandle)handle);
                Ref(at + " Owner", c.Parameter);
                Ref(at + " Constraint", c.Type);
                break;
            }
            // ClassLayout, FieldLayout, FieldMarshal, FieldRVA, ImplMap, NestedClass, EventMap,
            // PropertyMap and MethodSemantics have no SRM handle: they are read through their
            // owners (TypeDef, Field, Param, MethodDef, Event, Property). The Ptr, ENC and
            // Processor/OS tables carry no references the checks could follow.
        }
    }

    private void TypeDef(string at, TypeDefinition td)
    {
        Str(td.Name); Str(td.Namespace);
        Ref(at + " Extends", td.BaseType, nilOk: true);
        foreach (var f in td.GetFields()) Ref(at + " FieldList", f);
        foreach (var m in td.GetMethods()) Ref(at + " MethodList", m);
        foreach (var n in td.GetNestedTypes()) Ref(at + " NestedClass", n);
        foreach (var i in td.GetInterfaceImplementations()) Ref(at + " InterfaceImpl", i);
        foreach (var e in td.GetEvents()) Ref(at + " EventMap", e);
        foreach (var p in td.GetProperties()) Ref(at + " PropertyMap", p);
        foreach (var g in td.GetGenericParameters()) Ref(at + " GenericParam", g);
        foreach (var mi in td.GetMethodImplementations()) Ref(at + " MethodImpl", mi);
        foreach (var ca in td.GetCustomAttributes()) Ref(at + " CustomAttribute", ca);
        foreach (var ds in td.GetDeclarativeSecurityAttributes()) Ref(at + " DeclSecurity", ds);
        Ref(at + " enclosing class", td.GetDeclaringType(), nilOk: true);
        td.GetLayout();
    }

    private void Accessors(string at, MethodDefinitionHandle a, MethodDefinitionHandle b, MethodDefinitionHandle c,
                           System.Collections.Immutable.ImmutableArray<MethodDefinitionHandle> others)
    {
        foreach (var m in new[] { a, b, c }.Concat(others))
            Ref(at + " MethodSemantics Method", m, nilOk: true);
    }

    private void Heaps()
    {
        // II.24.2.3 #Strings, II.24.2.4 #US and #Blob, II.24.2.5 #GUID: walk every entry in turn.
        for (var s = _r.GetNextHandle(MetadataTokens.StringHandle(0)); !s.IsNil; s = _r.GetNextHandle(s), _heapEntries++)
            Guard($"#Strings offset {MetadataTokens.GetHeapOffset(s)}", () => _r.GetString(s));
        for (var u = _r.GetNextHandle(MetadataTokens.UserStringHandle(0)); !u.IsNil; u = _r.GetNextHandle(u), _heapEntries++)
            Guard($"#US offset {MetadataTokens.GetHeapOffset(u)}", () => _r.GetUserString(u));
        for (var b = _r.GetNextHandle(MetadataTokens.BlobHandle(0)); !b.IsNil; b = _r.GetNextHandle(b), _heapEntries++)
            Guard($"#Blob offset {MetadataTokens.GetHeapOffset(b)}", () => _r.GetBlobBytes(b));
        int guids = _r.GetHeapSize(HeapIndex.Guid) / 16;
        for (int g = 1; g <= guids; g++, _heapEntries++)
            _r.GetGuid(MetadataTokens.GuidHandle(g));
    }

    /// <summary>Decodes one method body (II.25.4) and checks its locals, tokens, branch targets and EH clauses.</summary>
    private void Body(MethodDefinitionHandle h)
    {
        var md = _r.GetMethodDefinition(h);
        if (md.RelativeVirtualAddress == 0 || (md.ImplAttributes & MethodImplAttributes.CodeTypeMask) != MethodImplAttributes.IL)
            return;
        string at = $"{Names.TypeDef(_r, md.GetDeclaringType())}::{_r.GetString(md.Name)}";
        var body = _pe.GetMethodBody(md.RelativeVirtualAddress);
        _bodies++;
        if (!body.LocalSignature.IsNil)
        {
            Ref(at + " LocalVarSigTok", body.LocalSignature);
            var sig = _r.GetStandaloneSignature(body.LocalSignature);
            if (sig.GetKind() != StandaloneSignatureKind.LocalVariables)
                _errors.Add($"{at}: LocalVarSigTok names a method signature, not LOCAL_SIG (II.23.2.6)");
            else
                sig.DecodeLocalSignature(_text, null);
        }
        List<Instruction> code;
        try { code = IlDecoder.Decode(body.GetILReader()); }
        catch (IlFormatException e) { _errors.Add($"{at}: {e.Message}"); return; }
        _instructions += code.Count;
        var starts = IlDecoder.IndexByOffset(code);
        foreach (var ins in code)
        {
            foreach (int target in ins.Targets)
                if (!starts.ContainsKey(target))
                    _errors.Add($"{at} IL_{ins.Offset:x4} {ins.OpCode.Name}: target IL_{target:x4} is not an instruction start (III.1.7.2)");
            if (IlDecoder.HasToken(ins.OpCode))
                Guard($"{at} IL_{ins.Offset:x4} {ins.OpCode.Name}", () => Operand(ins));
        }
        foreach (var region in body.ExceptionRegions)
            Clause(at, region, starts, body.GetILReader().Length);
    }

    /// <summary>Checks an EH clause's offsets fall on instruction boundaries within the body (II.25.4.6).</summary>
    private void Clause(string at, ExceptionRegion region, Dictionary<int, int> starts, int codeSize)
    {
        bool Start(int offset) => starts.ContainsKey(offset);
        bool End(int offset) => offset == codeSize || starts.ContainsKey(offset);
        string what = $"{at} {region.Kind} clause try IL_{region.TryOffset:x4}+{region.TryLength} handler IL_{region.HandlerOffset:x4}+{region.HandlerLength}";
        if (!Start(region.TryOffset) || !End(region.TryOffset + region.TryLength))
            _errors.Add(what + ": try block is not on instruction boundaries (II.25.4.6)");
        if (!Start(region.HandlerOffset) || !End(region.HandlerOffset + region.HandlerLength))
            _errors.Add(what + ": handler is not on instruction boundaries (II.25.4.6)");
        if (region.Kind == ExceptionRegionKind.Filter && !Start(region.FilterOffset))
            _errors.Add(what + $": filter IL_{region.FilterOffset:x4} is not an instruction start (II.25.4.6)");
        if (region.Kind == ExceptionRegionKind.Catch)
        {
            Ref(what + " ClassToken", region.CatchType);
            Guard(what + " ClassToken", () => _text.Type(region.CatchType));
        }
    }

    /// <summary>Checks a token operand names an existing row of a table its operand type allows (III.1.9).</summary>
    private void Operand(Instruction ins)
    {
        string at = $"IL_{ins.Offset:x4} {ins.OpCode.Name}";
        if (ins.OpCode.OperandType == OperandType.InlineString)
        {
            if ((ins.Token >> 24) != 0x70)
                throw new BadImageFormatException($"string token 0x{ins.Token:x8} is not a #US token (III.4.16)");
            _r.GetUserString(MetadataTokens.UserStringHandle(ins.Token & 0xFFFFFF));
            return;
        }
        var allowed = ins.OpCode.OperandType switch
        {
            OperandType.InlineMethod => new[] { TableIndex.MethodDef, TableIndex.MemberRef, TableIndex.MethodSpec },
            OperandType.InlineField => [TableIndex.Field, TableIndex.MemberRef],
            OperandType.InlineType => [TableIndex.TypeDef, TableIndex.TypeRef, TableIndex.TypeSpec],
            OperandType.InlineSig => [TableIndex.StandAloneSig],
            _ => [TableIndex.TypeDef, TableIndex.TypeRef, TableIndex.TypeSpec, TableIndex.MethodDef,
                  TableIndex.MemberRef, TableIndex.MethodSpec, TableIndex.Field],
        };
        var table = (TableIndex)(ins.Token >> 24);
        int row = ins.Token & 0xFFFFFF;
        if (!allowed.Contains(table) || row < 1 || row > _r.GetTableRowCount(table))
            throw new BadImageFormatException($"token 0x{ins.Token:x8} is not a row of {string.Join("/", allowed)}");
        // A MemberRef must be of the kind the opcode expects: a field for InlineField, a method for InlineMethod.
        if (table == TableIndex.MemberRef && ins.OpCode.OperandType is OperandType.InlineField or OperandType.InlineMethod)
        {
            var kind = _r.GetMemberReference(MetadataTokens.MemberReferenceHandle(row)).GetKind();
            bool wantField = ins.OpCode.OperandType == OperandType.InlineField;
            if (wantField != (kind == MemberReferenceKind.Field))
                _errors.Add($"{at}: MemberRef row {row} is a {kind} reference");
        }
        Names.Token(_r, _text, ins.Token);
    }

    /// <summary>Decodes every signature blob that a table row owns (II.23.2).</summary>
    private void Signatures()
    {
        void Decode(string where, Action decode) { _signatures++; Guard(where + " signature", decode); }
        foreach (var h in _r.MethodDefinitions)
            Decode($"MethodDef row {MetadataTokens.GetRowNumber(h)}", () => _r.GetMethodDefinition(h).DecodeSignature(_text, null));
        foreach (var h in _r.FieldDefinitions)
            Decode($"Field row {MetadataTokens.GetRowNumber(h)}", () => _r.GetFieldDefinition(h).DecodeSignature(_text, null));
        foreach (var h in _r.MemberReferences)
            Decode($"MemberRef row {MetadataTokens.GetRowNumber(h)}", () => Names.MemberSignature(_r, _text, _r.GetMemberReference(h)));
        foreach (var h in _r.PropertyDefinitions)
            Decode($"Property row {MetadataTokens.GetRowNumber(h)}", () => _r.GetPropertyDefinition(h).DecodeSignature(_text, null));
        for (int row = 1; row <= _r.GetTableRowCount(TableIndex.StandAloneSig); row++)
        {
            var h = MetadataTokens.StandaloneSignatureHandle(row);
            Decode($"StandAloneSig row {row}", () => Names.StandAlone(_r, _text, h));
        }
        for (int row = 1; row <= _r.GetTableRowCount(TableIndex.TypeSpec); row++)
        {
            var h = MetadataTokens.TypeSpecificationHandle(row);
            Decode($"TypeSpec row {row}", () => _r.GetTypeSpecification(h).DecodeSignature(_text, null));
        }
        for (int row = 1; row <= _r.GetTableRowCount(TableIndex.MethodSpec); row++)
        {
            var h = MetadataTokens.MethodSpecificationHandle(row);
            Decode($"MethodSpec row {row}", () => _r.GetMethodSpecification(h).DecodeSignature(_text, null));
        }
    }
}
