#!/usr/bin/env bash
# A web app with the package (tests/msbuild/Web/), as the issue "More locks" asks it to be seen: its
# requests serialize on `await gate.WaitAsync()`, and a cache's writer starves its readers. Built with
# dotnet build (the package from a local folder feed, msbuild_lib.sh), and published ReadyToRun (the
# run-time precompiled with the app: woven before crossgen); each run on Kestrel at a port of its
# choosing, sent 12 orders at once and 30 price reads 20 ms apart, stopped with SIGTERM as a service
# manager stops it:
#   - every request answers as without LockTime (12 orders, numbered 1 to 12 once each; 30 prices);
#   - the summary at its exit has the order site by the user's method (not the async state machine's)
#     and line, kind SemaphoreSlim.WaitAsync, 12 acquisitions; the read lock's site waits behind the
#     writer, whose site "made others wait";
#   - the report (LOCKTIME_REPORT) gives the same with the figures: the orders' wait max of several
#     holds of 40 ms, their hold max at least 35 ms; the readers' waits blamed on the writer's line.
source "$(dirname "$0")/../msbuild_lib.sh" "$@"

if ! dotnet --list-runtimes | grep -q '^Microsoft.AspNetCore.App '; then
	skip "webapp" "this .NET has no ASP.NET Core runtime (Microsoft.AspNetCore.App)"
	done_testing
	exit 0
fi

work="$LT_TMP/web app"
feed="$LT_TMP/local feed"
mkdir -p "$work"
cp -r "$LT_ROOT/tests/msbuild/Web/." "$LT_ROOT/tests/msbuild/Directory.Build.props" "$work/"
msbuild_feed "$work" "$feed"
src=$work/Program.cs
rid=$(dotnet --info | sed -n 's/^ *RID: *//p' | head -n 1)

line_of() { # TEXT: the number of the line of Program.cs that holds TEXT
	grep -nF -- "$1" "$src" | head -n 1 | cut -d: -f1
}
order_line=$(line_of '// requests wait here')
read_line=$(line_of '// readers wait here')
write_line=$(line_of '// the writer that starves them')

check "webapp: dotnet build with the package" dn "$LT_TMP/w1.log" build "$work/Web.csproj" -c Release -v:n || exit 1
check "webapp: the build wove it: 3 lock sites" grep -qE 'Web.dll: woven, 3 lock sites timed' "$LT_TMP/w1.log"
check "webapp: dotnet publish ReadyToRun ($rid)" \
	dn "$LT_TMP/w2.log" publish "$work/Web.csproj" -c Release -r "$rid" --self-contained false \
	-p:PublishReadyToRun=true -o "$work/r2r" -v:n || exit 1
r2r_refused() { # FILE: locktime refuses it as ReadyToRun (LT008, exit 1), leaving it as it was
	cp "$1" "$LT_TMP/r2r.orig"
	"$STATIC" weave "$1" 2>"$LT_TMP/r2r.err"
	local rc=$?
	[ "$rc" = 1 ] && grep -q 'error LT008' "$LT_TMP/r2r.err" && cmp -s "$1" "$LT_TMP/r2r.orig" ||
		{ echo "exit $rc: $(cat "$LT_TMP/r2r.err")"; return 1; }
}
check "webapp: the published Web.dll is ReadyToRun, woven before crossgen (locktime refuses it: LT008)" \
	r2r_refused "$work/r2r/Web.dll"

# The requests: the orders all at once, the price reads one per 20 ms meanwhile; each answer a line.
client() { # URL FILE: the answers, sorted, into FILE
	python3 - "$1" >"$2" <<'PY'
import sys, threading, time, urllib.request
url = sys.argv[1]
answers, lock = [], threading.Lock()
def get(path):
    with urllib.request.urlopen(url + path, timeout=60) as r:
        body = r.read().decode()
    with lock:
        answers.append("%d %s" % (r.status, body))
threads = [threading.Thread(target=get, args=("/order/%d" % i,)) for i in range(1, 13)]
for i in range(30):
    threads.append(threading.Thread(target=get, args=("/price/apple",)))
for i, t in enumerate(threads):
    t.start()
    if i >= 12:
        time.sleep(0.02)
for t in threads:
    t.join()
print("\n".join(sorted(answers)))
PY
}
row() { # ERR METHOD LOCATION KIND [PATTERN]: the summary in ERR has the row of that site (and it matches PATTERN)
	grep -E "^LockTime: +$2 +$3 +$4 " "$1" | grep -qE -- "${5:-.}" || { grep '^LockTime:  ' "$1"; return 1; }
}
site_check() { # REPORT METHOD LINE PYTHON-EXPRESSION over s (the site of METHOD at LINE) and sites (all): true, else the site is printed
	python3 - "$@" <<'PY'
import json, sys
report, method, line, test = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
sites = json.load(open(report))["sites"]
found = [s for s in sites if s["method"] == method and s["line"] == line]
s = found[0] if found else None
ok = s is not None and eval("(" + test + ")")
if not ok:
    print(json.dumps(s))
sys.exit(0 if ok else 1)
PY
}

