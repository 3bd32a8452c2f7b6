// `ltcheck pdb`: checks the portable PDB of a woven assembly against the input's, with System.Reflection.Metadata.
using System.Collections.Immutable;
using System.IO.Compression;
using System.Reflection.Emit;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;
using System.Security.Cryptography;

namespace LtCheck;

/// <summary>
/// Compares the debug symbols of INPUT (as the compiler wrote them) and WOVEN (after weaving), each
/// found the way a debugger finds them: the Embedded Portable PDB entry, else the file the CodeView
/// entry names next to the assembly. It checks that the woven PDB reads completely; that its id
/// equals the CodeView entry's GUID and stamp; that every PdbChecksum entry matches its content
/// (hash with the id zeroed); that MethodDebugInformation has one row per MethodDef; and, per
/// method, with the instructions of both bodies aligned (woven code only adds instructions and
/// redirects calls to the LockTime helper): every sequence point of the woven body is on an
/// instruction boundary, in increasing order, and each input instruction is covered by the same
/// sequence point (document, lines, columns, hidden) as before; each local scope and each hoisted
/// local scope covers the same instructions; async stepping offsets name the same instructions.
/// </summary>
internal static class PdbChecker
{
    private static readonly Guid HoistedScopes = new("6DA9A61E-F8C7-4874-BE62-68BC5630DF71");
    private static readonly Guid AsyncStepping = new("54FD2AC5-E925-401A-9C2A-F94F171072F8");

    /// <summary>What was compared in rewritten methods (bodies that differ), for the summary line.</summary>
    private static readonly SortedDictionary<string, int> Compared = [];

    private static void Count(string what, List<Instruction> ca, List<Instruction> cb)
    {
        if (ca.Count != cb.Count || ca.Zip(cb).Any(p => p.First.Offset != p.Second.Offset))
            Compared[what] = Compared.GetValueOrDefault(what) + 1;
    }

    /// <summary>An assembly with its PDB: bytes, readers, and the PDB's raw bytes.</summary>
    private sealed class Side : IDisposable
    {
        public required PEReader Pe;
        public required MetadataReader Md;
        public required MetadataReaderProvider Provider;
        public required MetadataReader Pdb;
        public required byte[] PdbBytes;
        public required string PdbSource;

        public void Dispose()
        {
            Provider.Dispose();
            Pe.Dispose();
        }

        public static Side Open(string path)
        {
            var pe = new PEReader(File.ReadAllBytes(path).ToImmutableArray());
            byte[] bytes = ReadPdb(path, pe, out string source);
            var provider = MetadataReaderProvider.FromPortablePdbImage(bytes.ToImmutableArray());
            return new Side { Pe = pe, Md = pe.GetMetadataReader(), Provider = provider, Pdb = provider.GetMetadataReader(),
                              PdbBytes = bytes, PdbSource = source };
        }
    }

    /// <summary>Runs every check; prints each problem and a summary; true when there is none.</summary>
    public static bool Run(string input, string woven, TextWriter output)
    {
        using var a = Side.Open(input);
        using var b = Side.Open(woven);
        var errors = new List<string>();
        int methods = 0, points = 0;
        CheckIdentity(b, errors);
        ReadEverything(b.Pdb);
        if (b.Pdb.MethodDebugInformation.Count != b.Md.MethodDefinitions.Count)
            errors.Add($"MethodDebugInformation has {b.Pdb.MethodDebugInformation.Count} rows for {b.Md.MethodDefinitions.Count} MethodDefs");
        foreach (var h in a.Md.MethodDefinitions)
        {
            try
            {
                points += CheckMethod(a, b, h, errors);
                methods++;
            }
            catch (Exception e) when (e is BadImageFormatException or IlFormatException or InvalidOperationException)
            {
                errors.Add($"{Name(a, h)}: {e.GetType().Name}: {e.Message}");
            }
        }
        foreach (string e in errors.Take(40))
            output.WriteLine(e);
        string rewritten = string.Join(", ", Compared.Select(c => $"{c.Value} {c.Key}"));
        output.WriteLine($"pdb {b.PdbSource}: {methods} methods, {points} sequence points compared, {errors.Count} problems");
        output.WriteLine($"rewritten methods: {(rewritten.Length > 0 ? rewritten : "none")}");
        return errors.Count == 0;
    }

