// AssemblyInfo.cs - assembly attributes of the template (not merged: the merger copies types only).
using System.Runtime.CompilerServices;

[assembly: InternalsVisibleTo("LockTime.Runtime.Tests")]