serve() { # LABEL DLL: runs the app, sends it the requests, stops it; checks its answers, summary and report
	local t=$1 dll=$2 out=$LT_TMP/${1##* }.out err=$LT_TMP/${1##* }.err report=$LT_TMP/${1##* }-report.json
	local answers=$LT_TMP/${1##* }-answers.txt pid url='' stopped=1 rc _
	env -u LOCKTIME_SUMMARY LOCKTIME_REPORT="$report" ASPNETCORE_URLS=http://127.0.0.1:0 dotnet "$dll" >"$out" 2>"$err" &
	pid=$!
	for _ in $(seq 300); do
		url=$(sed -n 's|.*Now listening on: \(http://127.0.0.1:[0-9]*\).*|\1|p' "$out" | head -n 1)
		[ -n "$url" ] || ! kill -0 "$pid" 2>/dev/null && break
		sleep 0.1
	done
	check "$t: Kestrel listens" test -n "$url" || { kill -9 "$pid" 2>/dev/null; tail -n 20 "$out" "$err"; return 1; }
	check "$t: 42 requests answered" client "$url" "$answers"
	check "$t: 12 orders answered 200, numbered 1 to 12 once each" \
		test "$(grep -oE '^200 order [0-9]+ placed #[0-9]+$' "$answers" | sed 's/.*#//' | sort -n | tr '\n' ' ')" = \
		"1 2 3 4 5 6 7 8 9 10 11 12 "
	check "$t: 30 prices answered 200" test "$(grep -cE '^200 apple (1.25|unknown)$' "$answers")" = 30
	kill -TERM "$pid"
	for _ in $(seq 300); do
		kill -0 "$pid" 2>/dev/null || { stopped=0; break; }
		sleep 0.1
	done
	check "$t: SIGTERM stops it" test "$stopped" = 0 || kill -9 "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	check "$t: exit status 0 after SIGTERM (the host's graceful stop)" test "$rc" = 0

	check "$t: one summary at exit" test "$(grep -c '^LockTime: summary: ' "$err")" = 1
	check "$t: summary row of the orders: Orders::Place, Program.cs:$order_line, SemaphoreSlim.WaitAsync, 12 acquisitions" \
		row "$err" Orders::Place "Program.cs:$order_line" SemaphoreSlim.WaitAsync 'WaitAsync +12 '
	check "$t: summary row of the readers: PriceCache::Get, Program.cs:$read_line, EnterReadLock" \
		row "$err" PriceCache::Get "Program.cs:$read_line" ReaderWriterLockSlim.EnterReadLock
	check "$t: summary row of the writer: PriceCache::Refresh, Program.cs:$write_line, EnterWriteLock" \
		row "$err" PriceCache::Refresh "Program.cs:$write_line" ReaderWriterLockSlim.EnterWriteLock
	check "$t: a reader's slow line names the writer as its holder" \
		grep -qE "^LockTime: PriceCache::Get held [0-9.]+ ms, waited [0-9.]+ ms at Program.cs:$read_line \(held by PriceCache::Refresh at Program.cs:$write_line\)$" "$err"
	check "$t: report: the orders' site, 12 acquisitions, waits of several holds (max >= 100 ms), hold max >= 35 ms" \
		site_check "$report" Orders::Place "$order_line" \
		's["kind"] == "SemaphoreSlim.WaitAsync" and s["acquisitions"] == 12 and s["wait_ms"]["max"] >= 100 and s["hold_ms"]["max"] >= 35'
	check "$t: report: the readers waited (a contended read lock), behind the writer's line" \
		site_check "$report" PriceCache::Get "$read_line" \
		's["contended"] >= 1 and any(w["method"] == "PriceCache::Refresh" and w["location"] == "Program.cs:'"$write_line"'" for w in s["waited_behind"])'
	# Blame adds up: what the writer is charged is the waits the waiters put behind it, no more than their
	# whole wait, and no more than one of its longest holds per contended wait.
	check "$t: report: the writer made others wait - the waits charged to it, bounded - and held about 80 ms" \
		site_check "$report" PriceCache::Refresh "$write_line" '0 < s["blamed_wait_ms"] and s["hold_ms"]["max"] >= 75 and
abs(s["blamed_wait_ms"] - sum(w["wait_ms"] for x in sites for w in x["waited_behind"] if w["method"] == "PriceCache::Refresh")) <= 0.001 * len(sites) and
s["blamed_wait_ms"] <= sum(x["wait_ms"]["total"] for x in sites if x is not s) + 0.001 and
s["blamed_wait_ms"] <= sum(x["contended"] for x in sites) * s["hold_ms"]["max"] + 0.001'
}

serve "webapp: built" "$work/bin/Release/net10.0/Web.dll"
serve "webapp: published ReadyToRun" "$work/r2r/Web.dll"
done_testing
