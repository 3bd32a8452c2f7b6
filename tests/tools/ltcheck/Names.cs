// Turns metadata handles and signatures into stable, ilasm-like text (used by dump, locks and error messages).
using System.Collections.Immutable;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;

namespace LtCheck;

/// <summary>
/// SRM signature provider that renders types as text: primitives by their ilasm keyword, TypeDefs by
/// full name, TypeRefs as "[scope]Namespace.Name", generic parameters as !n / !!n (II.23.2.12).
/// </summary>
internal sealed class SignatureText(MetadataReader reader) : ISignatureTypeProvider<string, object?>
{
    // A TypeSpec may (illegally) name itself; this bounds the recursion through GetTypeFromSpecification.
    private int _depth;

    private static readonly Dictionary<PrimitiveTypeCode, string> Keywords = new()
    {
        [PrimitiveTypeCode.Boolean] = "bool", [PrimitiveTypeCode.Byte] = "uint8", [PrimitiveTypeCode.SByte] = "int8",
        [PrimitiveTypeCode.Char] = "char", [PrimitiveTypeCode.Int16] = "int16", [PrimitiveTypeCode.UInt16] = "uint16",
        [PrimitiveTypeCode.Int32] = "int32", [PrimitiveTypeCode.UInt32] = "uint32", [PrimitiveTypeCode.Int64] = "int64",
        [PrimitiveTypeCode.UInt64] = "uint64", [PrimitiveTypeCode.Single] = "float32", [PrimitiveTypeCode.Double] = "float64",
        [PrimitiveTypeCode.IntPtr] = "native int", [PrimitiveTypeCode.UIntPtr] = "native uint",
        [PrimitiveTypeCode.Object] = "object", [PrimitiveTypeCode.String] = "string",
        [PrimitiveTypeCode.TypedReference] = "typedref", [PrimitiveTypeCode.Void] = "void",
    };

    public string GetPrimitiveType(PrimitiveTypeCode typeCode) => Keywords[typeCode];
    public string GetTypeFromDefinition(MetadataReader r, TypeDefinitionHandle handle, byte rawTypeKind) => Names.TypeDef(r, handle);
    public string GetTypeFromReference(MetadataReader r, TypeReferenceHandle handle, byte rawTypeKind) => Names.TypeRef(r, handle);
    public string GetSZArrayType(string elementType) => elementType + "[]";
    public string GetArrayType(string elementType, ArrayShape shape) => $"{elementType}[{new string(',', shape.Rank - 1)}]";
    public string GetByReferenceType(string elementType) => elementType + "&";
    public string GetPointerType(string elementType) => elementType + "*";
    public string GetPinnedType(string elementType) => elementType + " pinned";
    public string GetGenericInstantiation(string genericType, ImmutableArray<string> typeArguments) =>
        $"{genericType}<{string.Join(",", typeArguments)}>";
    public string GetGenericMethodParameter(object? genericContext, int index) => "!!" + index;
    public string GetGenericTypeParameter(object? genericContext, int index) => "!" + index;
    public string GetModifiedType(string modifier, string unmodifiedType, bool isRequired) =>
        $"{unmodifiedType} {(isRequired ? "modreq" : "modopt")}({modifier})";
    public string GetFunctionPointerType(MethodSignature<string> signature) => "method " + Method(signature);

    public string GetTypeFromSpecification(MetadataReader r, object? genericContext, TypeSpecificationHandle handle, byte rawTypeKind)
    {
        if (_depth > 32)
            throw new BadImageFormatException($"TypeSpec row {MetadataTokens.GetRowNumber(handle)} nests too deeply");
        _depth++;
        try { return r.GetTypeSpecification(handle).DecodeSignature(this, null); }
        finally { _depth--; }
    }

    /// <summary>Renders a method signature as "[instance ][&lt;N&gt;]ret(p1,p2)" (II.23.2.1).</summary>
    public static string Method(MethodSignature<string> sig)
    {
        string generic = sig.GenericParameterCount > 0 ? $"<{sig.GenericParameterCount}>" : "";
        string instance = sig.Header.IsInstance ? "instance " : "";
        var ps = sig.ParameterTypes.Select((p, i) => i == sig.RequiredParameterCount ? "..., " + p : p);
        return $"{instance}{generic}{sig.ReturnType}({string.Join(",", ps)})";
    }

