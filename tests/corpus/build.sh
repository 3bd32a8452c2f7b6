#!/usr/bin/env bash
# Builds the test corpus into build/corpus/: the C#, VB and F# programs (Debug and Release), the C#
# program again for net48 (net48/: the .NET SDK with the .NET Framework reference assemblies; run
# under Mono), the Mono program (mcs, with and without -debug/-optimize), and build/corpus/thirdparty/
# (real assemblies: Mono's class libraries and the DLLs of a few NuGet packages that take locks).
#   tests/corpus/build.sh [-v]     -v prints how long each step took (always logged to
#                                  build/logs/corpus-times.txt)
# Idempotent: a step whose stamp is newer than its sources is skipped. Quiet unless a step fails,
# then prints that step's log and exits 1. NuGet packages that do not restore are reported in
# build/corpus/thirdparty/MISSING.txt and are not an error.
set -u
cd "$(dirname "$0")/../.."
root=$PWD
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
# No MSBuild nodes or compiler servers may outlive the build: they would hold the caller's output
# pipe open (a test run piped through tee would never end).
export MSBUILDDISABLENODEREUSE=1 DOTNET_CLI_USE_MSBUILD_SERVER=0
DOTNET_OPTS=(-nologo -v q -nodeReuse:false -p:UseSharedCompilation=false)

verbose=0
[ "${1:-}" = -v ] && verbose=1
out=build/corpus
logs=build/logs
times=$logs/corpus-times.txt
mkdir -p "$out" "$logs"

# The NuGet packages copied into thirdparty/, pinned so the corpus does not move under the tests.
NUGET_PACKAGES_PINNED=(Newtonsoft.Json/13.0.3 Serilog/4.4.0 NLog/6.2.2 log4net/3.6.0 Polly/8.9.1 Polly.Core/8.9.1)
MONO_LIBS=(mscorlib System System.Core System.Xml System.Data)

now() { date +%s%N; }
# record STEP START: logs the seconds since START.
record() {
	local secs
	secs=$(awk -v a="$2" -v b="$(now)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
	echo "$1 ${secs}s" >>"$times"
	[ "$verbose" = 1 ] && echo "corpus: $1 ${secs}s"
	return 0
}
# fresh STAMP SOURCE...: true when STAMP exists and no SOURCE file is newer than it.
fresh() {
	local stamp=$1; shift
	[ -f "$stamp" ] && [ -z "$(find "$@" -type f -newer "$stamp" 2>/dev/null | head -n 1)" ]
}
# fail STEP LOG: prints the log of a failed step and exits.
fail() {
	cat "$2" >&2
	echo "tests/corpus/build.sh: $1 failed (log: $2)" >&2
	exit 1
}

# One .NET project: restore once, then Debug and Release (they share the restore, not the obj/ dirs).
build_dotnet() { # NAME PROJECT
	local name=$1 project=$2 log=$logs/corpus-$1.log t
	t=$(now)
	dotnet restore "$project" "${DOTNET_OPTS[@]}" >"$log" 2>&1 || return 1
	for config in Debug Release; do
		dotnet build "$project" -c "$config" --no-restore "${DOTNET_OPTS[@]}" >>"$log" 2>&1 || return 1
	done
	record "$name" "$t"
}

# The Mono program: Debug is -debug -optimize-, Release is -optimize+ with no symbols. And the
# program whose only locks are synchronized methods (synconly/).
build_mono() {
	local log=$logs/corpus-mono.log t
	t=$(now)
	mkdir -p $out/mono/Debug $out/mono/Release $out/synconly
	{
		mcs -sdk:4.5 -debug -optimize- -out:$out/mono/Debug/MonoLocks.exe tests/corpus/mono/*.cs &&
			mcs -sdk:4.5 -optimize+ -out:$out/mono/Release/MonoLocks.exe tests/corpus/mono/*.cs &&
			mcs -sdk:4.5 -optimize+ -out:$out/synconly/SyncOnly.exe tests/corpus/synconly/SyncOnly.cs
	} >"$log" 2>&1 || return 1
	record mono "$t"
}

# A scratch project that references PACKAGE/VERSION...; the local package folder is an extra
# source so that Newtonsoft.Json restores offline. Restoring is all it is for: nothing is built.
restore_packages() { # LOG PACKAGE/VERSION...
	local log=$1 dir=$out/obj/thirdparty/restore pkg refs=""
	shift
	for pkg in "$@"; do
		refs+="<PackageReference Include=\"${pkg%/*}\" Version=\"[${pkg#*/}]\" />"
	done
	mkdir -p "$dir"
	cat >"$dir/restore.csproj" <<-EOF
		<Project Sdk="Microsoft.NET.Sdk">
		  <PropertyGroup>
		    <TargetFramework>net10.0</TargetFramework>
		    <RestoreAdditionalProjectSources>/opt/nuget/packages</RestoreAdditionalProjectSources>
		  </PropertyGroup>
		  <ItemGroup>$refs</ItemGroup>
		</Project>
	EOF
	dotnet restore "$dir/restore.csproj" "${DOTNET_OPTS[@]}" >>"$log" 2>&1
}

