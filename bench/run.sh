#!/usr/bin/env bash
# make bench: every benchmark, one after another, then their figures into BENCHMARKS.md.
#   bench/run.sh [weave] [scaling] [calls] [lockmethods] [build] [runtime] [size] [sink] [lockorder] [stacks] [start]  (default: all eleven)
#   calls: one method of 1,000 to 32,000 lock calls (verified, not JIT-compiled: the JIT takes
#   minutes on such a method; BENCHMARKS.md has a one-off JIT check at 20,000), lockmethods:
#   10,000 to 100,000 methods that all hold a lock, JIT-compiled; each fitted with a line.
# Each part prints one summary line per figure ("weave: ...", "fit: ...", "build: ...",
# "runtime: ...", "size: ...", "lockorder: ...", "stacks: ...", "start: ..."); its whole output goes to build/bench/<part>.log.  The machine, the date, the
# commands and those lines replace the part of BENCHMARKS.md between its "results" markers; the
# text around them (what the figures mean, targets met or missed) is kept.
# Before the weave part, bench/cecil/check.sh checks that the Cecil reference weaver does the same job
# (build/bench/reference.log).  Run it on an otherwise idle machine: the figures are wall times.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(weave scaling calls lockmethods build runtime size sink lockorder stacks start)
mkdir -p build/bench

make -s build/locktime build/static/locktime
declare -A cmd=(
	[weave]="bash bench/weave/run.sh"
	[scaling]="bash bench/gen/run.sh"
	[calls]="env CALLS=1 CHECK_JIT=0 REPEAT=5 bash bench/gen/run.sh 1000 2000 4000 8000 16000 32000"
	[lockmethods]="env LOCK_PERCENT=100 REPEAT=3 bash bench/gen/run.sh 10000 25000 50000 100000"
	[build]="bash bench/build/run.sh"
	[runtime]="bash bench/runtime/run.sh"
	[size]="bash bench/size/run.sh"
	[sink]="bash bench/sink/run.sh"
	[lockorder]="bash bench/lockorder/run.sh"
	[stacks]="bash bench/stacks/run.sh"
	[start]="bash bench/start/run.sh"
)
status=0
# The weave figures compare like with like only if the reference weaver does locktime's job.
if [[ " ${parts[*]} " == *" weave "* ]] && ! bash bench/cecil/check.sh >build/bench/reference.log 2>&1; then
	echo "bench/run.sh: the Cecil reference weaver failed its checks (build/bench/reference.log)" >&2
	status=1
fi
for part in "${parts[@]}"; do
	[ -n "${cmd[$part]:-}" ] || { echo "bench/run.sh: no part '$part' (weave, scaling, calls, lockmethods, build, runtime, size, sink, lockorder, stacks, start)" >&2; exit 2; }
	echo "== $part: ${cmd[$part]}"
	if ! ${cmd[$part]} 2>&1 | tee "build/bench/$part.log"; then
		echo "bench/run.sh: $part failed (build/bench/$part.log)" >&2
		status=1
	fi
done
python3 bench/report.py BENCHMARKS.md "${parts[@]}"
exit "$status"