    /// <summary>Decodes a TypeDef/TypeRef/TypeSpec handle to text.</summary>
    public string Type(EntityHandle handle) => handle.Kind switch
    {
        HandleKind.TypeDefinition => Names.TypeDef(reader, (TypeDefinitionHandle)handle),
        HandleKind.TypeReference => Names.TypeRef(reader, (TypeReferenceHandle)handle),
        HandleKind.TypeSpecification => GetTypeFromSpecification(reader, null, (TypeSpecificationHandle)handle, 0),
        _ => throw new BadImageFormatException($"token 0x{MetadataTokens.GetToken(handle):x8} is not a type"),
    };
}

/// <summary>Names of metadata entities, rendered the same way everywhere.</summary>
internal static class Names
{
    /// <summary>"Namespace.Name", nested types as "Outer/Inner" (II.22.32).</summary>
    public static string TypeDef(MetadataReader r, TypeDefinitionHandle handle)
    {
        var def = r.GetTypeDefinition(handle);
        string name = r.GetString(def.Name);
        var outer = def.GetDeclaringType();
        if (!outer.IsNil)
            return TypeDef(r, outer) + "/" + name;
        string ns = r.GetString(def.Namespace);
        return ns.Length > 0 ? ns + "." + name : name;
    }

    /// <summary>"[scope]Namespace.Name" where scope is the AssemblyRef or ModuleRef name (II.22.38).</summary>
    public static string TypeRef(MetadataReader r, TypeReferenceHandle handle) => TypeRef(r, handle, 0);

    private static string TypeRef(MetadataReader r, TypeReferenceHandle handle, int depth)
    {
        if (depth > 32)
            throw new BadImageFormatException($"TypeRef row {MetadataTokens.GetRowNumber(handle)}: ResolutionScope chain too deep");
        var tr = r.GetTypeReference(handle);
        string name = r.GetString(tr.Name);
        string ns = r.GetString(tr.Namespace);
        string full = ns.Length > 0 ? ns + "." + name : name;
        var scope = tr.ResolutionScope;
        return scope.Kind switch
        {
            HandleKind.TypeReference => TypeRef(r, (TypeReferenceHandle)scope, depth + 1) + "/" + full,
            HandleKind.AssemblyReference => $"[{r.GetString(r.GetAssemblyReference((AssemblyReferenceHandle)scope).Name)}]{full}",
            HandleKind.ModuleReference => $"[.module {r.GetString(r.GetModuleReference((ModuleReferenceHandle)scope).Name)}]{full}",
            _ => full, // nil (exported-type lookup) or this module
        };
    }

    /// <summary>The type part of a name without its "[scope]" prefix, e.g. "System.Threading.Monitor".</summary>
    public static string WithoutScope(string typeName) =>
        typeName.StartsWith('[') && typeName.IndexOf(']') is int end and > 0 ? typeName[(end + 1)..] : typeName;

    /// <summary>Declaring type and name of a MethodDef, MemberRef or MethodSpec's method.</summary>
    public static (string Type, string Name) MethodOwner(MetadataReader r, SignatureText text, EntityHandle handle)
    {
        switch (handle.Kind)
        {
            case HandleKind.MethodDefinition:
            {
                var md = r.GetMethodDefinition((MethodDefinitionHandle)handle);
                return (TypeDef(r, md.GetDeclaringType()), r.GetString(md.Name));
            }
            case HandleKind.MemberReference:
            {
                var mr = r.GetMemberReference((MemberReferenceHandle)handle);
                return (MemberParent(r, text, mr.Parent), r.GetString(mr.Name));
            }
            case HandleKind.MethodSpecification:
                return MethodOwner(r, text, r.GetMethodSpecification((MethodSpecificationHandle)handle).Method);
            default:
                throw new BadImageFormatException($"token 0x{MetadataTokens.GetToken(handle):x8} is not a method");
        }
    }

    /// <summary>MemberRef's Parent (MemberRefParent coded index, II.24.2.6) as text.</summary>
    private static string MemberParent(MetadataReader r, SignatureText text, EntityHandle parent) => parent.Kind switch
    {
        HandleKind.MethodDefinition => Method(r, text, parent),
        HandleKind.ModuleReference => "[.module " + r.GetString(r.GetModuleReference((ModuleReferenceHandle)parent).Name) + "]",
        _ => text.Type(parent),
    };

