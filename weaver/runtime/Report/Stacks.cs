// Stacks.cs - the call stacks of one site's slow acquisitions: distinct stacks per role with their counts and times, bounded.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Text;

namespace LockTime.Runtime
{
    /// <summary>
    /// One aggregated stack of a site: its role (<see cref="StackSet.Waiter"/>: a slow wait, captured where
    /// the waiter released the lock it waited for; <see cref="StackSet.Holder"/>: a slow hold, captured at
    /// its release), what it is (<see cref="StackSet.Captured"/>, or the count of the stacks beyond the kept
    /// ones, <see cref="StackSet.Other"/>, or of the slow acquisitions not captured,
    /// <see cref="StackSet.NotCaptured"/>), its frames innermost first (methods, files or null, lines or 0;
    /// null for the last two kinds), the number of slow acquisitions and their wait and hold totals in ns.
    /// </summary>
    [CompilerGenerated]
    internal sealed class StackEntry
    {
        internal int Role;
        internal int What;
        internal string[] Methods;
        internal string[] Files;
        internal int[] Lines;
        /// <summary>The frames as one string (methods, files and lines): equal keys are the same stack.</summary>
        internal string Key;
        internal long Count, WaitNs, HoldNs;
    }

    /// <summary>
    /// The stacks of one site's slow acquisitions, as one thread records them (each thread writes its own) or
    /// as merged (<see cref="AddAll"/>): at most <see cref="MaxPerRole"/> distinct stacks per role, the
    /// others counted in the role's <see cref="Other"/> entry, so that the counts and times of a role add up
    /// to every slow acquisition of that role, captured or not.
    /// </summary>
    [CompilerGenerated]
    internal sealed class StackSet
    {
        internal const int Waiter = 0, Holder = 1;
        internal const int Captured = 0, Other = 1, NotCaptured = 2;
        /// <summary>Distinct stacks kept per role (per thread record, and per site once merged).</summary>
        internal const int MaxPerRole = 16;

        /// <summary>The entries, <see cref="N"/> of them used; grown by the owner only (another thread reading reads each once).</summary>
        internal StackEntry[] Entries = new StackEntry[4];
        internal int N;

        /// <summary>
        /// Adds <paramref name="count"/> slow acquisitions of <paramref name="role"/> with stack <paramref name="e"/>
        /// (what, frames and key; its times and count are not read): to the entry of the same role and key, or
        /// to a new one (a copy) when fewer than <see cref="MaxPerRole"/> are kept and <paramref name="mayGrow"/>,
        /// else to the role's <see cref="Other"/>. Returns whether an entry was made for a captured stack.
        /// </summary>
        internal bool Add(int role, StackEntry e, long count, long waitNs, long holdNs, bool mayGrow)
        {
            int kept = 0;
            int what = e.What;
            for (int i = 0; i < N; i++) {
                StackEntry x = Entries[i];
                if (x.Role != role)
                    continue;
                if (x.What == Captured)
                    kept++;
                if (x.What == what && x.Key == e.Key) {
                    Sum(x, count, waitNs, holdNs);
                    return false;
                }
            }
            bool fits = what != Captured || (kept < MaxPerRole && mayGrow);
            if (!fits) {
                Add(role, Special(Other), count, waitNs, holdNs, false);
                return false;
            }
            StackEntry n = new StackEntry();
            n.Role = role;
            n.What = what;
            n.Methods = e.Methods;
            n.Files = e.Files;
            n.Lines = e.Lines;
            n.Key = e.Key;
            Sum(n, count, waitNs, holdNs);
            if (N == Entries.Length)
                Array.Resize(ref Entries, N * 2);
            Entries[N] = n;
            N++;
            return what == Captured;
        }

        static void Sum(StackEntry x, long count, long waitNs, long holdNs)
        {
            x.Count += count;
            x.WaitNs += waitNs;
            x.HoldNs += holdNs;
        }

        /// <summary>The stack of every slow acquisition not captured, as <see cref="Add"/> takes it (read only: one for all).</summary>
        internal static readonly StackEntry Uncaptured = Special(NotCaptured);

        /// <summary>An entry of kind <paramref name="what"/> without frames (<see cref="Other"/>, <see cref="NotCaptured"/>).</summary>
        internal static StackEntry Special(int what)
        {
            StackEntry e = new StackEntry();
            e.What = what;
            e.Key = "";
            return e;
        }

