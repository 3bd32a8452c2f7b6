// SiteTable.cs - the lock sites of one woven assembly: names and source lines, by site id.
using System.Runtime.CompilerServices;

namespace LockTime.Runtime
{
    /// <summary>
    /// The sites of one woven assembly. Site ids are 0-based and dense: the call-site stubs pass them
    /// to <see cref="Api"/>. <see cref="SiteList.Load"/> fills the table once, at start.
    /// </summary>
    [CompilerGenerated]
    internal sealed class SiteTable
    {
        internal string Assembly = "";
        internal string[] Methods = new string[0];
        internal string[] Locations = new string[0];
        internal string[] Files = new string[0];
        internal int[] Lines = new int[0];
        internal string[] Kinds = new string[0];
        /// <summary>
        /// Per site, null for a method the user wrote, else what compiler-generated code it is in:
        /// <c>{ kind, method, what }</c> as <see cref="Within"/> gives it.
        /// </summary>
        internal string[][] Withins = new string[0][];

        /// <summary>Starts the table of <paramref name="assembly"/> (its simple name) with room for <paramref name="count"/> sites.</summary>
        internal void Begin(string assembly, int count)
        {
            if (count < 0)
                count = 0;
            Assembly = assembly ?? "";
            Methods = new string[count];
            Locations = new string[count];
            Files = new string[count];
            Lines = new int[count];
            Kinds = new string[count];
            Withins = new string[count][];
        }

        /// <summary>
        /// Names site <paramref name="site"/>: the method the user wrote (<c>Ns.Type::Method</c>), the
        /// location (<c>File.cs:42</c>, or <c>IL_001c</c> without a PDB), the source file's full path
        /// and line (<c>""</c> and 0 when unknown), and the lock kind (e.g. <c>Monitor.Enter</c>).
        /// An id outside the table is ignored.
        /// </summary>
        internal void Define(int site, string method, string location, string file, int line, string kind)
        {
            if ((uint)site >= (uint)Methods.Length)
                return;
            Methods[site] = method ?? "";
            Locations[site] = location ?? "";
            Files[site] = file ?? "";
            Lines[site] = line;
            Kinds[site] = kind ?? "";
        }

        /// <summary>
        /// Says that site <paramref name="site"/> is in a lambda or a local function (<paramref name="kind"/>:
        /// <c>lambda</c> or <c>local function</c>) of method <paramref name="method"/> (<c>Ns.Type::Method</c>);
        /// <paramref name="what"/>: the lambda's first line (<c>File.cs:9</c>, <c>""</c> unknown) or the local
        /// function's name. An id outside the table is ignored.
        /// </summary>
        internal void Within(int site, string kind, string method, string what)
        {
            if ((uint)site >= (uint)Withins.Length)
                return;
            string[] w = new string[3];
            w[0] = kind ?? "";
            w[1] = method ?? "";
            w[2] = what ?? "";
            Withins[site] = w;
        }

        /// <summary>Number of sites.</summary>
        internal int Count()
        {
            return Methods.Length;
        }
    }

    /// <summary>The site table of this woven assembly.</summary>
    [CompilerGenerated]
    internal static class SiteList
    {
        /// <summary>
        /// Fills <paramref name="table"/>. The template's body is empty (no sites); the merger writes
        /// the woven assembly's: <c>table.Begin(assembly, n)</c>, then one <c>table.Define(...)</c> per
        /// site, every argument a literal (README.md, "The site table").
        /// </summary>
        internal static void Load(SiteTable table)
        {
        }
    }
}
