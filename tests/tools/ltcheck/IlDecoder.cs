// Decodes a CIL method body (ECMA-335 III.1.2, III.1.7) into a list of instructions with their operands.
using System.Reflection;
using System.Reflection.Emit;
using System.Reflection.Metadata;

namespace LtCheck;

/// <summary>One decoded instruction. Offsets are byte offsets from the start of the IL stream.</summary>
/// <param name="Offset">Byte offset of the opcode.</param>
/// <param name="Length">Opcode plus operand size in bytes.</param>
/// <param name="Token">Metadata token for Inline{Method,Field,Type,Tok,Sig,String}, else 0.</param>
/// <param name="Number">Integer operand (InlineI, InlineI8, ShortInlineI, variable index), else 0.</param>
/// <param name="Real">Floating operand (InlineR, ShortInlineR), else 0.</param>
/// <param name="Targets">Absolute branch target offsets (one for a branch, n for a switch), else empty.</param>
internal sealed record Instruction(int Offset, int Length, OpCode OpCode, int Token, long Number, double Real, int[] Targets);

/// <summary>Thrown for IL that cannot be decoded; the message names the offset.</summary>
internal sealed class IlFormatException(string message) : Exception(message);

internal static class IlDecoder
{
    // The opcode table is the runtime's own list (System.Reflection.Emit.OpCodes), keyed by its
    // encoded value: one byte, or 0xFE followed by a second byte (III.1.2.1). The Nternal entries
    // are the prefix bytes themselves, not instructions.
    private static readonly Dictionary<ushort, OpCode> Table = typeof(OpCodes)
        .GetFields(BindingFlags.Public | BindingFlags.Static)
        .Select(f => (OpCode)f.GetValue(null)!)
        .Where(op => op.OpCodeType != OpCodeType.Nternal)
        .ToDictionary(op => (ushort)op.Value);

    /// <summary>Decodes the whole IL stream; throws IlFormatException on an unknown opcode or a truncated operand.</summary>
    public static List<Instruction> Decode(BlobReader il)
    {
        var list = new List<Instruction>();
        while (il.RemainingBytes > 0)
        {
            int offset = il.Offset;
            try
            {
                list.Add(DecodeOne(ref il, offset));
            }
            catch (BadImageFormatException)
            {
                // BlobReader throws this when an operand runs past the end of the body.
                throw new IlFormatException($"IL_{offset:x4}: operand runs past the end of the body");
            }
        }
        return list;
    }

    private static Instruction DecodeOne(ref BlobReader il, int offset)
    {
        ushort value = il.ReadByte();
        if (value == 0xFE)
            value = (ushort)(0xFE00 | il.ReadByte());
        if (!Table.TryGetValue(value, out OpCode op))
            throw new IlFormatException($"IL_{offset:x4}: unknown opcode 0x{value:x2}");

        int token = 0;
        long number = 0;
        double real = 0;
        int[] targets = [];
        switch (op.OperandType)
        {
            case OperandType.InlineNone:
                break;
            case OperandType.ShortInlineBrTarget:
            {
                int delta = il.ReadSByte();
                targets = [il.Offset + delta];
                break;
            }
            case OperandType.InlineBrTarget:
            {
                int delta = il.ReadInt32();
                targets = [il.Offset + delta];
                break;
            }
            case OperandType.InlineSwitch:
            {
                uint count = il.ReadUInt32();
                if (count > (uint)il.RemainingBytes / 4)
                    throw new IlFormatException($"IL_{offset:x4}: switch with {count} targets runs past the end of the body");
                var deltas = new int[count];
                for (int i = 0; i < deltas.Length; i++)
                    deltas[i] = il.ReadInt32();
                // Switch targets are relative to the end of the whole instruction (III.3.66).
                int next = il.Offset;
                targets = deltas.Select(d => next + d).ToArray();
                break;
            }
            case OperandType.ShortInlineI:
                // ldc.i4.s takes a signed byte; unaligned. and no. take an unsigned one.
                number = op.Value == OpCodes.Ldc_I4_S.Value ? il.ReadSByte() : il.ReadByte();
                break;
            case OperandType.ShortInlineVar:
                number = il.ReadByte();
                break;
            case OperandType.InlineVar:
                number = il.ReadUInt16();
                break;
            case OperandType.InlineI:
                number = il.ReadInt32();
                break;
            case OperandType.InlineI8:
                number = il.ReadInt64();
                break;
            case OperandType.ShortInlineR:
                real = il.ReadSingle();
                break;
            case OperandType.InlineR:
                real = il.ReadDouble();
                break;
            case OperandType.InlineMethod:
            case OperandType.InlineField:
            case OperandType.InlineType:
            case OperandType.InlineTok:
            case OperandType.InlineSig:
            case OperandType.InlineString:
                token = il.ReadInt32();
                break;
            default:
                throw new IlFormatException($"IL_{offset:x4}: {op.Name} has unsupported operand type {op.OperandType}");
        }
        return new Instruction(offset, il.Offset - offset, op, token, number, real, targets);
    }

    /// <summary>True for the operand types whose operand is a metadata token.</summary>
    public static bool HasToken(OpCode op) => op.OperandType is OperandType.InlineMethod or OperandType.InlineField
        or OperandType.InlineType or OperandType.InlineTok or OperandType.InlineSig or OperandType.InlineString;

    /// <summary>Maps each instruction's byte offset to its index in the list.</summary>
    public static Dictionary<int, int> IndexByOffset(List<Instruction> code)
    {
        var map = new Dictionary<int, int>(code.Count);
        for (int i = 0; i < code.Count; i++)
            map[code[i].Offset] = i;
        return map;
    }
}
