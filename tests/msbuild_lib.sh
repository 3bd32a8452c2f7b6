#!/usr/bin/env bash
# Shared by the suites that build real projects with the LockTime package (tests/integration/msbuild.sh,
# testgate.sh): source it instead of lib.sh, as the script's first command, with the script's arguments:
#   source "$(dirname "$0")/../msbuild_lib.sh" "$@"
# - Runs share the packages folder and build/LockTime.<version>.nupkg: one suite at a time. The script runs
#   again under flock -o (which holds the lock itself, so that no process a build leaves behind keeps it).
# - Then sources lib.sh, builds the package (make package) and ltcheck, and sets VERSION (the package's, from
#   build/package/dev.version), NUPKG, STATIC (the static locktime the package ships), LockTimeTestVersion
#   (read by the projects of tests/msbuild/) and DOTNET_OPTS; no MSBuild node or compiler server may outlive a build (they would hold the test's output
#   pipe open).
# - msbuild_feed WORK FEED: a local folder feed FEED holding the package, and WORK/nuget.config adding it to
#   the configured sources (the other packages come from those); NUGET_PACKAGES is build/msbuild/nuget
#   packages (a path with a space), kept between runs for the other packages, from which LockTime is
#   removed so that each run extracts the fresh package.
# - dn, fails, one_error: dotnet commands whose logs the tests read.
if [ -z "${LT_MSBUILD_LOCKED:-}" ]; then
	lock=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/msbuild/lock
	mkdir -p "${lock%/*}"
	LT_MSBUILD_LOCKED=1 exec flock -o "$lock" bash "$0" "$@"
fi
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export MSBUILDDISABLENODEREUSE=1 DOTNET_CLI_USE_MSBUILD_SERVER=0
DOTNET_OPTS=(-nologo -tl:off -nodeReuse:false -p:UseSharedCompilation=false)
STATIC=$LT_BUILD/package/dev/linux-x64/locktime # the binary the package carries (Makefile)

check "make package" make -s -C "$LT_ROOT" package || exit 1
VERSION=$(cat "$LT_BUILD/package/dev.version") # cli.h's version, -dev.<time> (Makefile)
export LockTimeTestVersion=$VERSION
NUPKG=$LT_BUILD/LockTime.$VERSION.nupkg
check "ltcheck builds" tools_build || exit 1

msbuild_feed() { # WORK FEED
	export NUGET_PACKAGES="$LT_BUILD/msbuild/nuget packages"
	rm -rf "$NUGET_PACKAGES/locktime"
	mkdir -p "$2" "$NUGET_PACKAGES" "$1"
	cp "$NUPKG" "$2/"
	cat >"$1/nuget.config" <<EOF
<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <add key="locktime-test" value="$2" />
  </packageSources>
</configuration>
EOF
}

# dn LOG ARGS...: dotnet ARGS into LOG; on failure, prints the log's errors and keeps it in build/logs/.
dn() {
	local log=$1 rc
	shift
	# Bounded: a hung build or test host fails its check instead of stalling the run.
	timeout -k 10 "$LT_DOTNET_TIMEOUT" dotnet "$@" "${DOTNET_OPTS[@]}" >"$log" 2>&1
	rc=$?
	[ "$rc" -eq 0 ] && return 0
	[ "$rc" -eq 124 ] && echo "dotnet $1: timed out after $LT_DOTNET_TIMEOUT s"
	grep -E ': (error|warning) ' "$log" | sort -u | tail -n 10
	mkdir -p "$LT_BUILD/logs" && cp "$log" "$LT_BUILD/logs/msbuild-${log##*/}" && echo "(log: build/logs/msbuild-${log##*/})"
	return 1
}
# fails LOG PATTERN ARGS...: dotnet ARGS fails, and LOG has an error line matching PATTERN.
fails() {
	local log=$1 pattern=$2
	shift 2
	timeout -k 10 "$LT_DOTNET_TIMEOUT" dotnet "$@" "${DOTNET_OPTS[@]}" >"$log" 2>&1 && { echo "the build succeeded"; return 1; }
	grep -qE "$pattern" "$log" || { grep -E ': error ' "$log" | sort -u | tail -n 5; return 1; }
}
# one_error LOG PATTERN ARGS...: as fails, and it is the build's only error.
one_error() {
	fails "$@" && grep -qE '^ +1 Error\(s\)' "$1" || { grep -E 'Error\(s\)|: error ' "$1" | sort -u; return 1; }
}
