#!/usr/bin/env bash
# What a slow lock's call stack costs: bench/stacks, built, woven by `locktime weave`, run ROUNDS times (default 5)
# per case, interleaved. Prints the medians of the program's own CPU time over its loop (after a warm-up):
#   - one capture (StackCapture.Take, 32 frames at most, from 10 and 40 calls deep): the time per capture;
#   - a program whose every lock is slow (threshold 0, 200,000 acquisitions 10 calls deep, lines to /dev/null):
#     stacks on (LOCKTIME_STACK_DEPTH=32) against off (0), per acquisition: what the bounded capture adds when
#     the captures a second are spent (the rest counted as not captured).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
locktime=${LOCKTIME:-build/locktime}
rounds=${ROUNDS:-5}
out=build/bench/stacks
[ -n "${LOCKTIME:-}" ] || make -s build/locktime
rm -rf "$out"
mkdir -p "$out"
cp bench/stacks/Program.cs bench/stacks/StacksBench.csproj "$out/"
timeout 600 dotnet build "$out/StacksBench.csproj" -c Release -o "$out/woven" -nologo -v q -p:UseSharedCompilation=false >"$out/build.log"
"$locktime" weave -q --threshold-ms 0 "$out/woven/StacksBench.dll"
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
cpu() { timeout 900 env LOCKTIME_SUMMARY=0 LOCKTIME_LINES=all LOCKTIME_OUTPUT=/dev/null "$@" dotnet "$out/woven/StacksBench.dll" $args 2>/dev/null |
	awk '/^elapsed/ { print $4 }'; }
for depth in 10 40; do
	n=2000 args="capture 2000 $depth" times=()
	for r in $(seq "$rounds"); do times+=("$(cpu)"); done
	m=$(printf '%s\n' "${times[@]}" | median)
	echo "stacks: one capture, $depth calls deep (32 frames kept): $(awk -v m="$m" -v n="$n" 'BEGIN { printf "%.1f", m * 1000 / n }') us (median of $rounds, CPU $m ms for $n; [${times[*]}] ms)"
done
n=200000 args="locks 200000 10" on=() off=()
for r in $(seq "$rounds"); do
	off+=("$(cpu LOCKTIME_STACK_DEPTH=0)")
	on+=("$(cpu LOCKTIME_STACK_DEPTH=32)")
done
m_off=$(printf '%s\n' "${off[@]}" | median)
m_on=$(printf '%s\n' "${on[@]}" | median)
echo "stacks: every lock slow (threshold 0, $n acquisitions 10 calls deep, lines to /dev/null), medians of $rounds, CPU: stacks off $m_off ms, on $m_on ms: $(awk -v a="$m_on" -v b="$m_off" -v n="$n" 'BEGIN { printf "%+.0f ns per acquisition (%.2fx)", (a - b) * 1e6 / n, a / b }'); on [${on[*]}], off [${off[*]}]"
