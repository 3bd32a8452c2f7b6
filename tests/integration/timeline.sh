#!/usr/bin/env bash
# The timeline (tests/timeline: a thread "holder" holds Ledger.Post 100 ms while "waiter-1" to "waiter-3" wait
# at Ledger.Read), woven by locktime, run twice, and checked against what each thread measured:
#   - `locktime report --format trace` (Chrome's Trace Event Format): every complete event with ts, dur, pid,
#     tid and name, each thread named, each flow's start and finish of one id, the start in the holder's hold,
#     the finish in the waiter's wait; the hold and the waits as long as the threads measured
#     (tests/integration/trace_expect.py); two runs are two processes; a report written earlier by the same
#     process (fewer events) adds nothing twice;
#   - the HTML page's timeline in headless Chromium (report_page.js): a lane per named thread, the arrows from
#     the holder's hold to each wait, the zoom;
#   - speedscope (npm) opens the trace in headless Chromium: a profile per named thread, its waits and holds as
#     long as the trace says (trace_viewer.js);
#   - LOCKTIME_TIMELINE: 2 keeps the last 2, 0 none, a bad value warns naming it;
#   - a malformed timeline is refused (LT019, exit 1).
source "$(dirname "$0")/../lib.sh"
LT=${LOCKTIME:-$LT_BUILD/san/locktime}
KEEP=$LT_BUILD/logs/timeline
mkdir -p "$KEEP"
unset LOCKTIME_DISABLED LOCKTIME_THRESHOLD_MS LOCKTIME_OUTPUT LOCKTIME_SUMMARY LOCKTIME_REPORT LOCKTIME_TIMELINE

check "the timeline program builds" test_program timeline Timeline.csproj || { done_testing; exit 0; }
check "woven" "$LT" weave -q "$LT_TMP/out/Timeline.dll" || { done_testing; exit 0; }
run() { # NAME: report NAME.json, stdout NAME.out, stderr NAME.err
	LOCKTIME_REPORT=$LT_TMP/$1.json timeout 120 dotnet "$LT_TMP/out/Timeline.dll" >"$LT_TMP/$1.out" 2>"$LT_TMP/$1.err" ||
		{ tail -5 "$LT_TMP/$1.err"; return 1; }
}
check "runs and writes its report" run one || { done_testing; exit 0; }
check "runs again" run two
pid() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["process"]["pid"])' "$1"; }

check "trace of one run written" "$LT" report --format trace -o "$KEEP/one.trace.json" "$LT_TMP/one.json"
check "trace: what viewers need, and the times the threads measured" \
	python3 "$LT_ROOT/tests/integration/trace_expect.py" "$KEEP/one.trace.json" "$(pid "$LT_TMP/one.json")" "$LT_TMP/one.out"
check "trace of two runs written" "$LT" report --format trace -o "$LT_TMP/both.trace.json" "$LT_TMP/one.json" "$LT_TMP/two.json"
check "trace of two runs: both processes, each as measured" \
	python3 "$LT_ROOT/tests/integration/trace_expect.py" "$LT_TMP/both.trace.json" \
	"$(pid "$LT_TMP/one.json")" "$LT_TMP/one.out" "$(pid "$LT_TMP/two.json")" "$LT_TMP/two.out"
processes() { # TRACE: the process_name metadata events' names, one a line
	python3 -c 'import json, sys; print("\n".join(e["args"]["name"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e["name"] == "process_name"))' "$1"
}
pids() { # TRACE: the pids of the process_name metadata events, one a line
	python3 -c 'import json, sys; print("\n".join(str(e["pid"]) for e in json.load(open(sys.argv[1]))["traceEvents"] if e["name"] == "process_name"))' "$1"
}
check "trace of two runs: one process group each, named" test "$(processes "$LT_TMP/both.trace.json") $(pids "$LT_TMP/both.trace.json")" = \
	"Timeline
Timeline $(pid "$LT_TMP/one.json")
$(pid "$LT_TMP/two.json")"

