// `ltcheck contents`: everything a reader of an assembly sees, free of where the writer put it, for
// comparing two layouts of the same assembly (docs/image-layout.md).
using System.Collections.Immutable;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;
using System.Security.Cryptography;

namespace LtCheck;

/// <summary>
/// Prints one line per table row (its bytes, with RVA cells replaced by what they point at), per
/// heap entry (#Strings, #US, #Blob, #GUID), per manifest resource and per debug directory entry
/// (its data's hash), and the PE facts a loader uses: CLI flags and entry point, strong-name
/// signature, Win32 resources, the entry stub's import and the relocated field. RVAs and file
/// offsets themselves are never printed, so two layouts of one assembly give the same listing.
/// </summary>
internal static class Contents
{
    /// <summary>Writes the listing of FILE to output; throws BadImageFormatException on unreadable input.</summary>
    public static void Run(string file, TextWriter output)
    {
        using var stream = File.OpenRead(file);
        using var pe = new PEReader(stream);
        var r = pe.GetMetadataReader();
        Pe(pe, output);
        Tables(pe, r, output);
        Heaps(r, output);
        Resources(pe, r, output);
        Debug(pe, output);
    }

    private static string Hash(ReadOnlySpan<byte> bytes) => Convert.ToHexString(SHA256.HashData(bytes))[..16];

    private static byte[] At(PEReader pe, int rva, int size) =>
        size == 0 ? [] : pe.GetSectionData(rva).GetContent(0, size).ToArray();

    private static void Pe(PEReader pe, TextWriter output)
    {
        var h = pe.PEHeaders;
        var cor = h.CorHeader!;
        output.WriteLine($"pe {h.CoffHeader.Machine} {h.CoffHeader.Characteristics} {h.PEHeader!.Magic} " +
                         $"{h.PEHeader.Subsystem} {h.PEHeader.DllCharacteristics} base 0x{h.PEHeader.ImageBase:x}");
        output.WriteLine($"cli {cor.MajorRuntimeVersion}.{cor.MinorRuntimeVersion} {cor.Flags} entry 0x{cor.EntryPointTokenOrRelativeVirtualAddress:x8}");
        var sn = cor.StrongNameSignatureDirectory;
        output.WriteLine($"strong-name {sn.Size} {Hash(At(pe, sn.RelativeVirtualAddress, sn.Size))}");
        var rsrc = h.PEHeader.ResourceTableDirectory;
        // Win32 resources hold RVAs of their data: a kept section keeps them, so they are compared as bytes.
        output.WriteLine($"win32-resources {rsrc.Size} {Hash(At(pe, rsrc.RelativeVirtualAddress, rsrc.Size))}");
        foreach (var s in h.SectionHeaders.Where(s => s.Name is not (".text" or ".lttext" or ".unused" or ".reloc")))
            output.WriteLine($"section {s.Name} rva 0x{s.VirtualAddress:x} {s.VirtualSize} {Hash(pe.GetSectionData(s.VirtualAddress).GetContent().AsSpan())}");
        Stub(pe, output);
    }

    // The PE32 entry stub `jmp [IAT]`, followed to the name it imports, and what the relocation fixes up.
    private static void Stub(PEReader pe, TextWriter output)
    {
        var h = pe.PEHeaders;
        int entry = h.PEHeader!.AddressOfEntryPoint;
        if (entry == 0)
            return;
        var stub = At(pe, entry, 6);
        output.WriteLine($"entry-stub {Convert.ToHexString(stub, 0, 2)}");
        if (stub[0] != 0xFF || stub[1] != 0x25)
            return;
        int iat = (int)(BitConverter.ToUInt32(stub, 2) - (ulong)h.PEHeader.ImageBase);
        int hintName = BitConverter.ToInt32(At(pe, iat, 4));
        output.WriteLine($"entry-import {(iat == h.PEHeader.ImportAddressTableDirectory.RelativeVirtualAddress ? "IAT" : "not the IAT")} {Name(pe, hintName + 2)}");
        var imports = At(pe, h.PEHeader.ImportTableDirectory.RelativeVirtualAddress, 20);
        output.WriteLine($"import {Name(pe, BitConverter.ToInt32(imports, 12))} first-thunk {(BitConverter.ToInt32(imports, 16) == iat ? "IAT" : "elsewhere")} " +
                         $"lookup {Name(pe, BitConverter.ToInt32(At(pe, BitConverter.ToInt32(imports, 0), 4)) + 2)}");
        var reloc = h.PEHeader.BaseRelocationTableDirectory;
        if (reloc.Size < 10)
            return;
        var block = At(pe, reloc.RelativeVirtualAddress, reloc.Size);
        int field = BitConverter.ToInt32(block, 0) + (BitConverter.ToUInt16(block, 8) & 0xFFF);
        output.WriteLine($"reloc type {BitConverter.ToUInt16(block, 8) >> 12} at entry{field - entry:+0;-0}");
    }

    private static string Name(PEReader pe, int rva)
    {
        var bytes = pe.GetSectionData(rva).GetContent();
        int end = bytes.IndexOf((byte)0);
        return System.Text.Encoding.ASCII.GetString(bytes.AsSpan(0, end < 0 ? Math.Min(bytes.Length, 64) : end));
    }

