#!/usr/bin/env bash
# The run-time a weave merges, end to end (tests/woven: an app and its library, each woven on its
# own), on .NET and on .NET Framework under Mono:
#   - 16 threads taking one lock 1,000 times each: exactly 16,000 acquisitions for that site;
#   - a 60 ms holder and a waiter: hold max >= 50 ms and wait max >= 40 ms at their lines, the
#     waiter's line naming the holder;
#   - 50 nested locks around a 20 ms sleep at threshold 0: every one reports at least 20 ms held and
#     no more than the program's own Stopwatch around the outermost lock statement (reporting never
#     lengthens a hold);
#   - holder blame (waited_behind, blamed_wait_ms) and potential deadlocks: Transfer both ways, the
#     app's and the library's locks both ways;
#   - a TryEnter(o, 5) that fails while another thread holds o 50 ms: its wait is in the site's wait
#     and contended (and failed), so `locktime check --max-wait-ms 1` gives LT201 on its line;
#   - an unhandled exception from Main: the summary and a valid report all the same, the crash's
#     message and exit code as without LockTime; SIGTERM to a serving app (.NET 10 runs no ProcessExit
#     then): the summary and a valid report, the output and exit code (143) as without LockTime; SIGINT (Ctrl+C) the
#     same (130), and once, at the exit, when the program's own Ctrl+C handler cancels it; the process's first nested
#     lock (`App firstnested`) not lengthened by the lock order's first work; SIGTERM 0, 10
#     and 20 ms after the first timed lock (`App term`), three runs each: 143, one summary, one report;
#   - ProcessExit handlers added after the first timed lock, one as Main returns (`App late`): their locks in the
#     lines, the summary and the report; the only lock of a program in a ProcessExit handler (`App exitonly`): its
#     line, the summary and the report; the library's own [ModuleInitializer] runs woven (`App modinit`); the same
#     lock in a .NET program with its own [ModuleInitializer] (tests/woven/ModInit), which still runs;
#   - one summary at exit and one report (LOCKTIME_REPORT, {pid}) with both assemblies' sites,
#     valid against docs/report-format.schema.json; the baked --summary and --report;
#   - `App busy`: on one core, one lock's holds sum to what the program timed inside them, and within the wall time;
#   - `App reentry`: a lock taken again by its holder (Monitor, Lock, ReaderWriterLockSlim recursion, a
#     SpinLock with owner tracking) is one hold and one line with its re-entries counted apart, every hold
#     within the program's own Stopwatch; a Monitor.Wait ended by Thread.Interrupt is no hold;
#   - the program's output unchanged; every method, merged ones included, JIT-compiles;
#   - `weave -v` says which get live metrics (docs/metrics.md): the .NET app, the netstandard
#     library when the program runs on .NET 6+, not the .NET Framework app.
source "$(dirname "$0")/../lib.sh"
LT=${LOCKTIME:-$LT_BUILD/san/locktime}

check "ltcheck builds" tools_build || exit 1

build_app() {
	cp -r "$LT_ROOT/tests/woven" "$LT_TMP/src" &&
	dotnet build "$LT_TMP/src/App/App.csproj" -c Release -nologo -v q -p:UseSharedCompilation=false \
		>"$LT_TMP/build.log" 2>&1 || { tail -20 "$LT_TMP/build.log"; return 1; }
}
check "the app and its library build" build_app || exit 1
NET=$LT_TMP/src/App/bin/Release/net10.0
FX=$LT_TMP/src/App/bin/Release/net48
(cd "$NET" && dotnet App.dll >"$LT_TMP/expected")
cp -r "$NET" "$LT_TMP/plain"
cp -r "$FX" "$LT_TMP/plain48"
weave_both() { # DIR APP
	"$LT" weave -q --threshold-ms 0 "$1/$2" "$1/Lib.dll" && "$LT" list "$1/Lib.dll" | grep -q '(woven)$'
}
check "weave the .NET app and library" weave_both "$NET" App.dll || exit 1
check "weave the .NET Framework app and library" weave_both "$FX" App.exe
verbose_metrics() { # IN: what weave -v says of its live metrics
	"$LT" weave -v -o "$LT_TMP/v.out" "$1" | sed -n "s|^$1: \(.*live metrics.*\)|\1|p"
}
check "weave -v: the .NET app has live metrics" \
	test "$(verbose_metrics "$LT_TMP/plain/App.dll")" = 'live metrics: the Meter "LockTime" (.NETCoreApp,Version=v10.0)'
