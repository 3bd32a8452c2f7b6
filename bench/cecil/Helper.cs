// Helper.cs - the injected `<LockTime>` type: clock, threshold, per-thread acquire record, the
// report writer, and one wrapper per distinct lock API the assembly calls.
//
// Simpler than locktime's helper on purpose (one acquire record per thread, no nesting stack, no
// LOCKTIME_DISABLED / LOCKTIME_OUTPUT), but every method is real IL that runs:
//   wrapper(args, method, location):  t0 = Now(); r = original(args); Acquired(t0, Now(), method, location); return r;
//   wrapper(args):                    original(args); Released(Now());
//   Acquired: record t1 and the site per thread; report "waited" when t1 - t0 >= Threshold
//   Released: report "held" when now - acquire time >= Threshold
using Mono.Cecil;
using Mono.Cecil.Cil;
using Mono.Cecil.Rocks;

namespace CecilWeaver;

sealed class Helper
{
    public const string TypeName = "<LockTime>";

    readonly Framework _fw;
    readonly TypeSystem _ts;
    readonly Dictionary<string, MethodDefinition> _wrappers = new();
    readonly FieldDefinition _threshold, _frequency, _ready, _reporting, _acquiredAt, _siteMethod, _siteLocation;
    readonly MethodReference _now, _threadStaticCtor;
    readonly MethodDefinition _report, _acquired, _released;
    MethodDefinition? _syncEnter, _syncExit;

    public TypeDefinition Type { get; }

    public Helper(Framework fw)
    {
        _fw = fw;
        _ts = fw.TypeSystem;
        var module = fw.Module;
        Type = new TypeDefinition("", TypeName,
            TypeAttributes.NotPublic | TypeAttributes.Abstract | TypeAttributes.Sealed
            | TypeAttributes.BeforeFieldInit | TypeAttributes.Class, _ts.Object);
        module.Types.Add(Type);

        _threadStaticCtor = fw.Method(fw.Type("System", "ThreadStaticAttribute"), ".ctor", _ts.Void, true);
        _threshold = AddField("Threshold", _ts.Int64, false);
        _frequency = AddField("Frequency", _ts.Int64, false);
        _ready = AddField("Ready", _ts.Boolean, false);
        _reporting = AddField("Reporting", _ts.Boolean, true);
        _acquiredAt = AddField("AcquiredAt", _ts.Int64, true);
        _siteMethod = AddField("SiteMethod", _ts.String, true);
        _siteLocation = AddField("SiteLocation", _ts.String, true);

        // The clock: Stopwatch when the framework has it where the target can see it (Mono keeps it in
        // System.dll, which mscorlib cannot reference), else the wall clock in 100 ns ticks.
        var stopwatch = fw.IsCoreLibrary ? fw.Module.GetType("System.Diagnostics", "Stopwatch")
            : fw.FindType("System.Diagnostics", "Stopwatch", false);
        _now = stopwatch != null
            ? fw.Method(stopwatch, "GetTimestamp", _ts.Int64, false)
            : AddWallClock();
        AddStaticConstructor(stopwatch);
        _report = AddReport();
        _acquired = AddAcquired();
        _released = AddReleased();
    }

    FieldDefinition AddField(string name, TypeReference type, bool threadStatic)
    {
        var f = new FieldDefinition(name, FieldAttributes.Assembly | FieldAttributes.Static, type);
        if (threadStatic)
            f.CustomAttributes.Add(new CustomAttribute(_threadStaticCtor));
        Type.Fields.Add(f);
        return f;
    }

    MethodDefinition AddMethod(string name, TypeReference returnType, params (string, TypeReference)[] parameters)
    {
        var m = new MethodDefinition(name, MethodAttributes.Assembly | MethodAttributes.Static | MethodAttributes.HideBySig,
            returnType);
        foreach (var (pname, ptype) in parameters)
            m.Parameters.Add(new ParameterDefinition(pname, ParameterAttributes.None, ptype));
        Type.Methods.Add(m);
        return m;
    }

    // Now(): DateTime.GetSystemTimeAsFileTime() when the core library has it (Mono's, internal),
    // else DateTime.UtcNow.Ticks.
    MethodReference AddWallClock()
    {
        var dateTime = _fw.Type("System", "DateTime", true);
        var m = AddMethod("Now", _ts.Int64);
        var il = m.Body.GetILProcessor();
        var fileTime = (dateTime as TypeDefinition)?.Methods.FirstOrDefault(x =>
            x.Name == "GetSystemTimeAsFileTime" && x.IsStatic && !x.HasParameters && x.ReturnType.FullName == "System.Int64");
        if (fileTime != null)
        {
            il.Emit(OpCodes.Call, fileTime);
        }
        else
        {
            var now = new VariableDefinition(dateTime);
            m.Body.Variables.Add(now);
            il.Emit(OpCodes.Call, _fw.Method(dateTime, "get_UtcNow", dateTime, false));
            il.Emit(OpCodes.Stloc, now);
            il.Emit(OpCodes.Ldloca, now);
            il.Emit(OpCodes.Call, _fw.Method(dateTime, "get_Ticks", _ts.Int64, true));
        }
        il.Emit(OpCodes.Ret);
        return m;
    }