    // Every row's bytes; the RVA cell of MethodDef becomes its body's hash, FieldRVA's the field data's.
    private static void Tables(PEReader pe, MetadataReader r, TextWriter output)
    {
        var fieldData = FieldDataSizes(r);
        var metadata = pe.GetMetadata().GetContent();
        foreach (var table in Enum.GetValues<TableIndex>())
        {
            int rows = r.GetTableRowCount(table), size = r.GetTableRowSize(table), offset = r.GetTableMetadataOffset(table);
            for (int row = 1; row <= rows; row++)
            {
                var bytes = metadata.AsSpan(offset + (row - 1) * size, size);
                string cell = "";
                if (table == TableIndex.MethodDef)
                {
                    int rva = BitConverter.ToInt32(bytes);
                    cell = rva == 0 ? "no-body" : "body " + Hash(At(pe, rva, pe.GetMethodBody(rva).Size));
                    bytes = bytes[4..];
                }
                else if (table == TableIndex.FieldRva)
                {
                    int rva = BitConverter.ToInt32(bytes);
                    var field = MetadataTokens.FieldDefinitionHandle(Row(r, bytes[4..]));
                    int n = fieldData.GetValueOrDefault(field, 0);
                    cell = $"data {n} {Hash(At(pe, rva, n))}";
                    bytes = bytes[4..];
                }
                output.WriteLine($"{table} {row} {cell} {Convert.ToHexString(bytes)}");
            }
        }
    }

    private static int Row(MetadataReader r, ReadOnlySpan<byte> fieldCell) =>
        r.GetTableRowCount(TableIndex.Field) > 0xFFFF ? BitConverter.ToInt32(fieldCell) : BitConverter.ToUInt16(fieldCell);

    // The size of each RVA field's data: its type's size (II.23.1.16 primitives, ClassLayout of a value type).
    private static Dictionary<FieldDefinitionHandle, int> FieldDataSizes(MetadataReader r)
    {
        var layout = new Dictionary<TypeDefinitionHandle, int>();
        foreach (var th in r.TypeDefinitions)
        {
            var l = r.GetTypeDefinition(th).GetLayout();
            if (!l.IsDefault)
                layout[th] = l.Size;
        }
        var sizes = new Dictionary<FieldDefinitionHandle, int>();
        foreach (var fh in r.FieldDefinitions)
        {
            var f = r.GetFieldDefinition(fh);
            if (f.GetRelativeVirtualAddress() == 0)
                continue;
            var blob = r.GetBlobReader(f.Signature);
            blob.ReadByte(); // FIELD
            var code = blob.ReadSignatureTypeCode();
            sizes[fh] = code switch
            {
                SignatureTypeCode.Boolean or SignatureTypeCode.SByte or SignatureTypeCode.Byte => 1,
                SignatureTypeCode.Char or SignatureTypeCode.Int16 or SignatureTypeCode.UInt16 => 2,
                SignatureTypeCode.Int32 or SignatureTypeCode.UInt32 or SignatureTypeCode.Single => 4,
                SignatureTypeCode.Int64 or SignatureTypeCode.UInt64 or SignatureTypeCode.Double => 8,
                _ when blob.RemainingBytes > 0 && blob.ReadTypeHandle() is { Kind: HandleKind.TypeDefinition } t
                    => layout.GetValueOrDefault((TypeDefinitionHandle)t, 0),
                _ => 0,
            };
        }
        return sizes;
    }

    private static void Heaps(MetadataReader r, TextWriter output)
    {
        for (var s = r.GetNextHandle(MetadataTokens.StringHandle(0)); !s.IsNil; s = r.GetNextHandle(s))
            output.WriteLine($"#Strings {MetadataTokens.GetHeapOffset(s)} {r.GetString(s)}");
        for (var u = r.GetNextHandle(MetadataTokens.UserStringHandle(0)); !u.IsNil; u = r.GetNextHandle(u))
            output.WriteLine($"#US {MetadataTokens.GetHeapOffset(u)} {Convert.ToHexString(System.Text.Encoding.Unicode.GetBytes(r.GetUserString(u)))}");
        for (var b = r.GetNextHandle(MetadataTokens.BlobHandle(0)); !b.IsNil; b = r.GetNextHandle(b))
            output.WriteLine($"#Blob {MetadataTokens.GetHeapOffset(b)} {Convert.ToHexString(r.GetBlobBytes(b))}");
        int guids = r.GetHeapSize(HeapIndex.Guid) / 16;
        for (int g = 1; g <= guids; g++)
            output.WriteLine($"#GUID {g} {r.GetGuid(MetadataTokens.GuidHandle(g))}");
        output.WriteLine($"metadata {r.MetadataVersion} {r.MetadataKind}");
    }

    private static void Resources(PEReader pe, MetadataReader r, TextWriter output)
    {
        var dir = pe.PEHeaders.CorHeader!.ResourcesDirectory;
        foreach (var h in r.ManifestResources)
        {
            var m = r.GetManifestResource(h);
            string data = "elsewhere";
            if (m.Implementation.IsNil)
            {
                var at = pe.GetSectionData(dir.RelativeVirtualAddress + (int)m.Offset).GetContent();
                int len = BitConverter.ToInt32(at.AsSpan(0, 4));
                data = $"{len} {Hash(at.AsSpan(4, len))}";
            }
            output.WriteLine($"resource {r.GetString(m.Name)} {m.Attributes} {data}");
        }
    }

    private static void Debug(PEReader pe, TextWriter output)
    {
        ImmutableArray<byte> image = pe.GetEntireImage().GetContent();
        foreach (var e in pe.ReadDebugDirectory())
        {
            string data = e.DataSize == 0 ? "" : Hash(image.AsSpan(e.DataPointer, e.DataSize));
            string mapped = e.DataRelativeVirtualAddress == 0 || e.DataSize == 0 ? "" :
                At(pe, e.DataRelativeVirtualAddress, e.DataSize).AsSpan().SequenceEqual(image.AsSpan(e.DataPointer, e.DataSize)) ? " mapped" : " MAPPED-DIFFERS";
            output.WriteLine($"debug {e.Type} {e.MajorVersion}.{e.MinorVersion} stamp 0x{e.Stamp:x8} {e.DataSize} {data}{mapped}");
        }
    }
}