check "weave -v: the .NET Framework app has none" \
	test "$(verbose_metrics "$LT_TMP/plain48/App.exe")" = 'no live metrics: .NETFramework,Version=v4.8 has no System.Diagnostics.Metrics (.NET 6 and later have)'
check "weave -v: the library has them when the program runs on .NET 6+" \
	test "$(verbose_metrics "$LT_TMP/plain/Lib.dll")" = 'live metrics when the program runs on .NET 6 or later (.NETStandard,Version=v2.0)'
check "every method of the woven app JIT-compiles" ltcheck jit "$NET/App.dll"
check "every method of the woven library JIT-compiles" ltcheck jit "$NET/Lib.dll"

# run RUNNER DIR FILE VAR=VALUE...: stdout in $LT_TMP/out, stderr in $LT_TMP/err, summary printed.
run() {
	local runner=$1 dir=$2 file=$3
	shift 3
	(cd "$dir" && env -u LOCKTIME_SUMMARY "$@" timeout 120 "$runner" "$file" >"$LT_TMP/out" 2>"$LT_TMP/err")
}

# site REPORT METHOD FIELD: one field of one site of a report, printed with python.
site() {
	python3 - "$@" <<'PY'
import json, sys
rep, method, field = sys.argv[1:4]
sites = [s for s in json.load(open(rep))["sites"] if s["method"] == method]
assert len(sites) == 1, "%d sites %s" % (len(sites), method)
v = sites[0]
for k in field.split("."):
    v = v[k]
print(v)
PY
}

valid_report() { # REPORT
	python3 - "$1" "$LT_ROOT/docs/report-format.schema.json" <<'PY'
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))
assemblies = sorted({s["assembly"] for s in json.load(open(sys.argv[1]))["sites"]})
print("assemblies:", assemblies)
assert assemblies == ["App", "Lib"], assemblies
PY
}

# blame_bounds REPORT ERR: the holder's hold (Program::Hold) lies between what the program measured inside
# and around its lock statement ("App: measured" on stderr), the waiter's wait (Program::Wait) within 3 ms
# below the program's measure around its lock statement and never above; the wait is charged to the
# holder once: waited_behind names Program::Hold with that wait, blamed_wait_ms is it, no more than the
# program measured around the waiter's lock statement.
blame_bounds() {
	python3 - "$@" <<'PY'
import json, sys
sites = {s["method"]: s for s in json.load(open(sys.argv[1]))["sites"]}
m = {l.split()[2]: (float(l.split()[3]), float(l.split()[4])) for l in open(sys.argv[2]) if l.startswith("App: measured ")}
holder, waiter = sites["Program::Hold"], sites["Program::Wait"]
inner, outer = m["hold"]
hold, wait = holder["hold_ms"]["total"], waiter["wait_ms"]["total"]
assert holder["acquisitions"] == 1 and inner - 0.001 <= hold <= outer + 0.001, (hold, m)
assert waiter["acquisitions"] == 1 and waiter["contended"] == 1 and m["wait"][1] - 3 <= wait <= m["wait"][1] + 0.001, (wait, m)
behind = waiter["waited_behind"]
assert [(w["method"], w["count"]) for w in behind] == [("Program::Hold", 1)] and abs(behind[0]["wait_ms"] - wait) <= 0.001, (behind, wait)
charged = sum(w["wait_ms"] for s in sites.values() for w in s["waited_behind"] if w["method"] == "Program::Hold")
assert abs(holder["blamed_wait_ms"] - charged) <= 0.001 and charged <= m["wait"][1] + 0.001, (holder["blamed_wait_ms"], charged, m)
PY
}