    /// <summary>The PDB bytes: inflated from the Embedded Portable PDB entry, else the file beside the assembly.</summary>
    private static byte[] ReadPdb(string path, PEReader pe, out string source)
    {
        var entries = pe.ReadDebugDirectory();
        var embedded = entries.FirstOrDefault(e => e.Type == DebugDirectoryEntryType.EmbeddedPortablePdb);
        if (embedded.DataSize > 0)
        {
            var data = pe.GetEntireImage().GetContent(embedded.DataPointer, embedded.DataSize);
            if (data.Length < 8 || BitConverter.ToUInt32(data.AsSpan(0, 4)) != 0x4244504D)
                throw new BadImageFormatException("embedded PDB entry: no MPDB signature");
            var pdb = new byte[BitConverter.ToInt32(data.AsSpan(4, 4))];
            using var inflate = new DeflateStream(new MemoryStream(data.ToArray(), 8, data.Length - 8), CompressionMode.Decompress);
            inflate.ReadExactly(pdb);
            if (inflate.ReadByte() != -1)
                throw new BadImageFormatException("embedded PDB entry: more data than its uncompressed size");
            source = "embedded";
            return pdb;
        }
        var cv = entries.First(e => e.Type == DebugDirectoryEntryType.CodeView);
        string name = pe.ReadCodeViewDebugDirectoryData(cv).Path.Replace('\\', '/');
        string file = Path.Combine(Path.GetDirectoryName(Path.GetFullPath(path))!, Path.GetFileName(name));
        if (!File.Exists(file))
            file = Path.ChangeExtension(path, ".pdb");
        source = Path.GetFileName(file);
        return File.ReadAllBytes(file);
    }

    /// <summary>PDB id = CodeView GUID + entry stamp; each PdbChecksum = hash of the PDB with the id zeroed.</summary>
    private static void CheckIdentity(Side s, List<string> errors)
    {
        var id = s.Pdb.DebugMetadataHeader!.Id;
        var entries = s.Pe.ReadDebugDirectory();
        var cv = entries.First(e => e.Type == DebugDirectoryEntryType.CodeView);
        byte[] expected = [.. s.Pe.ReadCodeViewDebugDirectoryData(cv).Guid.ToByteArray(), .. BitConverter.GetBytes(cv.Stamp)];
        if (!id.SequenceEqual(expected))
            errors.Add($"PDB id {Convert.ToHexString(id.AsSpan())} differs from the CodeView entry's {Convert.ToHexString(expected)}");
        byte[] zeroed = (byte[])s.PdbBytes.Clone();
        Array.Clear(zeroed, s.Pdb.DebugMetadataHeader.IdStartOffset, 20);
        foreach (var e in entries.Where(e => e.Type == DebugDirectoryEntryType.PdbChecksum))
        {
            var sum = s.Pe.ReadPdbChecksumDebugDirectoryData(e);
            byte[] actual = sum.AlgorithmName switch
            {
                "SHA256" => SHA256.HashData(zeroed),
                "SHA384" => SHA384.HashData(zeroed),
                "SHA512" => SHA512.HashData(zeroed),
                _ => throw new InvalidOperationException($"PdbChecksum algorithm {sum.AlgorithmName}"),
            };
            if (!sum.Checksum.SequenceEqual(actual))
                errors.Add($"PdbChecksum {sum.AlgorithmName} does not match the PDB's content");
        }
    }

