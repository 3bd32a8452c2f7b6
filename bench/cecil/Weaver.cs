// Weaver.cs - finds the lock sites of a module and rewrites them: each lock call becomes
// `ldstr method; ldstr location; call <LockTime>::wrapper` (releases: just the call), and a
// [MethodImpl(Synchronized)] body is wrapped in Synchronized_Enter / try / finally Synchronized_Exit.
using Mono.Cecil;
using Mono.Cecil.Cil;
using Mono.Cecil.Rocks;

namespace CecilWeaver;

sealed class WeaveResult
{
    public int Sites;          // acquiring calls + synchronized methods (what `locktime list` counts)
    public int Releases;       // Monitor.Exit, Lock.Exit, Lock.Scope.Dispose calls redirected
    public int Synchronized;   // of Sites
    public int Skipped;        // synchronized methods left alone (jmp)
    public int Wrappers;
    public bool AlreadyWoven;
    public readonly System.Diagnostics.Stopwatch Rewrite = new(); // the rewriting part of the weave phase
    public readonly Dictionary<string, int> ByKind = new();
}

sealed class Weaver
{
    readonly Framework _fw;
    readonly bool _symbols;
    Helper? _helper;

    public Weaver(Framework fw, bool symbols)
    {
        _fw = fw;
        _symbols = symbols;
    }

    public WeaveResult Run()
    {
        var result = new WeaveResult();
        var module = _fw.Module;
        if (module.GetType("", Helper.TypeName) != null)
        {
            result.AlreadyWoven = true;
            return result;
        }
        foreach (var type in module.GetTypes().ToList())
        {
            if (LockApis.IsLockType(type))
                continue;
            foreach (var method in type.Methods)
            {
                if (method.HasBody)
                    WeaveMethod(method, result);
            }
        }
        result.Wrappers = _helper?.WrapperCount ?? 0;
        return result;
    }

    Helper Helper => _helper ??= new Helper(_fw);

    void WeaveMethod(MethodDefinition method, WeaveResult result)
    {
        bool sync = method.IsSynchronized && (method.IsStatic || !method.DeclaringType.IsValueType);
        var body = method.Body;
        List<(Instruction Call, LockApi Api)>? calls = null;
        foreach (var ins in body.Instructions)
        {
            if ((ins.OpCode.Code == Code.Call || ins.OpCode.Code == Code.Callvirt)
                && ins.Operand is MethodReference callee && LockApis.Match(callee) is { } api)
                (calls ??= new()).Add((ins, api));
        }
        if (calls == null && !sync)
            return;
        if (sync && body.Instructions.Any(i => i.OpCode.Code == Code.Jmp))
        {
            Console.Error.WriteLine($"warning: {method.FullName}: synchronized method with jmp left alone");
            result.Skipped++;
            sync = false;
            if (calls == null)
                return;
        }

        result.Rewrite.Start();
        try
        {
            Rewrite(method, calls, sync, result);
        }
        finally
        {
            result.Rewrite.Stop();
        }
    }

    void Rewrite(MethodDefinition method, List<(Instruction Call, LockApi Api)>? calls, bool sync, WeaveResult result)
    {
        var body = method.Body;
        string name = method.DeclaringType.FullName.Replace('/', '+') + "::" + method.Name;
        var lines = new Lines(method, _symbols);
        // Locations come from the offsets as read, so find them all before the body changes.
        var locations = calls?.Select(c => lines.At(c.Call.Offset)).ToList();
        string syncLocation = sync ? lines.First() : "";

        body.SimplifyMacros(); // long branches: inserted code must not overflow a short one
        var il = body.GetILProcessor();
        for (int i = 0; calls != null && i < calls.Count; i++)
        {
            var (call, api) = calls[i];
            var wrapper = Helper.WrapperFor((MethodReference)call.Operand, call.OpCode, api);
            if (call.Previous is { OpCode.Code: Code.Tail } tail)
            {
                tail.OpCode = OpCodes.Nop; // a tail call through a wrapper would be invalid
                tail.Operand = null;
            }
            if (api.Role == Role.Release)
            {
                call.OpCode = OpCodes.Call;
                call.Operand = wrapper;
                result.Releases++;
                continue;
            }
            // The call instruction itself becomes the first ldstr: branches, handler bounds and the
            // sequence point that pointed at the call now point at the inserted sequence.
            call.OpCode = OpCodes.Ldstr;
            call.Operand = name;
            var location = il.Create(OpCodes.Ldstr, locations![i]);
            il.InsertAfter(call, location);
            il.InsertAfter(location, il.Create(OpCodes.Call, wrapper));
            result.Sites++;
            result.ByKind[api.Kind] = result.ByKind.GetValueOrDefault(api.Kind) + 1;
        }
        if (sync)
        {
            WrapSynchronized(method, name, syncLocation);
            result.Sites++;
            result.Synchronized++;
            result.ByKind["Synchronized"] = result.ByKind.GetValueOrDefault("Synchronized") + 1;
        }
        body.OptimizeMacros();
    }

