#!/usr/bin/env bash
# Settings a user can mistype are never ignored without a word (the MSBuild booleans: msbuild.sh):
#   - --threshold-ms, --summary and --lines state their range when they refuse a value; their largest values
#     (10^12 ms, 10^6 rows, 10^6 lines a second) are the run-time's largest LOCKTIME_THRESHOLD_MS, LOCKTIME_SUMMARY and LOCKTIME_LINES, so a
#     program woven with them runs without a warning; --output-sink STDOUT is the console;
#   - at run time, on .NET and on Mono: LOCKTIME_DISABLED takes 1/true/yes/on and 0/false/no/off in
#     any case, and anything else gives one "LockTime: warning:" line naming it and keeps timing on;
#     a bad LOCKTIME_THRESHOLD_MS gives one warning and keeps the baked threshold;
#     LOCKTIME_OUTPUT=STDOUT (any case) is the console, never a file named STDOUT; a baked sink or report path
#     that cannot be written is named as the build's LockTimeOutput/LockTimeReport, a variable's as the variable.
source "$(dirname "$0")/../lib.sh"
LT=${LOCKTIME:-$LT_BUILD/san/locktime}

check "ltcheck builds" tools_build || exit 1
check "corpus builds" corpus_build || exit 1

refused() { # OPTION VALUE MESSAGE: locktime weave refuses OPTION VALUE with MESSAGE
	local out
	out=$("$LT" weave "$1" "$2" "$LT_TMP/none.dll" 2>&1) && return 1
	echo "$out"
	grep -qF -- "$3" <<<"$out"
}
check "--threshold-ms past its limit: refused, the message says the range" \
	refused --threshold-ms 2e12 "error LT012: --threshold-ms: '2e12' is not a number of milliseconds from 0 to 1000000000000"
check "--summary past its limit: refused, the message says the range" \
	refused --summary 1000001 "error LT012: --summary: '1000001' is not a number of rows from 0 to 1000000"
check "--lines past its limit: refused, the message says the range" \
	refused --lines 2e6 "error LT012: --lines: '2e6' is not all or a number of lines a second from 0 to 1000000"
check "--lines not a number: refused, the message says what it takes" \
	refused --lines some "error LT012: --lines: 'some' is not all or a number of lines a second from 0 to 1000000"

