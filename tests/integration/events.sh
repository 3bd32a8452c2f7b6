#!/usr/bin/env bash
# The EventSource "LockTime" (docs/tracing.md) recorded by the real client, dotnet-trace (a dotnet tool from
# the configured NuGet sources), and read back with TraceEvent (tests/tools/TraceReader):
#   - the woven app and library of tests/woven (two copies of the run-time, one EventSource), every lock
#     timed (threshold 0), after the lock that starts the run-time and a pause (`App settle`: the source is made
#     and joined on the run-time's thread, ~50 ms later): one SlowLock event per slow-lock line the run printed
#     but perhaps the first lock of each copy's (App's, the library's), its fields as the line says
#     them (method, location, hold and wait to the line's microsecond, holder), both assemblies' sites; each
#     event's file and line are the location's; each carries EventPipe's stack, which holds the method that
#     took the lock; one PotentialDeadlock event per potential-deadlock line, its text the line's;
#   - the level chooses: at Warning (--providers LockTime::3) the potential deadlocks and no slow lock;
#   - a real deadlock (tests/runtime/Host deadlock): a Deadlock event whose text is the deadlock's line.
source "$(dirname "$0")/../lib.sh"
LT=${LOCKTIME:-$LT_BUILD/san/locktime}
export MSBUILDDISABLENODEREUSE=1 DOTNET_CLI_USE_MSBUILD_SERVER=0
unset LOCKTIME_DISABLED LOCKTIME_THRESHOLD_MS LOCKTIME_OUTPUT LOCKTIME_REPORT LOCKTIME_REPORT_INTERVAL_S LOCKTIME_LOCK_ORDER LOCKTIME_METRICS
DOTNET_OPTS=(-c Release -nologo -v q -nodeReuse:false -p:UseSharedCompilation=false)

TRACE=$LT_BUILD/dotnet-trace-tool/dotnet-trace
check "dotnet-trace installs (a dotnet tool)" dotnet_tool dotnet-trace 10.0.750501 "$LT_BUILD/dotnet-trace-tool" || exit 1
check "the TraceEvent reader builds" timeout "$LT_DOTNET_TIMEOUT" dotnet build "$LT_ROOT/tests/tools/TraceReader/TraceReader.csproj" \
	"${DOTNET_OPTS[@]}" -o "$LT_TMP/reader" || exit 1

# collect OUT.nettrace PROVIDERS CMD...: dotnet-trace runs CMD with a session on PROVIDERS until it ends
collect() {
	local out=$1 providers=$2
	shift 2
	timeout 180 "$TRACE" collect --providers "$providers" -o "$out" "$@" >"$out.log" 2>&1 || { cat "$out.log"; return 1; }
}
# events IN.nettrace: the LockTime events, one JSON object a line, into IN.jsonl
events() {
	timeout 120 dotnet "$LT_TMP/reader/TraceReader.dll" "$1" >"${1%.nettrace}.jsonl"
}

build_app() {
	cp -r "$LT_ROOT/tests/woven" "$LT_TMP/src" &&
	timeout "$LT_DOTNET_TIMEOUT" dotnet build "$LT_TMP/src/App/App.csproj" "${DOTNET_OPTS[@]}" -f net10.0 >"$LT_TMP/build.log" 2>&1 ||
		{ tail -20 "$LT_TMP/build.log"; return 1; }
}
check "the app and its library build" build_app || exit 1
NET=$LT_TMP/src/App/bin/Release/net10.0
check "weave the app and the library" "$LT" weave -q --threshold-ms 0 "$NET/App.dll" "$NET/Lib.dll" || exit 1

check "dotnet-trace collects the woven app's events" collect "$LT_TMP/app.nettrace" LockTime \
	--show-child-io -- env LOCKTIME_OUTPUT="$LT_TMP/app.lines" dotnet "$NET/App.dll" settle
check "TraceEvent reads them" events "$LT_TMP/app.nettrace"
check "one SlowLock event per slow-lock line, as the line says it, with the stack that took the lock" python3 - "$LT_TMP/app.lines" "$LT_TMP/app.jsonl" <<'PY'
import collections, json, re, sys
holder = r"(?: \(held by (.+) at (\S+)\))?$"
slow = re.compile(r"^LockTime: (.+) held ([0-9.]+) ms, waited ([0-9.]+) ms at (\S+)" + holder)
failed = re.compile(r"^LockTime: (.+) waited ([0-9.]+) ms, not acquired at (\S+)" + holder)
lines = [l.rstrip("\n") for l in open(sys.argv[1])]
expected = collections.Counter()
for l in lines:
    m, f = slow.match(l), failed.match(l)
    if m:
        expected[(m[1], m[4], m[2], m[3], m[5] or "", m[6] or "")] += 1
    elif f:
        expected[(f[1], f[3], "not acquired", f[2], f[4] or "", f[5] or "")] += 1
