#!/usr/bin/env bash
# The lock gate of a test run (msbuild/LockTime.Gate.targets) with real test projects: tests/msbuild/Gate/,
# an xUnit project whose test holds a lock 120 ms, an NUnit project whose test waits about 120 ms for a
# System.Threading.Lock that another thread holds (both on VSTest), an xunit.v3 project on
# Microsoft.Testing.Platform (MTP) through the VSTest bridge and one of the same test on VSTest through
# xunit.runner.visualstudio, in one solution; tests/msbuild/GateMtp/, under a global.json that puts dotnet
# test in .NET 10's MTP mode: an MSTest runner project (a wait and a hold), a TUnit project, a copy of the
# xunit.v3 one, an NUnit runner project (EnableNUnitRunner) of the NUnit test and an MSTest runner project
# whose test deadlocks until it resolves the deadlock itself. The package from a local folder feed, the test
# frameworks from the configured NuGet sources (msbuild_lib.sh).
#   - without LockTimeMaxHoldMs/LockTimeMaxWaitMs, dotnet test runs as it would without the gate;
#   - a limit that is no number is error LT104; limits with LockTimeEnabled=false warn LT107;
#   - dotnet test of the solution at 50 ms fails with LT200 (held) and LT201 (waited) on the lines of the
#     locks, the tests themselves passing, the summary table on the console;
#   - at 500 ms it passes;
#   - a failing test fails dotnet test with VSTest's own report and no LT200/LT201;
#   - xunit.v3 through xunit.runner.visualstudio: VSTest's gate, LT200 on the line as a build error;
#   - MTP (the gate's extension, msbuild/LockTime.Gate.Mtp.cs): the bridge fails with LT200 on the xunit.v3 line
#     as a build error; MTP mode fails with LT200/LT201 on the lines, for MSTest, TUnit, xunit.v3 and NUnit's
#     runner, also with --no-build and the option --locktime-max-hold-ms; the applications run by themselves
#     (the apphost, dotnet exec, dotnet run) fail the same way and pass under the limits saying so; a deadlock
#     the run-time found fails the run with LT202 in locktime check's words on the line where the last thread
#     waits; a TRX report records each failure with its error line as the message; a project whose extensions
#     are not generated gets LT107 naming it.
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
v=$work/XunitV3Gate
mtp="$LT_TMP/gate mtp"
mkdir -p "$mtp"
cp -r "$LT_ROOT/tests/msbuild/GateMtp/." "$LT_ROOT/tests/msbuild/Directory.Build.props" "$work/nuget.config" "$mtp/"
cp -r "$LT_ROOT/tests/msbuild/Gate/XunitV3Gate" "$mtp/"
cp "$LT_ROOT/tests/msbuild/Gate/NunitGate/OrderTests.cs" "$mtp/NunitRunnerGate/"
ms=$mtp/MstestGate
tu=$mtp/TunitGate
mv3=$mtp/XunitV3Gate
nr=$mtp/NunitRunnerGate
dl=$mtp/DeadlockGate
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
row_has() { # REGEX FILE: FILE has a summary row matching REGEX; else its LockTime lines are shown
	# Under CI=true, Microsoft.Testing.Platform colours its output: the escapes go first.
	sed 's/\x1b\[[0-9;]*m//g' "$2" | grep -qE -- "$1" || { grep -E 'LockTime|LT[0-9]{3}|method +location' "$2"; return 1; }
}
# The errors the gate must give at 50 ms: "<source>(<line>): error LT20N: ..." on each lock's line.
xhold="$x/StockTests.cs($(line_of "$x/StockTests.cs" '// held 120 ms')): error LT200: lock held "
nhold="$n/OrderTests.cs($(line_of "$n/OrderTests.cs" '// held 120 ms')): error LT200: lock held "
nwait="$n/OrderTests.cs($(line_of "$n/OrderTests.cs" '// waits for the holder')): error LT201: "
vhold="$v/ShelfTests.cs($(line_of "$v/ShelfTests.cs" '// held 120 ms')): error LT200: lock held "
mshold="$ms/LedgerTests.cs($(line_of "$ms/LedgerTests.cs" '// held 120 ms')): error LT200: lock held "
mswait="$ms/LedgerTests.cs($(line_of "$ms/LedgerTests.cs" '// waits for the holder')): error LT201: "
tuhold="$tu/BinTests.cs($(line_of "$tu/BinTests.cs" '// held 120 ms')): error LT200: lock held "
mv3hold="$mv3/ShelfTests.cs($(line_of "$mv3/ShelfTests.cs" '// held 120 ms')): error LT200: lock held "
nrhold="$nr/OrderTests.cs($(line_of "$nr/OrderTests.cs" '// held 120 ms')): error LT200: lock held "
nrwait="$nr/OrderTests.cs($(line_of "$nr/OrderTests.cs" '// waits for the holder')): error LT201: lock waited "
# The deadlock's LT202: on the line where the last thread waits (both wait at the same line), in the run-time's words.
dwait=$(line_of "$dl/TransferTests.cs" '// waits for the other thread')
dheld=$(line_of "$dl/TransferTests.cs" '// taken, then held through the deadlock')
dedge="waits at [^(]*TransferTests\\.cs:$dwait \\(TransferTests::Cross\\) for the lock thread [0-9]+ took at [^(]*TransferTests\\.cs:$dheld \\(TransferTests::Cross\\)"
deadlock_is() { # LOG: LOG has the deadlock's LT202 line
	sed 's/\x1b\[[0-9;]*m//g' "$1" | grep -F -- "$dl/TransferTests.cs($dwait): error LT202: deadlock: thread " |
		grep -qE -- "deadlock: thread [0-9]+ $dedge; thread [0-9]+ $dedge\$" ||
		{ grep -E 'LT20[0-9]|deadlock' "$1"; return 1; }
}
# trx_says TRX NAME LOG CODE: the TRX report's failed result whose test name starts with NAME has as its message the
# LOG's line of error CODE (the gate's failed test as --report-trx records it)
trx_says() {
	local got want
	got=$(timeout 60 python3 - "$1" "$2" <<'EOF'
import sys
import xml.etree.ElementTree as ET
t = "{http://microsoft.com/schemas/VisualStudio/TeamTest/2010}"
for r in ET.parse(sys.argv[1]).getroot().iter(t + "UnitTestResult"):
    if r.get("testName", "").startswith(sys.argv[2]) and r.get("outcome") == "Failed":
        m = r.find(t + "Output/" + t + "ErrorInfo/" + t + "Message")
        print(m.text if m is not None else "(no message)")
EOF
)
	want=$(sed 's/\x1b\[[0-9;]*m//g' "$3" | grep -m 1 -E ": error $4: " | sed 's/^ *//')
	echo "TRX: $got"
	echo "log: $want"
	[ -n "$want" ] && [ "$got" = "$want" ]
}
# exits N CMD...: CMD exits with status N (an MTP application: 2 when a test, or the lock gate, failed)
exits() {
	local want=$1 rc
	shift
	"$@"
	rc=$?
	echo "exit status $rc"
	[ "$rc" = "$want" ]
}
# in_mtp CMD...: CMD in the folder of GateMtp/global.json, which dotnet test reads from the current folder
in_mtp() {
	(cd "$mtp" && "$@")
}
# dt N LOG ARGS...: dotnet ARGS (bounded, output into LOG) exits with status N. In MTP mode dotnet test gives the
# test applications every option it does not know (-nologo, -tl:off... included): MSBuild's only as properties.
dt() {
	local want=$1 log=$2
	shift 2
	exits "$want" timeout -k 10 "$LT_DOTNET_TIMEOUT" dotnet "$@" -p:UseSharedCompilation=false >"$log" 2>&1
}
# app LOG ARGS...: a test application run by itself, bounded, its output into LOG
app() {
	local log=$1
	shift
	timeout -k 10 "$LT_DOTNET_TIMEOUT" "$@" >"$log" 2>&1
}