# The page's timeline in headless Chromium: a lane per named thread, the holder's hold, an arrow from it to each
# waiter's wait (and from a waiter that held the lock before another to that one), the zoom; the screenshot of the section is kept in build/logs/timeline/.
"$LT" report -o "$KEEP/one.html" "$LT_TMP/one.json" >/dev/null 2>&1
report_page "$KEEP/one.html" "$KEEP/one.png" hold_total Ledger "$LT_TMP/page.json"
python3 - "$LT_TMP/page.json" "$LT_TMP/one.out" "$LT_TMP/one.json" <<'PY' | tap_relay
import json, sys
page = json.load(open(sys.argv[1]))
rows = [l.split() for l in open(sys.argv[2]) if l.startswith("measured: ")]
holder = [r[2] for r in rows if r[1] == "hold"][0]
waiters = sorted(r[2] for r in rows if r[1] == "wait")
# The threads in the order they first appear on the time axis (the report's events are by wait_from_ms): which
# waiter began to wait first is the scheduler's choice.
lanes = []
for e in json.load(open(sys.argv[3]))["timeline"]["events"]:
    if e["thread_name"] not in lanes:
        lanes.append(e["thread_name"])
def check(name, cond, detail=""):
    print(("ok - " if cond else "not ok - ") + name + ("" if cond else "\n# " + str(detail)))
check("html: no console error or exception", page.get("errors") == [], page.get("errors"))
tl = (page.get("timeline") or [None])[0]
check("html: the timeline shows the process", tl is not None, page.get("timeline"))
if tl:
    check("html: a lane per thread, by its name, in the order the threads first appear (the holder first)",
          tl["lanes"] == lanes and lanes[0] == "holder" and sorted(lanes[1:]) == ["waiter-1", "waiter-2", "waiter-3"], (tl["lanes"], lanes))
    check("html: three waits, four holds (the holder's and each waiter's)", (tl["waits"], tl["holds"]) == (3, 4), tl)
    # A waiter that took the lock before another held it (briefly) while that one waited: blame gives it its
    # share, so an arrow may also join two waiters - never anything else.
    ahead = [a for a in tl["arrows"] if a["from"] != holder]
    check("html: an arrow from the holder's hold to each waiter's wait, others only from a waiter that held the lock first",
          sorted(a["to"] for a in tl["arrows"] if a["from"] == holder) == waiters and
          all(a["from"] in waiters and a["to"] in waiters and a["from"] != a["to"] for a in ahead), tl["arrows"])
    check("html: the holder's arrows join the hold of Ledger.Post to the waits at Ledger.Read",
          all(a["titles"][0].startswith("hold ") and "Books.Ledger::Post" in a["titles"][0] and
              a["titles"][1].startswith("wait ") and "Books.Ledger::Read" in a["titles"][1] for a in tl["arrows"] if a["from"] == holder),
          tl["arrows"])
    zoomed, reset = page["timeline_zoomed"][0], page["timeline_reset"][0]
    check("html: Zoom in draws the hold twice as wide", abs(zoomed["widest_hold"] - 2 * tl["widest_hold"]) < 1, (tl["widest_hold"], zoomed["widest_hold"]))
    check("html: Reset draws it as at first", abs(reset["widest_hold"] - tl["widest_hold"]) < 0.01 and reset["shown"] == tl["shown"], reset)
PY

# The trace in a real viewer: speedscope (the npm package, its page from disk in headless Chromium) shows a
# profile per thread, named, each with its waits and holds as long as the trace says.
SPEEDSCOPE=$LT_BUILD/npm/node_modules/speedscope
speedscope_install() {
	[ -f "$SPEEDSCOPE/dist/release/index.html" ] ||
		timeout 300 npm install --prefix "$LT_BUILD/npm" --no-audit --no-fund speedscope@1.25.0 >"$LT_TMP/npm.log" 2>&1
}
if ! speedscope_install; then
	skip "speedscope opens the trace" "speedscope could not be installed from the npm registry: $(tail -n 1 "$LT_TMP/npm.log")"
