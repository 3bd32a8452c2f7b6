// NativeTool.cs - which locktime binary of the package runs on this host, and making sure it can run.
using System;
using System.IO;
using System.Runtime.InteropServices;

namespace LockTime.Tool
{
    /// <summary>The static locktime shipped in the tool package beside the launcher, per host.</summary>
    internal static class NativeTool
    {
        /// <summary>
        /// The package's folder name for this host: linux-x64, linux-arm64 or win-x64 (Windows on Arm
        /// runs the x64 binary under emulation); null for any other host (macOS, other architectures).
        /// </summary>
        public static string? HostRid()
        {
            Architecture arch = RuntimeInformation.OSArchitecture;
            if (OperatingSystem.IsLinux())
                return arch == Architecture.X64 ? "linux-x64" : arch == Architecture.Arm64 ? "linux-arm64" : null;
            if (OperatingSystem.IsWindows())
                return arch == Architecture.X64 || arch == Architecture.Arm64 ? "win-x64" : null;
            return null;
        }

        /// <summary>The path of the binary for <paramref name="rid"/> in the folder the launcher runs from.</summary>
        public static string PathFor(string rid) =>
            Path.Combine(AppContext.BaseDirectory, rid, rid.StartsWith("win-", StringComparison.Ordinal) ? "locktime.exe" : "locktime");

        /// <summary>
        /// Gives the binary at <paramref name="path"/> its execute bits on Linux when it lacks them:
        /// NuGet does not keep a package's file modes but gives its own when it extracts (the .NET 10
        /// SDK's rwxr--r--), which may not be executable. Returns null when it can run, else why not.
        /// </summary>
        public static string? MakeRunnable(string path)
        {
            if (!File.Exists(path))
                return $"{path} is missing from the tool package";
            if (OperatingSystem.IsWindows())
                return null;
            const UnixFileMode exec = UnixFileMode.UserExecute | UnixFileMode.GroupExecute | UnixFileMode.OtherExecute;
            UnixFileMode mode = File.GetUnixFileMode(path);
            if ((mode & UnixFileMode.UserExecute) != 0)
                return null;
            try
            {
                File.SetUnixFileMode(path, mode | (exec & ReadBitsAsExecute(mode)));
                return null;
            }
            catch (Exception e) when (e is UnauthorizedAccessException || e is IOException)
            {
                return $"{path} is not executable and cannot be made so ({e.Message}): run chmod +x on it";
            }
        }

        // The execute bits that go with the read bits the file has (644 -> 755, 600 -> 700).
        private static UnixFileMode ReadBitsAsExecute(UnixFileMode mode) =>
            ((mode & UnixFileMode.UserRead) != 0 ? UnixFileMode.UserExecute : 0) |
            ((mode & UnixFileMode.GroupRead) != 0 ? UnixFileMode.GroupExecute : 0) |
            ((mode & UnixFileMode.OtherRead) != 0 ? UnixFileMode.OtherExecute : 0);
    }
}
