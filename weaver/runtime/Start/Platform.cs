// Platform.cs - facts about the process read through reflection, so the merged copy needs no System.dll.
using System;
using System.Reflection;
using System.Runtime.CompilerServices;

namespace LockTime.Runtime
{
    /// <summary>
    /// The process id and name. <c>Environment.ProcessId</c> exists from .NET 5 and
    /// <c>System.Diagnostics.Process</c> lives outside the core library on .NET Framework and Mono, so
    /// both are found by reflection: the merged copy then references only the core library here.
    /// </summary>
    [CompilerGenerated]
    internal static class Platform
    {
        /// <summary>The process id, or 0 when no API gives it.</summary>
        internal static int ProcessId()
        {
            try {
                PropertyInfo p = typeof(Environment).GetProperty("ProcessId", BindingFlags.Public | BindingFlags.Static);
                if (p != null)
                    return (int)p.GetValue(null, null);
                Type t = Type.GetType("System.Diagnostics.Process, System.Diagnostics.Process", false);
                if (t == null)
                    t = Type.GetType("System.Diagnostics.Process, System, Version=4.0.0.0, Culture=neutral, PublicKeyToken=b77a5c561934e089", false);
                if (t == null)
                    return 0;
                MethodInfo current = t.GetMethod("GetCurrentProcess", Type.EmptyTypes);
                PropertyInfo id = t.GetProperty("Id");
                if (current == null || id == null)
                    return 0;
                return (int)id.GetValue(current.Invoke(null, null), null);
            } catch (Exception) {
                return 0;
            }
        }

        /// <summary>The program's name: the AppDomain's friendly name without <c>.exe</c>/<c>.dll</c>.</summary>
        internal static string ProcessName()
        {
            try {
                string name = AppDomain.CurrentDomain.FriendlyName ?? "";
                if (name.EndsWith(".exe", StringComparison.OrdinalIgnoreCase) || name.EndsWith(".dll", StringComparison.OrdinalIgnoreCase))
                    name = name.Substring(0, name.Length - 4);
                return name;
            } catch (Exception) {
                return "";
            }
        }
    }
}