check "gate: restore the solution (xUnit, NUnit, xunit.v3 and the package)" dn "$LT_TMP/g0.log" restore "$sln" || exit 1
check "gate: without the limits, dotnet test of the solution passes" dn "$LT_TMP/g1.log" test "$sln"
check "gate: without the limits: the three VSTest projects ran" count_is 3 '^Passed!' "$LT_TMP/g1.log"
check "gate: without the limits: the xunit.v3 project ran on MTP" grep -q 'Tests succeeded: .*XunitV3Gate.dll' "$LT_TMP/g1.log"
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
check "gate: 50 ms: the tests themselves passed (xUnit, NUnit, xunit.v3 on VSTest)" count_is 3 '^Passed!' "$LT_TMP/g4.log"
check "gate: 50 ms: xUnit: LT200 on the line of the lock held 120 ms" has "$xhold" "$LT_TMP/g4.log"
check "gate: 50 ms: xUnit: the error names the test method" line_has "$xhold" 'StockTests::HoldsTheStockLock' "$LT_TMP/g4.log"
check "gate: 50 ms: NUnit: LT200 on the line of the Lock held 120 ms (in a lambda)" has "$nhold" "$LT_TMP/g4.log"
check "gate: 50 ms: NUnit: LT201 on the line of the wait for it" has "$nwait" "$LT_TMP/g4.log"
grep -E ': error LT20[01]: ' "$LT_TMP/g4.log" | sort -u >"$LT_TMP/g4.errors"
check "gate: 50 ms: xunit.v3 (MTP, VSTest bridge): LT200 on the line of the lock held 120 ms" line_has "$vhold" "[$v/XunitV3Gate.csproj]" "$LT_TMP/g4.log"
check "gate: 50 ms: xunit.v3 (MTP, VSTest bridge): the error names the test method" line_has "$vhold" 'ShelfTests::HoldsTheShelfLock' "$LT_TMP/g4.log"
check "gate: 50 ms: xunit.v3 (MTP, VSTest bridge): its tests passed" grep -q 'Tests succeeded: .*XunitV3Gate.dll' "$LT_TMP/g4.log"
check "gate: 50 ms: xunit.v3 (MTP, VSTest bridge): the summary table above" row_has '^ +ShelfTests::HoldsTheShelfLock +.*ShelfTests\.cs:[0-9]+ +Monitor\.Enter ' "$LT_TMP/g4.log"
check "gate: 50 ms: xunit.v3 (VSTest, xunit.runner.visualstudio): LT200 on the line of the lock held 120 ms" \
	line_has "$vhold" "[$work/XunitV3VsGate/XunitV3VsGate.csproj]" "$LT_TMP/g4.log"
