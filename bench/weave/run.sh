#!/usr/bin/env bash
# Weave speed and memory, side by side: `locktime weave -o OUT IN`, the Mono.Cecil reference
# weaver (bench/cecil) and a `cp IN OUT` of the same file, taking turns (one run of each, then the
# next: medians of alternating runs), RUNS runs each (default 5).
#   bench/weave/run.sh [INPUT.dll...]
# Default inputs: Debian Mono's mscorlib.dll and System.dll, the NuGet libraries of the test corpus
# (build/corpus/thirdparty) and the largest generated library (bench/gen, 100k methods).
# Per input, one line:
#   weave: mscorlib.dll 4.59 MiB, 466 sites: locktime 0.071 s (CPU 0.066 s, peak 16.8 MiB = 3.7x input);
#          Cecil 1.52 s (in process 1.10 s, peak 95.1 MiB); Cecil/LockTime 21.4x; cp 0.012 s, LockTime/cp 5.9x;
#          load 1.2-1.5
# and a tab-separated row in build/bench/weave.tsv for the report (bench/report.py).
# Wall time is the median from start to exit (the Cecil figure includes starting .NET, as a build
# that runs it as a tool would pay); "in process" is CecilWeaver's own read+weave+write time in the
# last run; "load" the load average (1 minute) before and after the input's runs.
# locktime's time includes its fsync of the output (a durable, atomic replace); cp's has none.
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
printf 'input\tbytes\tsites\tlt_s\tlt_cpu_s\tlt_rss_kib\tcecil_s\tcecil_inproc_s\tcecil_rss_kib\tcecil_sites\tcp_s\tload\n' >"$tsv"
for in in "${inputs[@]}"; do
	name=$(basename "$in")
	# Each tool writes into its own folder, under the input's name so a PDB lands beside it.
	mkdir -p "$out/locktime" "$out/cecil" "$out/cp"
	load=$(cut -d' ' -f1 /proc/loadavg)
	all=$($measure --stdout-last -- "$locktime" weave -q -o "$out/locktime/$name" "$in" \
		--and dotnet build/bench/cecil/CecilWeaver.dll "$in" "$out/cecil/$name" \
		--and cp "$in" "$out/cp/$name")
	load="$load-$(cut -d' ' -f1 /proc/loadavg)"
	lt=$(grep '^median_s=' <<<"$all" | sed -n 1p)
	cecil=$(grep '^median_s=' <<<"$all" | sed -n 2p)
	cp_line=$(grep '^median_s=' <<<"$all" | sed -n 3p)
	sites=$("$locktime" list "$in" | wc -l)
	# Only CecilWeaver prints these (locktime runs with -q, cp prints nothing).
	cecil_sites=$(sed -n 's/^.*: \([0-9]*\) sites woven.*$/\1/p' <<<"$all" | head -n 1)
	inproc_ms=$(sed -n 's/^time_ms .*total=\([0-9.]*\).*$/\1/p' <<<"$all" | tail -n 1)
	field() { sed -n "s/^.*\b$1=\([0-9.]*\).*$/\1/p" <<<"$2" | head -n 1; }
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$(stat -L -c %s "$in")" "$sites" \
		"$(field median_s "$lt")" "$(field cpu_s "$lt")" "$(field peak_rss_kib "$lt")" \
		"$(field median_s "$cecil")" "$(awk -v m="$inproc_ms" 'BEGIN { printf "%.4f", m / 1000 }')" \
		"$(field peak_rss_kib "$cecil")" "$cecil_sites" "$(field median_s "$cp_line")" "$load" >>"$tsv"
	tail -n 1 "$tsv" | awk -F'\t' '{
		mib = $2 / 1048576
		printf "weave: %s %.2f MiB, %d sites: locktime %.3f s (CPU %.3f s, peak %.1f MiB = %.1fx input); ", $1, mib, $3, $4, $5, $6 / 1024, $6 * 1024 / $2
		printf "Cecil %.2f s (in process %.2f s, peak %.1f MiB, %s sites); Cecil/LockTime %.1fx; ", $7, $8, $9 / 1024, $10, $7 / $4
		printf "cp %.3f s, LockTime/cp %.1fx; load %s\n", $11, $4 / $11, $12
	}'
done