one_process() { # NAME RUNNER DIR FILE
	local name=$1 runner=$2 dir=$3 file=$4 rep
	rm -f "$LT_TMP"/run-*.json
	check "$name: runs" run "$runner" "$dir" "$file" "LOCKTIME_REPORT=$LT_TMP/run-{pid}.json" || return
	check_same "$name: same output" "$LT_TMP/expected" "$LT_TMP/out"
	rep=$(ls "$LT_TMP"/run-*.json 2>/dev/null | head -1)
	check "$name: one report file, named by the process id" test "$(ls "$LT_TMP"/run-*.json | wc -l)" = 1 -a -n "$rep"
	check "$name: the report validates against the schema, with both assemblies' sites" valid_report "$rep"
	check "$name: 16 threads x 1,000: exactly 16,000 acquisitions" test "$(site "$rep" Program::Count acquisitions)" = 16000
	check "$name: hold, wait and blame within the program's own measures" blame_bounds "$rep" "$LT_TMP/err"
	check "$name: the library's Ledger.Post: 100 acquisitions" test "$(site "$rep" Woven.Lib.Ledger::Post acquisitions)" = 100
	check "$name: the waiter's line names the holder" grep -qE '^LockTime: Program::Wait held [0-9.]+ ms, waited [0-9.]+ ms at Program\.cs:[0-9]+ \(held by Program::Hold at Program\.cs:[0-9]+\)$' "$LT_TMP/err"
	check "$name: Transfer both ways: a potential deadlock, on its lines" grep -qE '^LockTime: potential deadlock: Program\.cs:[0-9]+ then Program\.cs:[0-9]+ \(Program::Transfer\), and in the other order at Program\.cs:[0-9]+ then Program\.cs:[0-9]+ \(Program::Transfer\)$' "$LT_TMP/err"
	check "$name: the app's and the library's locks both ways: a potential deadlock across assemblies" grep -qE '^LockTime: potential deadlock: Program\.cs:[0-9]+ then Ledger\.cs:[0-9]+ \(Program::AppThenLibrary then Woven\.Lib\.Ledger::Post\), and in the other order at Ledger\.cs:[0-9]+ then Program\.cs:[0-9]+ \(Woven\.Lib\.Ledger::Under then Program::Inside\)$' "$LT_TMP/err"
	check "$name: two cycles in the report" python3 -c "import json,sys; sys.exit(len(json.load(open('$rep'))['lock_order_cycles']) != 2)"
	check "$name: the failed TryEnter: failed 1, contended 1" test "$(site "$rep" Program::GiveUp failed) $(site "$rep" Program::GiveUp contended)" = "1 1"
	check "$name: the failed TryEnter's wait (>= 4 ms) is the site's wait" python3 -c "import sys; sys.exit(not float('$(site "$rep" Program::GiveUp wait_ms.max)') >= 4)"
	gave_up_over_limit() {
		"$LT" check "$rep" --max-wait-ms 1 >"$LT_TMP/check.out"
		local rc=$?
		grep 'GiveUp' "$LT_TMP/check.out"
		[ "$rc" = 1 ] && grep -qE '^/.*/Program\.cs\([0-9]+\): error LT201: lock waited [0-9.]+ ms, limit 1 ms \(Program::GiveUp, 1 of 1 waits over\)$' "$LT_TMP/check.out"
	}
	check "$name: check --max-wait-ms 1: LT201 on the failed TryEnter's line" gave_up_over_limit
	check "$name: one summary at exit, both assemblies" test "$(grep -c '^LockTime: summary: [0-9]* sites in 2 assemblies' "$LT_TMP/err")" = 1
	nested_holds() {
		local holds took
		holds=$(sed -nE 's/^LockTime: Program::Nested held ([0-9]+\.[0-9]{3}) ms, .*/\1/p' "$LT_TMP/err")
		took=$(sed -nE 's/^App: nested locks took ([0-9.]+) ms$/\1/p' "$LT_TMP/err")
		echo "$(wc -l <<<"$holds") nested holds: innermost $(head -n 1 <<<"$holds"), longest $(sort -rn <<<"$holds" | head -n 3 | tr '\n' ' '); the program timed ${took:-nothing}"
		# The innermost is released first; each hold lies within what the program timed around the
		# outermost lock statement (0.1 ms for the two clocks' reads): reporting lengthens none.
		[ "$(wc -l <<<"$holds")" = 50 ] && [ -n "$took" ] &&
			awk -v took="$took" '$1 < 20 || $1 > took + 0.1 { bad = 1 } END { exit bad }' <<<"$holds"
	}
	check "$name: 50 nested locks around 20 ms: each held at least 20 ms, none longer than the program timed" nested_holds
}
one_process ".NET" dotnet "$NET" App.dll
one_process "Mono" mono "$FX" App.exe