check "gate: 50 ms: xunit.v3 (VSTest, xunit.runner.visualstudio): the summary of its report" \
	grep -qF "LockTime: the locks of the tests of XunitV3VsGate.dll (1 report(s) in $work/XunitV3VsGate/obj/Debug/net10.0/locktime-test/):" "$LT_TMP/g4.log"
check "gate: 50 ms: five gate errors in all" count_is 5 . "$LT_TMP/g4.errors"
check "gate: 50 ms: the summary table reaches the console" grep -qE '^ +StockTests::HoldsTheStockLock +.*StockTests\.cs:[0-9]+ +Monitor\.Enter ' "$LT_TMP/g4.log"
check "gate: 50 ms: a report per test host" bash -c "ls '$xreports'/report.[0-9]*.json"

check "gate: dotnet test of the solution at 500 ms passes" \
	dn "$LT_TMP/g5.log" test "$sln" -p:LockTimeMaxHoldMs=500 -p:LockTimeMaxWaitMs=500
check "gate: 500 ms: the gate passed in the four projects" count_is 4 'LockTime: lock gate passed for (XunitGate|NunitGate|XunitV3Gate|XunitV3VsGate)\.dll' "$LT_TMP/g5.log"
check "gate: 500 ms: no gate error" not grep -qE 'LT20[01]' "$LT_TMP/g5.log"

GATE_TEST_FAIL=1 check "gate: a failing test fails dotnet test (limit 50 ms)" \
	fails "$LT_TMP/g6.log" 'Failed StockTests\.FailsWhenAsked' test "$x" -p:LockTimeMaxHoldMs=50
