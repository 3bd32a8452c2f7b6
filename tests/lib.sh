#!/usr/bin/env bash
# Shared helpers for the end-to-end tests (source it): TAP lines, checks, and access to ltcheck and the corpus.
# Lines are TAP, exactly "ok - NAME" and "not ok - NAME" (tests/run.sh counts those), with details as
# "# " comment lines after a failure, and the plan last: every suite ends with done_testing, which
# prints "1..N" for the N lines it printed, so that a suite that stops before its end (an exit, a
# crash, a hang cut by a timeout) has no plan and fails (tests/run.sh).  Every TAP line goes through
# ok, not_ok or tap_relay, which count it.
#
#   source "$(dirname "$0")/../lib.sh"
#   check "corpus builds" corpus_build
#   check "verify input" ltcheck verify "$LT_CORPUS/csharp/Release/LockCorpus.dll"
#
# Sourced, it sets: LT_ROOT (the repository), LT_BUILD ($LT_ROOT/build), LT_CORPUS (build/corpus),
# LT_LTCHECK (the ltcheck DLL), LT_TMP (a scratch folder removed on exit).
LT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LT_BUILD=$LT_ROOT/build
LT_CORPUS=$LT_BUILD/corpus
LT_LTCHECK=$LT_BUILD/tools/ltcheck/ltcheck.dll
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
# Woven programs print no summary at exit unless a test asks for one (env -u LOCKTIME_SUMMARY):
# most tests read the lines per slow lock alone.
export LOCKTIME_SUMMARY=0
# ... and every slow-lock line, not 10 a site and then 2 a second (env -u LOCKTIME_LINES: linerate.sh): tests count
# the lines of their slow locks.
export LOCKTIME_LINES=all

# How many lines of a failing command's output check shows.
LT_TAIL_LINES=${LT_TAIL_LINES:-15}
# The longest one dotnet build, test or run of a suite may take (s): past it, the check fails.
LT_DOTNET_TIMEOUT=${LT_DOTNET_TIMEOUT:-600}

# ok NAME: one passing TAP line.  The count is a file (one byte a line): subshells and background
# checks count too.
ok() {
	echo "ok - $1"
	printf . >>"$LT_TMP/tap-count"
}

# skip NAME WHY: a check that cannot run here: "ok - NAME # SKIP WHY", counted as skipped by
# tests/run.sh, which fails any skip that tests/skips.allowed does not list.
skip() {
	ok "$1 # SKIP $2"
}

# tap_relay: copies standard input to standard output, counting its TAP lines (the lines of a helper
# program that prints its own, such as report_expect.py or fuzz/run.sh).
tap_relay() {
	local line
	while IFS= read -r line; do
		printf '%s\n' "$line"
		if [[ $line =~ ^(not\ )?ok\  ]]; then printf . >>"$LT_TMP/tap-count"; fi
	done
}

# done_testing: the plan, "1..N" for the N TAP lines this suite printed; the suite's last line.
done_testing() {
	echo "1..$(cat "$LT_TMP/tap-count" 2>/dev/null | wc -c)"
}

# not_ok NAME [DETAIL]: one failing TAP line, then DETAIL (any number of lines) as "# " comments.
not_ok() {
	echo "not ok - $1"
	printf . >>"$LT_TMP/tap-count"
	if [ -n "${2:-}" ]; then
		printf '%s\n' "$2" | sed 's/^/# /'
	fi
}

# check NAME CMD...: runs CMD; ok when it exits 0, else not ok with the last lines of its output.
# Returns CMD's exit status, so a test can stop when a step that others depend on fails.
check() {
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" -eq 0 ]; then
		ok "$name"
	else
		not_ok "$name" "exit status $rc: $*"$'\n'"$(printf '%s\n' "$out" | tail -n "$LT_TAIL_LINES")"
	fi
	return "$rc"
}

# check_same NAME EXPECTED_FILE ACTUAL_FILE: ok when the files are equal, else not ok with a diff.
check_same() {
	if cmp -s "$2" "$3"; then
		ok "$1"
	else
		not_ok "$1" "$(diff -u "$2" "$3" | head -n 40)"
		return 1
	fi
}

# terminate_after OUT ERR WATCH SETTLE PATTERN CMD...: runs CMD (stdout to OUT, stderr to ERR), sends it
# SIGTERM SETTLE seconds after WATCH (OUT or ERR) has a line matching the extended regular expression
# PATTERN (30 s at most; LT_TERMS=N: N of them at once; LT_THEN=PATTERN2: one more once WATCH has a line matching
# PATTERN2; LT_SIGNAL=NAME: that signal instead of SIGTERM), and returns its exit status; a watchdog kills it after
# LT_WATCHDOG_S seconds (120 unless set; then the status is 137).
terminate_after() {
	local out=$1 err=$2 watch=$3 settle=$4 pattern=$5 pid watchdog rc i
	shift 5
	"$@" >"$out" 2>"$err" &
	pid=$!
	(sleep "${LT_WATCHDOG_S:-120}"; kill -KILL "$pid") >/dev/null 2>&1 &  # not the caller's stdout: a $(...) around this would wait for the sleep
	watchdog=$!
	for i in $(seq 1 300); do grep -qE "$pattern" "$watch" 2>/dev/null && break; sleep 0.1; done
	sleep "$settle"
	for i in $(seq 1 "${LT_TERMS:-1}"); do kill -"${LT_SIGNAL:-TERM}" "$pid"; done
	if [ -n "${LT_THEN:-}" ]; then
		for i in $(seq 1 300); do grep -qE "$LT_THEN" "$watch" 2>/dev/null && break; sleep 0.1; done
		kill -TERM "$pid"
	fi
	wait "$pid"
	rc=$?
	kill "$watchdog" 2>/dev/null
	return "$rc"
}