# An unhandled exception from Main (ProcessExit does not run): the summary and the report are written
# at the crash, once; the exception's message and the exit code are the un-woven program's.
crash() { # NAME RUNNER WOVEN PLAIN FILE
	local name=$1 runner=$2 woven=$3 plain=$4 file=$5 rc_plain rc_woven
	(cd "$plain" && env -u LOCKTIME_SUMMARY timeout 120 "$runner" "$file" throw >"$LT_TMP/crash-plain.out" 2>"$LT_TMP/crash-plain.err")
	rc_plain=$?
	rm -f "$LT_TMP/crash.json"
	(cd "$woven" && env -u LOCKTIME_SUMMARY LOCKTIME_REPORT="$LT_TMP/crash.json" timeout 120 "$runner" "$file" throw >"$LT_TMP/out" 2>"$LT_TMP/err")
	rc_woven=$?
	check "$name: the exit code is the un-woven program's ($rc_plain)" test "$rc_woven" = "$rc_plain" -a "$rc_plain" != 0
	check_same "$name: the same output" "$LT_TMP/crash-plain.out" "$LT_TMP/out"
	check "$name: the exception's message as un-woven" grep -q 'System.InvalidOperationException: thrown from Main' "$LT_TMP/err"
	check "$name: one summary, both assemblies" test "$(grep -c '^LockTime: summary: [0-9]* sites in 2 assemblies' "$LT_TMP/err")" = 1
	check "$name: the report validates against the schema, with both assemblies' sites" valid_report "$LT_TMP/crash.json"
}
crash ".NET: unhandled exception" dotnet "$NET" "$LT_TMP/plain" App.dll
crash "Mono: unhandled exception" mono "$FX" "$LT_TMP/plain48" App.exe

# SIGTERM to a service (kill, systemd, a container runtime): .NET 10 runs no ProcessExit then, the run-time's
# own handler writes the summary and a valid report; the output and the exit code (143: the signal, as
# un-woven) are the un-woven program's.
serve() { # DIR OUT [VAR=VALUE...]: App.dll serve in DIR, SIGTERM once it serves; returns its exit code
	local dir=$1 out=$2
	shift 2
	terminated "$out.out" "$out.err" serving env -C "$dir" -u LOCKTIME_SUMMARY "$@" dotnet App.dll serve
}
sigterm() {
	local rc_plain rc_woven
	serve "$LT_TMP/plain" "$LT_TMP/term-plain"
	rc_plain=$?
	rm -f "$LT_TMP/term.json"
	serve "$NET" "$LT_TMP/term" "LOCKTIME_REPORT=$LT_TMP/term.json"
	rc_woven=$?
	check ".NET: SIGTERM: the exit code is the un-woven program's ($rc_plain)" test "$rc_woven" = "$rc_plain" -a "$rc_plain" = 143
	check_same ".NET: SIGTERM: the same output" "$LT_TMP/term-plain.out" "$LT_TMP/term.out"
	check ".NET: SIGTERM: one summary, both assemblies" test "$(grep -c '^LockTime: summary: [0-9]* sites in 2 assemblies' "$LT_TMP/term.err")" = 1
	check ".NET: SIGTERM: the report validates against the schema, with both assemblies' sites" valid_report "$LT_TMP/term.json"
	check ".NET: SIGTERM: the report has the posts made while serving" python3 -c "import sys; sys.exit(not int('$(site "$LT_TMP/term.json" Woven.Lib.Ledger::Post acquisitions)') > 100)"
}
sigterm

# SIGINT (Ctrl+C): .NET runs no ProcessExit then either. A program woven for .NET 6+ registers the run-time's handler
# before Main (weave_early.c), so that it runs after the program's own: with none, the summary and a valid report at the
# signal, the output and exit code (130) the un-woven program's; a Ctrl+C handler of the program's that cancels the
# signal (added before the first timed lock) keeps working, and the summary comes once, at the exit, with every lock.
# Through `timeout`: a background job's SIGINT is ignored in a shell without job control, and timeout's child has it back.
interrupted() { # DIR OUT MODE [VAR=VALUE...]: App.dll interrupt MODE in DIR, SIGINT once it is ready; returns its exit code
	local dir=$1 out=$2 mode=$3
	shift 3
	LT_SIGNAL=INT terminated "$out.out" "$out.err" ready timeout 120 env -C "$dir" -u LOCKTIME_SUMMARY "$@" dotnet App.dll interrupt $mode
}
acquired() { # REPORT: the acquisitions of all its sites
	python3 -c 'import json, sys; print(sum(s["acquisitions"] for s in json.load(open(sys.argv[1]))["sites"]))' "$1"
}
sigint() {
	local rc_plain rc_woven taken
	interrupted "$LT_TMP/plain" "$LT_TMP/int-plain" ""
	rc_plain=$?
	rm -f "$LT_TMP/int.json"
	interrupted "$NET" "$LT_TMP/int" "" "LOCKTIME_REPORT=$LT_TMP/int.json"
	rc_woven=$?
	check ".NET: SIGINT: the exit code is the un-woven program's ($rc_plain)" test "$rc_woven" = "$rc_plain" -a "$rc_plain" = 130
	check_same ".NET: SIGINT: the same output" "$LT_TMP/int-plain.out" "$LT_TMP/int.out"
	check ".NET: SIGINT: one summary" test "$(grep -c '^LockTime: summary: 2 sites in 1 assembly' "$LT_TMP/int.err")" = 1
	check ".NET: SIGINT: the report validates against the schema" python3 -c 'import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' "$LT_TMP/int.json" "$LT_ROOT/docs/report-format.schema.json"
	check ".NET: SIGINT: the report has the locks taken until the signal" test "$(acquired "$LT_TMP/int.json")" -gt 1
	rm -f "$LT_TMP/int-cancel.json"
	interrupted "$NET" "$LT_TMP/int-cancel" cancel "LOCKTIME_REPORT=$LT_TMP/int-cancel.json"
	rc_woven=$?
	taken=$(sed -n 's/^locks taken: //p' "$LT_TMP/int-cancel.out")
	check ".NET: SIGINT the program cancels: its handler runs, the program exits 0 ($rc_woven)" test "$rc_woven" = 0 -a -n "$taken"
	check ".NET: SIGINT the program cancels: one summary, at the exit, after the program's last line" \
		test "$(grep -c '^LockTime: summary: 3 sites in 1 assembly; '"$taken"' acquisitions' "$LT_TMP/int-cancel.err")" = 1
	check ".NET: SIGINT the program cancels: the report has every lock taken ($taken)" \
		test "$(acquired "$LT_TMP/int-cancel.json")" = "$taken"
}
sigint