check "gate: a failing test: VSTest's failure, not the gate's (no LT200/LT201)" not grep -qE 'LT20[01]' "$LT_TMP/g6.log"
GATE_TEST_FAIL=1 check "gate: xunit.v3 (MTP, VSTest bridge): a failing test fails dotnet test, no gate error" \
	fails "$LT_TMP/g7.log" 'XunitV3Gate' test "$v" -p:LockTimeMaxHoldMs=50
check "gate: xunit.v3 (MTP, VSTest bridge): a failing test: not the gate's failure" not grep -qE 'LT20[01]' "$LT_TMP/g7.log"
check "gate: xunit.v3 (MTP, VSTest bridge): dotnet test --no-build at 50 ms fails on the line" \
	fails "$LT_TMP/g8.log" 'error LT200: ' test "$v" --no-build -p:LockTimeMaxHoldMs=50
check "gate: xunit.v3 (MTP, VSTest bridge): --no-build: LT200 on the line" has "$vhold" "$LT_TMP/g8.log"

# .NET 10's MTP mode (GateMtp/global.json): dotnet test runs the applications itself; no MSBuild after the run.
check "gate mtp: restore (MSTest, TUnit, xunit.v3, NUnit and the package)" \
	dn "$LT_TMP/m0.log" restore "$ms" && dn "$LT_TMP/m0.log" restore "$tu" && dn "$LT_TMP/m0.log" restore "$mv3" &&
	dn "$LT_TMP/m0.log" restore "$nr" && dn "$LT_TMP/m0.log" restore "$dl" || exit 1
check "gate mtp: without the limits, dotnet test of MSTest passes" in_mtp dt 0 "$LT_TMP/m1.log" test --project "$ms"
check "gate mtp: without the limits: no gate" not grep -qE 'LT[12][0-9][0-9]|locktime-gate' "$LT_TMP/m1.log"
check "gate mtp: MSTest runner at 50 ms: dotnet test fails" \
	in_mtp dt 2 "$LT_TMP/m2.log" test --project "$ms" -p:LockTimeMaxHoldMs=50 -p:LockTimeMaxWaitMs=50
check "gate mtp: MSTest runner: LT200 on the line of the lock held 120 ms" has "$mshold" "$LT_TMP/m2.log"
check "gate mtp: MSTest runner: LT201 on the line of the wait for it" has "$mswait" "$LT_TMP/m2.log"
check "gate mtp: MSTest runner: the errors name the test method" line_has "$mswait" 'LedgerTests::WaitsForTheLedger' "$LT_TMP/m2.log"
check "gate mtp: MSTest runner: the verdict is an artifact dotnet test lists" grep -q 'MstestGate.locktime-gate-failed.txt' "$LT_TMP/m2.log"
check "gate mtp: MSTest runner at 500 ms: dotnet test passes" in_mtp dt 0 "$LT_TMP/m3.log" test --project "$ms" -p:LockTimeMaxHoldMs=500 -p:LockTimeMaxWaitMs=500
check "gate mtp: MSTest runner at 500 ms: says the gate passed" grep -q 'MstestGate.locktime-gate-passed.txt' "$LT_TMP/m3.log"
check "gate mtp: MSTest runner at 500 ms: no gate error" not grep -qE 'LT20[01]' "$LT_TMP/m3.log"
check "gate mtp: MSTest runner: dotnet test --no-build --locktime-max-hold-ms 50 fails" \
	in_mtp exits 2 app "$LT_TMP/m4.log" dotnet test --project "$ms" --no-build --locktime-max-hold-ms 50
check "gate mtp: MSTest runner: --no-build: LT200 on the line" has "$mshold" "$LT_TMP/m4.log"
check "gate mtp: TUnit at 50 ms: dotnet test fails" \
	in_mtp dt 2 "$LT_TMP/m5.log" test --project "$tu" -p:LockTimeMaxHoldMs=50
