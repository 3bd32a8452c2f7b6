#!/usr/bin/env bash
# The file sink under load: bench/sink (64 threads on 8 locks, 128,000 acquisitions) woven with
# `locktime weave --threshold-ms 0`, run ROUNDS times (default 5) with LOCKTIME_DISABLED=1 and with
# LOCKTIME_OUTPUT=FILE and LOCKTIME_LINES=all (every acquisition a line); the medians of the program's own wall time, their
# ratio (the issue's target: the file sink at least a third as fast), and whether every line of the
# file is whole (lines the full queue dropped are counted by the run-time, not torn).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
locktime=${LOCKTIME:-build/locktime}
rounds=${ROUNDS:-5}
out=build/bench/sink
[ -n "${LOCKTIME:-}" ] || make -s build/locktime
rm -rf "$out"
mkdir -p "$out"
cp -r bench/sink/Program.cs bench/sink/Sink.csproj "$out/"
dotnet build "$out/Sink.csproj" -c Release -o "$out/bin" -nologo -v q -p:UseSharedCompilation=false >"$out/build.log"
"$locktime" weave -q --threshold-ms 0 "$out/bin/Sink.dll"
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
off=() on=()
for r in $(seq "$rounds"); do
	off+=("$(LOCKTIME_DISABLED=1 dotnet "$out/bin/Sink.dll" | awk '{ print $2 }')")
	rm -f "$out/lines.log"
	on+=("$(LOCKTIME_SUMMARY=0 LOCKTIME_LINES=all LOCKTIME_OUTPUT="$out/lines.log" dotnet "$out/bin/Sink.dll" | awk '{ print $2 }')")
	lines=$(wc -l <"$out/lines.log")
	torn=$(grep -cvE '^LockTime: Program::Work held [0-9]+\.[0-9]{3} ms, waited [0-9]+\.[0-9]{3} ms at [^ ]+( \(held by Program::Work at [^ ]+\))?$' "$out/lines.log" || true)
done
m_off=$(printf '%s\n' "${off[@]}" | median)
m_on=$(printf '%s\n' "${on[@]}" | median)
ratio=$(awk -v a="$m_off" -v b="$m_on" 'BEGIN { printf "%.2f", a / b }')
echo "sink: $rounds round(s), medians of the program's wall time: LOCKTIME_DISABLED=1 $m_off ms, file sink at threshold 0 $m_on ms: $ratio as fast (rounds: off [${off[*]}], on [${on[*]}])"
echo "sink: last round's file: $lines lines, $torn not whole"
met=$(awk -v r="$ratio" 'BEGIN { print (r >= 1 / 3) ? "met" : "NOT MET" }')
echo "sink: target file sink at least 1/3 as fast as disabled: $ratio, $met; every line whole: $([ "$torn" = 0 ] && echo met || echo "NOT MET")"
