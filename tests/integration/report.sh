#!/usr/bin/env bash
# `locktime report` and `locktime check` on real report files: tests/runtime/Host (the run-time with
# hand-written call-site stubs) writes them; every expected figure is worked out from those files by
# tests/integration/report_expect.py.
#   - text: the summary table of several files added up; a file named twice (another path to it too)
#     is read once, with a warning;
#   - check: LT200/LT201 lines on the source line with the count over from the histograms, exit 1,
#     and exit 0 under the limits; bad input (not a report, a cut report) is LT019, exit 1;
#   - deadlocks: two runs of the host's `deadlock` scenario (two threads wait for each other; SIGTERM once
#     the run-time printed it): the text gives the lines the run-time's summary gave after its table
#     (the holds and the waits in progress, the potential deadlock, the deadlock), check --max-wait-ms
#     counts the waits still in progress (LT201 "so far");
#   - unwritten lines: a run whose stderr is a FIFO nobody reads; the text's summary line and the page's
#     cards say how many lines could not be written;
#     check an LT202 line per deadlock (kept once across the files) with the run-time's own words, none
#     with --ignore-deadlocks; a deadlock edge of the wrong type is LT019 naming it;
#   - pprof: `go tool pprof -top` (Debian's golang-go) lists every site with its contentions, delay
#     and hold on its file and line;
#   - html: headless Chromium (tests/integration/report_page.js) loads the page with no console
#     error, reads the table, sorts it by a click on a head (twice), filters it, selects a row and
#     its charts; a second page with holder blame, a lock-order cycle, a deadlock and a method name that
#     is HTML; a third with the deadlocks of real runs, shown first, and the threads waiting then.
#     Screenshots and pages are kept in build/logs/report/.
source "$(dirname "$0")/../lib.sh"
LOCKTIME=${LOCKTIME:-$LT_BUILD/san/locktime}
EXPECT=$LT_ROOT/tests/integration/report_expect.py
# report_expect.py prints TAP lines of its own: counted through tap_relay (tests/lib.sh).
expect_tap() { python3 "$EXPECT" "$@" | tap_relay; }
KEEP=$LT_BUILD/logs/report
mkdir -p "$KEEP"
export MSBUILDDISABLENODEREUSE=1 DOTNET_CLI_USE_MSBUILD_SERVER=0
unset LOCKTIME_DISABLED LOCKTIME_THRESHOLD_MS LOCKTIME_OUTPUT LOCKTIME_SUMMARY LOCKTIME_REPORT LOCKTIME_REPORT_INTERVAL_S

check "host program builds" dotnet build "$LT_ROOT/tests/runtime/Host/Host.csproj" -c Release -nologo -v q \
	-nodeReuse:false -p:UseSharedCompilation=false -f net10.0 -o "$LT_TMP/host" || exit 1
R=$LT_TMP/reports
mkdir -p "$R"
for run in contended contended nested threads library counting; do
	LOCKTIME_SUMMARY=0 LOCKTIME_REPORT="$R/$run-{pid}.json" dotnet "$LT_TMP/host/Host.dll" "$run" >/dev/null 2>&1