# The process's first nested lock (`App firstnested`: lock (outer) { lock (inner) count++; }), held for microseconds: the
# lock order's first work for a thread that nests is done after the outermost release, not inside the holds (its
# optimized lookup, compiled there, made them 12 and 28 ms). At threshold 5 ms: no line, and both holds under it.
first_nested() {
	rm -f "$LT_TMP/nested1.json"
	timeout 90 env -C "$NET" LOCKTIME_SUMMARY=0 LOCKTIME_THRESHOLD_MS=5 LOCKTIME_REPORT="$LT_TMP/nested1.json" dotnet App.dll firstnested \
		>"$LT_TMP/nested1.out" 2>"$LT_TMP/nested1.err" || return 1
	python3 - "$LT_TMP/nested1.json" "$LT_TMP/nested1.err" <<'PY'
import json, sys
sites = [s for s in json.load(open(sys.argv[1]))["sites"] if s["method"] == "FirstNested::Run"]
holds = sorted((s["location"], s["hold_ms"]["max"]) for s in sites)
print("holds (ms):", holds, "lines:", open(sys.argv[2]).read().strip())
assert len(holds) == 3 and all(h < 5 for _, h in holds), holds
assert "held" not in open(sys.argv[2]).read()
PY
}
check ".NET: the first nested lock: its holds not lengthened by the lock order's first work (under 5 ms, no line)" first_nested

# Holds end before the release, not after it: `App busy` (Busy.cs) on one core, four threads taking one lock in turn,
# each hold a 200 us spin. A hold read after the release took in what ran between - the waiter the release woke ran
# first, for a time slice - and the site's holds summed to 2.5 times what the program timed inside them and to twice
# the run's wall time, as if the lock had been held by two threads at once. Each reported hold holds the program's
# own interval, so the site's total is at least the program's sum, at most a little more, and at most the wall time.
busy_holds() {
	local out=$LT_TMP/busy
	rm -f "$out.json"
	timeout 120 env -C "$NET" LOCKTIME_SUMMARY=0 LOCKTIME_REPORT="$out.json" taskset -c 0 dotnet App.dll busy \
		>"$out.out" 2>"$out.err" || { tail -n 5 "$out.err"; return 1; }
	python3 - "$out.json" "$out.err" <<'PY'
import json, re, sys
site = [s for s in json.load(open(sys.argv[1]))["sites"] if s["method"] == "Busy::Work"]
wall, inside = map(float, re.search(r"^Busy: wall ([0-9.]+) ms, inside ([0-9.]+) ms$", open(sys.argv[2]).read(), re.M).groups())
held = site[0]["hold_ms"]["total"] if site else None
print(f"wall {wall:.1f} ms, the program inside its holds {inside:.1f} ms, the site's holds {held} ms")
sys.exit(not (site and site[0]["acquisitions"] == 4000 and inside - 0.01 <= held <= min(wall, inside * 1.1 + 50)))
PY
}
check ".NET: holds end before the release: on one core, one lock's holds sum to what the program timed inside them, within the wall time" busy_holds

