#!/usr/bin/env bash
# The README's main command (make demo): build the sample app, weave it with locktime, run it
# before and after, and show the lock report.
set -eu
cd "$(dirname "$0")/../.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
out=build/demo
rm -rf "$out"
echo "== building tests/demo/SlowLock"
dotnet build tests/demo/SlowLock/SlowLock.csproj -c Debug -o "$out" -nologo -v q -p:UseSharedCompilation=false >/dev/null
echo "== running it as built"
dotnet "$out/SlowLock.dll"
echo "== locktime list"
build/locktime list "$out/SlowLock.dll"
echo "== locktime weave"
build/locktime weave --threshold-ms 10 "$out/SlowLock.dll"
echo "== running the woven app (reports go to stderr)"
dotnet "$out/SlowLock.dll"
