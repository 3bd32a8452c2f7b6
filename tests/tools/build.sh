#!/usr/bin/env bash
# Builds the test tools (ltcheck) into build/tools/ltcheck; does nothing when the build is newer than every source.
# Quiet on success; prints the build log and exits non-zero on failure.
set -u
cd "$(dirname "$0")/../.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
out=build/tools/ltcheck
stamp=$out/.built
if [ -f "$stamp" ] && [ -z "$(find tests/tools/ltcheck -type f -newer "$stamp" | head -n 1)" ]; then
	exit 0
fi
mkdir -p build/logs "$out"
log=build/logs/ltcheck-build.log
if ! dotnet build tests/tools/ltcheck/ltcheck.csproj -c Release -o "$out" -nologo -v q >"$log" 2>&1; then
	cat "$log" >&2
	echo "tests/tools/build.sh: building ltcheck failed (log: $log)" >&2
	exit 1
fi
touch "$stamp"