    // .cctor: Frequency; Threshold = 1 ms, or LOCKTIME_THRESHOLD_MS; Ready = true.
    void AddStaticConstructor(TypeReference? stopwatch)
    {
        var m = new MethodDefinition(".cctor", MethodAttributes.Private | MethodAttributes.Static
            | MethodAttributes.HideBySig | MethodAttributes.SpecialName | MethodAttributes.RTSpecialName, _ts.Void);
        Type.Methods.Add(m);
        var s = new VariableDefinition(_ts.String);
        m.Body.Variables.Add(s);
        var il = m.Body.GetILProcessor();
        if (stopwatch != null)
            il.Emit(OpCodes.Ldsfld, _fw.Field(stopwatch, "Frequency", _ts.Int64));
        else
            il.Emit(OpCodes.Ldc_I8, 10_000_000L);
        il.Emit(OpCodes.Stsfld, _frequency);
        il.Emit(OpCodes.Ldsfld, _frequency);
        il.Emit(OpCodes.Ldc_I8, 1000L);
        il.Emit(OpCodes.Div);
        il.Emit(OpCodes.Stsfld, _threshold);
        il.Emit(OpCodes.Ldstr, "LOCKTIME_THRESHOLD_MS");
        il.Emit(OpCodes.Call, _fw.Method(_fw.Type("System", "Environment"), "GetEnvironmentVariable",
            _ts.String, false, _ts.String));
        il.Emit(OpCodes.Stloc, s);
        var done = il.Create(OpCodes.Ldc_I4_1);
        il.Emit(OpCodes.Ldloc, s);
        il.Emit(OpCodes.Brfalse, done);
        il.Emit(OpCodes.Ldloc, s);
        il.Emit(OpCodes.Call, _fw.Method(_ts.Double, "Parse", _ts.Double, false, _ts.String));
        il.Emit(OpCodes.Ldsfld, _frequency);
        il.Emit(OpCodes.Conv_R8);
        il.Emit(OpCodes.Mul);
        il.Emit(OpCodes.Ldc_R8, 1000.0);
        il.Emit(OpCodes.Div);
        il.Emit(OpCodes.Conv_I8);
        il.Emit(OpCodes.Stsfld, _threshold);
        il.Append(done);
        il.Emit(OpCodes.Stsfld, _ready);
        il.Emit(OpCodes.Ret);
        m.Body.OptimizeMacros();
    }

    // Report(method, location, what, ticks): one line on Console.Error, unless the .cctor has not
    // finished or a report is being written on this thread (the writer's own locks are woven too
    // when the target is the framework).
    MethodDefinition AddReport()
    {
        var m = AddMethod("Report", _ts.Void, ("method", _ts.String), ("location", _ts.String),
            ("what", _ts.String), ("ticks", _ts.Int64));
        var il = m.Body.GetILProcessor();
        var textWriter = _fw.Type("System.IO", "TextWriter");
        var end = il.Create(OpCodes.Ret);
        il.Emit(OpCodes.Ldsfld, _ready);
        il.Emit(OpCodes.Brfalse, end);
        il.Emit(OpCodes.Ldsfld, _reporting);
        il.Emit(OpCodes.Brtrue, end);
        il.Emit(OpCodes.Ldc_I4_1);
        il.Emit(OpCodes.Stsfld, _reporting);
        // Console.Error is null while Console's own .cctor runs (it takes locks: woven framework).
        var writer = new VariableDefinition(textWriter);
        m.Body.Variables.Add(writer);
        var leave = il.Create(OpCodes.Leave, end);
        var tryStart = il.Create(OpCodes.Call, _fw.Method(_fw.Type("System", "Console"), "get_Error", textWriter, false));
        il.Append(tryStart);
        il.Emit(OpCodes.Stloc, writer);
        il.Emit(OpCodes.Ldloc, writer);
        il.Emit(OpCodes.Brfalse, leave);
        il.Emit(OpCodes.Ldloc, writer);
        il.Emit(OpCodes.Ldstr, "LockTime(cecil): {0} {1:F3} ms at {2}");
        il.Emit(OpCodes.Ldarg_0);
        il.Emit(OpCodes.Ldstr, " ");
        il.Emit(OpCodes.Ldarg_2);
        il.Emit(OpCodes.Call, _fw.Method(_ts.String, "Concat", _ts.String, false, _ts.String, _ts.String, _ts.String));
        il.Emit(OpCodes.Ldarg_3);
        il.Emit(OpCodes.Conv_R8);
        il.Emit(OpCodes.Ldc_R8, 1000.0);
        il.Emit(OpCodes.Mul);
        il.Emit(OpCodes.Ldsfld, _frequency);
        il.Emit(OpCodes.Conv_R8);
        il.Emit(OpCodes.Div);
        il.Emit(OpCodes.Box, _ts.Double);
        il.Emit(OpCodes.Ldarg_1);
        il.Emit(OpCodes.Callvirt, _fw.Method(textWriter, "WriteLine", _ts.Void, true,
            _ts.String, _ts.Object, _ts.Object, _ts.Object));
        il.Append(leave);
        var handlerStart = il.Create(OpCodes.Ldc_I4_0);
        il.Append(handlerStart);
        il.Emit(OpCodes.Stsfld, _reporting);
        il.Emit(OpCodes.Endfinally);
        il.Append(end);
        m.Body.ExceptionHandlers.Add(new ExceptionHandler(ExceptionHandlerType.Finally)
        {
            TryStart = tryStart, TryEnd = handlerStart, HandlerStart = handlerStart, HandlerEnd = end,
        });
        m.Body.OptimizeMacros();
        return m;
    }

