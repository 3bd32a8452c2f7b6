#!/usr/bin/env bash
# The file sink at steady state: bench/sink (64 threads, each taking one of 8 locks ITERATIONS times,
# default 20,000: 1.28 million acquisitions) woven with `locktime weave --threshold-ms 0`, so that every
# acquisition is a line, and run ROUNDS times (default 5), each round LOCKTIME_DISABLED=1 then
# LOCKTIME_OUTPUT=FILE with LOCKTIME_LINES=all (no rate limit), interleaved. Per run the process's CPU time (user + system, /usr/bin/time),
# the lines in the file, those not whole, and the lines the run-time says it dropped or left unwritten
# (its report). The issue's targets: every line written in every run, at most 250 ns of process CPU per
# line beyond LOCKTIME_DISABLED=1 (medians; judged only when every line was written), every line whole.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
locktime=${LOCKTIME:-build/locktime}
rounds=${ROUNDS:-5}
iterations=${ITERATIONS:-20000}
out=build/bench/sink
[ -n "${LOCKTIME:-}" ] || make -s build/locktime
rm -rf "$out"
mkdir -p "$out"
cp -r bench/sink/Program.cs bench/sink/Sink.csproj "$out/"
dotnet build "$out/Sink.csproj" -c Release -o "$out/bin" -nologo -v q -p:UseSharedCompilation=false >"$out/build.log"
"$locktime" weave -q --threshold-ms 0 "$out/bin/Sink.dll"
expected=$((64 * iterations))
whole='^LockTime: Program::Work held [0-9]+\.[0-9]{3} ms, waited [0-9]+\.[0-9]{3} ms at [^ ]+( \(held by Program::Work at [^ ]+\))?$'
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# run NAME ENV...: runs the program with ENV; prints "CPU-ms wall-ms"
run() {
	local name=$1
	shift
	env "$@" /usr/bin/time -f '%U %S' -o "$out/$name.time" timeout 600 dotnet "$out/bin/Sink.dll" "$iterations" >"$out/$name.out"
	awk '{ printf "%.0f ", ($1 + $2) * 1000 }' "$out/$name.time"
	awk '{ print $2 }' "$out/$name.out"
}
cpu_off=() cpu_on=() wall_off=() wall_on=() written=() torn_all=() lost_all=()
for r in $(seq "$rounds"); do
	read -r c w < <(run off LOCKTIME_DISABLED=1)
	cpu_off+=("$c") wall_off+=("$w")
	rm -f "$out/lines.log" "$out/report.json"
	read -r c w < <(run on LOCKTIME_SUMMARY=0 LOCKTIME_LINES=all LOCKTIME_OUTPUT="$out/lines.log" LOCKTIME_REPORT="$out/report.json")
	cpu_on+=("$c") wall_on+=("$w")
	written+=("$(wc -l <"$out/lines.log")")
	torn_all+=("$(grep -cvE "$whole" "$out/lines.log" || true)")
	lost_all+=("$(grep -oE '"(dropped_lines|unwritten_lines)": *[0-9]+' "$out/report.json" | awk -F: '{ n += $2 } END { print n + 0 }')")
done
m_off=$(printf '%s\n' "${cpu_off[@]}" | median)
m_on=$(printf '%s\n' "${cpu_on[@]}" | median)
per_line=$(awk -v a="$m_off" -v b="$m_on" -v n="$expected" 'BEGIN { printf "%.0f", (b - a) * 1e6 / n }')
echo "sink: $rounds round(s) of $expected lines, interleaved, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "sink: process CPU (user + system), medians: LOCKTIME_DISABLED=1 $m_off ms, file sink at threshold 0 $m_on ms: $per_line ns per line (rounds: off [${cpu_off[*]}], on [${cpu_on[*]}])"
echo "sink: the program's wall time, medians: off $(printf '%s\n' "${wall_off[@]}" | median) ms, on $(printf '%s\n' "${wall_on[@]}" | median) ms"
echo "sink: lines in the file per run [${written[*]}], not whole [${torn_all[*]}], dropped or unwritten by the run-time's count [${lost_all[*]}]"
all=met
for n in "${written[@]}"; do [ "$n" = "$expected" ] || all="NOT MET"; done
torn=met
for n in "${torn_all[@]}"; do [ "$n" = 0 ] || torn="NOT MET"; done
# The CPU per line counts only when every line was written: a dropped line costs the writer nothing.
if [ "$all" = met ]; then
	cpu=$([ "$per_line" -le 250 ] && echo met || echo "NOT MET")
else
	cpu="not judged (lines dropped: the writer's part missing)"
fi
echo "sink: targets: every line written in every run: $all; at most 250 ns of process CPU per line: $per_line, $cpu; every line whole: $torn"
