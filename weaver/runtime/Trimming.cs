// Trimming.cs - the attributes the trimmer and NativeAOT's compiler read, which netstandard2.0 lacks.
#if !NET5_0_OR_GREATER
namespace System.Diagnostics.CodeAnalysis
{
    /// <summary>
    /// Hides a trim or AOT analysis warning (IL2xxx, IL3xxx) the code is known to cope with. The trimmer
    /// knows it by its full name; netstandard2.0 has none, so the template declares it. The merger does not
    /// copy a use of it as this class: it carries it as the target framework's own attribute (.NET 5+), and
    /// leaves it out where the framework has none (nothing trims the code there: Mono, .NET Framework, a
    /// netstandard library's own framework) - weaver/weave/weave_merge_check.c, framework_attributes.
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
    /// Keeps a member of another assembly that the code reaches by reflection (named as documentation
    /// comment IDs name it), so that a trimmed app still has it; merged as <see cref="UnconditionalSuppressMessageAttribute"/> is.
    /// </summary>
    [AttributeUsage(AttributeTargets.Method, AllowMultiple = true)]
    internal sealed class DynamicDependencyAttribute : Attribute
    {
        internal DynamicDependencyAttribute(string memberSignature, string typeName, string assemblyName)
        {
        }
    }
}
#endif
