#!/usr/bin/env bash
# Builds the merge test's .NET projects into build/merge/: the test template (Template/), a template
# outside the merger's subset (BadTemplate/), the probe's host for .NET (Host/) and, with mcs, for
# Mono (build/merge/Host.exe). Does nothing when the build is newer than every source; quiet on
# success, prints the log and exits 1 on failure.
set -u
cd "$(dirname "$0")/../.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
export MSBUILDDISABLENODEREUSE=1 DOTNET_CLI_USE_MSBUILD_SERVER=0
out=build/merge
stamp=$out/.built
if [ -f "$stamp" ] && [ -z "$(find tests/merge -type f -newer "$stamp" | head -n 1)" ]; then
	exit 0
fi
mkdir -p build/logs "$out"
log=build/logs/merge-build.log
: >"$log"
for project in Template BadTemplate Host; do
	if ! dotnet build "tests/merge/$project/$project.csproj" -c Release -nologo -v q -nodeReuse:false \
		-p:UseSharedCompilation=false >>"$log" 2>&1; then
		cat "$log" >&2
		echo "tests/merge/build.sh: building $project failed (log: $log)" >&2
		exit 1
	fi
done
if ! mcs -out:"$out/Host.exe" tests/merge/Host/Host.cs >>"$log" 2>&1; then
	cat "$log" >&2
	echo "tests/merge/build.sh: building the Mono host failed (log: $log)" >&2
	exit 1
fi
touch "$stamp"
