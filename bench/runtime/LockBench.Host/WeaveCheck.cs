// Checks, before any benchmark runs, that this process runs what the figures claim: the plain
// assembly has no LockTime helper, the woven one has it and its loops call its stubs, the merged
// run-time's Api.Off flag matches the run (LOCKTIME_DISABLED is read once, when the run-time starts),
// and the woven locks still exclude (two threads, no lost increment).
extern alias plain;
extern alias woven;

using System.Reflection;
using System.Threading;

namespace LockBench.Host;

public static class WeaveCheck
{
    private const string HelperName = "<LockTime>";

    /// <summary>
    /// Prints what it found; returns false when the process is not set up as <paramref name="expectDisabled"/> says.
    /// <paramref name="exercise"/>: also run the woven loops on two threads (which compiles them).
    /// </summary>
    public static bool Run(bool expectDisabled, bool exercise = true)
    {
        Assembly plainAsm = typeof(plain::LockBench.MonitorCounter).Assembly;
        Assembly wovenAsm = typeof(woven::LockBench.MonitorCounter).Assembly;
        bool ok = true;

        Type? plainHelper = FindHelper(plainAsm);
        Console.WriteLine($"check: {plainAsm.GetName().Name} at {plainAsm.Location}: {HelperName} {(plainHelper is null ? "absent" : "PRESENT")}");
        ok &= plainHelper is null;

        Type? helper = FindHelper(wovenAsm);
        Console.WriteLine($"check: {wovenAsm.GetName().Name} at {wovenAsm.Location}: {HelperName} {(helper is null ? "ABSENT" : "present")}");
        if (helper is null)
            return false;

        foreach (Type counter in new[] { typeof(woven::LockBench.MonitorCounter), typeof(woven::LockBench.LockCounter) })
        {
            MethodInfo increment = counter.GetMethod("Increment")!;
            List<string> wrappers = WrapperCalls(increment, helper);
            Console.WriteLine($"check: woven {counter.Name}.Increment calls {string.Join(", ", wrappers.Select(w => $"{HelperName}::{w}"))}");
            ok &= wrappers.Count > 0;
        }

        const BindingFlags statics = BindingFlags.Static | BindingFlags.NonPublic | BindingFlags.Public;
        Type? api = wovenAsm.GetTypes().FirstOrDefault(t => t.Name == HelperName + "Api" && t.DeclaringType is null);
        object? off = api?.GetField("Off", statics)?.GetValue(null);
        Console.WriteLine($"check: {HelperName}Api.Off = {off} (expected {expectDisabled})");
        ok &= off is bool d && d == expectDisabled;

        if (!exercise)
            return ok;
        ok &= Excludes("woven Monitor", new woven::LockBench.MonitorCounter().Increment, c => ((woven::LockBench.MonitorCounter)c).Count);
        ok &= Excludes("woven Lock", new woven::LockBench.LockCounter().Increment, c => ((woven::LockBench.LockCounter)c).Count);
        return ok;
    }

    private static Type? FindHelper(Assembly asm) =>
        asm.GetTypes().FirstOrDefault(t => t.Name == HelperName && t.DeclaringType is null);

    /// <summary>Names of the helper's methods that <paramref name="method"/>'s IL calls (call = 0x28).</summary>
    private static List<string> WrapperCalls(MethodInfo method, Type helper)
    {
        byte[] il = method.GetMethodBody()!.GetILAsByteArray()!;
        var names = new List<string>();
        for (int i = 0; i + 4 < il.Length; i++)
        {
            if (il[i] != 0x28)
                continue;
            int token = BitConverter.ToInt32(il, i + 1);
            if ((token >> 24) != 0x06) // a MethodDef of this assembly: the wrappers are
                continue;
            try
            {
                MethodBase? callee = method.Module.ResolveMethod(token);
                if (callee?.DeclaringType == helper && !names.Contains(callee.Name))
                    names.Add(callee.Name);
            }
            catch (ArgumentException)
            {
                // A 0x28 byte inside another instruction's operand: not a call.
            }
        }
        return names;
    }

    private static bool Excludes(string what, Action<int> increment, Func<object, long> count)
    {
        const int perThread = 200_000;
        object counter = increment.Target!;
        var other = new Thread(() => increment(perThread));
        other.Start();
        increment(perThread);
        other.Join();
        long got = count(counter);
        Console.WriteLine($"check: {what}: two threads x {perThread} increments = {got} (expected {2 * perThread})");
        return got == 2L * perThread;
    }
}