    /// <summary>Reads every row of every debug table; SRM throws on anything malformed.</summary>
    private static void ReadEverything(MetadataReader pdb)
    {
        foreach (var d in pdb.Documents)
            _ = pdb.GetString(pdb.GetDocument(d).Name);
        foreach (var m in pdb.MethodDebugInformation)
            foreach (var p in pdb.GetMethodDebugInformation(m).GetSequencePoints())
                _ = p.Offset;
        foreach (var sc in pdb.LocalScopes)
        {
            var scope = pdb.GetLocalScope(sc);
            foreach (var v in scope.GetLocalVariables())
                _ = pdb.GetString(pdb.GetLocalVariable(v).Name);
            foreach (var c in scope.GetLocalConstants())
                _ = pdb.GetBlobBytes(pdb.GetLocalConstant(c).Signature);
        }
        foreach (var c in pdb.CustomDebugInformation)
            _ = pdb.GetBlobBytes(pdb.GetCustomDebugInformation(c).Value);
    }

    private static string Name(Side s, MethodDefinitionHandle h) =>
        Names.TypeDef(s.Md, s.Md.GetMethodDefinition(h).GetDeclaringType()) + "::" + s.Md.GetString(s.Md.GetMethodDefinition(h).Name);

    private static List<Instruction> Code(Side s, MethodDefinitionHandle h, out int length)
    {
        var body = s.Pe.GetMethodBody(s.Md.GetMethodDefinition(h).RelativeVirtualAddress);
        length = body.GetILReader().Length;
        return IlDecoder.Decode(body.GetILReader());
    }

    /// <summary>Checks one method; returns the number of woven sequence points it looked at.</summary>
    private static int CheckMethod(Side a, Side b, MethodDefinitionHandle h, List<string> errors)
    {
        string name = Name(a, h);
        if (a.Md.GetMethodDefinition(h).RelativeVirtualAddress == 0)
            return 0;
        var ca = Code(a, h, out _);
        var cb = Code(b, h, out int lenB);
        var at = IlDecoder.IndexByOffset(cb);
        var pa = a.Pdb.GetMethodDebugInformation(h).GetSequencePoints().ToList();
        var pb = b.Pdb.GetMethodDebugInformation(h).GetSequencePoints().ToList();
        for (int k = 0; k < pb.Count; k++)
        {
            if (!at.ContainsKey(pb[k].Offset))
                errors.Add($"{name}: sequence point at IL_{pb[k].Offset:x4} is not on an instruction");
            if (k > 0 && pb[k].Offset <= pb[k - 1].Offset)
                errors.Add($"{name}: sequence point at IL_{pb[k].Offset:x4} does not follow IL_{pb[k - 1].Offset:x4}");
        }
        Count("methods", ca, cb);
        if (pb.Count > 0)
            Count("with sequence points", ca, cb);
        int[]? match = MatchStatements(a, b, pa, pb, ca, cb, name, errors);
        if (match is null)
            return pb.Count;

        var sa = a.Pdb.GetLocalScopes(h).Select(s => a.Pdb.GetLocalScope(s)).Select(s => (s.StartOffset, s.EndOffset)).ToList();
        var sb = b.Pdb.GetLocalScopes(h).Select(s => b.Pdb.GetLocalScope(s)).Select(s => (s.StartOffset, s.EndOffset)).ToList();
        if (sa.Count != sb.Count)
            errors.Add($"{name}: {sa.Count} local scopes before, {sb.Count} after");
        else if (sb.Count > 0 && (sb[0].StartOffset != 0 || sb[0].EndOffset != lenB))
            errors.Add($"{name}: first local scope {sb[0]} does not span the body (0, {lenB})");
        for (int k = 0; k < Math.Min(sa.Count, sb.Count); k++)
            SameRange($"local scope {k}", name, sa[k], sb[k], ca, cb, lenB, match, at, errors);

        CheckCustom(a, b, h, name, ca, cb, lenB, match, at, errors);
        return pb.Count;
    }

    /// <summary>A run of instructions [First, End) under one sequence point (Label: its place, "hidden", or "none" before the first).</summary>
    private readonly record struct Statement(string Label, int First, int End);