check "gate mtp: TUnit: LT200 on the line of the Lock held 120 ms" has "$tuhold" "$LT_TMP/m5.log"
check "gate mtp: xunit.v3 at 50 ms: dotnet test fails" \
	in_mtp dt 2 "$LT_TMP/m6.log" test --project "$mv3" -p:LockTimeMaxHoldMs=50
check "gate mtp: xunit.v3: LT200 on the line of the lock held 120 ms" has "$mv3hold" "$LT_TMP/m6.log"
check "gate mtp: NUnit runner at 50 ms: dotnet test fails" \
	in_mtp dt 2 "$LT_TMP/m8.log" test --project "$nr" -p:LockTimeMaxHoldMs=50 -p:LockTimeMaxWaitMs=50
check "gate mtp: NUnit runner: LT200 on the line of the Lock held 120 ms (in a lambda)" has "$nrhold" "$LT_TMP/m8.log"
check "gate mtp: NUnit runner: LT201 on the line of the wait for it" has "$nrwait" "$LT_TMP/m8.log"
check "gate mtp: NUnit runner: the tests themselves passed" grep -qE '^ +succeeded: 1$' "$LT_TMP/m8.log"
check "gate mtp: NUnit runner at 500 ms: dotnet test passes" \
	in_mtp dt 0 "$LT_TMP/m9.log" test --project "$nr" -p:LockTimeMaxHoldMs=500 -p:LockTimeMaxWaitMs=500
check "gate mtp: NUnit runner at 500 ms: says the gate passed" grep -q 'NunitRunnerGate.locktime-gate-passed.txt' "$LT_TMP/m9.log"
check "gate mtp: NUnit runner at 500 ms: no gate error" not grep -qE 'LT20[0-9]' "$LT_TMP/m9.log"
# A deadlock: the test's two threads wait for each other until it interrupts one; under limits of 10 s only LT202.
check "gate mtp: a deadlock: dotnet test fails" in_mtp dt 2 "$LT_TMP/m10.log" test --project "$dl" -p:LockTimeMaxHoldMs=10000
check "gate mtp: a deadlock: LT202 on the line where the last thread waits, in the run-time's words" deadlock_is "$LT_TMP/m10.log"
check "gate mtp: a deadlock: the test itself passed" grep -qE '^ +succeeded: 1$' "$LT_TMP/m10.log"

# The applications run by themselves (built above: MSTest at 500 ms, TUnit and xunit.v3 at 50 ms).
msdll=$ms/bin/Debug/net10.0/MstestGate.dll
check "gate app: MSTest apphost at --locktime-max-wait-ms 50 fails" \
	exits 2 app "$LT_TMP/a1.log" "${msdll%.dll}" --locktime-max-wait-ms 50 --report-trx --report-trx-filename gate.trx
check "gate app: MSTest apphost: the TRX report records the gate's failed test" \
	grep -qE 'testName="LockTime LT201: [^"]*LedgerTests\.cs:[0-9]+ [^"]*" .*outcome="Failed"' "$ms/bin/Debug/net10.0/TestResults/gate.trx"
check "gate app: MSTest apphost: the TRX report's failed test has the LT201 line as its message" \
	trx_says "$ms/bin/Debug/net10.0/TestResults/gate.trx" "LockTime LT201: " "$LT_TMP/a1.log" LT201
