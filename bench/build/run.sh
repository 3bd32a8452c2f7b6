#!/usr/bin/env bash
# Build overhead of the LockTime package: the sample app (tests/demo/SlowLock) built with `dotnet
# build` three ways from a local folder feed - without a package, with an empty package that has only
# a build/.props and a build/.targets (what any package with build targets costs: NuGet's generated
# imports and their evaluation), and with LockTime - alternating, RUNS times each (default 5):
#   - a full build (bin/ and obj/ removed, build server shut down);
#   - a no-change build right after, which must not run the weaver (the stamp and the woven assembly
#     keep their times; checked every run).
# LockTime's own targets are timed from MSBuild's performance summary of one full and one no-change
# build. Lines:
#   build: LockTime's own MSBuild targets (median): 55 ms in a full build, 2 ms in a no-change build
#   build: no-change 1.21 s without a package, 1.30 s with an empty one (.props + .targets), 1.31 s with LockTime [median of 5]
#   build: full ...
set -euo pipefail
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
export MSBUILDDISABLENODEREUSE=1 DOTNET_CLI_USE_MSBUILD_SERVER=0
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
runs=${RUNS:-5}
out=$root/build/bench/build
version=$(sed -n 's/^#define LOCKTIME_VERSION "\(.*\)"$/\1/p' weaver/cli/cli.h)
make -s package
rm -rf "$out" && mkdir -p "$out/feed" "$out/empty/build"
export NUGET_PACKAGES=$out/packages
cp "build/LockTime.$version.nupkg" "$out/feed/"
echo '<Project />' >"$out/empty/build/EmptyBuildAssets.props"
echo '<Project />' >"$out/empty/build/EmptyBuildAssets.targets"
cat >"$out/empty/EmptyBuildAssets.nuspec" <<'SPEC'
<?xml version="1.0"?>
<package><metadata><id>EmptyBuildAssets</id><version>1.0.0</version><authors>bench</authors>
<description>A package with an empty build/.props and build/.targets.</description><developmentDependency>true</developmentDependency></metadata></package>
SPEC
python3 - "$out/feed/EmptyBuildAssets.1.0.0.nupkg" "$out/empty" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for name in ("EmptyBuildAssets.nuspec", "build/EmptyBuildAssets.props", "build/EmptyBuildAssets.targets"):
        z.write(os.path.join(sys.argv[2], name), name)
PY
cat >"$out/nuget.config" <<CONFIG
<configuration><packageSources><clear /><add key="bench" value="$out/feed" /></packageSources></configuration>
CONFIG
app() { # NAME PACKAGE_REFERENCE
	mkdir -p "$out/$1"
	cp tests/demo/SlowLock/Program.cs "$out/$1/"
	cat >"$out/$1/$1.csproj" <<PROJ
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup><OutputType>Exe</OutputType><TargetFramework>net10.0</TargetFramework><ImplicitUsings>enable</ImplicitUsings><Nullable>enable</Nullable></PropertyGroup>
  <ItemGroup>$2</ItemGroup>
</Project>
PROJ
}
app NoPackage ""
app EmptyPackage '<PackageReference Include="EmptyBuildAssets" Version="1.0.0" PrivateAssets="all" />'
app WithLockTime "<PackageReference Include=\"LockTime\" Version=\"$version\" PrivateAssets=\"all\" />"
kinds=(NoPackage EmptyPackage WithLockTime)
opts=(-nologo -v q --no-restore -nodeReuse:false)
for k in "${kinds[@]}"; do
	dotnet restore "$out/$k" -nologo -v q >/dev/null
done

median() { python3 -c 'import statistics, sys; print("%.2f" % statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
seconds() { # CMD...: wall seconds of CMD
	local s e
	s=$(date +%s.%N)
	"$@" >/dev/null 2>&1 || { echo "bench/build/run.sh: failed: $*" >&2; exit 1; }
	e=$(date +%s.%N)
	python3 -c "print($e - $s)"
}
stamp=$out/WithLockTime/obj/Debug/net10.0/WithLockTime.dll.locktime.stamp
woven=$out/WithLockTime/obj/Debug/net10.0/WithLockTime.dll
declare -A full nochange
for ((i = 0; i < runs; i++)); do
	for k in "${kinds[@]}"; do
		rm -rf "$out/$k/bin" "$out/$k/obj/Debug"
		dotnet build-server shutdown >/dev/null 2>&1 || true
		full[$k]+=" $(seconds dotnet build "$out/$k" "${opts[@]}")"
		if [ "$k" = WithLockTime ]; then
			before=$(stat -c %Y.%y "$stamp" "$woven")
		fi
		nochange[$k]+=" $(seconds dotnet build "$out/$k" "${opts[@]}")"
		if [ "$k" = WithLockTime ] && [ "$before" != "$(stat -c %Y.%y "$stamp" "$woven")" ]; then
			echo "bench/build/run.sh: the no-change build ran the weaver" >&2
			exit 1
		fi
	done
done
"$out/WithLockTime/bin/Debug/net10.0/WithLockTime" 2>&1 | grep -q '^LockTime: Shop.Inventory::Reserve' ||
	{ echo "bench/build/run.sh: the woven app does not report" >&2; exit 1; }

# LockTime's targets (their names start with LockTime or _LockTime) in the performance summary.
targets_ms() { # LOG
	awk '/Target Performance Summary:/ { on = 1 } /Task Performance Summary:/ { on = 0 }
	     on && $3 ~ /^_?LockTime/ { ms += $1 } END { print ms + 0 }' "$1"
}
rm -rf "$out/WithLockTime/bin" "$out/WithLockTime/obj/Debug"
dotnet build "$out/WithLockTime" "${opts[@]}" -clp:PerformanceSummary >"$out/perf-full.log" 2>&1
dotnet build "$out/WithLockTime" "${opts[@]}" -clp:PerformanceSummary >"$out/perf-nochange.log" 2>&1
echo "build: LockTime's own MSBuild targets: $(targets_ms "$out/perf-full.log") ms in a full build, $(targets_ms "$out/perf-nochange.log") ms in a no-change build"
for what in nochange full; do
	declare -n t=$what
	echo "build: ${what/nochange/no-change} $(median ${t[NoPackage]}) s without a package, $(median ${t[EmptyPackage]}) s with an empty one (.props + .targets), $(median ${t[WithLockTime]}) s with LockTime [median of $runs]"
done