    /// <summary>The statements of a body in order; adjacent hidden ones are one (a hidden point after a hidden point changes nothing).</summary>
    private static List<Statement> Statements(MetadataReader pdb, List<SequencePoint> points, List<Instruction> code)
    {
        var list = new List<Statement>();
        int first = 0;
        string label = "none";
        void Add(int end)
        {
            if (end <= first)
                return;
            if (label == "hidden" && list.Count > 0 && list[^1].Label == "hidden")
                list[^1] = list[^1] with { End = end };
            else
                list.Add(new Statement(label, first, end));
        }
        foreach (var p in points)
        {
            int next = code.FindIndex(first, i => i.Offset >= p.Offset);
            if (next < 0)
                next = code.Count;
            Add(next);
            first = next;
            label = p.IsHidden ? "hidden" : $"{pdb.GetString(pdb.GetDocument(p.Document).Name)}:{p.StartLine}:{p.StartColumn}-{p.EndLine}:{p.EndColumn}";
        }
        Add(code.Count);
        return list;
    }

    /// <summary>
    /// Pairs the statements of both bodies in order - the woven body may have more hidden (or leading
    /// point-less) statements: inserted code - and aligns the instructions of each pair. Every input
    /// instruction must be found in its statement's woven copy (but a tail. prefix, which weaving
    /// drops): it is then under the same sequence point. Returns input index -> woven index (-1: none),
    /// or null after reporting statements that do not pair.
    /// </summary>
    private static int[]? MatchStatements(Side a, Side b, List<SequencePoint> pa, List<SequencePoint> pb, List<Instruction> ca,
                                          List<Instruction> cb, string name, List<string> errors)
    {
        var sa = Statements(a.Pdb, pa, ca);
        var sb = Statements(b.Pdb, pb, cb);
        var match = Enumerable.Repeat(-1, ca.Count).ToArray();
        int j = 0;
        foreach (var st in sa)
        {
            while (j < sb.Count && sb[j].Label != st.Label && sb[j].Label is "hidden" or "none")
                j++;
            if (j == sb.Count || sb[j].Label != st.Label)
            {
                errors.Add($"{name}: the statement at {st.Label} (IL_{ca[st.First].Offset:x4}) has no woven copy under the same sequence point");
                return null;
            }
            int[] m = PdbAlign.Align(a.Md, b.Md, ca.GetRange(st.First, st.End - st.First), cb.GetRange(sb[j].First, sb[j].End - sb[j].First));
            for (int i = 0; i < m.Length; i++)
            {
                if (m[i] >= 0)
                    match[st.First + i] = sb[j].First + m[i];
                else if (ca[st.First + i].OpCode.Value != OpCodes.Tailcall.Value)
                    errors.Add($"{name}: IL_{ca[st.First + i].Offset:x4} ({ca[st.First + i].OpCode.Name}) is no longer under the sequence point {st.Label}");
            }
            j++;
        }
        for (; j < sb.Count; j++)
            if (sb[j].Label != "hidden")
                errors.Add($"{name}: woven statement at {sb[j].Label} (IL_{cb[sb[j].First].Offset:x4}) was not in the input");
        return match;
    }

    /// <summary>A woven range must start and end on instruction boundaries and hold the same input instructions.</summary>
    private static void SameRange(string what, string name, (int Start, int End) ra, (int Start, int End) rb, List<Instruction> ca,
                                  List<Instruction> cb, int lenB, int[] match, Dictionary<int, int> at, List<string> errors)
    {
        Count(what.StartsWith("local", StringComparison.Ordinal) ? "local scopes" : "hoisted local scopes", ca, cb);
        if (!at.ContainsKey(rb.Start) || (rb.End != lenB && !at.ContainsKey(rb.End)) || rb.End <= rb.Start)
        {
            errors.Add($"{name}: {what} [IL_{rb.Start:x4}, IL_{rb.End:x4}) is not on instruction boundaries");
            return;
        }
        for (int i = 0; i < ca.Count; i++)
        {
            if (match[i] < 0)
                continue;
            bool inA = ca[i].Offset >= ra.Start && ca[i].Offset < ra.End;
            bool inB = cb[match[i]].Offset >= rb.Start && cb[match[i]].Offset < rb.End;
            if (inA != inB)
                errors.Add($"{name}: {what} [IL_{ra.Start:x4}, IL_{ra.End:x4}) became [IL_{rb.Start:x4}, IL_{rb.End:x4}) " +
                           $"and {(inA ? "lost" : "gained")} IL_{ca[i].Offset:x4}");
        }
    }

