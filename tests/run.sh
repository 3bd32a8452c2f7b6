#!/usr/bin/env bash
# Runs every test suite and prints one closing line "N passed, N failed, N skipped".
#   tests/run.sh [NAME]   only the suites whose name holds NAME (test_sig, hostile); when no suite
#                         does, the cmocka tests named NAME (test_grow), in the unit suites that
#                         have one.  `make test T=NAME` runs this.
#   C unit suites:   build/san/test_*        (cmocka, TAP output, ASan+UBSan)
#   end-to-end:      tests/integration/*.sh  (TAP output: "ok ..." / "not ok ...")
# The checker (ltcheck) and the test corpus are built first when a suite run
# needs them: every end-to-end suite, and the unit suites whose source reads
# the corpus.  Each suite prints its time.  Each suite's TAP lines are counted ("# SKIP" ones, "ok" or
# "not ok", as skipped); a suite that exits non-zero without a failing TAP line (a crash, a sanitizer
# report) counts as one failure, and so does one that printed no plan ("1..N", which every suite
# prints: cmocka first, the end-to-end suites last through done_testing, tests/lib.sh) or ran fewer
# checks than it, and each skip that tests/skips.allowed does not list (with the reason it may happen).
set -u
cd "$(dirname "$0")/.."
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export CMOCKA_MESSAGE_OUTPUT=TAP
export LOCKTIME=${LOCKTIME:-$PWD/build/san/locktime}
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
mkdir -p build/logs
passed=0 failed=0 skipped=0
only=${1:-}

units=() scripts=() test_name=""
for t in build/san/test_*; do
	[ -x "$t" ] && { [ -z "$only" ] || [[ $(basename "$t") == *$only* ]]; } && units+=("$t")
done
for s in tests/integration/*.sh; do
	[ -f "$s" ] && { [ -z "$only" ] || [[ $(basename "$s" .sh) == *$only* ]]; } && scripts+=("$s")
done
if [ -n "$only" ] && [ ${#units[@]} -eq 0 ] && [ ${#scripts[@]} -eq 0 ]; then
	# No suite of that name: the unit suites holding a cmocka test of that name.
	test_name=$only
	for t in build/san/test_*; do
		grep -q "cmocka_unit_test[a-z_]*($only\b" "tests/unit/$(basename "$t").c" 2>/dev/null && units+=("$t")
	done
	[ ${#units[@]} -gt 0 ] || { echo "tests/run.sh: no suite and no test named like '$only'"; echo "0 passed, 1 failed"; exit 1; }
fi
# needs_corpus SUITE-SOURCE: the suite reads the corpus (or its fixture does).
needs_corpus() {
	grep -qi corpus "$1" || { grep -q weave_fixture.h "$1" && grep -qi corpus tests/unit/weave_fixture.h; }
}
need=${#scripts[@]}
for t in "${units[@]}"; do
	needs_corpus "tests/unit/$(basename "$t").c" && need=1
done
if [ "$need" -gt 0 ]; then
	echo "== building ltcheck and the test corpus"
	if ! bash tests/tools/build.sh || ! bash tests/corpus/build.sh; then
		echo "0 passed, 1 failed"
		exit 1
	fi
fi

# allowed_skip SUITE LINE: the skipped TAP line LINE of SUITE is listed in tests/skips.allowed (a line
# "SUITE<TAB>NAME<TAB>why": the test's name, as printed before " # SKIP", ends with NAME).
allowed_skip() {
	local name=${2#*ok }
	name=${name#*- }
	name=${name%% # SKIP*}
	awk -F '\t' -v s="$1" -v n="$name" '$1 == s && $2 != "" && substr(n, length(n) - length($2) + 1) == $2 { found = 1 }
		END { exit !found }' tests/skips.allowed
}

run_suite() { # name, command...
	local name=$1 log=build/logs/$1.log start=$EPOCHREALTIME; shift
	echo "== $name"
	"$@" >"$log" 2>&1
	local rc=$? p f k n plan line
	p=$(grep -E '^ok ' "$log" | grep -vc '# SKIP')
	f=$(grep -E '^not ok ' "$log" | grep -vc '# SKIP')
	k=$(grep -cE '^(not )?ok .*# SKIP' "$log")
	n=$(grep -cE '^(not )?ok ' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1; echo "not ok - $name exited with status $rc" >>"$log"
	fi
	# A skip is a failure unless tests/skips.allowed lists it with its reason.
	while IFS= read -r line; do
		allowed_skip "$name" "$line" && continue
		f=$((f + 1)); echo "not ok - $name: a skip that tests/skips.allowed does not list: ${line/ \# SKIP / - skipped: }" >>"$log"
	done < <(grep -E '^(not )?ok .*# SKIP' "$log")
	# The plan ("1..N", TAP): a suite that stopped before it printed its plan, or ran fewer checks, fails.
	plan=$(grep -E '^1[.][.][0-9]+$' "$log" | head -n 1)
	if [ -z "$plan" ]; then
		f=$((f + 1)); echo "not ok - $name printed no plan (1..N): it stopped before its end" >>"$log"
	elif [ "${plan#1..}" -ne "$n" ]; then
		f=$((f + 1)); echo "not ok - $name ran $n checks of the $plan it planned" >>"$log"
	fi
	grep -E '^not ok|^# ' "$log" | grep -v '# SKIP' | head -40
	tail -n 20 "$log" | grep -E 'ERROR|runtime error|Sanitizer' | head -5
	echo "   $p passed, $f failed, $k skipped ($(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s)"
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + k))
}

for t in "${units[@]}"; do
	if [ -n "$test_name" ]; then
		run_suite "$(basename "$t")" "$t" "$test_name"
	else
		run_suite "$(basename "$t")" "$t"
	fi
done
for s in "${scripts[@]}"; do
	run_suite "$(basename "$s" .sh)" bash "$s"
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