# SIGTERM at any time after the first timed lock: `App term MS` keeps both cores busy (four spinning threads, the
# process on one core), takes its first lock and sends itself SIGTERM MS ms later - the handler is registered in
# the start, before that lock returns (a direct call on .NET 6+), not by the run-time's thread some 10-50 ms later:
# each run ends with 143, one summary and one valid report with the lock's site.
terminated_at() { # MS RUN: App term MS, on one core
	local ms=$1 run=$2 out=$LT_TMP/term-$1-$2
	rm -f "$out.json"
	timeout 90 env -C "$NET" -u LOCKTIME_SUMMARY LOCKTIME_REPORT="$out.json" taskset -c 0 dotnet App.dll term "$ms" \
		>"$out.out" 2>"$out.err"
	local rc=$?
	test "$rc" = 143 || { echo "exit code $rc"; return 1; }
	test "$(grep -c '^LockTime: summary: 1 site in 1 assembly' "$out.err")" = 1 || { cat "$out.err"; return 1; }
	python3 - "$out.json" "$LT_ROOT/docs/report-format.schema.json" <<'PY'
import json, sys, jsonschema
report = json.load(open(sys.argv[1]))
jsonschema.validate(report, json.load(open(sys.argv[2])))
sites = [(s["method"], s["acquisitions"]) for s in report["sites"]]
assert sites == [("Exits::Term", 1)], sites
PY
}
for ms in 0 10 20; do
	for run in 1 2 3; do
		check ".NET: SIGTERM $ms ms after the first timed lock (run $run): exit code 143, one summary, one report" \
			terminated_at "$ms" "$run"
	done
done

# ProcessExit handlers the program adds after its first timed lock - one just after it, one as Main returns - each
# holding a lock of its own 50 ms (`App late`): they run before the summary and report (the exit puts the
# run-time's handler last just before it calls them), so each is in the line, the summary and the report.
late_handlers() {
	rm -f "$LT_TMP/late.json"
	timeout 90 env -C "$NET" -u LOCKTIME_SUMMARY LOCKTIME_REPORT="$LT_TMP/late.json" dotnet App.dll late \
		>"$LT_TMP/late.out" 2>"$LT_TMP/late.err" || return 1
	python3 - "$LT_TMP/late.err" "$LT_TMP/late.json" <<'PY'
import json, re, sys
err = open(sys.argv[1]).read()
sites = {s["method"]: s for s in json.load(open(sys.argv[2]))["sites"]}
for method in ("Exits::HoldEarly", "Exits::HoldLate"):
    line = re.search(r"^LockTime: %s held ([0-9.]+) ms" % re.escape(method), err, re.M)
    assert line and float(line[1]) >= 45, (method, "line", err)
    assert re.search(r"^LockTime:\s+%s\s" % re.escape(method), err, re.M), (method, "summary row", err)
    assert method in sites and sites[method]["acquisitions"] == 1 and sites[method]["hold_ms"]["max"] >= 45, (method, sites.get(method))
PY
}
check ".NET: ProcessExit handlers added after the first timed lock, one as Main returns: their locks in the lines, summary and report" late_handlers

# The program's only lock, held 20 ms inside a ProcessExit handler at threshold 5 (`App exitonly`): the run-time
# starts there, after the exit read ProcessExit's handlers, so its own exit handler is in the list only because the
# weaver's call at the entry point (weave_early.c) subscribed the exit's hook before Main: the line, the summary
# and the report have the lock.
exit_only() {
	rm -f "$LT_TMP/exitonly.json"
	timeout 90 env -C "$NET" -u LOCKTIME_SUMMARY LOCKTIME_THRESHOLD_MS=5 LOCKTIME_REPORT="$LT_TMP/exitonly.json" \
		dotnet App.dll exitonly >"$LT_TMP/exitonly.out" 2>"$LT_TMP/exitonly.err" || return 1
	test "$(cat "$LT_TMP/exitonly.out")" = "exit only" || return 1
	python3 - "$LT_TMP/exitonly.err" "$LT_TMP/exitonly.json" <<'PY'
import json, re, sys
err = open(sys.argv[1]).read()
line = re.search(r"^LockTime: Exits::HoldAtExit held ([0-9.]+) ms", err, re.M)
assert line and float(line[1]) >= 18, ("line", err)
assert re.search(r"^LockTime: summary: 1 site in 1 assembly", err, re.M), ("summary", err)
assert re.search(r"^LockTime:\s+Exits::HoldAtExit\s", err, re.M), ("summary row", err)
sites = {s["method"]: s for s in json.load(open(sys.argv[2]))["sites"]}
assert list(sites) == ["Exits::HoldAtExit"] and sites["Exits::HoldAtExit"]["hold_ms"]["max"] >= 18, sites
PY
}
check ".NET: the only lock, in a ProcessExit handler: its line, the summary and the report" exit_only
check ".NET: the library's own module initializer still runs (the weaver's call first in it)" \
	test "$(cd "$NET" && timeout 60 dotnet App.dll modinit)" = "the library's module initializer ran"

