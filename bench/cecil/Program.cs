// Program.cs - CecilWeaver's command line: read, weave, write each IN OUT pair, timing each phase.
//
//   dotnet CecilWeaver.dll [--immediate] [--repeat N] IN OUT [IN OUT ...]
//
// Reads like Fody's weaver does (ReadingMode.Deferred, InMemory, symbols read when a .pdb sits
// beside the input); --immediate reads everything up front instead. --repeat N weaves the pairs N
// times in one process (the first round pays the JIT of Cecil's code, later ones are warm). Per pair it prints
//   IN: N sites woven (kinds...), R release calls, W wrappers -> OUT
//   time_ms read=A weave=B write=C total=D
// (stdout); read is ReadModule + ReadSymbols, weave finds and rewrites the sites (with Deferred
// reading it also reads the method bodies), write is Module.Write with the PDB.
using System.Diagnostics;
using System.Globalization;
using CecilWeaver;
using Mono.Cecil;
using Mono.Cecil.Cil;

var mode = ReadingMode.Deferred;
int repeat = 1;
var files = new List<string>();
for (int a = 0; a < args.Length; a++)
{
    if (args[a] == "--immediate")
        mode = ReadingMode.Immediate;
    else if (args[a] == "--repeat" && a + 1 < args.Length && int.TryParse(args[a + 1], out repeat) && repeat > 0)
        a++;
    else
        files.Add(args[a]);
}
if (files.Count == 0 || files.Count % 2 != 0)
{
    Console.Error.WriteLine("usage: CecilWeaver [--immediate] [--repeat N] IN OUT [IN OUT ...]");
    return 2;
}

int status = 0;
for (int r = 0; r < repeat; r++)
for (int i = 0; i < files.Count; i += 2)
{
    try
    {
        WeaveOne(files[i], files[i + 1], mode);
    }
    catch (Exception e)
    {
        Console.Error.WriteLine($"{files[i]}: error: {e.GetType().Name}: {e.Message}");
        status = 1;
    }
}
return status;

static void WeaveOne(string input, string output, ReadingMode mode)
{
    var total = Stopwatch.StartNew();
    var phase = Stopwatch.StartNew();
    using var resolver = Framework.MakeResolver(input);
    var parameters = new ReaderParameters(mode) { AssemblyResolver = resolver, InMemory = true };
    using var module = ModuleDefinition.ReadModule(input, parameters);
    bool symbols = false;
    // A .pdb beside the input, or a PDB embedded in it (a debug directory entry).
    if (File.Exists(Path.ChangeExtension(input, ".pdb"))
        || module.HasDebugHeader && module.GetDebugHeader().Entries.Any(e => e.Directory.Type == ImageDebugType.EmbeddedPortablePdb))
    {
        try
        {
            module.ReadSymbols(); // portable, embedded or Windows PDB; fails on a mismatch
            symbols = true;
        }
        catch (Exception e) when (e is SymbolsNotFoundException or SymbolsNotMatchingException)
        {
            Console.Error.WriteLine($"{input}: warning: symbols not read: {e.Message}");
        }
    }
    string frameworkDir = Framework.AddFrameworkDir(resolver, module);
    double readMs = phase.Elapsed.TotalMilliseconds;

    phase.Restart();
    var result = new Weaver(new Framework(module, resolver, frameworkDir), symbols).Run();
    double weaveMs = phase.Elapsed.TotalMilliseconds;

    phase.Restart();
    Directory.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(output))!);
    module.Write(output, new WriterParameters { WriteSymbols = symbols });
    double writeMs = phase.Elapsed.TotalMilliseconds;
    double totalMs = total.Elapsed.TotalMilliseconds;

    if (result.AlreadyWoven)
        Console.WriteLine($"{input}: already woven (has {Helper.TypeName}), written unchanged -> {output}");
    else
        Console.WriteLine($"{input}: {result.Sites} sites woven ("
            + string.Join(", ", result.ByKind.OrderBy(k => k.Key).Select(k => $"{k.Value} {k.Key}"))
            + $"), {result.Releases} release calls, {result.Wrappers} wrappers"
            + (result.Skipped > 0 ? $", {result.Skipped} skipped" : "") + $" -> {output}");
    Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
        $"time_ms read={readMs:F1} weave={weaveMs:F1} write={writeMs:F1} total={totalMs:F1} (weave: rewrite={result.Rewrite.Elapsed.TotalMilliseconds:F1})"));
}
