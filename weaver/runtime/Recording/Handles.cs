// Handles.cs - which WaitHandles are Mutexes: the WaitOne / WaitAny / WaitAll stubs time only those.
using System;
using System.Runtime.CompilerServices;

namespace LockTime.Runtime
{
    /// <summary>
    /// A <c>WaitHandle</c> is a lock when it is a <c>Mutex</c>; events and semaphores are not. The stubs of
    /// WaitOne on a WaitHandle-typed value and of WaitAny / WaitAll ask here first (one type compare per
    /// handle) and call the original alone when no Mutex is among the handles. Apart from
    /// <see cref="Api"/>, so that asking starts no run-time; nothing here throws.
    /// </summary>
    [CompilerGenerated]
    internal static class Handles
    {
        /// <summary>
        /// The type a WaitHandle stub times: <c>System.Threading.Mutex</c> (sealed), found by name (the template
        /// names no Mutex type) in the core library - <c>Type.GetType</c> looks there after the calling assembly,
        /// and the trimmer reads a literal name (<c>Assembly.GetType</c> it does not: IL2026); null when there is none.
        /// </summary>
        static readonly Type MutexType = Find();

        static Type Find()
        {
            try {
                return Type.GetType("System.Threading.Mutex", false);
            } catch (Exception) {
                return null;
            }
        }

        /// <summary>Whether <paramref name="handle"/> (a WaitHandle's WaitOne being called) is a Mutex: only then does the stub time it, as a Mutex.WaitOne.</summary>
        internal static bool IsMutex(object handle)
        {
            return handle != null && MutexType != null && ReferenceEquals(handle.GetType(), MutexType);
        }

        /// <summary>Whether the handles of a WaitAny / WaitAll hold a Mutex: only then does the stub time the call.</summary>
        internal static bool AnyMutex(object handles)
        {
            object[] all = handles as object[];
            if (all == null || MutexType == null)
                return false;
            for (int i = 0; i < all.Length; i++)
                if (all[i] != null && ReferenceEquals(all[i].GetType(), MutexType))
                    return true;
            return false;
        }
    }
}
