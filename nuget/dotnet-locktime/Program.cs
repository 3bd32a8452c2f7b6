// Program.cs - dotnet-locktime: runs the package's locktime for this host with the arguments as given,
// on the same standard input, output and error, and exits with its exit status.
using System;
using System.ComponentModel;
using System.Diagnostics;

namespace LockTime.Tool
{
    internal static class Program
    {
        private const string FromSource =
            "dotnet-locktime: this package holds locktime for Linux x64 and arm64 and for Windows x64 (which Windows\n" +
            "on Arm runs) only. On this host, build locktime from the LockTime sources with a C compiler and make\n" +
            "(README.md, \"Hosts\": the macOS commands) and run the build/locktime it makes.\n";

        /// <summary>Runs locktime with <paramref name="args"/>; returns its exit status (2 when it cannot start).</summary>
        private static int Main(string[] args)
        {
            string? rid = NativeTool.HostRid();
            if (rid == null)
            {
                Console.Error.Write(FromSource);
                return 2;
            }
            string path = NativeTool.PathFor(rid);
            string? problem = NativeTool.MakeRunnable(path);
            if (problem != null)
            {
                Console.Error.WriteLine("dotnet-locktime: " + problem);
                return 2;
            }
            var start = new ProcessStartInfo(path) { UseShellExecute = false };
            foreach (string arg in args)
                start.ArgumentList.Add(arg);
            // Ctrl+C reaches locktime too (the same console): wait for it to end rather than end first.
            Console.CancelKeyPress += (_, e) => e.Cancel = true;
            try
            {
                using Process child = Process.Start(start)!;
                child.WaitForExit();
                return child.ExitCode;
            }
            catch (Win32Exception e)
            {
                Console.Error.WriteLine($"dotnet-locktime: cannot run {path}: {e.Message}");
                return 2;
            }
        }
    }
}