# The same lock in a .NET program with its own [ModuleInitializer] (tests/woven/ModInit): the weaver's call goes first
# in that initializer, which still runs (its side effect printed); every method JIT-compiles.
MI=$LT_TMP/src/ModInit/bin/Release/net10.0
build_modinit() {
	dotnet build "$LT_TMP/src/ModInit/ModInit.csproj" -c Release -nologo -v q -p:UseSharedCompilation=false \
		>"$LT_TMP/modinit-build.log" 2>&1 || { tail -20 "$LT_TMP/modinit-build.log"; return 1; }
	"$LT" weave -q --threshold-ms 5 "$MI/ModInit.dll"
}
modinit_exit() {
	rm -f "$LT_TMP/modinit.json"
	timeout 90 env -C "$MI" -u LOCKTIME_SUMMARY LOCKTIME_REPORT="$LT_TMP/modinit.json" dotnet ModInit.dll \
		>"$LT_TMP/modinit.out" 2>"$LT_TMP/modinit.err" || return 1
	test "$(cat "$LT_TMP/modinit.out")" = "the module initializer ran" || { cat "$LT_TMP/modinit.out"; return 1; }
	grep -qE "^LockTime: Program::HoldAtExit held [0-9.]+ ms" "$LT_TMP/modinit.err" &&
		grep -q "^LockTime: summary: 1 site in 1 assembly; 1 acquisition" "$LT_TMP/modinit.err" &&
		test "$(site "$LT_TMP/modinit.json" Program::HoldAtExit acquisitions)" = 1 || { cat "$LT_TMP/modinit.err"; return 1; }
}
if check ".NET: a program with its own [ModuleInitializer] builds and is woven" build_modinit; then
	check ".NET: every method of the woven program with a module initializer JIT-compiles" ltcheck jit "$MI/ModInit.dll"
	check ".NET: its module initializer runs; its only lock, in a ProcessExit handler: the line, the summary and the report" modinit_exit
fi

