// Entry point of ltcheck: dispatches the verify, jit, dump, contents, locks and pdb commands; exit 0 on success, 1 otherwise.
namespace LtCheck;

internal static class Program
{
    private const string Usage = """
        usage: ltcheck verify FILE...       read every row, heap entry, IL body and signature; check sorted tables
               ltcheck jit FILE [DIR...]    JIT-compile every method body (dependencies from FILE's folder and DIRs)
               ltcheck dump FILE            normalized listing of types, fields, locals and IL, for diffing
               ltcheck contents FILE        every table row, heap entry, body, resource and debug entry,
                                            free of RVAs and file offsets, for comparing two layouts
               ltcheck locks FILE           lock acquisition call sites and Synchronized methods, with a total
               ltcheck pdb INPUT WOVEN      the woven assembly's portable PDB against the input's (lines, scopes, ids)
        """;

    private static int Main(string[] args)
    {
        if (args.Length < 2)
            return Fail(Usage);
        string[] rest = args[1..];
        try
        {
            switch (args[0])
            {
                case "verify":
                    // Verify every file even after a failure, so one run reports them all.
                    return rest.Select(f => Verifier.Run(f, Console.Out)).ToList().All(ok => ok) ? 0 : 1;
                case "jit":
                    return JitChecker.Run(rest[0], rest[1..], Console.Out) ? 0 : 1;
                case "dump" when rest.Length == 1:
                    Dumper.Run(rest[0], Console.Out);
                    return 0;
                case "contents" when rest.Length == 1:
                    Contents.Run(rest[0], Console.Out);
                    return 0;
                case "locks" when rest.Length == 1:
                    LockCounter.Run(rest[0], Console.Out);
                    return 0;
                case "pdb" when rest.Length == 2:
                    return PdbChecker.Run(rest[0], rest[1], Console.Out) ? 0 : 1;
                default:
                    return Fail(Usage);
            }
        }
        catch (Exception e) when (e is BadImageFormatException or IlFormatException or IOException or InvalidOperationException)
        {
            // dump and locks need a readable image; verify reports problems itself.
            return Fail($"ltcheck {args[0]} {string.Join(" ", rest)}: {e.GetType().Name}: {e.Message}");
        }
    }

    private static int Fail(string message)
    {
        Console.Error.WriteLine(message);
        return 1;
    }
}
