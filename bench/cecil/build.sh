#!/usr/bin/env bash
# Builds CecilWeaver (the Mono.Cecil reference weaver for the weave-speed benchmark) into
# build/bench/cecil, Release. Does nothing when the build is newer than every source file, so the
# benchmark harness can call it every time. Restores from the configured NuGet sources.
# Quiet on success; prints the build log and exits non-zero on failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
out=build/bench/cecil
stamp=$out/.built
# Up to date: the stamp is newer than every file of the project (sources, csproj, props, this script).
if [ -f "$stamp" ] && [ -f "$out/CecilWeaver.dll" ] &&
	[ -z "$(find bench/cecil -type f -newer "$stamp" | head -n 1)" ]; then
	exit 0
fi
mkdir -p build/logs "$out"
log=build/logs/cecil-build.log
# No shared compiler server: nothing may linger after the build on the shared machine.
if ! dotnet build bench/cecil/CecilWeaver.csproj -c Release -o "$out" -nologo -v q \
	-p:UseSharedCompilation=false >"$log" 2>&1; then
	cat "$log" >&2
	echo "bench/cecil/build.sh: building CecilWeaver failed (log: $log)" >&2
	exit 1
fi
touch "$stamp"