    // Acquired(t0, t1, method, location): record the acquisition; report a long wait.
    MethodDefinition AddAcquired()
    {
        var m = AddMethod("Acquired", _ts.Void, ("t0", _ts.Int64), ("t1", _ts.Int64),
            ("method", _ts.String), ("location", _ts.String));
        var il = m.Body.GetILProcessor();
        il.Emit(OpCodes.Ldarg_1);
        il.Emit(OpCodes.Stsfld, _acquiredAt);
        il.Emit(OpCodes.Ldarg_2);
        il.Emit(OpCodes.Stsfld, _siteMethod);
        il.Emit(OpCodes.Ldarg_3);
        il.Emit(OpCodes.Stsfld, _siteLocation);
        il.Emit(OpCodes.Ldarg_1);
        il.Emit(OpCodes.Ldarg_0);
        il.Emit(OpCodes.Sub);
        EmitReportIfOver(m, il, "waited", OpCodes.Ldarg_2, OpCodes.Ldarg_3);
        return m;
    }

    // Released(now): report a long hold of this thread's last acquisition.
    MethodDefinition AddReleased()
    {
        var m = AddMethod("Released", _ts.Void, ("now", _ts.Int64));
        var il = m.Body.GetILProcessor();
        il.Emit(OpCodes.Ldarg_0);
        il.Emit(OpCodes.Ldsfld, _acquiredAt);
        il.Emit(OpCodes.Sub);
        EmitReportIfOver(m, il, "held", _siteMethod, _siteLocation);
        return m;
    }

    // The end of Acquired and Released: elapsed = the long on the stack; if it reaches the
    // threshold, Report(method, location, what, elapsed), the site pushed by the two loads given
    // (arguments, or the fields of the acquisition).
    void EmitReportIfOver(MethodDefinition m, ILProcessor il, string what, object siteMethod, object siteLocation)
    {
        var elapsed = new VariableDefinition(_ts.Int64);
        m.Body.Variables.Add(elapsed);
        var end = il.Create(OpCodes.Ret);
        il.Emit(OpCodes.Stloc, elapsed);
        il.Emit(OpCodes.Ldloc, elapsed);
        il.Emit(OpCodes.Ldsfld, _threshold);
        il.Emit(OpCodes.Blt, end);
        foreach (var load in new[] { siteMethod, siteLocation })
        {
            if (load is FieldDefinition field)
                il.Emit(OpCodes.Ldsfld, field);
            else
                il.Emit((OpCode)load);
        }
        il.Emit(OpCodes.Ldstr, what);
        il.Emit(OpCodes.Ldloc, elapsed);
        il.Emit(OpCodes.Call, _report);
        il.Append(end);
        m.Body.OptimizeMacros();
    }

