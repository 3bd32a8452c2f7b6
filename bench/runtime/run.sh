#!/usr/bin/env bash
# Run-time cost of LockTime per lock acquisition, measured with BenchmarkDotNet (net10.0).
# Builds the same locked code twice (LockBench.Plain, and LockBench.Woven woven by build/locktime
# with a 1000 ms threshold so nothing is reported), then runs the in-process benchmark host in
# rounds (LOCKBENCH_ROUNDS, default 5), each round two processes:
#   timing   (LOCKTIME_DISABLED unset): plain vs woven, and the cost of Stopwatch.GetTimestamp;
#   disabled (LOCKTIME_DISABLED=1, a process of its own: the woven stub type reads it once): plain vs woven;
#   interleaved (timing on): batches of plain, woven and two clock reads taken in turn (Interleaved.cs).
# Several short rounds rather than one long run: on a shared 2-core machine other load comes and
# goes, and the median over rounds, with timing and disabled interleaved, is steadier than one run.
# Then the JIT's machine code of the plain and woven loops with LOCKTIME_DISABLED=1 (which calls
# each makes), and one line per figure with the verdict on the targets (timing on <= 40 ns added per
# uncontended acquisition, disabled <= 2 ns). Everything goes under build/bench/runtime/results/:
# roundNN/<run>/results/*.md (BenchmarkDotNet's tables), roundNN/<run>/medians.tsv, roundNN/<run>.log,
# jit-disabled.txt, summary.txt. About 3-4 minutes on a 2-core machine. Not part of `make test`.
set -euo pipefail

export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
# No MSBuild node or compiler server may outlive the build.
export MSBUILDDISABLENODEREUSE=1 DOTNET_CLI_USE_MSBUILD_SERVER=0

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out="$root/build/bench/runtime"
locktime="$root/build/locktime"
host="$out/bin/LockBench.Host/Release/net10.0/LockBench.Host.dll"
results="$out/results"
rounds=${LOCKBENCH_ROUNDS:-5}

# The weaver: built by the repository's Makefile when missing or out of date.
make -s -C "$root" build/locktime

# A clean build every time: an incremental build would keep an assembly woven by an older weaver
# (weaving a woven assembly is a no-op). The woven project weaves its DLL in obj/ (its own target).
rm -rf "$out/obj" "$out/bin" "$results"
mkdir -p "$results"
echo "runtime: building (log: $results/build.log)"
if ! dotnet build "$here/LockBench.Host/LockBench.Host.csproj" -c Release -nologo -tl:off -nodeReuse:false \
	-p:UseSharedCompilation=false -p:LockTimeExe="$locktime" >"$results/build.log" 2>&1; then
	tail -n 30 "$results/build.log" >&2
	exit 1
fi

# A run-time switch left in the caller's environment would change what is measured.
unset LOCKTIME_DISABLED LOCKTIME_THRESHOLD_MS LOCKTIME_OUTPUT

run() { # DIR LABEL [VAR=VALUE...]: one benchmark process; its checks and BenchmarkDotNet's output go to DIR/LABEL.log
	local dir=$1 label=$2
	shift 2
	mkdir -p "$dir"
	if ! env "$@" dotnet "$host" run "$label" "$dir" >"$dir/$label.log" 2>&1; then
		tail -n 40 "$dir/$label.log" >&2
		exit 1
	fi
}

{
	for ((r = 1; r <= rounds; r++)); do
		dir=$(printf '%s/round%02d' "$results" "$r")
		# The load average says whether a noisy round met a busy machine.
		echo "runtime: round $r of $rounds (load average $(cut -d' ' -f1-3 /proc/loadavg); logs: $dir/)"
		run "$dir" timing
		run "$dir" disabled LOCKTIME_DISABLED=1
		run "$dir" interleaved
	done
	# What the first round checked before measuring (every round checks the same).
	grep -h '^check: ' "$results/round01/timing.log" "$results/round01/disabled.log" | grep -E 'Disabled|at /|calls' | sed 's/^/runtime: /'

	# With LOCKTIME_DISABLED=1 the woven code should be the plain code: the JIT folds the stub type's
	# Disabled flag (static readonly, read after its class is initialized). Fully optimized code
	# (no tiering) of each loop and of the wrappers it still calls.
	echo "runtime: JIT code of the loops with LOCKTIME_DISABLED=1 (full opts; $results/jit-disabled.txt):"
	LOCKTIME_DISABLED=1 DOTNET_TieredCompilation=0 DOTNET_JitStdOutFile="$results/jit-disabled.txt" \
		DOTNET_JitDisasm='Increment Monitor_Exit Scope_Dispose Monitor_Enter_Taken Lock_EnterScope' \
		dotnet "$host" jit >"$results/jit.log" 2>&1 || { cat "$results/jit.log" >&2; exit 1; }
	# The host compiles the loops in the order plain, woven (Monitor), plain, woven (Lock); the two
	# builds' methods have the same names, so the listings are told apart by that order.
	awk '/; Assembly listing for method/ {
	         if (m != "") print m " calls" c
	         m = $6; c = ""
	         if (m ~ /:Increment\(/) m = (n++ % 2 ? "woven " : "plain ") m
	     }
	     /^ +call / { c = c " " $2 }
	     END { if (m != "") print m " calls" c }' "$results/jit-disabled.txt" | sed 's/^/runtime:   /'

	dotnet "$host" summary "$results"
} | tee "$results/summary.txt"
