// Trimming.cs - the attributes the trimmer and NativeAOT's compiler read, which netstandard2.0 lacks.
#if !NET5_0_OR_GREATER
namespace System.Diagnostics.CodeAnalysis
{
    /// <summary>
    /// Hides a trim or AOT analysis warning (IL2xxx, IL3xxx) the code is known to cope with. The trimmer
    /// and NativeAOT's compiler know it by its full name, wherever it is defined; netstandard2.0 has none,
    /// so the template declares it. The merger carries a use of it on the target's own class of this name,
    /// the target framework's (.NET 5+), or, in a netstandard library, this class merged under this name;
    /// it leaves it out elsewhere (nothing trims the code there: Mono, .NET Framework) -
    /// weaver/weave/merge/weave_merge_trim.c.
    /// </summary>
    [AttributeUsage(AttributeTargets.Class | AttributeTargets.Method, AllowMultiple = true)]
    internal sealed class UnconditionalSuppressMessageAttribute : Attribute
    {
        string justification;

        internal UnconditionalSuppressMessageAttribute(string category, string checkId)
        {
        }

        /// <summary>Why the warning does not apply.</summary>
        public string Justification
        {
            get { return justification; }
            set { justification = value; }
        }
    }

    /// <summary>
    /// Keeps a member that the code reaches by reflection (named as documentation comment IDs name it), of
    /// another assembly or of the same type, so that a trimmed app still has it; merged as <see cref="UnconditionalSuppressMessageAttribute"/> is.
    /// </summary>
    [AttributeUsage(AttributeTargets.Constructor | AttributeTargets.Method, AllowMultiple = true)]
    internal sealed class DynamicDependencyAttribute : Attribute
    {
        internal DynamicDependencyAttribute(string memberSignature, string typeName, string assemblyName)
        {
        }

        /// <summary>Keeps a member of the type that declares the member this is on (a property read by reflection).</summary>
        internal DynamicDependencyAttribute(string memberSignature)
        {
        }
    }
}
#endif
