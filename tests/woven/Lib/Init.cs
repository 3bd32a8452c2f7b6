// Init.cs - the library's own module initializer (C# 9's [ModuleInitializer], declared here: netstandard2.0 lacks
// the attribute, and the compiler takes any of that name): its side effect, Ledger.Opened, must outlive the weave,
// which calls the run-time's watch of the exit first in that initializer (woven.sh, `App modinit`).
namespace System.Runtime.CompilerServices
{
    [AttributeUsage(AttributeTargets.Method, Inherited = false)]
    internal sealed class ModuleInitializerAttribute : Attribute
    {
    }
}

namespace Woven.Lib
{
    internal static class Init
    {
        [System.Runtime.CompilerServices.ModuleInitializer]
        internal static void Open()
        {
            Ledger.Opened = "the library's module initializer ran";
        }
    }
}
