#!/usr/bin/env bash
# Weave-speed benchmark: builds the generated libraries (build.sh, skipped when built), then for each
# size checks that `locktime list` finds the expected number of lock sites, weaves it with
# `locktime weave -o` REPEAT times (default 9) and checks the woven output with ltcheck (verify,
# pdb, jit).
# Reported per size: median and best wall time, median CPU time (user+sys), largest peak RSS.
# Ends with a least-squares line through the best wall times, time = fixed + per-1000-methods * size,
# and how far each size is from it: small residuals mean the weave time grows linearly with the size.
# Best-of-N is the figure to compare on a loaded machine; the median shows the noise.
#   bench/gen/run.sh [SIZES...]     sizes are method counts (default 12500 25000 50000 100000)
# Environment: REPEAT, LOCK_PERCENT (see build.sh), LOCKTIME (the binary; default build/static/locktime),
# CHECK_JIT=0 (skip the JIT check), CALLS=1 (the "lock calls per method" series: sizes are lock calls
# in one method, see build.sh).  The fit is then per 1000 lock calls; LOCK_PERCENT=100 makes it the
# "lock methods per assembly" series.
set -euo pipefail
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out_root=$root/build/bench/gen
locktime=${LOCKTIME:-$root/build/static/locktime} # the binary the NuGet package ships
ltcheck=$root/build/tools/ltcheck/ltcheck.dll
repeat=${REPEAT:-9}
pct=${LOCK_PERCENT:-5}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(12500 25000 50000 100000)

[ -n "${LOCKTIME:-}" ] || make -s -C "$root" build/static/locktime
bash "$root/tests/tools/build.sh" # ltcheck, unless up to date
bash "$here/build.sh" "${sizes[@]}"

status=0
summary=()
unit=methods
[ -z "${CALLS:-}" ] || unit="lock calls"
[ -n "${CALLS:-}" ] || [ "$pct" != 100 ] || unit="lock methods"
printf '%-8s %6s %7s %9s %9s %8s %10s %8s %5s  %s\n' size sites dll_MB median_s best_s cpu_s best/1k_ms peak_MB runs checks
for size in "${sizes[@]}"; do
	name=Gen$size expect=$((size * pct / 100))
	[ -z "${CALLS:-}" ] || name=GenCalls$size expect=$size
	dir=$out_root/${name#Gen}
	[ -n "${CALLS:-}" ] || [ "$pct" = 5 ] || dir=$dir-$pct # another LOCK_PERCENT: a library of its own
	in=$dir/$name.dll
	out=$dir/woven/$name.dll # same file name as the input, so the woven PDB sits next to it
	sites=$("$locktime" list "$in" | wc -l)
	if [ "$sites" != "$expect" ]; then
		echo "gen $size: locktime list found $sites lock sites, expected $expect" >&2
		status=1
	fi
	mkdir -p "$dir/woven"
	m=$(python3 "$root/bench/lib/measure.py" "$repeat" --prepare "rm -f '$out' '${out%.dll}.pdb'" -- \
		"$locktime" weave -q -o "$out" "$in")
	field() { sed -n "s/^.*\b$1=\([0-9.]*\).*$/\1/p" <<<"$m"; }
	wall=$(field median_s)
	best=$(field min_s)
	cpu=$(field cpu_s)
	rss=$(field peak_rss_kib)
	# The woven output: metadata and IL readable (verify), the PDB still matches the input's (pdb),
	# and every method body JIT-compiles (jit; CHECK_JIT=0 skips it, ~25 s at 100000 methods).
	verdict=""
	checks=(verify pdb)
	[ "${CHECK_JIT:-1}" = 0 ] || checks+=(jit)
	for check in "${checks[@]}"; do
		args=("$out")
		[ "$check" = pdb ] && args=("$in" "$out")
		if dotnet "$ltcheck" "$check" "${args[@]}" >"$dir/$check.log" 2>&1; then
			verdict+="$check ok "
		else
			verdict+="$check FAILED ($dir/$check.log) "
			status=1
		fi
	done
	mb=$(awk -v b="$(stat -c %s "$in")" 'BEGIN { printf "%.1f", b / 1048576 }')
	per_k=$(awk -v w="$best" -v n="$size" 'BEGIN { printf "%.3f", w * 1e6 / n }')
	printf '%-8s %6s %7s %9.3f %9.3f %8.2f %10s %8.1f %5s  %s\n' "$size" "$sites" "$mb" "$wall" "$best" "$cpu" \
		"$per_k" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" "$repeat" "$verdict"
	summary+=("$size $best $wall $cpu $rss $(stat -c %s "$in") $(stat -c %s "${in%.dll}.pdb")")
done
# Lines through (size, best wall time) and (size, median CPU time), their fit (R^2), and one summary
# line for the log.
printf '%s\n' "${summary[@]}" | awk -v unit="$unit" '
	function fit(what, col,    i, sx, sy, sxx, sxy, a, b, e, d, ss, st, r2) {
		for (i = 1; i <= n; i++) { sx += x[i]; sy += v[i, col]; sxx += x[i] * x[i]; sxy += x[i] * v[i, col] }
		b = (n * sxy - sx * sy) / (n * sxx - sx * sx); a = (sy - b * sx) / n
		for (i = 1; i <= n; i++) { e = v[i, col] - (a + b * x[i]); ss += e * e; d = v[i, col] - sy / n; st += d * d }
		r2 = 1; if (st > 0) r2 = 1 - ss / st
		printf "fit: weave %s = %.3f s + %.3f ms per 1000 %s (R^2 = %.4f)\n", what, a, b * 1e6, unit, r2
		fa = a; fb = b
	}
	{ n++; x[n] = $1; v[n, 1] = $2; v[n, 2] = $3; v[n, 3] = $4; rss[n] = $5; bytes[n] = $6; pdb[n] = $7 }
	END {
		if (n < 2) exit
		fit("best wall time", 1)
		fit("median CPU time", 3)
		for (i = 1; i <= n; i++)
			printf "scaling: %d %s, %.1f MiB + %.1f MiB PDB: best %.3f s (median %.3f s, CPU %.2f s; the CPU line says %.2f s), peak %.1f MiB = %.1fx the assembly, %.1fx assembly + PDB\n",
				x[i], unit, bytes[i] / 1048576, pdb[i] / 1048576, v[i, 1], v[i, 2], v[i, 3], fa + fb * x[i],
				rss[i] / 1024, rss[i] * 1024 / bytes[i], rss[i] * 1024 / (bytes[i] + pdb[i])
	}'
exit "$status"
