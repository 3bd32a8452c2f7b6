#!/usr/bin/env bash
# The run-time template (weaver/runtime, C#), end to end:
#   - it builds deterministically, build/gen/runtime_template.c holds its exact bytes, ltcheck verifies and
#     JIT-compiles it (that it stays inside the subset the merger copies, with every member the weaver
#     relies on: tests/unit/test_weave_template.c and tests/integration/merge.sh, which also merges it
#     into Mono's mscorlib);
#   - its xUnit tests (tests/runtime/LockTime.Runtime.Tests), one TAP line per test;
#   - tests/runtime/Host, a program with the run-time compiled in and hand-written call-site stubs:
#     the summary at exit (also after Environment.Exit and at SIGTERM, with the program's own SIGTERM
#     handler registered before or after the run-time's, the locks that handler takes counted, a second SIGTERM after
#     a cancelled one rewriting the report, a SIGTERM 0.5 s after the first lock in a flood of lines, SIGTERM as
#     soon as the first line is written), the report file (while a lock is held: the
#     hold in progress), the settings and their
#     warnings (a mistyped LOCKTIME_* name too, once for two copies), the file sink, 50 nested locks
#     whose holds reporting does not lengthen, 64 threads whose lines all come out whole, 20,000
#     short-lived threads counted exactly and leaving no record behind (memory bounded), a sink that takes
#     nothing (stderr a FIFO never read, LOCKTIME_OUTPUT a FIFO never opened: the exit, SIGTERM and a crash
#     end the process all the same, the report counts the lines not written), and with
#     tests/runtime/HostLib (a library with its own copy) one summary and one report for two
#     assemblies; Monitor.Wait in a lock entered twice (neither hold counts the wait); holder blame (a waiter's line and report name the site that held its lock, the
#     holder is charged), potential deadlocks from the lock order (the
#     transfer case, three locks on three threads, a cycle across the app and the library; none for
#     one order, re-entry and Monitor.Wait; LOCKTIME_LOCK_ORDER=0), 64 threads on 8 locks giving the
#     same results with and without the run-time; the live metrics read by dotnet-counters (a dotnet tool
#     installed into build/dotnet-tools from the configured NuGet sources), per site, against the
#     report; the same program built for net48 under Mono (no Meter there).
source "$(dirname "$0")/../lib.sh"
DLL=$LT_BUILD/runtime/LockTime.Runtime.dll
export MSBUILDDISABLENODEREUSE=1 DOTNET_CLI_USE_MSBUILD_SERVER=0
DOTNET_OPTS=(-c Release -nologo -v q -nodeReuse:false -p:UseSharedCompilation=false)
# The LOCKTIME_* variables of the caller must not change what the scenarios expect.
unset LOCKTIME_DISABLED LOCKTIME_THRESHOLD_MS LOCKTIME_OUTPUT LOCKTIME_SUMMARY LOCKTIME_REPORT LOCKTIME_REPORT_INTERVAL_S LOCKTIME_LOCK_ORDER \
	LOCKTIME_METRICS LOCKTIME_STACK_DEPTH LOCKTIME_TIMELINE

check "ltcheck builds" tools_build || exit 1
# ltcheck without the corpus (lib.sh's ltcheck builds the corpus first; nothing here reads it).
ltcheck() {
	dotnet "$LT_LTCHECK" "$@"
}
check "template builds (make runtime)" make -C "$LT_ROOT" --no-print-directory -s runtime || exit 1

# The same sources built again elsewhere (other obj/ and output folders) give the same bytes.
deterministic() {
	dotnet build "$LT_ROOT/weaver/runtime/LockTime.Runtime.csproj" "${DOTNET_OPTS[@]}" -o "$LT_TMP/again" \
		"-p:BaseIntermediateOutputPath=$LT_TMP/again-obj/" >"$LT_TMP/again.log" 2>&1 || { cat "$LT_TMP/again.log"; return 1; }
	cmp "$DLL" "$LT_TMP/again/LockTime.Runtime.dll"
}
check "template build is deterministic" deterministic

# build/runtime_template.c compiled and printed back is the DLL, byte for byte.
embedded_bytes() {
	cat >"$LT_TMP/dump.c" <<'C'
#include <stdint.h>
#include <stdio.h>
extern const uint8_t lt_runtime_template[];
extern const size_t lt_runtime_template_len;
int main(void) { return fwrite(lt_runtime_template, 1, lt_runtime_template_len, stdout) == lt_runtime_template_len ? 0 : 1; }
C
	gcc -std=c11 -Wall -Werror -o "$LT_TMP/dump" "$LT_TMP/dump.c" "$LT_BUILD/gen/runtime_template.c" &&
		"$LT_TMP/dump" >"$LT_TMP/dump.dll" && cmp "$DLL" "$LT_TMP/dump.dll"
}
check "runtime_template.c holds the template's bytes" embedded_bytes
check "template verifies" ltcheck verify "$DLL"
check "template JIT-compiles" ltcheck jit "$DLL"

# The xUnit tests: "Passed NAME [time]" / "Failed NAME [time]" from the console logger become TAP lines.
xunit_log=$LT_TMP/xunit.log
timeout -k 10 "$LT_DOTNET_TIMEOUT" dotnet test "$LT_ROOT/tests/runtime/LockTime.Runtime.Tests/LockTime.Runtime.Tests.csproj" \
	"${DOTNET_OPTS[@]}" --logger "console;verbosity=normal" >"$xunit_log" 2>&1
xunit_rc=$?
sed -nE 's/^ +Passed (.*) \[[^]]*\]$/ok - xunit: \1/p; s/^ +Failed (.*) \[[^]]*\]$/not ok - xunit: \1/p' "$xunit_log" | tap_relay
[ "$xunit_rc" -eq 124 ] && not_ok "xunit: dotnet test ended within $LT_DOTNET_TIMEOUT s" "timed out"
if [ "$xunit_rc" -ne 0 ] || ! grep -qE '^ +Passed ' "$xunit_log"; then
	not_ok "xunit: dotnet test" "exit status $xunit_rc"$'\n'"$(grep -E 'error|Failed|Assert' "$xunit_log" | head -n 30)"
fi

# The host program: each scenario's stdout, stderr and exit status.
check "host program builds" dotnet build "$LT_ROOT/tests/runtime/Host/Host.csproj" "${DOTNET_OPTS[@]}" -f net10.0 -o "$LT_TMP/host" || exit 1
host() { # OUT ERR ARGS... (with the caller's environment): sets host_rc
	local out=$1 err=$2
	shift 2
	timeout 120 dotnet "$LT_TMP/host/Host.dll" "$@" >"$out" 2>"$err"
	host_rc=$?
}
# expect NAME CONDITION DETAIL: ok when CONDITION (a shell test string) holds.
expect() {
	if eval "$2"; then ok "$1"; else not_ok "$1" "$3"; fi
}

# 16 threads x 1000 locks of one site: exactly 16,000 acquisitions, in the summary and in the report.
LOCKTIME_REPORT="$LT_TMP/run-{pid}.json" host "$LT_TMP/t.out" "$LT_TMP/t.err" threads
report=$(ls "$LT_TMP"/run-*.json 2>/dev/null | head -n 1)
expect "threads: exits 0" '[ "$host_rc" -eq 0 ]' "$(cat "$LT_TMP/t.err")"
expect "threads: summary at exit counts 16000 acquisitions" \
	'grep -q "^LockTime: summary: 1 site in 1 assembly; 16000 acquisitions, " "$LT_TMP/t.err"' "$(cat "$LT_TMP/t.err")"
expect "threads: summary table names the site" \
	'grep -qE "^LockTime:   Host.Program::Count +Program.cs:11 +Monitor.Enter +16000 " "$LT_TMP/t.err"' "$(cat "$LT_TMP/t.err")"
expect "threads: report file named with the pid" '[[ "$report" =~ /run-[0-9]+\.json$ ]] && [ "$report" != "$LT_TMP/run-0.json" ]' "$(ls "$LT_TMP")"
report_field() { # FILE SITE-LOCATION PYTHON-EXPRESSION-OF-s: prints the value
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
assert r["format"] == "locktime-report" and r["version"] == 3
s = [x for x in r["sites"] if x["location"] == sys.argv[2]][0]
print(eval(sys.argv[3]))' "$@"
}
expect "threads: report has 16000 acquisitions" '[ "$(report_field "$report" Program.cs:11 "s[\"acquisitions\"]")" = 16000 ]' "$(cat "$report")"

# Threads that end leave no record behind: 20,000 short-lived threads, each taking Program.cs:11 once,
# give exactly 20,000 acquisitions, and keep the memory after a forced GC within 4 MB of 2,000 threads'
# (a record kept per thread was about 2 KB: 35 MB more).
LOCKTIME_REPORT="$LT_TMP/ended2k.json" host "$LT_TMP/e2k.out" "$LT_TMP/e2k.err" ended 2000
LOCKTIME_REPORT="$LT_TMP/ended.json" host "$LT_TMP/e.out" "$LT_TMP/e.err" ended 20000
expect "ended: exits 0" '[ "$host_rc" -eq 0 ]' "$(cat "$LT_TMP/e.err")"
expect "ended: report has exactly 20000 acquisitions" \
	'[ "$(report_field "$LT_TMP/ended.json" Program.cs:11 "(s[\"acquisitions\"], s[\"hold_histogram\"] != [], s[\"held_now\"][\"count\"])")" = "(20000, True, 0)" ]' "$(cat "$LT_TMP/ended.json")"
expect "ended: summary counts 20000 acquisitions" \
	'grep -q "^LockTime: summary: 1 site in 1 assembly; 20000 acquisitions, " "$LT_TMP/e.err"' "$(cat "$LT_TMP/e.err")"
mem_2k=$(sed -n 's/^memory after GC: //p' "$LT_TMP/e2k.out")
mem_20k=$(sed -n 's/^memory after GC: //p' "$LT_TMP/e.out")
expect "ended: memory after GC with 20000 threads within 4 MB of 2000 threads'" \
	'[ -n "$mem_2k" ] && [ -n "$mem_20k" ] && [ $((mem_20k - mem_2k)) -lt $((4 * 1024 * 1024)) ]' "2000 threads: $mem_2k bytes, 20000 threads: $mem_20k bytes"