done
mapfile -t ALL < <(ls "$R"/*.json)
mapfile -t CONTENDED < <(ls "$R"/contended-*.json)
if [ "${#ALL[@]}" -eq 6 ] && [ "${#CONTENDED[@]}" -eq 2 ]; then ok "six runs wrote six reports"; else not_ok "six runs wrote six reports" "$(ls "$R")"; exit 1; fi

# text
"$LOCKTIME" report "${ALL[@]}" --format text >"$LT_TMP/text.out" 2>"$LT_TMP/text.err"
rc=$?
if [ "$rc" -eq 0 ]; then ok "report --format text exits 0"; else not_ok "report --format text exits 0" "$(cat "$LT_TMP/text.err")"; fi
expect_tap text "$LT_TMP/text.out" "${ALL[@]}"
# A file named twice - the same path, or another path to it (a symbolic link, a hard link) - is read once.
twice() {
	local first=${CONTENDED[0]} err
	ln -sf "$first" "$LT_TMP/link.json" && ln -f "$first" "$LT_TMP/hard.json" || return 1
	"$LOCKTIME" report "${ALL[@]}" "$first" "$LT_TMP/link.json" "$LT_TMP/hard.json" --format text \
		>"$LT_TMP/twice.out" 2>"$LT_TMP/twice.err" || return 1
	cat "$LT_TMP/twice.err"
	[ "$(grep -c 'warning LT023: the same file as ' "$LT_TMP/twice.err")" = 3 ] &&
		grep -qF "$first: warning LT023: the same file as $first, given again: read once" "$LT_TMP/twice.err" &&
		grep -qF "$LT_TMP/link.json: warning LT023: the same file as $first" "$LT_TMP/twice.err" &&
		grep -qF "$LT_TMP/hard.json: warning LT023: the same file as $first" "$LT_TMP/twice.err" &&
		diff "$LT_TMP/text.out" "$LT_TMP/twice.out"
}
check "report: a file named again (same path, symbolic or hard link) is read once, with a warning naming it" twice

# check: over a hold limit and a wait limit, and under both
for limits in "50 -" "- 30" "50 30" "500 500" "0.5 -"; do
	read -r hold wait <<<"$limits"
	args=()
	[ "$hold" != - ] && args+=(--max-hold-ms "$hold")
	[ "$wait" != - ] && args+=(--max-wait-ms "$wait")
	"$LOCKTIME" check "${CONTENDED[@]}" "${args[@]}" >"$LT_TMP/check.out" 2>"$LT_TMP/check.err"
	expect_tap check "$LT_TMP/check.out" "$?" "$hold" "$wait" "${CONTENDED[@]}"
done
"$LOCKTIME" check "${ALL[@]}" --max-hold-ms 1 >"$LT_TMP/check.out" 2>"$LT_TMP/check.err"
expect_tap check "$LT_TMP/check.out" "$?" 1 - "${ALL[@]}"
out=$("$LOCKTIME" check "${CONTENDED[0]}" 2>&1)
rc=$?
if [ "$rc" -eq 0 ] && [ -z "$out" ]; then ok "check without a limit checks deadlocks only: none, exit 0"; else not_ok "check without a limit checks deadlocks only: none, exit 0" "$rc $out"; fi
out=$("$LOCKTIME" check "${CONTENDED[0]}" --ignore-deadlocks 2>&1)
rc=$?
if [ "$rc" -eq 2 ] && grep -q "error LT012: .*--ignore-deadlocks without --max-hold-ms or --max-wait-ms" <<<"$out"; then ok "check --ignore-deadlocks without a limit: usage error"; else not_ok "check --ignore-deadlocks without a limit: usage error" "$rc $out"; fi
out=$("$LOCKTIME" check "${CONTENDED[0]}" --max-hold-ms -3 2>&1)
rc=$?
if [ "$rc" -eq 2 ] && grep -q "error LT012: --max-hold-ms -3: not a number" <<<"$out"; then ok "check with a negative limit: usage error naming it"; else not_ok "check with a negative limit: usage error naming it" "$rc $out"; fi

# deadlocks, from real runs: the summary goes to the sink (stderr) for the lines to compare with
D=$LT_TMP/deadlocks
mkdir -p "$D"
for n in 1 2; do
	LOCKTIME_REPORT="$D/run$n.json" deadlocked "$D/run$n.out" "$D/run$n.err" env -u LOCKTIME_SUMMARY dotnet "$LT_TMP/host/Host.dll" deadlock
done
has_deadlock() { python3 -c 'import json, sys; sys.exit(0 if len(json.load(open(sys.argv[1]))["deadlocks"]) == 1 else 1)' "$1"; }
if has_deadlock "$D/run1.json" && has_deadlock "$D/run2.json"; then ok "two deadlocked runs wrote reports with their deadlock"; else not_ok "two deadlocked runs wrote reports with their deadlock" "$(cat "$D"/run*.err "$D"/run*.json)"; exit 1; fi
# text: after the table, what the run-time's summary said after its own (the holds in progress, the
# potential deadlock, the deadlock); the summary and the report are made one after the other, so the
# longest hold so far is not the same figure in both, nor is the moment named the same
after_table() { # FILE PREFIX: FILE's lines from the holds in progress on, without PREFIX
	sed -n "/^${2}held now, as /,\$p" "$1" | sed -E "s/^$2//; s/^(held|waiting) now, as .* \(longest first\):$/\1 now (longest first):/; s/, the longest [0-9]+\.[0-9]{3} ms so far$/, the longest N ms so far/"
}
"$LOCKTIME" report "$D/run1.json" --format text >"$D/text.out" 2>&1
after_table "$D/run1.err" "LockTime: " >"$D/summary.want"
after_table "$D/text.out" "" >"$D/summary.got"
if [ -s "$D/summary.want" ] && grep -qx "1 deadlock (threads that waited for each other):" "$D/summary.want" &&
	grep -qx "waiting now (longest first):" "$D/summary.want"; then
	check_same "text: the holds and waits in progress, potential deadlock and deadlock lines the run-time's summary printed after its table" "$D/summary.want" "$D/summary.got"
else
	not_ok "text: the run-time's summary listed the deadlock" "$(cat "$D/run1.err")"
fi
"$LOCKTIME" report "$D/run1.json" "$D/run2.json" "${CONTENDED[@]}" --format text >"$D/merged.out" 2>&1
if [ "$(grep -c "^1 deadlock (threads that waited for each other):$" "$D/merged.out")" = 1 ] &&
	[ "$(grep -c "^  thread [0-9]* waits at " "$D/merged.out")" = 1 ]; then
	ok "text: a deadlock found in two files is listed once"
else
	not_ok "text: a deadlock found in two files is listed once" "$(cat "$D/merged.out")"
fi
# check: one LT202 line per deadlock, where check_deadlock puts it, in the run-time's words (its sink line)
deadlock_check() { # NAME FILE...: check of FILE... gives the first file's deadlock, once, exit 1
	local out rc want
	out=$("$LOCKTIME" check "${@:2}" 2>&1)
	rc=$?
	want="$(python3 "$EXPECT" deadlock-origin "${@:2}"): error LT202: deadlock: $(sed -n 's/^LockTime: deadlock: //p' "$D/run1.err")"
	if [ "$rc" -eq 1 ] && [ "$out" = "$want" ]; then ok "$1"; else not_ok "$1" "exit $rc"$'\n'"want: $want"$'\n'"got:  $out"; fi
}
deadlock_check "check: a deadlock is an LT202 error on its source line, in the run-time's words, exit 1" "$D/run1.json"
deadlock_check "check: a deadlock found in two files is one LT202 error" "$D/run1.json" "$D/run2.json" "${CONTENDED[@]}"
# the deadlock's waiters, still waiting as the report was written (waiting_now), over a wait limit: LT201 "so far", with
# the threads waiting; none of their waits ended, so without waiting_now nothing was over
want=$(python3 -c 'import json, sys
for s in json.load(open(sys.argv[1]))["sites"]:
    w = s.get("waiting_now", {"count": 0, "longest_ms": 0})
    if w["count"] and w["longest_ms"] >= 1000 and s["wait_ms"]["max"] < 1000:
        print("%s(%d): error LT201: lock waited %.1f ms so far, limit 1000 ms (%s, %d %s waiting as the report was written)" %
              (s["file"], s["line"], w["longest_ms"], s["method"], w["count"], "thread" if w["count"] == 1 else "threads"))' "$D/run1.json")
out=$("$LOCKTIME" check "$D/run1.json" --ignore-deadlocks --max-wait-ms 1000 2>&1)
rc=$?
if [ "$rc" -eq 1 ] && [ -n "$want" ] && [ "$out" = "$want" ]; then ok "check --max-wait-ms: the threads still waiting (a deadlock's) are over it, LT201 so far"; else not_ok "check --max-wait-ms: the threads still waiting (a deadlock's) are over it, LT201 so far" "exit $rc"$'\n'"want: $want"$'\n'"got:  $out"; fi
out=$("$LOCKTIME" check "$D/run1.json" --ignore-deadlocks --max-hold-ms 1000 2>&1)
rc=$?
if [ "$rc" -eq 0 ] && [ -z "$out" ]; then ok "check --ignore-deadlocks: no LT202, exit 0"; else not_ok "check --ignore-deadlocks: no LT202, exit 0" "$rc $out"; fi

# lines the sink never took (stderr a FIFO that is open but never read; the exit waits for the writer about 1 s): the
# report's unwritten_lines, added up over two files, in the text's summary line and on the page's cards
mkfifo "$LT_TMP/stalled"
exec 9<>"$LT_TMP/stalled" # its only reader, which never reads
LOCKTIME_THRESHOLD_MS=0 LOCKTIME_REPORT="$LT_TMP/stalled.json" timeout -s KILL 60 dotnet "$LT_TMP/host/Host.dll" flood exit \
	>/dev/null 2>"$LT_TMP/stalled"
exec 9<&-
unwritten=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["unwritten_lines"])' "$LT_TMP/stalled.json" 2>&1)
"$LOCKTIME" report "$LT_TMP/stalled.json" "${CONTENDED[@]}" --format text >"$LT_TMP/stalled.out" 2>&1
if [[ "$unwritten" =~ ^[1-9][0-9]*$ ]] && head -n 1 "$LT_TMP/stalled.out" | grep -q "; $unwritten lines could not be written (the sink took nothing)$"; then
	ok "text: the lines the sink never took, on the summary line ($unwritten)"
else
	not_ok "text: the lines the sink never took, on the summary line" "unwritten_lines: $unwritten"$'\n'"$(head -n 2 "$LT_TMP/stalled.out")"
fi

# bad input: LT019 naming the file and where
bad_input() { # NAME FILE PATTERN
	local out rc
	out=$("$LOCKTIME" report "$2" --format text 2>&1)
	rc=$?
	if [ "$rc" -eq 1 ] && grep -qE "^$2: error LT019: $3" <<<"$out"; then ok "$1"; else not_ok "$1" "exit $rc: $out"; fi
}
head -c 300 "${CONTENDED[0]}" >"$LT_TMP/cut.json"
bad_input "a cut report: LT019 with the line" "$LT_TMP/cut.json" "line [0-9]+, column [0-9]+: "
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["sites"][0]["hold_ms"]["max"]="long"; json.dump(r,open(sys.argv[2],"w"))' \
	"${CONTENDED[0]}" "$LT_TMP/wrong.json"
bad_input "a field of the wrong type: LT019 naming it" "$LT_TMP/wrong.json" "sites\[0\]\.hold_ms\.max: not a number"
bad_input "not a report: LT019" "$LT_ROOT/docs/report-format.schema.json" "format: not \"locktime-report\""
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["deadlocks"][0]["edges"][1]["thread"]="five"; json.dump(r,open(sys.argv[2],"w"))' \
	"$D/run1.json" "$LT_TMP/wrong-deadlock.json"
bad_input "a deadlock's thread of the wrong type: LT019 naming it" "$LT_TMP/wrong-deadlock.json" "deadlocks\[0\]\.edges\[1\]\.thread: not a whole number"
# -o naming a report being read: refused, the report left as it was
cp "${ALL[0]}" "$LT_TMP/self.json"
out=$("$LOCKTIME" report "$LT_TMP/self.json" -o "$LT_TMP/self.json" 2>&1)
if [ $? -eq 2 ] && grep -q "self.json: error LT012: the output is the report .*self.json, which would be overwritten" <<<"$out" &&
	cmp -s "${ALL[0]}" "$LT_TMP/self.json"; then ok "-o naming an input: LT012, the report untouched"; else not_ok "-o naming an input: LT012, the report untouched" "$out"; fi
out=$("$LOCKTIME" report "$LT_TMP/none.json" 2>&1)
if [ $? -eq 1 ] && grep -q "none.json: error LT001: " <<<"$out"; then ok "a missing file: LT001"; else not_ok "a missing file: LT001" "$out"; fi

# pprof, read by Go's own pprof
export GOCACHE=$LT_TMP/gocache GOPATH=$LT_TMP/gopath HOME=${HOME:-$LT_TMP}
if check "report --format pprof" "$LOCKTIME" report "${ALL[@]}" --format pprof -o "$LT_TMP/locks.pb.gz"; then
	cp "$LT_TMP/locks.pb.gz" "$KEEP/locks.pb.gz"
	for type in contentions delay hold; do
		go tool pprof -top -lines -unit=ns -nodefraction=0 -nodecount=1000 -sample_index=$type "$LT_TMP/locks.pb.gz" \
			>"$LT_TMP/$type.top" 2>&1
	done
	expect_tap pprof "$LT_TMP" "${ALL[@]}"
fi

# html, in a real browser
browse() { # PAGE SHOT OUT COLUMN FILTER
	timeout 120 node "$LT_ROOT/tests/integration/report_page.js" "$1" "$2" "$4" "$5" >"$3" 2>"$3.err"
}
if check "report writes one HTML page" "$LOCKTIME" report "${ALL[@]}" -o "$KEEP/report.html"; then
	if grep -qiE '(src|href)="?(https?:)?//' "$KEEP/report.html"; then not_ok "html: nothing fetched from the network" "$(grep -oiE '(src|href)="?(https?:)?//[^ ]*' "$KEEP/report.html")"; else ok "html: nothing fetched from the network"; fi
	if browse "$KEEP/report.html" "$KEEP/report.png" "$LT_TMP/page.json" hold_total Count; then
		ok "html: Chromium drives the page"
		expect_tap page "$LT_TMP/page.json" hold_total Count "${ALL[@]}"
	else
		not_ok "html: Chromium drives the page" "$(cat "$LT_TMP/page.json.err")"
	fi
fi
python3 "$EXPECT" hostile "${CONTENDED[0]}" "$LT_TMP/hostile.json"
if check "report of blame, a cycle, a deadlock and a hostile name" "$LOCKTIME" report "$LT_TMP/hostile.json" -o "$KEEP/blame.html"; then
	if browse "$KEEP/blame.html" "$KEEP/blame.png" "$LT_TMP/blame.json" method x; then
		expect_tap page-hostile "$LT_TMP/blame.json" "$LT_TMP/hostile.json"
	else
		not_ok "html (blame): Chromium drives the page" "$(cat "$LT_TMP/blame.json.err")"
	fi
fi
if check "report of deadlocks (two files and others)" "$LOCKTIME" report "$D/run1.json" "$D/run2.json" "${CONTENDED[@]}" -o "$KEEP/deadlocks.html"; then
	if browse "$KEEP/deadlocks.html" "$KEEP/deadlocks.png" "$LT_TMP/deadlocks.json" hold_total Debit; then
		expect_tap page "$LT_TMP/deadlocks.json" hold_total Debit "$D/run1.json" "$D/run2.json" "${CONTENDED[@]}"
		expect_tap page-deadlocks "$LT_TMP/deadlocks.json" "$D/run1.json" "$D/run2.json" "${CONTENDED[@]}"
	else
		not_ok "html (deadlocks): Chromium drives the page" "$(cat "$LT_TMP/deadlocks.json.err")"
	fi
fi
if check "report of a run whose sink took nothing" "$LOCKTIME" report "$LT_TMP/stalled.json" "${CONTENDED[@]}" -o "$KEEP/stalled.html"; then
	if browse "$KEEP/stalled.html" "$KEEP/stalled.png" "$LT_TMP/stalled-page.json" hold_total Count; then
		card=$(python3 -c 'import json, sys
print([c for c in json.load(open(sys.argv[1]))["detail"]["cards"] if "written" in c["text"]])' "$LT_TMP/stalled-page.json" 2>&1)
		if [ "$card" = "[{'text': '${unwritten}lines could not be written', 'alarm': True}]" ]; then
			ok "html: a card, marked, counts the lines that could not be written"
		else
			not_ok "html: a card, marked, counts the lines that could not be written" "unwritten_lines $unwritten, cards: $card"
		fi
	else
		not_ok "html (stalled): Chromium drives the page" "$(cat "$LT_TMP/stalled-page.json.err")"
	fi
fi
done_testing
