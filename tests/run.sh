#!/usr/bin/env bash
# Runs every test suite and prints one closing line "N passed, N failed".
#   C unit suites:   build/san/test_*        (cmocka, TAP output, ASan+UBSan)
#   end-to-end:      tests/integration/*.sh  (TAP output: "ok ..." / "not ok ...")
# The checker (ltcheck) and the test corpus are built first: some unit suites
# read the corpus too.  Each suite's TAP lines are counted ("# SKIP" ones as
# skipped); a suite that exits non-zero without a failing TAP line (a crash,
# a sanitizer report) counts as one failure.
set -u
cd "$(dirname "$0")/.."
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export CMOCKA_MESSAGE_OUTPUT=TAP
export LOCKTIME=${LOCKTIME:-$PWD/build/san/locktime}
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
mkdir -p build/logs
passed=0 failed=0 skipped=0
only=${1:-}

echo "== building ltcheck and the test corpus"
if ! bash tests/tools/build.sh || ! bash tests/corpus/build.sh; then
	echo "0 passed, 1 failed"
	exit 1
fi

run_suite() { # name, command...
	local name=$1 log=build/logs/$1.log; shift
	[ -n "$only" ] && [[ $name != *$only* ]] && return
	echo "== $name"
	"$@" >"$log" 2>&1
	local rc=$? p f k
	p=$(grep -cE '^ok ' "$log")
	f=$(grep -E '^not ok ' "$log" | grep -vc '# SKIP')
	k=$(grep -E '^not ok ' "$log" | grep -c '# SKIP')
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1; echo "not ok - $name exited with status $rc" >>"$log"
	fi
	grep -E '^not ok|^# ' "$log" | grep -v '# SKIP' | head -40
	tail -n 20 "$log" | grep -E 'ERROR|runtime error|Sanitizer' | head -5
	echo "   $p passed, $f failed, $k skipped"
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + k))
}

for t in build/san/test_*; do
	[ -x "$t" ] && run_suite "$(basename "$t")" "$t"
done
for s in tests/integration/*.sh; do
	[ -f "$s" ] && run_suite "$(basename "$s" .sh)" bash "$s"
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
