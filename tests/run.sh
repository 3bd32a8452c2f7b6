#!/usr/bin/env bash
# Runs every test suite and prints one closing line "N passed, N failed".
#   C unit suites:   build/san/test_*        (cmocka, TAP output, ASan+UBSan)
#   end-to-end:      tests/integration/*.sh  (TAP output: "ok ..." / "not ok ...")
# Each suite's TAP lines are counted; a suite that exits non-zero without a
# failing TAP line (a crash, a sanitizer report) counts as one failure.
set -u
cd "$(dirname "$0")/.."
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export CMOCKA_MESSAGE_OUTPUT=TAP
export LOCKTIME=${LOCKTIME:-$PWD/build/san/locktime}
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
mkdir -p build/logs
passed=0 failed=0
only=${1:-}

run_suite() { # name, command...
	local name=$1 log=build/logs/$1.log; shift
	[ -n "$only" ] && [[ $name != *$only* ]] && return
	echo "== $name"
	"$@" >"$log" 2>&1
	local rc=$? p f
	p=$(grep -cE '^ok ' "$log")
	f=$(grep -cE '^not ok ' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1; echo "not ok - $name exited with status $rc" >>"$log"
	fi
	grep -E '^(not ok|# )' "$log" | head -40
	tail -n 20 "$log" | grep -E 'ERROR|runtime error|Sanitizer' | head -5
	echo "   $p passed, $f failed"
	passed=$((passed + p)); failed=$((failed + f))
}

for t in build/san/test_*; do
	[ -x "$t" ] && run_suite "$(basename "$t")" "$t"
done
for s in tests/integration/*.sh; do
	[ -f "$s" ] && run_suite "$(basename "$s" .sh)" bash "$s"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
