#!/usr/bin/env bash
# Weave speed and memory, side by side: `locktime weave -o OUT IN` and the Mono.Cecil reference
# weaver (bench/cecil) on the same inputs, in the same run, RUNS times each (default 5).
#   bench/weave/run.sh [INPUT.dll...]
# Default inputs: Debian Mono's mscorlib.dll and System.dll, the NuGet libraries of the test corpus
# (build/corpus/thirdparty) and the largest generated library (bench/gen, 100k methods).
# Per input, one line:
#   weave: mscorlib.dll 4.59 MiB, 466 sites: locktime 0.071 s (CPU 0.066 s, peak 16.8 MiB = 3.7x input);
#          Cecil 1.52 s (in process 1.10 s, peak 95.1 MiB); Cecil/LockTime 21.4x
# and a tab-separated row in build/bench/weave.tsv for the report (bench/report.py).
# Wall time is the median from start to exit (the Cecil figure includes starting .NET, as a build
# that runs it as a tool would pay); "in process" is CecilWeaver's own read+weave+write time in the
# last run.
# locktime's time includes its fsync of the output (a durable, atomic replace).
set -euo pipefail
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
runs=${RUNS:-5}
locktime=${LOCKTIME:-build/static/locktime} # the binary the NuGet package ships
out=build/bench/weave
measure="python3 bench/lib/measure.py $runs"
tsv=build/bench/weave.tsv

[ -n "${LOCKTIME:-}" ] || make -s build/static/locktime
bash bench/cecil/build.sh
inputs=("$@")
if [ ${#inputs[@]} -eq 0 ]; then
	bash tests/corpus/build.sh
	bash bench/gen/build.sh 100000
	inputs=(/usr/lib/mono/4.5/mscorlib.dll /usr/lib/mono/4.5/System.dll)
	for name in Newtonsoft.Json NLog Serilog log4net Polly; do
		[ -f "build/corpus/thirdparty/$name.dll" ] && inputs+=("build/corpus/thirdparty/$name.dll")
	done
	inputs+=(build/bench/gen/100000/Gen100000.dll)
fi

mkdir -p "$out"
printf 'input\tbytes\tsites\tlt_s\tlt_cpu_s\tlt_rss_kib\tcecil_s\tcecil_inproc_s\tcecil_rss_kib\tcecil_sites\n' >"$tsv"
for in in "${inputs[@]}"; do
	name=$(basename "$in")
	# Each tool writes into its own folder, under the input's name so a PDB lands beside it.
	mkdir -p "$out/locktime" "$out/cecil"
	lt=$($measure -- "$locktime" weave -q -o "$out/locktime/$name" "$in")
	cecil=$($measure --stdout-last -- dotnet build/bench/cecil/CecilWeaver.dll "$in" "$out/cecil/$name")
	sites=$("$locktime" list "$in" | wc -l)
	cecil_sites=$(sed -n 's/^.*: \([0-9]*\) sites woven.*$/\1/p' <<<"$cecil" | head -n 1)
	inproc_ms=$(sed -n 's/^time_ms .*total=\([0-9.]*\).*$/\1/p' <<<"$cecil" | tail -n 1)
	field() { sed -n "s/^.*\b$1=\([0-9.]*\).*$/\1/p" <<<"$2" | head -n 1; }
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$(stat -L -c %s "$in")" "$sites" \
		"$(field median_s "$lt")" "$(field cpu_s "$lt")" "$(field peak_rss_kib "$lt")" \
		"$(field median_s "$cecil")" "$(awk -v m="$inproc_ms" 'BEGIN { printf "%.4f", m / 1000 }')" \
		"$(field peak_rss_kib "$cecil")" "$cecil_sites" >>"$tsv"
	tail -n 1 "$tsv" | awk -F'\t' '{
		mib = $2 / 1048576
		printf "weave: %s %.2f MiB, %d sites: locktime %.3f s (CPU %.3f s, peak %.1f MiB = %.1fx input); ", $1, mib, $3, $4, $5, $6 / 1024, $6 * 1024 / $2
		printf "Cecil %.2f s (in process %.2f s, peak %.1f MiB, %s sites); Cecil/LockTime %.1fx\n", $7, $8, $9 / 1024, $10, $7 / $4
	}'
done