    /// <summary>"Type::Name&lt;inst&gt; sig" for a MethodDef, MemberRef or MethodSpec.</summary>
    public static string Method(MetadataReader r, SignatureText text, EntityHandle handle)
    {
        var (type, name) = MethodOwner(r, text, handle);
        string inst = "";
        if (handle.Kind == HandleKind.MethodSpecification)
        {
            var spec = r.GetMethodSpecification((MethodSpecificationHandle)handle);
            inst = "<" + string.Join(",", spec.DecodeSignature(text, null)) + ">";
            handle = spec.Method;
        }
        string sig = handle.Kind switch
        {
            HandleKind.MethodDefinition => SignatureText.Method(r.GetMethodDefinition((MethodDefinitionHandle)handle).DecodeSignature(text, null)),
            HandleKind.MemberReference => MemberSignature(r, text, r.GetMemberReference((MemberReferenceHandle)handle)),
            _ => throw new BadImageFormatException($"MethodSpec names token 0x{MetadataTokens.GetToken(handle):x8}, not a method"),
        };
        return $"{type}::{name}{inst} {sig}";
    }

    /// <summary>"Type::name : fieldtype" for a FieldDef or a field MemberRef.</summary>
    public static string Field(MetadataReader r, SignatureText text, EntityHandle handle)
    {
        if (handle.Kind == HandleKind.FieldDefinition)
        {
            var fd = r.GetFieldDefinition((FieldDefinitionHandle)handle);
            return $"{TypeDef(r, fd.GetDeclaringType())}::{r.GetString(fd.Name)} : {fd.DecodeSignature(text, null)}";
        }
        var mr = r.GetMemberReference((MemberReferenceHandle)handle);
        return $"{MemberParent(r, text, mr.Parent)}::{r.GetString(mr.Name)} : {mr.DecodeFieldSignature(text, null)}";
    }

    /// <summary>A MemberRef's signature text, whichever kind it is (II.23.2.1, II.23.2.4).</summary>
    public static string MemberSignature(MetadataReader r, SignatureText text, MemberReference mr) =>
        mr.GetKind() == MemberReferenceKind.Method
            ? SignatureText.Method(mr.DecodeMethodSignature(text, null))
            : mr.DecodeFieldSignature(text, null);

    /// <summary>Any token operand of an IL instruction as text (method, field, type, signature or string).</summary>
    public static string Token(MetadataReader r, SignatureText text, int token)
    {
        if ((token >> 24) == 0x70)
            return Quote(r.GetUserString(MetadataTokens.UserStringHandle(token & 0xFFFFFF)));
        var h = MetadataTokens.EntityHandle(token);
        return h.Kind switch
        {
            HandleKind.MethodDefinition or HandleKind.MethodSpecification => Method(r, text, h),
            HandleKind.MemberReference => r.GetMemberReference((MemberReferenceHandle)h).GetKind() == MemberReferenceKind.Method
                ? Method(r, text, h) : Field(r, text, h),
            HandleKind.FieldDefinition => Field(r, text, h),
            HandleKind.StandaloneSignature => StandAlone(r, text, (StandaloneSignatureHandle)h),
            _ => text.Type(h),
        };
    }

    /// <summary>
    /// A StandAloneSig: a calli method signature or a locals list (II.23.2.3, II.23.2.6). The F# compiler
    /// also emits rows holding a FIELD signature (0x06), which SRM's GetKind rejects; they are decoded as fields.
    /// </summary>
    public static string StandAlone(MetadataReader r, SignatureText text, StandaloneSignatureHandle h)
    {
        var sig = r.GetStandaloneSignature(h);
        var blob = r.GetBlobReader(sig.Signature);
        var header = blob; // a copy: DecodeFieldSignature reads the header itself
        if (header.ReadSignatureHeader().Kind == SignatureKind.Field)
            return "field " + new SignatureDecoder<string, object?>(text, r, null).DecodeFieldSignature(ref blob);
        return sig.GetKind() == StandaloneSignatureKind.Method
            ? SignatureText.Method(sig.DecodeMethodSignature(text, null))
            : "locals(" + string.Join(",", sig.DecodeLocalSignature(text, null)) + ")";
    }

    /// <summary>A C#-like quoted string with control and non-ASCII characters escaped.</summary>
    public static string Quote(string s)
    {
        var sb = new System.Text.StringBuilder("\"");
        foreach (char c in s)
        {
            if (c == '"' || c == '\\') sb.Append('\\').Append(c);
            else if (c < 0x20 || c > 0x7e) sb.Append($"\\u{(int)c:x4}");
            else sb.Append(c);
        }
        return sb.Append('"').ToString();
    }
}