# Woven copies: the C# corpus program (.NET) and the Mono one; RUN runs one with the environment given.
mkdir -p "$LT_TMP/net" "$LT_TMP/mono"
cp "$LT_CORPUS"/csharp/Release/* "$LT_TMP/net/"
cp "$LT_CORPUS/mono/Release/MonoLocks.exe" "$LT_TMP/mono/"
check "weave the .NET program, --output-sink STDOUT" "$LT" weave -q --output-sink STDOUT "$LT_TMP/net/LockCorpus.dll"
check "weave the Mono program" "$LT" weave -q "$LT_TMP/mono/MonoLocks.exe"
check "the woven .NET program verifies" ltcheck verify "$LT_TMP/net/LockCorpus.dll"
check "the woven .NET program JIT-compiles" ltcheck jit "$LT_TMP/net/LockCorpus.dll"

sink_is_console() {
	(cd "$LT_TMP/net" && LOCKTIME_THRESHOLD_MS=0 dotnet LockCorpus.dll >"$LT_TMP/out" 2>"$LT_TMP/err") || return 1
	grep -q '^LockTime: ' "$LT_TMP/out" && ! grep -q '^LockTime: ' "$LT_TMP/err" && [ ! -e "$LT_TMP/net/STDOUT" ]
}
check "--output-sink STDOUT: reports on stdout, no file STDOUT" sink_is_console

largest_baked() {
	mkdir -p "$LT_TMP/largest" && cp "$LT_CORPUS"/csharp/Release/* "$LT_TMP/largest/" || return 1
	"$LT" weave -q --threshold-ms 1000000000000 --summary 1000000 --lines 1000000 "$LT_TMP/largest/LockCorpus.dll" || return 1
	(cd "$LT_TMP/largest" && dotnet LockCorpus.dll >/dev/null 2>"$LT_TMP/err") || return 1
	! grep 'LockTime: warning' "$LT_TMP/err"
}
check "the largest --threshold-ms, --summary and --lines: the run-time takes them without a warning" largest_baked

# A sink and a report path that cannot be written, baked in (--output-sink, --report: what MSBuild's LockTimeOutput and
# LockTimeReport pass): the warnings name the build's setting, not a variable the user never set; set by the variables,
# the variables.
named() { # SINK-NAMED REPORT-NAMED ABSENT [VAR=VALUE...]: the woven program's warnings, exactly one naming each, none ABSENT
	local sink=$1 report=$2 absent=$3
	shift 3
	(cd "$LT_TMP/baked" && env "$@" timeout 120 dotnet LockCorpus.dll >/dev/null 2>"$LT_TMP/err") || return 1
	grep 'warning' "$LT_TMP/err"
	[ "$(grep -cF "LockTime: warning: $sink cannot be opened (DirectoryNotFoundException" "$LT_TMP/err")" = 1 ] &&
		[ "$(grep -cF "LockTime: warning: $report: cannot write " "$LT_TMP/err")" = 1 ] && ! grep -qE "$absent" "$LT_TMP/err"
}
mkdir -p "$LT_TMP/baked" && cp "$LT_CORPUS"/csharp/Release/* "$LT_TMP/baked/" &&
	"$LT" weave -q --output-sink "$LT_TMP/none/locks.log" --report "$LT_TMP/none/run.json" "$LT_TMP/baked/LockCorpus.dll"
check "a baked sink and report path that cannot be written: the warnings name LockTimeOutput and LockTimeReport" named \
	"LockTimeOutput=\"$LT_TMP/none/locks.log\" (baked in by the build, or by locktime weave --output-sink)" \
	"LockTimeReport=\"$LT_TMP/none/run.json\" (baked in by the build, or by locktime weave --report)" 'LOCKTIME_'
check "the same program with LOCKTIME_OUTPUT and LOCKTIME_REPORT over them: the warnings name the variables" named \
	"LOCKTIME_OUTPUT=\"$LT_TMP/none/env.log\"" "LOCKTIME_REPORT=\"$LT_TMP/none/env.json\"" 'LockTimeOutput|LockTimeReport' \
	LOCKTIME_OUTPUT="$LT_TMP/none/env.log" LOCKTIME_REPORT="$LT_TMP/none/env.json"

# run_with RUNNER FILE VAR=VALUE...: stderr in $LT_TMP/err (reports and warnings go there)
run_with() {
	local runner=$1 file=$2
	shift 2
	(cd "$(dirname "$file")" && env LOCKTIME_OUTPUT=stderr "$@" "$runner" "$file" >/dev/null 2>"$LT_TMP/err")
}
reports() { grep -q '^LockTime: [^ ]* held' "$LT_TMP/err"; }
warnings() { grep -c '^LockTime: warning: ' "$LT_TMP/err"; }

disabled_values() { # RUNNER FILE
	local v
	for v in 1 true TRUE Yes on ON; do
		run_with "$1" "$2" LOCKTIME_THRESHOLD_MS=0 LOCKTIME_DISABLED=$v || return 1
		! reports || { echo "LOCKTIME_DISABLED=$v: still reports"; return 1; }
		[ "$(warnings)" = 0 ] || { echo "LOCKTIME_DISABLED=$v: warned"; return 1; }
	done
	for v in 0 false FALSE No off "" ; do
		run_with "$1" "$2" LOCKTIME_THRESHOLD_MS=0 LOCKTIME_DISABLED=$v || return 1
		reports || { echo "LOCKTIME_DISABLED=$v: no report"; return 1; }
		[ "$(warnings)" = 0 ] || { echo "LOCKTIME_DISABLED=$v: warned"; return 1; }
	done
}
bad_disabled() { # RUNNER FILE
	run_with "$1" "$2" LOCKTIME_THRESHOLD_MS=0 LOCKTIME_DISABLED=maybe || return 1
	grep '^LockTime: warning' "$LT_TMP/err"
	[ "$(warnings)" = 1 ] && grep -q '^LockTime: warning: LOCKTIME_DISABLED="maybe" is not 1/true/yes/on or 0/false/no/off; using 0 (timing on)$' "$LT_TMP/err" && reports
}
bad_threshold() { # RUNNER FILE
	local v
	for v in abc -5 1e13; do
		run_with "$1" "$2" LOCKTIME_THRESHOLD_MS=$v || return 1
		[ "$(warnings)" = 1 ] && grep -q "^LockTime: warning: LOCKTIME_THRESHOLD_MS=\"$v\" is not a number from 0 to 1000000000000; using 1\$" "$LT_TMP/err" ||
			{ cat "$LT_TMP/err" | head -n 3; return 1; }
	done
}
output_any_case() { # RUNNER FILE
	local v
	for v in STDOUT Stdout; do
		(cd "$(dirname "$2")" && LOCKTIME_THRESHOLD_MS=0 LOCKTIME_OUTPUT=$v "$1" "$2" >"$LT_TMP/out" 2>/dev/null) || return 1
		grep -q '^LockTime: ' "$LT_TMP/out" && [ ! -e "$(dirname "$2")/$v" ] || { echo "LOCKTIME_OUTPUT=$v"; return 1; }
	done
}
for pair in "dotnet:$LT_TMP/net/LockCorpus.dll" "mono:$LT_TMP/mono/MonoLocks.exe"; do
	runner=${pair%%:*} file=${pair#*:}
	check "$runner: LOCKTIME_DISABLED takes 1/true/yes/on and 0/false/no/off in any case, no warning" disabled_values "$runner" "$file"
	check "$runner: LOCKTIME_DISABLED=maybe: one warning naming it, timing stays on" bad_disabled "$runner" "$file"
	check "$runner: a bad LOCKTIME_THRESHOLD_MS: one warning naming it and the threshold kept" bad_threshold "$runner" "$file"
	check "$runner: LOCKTIME_OUTPUT=STDOUT/Stdout: the console, no file" output_any_case "$runner" "$file"
done
done_testing
