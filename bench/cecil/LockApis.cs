// LockApis.cs - which calls are lock calls: the Monitor and System.Threading.Lock methods locktime
// times, recognised by declaring type, name and signature (as Cecil spells the type names).
using Mono.Cecil;

namespace CecilWeaver;

enum Role
{
    Acquire, // a site: gets the two name strings and a timed wrapper
    Release, // redirected to a wrapper that ends the hold
}

sealed record LockApi(string Type, string Name, bool HasThis, string Return, string[] Params, Role Role, string Kind);

static class LockApis
{
    const string Monitor = "System.Threading.Monitor";
    const string Lock = "System.Threading.Lock";
    const string Scope = "System.Threading.Lock/Scope";
    const string Obj = "System.Object", Bool = "System.Boolean", Void = "System.Void";
    const string RefBool = "System.Boolean&", Int = "System.Int32", Span = "System.TimeSpan";

    static readonly LockApi[] All =
    {
        new(Monitor, "Enter", false, Void, new[] { Obj }, Role.Acquire, "Monitor.Enter"),
        new(Monitor, "Enter", false, Void, new[] { Obj, RefBool }, Role.Acquire, "Monitor.Enter"),
        new(Monitor, "TryEnter", false, Bool, new[] { Obj }, Role.Acquire, "Monitor.TryEnter"),
        new(Monitor, "TryEnter", false, Void, new[] { Obj, RefBool }, Role.Acquire, "Monitor.TryEnter"),
        new(Monitor, "TryEnter", false, Bool, new[] { Obj, Int }, Role.Acquire, "Monitor.TryEnter"),
        new(Monitor, "TryEnter", false, Void, new[] { Obj, Int, RefBool }, Role.Acquire, "Monitor.TryEnter"),
        new(Monitor, "TryEnter", false, Bool, new[] { Obj, Span }, Role.Acquire, "Monitor.TryEnter"),
        new(Monitor, "TryEnter", false, Void, new[] { Obj, Span, RefBool }, Role.Acquire, "Monitor.TryEnter"),
        new(Monitor, "Exit", false, Void, new[] { Obj }, Role.Release, "Monitor.Exit"),
        new(Lock, "Enter", true, Void, Array.Empty<string>(), Role.Acquire, "Lock.Enter"),
        new(Lock, "TryEnter", true, Bool, Array.Empty<string>(), Role.Acquire, "Lock.TryEnter"),
        new(Lock, "TryEnter", true, Bool, new[] { Int }, Role.Acquire, "Lock.TryEnter"),
        new(Lock, "TryEnter", true, Bool, new[] { Span }, Role.Acquire, "Lock.TryEnter"),
        new(Lock, "EnterScope", true, Scope, Array.Empty<string>(), Role.Acquire, "Lock.EnterScope"),
        new(Lock, "Exit", true, Void, Array.Empty<string>(), Role.Release, "Lock.Exit"),
        new(Scope, "Dispose", true, Void, Array.Empty<string>(), Role.Release, "Lock.Scope.Dispose"),
    };

    static readonly HashSet<string> Types = new(All.Select(a => a.Type));

    /// The lock types whose own methods (and their nested types') are no sites, as for locktime: their
    /// implementation calls their own and Monitor's APIs, so a woven framework would time one lock twice.
    static readonly HashSet<string> Implementations = new()
    {
        Monitor, Lock, "System.Threading.ReaderWriterLockSlim", "System.Threading.SemaphoreSlim", "System.Threading.SpinLock",
        "System.Threading.Mutex", "System.Threading.WaitHandle", "System.Threading.ReaderWriterLock",
    };

    /// Whether `type`, or the outermost type enclosing it, is a lock type (its methods are not searched).
    public static bool IsLockType(TypeDefinition type)
    {
        while (type.DeclaringType != null)
            type = type.DeclaringType;
        return Implementations.Contains(type.FullName);
    }
    static readonly HashSet<string> Names = new(All.Select(a => a.Name));

    /// The lock API `callee` is, or null. Generic instantiations and other types match nothing.
    public static LockApi? Match(MethodReference callee)
    {
        // The name first: it is a plain field, FullName builds a string.
        if (!Names.Contains(callee.Name) || callee is GenericInstanceMethod
            || !Types.Contains(callee.DeclaringType.FullName))
            return null;
        foreach (var api in All)
        {
            if (api.Name != callee.Name || api.HasThis != callee.HasThis || api.Type != callee.DeclaringType.FullName
                || api.Params.Length != callee.Parameters.Count || api.Return != callee.ReturnType.FullName)
                continue;
            bool same = true;
            for (int i = 0; i < api.Params.Length && same; i++)
                same = api.Params[i] == callee.Parameters[i].ParameterType.FullName;
            if (same)
                return api;
        }
        return null;
    }

    /// Whether the API's `this` is a value type (passed by reference): only Lock.Scope here.
    public static bool ThisIsValueType(LockApi api) => api.Type == Scope;
}
