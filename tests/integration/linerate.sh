#!/usr/bin/env bash
# Slow-lock lines that do not flood a program's output (LOCKTIME_LINES), end to end on tests/linerate (.NET and Mono): at
# threshold 0 every lock is slow, thousands a second at a site of the main thread and at one of four threads;
#   - by default each site writes its first 10 lines, then at most 2 a second, and the rest comes as roll-up lines
#     ("LockTime: M had N more slow locks at L in the last S s, max hold H ms, max wait W ms"), every 10 s and at the
#     exit before the summary: per site, lines + roll-up counts = the report's slow locks, exactly
#     (linerate_expect.py), the statistics untouched;
#   - a program that runs past 10 s gets a roll-up while it runs, and one at its exit;
#   - LOCKTIME_LINES=all writes every line, no roll-up; LOCKTIME_LINES=0 the first 10 of each site only;
#   - a bad LOCKTIME_LINES gives one warning naming it and the default; --lines bakes the default
#     (LOCKTIME_LINES overrides it; its refusals: settings.sh).
source "$(dirname "$0")/../lib.sh"
LT=${LOCKTIME:-$LT_BUILD/san/locktime}
unset LOCKTIME_LINES LOCKTIME_THRESHOLD_MS LOCKTIME_REPORT LOCKTIME_OUTPUT
EXPECT=$LT_ROOT/tests/integration/linerate_expect.py

build() {
	cp -r "$LT_ROOT/tests/linerate" "$LT_TMP/src" &&
		timeout -k 10 "$LT_DOTNET_TIMEOUT" dotnet build "$LT_TMP/src/LineRate.csproj" -c Debug -nologo -v q \
			-p:UseSharedCompilation=false -o "$LT_TMP/net" >"$LT_TMP/build.log" 2>&1 || { tail -20 "$LT_TMP/build.log"; return 1; }
	mkdir -p "$LT_TMP/mono" && timeout 120 mcs -debug -out:"$LT_TMP/mono/LineRate.exe" "$LT_TMP/src/Program.cs"
}
check "the program builds (.NET, Mono)" build || { done_testing; exit 0; }
check "woven (.NET)" "$LT" weave -q "$LT_TMP/net/LineRate.dll" || { done_testing; exit 0; }
check "woven (Mono)" "$LT" weave -q "$LT_TMP/mono/LineRate.exe" || { done_testing; exit 0; }

# run NAME RUNTIME ARGS [ENV...]: the woven program at threshold 0 (RUNTIME dotnet or mono) with env's ENV (-u VAR,
# VAR=VALUE), its report NAME.json, stdout NAME.out, stderr NAME.err.
run() {
	local name=$1 runtime=$2 args=$3 program=$LT_TMP/net/LineRate.dll
	shift 3
	[ "$runtime" = mono ] && program=$LT_TMP/mono/LineRate.exe
	env "$@" LOCKTIME_THRESHOLD_MS=0 LOCKTIME_REPORT="$LT_TMP/$name.json" timeout 120 "$runtime" "$program" $args \
		>"$LT_TMP/$name.out" 2>"$LT_TMP/$name.err" || { tail -5 "$LT_TMP/$name.err"; return 1; }
}
adds_up() { # NAME LINES: linerate_expect.py over run NAME's output, the program having run with LOCKTIME_LINES=LINES
	python3 "$EXPECT" "$LT_TMP/$1.err" "$LT_TMP/$1.json" "$LT_TMP/$1.out" "$2"
}
rollups() { # NAME LOCATION COUNT: run NAME's stderr has COUNT roll-up lines of LOCATION
	local n
	n=$(grep -cE "^LockTime: Program::(Main|Worker) had [0-9]+ more slow locks? at $2 in the last " "$LT_TMP/$1.err")
	[ "$n" = "$3" ] || { echo "$n roll-ups of $2, not $3"; grep -E " more slow locks? at " "$LT_TMP/$1.err"; return 1; }
}
line_of() { # SITE: the location of the lock marked "// site: SITE" in the program
	echo "Program.cs:$(grep -n "// site: $1\$" "$LT_ROOT/tests/linerate/Program.cs" | cut -d: -f1)"
}
solo=$(line_of solo)
shared=$(line_of shared)

for rt in dotnet mono; do
	check "$rt: 5,000 slow locks a site, by default" run "default-$rt" $rt 5000
	check "$rt: default: 10 lines a site and roll-ups, which add up to every slow lock of the report" adds_up "default-$rt" 2
	check "$rt: default: one roll-up of the main thread's site, at the exit" rollups "default-$rt" "$solo" 1
	check "$rt: default: one roll-up of the four threads' site, at the exit" rollups "default-$rt" "$shared" 1