check "gate app: MSTest apphost: LT201 on the line of the wait" has "$mswait" "$LT_TMP/a1.log"
check "gate app: MSTest apphost: the summary table above the error" row_has '^ +LedgerTests::WaitsForTheLedger +.*LedgerTests\.cs:[0-9]+ +Monitor\.Enter ' "$LT_TMP/a1.log"
check "gate app: MSTest apphost under the build's 500 ms passes" exits 0 app "$LT_TMP/a2.log" "${msdll%.dll}"
check "gate app: MSTest apphost under the limits: says the gate passed" grep -q 'LockTime: lock gate passed for MstestGate.dll: no lock held 500 ms or longer, no wait of 500 ms or longer' "$LT_TMP/a2.log"
check "gate app: MSTest dotnet exec at --locktime-max-hold-ms 50 fails" exits 2 app "$LT_TMP/a3.log" dotnet exec "$msdll" --locktime-max-hold-ms 50
check "gate app: MSTest dotnet exec: LT200 on the line" has "$mshold" "$LT_TMP/a3.log"
check "gate app: a limit that is no number is refused" not app "$LT_TMP/a4.log" "${msdll%.dll}" --locktime-max-hold-ms fast
check "gate app: a limit that is no number: the option named" grep -q -- '--locktime-max-hold-ms takes a number of milliseconds' "$LT_TMP/a4.log"
check "gate app: TUnit dotnet run fails under the build's 50 ms" exits 2 app "$LT_TMP/a5.log" dotnet run --no-build --project "$tu"
check "gate app: TUnit dotnet run: LT200 on the line" has "$tuhold" "$LT_TMP/a5.log"
check "gate app: xunit.v3 apphost fails under the build's 50 ms" exits 2 app "$LT_TMP/a6.log" "$mv3/bin/Debug/net10.0/XunitV3Gate"
check "gate app: xunit.v3 apphost: LT200 on the line" has "$mv3hold" "$LT_TMP/a6.log"
check "gate app: NUnit runner apphost at --locktime-max-hold-ms 50 --locktime-max-wait-ms 50 fails" \
	exits 2 app "$LT_TMP/a7.log" "$nr/bin/Debug/net10.0/NunitRunnerGate" --locktime-max-hold-ms 50 --locktime-max-wait-ms 50
check "gate app: NUnit runner apphost: LT200 on the line of the hold" has "$nrhold" "$LT_TMP/a7.log"
check "gate app: NUnit runner apphost: LT201 on the line of the wait" has "$nrwait" "$LT_TMP/a7.log"
check "gate app: a deadlock: the apphost fails (limits of 10 s)" \
	exits 2 app "$LT_TMP/a8.log" "$dl/bin/Debug/net10.0/DeadlockGate" --report-trx --report-trx-filename gate.trx
check "gate app: a deadlock: LT202 on the line where the last thread waits" deadlock_is "$LT_TMP/a8.log"
check "gate app: a deadlock: no LT200/LT201 under 10 s" not grep -qE 'LT20[01]' "$LT_TMP/a8.log"
check "gate app: a deadlock: the verdict counts it" grep -qF 'LockTime: lock gate failed for DeadlockGate.dll: 0 lock site(s) over the limits, 1 deadlock(s).' "$LT_TMP/a8.log"
check "gate app: a deadlock: the TRX report's failed test has the LT202 line as its message" \
	trx_says "$dl/bin/Debug/net10.0/TestResults/gate.trx" "LockTime LT202: " "$LT_TMP/a8.log" LT202

# A project the gate cannot hook is said at build time: an entry point of its own, without the extensions MTP
# registers by itself (GenerateSelfRegisteredExtensions=false).
own=$mtp/MstestOwnMain
cp -r "$ms" "$own"
rm -rf "$own/bin" "$own/obj" "$own/TestResults"
mv "$own/MstestGate.csproj" "$own/MstestOwnMain.csproj"
cat >"$own/Program.cs" <<'EOF'
// An MSTest runner application that writes its own entry point and registers no self-registered extension.
using System.Threading.Tasks;
using Microsoft.Testing.Platform.Builder;
using Microsoft.VisualStudio.TestTools.UnitTesting;

public static class Program
{
    public static async Task<int> Main(string[] args)
    {
        ITestApplicationBuilder builder = await TestApplication.CreateBuilderAsync(args);
        builder.AddMSTest(() => new[] { typeof(Program).Assembly });
        using ITestApplication app = await builder.BuildAsync();
        return await app.RunAsync();
    }
}
EOF
check "gate mtp: own entry point without self-registered extensions: the build passes" \
	dn "$LT_TMP/m7.log" build "$own" -p:LockTimeMaxHoldMs=50 -p:GenerateSelfRegisteredExtensions=false -p:GenerateTestingPlatformEntryPoint=false
check "gate mtp: own entry point: warning LT107 naming the project" grep -q 'warning LT107: LockTime: MstestOwnMain turns off' "$LT_TMP/m7.log"
done_testing