# A lock call that throws while it waits (Thread.Interrupt on a thread blocked in lock) did not acquire: a failed
# try of its site, its wait charged to the holder, as a timed try that gives up.
LOCKTIME_REPORT="$LT_TMP/intr.json" host "$LT_TMP/intr.out" "$LT_TMP/intr.err" interrupted
expect "interrupted: the wait a Thread.Interrupt ended is a failed try, waited behind the holder" \
	'[ "$host_rc" -eq 0 ] && grep -qx "waiter: interrupted" "$LT_TMP/intr.out" &&
	 [ "$(report_field "$LT_TMP/intr.json" Program.cs:13 "(s[\"acquisitions\"], s[\"contended\"], s[\"failed\"], s[\"wait_ms\"][\"max\"] >= 40, [w[\"location\"] for w in s[\"waited_behind\"]], s[\"waiting_now\"][\"count\"])")" = "(0, 1, 1, True, ['"'"'Program.cs:12'"'"'], 0)" ] &&
	 [ "$(report_field "$LT_TMP/intr.json" Program.cs:12 "(s[\"acquisitions\"], s[\"blamed_wait_ms\"] >= 40)")" = "(1, True)" ]' \
	"$(cat "$LT_TMP/intr.out" "$LT_TMP/intr.err" "$LT_TMP/intr.json")"

# A 100 ms hold at Program.cs:12 and a waiter at :13 (contended), three waiters (waiters). The program
# measures each hold and wait itself around the stubs ("measured:" lines): the reported hold lies
# between the inner and outer measure, each wait within 3 ms below the waiter's own measure (what the
# stub's prologue and a preemption before its clock read may take) and never above it; every wait is
# charged to the holder once - waited_behind's total is the waiters' wait, the holder's blamed_wait_ms
# that total, and no more than the waiters measured they waited.
blame_bounds() { # REPORT OUT WAITERS: exits non-zero with what is out of bounds
	python3 - "$@" <<'PY'
import json, sys
report, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
sites = {s["location"]: s for s in json.load(open(report))["sites"]}
measured = [l.split()[1:] for l in open(out) if l.startswith("measured: ")]
holds = [(float(a), float(b)) for w, a, b in measured if w == "hold"]
waits = [float(b) for w, a, b in measured if w == "wait"]
assert len(holds) == 1 and len(waits) == n, measured
holder, waiter = sites["Program.cs:12"], sites["Program.cs:13"]
inner, outer = holds[0]
hold = holder["hold_ms"]["total"]
assert holder["acquisitions"] == 1 and inner - 0.001 <= hold <= outer + 0.001, (hold, inner, outer)
wait = waiter["wait_ms"]["total"]
assert waiter["acquisitions"] == n and waiter["contended"] == n, waiter
assert sum(waits) - 3 * n <= wait <= sum(waits) + 0.001, (wait, waits)
assert waiter["wait_ms"]["max"] <= max(waits) + 0.001, (waiter["wait_ms"], waits)
# Each wait behind the holder; a waiter after the first also behind the waiters that had the lock before it
# (their own site): the shares add up to the waits (a hand-over after a release is the releasing holder's).
behind = waiter["waited_behind"]
assert [(w["method"], w["count"]) for w in behind if w["location"] == "Program.cs:12"] == [("Host.Program::Hold", n)], behind
assert all(w["location"] == "Program.cs:13" and w["count"] <= n - 1 for w in behind if w["location"] != "Program.cs:12"), behind
assert abs(sum(w["wait_ms"] for w in behind) - wait) <= 0.001 * len(behind), (behind, wait)
charged = sum(w["wait_ms"] for s in sites.values() for w in s["waited_behind"] if w["location"] == "Program.cs:12")
assert abs(holder["blamed_wait_ms"] - charged) <= 0.001 * n and holder["blamed_wait_ms"] <= sum(waits) + 0.001, (holder["blamed_wait_ms"], charged, waits)
print("hold %.3f in [%.3f, %.3f]; wait %.3f against measured %.3f; blamed %.3f" % (hold, inner, outer, wait, sum(waits), holder["blamed_wait_ms"]))
PY
}
LOCKTIME_REPORT="$LT_TMP/c.json" host "$LT_TMP/c.out" "$LT_TMP/c.err" contended
bounds=$(blame_bounds "$LT_TMP/c.json" "$LT_TMP/c.out" 1 2>&1)
bounds_rc=$?
expect "contended: hold, wait and blame within the program's own measures" '[ $bounds_rc -eq 0 ]' "$bounds $(cat "$LT_TMP/c.out" "$LT_TMP/c.json")"

# Holder blame: the waiter's line names the holder's method and line.
holder_line='^LockTime: Host\.Program::Wait held [0-9]+\.[0-9]{3} ms, waited [0-9]+\.[0-9]{3} ms at Program\.cs:13 \(held by Host\.Program::Hold at Program\.cs:12\)$'
expect "blame: the waiter's line names the holder" '[ "$(grep -cE "$holder_line" "$LT_TMP/c.err")" -eq 1 ]' "$(cat "$LT_TMP/c.err")"
expect "blame: the summary has the column made others wait" 'grep -qE "^LockTime:   method .* hold p99  made others wait$" "$LT_TMP/c.err"' "$(cat "$LT_TMP/c.err")"

# Three waiters behind one holder: each is charged to it.
LOCKTIME_REPORT="$LT_TMP/w.json" host "$LT_TMP/w.out" "$LT_TMP/w.err" waiters
expect "blame: three waiters, three lines naming the holder" '[ "$(grep -cE "$holder_line" "$LT_TMP/w.err")" -eq 3 ]' "$(cat "$LT_TMP/w.err")"
bounds=$(blame_bounds "$LT_TMP/w.json" "$LT_TMP/w.out" 3 2>&1)
bounds_rc=$?
expect "blame: three waiters, each charged to the holder once, within the program's own measures" '[ $bounds_rc -eq 0 ]' \
	"$bounds $(cat "$LT_TMP/w.out" "$LT_TMP/w.json")"

# A thread inside Monitor.Wait on the lock (at Program.cs:16) is not blamed: the thread that took it meanwhile is.
LOCKTIME_REPORT="$LT_TMP/wb.json" host "$LT_TMP/wb.out" "$LT_TMP/wb.err" waitblame
expect "blame: a thread inside Monitor.Wait is not the holder" \
	'[ "$(grep -cE "$holder_line" "$LT_TMP/wb.err")" -eq 1 ] &&
	 [ "$(report_field "$LT_TMP/wb.json" Program.cs:13 "[w[\"location\"] for w in s[\"waited_behind\"]]")" = "['"'"'Program.cs:12'"'"']" ]' \
	"$(cat "$LT_TMP/wb.err" "$LT_TMP/wb.json")"

# Monitor.Wait gives up a monitor entered twice (Program.cs:12, then :13, a re-entry) and takes it back:
# its 200 ms are no hold; the re-entry is counted apart, no hold of its own.
LOCKTIME_REPORT="$LT_TMP/rw.json" host "$LT_TMP/rw.out" "$LT_TMP/rw.err" rewait
expect "Monitor.Wait in a re-entered lock: no hold counts the wait (< 100 ms), the re-entry no hold" \
	'[ "$(report_field "$LT_TMP/rw.json" Program.cs:12 "s[\"acquisitions\"] == 1 and s[\"hold_ms\"][\"max\"] < 100")" = True ] &&
	 [ "$(report_field "$LT_TMP/rw.json" Program.cs:13 "s[\"acquisitions\"] == 0 and s[\"reentries\"] == 1 and s[\"hold_ms\"][\"total\"] == 0")" = True ]' \
	"$(cat "$LT_TMP/rw.json")"

# The other lock types through their stubs (Host/OtherLocks.cs): a 60 ms hold at the holder's site and
# a waiter at the next; readers that overlap do not wait; a semaphore used as a lock (maximum 1) is held
# until its Release on another thread, or across an await; a counting semaphore's hold is not applicable.
held_and_waited() { # NAME SCENARIO HOLDER-LOCATION WAITER-LOCATION BLAMED(1/0)
	# expect evaluates its condition in its own frame: the locations go through locals of this one.
	local json=$LT_TMP/$2.json err=$LT_TMP/$2.err holder_at=$3 waiter_at=$4
	LOCKTIME_REPORT="$json" host "$LT_TMP/$2.out" "$err" "$2"
	expect "$1: hold >= 50 ms at the holder's line" \
		'[ "$host_rc" -eq 0 ] && [ "$(report_field "$json" "$holder_at" "s[\"hold_ms\"][\"max\"] >= 50")" = True ]' "$(cat "$err" "$json")"
	expect "$1: wait >= 40 ms at the waiter's line, contended" \
		'[ "$(report_field "$json" "$waiter_at" "s[\"wait_ms\"][\"max\"] >= 40 and s[\"contended\"] == 1")" = True ]' "$(cat "$json")"
	[ "$5" = 1 ] && expect "$1: the waiter waited behind the holder" \
		'[ "$(report_field "$json" "$waiter_at" "[w[\"location\"] for w in s[\"waited_behind\"]]")" = "['"'"'$holder_at'"'"']" ]' "$(cat "$json")"
	return 0
}
held_and_waited "ReaderWriterLockSlim: writer, then a reader" rwlock Program.cs:19 Program.cs:20 1
held_and_waited "SemaphoreSlim(1, 1): released by another thread" semaphore Program.cs:21 Program.cs:22 1
held_and_waited "SemaphoreSlim(1, 1): an async holder awaits Task.Delay(60), an async waiter" asyncgate Program.cs:23 Program.cs:24 1
held_and_waited "SemaphoreSlim(1, 1): an async waiter that begins before the holder's stub records its hold" asyncrace Program.cs:23 Program.cs:24 1
held_and_waited "SpinLock" spin Program.cs:26 Program.cs:27 0
# A WaitAsync through two holds in turn is shared among them as a thread's wait is (each holder tells its share
# into the pending wait): the second waiter waits behind the rest of the holder's 60 ms, then the first waiter's 40.
LOCKTIME_REPORT="$LT_TMP/relay.json" host "$LT_TMP/relay.out" "$LT_TMP/relay.err" asyncrelay
expect "SemaphoreSlim(1, 1): a WaitAsync behind two holds in turn is charged to both, its shares adding up to its wait" \
	'[ "$host_rc" -eq 0 ] && grep -q "^relay free: 1," "$LT_TMP/relay.out" &&
	 [ "$(report_field "$LT_TMP/relay.json" Program.cs:22 "(s[\"contended\"], sorted(w[\"location\"] for w in s[\"waited_behind\"]), [w[\"wait_ms\"] >= 30 for w in s[\"waited_behind\"] if w[\"location\"] == \"Program.cs:24\"], abs(sum(w[\"wait_ms\"] for w in s[\"waited_behind\"]) - s[\"wait_ms\"][\"total\"]) < 0.001)")" = "(1, ['"'"'Program.cs:23'"'"', '"'"'Program.cs:24'"'"'], [True], True)" ]' \
	"$(cat "$LT_TMP/relay.out" "$LT_TMP/relay.err" "$LT_TMP/relay.json")"
expect "SemaphoreSlim(1, 1): a WaitAsync(20) that gives up is charged to the holder, as a timed try's wait" \
	'grep -qx "relay free: 1, timed take: False" "$LT_TMP/relay.out" &&
	 [ "$(report_field "$LT_TMP/relay.json" Program.cs:25 "(s[\"failed\"], \"Program.cs:23\" in [w[\"location\"] for w in s[\"waited_behind\"]], abs(sum(w[\"wait_ms\"] for w in s[\"waited_behind\"]) - s[\"wait_ms\"][\"total\"]) < 0.001)")" = "(1, True, True)" ]' \
	"$(cat "$LT_TMP/relay.out" "$LT_TMP/relay.json")"
expect "SemaphoreSlim: the program's results" 'grep -qx "semaphore free: 1" "$LT_TMP/semaphore.out" && grep -qx "async take: True, free: 1" "$LT_TMP/asyncgate.out" &&
	 grep -qx "async take: True, free: 1" "$LT_TMP/asyncrace.out"' "$(cat "$LT_TMP/semaphore.out" "$LT_TMP/asyncgate.out" "$LT_TMP/asyncrace.out")"
LOCKTIME_REPORT="$LT_TMP/readers.json" host "$LT_TMP/readers.out" "$LT_TMP/readers.err" readers
expect "ReaderWriterLockSlim: overlapping readers do not wait for each other" \
	'[ "$(report_field "$LT_TMP/readers.json" Program.cs:20 "(s[\"acquisitions\"], s[\"contended\"], s[\"wait_ms\"][\"max\"] < 40, s[\"waited_behind\"], s[\"hold_ms\"][\"max\"] >= 50)")" = "(2, 0, True, [], True)" ]' \
	"$(cat "$LT_TMP/readers.json")"
expect "ReaderWriterLockSlim: a writer waits behind the readers" \
	'[ "$(report_field "$LT_TMP/readers.json" Program.cs:19 "(s[\"contended\"], s[\"wait_ms\"][\"max\"] >= 40, [w[\"location\"] for w in s[\"waited_behind\"]])")" = "(1, True, ['"'"'Program.cs:20'"'"'])" ]' \
	"$(cat "$LT_TMP/readers.json")"
LOCKTIME_REPORT="$LT_TMP/counting.json" host "$LT_TMP/counting.out" "$LT_TMP/counting.err" counting
expect "counting SemaphoreSlim: the wait, hold not applicable in the report" \
	'[ "$(report_field "$LT_TMP/counting.json" Program.cs:25 "(s[\"acquisitions\"], s[\"wait_ms\"][\"max\"] >= 40, s.get(\"hold_applies\"), s[\"hold_ms\"][\"total\"])")" = "(4, True, False, 0)" ]' \
	"$(cat "$LT_TMP/counting.json")"
expect "counting SemaphoreSlim: the line and the summary say the hold is not applicable" \
	'grep -qE "^LockTime: Host\.Pool::Take waited [0-9]+\.[0-9]{3} ms at Program\.cs:25 \(hold not applicable\)$" "$LT_TMP/counting.err" &&
	 grep -qE "^LockTime:   Host\.Pool::Take +Program\.cs:25 .* n/a +n/a +n/a +[0-9.]+$" "$LT_TMP/counting.err"' "$(cat "$LT_TMP/counting.err")"

# Potential deadlocks: the line when a cycle first appears, the report's cycles, the summary's list.
cycles() { # FILE: the report's cycles as "held>acquired,held>acquired;..." (locations)
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(";".join(",".join(e["held"]["location"] + ">" + e["acquired"]["location"] for e in c["edges"]) for c in r["lock_order_cycles"]))' "$1"
}
transfer_line='LockTime: potential deadlock: Program.cs:14 then Program.cs:15 (Host.Bank::Transfer), and in the other order at Program.cs:14 then Program.cs:15 (Host.Bank::Transfer)'
LOCKTIME_REPORT="$LT_TMP/tr.json" host "$LT_TMP/tr.out" "$LT_TMP/tr.err" transfer
expect "lock order: Transfer(x, y) then Transfer(y, x) gives one line" '[ "$(grep -cxF "$transfer_line" "$LT_TMP/tr.err")" -eq 1 ]' "$(cat "$LT_TMP/tr.err")"
expect "lock order: the transfer cycle in the report" '[ "$(cycles "$LT_TMP/tr.json")" = "Program.cs:14>Program.cs:15,Program.cs:14>Program.cs:15" ]' "$(cat "$LT_TMP/tr.json")"
expect "lock order: the summary lists it after the table" \
	'grep -A1 "^LockTime: 1 potential deadlock " "$LT_TMP/tr.err" | grep -qxF "LockTime:   ${transfer_line#LockTime: potential deadlock: }"' "$(cat "$LT_TMP/tr.err")"
LOCKTIME_REPORT="$LT_TMP/c3.json" host "$LT_TMP/c3.out" "$LT_TMP/c3.err" cycle3
expect "lock order: A then B, B then C, C then A on three threads" \
	'grep -qxF "LockTime: potential deadlock: Program.cs:16 then Program.cs:17 (Host.Program::First then Host.Program::Second), Program.cs:17 then Program.cs:18 (Host.Program::Second then Host.Program::Third), and Program.cs:18 then Program.cs:16 (Host.Program::Third then Host.Program::First)" "$LT_TMP/c3.err" &&
	 [ "$(cycles "$LT_TMP/c3.json")" = "Program.cs:16>Program.cs:17,Program.cs:17>Program.cs:18,Program.cs:18>Program.cs:16" ]' "$(cat "$LT_TMP/c3.err" "$LT_TMP/c3.json")"
LOCKTIME_REPORT="$LT_TMP/lc.json" host "$LT_TMP/lc.out" "$LT_TMP/lc.err" libcycle
expect "lock order: a cycle across the app and the library (two copies of the run-time)" \
	'grep -qxF "LockTime: potential deadlock: Program.cs:16 then Library.cs:11 (Host.Program::First then HostLib.Library::Under), and in the other order at Library.cs:12 then Program.cs:17 (HostLib.Library::Around then Host.Program::Second)" "$LT_TMP/lc.err" &&
	 [ "$(cycles "$LT_TMP/lc.json")" = "Program.cs:16>Library.cs:11,Library.cs:12>Program.cs:17" ]' "$(cat "$LT_TMP/lc.err" "$LT_TMP/lc.json")"
expect "lock order: the library's copy, started inside the app's lock, adds no lock of its own (2 locks, 2 edges)" \
	'[ "$(python3 -c "import json, sys; o = json.load(open(sys.argv[1]))[\"lock_order\"]; print(o[\"locks\"], o[\"edges\"])" "$LT_TMP/lc.json")" = "2 2" ]' \
	"$(cat "$LT_TMP/lc.json")"
LOCKTIME_REPORT="$LT_TMP/nc.json" host "$LT_TMP/nc.out" "$LT_TMP/nc.err" nocycle
expect "lock order: one order, re-entry and Monitor.Wait under two locks give none (2 edges followed: a -> b, b -> c)" \
	'! grep -q "potential deadlock" "$LT_TMP/nc.err" && [ -z "$(cycles "$LT_TMP/nc.json")" ] &&
	 [ "$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))[\"lock_order\"][\"edges\"])" "$LT_TMP/nc.json")" = 2 ]' \
	"$(cat "$LT_TMP/nc.err" "$LT_TMP/nc.json")"
# A SemaphoreSlim(1, 1) taken on one thread and released on another leaves the taker's lock order: the
# taker's next two locks give one edge (followed once it holds nothing), not three; the other order later
# (a lock, then the semaphore) is the second edge, no cycle.
LOCKTIME_REPORT="$LT_TMP/so.json" host "$LT_TMP/so.out" "$LT_TMP/so.err" semorder
expect "lock order: a semaphore released on another thread leaves its taker's order (2 edges followed, no cycle)" \
	'[ "$host_rc" -eq 0 ] && ! grep -q "potential deadlock" "$LT_TMP/so.err" && [ -z "$(cycles "$LT_TMP/so.json")" ] &&
	 [ "$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))[\"lock_order\"][\"edges\"])" "$LT_TMP/so.json")" = 2 ]' \
	"$(cat "$LT_TMP/so.err" "$LT_TMP/so.json")"
# A SemaphoreSlim(1, 1) taken by Wait() in an async method (AcquiredSemaphoreInAsync) that awaits holding
# it, while its thread takes a lock, then that lock and the semaphore: one edge, no cycle; the hold timed.
LOCKTIME_REPORT="$LT_TMP/aw.json" host "$LT_TMP/aw.out" "$LT_TMP/aw.err" asyncwait
expect "lock order: a semaphore's Wait() in an async method stays out of the order (1 edge followed, no cycle), held >= 50 ms" \
	'[ "$host_rc" -eq 0 ] && ! grep -q "potential deadlock" "$LT_TMP/aw.err" && [ -z "$(cycles "$LT_TMP/aw.json")" ] &&
	 [ "$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))[\"lock_order\"][\"edges\"])" "$LT_TMP/aw.json")" = 1 ] &&
	 [ "$(report_field "$LT_TMP/aw.json" Program.cs:21 "s[\"acquisitions\"] == 1 and s[\"hold_ms\"][\"max\"] >= 50")" = True ]' \
	"$(cat "$LT_TMP/aw.err" "$LT_TMP/aw.json")"
LOCKTIME_LOCK_ORDER=Off LOCKTIME_REPORT="$LT_TMP/off.json" host "$LT_TMP/off.out" "$LT_TMP/off.err" transfer
expect "lock order: LOCKTIME_LOCK_ORDER=Off follows none" '! grep -q "potential deadlock" "$LT_TMP/off.err" && [ -z "$(cycles "$LT_TMP/off.json")" ] && grep -q "^LockTime: summary: " "$LT_TMP/off.err"' \
	"$(cat "$LT_TMP/off.err")"
LOCKTIME_LOCK_ORDER=perhaps host "$LT_TMP/lw.out" "$LT_TMP/lw.err" transfer
expect "lock order: a bad LOCKTIME_LOCK_ORDER warns and keeps it on" \
	'[ "$(grep -cxF "LockTime: warning: LOCKTIME_LOCK_ORDER=\"perhaps\" is not 1/true/yes/on or 0/false/no/off; using 1 (lock order on)" "$LT_TMP/lw.err")" -eq 1 ] && grep -qxF "$transfer_line" "$LT_TMP/lw.err"' \
	"$(cat "$LT_TMP/lw.err")"

# A real deadlock: Debit(a) then Credit(b) and Debit(b) then Credit(a) at once. Its line comes as it
# forms (the program hangs), with the potential deadlock (the edges of waits that never end); a third
# thread waiting behind it adds no second deadlock; the SIGTERM's summary and report have it.
deadlock_run() { # SCENARIO: runs it until its deadlock line (at most 30 s), then SIGTERM; sets host_rc
	# (deadlocked waits 1.5 s after the line: the third thread has begun to wait by then)
	LOCKTIME_REPORT="$LT_TMP/$1.json" deadlocked "$LT_TMP/$1.out" "$LT_TMP/$1.err" dotnet "$LT_TMP/host/Host.dll" "$1"
	host_rc=$?
}
deadlocks() { # FILE: the report's deadlocks as "waits<held,waits<held;..." (locations, sorted), and whether each edge's holder is the next edge's thread
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
out = []
for d in r["deadlocks"]:
    e = d["edges"]
    ring = all(e[k]["holder_thread"] == e[(k + 1) % len(e)]["thread"] != e[k]["thread"] for k in range(len(e)))
    out.append(",".join(sorted(x["waits"]["location"] + "<" + x["held"]["location"] for x in e)) + (" ring" if ring else " broken"))
print(";".join(out))' "$1"
}
t='thread [0-9]+ waits at Program\.cs:29 \(Host\.Account::Credit\) for the lock thread [0-9]+ took at Program\.cs:28 \(Host\.Account::Debit\)'
deadlock_run deadlock
expect "deadlock: its line as it forms, once, naming both threads' waits and holds" \
	'[ "$(grep -cE "^LockTime: deadlock: $t; $t$" "$LT_TMP/deadlock.err")" -eq 1 ] && [ "$(grep -c "^LockTime: deadlock: " "$LT_TMP/deadlock.err")" -eq 1 ]' "$(cat "$LT_TMP/deadlock.err")"
expect "deadlock: the potential deadlock too, from the waits' edges" \
	'grep -qxF "LockTime: potential deadlock: Program.cs:28 then Program.cs:29 (Host.Account::Debit then Host.Account::Credit), and in the other order at Program.cs:28 then Program.cs:29 (Host.Account::Debit then Host.Account::Credit)" "$LT_TMP/deadlock.err"' \
	"$(cat "$LT_TMP/deadlock.err")"
expect "deadlock: SIGTERM's summary lists it (exit 143)" \
	'[ "$host_rc" -eq 143 ] && grep -A1 -xF "LockTime: 1 deadlock (threads that waited for each other):" "$LT_TMP/deadlock.err" | grep -qE "^LockTime:   $t; $t$"' \
	"rc $host_rc: $(cat "$LT_TMP/deadlock.err")"
expect "deadlock: the summary's holds in progress: Debit's three, the oldest over 1 s" \
	'grep -A1 -xF "LockTime: held now, as this summary was made (longest first):" "$LT_TMP/deadlock.err" |
	 grep -qE "^LockTime:   Host\.Account::Debit at Program\.cs:28: 3 holds, the longest [1-9][0-9]{3,}\.[0-9]{3} ms so far$"' "$(cat "$LT_TMP/deadlock.err")"
expect "deadlock: the report's deadlocks, each thread waiting for the next (3 locks, 3 edges: the third thread's too)" \
	'[ "$(deadlocks "$LT_TMP/deadlock.json")" = "Program.cs:29<Program.cs:28,Program.cs:29<Program.cs:28 ring" ] &&
	 [ "$(python3 -c "import json, sys; o = json.load(open(sys.argv[1]))[\"lock_order\"]; print(o[\"locks\"], o[\"edges\"], o[\"deadlocks_not_kept\"])" "$LT_TMP/deadlock.json")" = "3 3 0" ]' \
	"$(cat "$LT_TMP/deadlock.json")"
expect "deadlock: the report's sites have the waiters' own (Credit: 3 waiting now, the longest over 1 s, none acquired)" \
	'[ "$(report_field "$LT_TMP/deadlock.json" Program.cs:29 "(s[\"waiting_now\"][\"count\"], s[\"waiting_now\"][\"longest_ms\"] > 1000, s[\"acquisitions\"])")" = "(3, True, 0)" ]' \
	"$(head -c 3000 "$LT_TMP/deadlock.json")"
deadlock_run libdeadlock
expect "deadlock: across the app and the library (two copies): one line" \
	'[ "$(grep "^LockTime: deadlock: " "$LT_TMP/libdeadlock.err" | grep -E "thread [0-9]+ waits at Library\.cs:11 \(HostLib\.Library::Under\) for the lock thread [0-9]+ took at Library\.cs:12 \(HostLib\.Library::Around\)" |
	    grep -cE "thread [0-9]+ waits at Program\.cs:29 \(Host\.Account::Credit\) for the lock thread [0-9]+ took at Program\.cs:28 \(Host\.Account::Debit\)")" -eq 1 ] &&
	 [ "$(deadlocks "$LT_TMP/libdeadlock.json")" = "Library.cs:11<Library.cs:12,Program.cs:29<Program.cs:28 ring" ]' \
	"$(cat "$LT_TMP/libdeadlock.err" "$LT_TMP/libdeadlock.json")"
expect "deadlock: none where threads only wait (contended, waiters, transfer, three-lock cycle, nocycle)" \
	'! grep -q "^LockTime: deadlock" "$LT_TMP"/{c,w,tr,c3,nc}.err && [ -z "$(for j in c w tr c3 nc; do deadlocks "$LT_TMP/$j.json"; done)" ]' \
	"$(grep -H "^LockTime: deadlock" "$LT_TMP"/{c,w,tr,c3,nc}.err)"

# 64 threads on 8 locks (pairs in one order, and single locks), a few seconds: the program's results are
# the same with the run-time and without; the report counts every lock the program took, blame adds up.
LOCKTIME_DISABLED=1 host "$LT_TMP/st0.out" "$LT_TMP/st0.err" stress 40000
LOCKTIME_REPORT="$LT_TMP/st.json" host "$LT_TMP/st.out" "$LT_TMP/st.err" stress 40000
expect "stress: the same results with and without the run-time" '[ -s "$LT_TMP/st0.out" ] && cmp -s "$LT_TMP/st0.out" "$LT_TMP/st.out"' \
	"$(cat "$LT_TMP/st0.out" "$LT_TMP/st.out" "$LT_TMP/st.err" | head -n 20)"
expect "stress: the report's counts add up" \
	'python3 -c "import json, sys
r = json.load(open(sys.argv[1]))
taken = int(open(sys.argv[2]).read().split(\"locks taken: \")[1])
sites = r[\"sites\"]
behind = [w for s in sites for w in s[\"waited_behind\"]]
assert sum(s[\"acquisitions\"] for s in sites) == taken == 64 * 40000 * 3, taken
assert all(s[\"contended\"] <= s[\"acquisitions\"] and sum(w[\"count\"] for w in s[\"waited_behind\"]) <= s[\"contended\"] for s in sites)
assert all(sum(w[\"wait_ms\"] for w in s[\"waited_behind\"]) <= s[\"wait_ms\"][\"total\"] + 0.001 * (1 + len(s[\"waited_behind\"])) for s in sites)
assert abs(sum(s[\"blamed_wait_ms\"] for s in sites) - sum(w[\"wait_ms\"] for w in behind)) < 0.001 * (1 + len(sites) + len(behind))
assert {w[\"location\"] for w in behind} <= {s[\"location\"] for s in sites}
assert r[\"lock_order_cycles\"] == [] and r[\"lock_order\"][\"locks\"] == 8
" "$LT_TMP/st.json" "$LT_TMP/st.out"' "$(cat "$LT_TMP/st.json" | head -c 3000)"
expect "stress: contended waits under a held lock, 64 threads, one order: no deadlock claimed" \
	'! grep -q "deadlock" "$LT_TMP/st.err" && [ -z "$(deadlocks "$LT_TMP/st.json")" ] &&
	 [ "$(python3 -c "import json, sys; print(sum(s[\"contended\"] for s in json.load(open(sys.argv[1]))[\"sites\"] if s[\"location\"] == \"Program.cs:17\"))" "$LT_TMP/st.json")" -gt 0 ]' \
	"$(grep deadlock "$LT_TMP/st.err" | head -n 5; head -c 2000 "$LT_TMP/st.json")"

# 50 nested locks around a 20 ms sleep, six rounds, threshold 0, a file sink: 300 whole lines, and each
# round's outermost and innermost holds within 2 ms of what the program measured itself (from the
# acquisition's return to the release's call). No line is written while a lock is held and a known
# lock-order pair costs a lookup: over rounds 2-6 (the first meets 1225 new pairs), the least spread
# between outermost and innermost hold, as reported, is at most 2 ms above the least the same program
# measured with timing off (LOCKTIME_DISABLED=1) in this test - the machine's own noise is in both.
LOCKTIME_DISABLED=1 host "$LT_TMP/n0.out" "$LT_TMP/n0.err" nested
LOCKTIME_THRESHOLD_MS=0 LOCKTIME_OUTPUT="$LT_TMP/nested.log" host "$LT_TMP/n.out" "$LT_TMP/n.err" nested
holds=$(sed -nE 's/^LockTime: Host.Program::Nested held ([0-9]+\.[0-9]{3}) ms, waited [0-9]+\.[0-9]{3} ms at Program.cs:10$/\1/p' "$LT_TMP/nested.log")
expect "nested: 300 whole lines in the file sink, none on stderr" '[ "$(wc -l <<<"$holds")" -eq 300 ] && [ ! -s "$LT_TMP/n.err" ]' \
	"$(head -n 5 "$LT_TMP/nested.log"; cat "$LT_TMP/n.err")"
expect "nested: the summary follows the lines in the file" 'tail -n 6 "$LT_TMP/nested.log" | grep -q "^LockTime: top 1 site"' "$(tail -n 8 "$LT_TMP/nested.log")"
printf '%s\n' "$holds" >"$LT_TMP/nested.holds"
nested_check=$(python3 - "$LT_TMP/n.out" "$LT_TMP/n0.out" "$LT_TMP/nested.holds" <<'PY' 2>&1
import re, sys
def rounds(path):
    return [(float(o), float(i)) for o, i in re.findall(r"^measured: round \d+ outer ([0-9.]+) inner ([0-9.]+)$", open(path).read(), re.M)]
woven, plain = rounds(sys.argv[1]), rounds(sys.argv[2])
holds = [float(h) for h in open(sys.argv[3]).read().split()]
assert len(woven) == 6 and len(plain) == 6 and len(holds) == 300, (woven, plain, len(holds))
for r, (outer, inner) in enumerate(woven):
    got = holds[50 * r:50 * r + 50] # released innermost first
    assert min(got) >= 20, ("a hold under the 20 ms sleep", r, got)
    assert abs(got[-1] - outer) <= 2 and abs(got[0] - inner) <= 2, ("round %d: reported outer %.3f inner %.3f, measured %.3f %.3f" % (r, got[-1], got[0], outer, inner))
spread = min(holds[50 * r + 49] - holds[50 * r] for r in range(1, 6))
base = min(o - i for o, i in plain[1:])
assert spread <= base + 2, ("least spread %.3f ms reported, %.3f ms with timing off" % (spread, base))
print("least spread %.3f ms reported, %.3f ms with timing off" % (spread, base))
PY
)
nested_rc=$?
expect "nested: holds as the program measured them; outer holds not lengthened by reporting or known lock-order pairs" \
	'[ "$nested_rc" -eq 0 ] && grep -q "^least spread" <<<"$nested_check"' "$nested_check"

# An app and a library, each with its own copy of the run-time: one summary and one report with both.
LOCKTIME_REPORT="$LT_TMP/l.json" host "$LT_TMP/l.out" "$LT_TMP/l.err" library
expect "library: one summary for both assemblies" \
	'[ "$(grep -c "^LockTime: summary: " "$LT_TMP/l.err")" -eq 1 ] && grep -q "^LockTime: summary: 2 sites in 2 assemblies; 101 acquisitions" "$LT_TMP/l.err"' \
	"$(cat "$LT_TMP/l.err")"
expect "library: one report with both assemblies' sites" \
	'[ "$(report_field "$LT_TMP/l.json" Library.cs:10 "(s[\"assembly\"], s[\"acquisitions\"])")" = "('"'"'HostLib'"'"', 100)" ] &&
	 [ "$(report_field "$LT_TMP/l.json" Program.cs:11 "(s[\"assembly\"], s[\"acquisitions\"])")" = "('"'"'Host'"'"', 1)" ]' "$(cat "$LT_TMP/l.json")"

# 64 threads on 8 locks at threshold 0 into one file: every line whole, none lost (32,000 lines fit the
# line queue's 262,144 slots: none may be dropped, however slow the writer; dropping is tested on purpose
# with a small queue in LineWriterTests).
LOCKTIME_THRESHOLD_MS=0 LOCKTIME_OUTPUT="$LT_TMP/many.log" host "$LT_TMP/m.out" "$LT_TMP/m.err" many
whole=$(grep -cE '^LockTime: Host.Program::Count held [0-9]+\.[0-9]{3} ms, waited [0-9]+\.[0-9]{3} ms at Program.cs:11( \(held by Host.Program::Count at Program.cs:11\))?$' "$LT_TMP/many.log")
dropped=$(sed -nE 's/^LockTime: summary: .*; ([0-9]+) lines? dropped.*/\1/p' "$LT_TMP/many.log")
expect "many threads: 32000 acquisitions" 'grep -q "^LockTime: summary: 1 site in 1 assembly; 32000 acquisitions" "$LT_TMP/many.log"' "$(tail -n 4 "$LT_TMP/many.log")"
expect "many threads: every line whole, all 32000, none dropped" \
	'[ "$whole" -eq 32000 ] && [ -z "$dropped" ] && [ "$(grep -cvE "^LockTime: (Host.Program::Count held|summary: |top 1 site|top stacks |  )" "$LT_TMP/many.log")" -eq 0 ]' \
	"$whole whole lines, ${dropped:-0} dropped; other lines: $(grep -vE '^LockTime: (Host.Program::Count held|summary: |top 1 site|top stacks |  )' "$LT_TMP/many.log" | head -n 3)"

# Two processes at once into that one file (a test run's hosts sharing LOCKTIME_OUTPUT): both processes' lines, whole.
# .NET's FileMode.Append seeks to the end only at the open: each process wrote from where it thought the end was,
# over the other's lines (half of them lost, some joined).
rm -f "$LT_TMP/shared.log"
(LOCKTIME_THRESHOLD_MS=0 LOCKTIME_OUTPUT="$LT_TMP/shared.log" host "$LT_TMP/m1.out" "$LT_TMP/m1.err" many) &
LOCKTIME_THRESHOLD_MS=0 LOCKTIME_OUTPUT="$LT_TMP/shared.log" host "$LT_TMP/m2.out" "$LT_TMP/m2.err" many
wait
whole=$(grep -cE '^LockTime: Host.Program::Count held [0-9]+\.[0-9]{3} ms, waited [0-9]+\.[0-9]{3} ms at Program.cs:11( \(held by Host.Program::Count at Program.cs:11\))?$' "$LT_TMP/shared.log")
expect "two processes into one file: all 64000 lines, every one whole, both summaries" \
	'[ "$whole" -eq 64000 ] && [ "$(grep -c "^LockTime: summary: 1 site in 1 assembly; 32000 acquisitions" "$LT_TMP/shared.log")" -eq 2 ] &&
	 [ "$(grep -cvE "^LockTime: (Host.Program::Count held|summary: |top 1 site|top stacks |  )" "$LT_TMP/shared.log")" -eq 0 ]' \
	"$whole whole lines of $(wc -l <"$LT_TMP/shared.log"); other lines: $(grep -vE '^LockTime: (Host.Program::Count held|summary: |top 1 site|top stacks |  )' "$LT_TMP/shared.log" | head -n 3)"

# Environment.Exit: the summary still appears, and the exit code is the program's.
host "$LT_TMP/e.out" "$LT_TMP/e.err" exit
expect "exit: Environment.Exit(3) keeps its code" '[ "$host_rc" -eq 3 ]' "rc $host_rc"
expect "exit: summary after Environment.Exit" 'grep -q "^LockTime: summary: 1 site in 1 assembly; 1 acquisition, " "$LT_TMP/e.err"' "$(cat "$LT_TMP/e.err")"

# A ProcessExit handler the program adds after its first lock runs before the summary and report: the lock it holds
# 50 ms has its line and is in both.
LOCKTIME_REPORT="$LT_TMP/atexit.json" host "$LT_TMP/atexit.out" "$LT_TMP/atexit.err" atexit
expect "atexit: a ProcessExit handler added after the first lock: its 50 ms lock has its line, is in the summary and the report" \
	'[ "$host_rc" -eq 0 ] && grep -qE "^LockTime: Host\.Program::Hold held [0-9.]+ ms, waited [0-9.]+ ms at Program\.cs:12$" "$LT_TMP/atexit.err" &&
	 grep -q "^LockTime: summary: 2 sites in 1 assembly; 2 acquisitions" "$LT_TMP/atexit.err" &&
	 [ "$(report_field "$LT_TMP/atexit.json" Program.cs:12 "(s[\"acquisitions\"], s[\"hold_ms\"][\"max\"] >= 50)")" = "(1, True)" ]' \
	"rc $host_rc: $(cat "$LT_TMP/atexit.err"; head -c 1500 "$LT_TMP/atexit.json")"

# SIGTERM (.NET 10 runs no ProcessExit then): the run-time's handler writes the summary and the report, the
# exit code stays the signal's (143, as with the run-time off); a program's own SIGTERM handler that cancels
# the signal keeps working, registered before the run-time's (which then runs first: the report is written
# again at the exit, the summary once) or after it (the run-time's does not run: all at the exit).
host_term() { # OUT ERR MODE: Host term MODE, SIGTERM once it is ready; sets host_rc
	terminated "$1" "$2" ready dotnet "$LT_TMP/host/Host.dll" term "$3"
	host_rc=$?
}
LOCKTIME_DISABLED=1 host_term "$LT_TMP/sig0.out" "$LT_TMP/sig0.err" plain
off_rc=$host_rc
LOCKTIME_REPORT="$LT_TMP/sig.json" host_term "$LT_TMP/sig.out" "$LT_TMP/sig.err" plain
expect "SIGTERM: the exit code is the signal's, as with the run-time off" '[ "$host_rc" -eq 143 ] && [ "$off_rc" -eq 143 ]' "rc $host_rc, off $off_rc"
expect "SIGTERM after the first lock, once the handler is registered: one summary" '[ "$(grep -c "^LockTime: summary: 1 site in 1 assembly; [0-9]* acquisitions" "$LT_TMP/sig.err")" -eq 1 ]' "$(cat "$LT_TMP/sig.err")"
expect "SIGTERM: the report, with the locks taken" '[ "$(report_field "$LT_TMP/sig.json" Program.cs:11 "s[\"acquisitions\"] > 1")" = True ]' "$(head -c 2000 "$LT_TMP/sig.json")"
# Two SIGTERMs at once (`timeout` sends one to the program and one to its process group), several times:
# the second waits for the summary and report the first is writing, then the process ends as with one.
twice=0 runs=""
for i in 1 2 3 4; do
	rm -f "$LT_TMP/sig2.json"
	LT_TERMS=2 LOCKTIME_REPORT="$LT_TMP/sig2.json" host_term "$LT_TMP/sig2.out" "$LT_TMP/sig2.err" plain
	summaries=$(grep -c "^LockTime: summary: 1 site in 1 assembly; " "$LT_TMP/sig2.err")
	in_report=$(report_field "$LT_TMP/sig2.json" Program.cs:11 "s[\"acquisitions\"] > 1" 2>&1 | tail -n 1)
	runs+="run $i: rc $host_rc, $summaries summaries, acquisitions in the report: $in_report"$'\n'
	[ "$host_rc" -eq 143 ] && [ "$summaries" -eq 1 ] && [ "$in_report" = True ] && twice=$((twice + 1))
done
expect "two SIGTERMs at once, 4 runs: one summary and the report every time, exit code 143" '[ "$twice" -eq 4 ]' "$runs$(cat "$LT_TMP/sig2.err")"
for mode in before after; do
	rm -f "$LT_TMP/sig-$mode.json"
	LOCKTIME_REPORT="$LT_TMP/sig-$mode.json" host_term "$LT_TMP/sig-$mode.out" "$LT_TMP/sig-$mode.err" "$mode"
	taken=$(sed -n 's/^stopped by the program.s handler; locks taken: //p' "$LT_TMP/sig-$mode.out")
	expect "SIGTERM, the program's handler registered $mode the run-time's: it runs, cancels, the program exits 0" \
		'[ "$host_rc" -eq 0 ] && [ -n "$taken" ]' "rc $host_rc: $(cat "$LT_TMP/sig-$mode.out" "$LT_TMP/sig-$mode.err" | head -n 20)"
	expect "SIGTERM, the program's handler registered $mode: one summary" \
		'[ "$(grep -c "^LockTime: summary: " "$LT_TMP/sig-$mode.err")" -eq 1 ]' "$(cat "$LT_TMP/sig-$mode.err")"
	expect "SIGTERM, the program's handler registered $mode: the report at the exit has every lock taken ($taken)" \
		'[ "$(report_field "$LT_TMP/sig-$mode.json" Program.cs:11 "s[\"acquisitions\"]")" = "$taken" ]' "$(head -c 2000 "$LT_TMP/sig-$mode.json")"
	expect "SIGTERM, the program's handler registered $mode: the lock it holds 50 ms has its line and is in the report at the exit" \
		'[ "$(report_field "$LT_TMP/sig-$mode.json" Program.cs:12 "(s[\"acquisitions\"], s[\"hold_ms\"][\"max\"] >= 50)")" = "(1, True)" ] &&
		 grep -qE "^LockTime: Host\.Program::Hold held [0-9.]+ ms, waited [0-9.]+ ms at Program\.cs:12$" "$LT_TMP/sig-$mode.err"' \
		"$(cat "$LT_TMP/sig-$mode.err"; head -c 2000 "$LT_TMP/sig-$mode.json")"
done
# A SIGTERM the program's handler cancels, then a second one that it does not: the run-time's handler writes the report
# again at the second, with every lock taken until then (not the first signal's figures); the summary stays the first's.
rm -f "$LT_TMP/sig-twice.json"
LT_THEN='^again$' LOCKTIME_REPORT="$LT_TMP/sig-twice.json" LT_WATCHDOG_S=60 host_term "$LT_TMP/sig-twice.out" "$LT_TMP/sig-twice.err" twice
taken=$(sed -n 's/^locks taken: //p' "$LT_TMP/sig-twice.out")
expect "two SIGTERMs, the first cancelled: the second ends the program (143), one summary" \
	'[ "$host_rc" -eq 143 ] && [ "$(grep -c "^LockTime: summary: " "$LT_TMP/sig-twice.err")" -eq 1 ]' "rc $host_rc: $(cat "$LT_TMP/sig-twice.out" "$LT_TMP/sig-twice.err" | head -n 20)"
expect "two SIGTERMs, the first cancelled: the report has every lock taken before the second ($taken)" \
	'[ -n "$taken" ] && [ "$(report_field "$LT_TMP/sig-twice.json" Program.cs:11 "s[\"acquisitions\"]")" = "$taken" ]' "$(head -c 2000 "$LT_TMP/sig-twice.json")"
# SIGTERM 0.5 s after the first lock, while 4 threads flood the writer with lines at threshold 0 (to /dev/null): the
# handler is there (registered by the run-time's own thread; by the thread that writes the lines, it was late in such a
# flood, or never registered), 3 runs.
early=0
for i in 1 2 3; do
	rm -f "$LT_TMP/sig-flood.json"
	LOCKTIME_THRESHOLD_MS=0 LOCKTIME_OUTPUT=/dev/null LOCKTIME_REPORT="$LT_TMP/sig-flood.json" LT_WATCHDOG_S=30 \
		terminate_after "$LT_TMP/sig-flood.out" "$LT_TMP/sig-flood.err" "$LT_TMP/sig-flood.out" 0.5 '^ready$' dotnet "$LT_TMP/host/Host.dll" term flood
	host_rc=$?
	[ "$host_rc" -eq 143 ] && [ "$(report_field "$LT_TMP/sig-flood.json" Program.cs:11 "s[\"acquisitions\"] > 1")" = True ] && early=$((early + 1))
done
expect "SIGTERM 0.5 s after the first lock, in a flood of lines: the report, 3 runs of 3" '[ "$early" -eq 3 ]' \
	"$early of 3; the last: rc $host_rc, $(head -c 300 "$LT_TMP/sig-flood.json")"

# SIGTERM as soon as the first slow-lock line is in the sink (threshold 0, a file), sent by the program to itself without
# waiting for anything else, 4 times, and twice while 4 threads flood the sink with lines from the first lock on: the
# summary once and the report every time, the exit code the signal's. The run-time's thread registers the handler before
# it starts the writer thread; it registered it 0.1 s after the start, when the first line was long written.
early=0 runs=""
for how in line line line line lineflood lineflood; do
	rm -f "$LT_TMP/sig-early.json" "$LT_TMP/sig-early.log"
	LOCKTIME_THRESHOLD_MS=0 LOCKTIME_OUTPUT="$LT_TMP/sig-early.log" LOCKTIME_REPORT="$LT_TMP/sig-early.json" timeout -s KILL 60 \
		dotnet "$LT_TMP/host/Host.dll" term "early$how" >"$LT_TMP/sig-early.out" 2>"$LT_TMP/sig-early.err"
	host_rc=$?
	summaries=$(grep -c "^LockTime: summary: 1 site in 1 assembly; " "$LT_TMP/sig-early.log" 2>/dev/null)
	in_report=$(report_field "$LT_TMP/sig-early.json" Program.cs:11 "s[\"acquisitions\"] >= 1" 2>&1 | tail -n 1)
	runs+="$how: rc $host_rc, ${summaries:-0} summaries, in the report: $in_report"$'\n'
	# in a flood the summary is queued behind the flood's lines, which the signal waits for a bounded time: the report only
	[ "$host_rc" -eq 143 ] && { [ "$how" = lineflood ] || [ "${summaries:-0}" -eq 1 ]; } && [ "$in_report" = True ] && early=$((early + 1))
done
expect "SIGTERM at the first line (4 runs; 2 in a flood of lines): the summary and the report, 6 runs of 6" \
	'[ "$early" -eq 6 ]' "$runs$(head -c 1000 "$LT_TMP/sig-early.err")"

# A sink that takes nothing never keeps the process alive: stderr a FIFO that is open but never read (a pipe into a
# process that stalled), or LOCKTIME_OUTPUT a FIFO that nobody opened. 8,000 lines at threshold 0 fill it; the exit,
# the crash and SIGTERM each wait for the writer about 1 s, then write the report (the lines not written counted) and
# go; the program's own stdout is not held up, and the periodic report goes on. Every run is killed after 30 s, so a
# regression fails (status 137) rather than hangs.
mkfifo "$LT_TMP/stalled" "$LT_TMP/unopened"
exec 9<>"$LT_TMP/stalled" # its only reader, which never reads
flood() { # NAME SINK MODE [VAR=VALUE...]: Host flood MODE, stderr (SINK stderr) or LOCKTIME_OUTPUT (SINK fifo) stuck; sets host_rc, flood_s
	local name=$1 sink=$2 mode=$3 start=$EPOCHREALTIME err=$LT_TMP/$1.err
	shift 3
	rm -f "$LT_TMP/$name.json"
	[ "$sink" = stderr ] && err=$LT_TMP/stalled
	[ "$sink" = fifo ] && set -- "$@" LOCKTIME_OUTPUT="$LT_TMP/unopened"
	if [ "$mode" = term ]; then
		LT_WATCHDOG_S=30 terminate_after "$LT_TMP/$name.out" "$err" "$LT_TMP/$name.out" 0 '^ready$' \
			env LOCKTIME_THRESHOLD_MS=0 LOCKTIME_REPORT="$LT_TMP/$name.json" "$@" dotnet "$LT_TMP/host/Host.dll" flood term
	else
		env LOCKTIME_THRESHOLD_MS=0 LOCKTIME_REPORT="$LT_TMP/$name.json" "$@" timeout -s KILL 30 dotnet "$LT_TMP/host/Host.dll" \
			flood "$mode" "$LT_TMP/$name.json" "$LT_TMP/$name.copy" >"$LT_TMP/$name.out" 2>"$err"
	fi
	host_rc=$?
	flood_s=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
}
unwritten() { # NAME: its report is valid against the schema, has 8,000 acquisitions or more and some lines not written; sets why and why_rc
	why=$(python3 - "$LT_TMP/$1.json" "$LT_ROOT/docs/report-format.schema.json" 2>&1 <<'PY'
import json, sys, jsonschema
r = json.load(open(sys.argv[1]))
jsonschema.validate(r, json.load(open(sys.argv[2])))
n = [s["acquisitions"] for s in r["sites"] if s["location"] == "Program.cs:11"]
print("acquisitions", n, "unwritten_lines", r.get("unwritten_lines"))
assert n and n[0] >= 8000 and r["unwritten_lines"] > 0
PY
)
	why_rc=$?
}
flood stalled-exit stderr exit
expect "stderr nobody reads: the program exits 0 (in ${flood_s} s, less than 10)" '[ "$host_rc" -eq 0 ] && awk -v s="$flood_s" "BEGIN { exit !(s < 10) }"' \
	"rc $host_rc after ${flood_s} s"
expect "stderr nobody reads: the program's own stdout is not held up" 'grep -qx flooded "$LT_TMP/stalled-exit.out"' "$(cat "$LT_TMP/stalled-exit.out")"
unwritten stalled-exit
expect "stderr nobody reads: the report at the exit counts the lines not written" '[ "$why_rc" -eq 0 ]' "$why"
expect "stderr nobody reads: the lines the pipe took are not counted (fewer than 8,000)" \
	'python3 -c "import json, sys; sys.exit(not json.load(open(sys.argv[1]))[\"unwritten_lines\"] < 8000)" "$LT_TMP/stalled-exit.json"' "$why"
flood stalled-term stderr term
expect "stderr nobody reads, SIGTERM: ends as the signal's (143, in ${flood_s} s)" '[ "$host_rc" -eq 143 ]' "rc $host_rc after ${flood_s} s"
unwritten stalled-term
expect "stderr nobody reads, SIGTERM: the report counts the lines not written" '[ "$why_rc" -eq 0 ]' "$why"
flood stalled-interval stderr interval LOCKTIME_REPORT_INTERVAL_S=0.2
why=$(python3 -c 'import json, sys
a, b = (json.load(open(sys.argv[1] + s))["process"]["duration_ms"] for s in (".1", ".2"))
print("reports at", a, "and", b, "ms")
sys.exit(not b - a >= 600)' "$LT_TMP/stalled-interval.copy" 2>&1)
why_rc=$?
expect "stderr nobody reads: the periodic report goes on (copied a second apart, written about a second apart)" '[ "$why_rc" -eq 0 ]' "rc $host_rc: $why"
LOCKTIME_DISABLED=1 timeout -s KILL 30 dotnet "$LT_TMP/host/Host.dll" flood throw >/dev/null 2>&1
plain_rc=$?
flood unopened-throw fifo throw
expect "LOCKTIME_OUTPUT a FIFO nobody opened, an exception from Main: the crash's code ($plain_rc, in ${flood_s} s)" \
	'[ "$host_rc" -eq "$plain_rc" ] && [ "$plain_rc" -ne 0 ] && grep -q "InvalidOperationException: thrown after the flood" "$LT_TMP/unopened-throw.err"' \
	"rc $host_rc after ${flood_s} s: $(head -n 5 "$LT_TMP/unopened-throw.err")"
unwritten unopened-throw
expect "LOCKTIME_OUTPUT a FIFO nobody opened, an exception from Main: the report counts the lines not written" '[ "$why_rc" -eq 0 ]' "$why"
flood unopened-term fifo term
unwritten unopened-term
expect "LOCKTIME_OUTPUT a FIFO nobody opened, SIGTERM: ends as the signal's (143, in ${flood_s} s), with the report" \
	'[ "$why_rc" -eq 0 ] && [ "$host_rc" -eq 143 ]' "rc $host_rc after ${flood_s} s: $why"
exec 9<&-
# LOCKTIME_REPORT a FIFO nobody opened: the report written into it as it is (not renamed over it) waits 1 s for a
# reader, then the program goes on and ends, with one warning.
mkfifo "$LT_TMP/report-fifo"
start=$EPOCHREALTIME
LOCKTIME_REPORT="$LT_TMP/report-fifo" timeout -s KILL 30 dotnet "$LT_TMP/host/Host.dll" exit >"$LT_TMP/rf.out" 2>"$LT_TMP/rf.err"
host_rc=$?
flood_s=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
expect "LOCKTIME_REPORT a FIFO nobody opened: the program ends as without it (3, in ${flood_s} s), one warning" \
	'[ "$host_rc" -eq 3 ] && [ "$(grep -c "^LockTime: warning: LOCKTIME_REPORT=\"$LT_TMP/report-fifo\": cannot write $LT_TMP/report-fifo (IOException: nothing took the report in 1 s); using no report$" "$LT_TMP/rf.err")" -eq 1 ]' \
	"rc $host_rc after ${flood_s} s: $(cat "$LT_TMP/rf.err")"

# The report is written while the program runs, every LOCKTIME_REPORT_INTERVAL_S seconds.
LOCKTIME_REPORT="$LT_TMP/i.json" LOCKTIME_REPORT_INTERVAL_S=0.1 host "$LT_TMP/i.out" "$LT_TMP/i.err" interval "$LT_TMP/i.json"
expect "interval: report written while running" 'grep -q "^report while running: [1-9][0-9]* bytes" "$LT_TMP/i.out"' "$(cat "$LT_TMP/i.out" "$LT_TMP/i.err")"
# A lock held 1 s (a service stuck holding it): the report written meanwhile has the hold in progress at
# its site, and it is the site's only record then; the report at the exit has none in progress.
LOCKTIME_REPORT="$LT_TMP/k.json" LOCKTIME_REPORT_INTERVAL_S=0.1 host "$LT_TMP/k.out" "$LT_TMP/k.err" stuck "$LT_TMP/k.json" "$LT_TMP/k-during.json"
expect "stuck: the report while the lock is held has it in progress, held >= 500 ms" \
	'[ "$(report_field "$LT_TMP/k-during.json" Program.cs:12 "(s[\"held_now\"][\"count\"], s[\"held_now\"][\"longest_ms\"] >= 500, s[\"acquisitions\"])")" = "(1, True, 0)" ]' \
	"$(head -c 1500 "$LT_TMP/k-during.json")"
expect "stuck: the report at the exit: released, none in progress" \
	'[ "$(report_field "$LT_TMP/k.json" Program.cs:12 "(s[\"held_now\"][\"count\"], s[\"acquisitions\"], s[\"hold_ms\"][\"max\"] >= 1000)")" = "(0, 1, True)" ]' \
	"$(head -c 1500 "$LT_TMP/k.json")"

# Settings: STDOUT in any case; 0 rows = no summary; LOCKTIME_DISABLED=On = nothing at all.
LOCKTIME_OUTPUT=StdOut LOCKTIME_THRESHOLD_MS=0 host "$LT_TMP/s.out" "$LT_TMP/s.err" exit
expect "sink: StdOut is stdout" 'grep -q "^LockTime: Host.Program::Count held " "$LT_TMP/s.out" && grep -q "^LockTime: summary: " "$LT_TMP/s.out" && [ ! -s "$LT_TMP/s.err" ]' \
	"$(cat "$LT_TMP/s.out" "$LT_TMP/s.err")"
LOCKTIME_SUMMARY=0 LOCKTIME_REPORT="$LT_TMP/z.json" host "$LT_TMP/z.out" "$LT_TMP/z.err" threads
expect "LOCKTIME_SUMMARY=0: no summary, exit 0, and the locks timed all the same (16000 in the report)" \
	'[ "$host_rc" -eq 0 ] && ! grep -q "summary" "$LT_TMP/z.err" "$LT_TMP/z.out" && [ "$(report_field "$LT_TMP/z.json" Program.cs:11 "s[\"acquisitions\"]")" = 16000 ]' \
	"rc $host_rc; $(cat "$LT_TMP/z.err")"
LOCKTIME_DISABLED=On LOCKTIME_THRESHOLD_MS=0 LOCKTIME_REPORT="$LT_TMP/d.json" host "$LT_TMP/d.out" "$LT_TMP/d.err" nested
expect "LOCKTIME_DISABLED=On: no line, no summary, no report" '[ ! -s "$LT_TMP/d.err" ] && ! grep -q LockTime "$LT_TMP/d.out" && grep -q "^measured: round 5 " "$LT_TMP/d.out" && [ ! -e "$LT_TMP/d.json" ]' \
	"$(cat "$LT_TMP/d.err")"

# Bad values: one warning each on stderr, naming the variable and what is used; the program goes on.
LOCKTIME_DISABLED=maybe LOCKTIME_THRESHOLD_MS=-5 LOCKTIME_SUMMARY=abc LOCKTIME_REPORT=/nonexistent/dir/r.json \
	host "$LT_TMP/b.out" "$LT_TMP/b.err" contended
expect "bad values: the program runs and exits 0" '[ "$host_rc" -eq 0 ]' "rc $host_rc"
for w in 'LOCKTIME_DISABLED="maybe" is not 1/true/yes/on or 0/false/no/off; using 0 (timing on)' \
	'LOCKTIME_THRESHOLD_MS="-5" is not a number from 0 to 1000000000000; using 1' \
	'LOCKTIME_SUMMARY="abc" is not a whole number from 0 to 1000000; using 10' \
	'LOCKTIME_REPORT="/nonexistent/dir/r.json": cannot write /nonexistent/dir/r.json (DirectoryNotFoundException'; do
	expect "bad values: one warning: ${w%% *}" '[ "$(grep -cF "LockTime: warning: $w" "$LT_TMP/b.err")" -eq 1 ]' "$(cat "$LT_TMP/b.err")"
done
expect "bad values: nothing else warns" '[ "$(grep -c "warning" "$LT_TMP/b.err")" -eq 4 ]' "$(cat "$LT_TMP/b.err")"

# Mistyped names: one warning each, with the nearest name, once per process though two copies (the
# app's and the library's) start; the program goes on, the real setting untouched.
LOCKTIME_DISABLE=1 LOCKTIME_REPROT="$LT_TMP/t.json" LOCKTIME_COLOUR=red host "$LT_TMP/t.out" "$LT_TMP/t.err" library
for w in 'LOCKTIME_DISABLE is not a LockTime variable (did you mean LOCKTIME_DISABLED?); ignored' \
	'LOCKTIME_REPROT is not a LockTime variable (did you mean LOCKTIME_REPORT?); ignored' \
	'LOCKTIME_COLOUR is not a LockTime variable (they are LOCKTIME_DISABLED, LOCKTIME_THRESHOLD_MS, LOCKTIME_OUTPUT, LOCKTIME_SUMMARY, LOCKTIME_REPORT, LOCKTIME_REPORT_INTERVAL_S, LOCKTIME_LOCK_ORDER, LOCKTIME_METRICS, LOCKTIME_STACK_DEPTH, LOCKTIME_LINES, LOCKTIME_TIMELINE); ignored'; do
	expect "mistyped names: one warning for two copies: ${w%% *}" '[ "$(grep -cxF "LockTime: warning: $w" "$LT_TMP/t.err")" -eq 1 ]' "$(cat "$LT_TMP/t.err")"
done
expect "mistyped names: nothing else warns, timing stays on, no report" \
	'[ "$(grep -c "warning" "$LT_TMP/t.err")" -eq 3 ] && grep -q "^LockTime: summary: 2 sites in 2 assemblies" "$LT_TMP/t.err" && [ ! -e "$LT_TMP/t.json" ]' "$(cat "$LT_TMP/t.err")"

# A mistyped name is warned of also when the program ends at once by Environment.Exit with no summary to
# write (the writer thread, started by the first release, may still be looking when the exit comes): one
# warning in each of 8 runs.
exit_warned=0
for i in 1 2 3 4 5 6 7 8; do
	LOCKTIME_THRSHOLD_MS=5 LOCKTIME_SUMMARY=0 host "$LT_TMP/x.out" "$LT_TMP/x.err" exit
	[ "$host_rc" -eq 3 ] && [ "$(grep -cxF 'LockTime: warning: LOCKTIME_THRSHOLD_MS is not a LockTime variable (did you mean LOCKTIME_THRESHOLD_MS?); ignored' "$LT_TMP/x.err")" -eq 1 ] &&
		exit_warned=$((exit_warned + 1))
done
expect "mistyped names: one warning before Environment.Exit, 8 runs of 8" '[ "$exit_warned" -eq 8 ]' "$exit_warned of 8; last: $(cat "$LT_TMP/x.err")"

# Live metrics: dotnet-counters (installed into build/, from the configured NuGet sources) collects the Meter
# "LockTime" of the host while 4 threads lock; its rates per second, summed over the run, are the report's
# totals less what its first collection saw: one acquisition a site, taken before (uncontended, its hold and
# wait at most the site's max); the histograms give p50, p95 and p99 of each site, the hold p50 of the site
# that sleeps 1 ms inside its lock the report's (within 5%) while the threads lock, never above its hold max. LOCKTIME_METRICS=0: none (dotnet-counters then writes `"Events": ]`).
COUNTERS=$LT_BUILD/dotnet-tools/dotnet-counters
COUNTERS_VERSION=10.0.750501
# The report is written every 0.5 s: dotnet-counters may end the program it started while its exit
# handler still writes (a report's temporary file left behind), and the last one while idle has it all.
counters() { # OUT.json REPORT.json METRICS BEFORE SECONDS AFTER: dotnet-counters collect around the host's metrics scenario
	LOCKTIME_REPORT=$2 LOCKTIME_REPORT_INTERVAL_S=0.5 LOCKTIME_METRICS=$3 timeout 120 "$COUNTERS" collect --counters LockTime --refresh-interval 1 --format json -o "$1" \
		-- dotnet "$LT_TMP/host/Host.dll" metrics "$4" "$5" "$6" >"$1.log" 2>&1
}
if check "dotnet-counters installs (a dotnet tool)" dotnet_tool dotnet-counters "$COUNTERS_VERSION" "$LT_BUILD/dotnet-tools"; then
	counters "$LT_TMP/counters.json" "$LT_TMP/mc.json" "" 4 3 3
	expect "metrics: dotnet-counters gives each site's counts and times, tagged, as the report has them, and the histograms' percentiles" \
		'python3 - "$LT_TMP/counters.json" "$LT_TMP/mc.json" <<"PY"
import collections, json, sys
events = json.load(open(sys.argv[1]))["Events"]
report = json.load(open(sys.argv[2]))
sums, hist = collections.defaultdict(float), collections.defaultdict(list)
for e in events:
    assert e["provider"] == "LockTime", e
    tags = dict(t.split("=", 1) for t in e["tags"].split(","))
    if e["counterType"] == "Metric": # a histogram: its percentiles over the interval
        hist[(e["name"].split(" ")[0], tags["code.function.name"], tags["Percentile"])].append(e["value"])
        continue
    assert e["counterType"] == "Rate", e
    sums[(e["name"].split(" ")[0], tags["code.function.name"], tags["code.file.path"], int(tags["code.line.number"]))] += e["value"]
sites = report["sites"]
assert len(sites) == 3 and len(sums) == 4 * 3, sorted(sums)
for s in sites:
    k = (s["method"], s["file"], s["line"])
    assert sums[("locktime.acquisitions",) + k] == s["acquisitions"] - 1, (k, sums[("locktime.acquisitions",) + k], s["acquisitions"])
    assert sums[("locktime.contentions",) + k] == s["contended"], (k, s["contended"])
    for name, field in (("locktime.wait.time", "wait_ms"), ("locktime.hold.time", "hold_ms")):
        got, total, first = sums[(name,) + k] * 1000, s[field]["total"], s[field]["max"]
        assert total - first - 1e-6 * total - 0.001 <= got <= total + 1e-6 * total + 0.001, (k, name, got, total, first)
assert sum(s["contended"] for s in sites) > 0 and [s for s in sites if s["location"] == "Program.cs:12"][0]["hold_ms"]["total"] > 1000
assert {k[0] for k in hist} == {"locktime.wait.duration", "locktime.hold.duration"} and {k[2] for k in hist} == {"50", "95", "99"}, sorted(hist)
assert {k[1] for k in hist} == {s["method"] for s in sites}, sorted(hist)
held = [s for s in sites if s["location"] == "Program.cs:12"][0] # sleeps 1 ms inside the lock
p50, want = hist[("locktime.hold.duration", held["method"], "50")], held["hold_ms"]["p50"] / 1000
assert max(p50) <= held["hold_ms"]["max"] / 1000 * 1.05 and any(abs(v - want) <= 0.05 * want for v in p50), (p50, held["hold_ms"])
PY' "$(cat "$LT_TMP/counters.json.log"; head -c 2000 "$LT_TMP/counters.json" 2>/dev/null)"
	counters "$LT_TMP/counters-off.json" "$LT_TMP/mc-off.json" 0 1 1 2
	expect "metrics: LOCKTIME_METRICS=0 gives dotnet-counters nothing" \
		'[ -s "$LT_TMP/mc-off.json" ] && grep -q "\"Events\"" "$LT_TMP/counters-off.json" && ! grep -q "\"provider\"" "$LT_TMP/counters-off.json"' \
		"$(cat "$LT_TMP/counters-off.json.log"; head -c 2000 "$LT_TMP/counters-off.json" 2>/dev/null)"
fi

# The same program for net48, under Mono: its Console, files and threads, System.dll's Process found by
# reflection for the pid, and a netstandard2.0 library beside it.
if check "host program builds for net48" dotnet build "$LT_ROOT/tests/runtime/Host/Host.csproj" "${DOTNET_OPTS[@]}" -f net48 -o "$LT_TMP/host48"; then
	(cd "$LT_TMP" && LOCKTIME_REPORT="$LT_TMP/mono-{pid}.json" timeout 120 mono "$LT_TMP/host48/Host.exe" library >"$LT_TMP/mono.out" 2>"$LT_TMP/mono.err")
	mono_report=$(ls "$LT_TMP"/mono-*.json 2>/dev/null | head -n 1)
	expect "mono: one summary for both assemblies" 'grep -q "^LockTime: summary: 2 sites in 2 assemblies; 101 acquisitions" "$LT_TMP/mono.err"' \
		"$(cat "$LT_TMP/mono.err" "$LT_TMP/mono.out")"
	expect "mono: the report names the process id it is named with" \
		'[ -n "$mono_report" ] && [ "$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))[\"process\"][\"pid\"])" "$mono_report")" = "$(basename "$mono_report" .json | sed "s/^mono-//")" ] && [ "$mono_report" != "$LT_TMP/mono-0.json" ]' \
		"report: ${mono_report:-none}"
	(cd "$LT_TMP" && timeout 120 mono "$LT_TMP/host48/Host.exe" libcycle >"$LT_TMP/mono-lc.out" 2>"$LT_TMP/mono-lc.err")
	expect "mono: a cycle across the app and the library" \
		'grep -qxF "LockTime: potential deadlock: Program.cs:16 then Library.cs:11 (Host.Program::First then HostLib.Library::Under), and in the other order at Library.cs:12 then Program.cs:17 (HostLib.Library::Around then Host.Program::Second)" "$LT_TMP/mono-lc.err"' \
		"$(cat "$LT_TMP/mono-lc.err")"
	(cd "$LT_TMP" && timeout 120 mono "$LT_TMP/host48/Host.exe" contended >"$LT_TMP/mono-c.out" 2>"$LT_TMP/mono-c.err")
	expect "mono: the waiter's line names the holder" '[ "$(grep -cE "$holder_line" "$LT_TMP/mono-c.err")" -eq 1 ]' "$(cat "$LT_TMP/mono-c.err")"
	(cd "$LT_TMP" && timeout 120 mono "$LT_TMP/host48/Host.exe" metrics 0.2 0.3 0.2 >"$LT_TMP/mono-m.out" 2>"$LT_TMP/mono-m.err")
	expect "mono: the metrics scenario runs without a Meter, nothing said of it" \
		'grep -q "^locks taken: " "$LT_TMP/mono-m.out" && grep -q "^LockTime: summary: 3 sites in 1 assembly" "$LT_TMP/mono-m.err" && ! grep -qiE "warning|exception|metric" "$LT_TMP/mono-m.err"' \
		"$(cat "$LT_TMP/mono-m.out" "$LT_TMP/mono-m.err")"
	(cd "$LT_TMP" && timeout 120 mono "$LT_TMP/host48/Host.exe" exit >"$LT_TMP/mono-exit.out" 2>"$LT_TMP/mono-exit.err")
	mono_rc=$?
	expect "mono: summary after Environment.Exit, exit code kept" '[ "$mono_rc" -eq 3 ] && grep -q "^LockTime: summary: 1 site" "$LT_TMP/mono-exit.err"' \
		"rc $mono_rc: $(cat "$LT_TMP/mono-exit.err")"
	# Environment.Exit right after the first lock, 45 times, 3 at once: Mono hung in its shutdown (about 1
	# exit in 15 on a loaded machine) while the writer thread waited in Monitor.Enter for the exit's lock.
	seq 1 45 | xargs -P 3 -I{} sh -c 'timeout 20 mono "$1/host48/Host.exe" exit >/dev/null 2>&1; echo $?' sh "$LT_TMP" >"$LT_TMP/mono-exits"
	expect "mono: 45 exits by Environment.Exit right after the first lock, none hangs" '[ "$(grep -cx 3 "$LT_TMP/mono-exits")" -eq 45 ]' \
		"exit codes: $(sort "$LT_TMP/mono-exits" | uniq -c | tr '\n' ' ')"
fi
done_testing