# `App reentry` (tests/woven/App/Reentry.cs): a lock taken again by the thread that holds it is no new hold - a
# monitor 1,001 and 20,001 deep, a System.Threading.Lock (.NET), ReaderWriterLockSlim's write and read locks
# with recursion, a read lock inside a write lock exited after it (it holds the lock from then on); a SpinLock
# with owner tracking taken again (LockRecursionException: no acquisition). Exact acquisitions and re-entries,
# one slow-lock line per acquisition at threshold 0, every hold within what the program timed around it. A
# Monitor.Wait ended by Thread.Interrupt: the time inside is no hold. A SpinLock(false) entered on a thread that
# lives on and exited by another: one hold, not held now in the report written at exit.
reentry() { # NAME RUNNER DIR FILE PLAIN
	local name=$1 runner=$2 dir=$3 file=$4 plain=$5
	(cd "$plain" && timeout 120 "$runner" "$file" reentry >"$LT_TMP/reentry-plain.out" 2>/dev/null)
	rm -f "$LT_TMP/reentry.json"
	run_reentry() {
		(cd "$dir" && env -u LOCKTIME_SUMMARY LOCKTIME_REPORT="$LT_TMP/reentry.json" timeout 120 "$runner" "$file" reentry \
			>"$LT_TMP/out" 2>"$LT_TMP/err")
	}
	check "$name: reentry: runs" run_reentry || return
	check_same "$name: reentry: same output" "$LT_TMP/reentry-plain.out" "$LT_TMP/out"
	check "$name: reentry: the report validates against the schema" python3 -c "
import json, jsonschema
jsonschema.validate(json.load(open('$LT_TMP/reentry.json')), json.load(open('$LT_ROOT/docs/report-format.schema.json')))"
	reentry_figures() { # [lock]: the figures checked, one line each
		python3 - "$LT_TMP/reentry.json" "$LT_TMP/err" "$@" <<'PY'
import json, re, sys
report, err, scope = sys.argv[1], open(sys.argv[2]).read(), len(sys.argv) > 3
sites = {s["method"]: s for s in json.load(open(report))["sites"]}
took = {m.group(1): float(m.group(2)) for m in re.finditer(r"^App: (.*) took ([0-9.]+) ms$", err, re.M)}
lines = {}
for m in re.finditer(r"^LockTime: (Reentry::\w+) held ", err, re.M):
    lines[m.group(1)] = lines.get(m.group(1), 0) + 1
bad = []
def expect(what, ok):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        bad.append(what)
def site(method):
    return sites.get("Reentry::" + method) or {"acquisitions": None, "reentries": None, "hold_ms": {"total": None}}
# method, scenario, acquisitions, re-entries, slept 10 ms inside
cases = [("Recurse", "monitor recursion", 1, 1000, True), ("RecurseDeep", "deep monitor recursion", 1, 20000, False),
         ("WriteRecurse", "write lock recursion", 1, 100, True), ("ReadInside", "write lock recursion", 0, 1, False),
         ("ReadRecurse", "read lock recursion", 1, 100, True), ("Downgrade", "downgrade", 1, 0, False),
         ("DowngradeRead", "downgrade", 1, 0, True), ("SpinAgain", "SpinLock re-entry", 1, 0, True)]
if scope:
    cases.append(("RecurseScope", "Lock recursion", 1, 1000, True))
for method, scenario, acquisitions, reentries, slept in cases:
    s = site(method)
    hold = s["hold_ms"]["total"]
    expect("%s: %s acquisitions (%s), %s re-entries (%s)" % (method, acquisitions, s["acquisitions"], reentries, s.get("reentries")),
           s["acquisitions"] == acquisitions and s.get("reentries") == reentries)
    expect("%s: held %s ms in all, within the %s ms the program timed%s" % (method, hold, took.get(scenario), ", and >= 10" if slept else ""),
           hold is not None and scenario in took and hold <= took[scenario] and (not slept or hold >= 10))
    expect("%s: %d slow-lock lines, one per acquisition" % (method, lines.get("Reentry::" + method, 0)),
           lines.get("Reentry::" + method, 0) == acquisitions)
down = site("Downgrade")["hold_ms"]["total"], site("DowngradeRead")["hold_ms"]["total"]
expect("the write lock's hold and the read lock's after it (%s + %s ms) within the downgrade's %s ms" % (down + (took.get("downgrade"),)),
       None not in down and sum(down) <= took.get("downgrade", 0))
wait = site("WaitInterrupted")
lock, inside, hold = took.get("interrupted wait's lock"), took.get("inside the interrupted Wait"), wait["hold_ms"]["total"]
expect("WaitInterrupted: held %s ms of the lock statement's %s ms, %s ms of it inside the interrupted Wait" % (hold, lock, inside),
       wait["acquisitions"] == 1 and None not in (hold, lock, inside) and inside >= 100 and hold <= lock - 0.75 * inside)
spin = site("SpinEnter")
expect("SpinEnter: a SpinLock(false) exited by another thread: %s acquisition, held now %s, held %s ms of the hand-off's %s ms" %
       (spin["acquisitions"], spin.get("held_now"), spin["hold_ms"]["total"], took.get("SpinLock hand-off")),
       spin["acquisitions"] == 1 and spin.get("held_now", {}).get("count") == 0 and "SpinLock hand-off" in took and
       spin["hold_ms"]["total"] <= took["SpinLock hand-off"])
sys.exit(1 if bad else 0)
PY
	}
	check "$name: reentry: one hold per outermost acquisition, re-entries counted apart, no hold inside an interrupted Wait" \
		reentry_figures $6
}
reentry ".NET" dotnet "$NET" App.dll "$LT_TMP/plain" lock
reentry "Mono" mono "$FX" App.exe "$LT_TMP/plain48"

# The baked defaults: a summary of 2 rows and a report path, no LOCKTIME_* given; LOCKTIME_SUMMARY
# still overrides the rows.
baked() {
	local b=$LT_TMP/baked
	rm -rf "$b" && cp -r "$LT_TMP/plain" "$b" &&
	"$LT" weave -q --summary 2 --report "$b/baked-{pid}.json" --lock-order off "$b/App.dll" "$b/Lib.dll" &&
	run dotnet "$b" App.dll || return 1
	grep '^LockTime: top' "$LT_TMP/err"
	grep -q '^LockTime: top 2 sites' "$LT_TMP/err" && valid_report "$(ls "$b"/baked-*.json)" || return 1
	run dotnet "$b" App.dll LOCKTIME_SUMMARY=0 && ! grep -q '^LockTime: summary' "$LT_TMP/err"
}
check "--summary 2 --report PATH baked in; LOCKTIME_SUMMARY=0 overrides" baked
done_testing