    // obj = this | typeof(T); Synchronized_Enter(obj, name, location);
    // .try { body, each `ret` now `stloc result; leave RET` } finally { Synchronized_Exit(obj); }
    // RET: [ldloc result;] ret
    void WrapSynchronized(MethodDefinition method, string name, string location)
    {
        var body = method.Body;
        var il = body.GetILProcessor();
        var ts = _fw.TypeSystem;
        var obj = new VariableDefinition(ts.Object);
        body.Variables.Add(obj);
        VariableDefinition? result = null;
        if (method.ReturnType.FullName != "System.Void")
        {
            result = new VariableDefinition(method.ReturnType);
            body.Variables.Add(result);
        }
        var retLabel = result != null ? il.Create(OpCodes.Ldloc, result) : il.Create(OpCodes.Ret);
        foreach (var ins in body.Instructions.ToList())
        {
            if (ins.OpCode.Code == Code.Tail)
            {
                ins.OpCode = OpCodes.Nop; // a tail call cannot leave a try block
                ins.Operand = null;
            }
            else if (ins.OpCode.Code == Code.Ret)
            {
                if (result != null)
                {
                    ins.OpCode = OpCodes.Stloc;
                    ins.Operand = result;
                    il.InsertAfter(ins, il.Create(OpCodes.Leave, retLabel));
                }
                else
                {
                    ins.OpCode = OpCodes.Leave;
                    ins.Operand = retLabel;
                }
            }
        }

        var first = body.Instructions[0];
        var prologue = new List<Instruction>();
        if (method.IsStatic)
        {
            TypeReference self = method.DeclaringType;
            if (method.DeclaringType.HasGenericParameters)
            {
                var inst = new GenericInstanceType(method.DeclaringType);
                foreach (var gp in method.DeclaringType.GenericParameters)
                    inst.GenericArguments.Add(gp);
                self = inst;
            }
            var runtimeTypeHandle = _fw.Type("System", "RuntimeTypeHandle", true);
            var type = _fw.Type("System", "Type");
            prologue.Add(il.Create(OpCodes.Ldtoken, self));
            prologue.Add(il.Create(OpCodes.Call, _fw.Method(type, "GetTypeFromHandle", type, false, runtimeTypeHandle)));
        }
        else
        {
            prologue.Add(il.Create(OpCodes.Ldarg, method.Body.ThisParameter));
        }
        prologue.Add(il.Create(OpCodes.Stloc, obj));
        prologue.Add(il.Create(OpCodes.Ldloc, obj));
        prologue.Add(il.Create(OpCodes.Ldstr, name));
        prologue.Add(il.Create(OpCodes.Ldstr, location));
        prologue.Add(il.Create(OpCodes.Call, Helper.SyncEnter));
        foreach (var ins in prologue)
            il.InsertBefore(first, ins);
        // The method's outermost local scope must still span the whole body (prologue included).
        var scope = method.DebugInformation.Scope;
        if (scope != null && !scope.Start.IsEndOfMethod && scope.Start.Offset == first.Offset)
            scope.Start = new InstructionOffset(prologue[0]);

        var finallyStart = il.Create(OpCodes.Ldloc, obj);
        il.Append(finallyStart);
        il.Append(il.Create(OpCodes.Call, Helper.SyncExit));
        il.Append(il.Create(OpCodes.Endfinally));
        il.Append(retLabel);
        if (result != null)
            il.Append(il.Create(OpCodes.Ret));

        // Handlers that ran to the end of the body now end where the finally starts.
        foreach (var h in body.ExceptionHandlers)
        {
            if (h.HandlerEnd == null)
                h.HandlerEnd = finallyStart;
        }
        body.ExceptionHandlers.Add(new ExceptionHandler(ExceptionHandlerType.Finally)
        {
            TryStart = first, TryEnd = finallyStart, HandlerStart = finallyStart, HandlerEnd = retLabel,
        });
    }
}

/// Source locations of a method's IL offsets: "File.cs:42" from the last visible sequence point at
/// or before the offset; without symbols (or a point) "IL_xxxx", as locktime reports it.
sealed class Lines
{
    readonly List<SequencePoint>? _points;

    public Lines(MethodDefinition method, bool symbols)
    {
        if (symbols && method.DebugInformation.HasSequencePoints)
            _points = method.DebugInformation.SequencePoints.Where(p => !p.IsHidden).OrderBy(p => p.Offset).ToList();
    }

    public string At(int offset)
    {
        SequencePoint? best = null;
        if (_points != null)
        {
            foreach (var p in _points)
            {
                if (p.Offset > offset)
                    break;
                best = p;
            }
        }
        return best == null ? $"IL_{offset:x4}" : Path.GetFileName(best.Document.Url) + ":" + best.StartLine;
    }

    public string First() => _points is { Count: > 0 } ? At(_points[0].Offset) : "IL_0000";
}