elif timeout 120 node "$LT_ROOT/tests/integration/trace_viewer.js" "$KEEP/one.trace.json" "$SPEEDSCOPE" "$KEEP/speedscope.png" \
	>"$LT_TMP/speedscope.json" 2>"$LT_TMP/speedscope.err"; then
	ok "speedscope opens the trace"
	python3 - "$LT_TMP/speedscope.json" "$KEEP/one.trace.json" <<'PY' | tap_relay
import json, sys
seen, trace = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
def check(name, cond, detail=""):
    print(("ok - " if cond else "not ok - ") + name + ("" if cond else "\n# " + str(detail)))
check("speedscope: no console error", seen["errors"] == [], seen["errors"])
names = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"}
shown = sorted(p["name"].split(", ")[-1] for p in seen["profiles"])
check("speedscope: a profile per thread, by its name", shown == sorted(f"{n} (tid {t})" for t, n in names.items()), shown)
for p in seen["profiles"]:
    tid = int(p["name"].rsplit("(tid ", 1)[1].rstrip(")"))
    want = {}
    for e in trace["traceEvents"]:
        if e["ph"] == "X" and e["tid"] == tid:
            want[e["name"]] = want.get(e["name"], 0) + e["dur"] / 1e3
    got = {s["name"]: s["total_ms"] for s in p["symbols"]}
    check(f"speedscope: {names.get(tid)}'s waits and holds as long as in the trace",
          set(got) == set(want) and all(abs(got[k] - want[k]) <= max(0.006, want[k] * 0.001) for k in want), (got, want))
PY
else
	not_ok "speedscope opens the trace" "$(cat "$LT_TMP/speedscope.err")"
fi

# An earlier report of the same process (as LOCKTIME_REPORT_INTERVAL_S writes): its events are among the last one's.
python3 - "$LT_TMP/one.json" >"$LT_TMP/early.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["timeline"]["events"] = r["timeline"]["events"][:2]
r["timeline"]["added"] = 2
json.dump(r, sys.stdout)
PY
check "an earlier report of the same process merged" "$LT" report --format trace -o "$LT_TMP/merged.trace.json" "$LT_TMP/early.json" "$LT_TMP/one.json"
check_same "merged with an earlier report of its process: the same trace" "$KEEP/one.trace.json" "$LT_TMP/merged.trace.json"
check "text still reads a report with a timeline" "$LT" report --format text -o "$LT_TMP/one.txt" "$LT_TMP/one.json"

timeline_of() { # NAME: capacity, added and events of NAME.json's timeline
	python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["timeline"]; print(t["capacity"], t["added"], len(t["events"]))' "$LT_TMP/$1.json"
}
LOCKTIME_TIMELINE=2 check "LOCKTIME_TIMELINE=2 runs" run two_kept
check "LOCKTIME_TIMELINE=2: the last 2 of 4 slow locks kept" test "$(timeline_of two_kept)" = "2 4 2"
LOCKTIME_TIMELINE=0 check "LOCKTIME_TIMELINE=0 runs" run none
check "LOCKTIME_TIMELINE=0: no timeline" test "$(timeline_of none)" = "0 0 0"
LOCKTIME_TIMELINE=lots check "LOCKTIME_TIMELINE=lots runs" run bad
check "LOCKTIME_TIMELINE=lots: warned, naming it, and the default kept" grep -qxF \
	'LockTime: warning: LOCKTIME_TIMELINE="lots" is not a whole number from 0 to 1000000; using 10000' "$LT_TMP/bad.err"
check "LOCKTIME_TIMELINE=lots: the default 10000" test "$(timeline_of bad | cut -d' ' -f1)" = 10000

python3 - "$LT_TMP/one.json" >"$LT_TMP/bad.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
e = r["timeline"]["events"][1]
e["acquired_ms"] = e["wait_from_ms"] / 2
json.dump(r, sys.stdout)
PY
"$LT" report --format trace -o "$LT_TMP/bad.trace.json" "$LT_TMP/bad.json" >"$LT_TMP/bad.out" 2>&1
bad_rc=$?
check "a wait acquired before it began: LT019, exit 1" \
	grep -qF "bad.json: error LT019: timeline.events[1].acquired_ms: before wait_from_ms" "$LT_TMP/bad.out"
check "... exit status 1" test "$bad_rc" -eq 1
done_testing