# Copies a restored package's DLLs for the newest target framework it ships that net10.0 can load.
copy_package() { # PACKAGE/VERSION DEST
	local id version lib tfm
	id=$(echo "${1%/*}" | tr '[:upper:]' '[:lower:]') version=${1#*/}
	lib=$packages/$id/$version/lib
	for tfm in net10.0 net9.0 net8.0 net6.0 netstandard2.1 netstandard2.0; do
		if ls "$lib/$tfm/"*.dll >/dev/null 2>&1; then
			cp "$lib/$tfm/"*.dll "$2/"
			return 0
		fi
	done
	return 1
}

build_thirdparty() {
	local t dir=$out/thirdparty pkg missing=() restored=() packages log=$logs/corpus-thirdparty.log
	t=$(now)
	rm -rf "$dir"
	mkdir -p "$dir"
	: >"$log"
	for lib in "${MONO_LIBS[@]}"; do
		if [ -f /usr/lib/mono/4.5/$lib.dll ]; then
			cp /usr/lib/mono/4.5/$lib.dll "$dir/"
		else
			missing+=("mono:$lib.dll")
		fi
	done
	packages=$(dotnet nuget locals global-packages --list | sed -n 's/^global-packages: *//p')
	packages=${packages%/}
	# All in one restore; only when that fails, one at a time to find the ones that do not restore.
	if restore_packages "$log" "${NUGET_PACKAGES_PINNED[@]}"; then
		restored=("${NUGET_PACKAGES_PINNED[@]}")
	else

		for pkg in "${NUGET_PACKAGES_PINNED[@]}"; do
			if restore_packages "$log" "$pkg"; then restored+=("$pkg"); else missing+=("nuget:$pkg"); fi
		done
	fi
	for pkg in "${restored[@]}"; do
		copy_package "$pkg" "$dir" || missing+=("nuget:$pkg (no lib/ for net10.0)")
	done
	printf '%s\n' "${missing[@]}" | sed '/^$/d' >"$dir/MISSING.txt"
	record thirdparty "$t"
}

# The sources of each .NET project: its folder, and the C# files the net48 build shares.
sources() { # NAME
	echo "tests/corpus/$1 tests/corpus/Directory.Build.props"
	[ "$1" = net48 ] && echo tests/corpus/csharp
	return 0
}

# The PDB corpus (Debug/Release x portable/embedded PDB) has its own script and stamp.
bash tests/corpus/pdb/build.sh || exit 1

# Decide first what is stale, so that a run with nothing to do leaves the last timings in place.
stale=()
for name in csharp vb fsharp net48; do
	# shellcheck disable=SC2046 # sources prints paths without spaces
	fresh $out/$name/.built $(sources "$name") || stale+=("$name")
done
fresh $out/mono/.built tests/corpus/mono tests/corpus/synconly || stale+=(mono)
fresh $out/thirdparty/.built tests/corpus/build.sh || stale+=(thirdparty)
[ ${#stale[@]} -eq 0 ] && exit 0
: >"$times"

start=$(now)
pids=() names=() failed=""
for name in "${stale[@]}"; do
	case $name in
	mono)
		if build_mono; then touch $out/mono/.built; else failed=mono; fi
		;;
	thirdparty)
		build_thirdparty
		touch $out/thirdparty/.built
		;;
	*)
		# The compilers mostly wait on their own start-up, so the projects build side by side.
		project=$(find tests/corpus/$name -maxdepth 1 -name '*.*proj' | head -n 1)
		(build_dotnet "$name" "$project" && touch $out/$name/.built) &
		pids+=($!) names+=("$name")
		;;
	esac
done
# Wait for every build before reporting one that failed, so that none is left running.
for i in "${!pids[@]}"; do
	wait "${pids[$i]}" || failed=${failed:-${names[$i]}}
done
[ -n "$failed" ] && fail "$failed" "$logs/corpus-$failed.log"
record total "$start"