# terminated OUT ERR READY CMD...: terminate_after once OUT has the line READY (a word).
terminated() {
	local out=$1 err=$2 ready=$3
	shift 3
	terminate_after "$out" "$err" "$out" 0 "^$ready\$" "$@"
}

# deadlocked OUT ERR CMD...: runs CMD, a woven program that deadlocks, until its run-time prints the
# deadlock ("LockTime: deadlock: ...") and its SIGTERM handler is there (registered as the run-time starts), then sends
# it SIGTERM (its summary and report are written then) and returns its exit status (143).
deadlocked() {
	local out=$1 err=$2
	shift 2
	terminate_after "$out" "$err" "$err" 1.5 '^LockTime: deadlock: ' "$@"
}

# tools_build: builds ltcheck unless it is up to date (tests/tools/build.sh decides).
tools_build() {
	bash "$LT_ROOT/tests/tools/build.sh"
}

# dotnet_tool NAME VERSION DIR: installs the dotnet tool NAME at VERSION into DIR (--tool-path, from the
# configured NuGet sources) unless DIR/NAME is that version already.
dotnet_tool() {
	local name=$1 version=$2 dir=$3
	[ -x "$dir/$name" ] && "$dir/$name" --version 2>/dev/null | grep -q "^${version%.*}" && return 0
	rm -rf "$dir"
	dotnet tool install "$name" --version "$version" --tool-path "$dir" >"$LT_TMP/$name-install.log" 2>&1 ||
		{ cat "$LT_TMP/$name-install.log"; return 1; }
}

# test_program DIR PROJECT: copies tests/DIR to $LT_TMP/src and builds PROJECT (a .csproj there) in Debug into
# $LT_TMP/out; the build's last lines when it fails.
test_program() {
	cp -r "$LT_ROOT/tests/$1" "$LT_TMP/src" &&
		timeout -k 10 "$LT_DOTNET_TIMEOUT" dotnet build "$LT_TMP/src/$2" -c Debug -nologo -v q \
			-p:UseSharedCompilation=false -o "$LT_TMP/out" >"$LT_TMP/build.log" 2>&1 || { tail -20 "$LT_TMP/build.log"; return 1; }
}

# report_page PAGE SHOT COLUMN FILTER OUT: drives PAGE in headless Chromium as a person would
# (tests/integration/report_page.js: its screenshot SHOT, the sort by COLUMN, the filter FILTER) into OUT (JSON,
# its stderr OUT.err); one TAP line.
report_page() {
	if timeout 120 node "$LT_ROOT/tests/integration/report_page.js" "$1" "$2" "$3" "$4" >"$5" 2>"$5.err"; then
		ok "html: Chromium drives the page"
	else
		not_ok "html: Chromium drives the page" "$(cat "$5.err")"
	fi
}

# corpus_build: builds the corpus unless it is up to date (tests/corpus/build.sh decides).
corpus_build() {
	bash "$LT_ROOT/tests/corpus/build.sh"
}

# ltcheck ARGS...: runs ltcheck (verify, jit, dump, locks), building the tools and the corpus first
# when missing. Prints what ltcheck prints and returns its exit status.
ltcheck() {
	if [ ! -f "$LT_LTCHECK" ]; then
		tools_build || return 1
	fi
	if [ ! -f "$LT_CORPUS/csharp/.built" ]; then
		corpus_build || return 1
	fi
	dotnet "$LT_LTCHECK" "$@"
}

# `locktime list` output (stdin) as TAB-separated fields: method, IL offset ("-" when woven), kind,
# location ("" when none), "(woven)" or "".  A method name may hold spaces ("Main (lambda at
# Program.cs:9)", "Run > Local"): each line is taken apart from its right end.
list_fields() {
	sed -E 's/^(.*) (IL_[0-9a-f]+|-) ([^ (][^ ]*)( [^ (][^ ]*)?( \(woven\))?$/\1\t\2\t\3\t\4\t\5/; s/\t /\t/g'
}

# corpus_programs: the corpus programs, one "NAME RUNNER PATH" line each, for example
# "csharp/Release dotnet build/corpus/csharp/Release/LockCorpus.dll" or "mono/Debug mono ....exe"
# (net48/: the C# corpus built for .NET Framework 4.8 by the .NET SDK, run under Mono).
corpus_programs() {
	local config
	for config in Debug Release; do
		echo "csharp/$config dotnet $LT_CORPUS/csharp/$config/LockCorpus.dll"
		echo "vb/$config dotnet $LT_CORPUS/vb/$config/LockCorpusVb.dll"
		echo "fsharp/$config dotnet $LT_CORPUS/fsharp/$config/LockCorpusFs.dll"
		echo "mono/$config mono $LT_CORPUS/mono/$config/MonoLocks.exe"
		echo "net48/$config mono $LT_CORPUS/net48/$config/LockCorpus48.exe"
	done
}

# corpus_thirdparty: the third-party assemblies copied into the corpus, one path a line.
corpus_thirdparty() {
	find "$LT_CORPUS/thirdparty" -maxdepth 1 -name '*.dll' | sort
}

LT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/lt-test.XXXXXX")
trap 'rm -rf "$LT_TMP"' EXIT
