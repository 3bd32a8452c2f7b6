// The tables that ECMA-335 II.22 requires sorted, with their key columns, and a raw reader for those keys.
using System.Collections.Immutable;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;

namespace LtCheck;

/// <summary>
/// Checks that every table II.22 says is sorted (II.22.1 and each table's rules) is in non-decreasing
/// key order. Keys are read raw from the #~ stream, because coded-index order is the order of the
/// encoded values (II.24.2.6), which SRM does not expose.
/// </summary>
internal static class SortedTables
{
    // Coded index kinds used by sort keys, with their tag width and tables in tag order (II.24.2.6).
    private enum Coded { HasConstant, HasCustomAttribute, HasFieldMarshal, HasDeclSecurity, TypeOrMethodDef, MemberForwarded, HasSemantics }

    private static readonly Dictionary<Coded, (int Bits, TableIndex[] Tables)> CodedTables = new()
    {
        [Coded.HasConstant] = (2, [TableIndex.Field, TableIndex.Param, TableIndex.Property]),
        [Coded.HasCustomAttribute] = (5, [TableIndex.MethodDef, TableIndex.Field, TableIndex.TypeRef, TableIndex.TypeDef,
            TableIndex.Param, TableIndex.InterfaceImpl, TableIndex.MemberRef, TableIndex.Module, TableIndex.DeclSecurity,
            TableIndex.Property, TableIndex.Event, TableIndex.StandAloneSig, TableIndex.ModuleRef, TableIndex.TypeSpec,
            TableIndex.Assembly, TableIndex.AssemblyRef, TableIndex.File, TableIndex.ExportedType, TableIndex.ManifestResource,
            TableIndex.GenericParam, TableIndex.GenericParamConstraint, TableIndex.MethodSpec]),
        [Coded.HasFieldMarshal] = (1, [TableIndex.Field, TableIndex.Param]),
        [Coded.HasDeclSecurity] = (2, [TableIndex.TypeDef, TableIndex.MethodDef, TableIndex.Assembly]),
        [Coded.TypeOrMethodDef] = (1, [TableIndex.TypeDef, TableIndex.MethodDef]),
        [Coded.MemberForwarded] = (1, [TableIndex.Field, TableIndex.MethodDef]),
        [Coded.HasSemantics] = (1, [TableIndex.Event, TableIndex.Property]),
    };

    /// <summary>A column of a row: a fixed-size constant, a simple index into a table, or a coded index.</summary>
    private abstract record Column;
    private sealed record Fixed(int Size) : Column;
    private sealed record Index(TableIndex Table) : Column;
    private sealed record Code(Coded Kind) : Column;

    /// <summary>One sort key: the columns that precede it in the row, then the key column itself.</summary>
    private sealed record Key(Column[] Before, Column Column);

    // Each sorted table with its primary key and, where the spec gives one, its secondary key.
    // Only leading columns are described: every key sits before the row's first heap index.
    private static readonly (TableIndex Table, Key[] Keys)[] Sorted =
    [
        (TableIndex.ClassLayout, [new([new Fixed(2), new Fixed(4)], new Index(TableIndex.TypeDef))]),          // II.22.8
        (TableIndex.Constant, [new([new Fixed(2)], new Code(Coded.HasConstant))]),                             // II.22.9
        (TableIndex.CustomAttribute, [new([], new Code(Coded.HasCustomAttribute))]),                           // II.22.10
        (TableIndex.DeclSecurity, [new([new Fixed(2)], new Code(Coded.HasDeclSecurity))]),                     // II.22.11
        (TableIndex.FieldLayout, [new([new Fixed(4)], new Index(TableIndex.Field))]),                          // II.22.16
        (TableIndex.FieldMarshal, [new([], new Code(Coded.HasFieldMarshal))]),                                 // II.22.17
        (TableIndex.FieldRva, [new([new Fixed(4)], new Index(TableIndex.Field))]),                             // II.22.18
        (TableIndex.GenericParam, [new([new Fixed(2), new Fixed(2)], new Code(Coded.TypeOrMethodDef)),         // II.22.20
                                   new([], new Fixed(2))]),
        (TableIndex.GenericParamConstraint, [new([], new Index(TableIndex.GenericParam))]),                    // II.22.21
        (TableIndex.ImplMap, [new([new Fixed(2)], new Code(Coded.MemberForwarded))]),                          // II.22.22
        (TableIndex.InterfaceImpl, [new([], new Index(TableIndex.TypeDef))]),                                  // II.22.23
        (TableIndex.MethodImpl, [new([], new Index(TableIndex.TypeDef))]),                                     // II.22.27
        (TableIndex.MethodSemantics, [new([new Fixed(2), new Index(TableIndex.MethodDef)], new Code(Coded.HasSemantics))]), // II.22.28
        (TableIndex.NestedClass, [new([], new Index(TableIndex.TypeDef))]),                                    // II.22.32
    ];

    /// <summary>Checks every sorted table; returns one message per table out of order (the first offending row).</summary>
    public static IEnumerable<string> Check(MetadataReader r, ImmutableArray<byte> metadata)
    {
        foreach (var (table, keys) in Sorted)
        {
            int rows = r.GetTableRowCount(table);
            int start = r.GetTableMetadataOffset(table);
            int size = r.GetTableRowSize(table);
            ulong[]? previous = null;
            for (int row = 1; row <= rows; row++)
            {
                int rowStart = start + (row - 1) * size;
                ulong[] current = keys.Select(k => ReadKey(r, metadata, rowStart, k)).ToArray();
                if (previous != null && Compare(previous, current) > 0)
                {
                    yield return $"{table} row {row}: key {string.Join(",", current)} sorts before row {row - 1}'s {string.Join(",", previous)} (II.22)";
                    break;
                }
                previous = current;
            }
        }
    }

    private static int Compare(ulong[] a, ulong[] b)
    {
        for (int i = 0; i < a.Length; i++)
            if (a[i] != b[i])
                return a[i].CompareTo(b[i]);
        return 0;
    }

    private static ulong ReadKey(MetadataReader r, ImmutableArray<byte> metadata, int rowStart, Key key)
    {
        int offset = rowStart + key.Before.Sum(c => Size(r, c));
        int size = Size(r, key.Column);
        if (offset < 0 || offset + size > metadata.Length)
            throw new BadImageFormatException($"sort key at metadata offset {offset} is outside the metadata");
        ulong value = 0;
        for (int i = size - 1; i >= 0; i--) // little-endian (II.24.1)
            value = (value << 8) | metadata[offset + i];
        return value;
    }

    // II.24.2.6: a simple index is 2 bytes if the table has fewer than 2^16 rows; a coded index is
    // 2 bytes if every table it can point to has fewer than 2^(16 - tag bits) rows.
    private static int Size(MetadataReader r, Column c) => c switch
    {
        Fixed f => f.Size,
        Index i => r.GetTableRowCount(i.Table) < (1 << 16) ? 2 : 4,
        Code k => CodedTables[k.Kind].Tables.Max(t => r.GetTableRowCount(t)) < (1 << (16 - CodedTables[k.Kind].Bits)) ? 2 : 4,
        _ => throw new InvalidOperationException("unknown column kind"),
    };
}
