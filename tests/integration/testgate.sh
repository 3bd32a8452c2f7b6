#!/usr/bin/env bash
# The lock gate of a test run (msbuild/LockTime.Gate.targets) with real test projects: tests/msbuild/Gate/,
# an xUnit project whose test holds a lock 120 ms and an NUnit project whose test waits about 120 ms for a
# System.Threading.Lock that another thread holds, in one solution; the package from a local folder feed,
# the test frameworks from the configured NuGet sources (msbuild_lib.sh).
#   - without LockTimeMaxHoldMs/LockTimeMaxWaitMs, dotnet test runs as it would without the gate;
#   - a limit that is no number is error LT104; limits with LockTimeEnabled=false warn LT107;
#   - dotnet test of the solution at 50 ms fails with LT200 (held) and LT201 (waited) on the lines of the
#     locks, the tests themselves passing, the summary table on the console;
#   - at 500 ms it passes;
#   - a failing test fails dotnet test with VSTest's own report and no LT200/LT201.
source "$(dirname "$0")/../msbuild_lib.sh" "$@"
# VSTest kills a test host that has not exited 100 ms after the run; on this shared machine that can be
# before the run-time's exit handler has written the report (warning LT107): give it 10 s (README).
export VSTEST_TESTHOST_SHUTDOWN_TIMEOUT=10000

work="$LT_TMP/gate projects"
feed="$LT_TMP/local feed"
mkdir -p "$work"
cp -r "$LT_ROOT/tests/msbuild/Gate/." "$LT_ROOT/tests/msbuild/Directory.Build.props" "$work/"
msbuild_feed "$work" "$feed"
x=$work/XunitGate
n=$work/NunitGate
sln=$work/Gate.slnx
xreports=$x/obj/Debug/net10.0/locktime-test

not() { # CMD...: CMD fails
	! "$@"
}
line_of() { # FILE TEXT: the number of the first line of FILE that holds TEXT
	grep -nF -- "$2" "$1" | head -n 1 | cut -d: -f1
}
count_is() { # N PATTERN FILE: FILE has exactly N lines matching PATTERN (grep -E)
	local got
	got=$(grep -cE -- "$2" "$3")
	echo "$got lines match $2"
	[ "$got" = "$1" ]
}
has() { # TEXT FILE: FILE has a line holding TEXT; else its LockTime lines and diagnostics are shown
	grep -qF -- "$1" "$2" || { grep -E 'LockTime|LT[0-9]{3}|Passed!|Failed!' "$2"; return 1; }
}
line_has() { # TEXT WORD FILE: a line of FILE holds TEXT and WORD
	grep -F -- "$1" "$3" | grep -qF -- "$2"
}
# The errors the gate must give at 50 ms: "<source>(<line>): error LT20N: ..." on each lock's line.
xhold="$x/StockTests.cs($(line_of "$x/StockTests.cs" '// held 120 ms')): error LT200: lock held "
nhold="$n/OrderTests.cs($(line_of "$n/OrderTests.cs" '// held 120 ms')): error LT200: lock held "
nwait="$n/OrderTests.cs($(line_of "$n/OrderTests.cs" '// waits for the holder')): error LT201: "

check "gate: restore the solution (xUnit, NUnit and the package)" dn "$LT_TMP/g0.log" restore "$sln" || exit 1
check "gate: without the limits, dotnet test of the solution passes" dn "$LT_TMP/g1.log" test "$sln"
check "gate: without the limits: both test projects ran" count_is 2 '^Passed!' "$LT_TMP/g1.log"
check "gate: without the limits: no gate (no LT1NN or LT2NN, no gate line)" not grep -E 'LT[12][0-9][0-9]|LockTime: lock gate' "$LT_TMP/g1.log"
check "gate: without the limits: no report folder" test ! -e "$xreports"
check "gate: LockTimeMaxHoldMs=fast: error LT104 naming it" \
	fails "$LT_TMP/g2.log" "error LT104: LockTime: LockTimeMaxHoldMs is 'fast': it takes a number of milliseconds" build "$x" -p:LockTimeMaxHoldMs=fast
check "gate: limits with LockTimeEnabled=false: dotnet test passes" \
	dn "$LT_TMP/g3.log" test "$x" -p:LockTimeMaxHoldMs=50 -p:LockTimeEnabled=false
check "gate: limits with LockTimeEnabled=false: warning LT107 naming both" \
	grep -q "warning LT107: LockTime: LockTimeMaxHoldMs/LockTimeMaxWaitMs are set, but LockTimeEnabled is 'false'" "$LT_TMP/g3.log"


check "gate: dotnet test of the solution at 50 ms fails" \
	fails "$LT_TMP/g4.log" 'error LT20[01]: ' test "$sln" -p:LockTimeMaxHoldMs=50 -p:LockTimeMaxWaitMs=50
check "gate: 50 ms: the tests themselves passed (xUnit and NUnit)" count_is 2 '^Passed!' "$LT_TMP/g4.log"
check "gate: 50 ms: xUnit: LT200 on the line of the lock held 120 ms" has "$xhold" "$LT_TMP/g4.log"
check "gate: 50 ms: xUnit: the error names the test method" line_has "$xhold" 'StockTests::HoldsTheStockLock' "$LT_TMP/g4.log"
check "gate: 50 ms: NUnit: LT200 on the line of the Lock held 120 ms (in a lambda)" has "$nhold" "$LT_TMP/g4.log"
check "gate: 50 ms: NUnit: LT201 on the line of the wait for it" has "$nwait" "$LT_TMP/g4.log"
grep -E ': error LT20[01]: ' "$LT_TMP/g4.log" | sort -u >"$LT_TMP/g4.errors"
check "gate: 50 ms: three gate errors in all" count_is 3 . "$LT_TMP/g4.errors"
check "gate: 50 ms: the summary table reaches the console" grep -qE '^ +StockTests::HoldsTheStockLock +.*StockTests\.cs:[0-9]+ +Monitor\.Enter ' "$LT_TMP/g4.log"
check "gate: 50 ms: a report per test host" bash -c "ls '$xreports'/report.[0-9]*.json"

check "gate: dotnet test of the solution at 500 ms passes" \
	dn "$LT_TMP/g5.log" test "$sln" -p:LockTimeMaxHoldMs=500 -p:LockTimeMaxWaitMs=500
check "gate: 500 ms: the gate passed in both projects" count_is 2 'LockTime: lock gate passed for (XunitGate|NunitGate)\.dll' "$LT_TMP/g5.log"
check "gate: 500 ms: no gate error" not grep -qE 'LT20[01]' "$LT_TMP/g5.log"

GATE_TEST_FAIL=1 check "gate: a failing test fails dotnet test (limit 50 ms)" \
	fails "$LT_TMP/g6.log" 'Failed StockTests\.FailsWhenAsked' test "$x" -p:LockTimeMaxHoldMs=50
check "gate: a failing test: VSTest's failure, not the gate's (no LT200/LT201)" not grep -qE 'LT20[01]' "$LT_TMP/g6.log"
done_testing