events = [json.loads(l) for l in open(sys.argv[2])]
def ms(ns): # as the line says it: to the microsecond, half up (a float's "%.3f" rounds 28.4885 down)
    return "%d.%03d" % divmod((ns + 500) // 1000, 1000)
got = collections.Counter()
for e in events:
    if e["name"] != "SlowLock":
        continue
    p = e["payload"]
    hold = "not acquired" if p["HoldNs"] == -1 else ms(p["HoldNs"])
    got[(p["Method"], p["Location"], hold, ms(p["WaitNs"]), p["HolderMethod"], p["HolderLocation"])] += 1
    name, line = p["Location"].rsplit(":", 1)
    assert p["File"].endswith("/" + name) and p["Line"] == int(line) and p["Kind"], p
    frame = p["Method"].split(" ")[0].replace("::", ".") + "("
    assert any(f.startswith(frame) for f in e["stack"]) or " " in p["Method"], (p["Method"], e["stack"])
print("slow-lock lines", sum(expected.values()), "events", sum(got.values()))
# The first lock of each copy (App's in Settle, then the library's) may come before its copy joins the
# source: only those may lack their event; no event without its line.
firsts = [next(k for l in lines for m in [slow.match(l)] if m and m[1] == method
               for k in [(m[1], m[4], m[2], m[3], m[5] or "", m[6] or "")]) for method in ("Program::Settle", "Woven.Lib.Ledger::Post")]
missing, extra = expected - got, got - expected
assert sum(expected.values()) > 16000 and not extra and set(missing) <= set(firsts) and all(n == 1 for n in missing.values()), (missing, extra)
assemblies = {e["payload"]["Assembly"] for e in events if e["name"] == "SlowLock"}
assert assemblies == {"App", "Lib"}, assemblies
cycles = sorted(e["payload"]["Text"] for e in events if e["name"] == "PotentialDeadlock")
printed = sorted(l for l in lines if l.startswith("LockTime: potential deadlock: "))
assert len(printed) == 2 and cycles == printed, (cycles, printed)
PY

check "dotnet-trace at level Warning" collect "$LT_TMP/warn.nettrace" LockTime::3 -- dotnet "$NET/App.dll" settle
check "TraceEvent reads them" events "$LT_TMP/warn.nettrace"
check "the level chooses: at Warning the two potential deadlocks, no slow lock" \
	test "$(python3 -c 'import json, sys; print(sorted(json.loads(l)["name"] for l in open(sys.argv[1])))' "$LT_TMP/warn.jsonl")" = \
	"['PotentialDeadlock', 'PotentialDeadlock']"

# A real deadlock: the host deadlocks and sleeps; dotnet-trace ends its session after 4 s and the program with it.
check "the host program builds" timeout "$LT_DOTNET_TIMEOUT" dotnet build "$LT_ROOT/tests/runtime/Host/Host.csproj" "${DOTNET_OPTS[@]}" \
	-f net10.0 -o "$LT_TMP/host" || exit 1
check "dotnet-trace collects a deadlocked program's events" collect "$LT_TMP/dead.nettrace" LockTime --duration 00:00:00:04 \
	--show-child-io -- env LOCKTIME_OUTPUT="$LT_TMP/dead.lines" dotnet "$LT_TMP/host/Host.dll" deadlock
check "TraceEvent reads them" events "$LT_TMP/dead.nettrace"
check "one Deadlock event, its text the deadlock's line" python3 - "$LT_TMP/dead.lines" "$LT_TMP/dead.jsonl" <<'PY'
import json, sys
printed = [l.rstrip("\n") for l in open(sys.argv[1]) if l.startswith("LockTime: deadlock: ")]
got = [json.loads(l)["payload"]["Text"] for l in open(sys.argv[2]) if json.loads(l)["name"] == "Deadlock"]
assert len(printed) == 1 and got == printed, (got, printed)
PY
done_testing