    /// <summary>State machine hoisted local scopes and async stepping offsets of the method.</summary>
    private static void CheckCustom(Side a, Side b, MethodDefinitionHandle h, string name, List<Instruction> ca, List<Instruction> cb,
                                    int lenB, int[] match, Dictionary<int, int> at, List<string> errors)
    {
        foreach (var kind in new[] { HoistedScopes, AsyncStepping })
        {
            byte[]? va = Blob(a.Pdb, h, kind), vb = Blob(b.Pdb, h, kind);
            if (va is null || vb is null)
            {
                if ((va is null) != (vb is null))
                    errors.Add($"{name}: custom debug information {kind} {(va is null ? "appeared" : "vanished")}");
                continue;
            }
            if (kind == HoistedScopes)
            {
                if (va.Length != vb.Length)
                {
                    errors.Add($"{name}: hoisted local scopes: {va.Length} bytes before, {vb.Length} after");
                    continue;
                }
                for (int k = 0; k + 8 <= va.Length; k += 8)
                {
                    int s0 = BitConverter.ToInt32(va, k), l0 = BitConverter.ToInt32(va, k + 4);
                    int s1 = BitConverter.ToInt32(vb, k), l1 = BitConverter.ToInt32(vb, k + 4);
                    if (l0 == 0 || l1 == 0)
                    {
                        if (s0 != s1 || l0 != l1)
                            errors.Add($"{name}: hoisted local scope {k / 8}: ({s0}, {l0}) became ({s1}, {l1})");
                        continue;
                    }
                    SameRange($"hoisted local scope {k / 8}", name, (s0, s0 + l0), (s1, s1 + l1), ca, cb, lenB, match, at, errors);
                }
                continue;
            }
            CheckAsync(va, vb, name, ca, cb, match, errors);
        }
    }

    private static byte[]? Blob(MetadataReader pdb, MethodDefinitionHandle h, Guid kind)
    {
        foreach (var c in pdb.GetCustomDebugInformation(h))
        {
            var cdi = pdb.GetCustomDebugInformation(c);
            if (pdb.GetGuid(cdi.Kind) == kind)
                return pdb.GetBlobBytes(cdi.Value);
        }
        return null;
    }

    /// <summary>Async stepping: catch handler offset + 1, then (yield, resume, method) records; offsets must name the same instructions.</summary>
    private static void CheckAsync(byte[] va, byte[] vb, string name, List<Instruction> ca, List<Instruction> cb, int[] match, List<string> errors)
    {
        var ia = AsyncOffsets(va);
        var ib = AsyncOffsets(vb);
        if (ia.Count != ib.Count)
        {
            errors.Add($"{name}: async stepping information: {ia.Count} offsets before, {ib.Count} after");
            return;
        }
        var indexA = IlDecoder.IndexByOffset(ca);
        Count("async stepping blobs", ca, cb);
        for (int k = 0; k < ia.Count; k++)
        {
            if (ia[k] < 0 && ib[k] < 0)
                continue;
            int expected = ia[k] >= 0 && indexA.TryGetValue(ia[k], out int i) && match[i] >= 0 ? cb[match[i]].Offset : -2;
            if (ib[k] != expected)
                errors.Add($"{name}: async stepping offset {k}: IL_{ia[k]:x4} became IL_{ib[k]:x4}, expected IL_{expected:x4}");
        }
    }

    /// <summary>The offsets of an async stepping blob in order (catch handler first, -1 for none).</summary>
    private static List<int> AsyncOffsets(byte[] v)
    {
        var r = new List<int> { BitConverter.ToInt32(v, 0) - 1 };
        int pos = 4;
        while (pos + 8 <= v.Length)
        {
            r.Add(BitConverter.ToInt32(v, pos));
            r.Add(BitConverter.ToInt32(v, pos + 4));
            pos += 8;
            pos += (v[pos] & 0x80) == 0 ? 1 : (v[pos] & 0xC0) == 0x80 ? 2 : 4; // compressed MethodDef row
        }
        return r;
    }
}
