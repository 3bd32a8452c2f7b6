#!/usr/bin/env bash
# The call stacks of slow locks (tests/stacks: one lock held 20 ms, reached from Checkout and from Restock on
# four threads, and from an async method), woven by locktime at a 5 ms threshold, run, and checked against
# what the program says it did:
#   - the report: per role (waiter, holder) a stack per caller, its frames innermost first (the site's
#     method at the site's line, then the caller at its call's line, then the thread's lambda); every hold
#     is slow, so the holder stacks count each caller's calls exactly; per role the counts add up to the
#     slow acquisitions (the holds: all; the waits: those the wait histogram puts at 5 ms or over) and the
#     holder stacks' holds to the site's hold total; the async method named as written (not MoveNext);
#   - the same two callers in `go tool pprof -traces` (delay and hold; the lambda's name whole), in --format text and the summary at
#     exit, and on the HTML page in headless Chromium (each stack collapsible, the costliest of each role
#     open; the screenshot is kept in build/logs/stacks/);
#   - `locktime report` adds the stacks of two runs up; a version 1 report (no stacks) is still read;
#   - a flood of 150 slow holds from one caller: captures at most 20 a second, the rest "not_captured",
#     the counts still exact; LOCKTIME_STACK_DEPTH bounds the frames, 0 gives no stacks;
#   - a slow lock released while another is held, twice, a second apart: the first is not captured (the
#     first capture loads the symbol reader and the PDB, which the outer hold would carry; it is warmed up on
#     a thread of its own instead), the second is.
source "$(dirname "$0")/../lib.sh"
LT=${LOCKTIME:-$LT_BUILD/san/locktime}
KEEP=$LT_BUILD/logs/stacks
mkdir -p "$KEEP"
unset LOCKTIME_DISABLED LOCKTIME_THRESHOLD_MS LOCKTIME_OUTPUT LOCKTIME_SUMMARY LOCKTIME_REPORT LOCKTIME_STACK_DEPTH

check "the stacks program builds" test_program stacks Stacks.csproj || { done_testing; exit 0; }
check "woven" "$LT" weave -q --threshold-ms 5 "$LT_TMP/out/Stacks.dll" || { done_testing; exit 0; }
run() { # NAME [ARGS...]: report NAME.json, stdout NAME.out, stderr NAME.err
	local name=$1
	shift
	LOCKTIME_REPORT=$LT_TMP/$name.json timeout 120 dotnet "$LT_TMP/out/Stacks.dll" "$@" >"$LT_TMP/$name.out" 2>"$LT_TMP/$name.err" ||
		{ tail -5 "$LT_TMP/$name.err"; return 1; }
}
check "runs and writes its report" run one || { done_testing; exit 0; }
check "runs again" run two
check "a flood of slow holds runs" run flood flood
check "a slow lock inside another runs" run nested nested
depth() { # N: the run depthN with LOCKTIME_STACK_DEPTH=N
	LOCKTIME_STACK_DEPTH=$1 run "depth$1"
}
check "LOCKTIME_STACK_DEPTH=2 runs" depth 2
check "LOCKTIME_STACK_DEPTH=0 runs" depth 0

"$LT" report --format text "$LT_TMP/one.json" >"$LT_TMP/text.out" 2>&1
"$LT" report --format text "$LT_TMP/one.json" "$LT_TMP/two.json" >"$LT_TMP/both.out" 2>&1
"$LT" report --format pprof -o "$LT_TMP/one.pb.gz" "$LT_TMP/one.json" >/dev/null 2>&1
for type in delay hold; do
	go tool pprof -traces -sample_index=$type "$LT_TMP/one.pb.gz" >"$LT_TMP/$type.traces" 2>&1
done
"$LT" report -o "$KEEP/stacks.html" "$LT_TMP/one.json" >/dev/null 2>&1
report_page "$KEEP/stacks.html" "$KEEP/stacks.png" hold_total Reserve "$LT_TMP/page.json"
python3 - "$LT_TMP/one.json" "$LT_TMP/one.json" >"$LT_TMP/v1.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["version"] = 1
for s in r["sites"]:
    del s["stacks"]
json.dump(r, sys.stdout)
PY
"$LT" report --format text "$LT_TMP/v1.json" >"$LT_TMP/v1.out" 2>&1
echo $? >"$LT_TMP/v1.rc"

python3 "$LT_ROOT/tests/integration/stacks_expect.py" "$LT_TMP" "$LT_ROOT/tests/stacks/Program.cs" | tap_relay
done_testing