    /// The wrapper for calls to `callee` with `opcode` (call or callvirt): made on first use.
    public MethodDefinition WrapperFor(MethodReference callee, OpCode opcode, LockApi api)
    {
        string key = opcode.Code + " " + callee.DeclaringType.Scope.Name + " " + callee.FullName;
        if (_wrappers.TryGetValue(key, out var existing))
            return existing;
        string name = callee.DeclaringType.Name + "_" + callee.Name + "_" + _wrappers.Count;
        var m = AddMethod(name, callee.ReturnType);
        int count = 0;
        if (callee.HasThis)
        {
            var self = LockApis.ThisIsValueType(api) ? (TypeReference)new ByReferenceType(callee.DeclaringType)
                : callee.DeclaringType;
            m.Parameters.Add(new ParameterDefinition("self", ParameterAttributes.None, self));
            count++;
        }
        foreach (var p in callee.Parameters)
        {
            m.Parameters.Add(new ParameterDefinition(p.Name ?? "", ParameterAttributes.None, p.ParameterType));
            count++;
        }
        var il = m.Body.GetILProcessor();
        if (api.Role == Role.Acquire)
        {
            m.Parameters.Add(new ParameterDefinition("method", ParameterAttributes.None, _ts.String));
            m.Parameters.Add(new ParameterDefinition("location", ParameterAttributes.None, _ts.String));
            var t0 = new VariableDefinition(_ts.Int64);
            m.Body.Variables.Add(t0);
            VariableDefinition? result = null;
            if (callee.ReturnType.FullName != "System.Void")
            {
                result = new VariableDefinition(callee.ReturnType);
                m.Body.Variables.Add(result);
            }
            il.Emit(OpCodes.Call, _now);
            il.Emit(OpCodes.Stloc, t0);
            for (int i = 0; i < count; i++)
                il.Emit(OpCodes.Ldarg, m.Parameters[i]);
            il.Emit(opcode, callee);
            if (result != null)
                il.Emit(OpCodes.Stloc, result);
            // Only a taken lock is recorded: TryEnter's result, or the `ref bool taken` argument.
            var skip = result != null ? il.Create(OpCodes.Ldloc, result) : il.Create(OpCodes.Ret);
            int taken = callee.Parameters.ToList().FindIndex(p => p.ParameterType.FullName == "System.Boolean&");
            if (callee.ReturnType.FullName == "System.Boolean")
            {
                il.Emit(OpCodes.Ldloc, result!);
                il.Emit(OpCodes.Brfalse, skip);
            }
            else if (taken >= 0)
            {
                il.Emit(OpCodes.Ldarg, m.Parameters[taken]);
                il.Emit(OpCodes.Ldind_U1);
                il.Emit(OpCodes.Brfalse, skip);
            }
            il.Emit(OpCodes.Ldloc, t0);
            il.Emit(OpCodes.Call, _now);
            il.Emit(OpCodes.Ldarg, m.Parameters[count]);
            il.Emit(OpCodes.Ldarg, m.Parameters[count + 1]);
            il.Emit(OpCodes.Call, _acquired);
            il.Append(skip);
            if (result != null)
                il.Emit(OpCodes.Ret);
        }
        else
        {
            for (int i = 0; i < count; i++)
                il.Emit(OpCodes.Ldarg, m.Parameters[i]);
            il.Emit(opcode, callee);
            il.Emit(OpCodes.Call, _now);
            il.Emit(OpCodes.Call, _released);
            il.Emit(OpCodes.Ret);
        }
        m.Body.OptimizeMacros();
        _wrappers[key] = m;
        return m;
    }

    /// Synchronized_Enter(object lock, string method, string location): the hold starts now.
    public MethodDefinition SyncEnter
    {
        get
        {
            if (_syncEnter != null)
                return _syncEnter;
            var m = AddMethod("Synchronized_Enter", _ts.Void, ("lock", _ts.Object), ("method", _ts.String),
                ("location", _ts.String));
            var il = m.Body.GetILProcessor();
            il.Emit(OpCodes.Call, _now);
            il.Emit(OpCodes.Dup);
            il.Emit(OpCodes.Ldarg_1);
            il.Emit(OpCodes.Ldarg_2);
            il.Emit(OpCodes.Call, _acquired);
            il.Emit(OpCodes.Ret);
            return _syncEnter = m;
        }
    }

    /// Synchronized_Exit(object lock): the hold ends now.
    public MethodDefinition SyncExit
    {
        get
        {
            if (_syncExit != null)
                return _syncExit;
            var m = AddMethod("Synchronized_Exit", _ts.Void, ("lock", _ts.Object));
            var il = m.Body.GetILProcessor();
            il.Emit(OpCodes.Call, _now);
            il.Emit(OpCodes.Call, _released);
            il.Emit(OpCodes.Ret);
            return _syncExit = m;
        }
    }

    public int WrapperCount => _wrappers.Count;
}