done

summary_after() {
	run summary dotnet 2000 -u LOCKTIME_SUMMARY || return 1
	local first_summary last_rollup
	first_summary=$(grep -n '^LockTime: summary: ' "$LT_TMP/summary.err" | head -1 | cut -d: -f1)
	last_rollup=$(grep -nE '^LockTime: Program::[A-Za-z]+ had [0-9]+ more slow locks? at ' "$LT_TMP/summary.err" | tail -1 | cut -d: -f1)
	[ -n "$first_summary" ] && [ -n "$last_rollup" ] && [ "$last_rollup" -lt "$first_summary" ] || { tail -20 "$LT_TMP/summary.err"; return 1; }
}
check "the exit's roll-ups come before the summary" summary_after
check "the summary counts every slow lock" grep -qE "^LockTime:   Program::Worker +$shared +Monitor.Enter +8000 " "$LT_TMP/summary.err"

# 2,200 locks 6 ms apart: 13 s at least, past the first roll-up (10 s after the start).
check "mono: a program that runs 13 s" run long mono "2200 6"
check "mono: 13 s: lines bounded, roll-ups add up" adds_up long 2
check "mono: 13 s: a roll-up while it runs, and one at the exit" rollups long "$solo" 2
check "mono: 13 s: the first roll-up covers the first 10 s or more" \
	grep -qE "^LockTime: Program::Main had [0-9]+ more slow locks at $solo in the last 1[0-9]\.[0-9] s, max hold " "$LT_TMP/long.err"

check "LOCKTIME_LINES=all: runs" run all dotnet 5000 LOCKTIME_LINES=all
check "LOCKTIME_LINES=all: every slow lock has its line, no roll-up" adds_up all all
check "LOCKTIME_LINES=0: runs" run zero mono 5000 LOCKTIME_LINES=0
check "LOCKTIME_LINES=0: 10 lines a site, roll-ups" adds_up zero 0
check "LOCKTIME_LINES=0: exactly 10 lines at each site" \
	bash -c "[ \$(grep -c ' ms at $solo\$' '$LT_TMP/zero.err') = 10 ] && [ \$(grep -cE ' ms at $shared( |\$)' '$LT_TMP/zero.err') = 10 ]"

bad() { # VALUE RUNTIME
	run bad "$2" 3000 "LOCKTIME_LINES=$1" || return 1
	[ "$(grep -c '^LockTime: warning' "$LT_TMP/bad.err")" = 1 ] &&
		grep -qxF "LockTime: warning: LOCKTIME_LINES=\"$1\" is not all or a number of lines a second from 0 to 1000000; using 2" "$LT_TMP/bad.err" ||
		{ grep warning "$LT_TMP/bad.err"; return 1; }
	adds_up bad 2
}
check "LOCKTIME_LINES=lots (.NET): one warning naming it, the default used" bad lots dotnet
check "LOCKTIME_LINES=-1 (Mono): one warning naming it, the default used" bad -1 mono

baked() {
	mkdir -p "$LT_TMP/baked" && timeout 120 mcs -debug -out:"$LT_TMP/baked/LineRate.exe" "$LT_TMP/src/Program.cs" &&
		"$LT" weave -q --lines ALL "$LT_TMP/baked/LineRate.exe" || return 1
	env LOCKTIME_THRESHOLD_MS=0 LOCKTIME_REPORT="$LT_TMP/baked.json" timeout 120 mono "$LT_TMP/baked/LineRate.exe" 3000 \
		>"$LT_TMP/baked.out" 2>"$LT_TMP/baked.err" && adds_up baked all || return 1
	env LOCKTIME_LINES=1 LOCKTIME_THRESHOLD_MS=0 LOCKTIME_REPORT="$LT_TMP/over.json" timeout 120 mono "$LT_TMP/baked/LineRate.exe" 3000 \
		>"$LT_TMP/over.out" 2>"$LT_TMP/over.err" && adds_up over 1 || return 1
	env LOCKTIME_LINES=x LOCKTIME_THRESHOLD_MS=0 timeout 120 mono "$LT_TMP/baked/LineRate.exe" 10 >/dev/null 2>"$LT_TMP/x.err" &&
		grep -qxF 'LockTime: warning: LOCKTIME_LINES="x" is not all or a number of lines a second from 0 to 1000000; using all' "$LT_TMP/x.err"
}
check "--lines ALL baked in: every line; LOCKTIME_LINES=1 overrides it; a bad one warns, using all" baked

done_testing