        /// <summary>
        /// Adds every entry of <paramref name="other"/> (another thread's, maybe growing now: read once, each entry checked; one
        /// whose frames are not all seen yet is passed over).
        /// </summary>
        internal void AddAll(StackSet other)
        {
            StackEntry[] entries = other.Entries;
            int n = other.N;
            for (int i = 0; i < n && i < entries.Length; i++) {
                StackEntry e = entries[i];
                if (e != null && (e.What != Captured || (e.Methods != null && e.Files != null && e.Lines != null)))
                    Add(e.Role, e, e.Count, e.WaitNs, e.HoldNs, true);
            }
        }

        /// <summary>The number of captured stacks kept (what the copy's bound counts).</summary>
        internal int Kept()
        {
            int kept = 0;
            for (int i = 0; i < N; i++)
                if (Entries[i].What == Captured)
                    kept++;
            return kept;
        }

        /// <summary>The entries in the order outputs show them: waiters, then holders; captured stacks first, each by its cost (<see cref="Cost"/>), largest first; then other, then not captured.</summary>
        internal StackEntry[] Sorted()
        {
            StackEntry[] all = new StackEntry[N];
            Array.Copy(Entries, all, N);
            Array.Sort(all, new Comparison<StackEntry>(Compare));
            return all;
        }

        static int Compare(StackEntry a, StackEntry b)
        {
            int c = a.Role.CompareTo(b.Role);
            if (c == 0)
                c = a.What.CompareTo(b.What);
            if (c == 0)
                c = Cost(b).CompareTo(Cost(a));
            if (c == 0)
                c = string.CompareOrdinal(a.Key, b.Key);
            return c;
        }

        /// <summary>What a stack cost: a waiter's its wait total, a holder's its hold total, in ns.</summary>
        internal static long Cost(StackEntry e)
        {
            return e.Role == Waiter ? e.WaitNs : e.HoldNs;
        }

        /// <summary>
        /// The set as framework data, for another copy (<see cref="SiteTotals.ToRow"/>): one
        /// <c>object[] { long[] { role, what, count, waitNs, holdNs }, string[] methods, string[] files, int[] lines }</c> per entry.
        /// </summary>
        internal object[] ToRow()
        {
            object[] row = new object[N];
            for (int i = 0; i < N; i++) {
                StackEntry e = Entries[i];
                object[] r = new object[4];
                long[] n = new long[5];
                n[0] = e.Role;
                n[1] = e.What;
                n[2] = e.Count;
                n[3] = e.WaitNs;
                n[4] = e.HoldNs;
                r[0] = n;
                r[1] = e.Methods;
                r[2] = e.Files;
                r[3] = e.Lines;
                row[i] = r;
            }
            return row;
        }

        /// <summary>Adds the entries of <paramref name="row"/> (<see cref="ToRow"/>); entries of another layout are passed over.</summary>
        internal void AddRow(object[] row)
        {
            for (int i = 0; row != null && i < row.Length; i++) {
                object[] r = row[i] as object[];
                long[] n = r != null && r.Length >= 4 ? r[0] as long[] : null;
                if (n == null || n.Length < 5 || n[0] < Waiter || n[0] > Holder || n[1] < Captured || n[1] > NotCaptured)
                    continue;
                StackEntry e = Special((int)n[1]);
                if (e.What == Captured) {
                    e.Methods = r[1] as string[];
                    e.Files = r[2] as string[];
                    e.Lines = r[3] as int[];
                    if (e.Methods == null || e.Files == null || e.Lines == null || e.Files.Length != e.Methods.Length || e.Lines.Length != e.Methods.Length)
                        continue;
                    e.Key = KeyOf(e.Methods, e.Files, e.Lines);
                }
                Add((int)n[0], e, n[2], n[3], n[4], true);
            }
        }

        /// <summary>The key of a stack: each frame's method, file and line, one frame a line.</summary>
        internal static string KeyOf(string[] methods, string[] files, int[] lines)
        {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < methods.Length; i++)
                sb.Append(methods[i]).Append('\t').Append(files[i]).Append('\t').Append(lines[i]).Append('\n');
            return sb.ToString();
        }

        /// <summary>"waiter" or "holder".</summary>
        internal static string RoleName(int role)
        {
            return role == Waiter ? "waiter" : "holder";
        }

        /// <summary>"stack", "other" or "not_captured".</summary>
        internal static string WhatName(int what)
        {
            return what == Captured ? "stack" : what == Other ? "other" : "not_captured";
        }
    }
}
