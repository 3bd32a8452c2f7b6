// Calls the merged probe LockTime.MergeTest.Probe.Run() by reflection and prints what it returns:
//   Host ASSEMBLY   the probe merged into that assembly (loaded from its path)
//   Host            the probe merged into the core library the host runs on (Mono's mscorlib)
// The merged probe type is <LockTime>Probe; in the template itself, LockTime.MergeTest.Probe.
using System;
using System.Reflection;

static class Host
{
    static int Main(string[] args)
    {
        Assembly asm = args.Length > 0 ? Assembly.LoadFrom(args[0]) : typeof(object).Assembly;
        Type probe = asm.GetType("<LockTime>Probe") ?? asm.GetType("LockTime.MergeTest.Probe");
        if (probe == null)
        {
            Console.WriteLine("no probe type in " + asm.FullName);
            return 1;
        }
        MethodInfo run = probe.GetMethod("Run", BindingFlags.Static | BindingFlags.Public | BindingFlags.NonPublic);
        Console.WriteLine(run.Invoke(null, null));
        return 0;
    }
}
