#!/usr/bin/env bash
# What the run-time's start and exit add to a whole process: bench/start (one uncontended lock, then one line),
# built un-woven and woven (the default settings: its summary is printed at exit), JIT-compiled (dotnet build) and
# published ReadyToRun, and run ROUNDS times (default 21) per build, the four interleaved in each round. Prints
# the medians of the process's wall time (fork to exit, `dotnet App.dll`), the woven minus the un-woven, and the
# same woven with LOCKTIME_SUMMARY=0 (no summary: the start and an exit with nothing to write); the target: at
# most 3 ms added. LOCKTIME: another weaver (another run-time: main's, to compare).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
locktime=$(realpath "${LOCKTIME:-build/locktime}")
rounds=${ROUNDS:-21}
out=$root/build/bench/start
[ -n "${LOCKTIME:-}" ] || make -s build/locktime
rm -rf "$out"
mkdir -p "$out"
build() { # NAME [MSBuild arguments...]: bench/start built into $out/NAME
	local name=$1
	shift
	mkdir -p "$out/src-$name"
	cp bench/start/Program.cs bench/start/OneLock.csproj "$out/src-$name/"
	timeout 600 dotnet "$@" "$out/src-$name/OneLock.csproj" -c Release -o "$out/$name" -nologo -v q \
		-p:UseSharedCompilation=false >"$out/$name.log" 2>&1 || { cat "$out/$name.log"; exit 1; }
}
build plain build
build woven build -p:LockTimeExe="$locktime"
build plain-r2r publish -r linux-x64 --self-contained false -p:PublishReadyToRun=true
build woven-r2r publish -r linux-x64 --self-contained false -p:PublishReadyToRun=true -p:LockTimeExe="$locktime"
"$locktime" list "$out/woven/OneLock.dll" | grep -q '(woven)$' || { echo "start: the woven build is not woven" >&2; exit 1; }
"$locktime" list "$out/src-woven-r2r/obj/Release/net10.0/linux-x64/OneLock.dll" | grep -q '(woven)$' ||
	{ echo "start: the woven ReadyToRun build is not woven" >&2; exit 1; }
ms() { # CMD...: the wall time of one run in tenths of a millisecond (its output dropped)
	local s e
	s=$(date +%s%N)
	timeout 60 "$@" >/dev/null 2>&1
	e=$(date +%s%N)
	echo $(((e - s) / 100000))
}
median() { sort -n | awk '{ a[NR] = $1 } END { printf "%.1f", a[int((NR + 1) / 2)] / 10 }'; }
declare -A t
kinds="plain woven woven-nosummary plain-r2r woven-r2r woven-r2r-nosummary"
for r in $(seq "$rounds"); do
	t[plain]+=" $(ms dotnet "$out/plain/OneLock.dll")"
	t[woven]+=" $(ms dotnet "$out/woven/OneLock.dll")"
	t[woven-nosummary]+=" $(ms env LOCKTIME_SUMMARY=0 dotnet "$out/woven/OneLock.dll")"
	t[plain-r2r]+=" $(ms dotnet "$out/plain-r2r/OneLock.dll")"
	t[woven-r2r]+=" $(ms dotnet "$out/woven-r2r/OneLock.dll")"
	t[woven-r2r-nosummary]+=" $(ms env LOCKTIME_SUMMARY=0 dotnet "$out/woven-r2r/OneLock.dll")"
done
declare -A m
for k in $kinds; do m[$k]=$(printf '%s\n' ${t[$k]} | median); done
load=$(cut -d' ' -f1-3 /proc/loadavg)
for build in "" -r2r; do
	name=$([ -z "$build" ] && echo "JIT-compiled" || echo "ReadyToRun")
	plain=${m[plain$build]} woven=${m[woven$build]} quiet=${m[woven$build-nosummary]}
	added=$(awk -v a="$woven" -v b="$plain" 'BEGIN { printf "%+.1f", a - b }')
	quiet_added=$(awk -v a="$quiet" -v b="$plain" 'BEGIN { printf "%+.1f", a - b }')
	met=$(awk -v a="$woven" -v b="$plain" 'BEGIN { print (a - b <= 3) ? "met" : "NOT MET" }')
	echo "start: $name, medians of $rounds interleaved runs (load $load): un-woven $plain ms, woven $woven ms ($added ms), woven without the summary $quiet ms ($quiet_added ms); target at most 3 ms added: $met"
	echo "start: $name runs (0.1 ms): un-woven [${t[plain$build]# }], woven [${t[woven$build]# }], without the summary [${t[woven$build-nosummary]# }]"
done
