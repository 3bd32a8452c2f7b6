#!/usr/bin/env bash
# The benchmark tooling still works (make bench is not part of make test, so nothing else would
# notice it break): measure.py times a command and reports its peak RSS and failures; report.py
# puts a part's figures between its markers in a BENCHMARKS.md and keeps the rest.  No timing is
# asserted: these check the tools, not the speed.
set -u
source "$(dirname "$0")/../lib.sh"
cd "$LT_ROOT"

measure() { python3 bench/lib/measure.py "$@"; }

# A command that touches ~20 MiB: its peak RSS is reported (at least that).
out=$(measure 3 --stdout-last -- python3 -c 'b = bytearray(20 << 20); print("done", len(b))' 2>&1)
rss=$(sed -n 's/^.*peak_rss_kib=\([0-9]*\).*$/\1/p' <<<"$out")
if [[ $out == *"runs=3"* && $out == *"done 20971520"* && ${rss:-0} -ge 20480 ]]; then
	ok "measure.py: 3 runs, the last run's output, the command's peak RSS ($rss KiB)"
else
	not_ok "measure.py: 3 runs, the last run's output, the command's peak RSS" "$out"
fi

# --prepare runs before every run: the command sees what it made.
echo 0 >"$LT_TMP/n"
check "measure.py: --prepare runs before each run" \
	measure 2 --prepare "echo x >>'$LT_TMP/n'" -- test -s "$LT_TMP/n"
[ "$(wc -l <"$LT_TMP/n")" = 3 ] && ok "measure.py: --prepare ran twice" || not_ok "measure.py: --prepare ran twice" "$(cat "$LT_TMP/n")"

# A failing command stops the measurement with its stderr and status 1.
out=$(measure 3 -- sh -c 'echo broken >&2; exit 4' 2>&1)
rc=$?
[[ $rc == 1 && $out == *broken* && $out == *"exit status 4"* ]] &&
	ok "measure.py: a failing run stops it with the command's stderr" ||
	not_ok "measure.py: a failing run stops it with the command's stderr" "rc $rc: $out"

# report.py: the weave block gets the figures of build/bench/weave.log; text outside stays.
work=$LT_TMP/report
mkdir -p "$work/build/bench"
printf 'progress line\nweave: a.dll 1.00 MiB, 1 sites: locktime 0.010 s\nruntime: round 1 of 5\n' >"$work/build/bench/weave.log"
printf '# Title\nbefore\n<!-- results:weave:begin -->\nold figures\n<!-- results:weave:end -->\nafter\n' >"$work/B.md"
if (cd "$work" && python3 "$LT_ROOT/bench/report.py" B.md weave) >"$LT_TMP/report.out" 2>&1 &&
	grep -q '^weave: a.dll 1.00 MiB' "$work/B.md" && ! grep -q 'old figures\|progress line' "$work/B.md" &&
	grep -q '^before$' "$work/B.md" && grep -q '^after$' "$work/B.md" && grep -q 'Measured .* UTC on ' "$work/B.md"; then
	ok "report.py: figures between the markers, with the machine and date; the rest kept"
else
	not_ok "report.py: figures between the markers, with the machine and date; the rest kept" \
		"$(cat "$LT_TMP/report.out" "$work/B.md")"
fi
(cd "$work" && python3 "$LT_ROOT/bench/report.py" B.md build) >"$LT_TMP/report.out" 2>&1 &&
	not_ok "report.py: a part without markers is an error" ||
	ok "report.py: a part without markers is an error"

# Every part bench/run.sh names has its markers in BENCHMARKS.md.
for part in weave scaling calls lockmethods build runtime size; do
	grep -q "<!-- results:$part:begin -->" BENCHMARKS.md && grep -q "<!-- results:$part:end -->" BENCHMARKS.md &&
		ok "BENCHMARKS.md has the $part markers" || not_ok "BENCHMARKS.md has the $part markers"
done
done_testing
