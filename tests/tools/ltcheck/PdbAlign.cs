// Aligns the instructions of an input method body with those of its woven body (for `ltcheck pdb`).
using System.Reflection.Emit;
using System.Reflection.Metadata;

namespace LtCheck;

/// <summary>
/// A longest common subsequence of the two instruction lists, where instructions are equal when
/// their opcodes are (short and long branch forms, call and callvirt, count as one) and so are their
/// operands, except branch targets (offsets move), a call the weaver redirected to the LockTime
/// helper, which stands for any call, and a ret, which stands for a leave (a synchronized method's
/// returns leave to its epilogue). Woven code is the input plus inserted instructions and
/// redirected calls, so every input instruction the weaver kept finds its copy.
/// </summary>
internal static class PdbAlign
{
    private const string HelperType = "<LockTime>";
    private const long MaxCells = 40_000_000;

    /// <summary>For each input instruction, the index of its woven copy, or -1.</summary>
    public static int[] Align(MetadataReader ra, MetadataReader rb, List<Instruction> ca, List<Instruction> cb)
    {
        string[] ka = ca.Select(i => Key(ra, new SignatureText(ra), i)).ToArray();
        string?[] kb = cb.Select(i => IsHelperCall(rb, i) ? null : Key(rb, new SignatureText(rb), i)).ToArray();
        bool Eq(int i, int j) => kb[j] is null ? ka[i].StartsWith("call ", StringComparison.Ordinal) : ka[i] == kb[j];

        var match = Enumerable.Repeat(-1, ca.Count).ToArray();
        int pre = 0, suf = 0;
        for (; pre < ca.Count && pre < cb.Count && Eq(pre, pre); pre++)
            match[pre] = pre;
        for (; suf < ca.Count - pre && suf < cb.Count - pre && Eq(ca.Count - 1 - suf, cb.Count - 1 - suf); suf++)
            match[ca.Count - 1 - suf] = cb.Count - 1 - suf;
        int n = ca.Count - pre - suf, m = cb.Count - pre - suf;
        if ((long)(n + 1) * (m + 1) > MaxCells)
            throw new InvalidOperationException($"bodies of {ca.Count} and {cb.Count} instructions are too far apart to align");
        // lcs[i, j]: length of a longest common subsequence of the middles from i and j on.
        var lcs = new int[n + 1, m + 1];
        for (int i = n - 1; i >= 0; i--)
            for (int j = m - 1; j >= 0; j--)
                lcs[i, j] = Eq(pre + i, pre + j) ? lcs[i + 1, j + 1] + 1 : Math.Max(lcs[i + 1, j], lcs[i, j + 1]);
        for (int i = 0, j = 0; i < n && j < m;)
        {
            if (Eq(pre + i, pre + j) && lcs[i, j] == lcs[i + 1, j + 1] + 1)
                match[pre + i++] = pre + j++;
            else if (lcs[i + 1, j] >= lcs[i, j + 1])
                i++;
            else
                j++;
        }
        return match;
    }

    private static bool IsHelperCall(MetadataReader r, Instruction i) =>
        i.OpCode.OperandType == OperandType.InlineMethod &&
        Names.MethodOwner(r, new SignatureText(r), System.Reflection.Metadata.Ecma335.MetadataTokens.EntityHandle(i.Token)).Type == HelperType;

    /// <summary>Opcode (normalized) and operand as text.</summary>
    private static string Key(MetadataReader r, SignatureText text, Instruction i)
    {
        // A ret the weaver turned into a leave to its epilogue (synchronized methods) stays itself.
        string op = i.OpCode.Value == OpCodes.Callvirt.Value ? "call"
            : i.OpCode.Value == OpCodes.Ret.Value ? "leave"
            : i.OpCode.OperandType == OperandType.ShortInlineBrTarget ? i.OpCode.Name![..^2] : i.OpCode.Name!;
        string operand = i.OpCode.OperandType switch
        {
            _ when op == "leave" => "",
            OperandType.ShortInlineBrTarget or OperandType.InlineBrTarget => "",
            OperandType.InlineSwitch => i.Targets.Length.ToString(),
            _ when IlDecoder.HasToken(i.OpCode) => Names.Token(r, text, i.Token),
            OperandType.ShortInlineR or OperandType.InlineR => i.Real.ToString("R"),
            _ => i.Number.ToString(),
        };
        return op + " " + operand;
    }
}
