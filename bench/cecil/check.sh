#!/usr/bin/env bash
# Checks that CecilWeaver (the Mono.Cecil reference weaver of the weave-speed benchmark) does the
# same job as `locktime weave`, so that timing the two side by side compares like with like:
#   - the demo app (tests/demo/SlowLock) woven by it runs, prints what it printed before, and reports;
#   - Mono's mscorlib.dll and System.dll: as many sites as `locktime list` counts of the kinds it times
#     (Monitor, Lock, synchronized methods; like locktime, none in the lock types' own methods), output verifies;
#   - with Mono installed and the corpus built: the woven Mono corpus program runs on the woven
#     mscorlib and System (mono -O=-aot, as tests/integration/weave.sh does for locktime).
# Not part of `make test` (benchmarks are not). Prints plan-free TAP lines; exits 1 on a failure.
set -uo pipefail
source "$(dirname "$0")/../../tests/lib.sh"
cd "$LT_ROOT"

# (not "out": tests/lib.sh check() has a local of that name, which the functions it runs would see)
dest=build/bench/cecil-check
cw=build/bench/cecil/CecilWeaver.dll
fail=0

# Tools: the weaver (quick when up to date), locktime for the reference counts, ltcheck.
check "CecilWeaver builds" bash bench/cecil/build.sh || exit 1
[ -x build/locktime ] || check "locktime builds" make -s build/locktime || exit 1
check "ltcheck builds" tools_build || exit 1
rm -rf "$dest"
mkdir -p "$dest"

# timed_by_cecil IN: the sites of `locktime list IN` of the kinds CecilWeaver times (Monitor, Lock and
# synchronized methods; locktime also times SemaphoreSlim, SpinLock, Mutex, WaitHandle and the reader-writer locks).
timed_by_cecil() {
	build/locktime list "$1" | grep -cE ' (Monitor\.(Enter|TryEnter)|Lock\.[A-Za-z]+|Synchronized)( |$)'
}

# sites LINE: the N of "IN: N sites woven (...)" from CecilWeaver's first output line.
sites() {
	sed -n 's/^.*: \([0-9][0-9]*\) sites woven.*$/\1/p' <<<"$1" | head -n 1
}

# ---- the demo app: builds, weaves, runs with the same stdout, and reports on stderr ----
demo=build/bench/slowlock
demo_build() { # built from a copy under build/: no obj/ written into the source tree
	rm -rf build/bench/slowlock-src && mkdir -p build/bench/slowlock-src &&
		cp tests/demo/SlowLock/SlowLock.csproj tests/demo/SlowLock/*.cs build/bench/slowlock-src/ &&
		dotnet build build/bench/slowlock-src/SlowLock.csproj -c Debug -o "$demo" -nologo -v q \
			-p:UseSharedCompilation=false
}
demo_weave() {
	mkdir -p "$dest/slowlock" && cp -r "$demo/." "$dest/slowlock/" &&
		dotnet "$cw" "$demo/SlowLock.dll" "$dest/slowlock/SlowLock.dll"
}
demo_runs() {
	dotnet "$demo/SlowLock.dll" >"$LT_TMP/expected" 2>/dev/null &&
		dotnet "$dest/slowlock/SlowLock.dll" >"$LT_TMP/out" 2>"$LT_TMP/err" &&
		diff "$LT_TMP/expected" "$LT_TMP/out" && grep -q '^LockTime(cecil): Shop.Inventory::Reserve' "$LT_TMP/err"
}
if check "SlowLock builds" demo_build && check "SlowLock woven by CecilWeaver" demo_weave; then
	check "SlowLock: same sites as locktime list" test "$(sites "$(dotnet "$cw" "$demo/SlowLock.dll" "$LT_TMP/s.dll")")" \
		= "$(timed_by_cecil "$demo/SlowLock.dll")" || fail=1
	check "SlowLock: woven verifies" ltcheck verify "$dest/slowlock/SlowLock.dll" || fail=1
	check "SlowLock: woven JIT-compiles" ltcheck jit "$dest/slowlock/SlowLock.dll" || fail=1
	check "SlowLock: woven runs, same stdout, reports" demo_runs || fail=1
else
	fail=1
fi

# ---- Mono's class libraries: site counts equal locktime's, output verifies ----
mkdir -p "$dest/mono"
for name in mscorlib System; do
	in=/usr/lib/mono/4.5/$name.dll
	if [ ! -f "$in" ]; then
		echo "# skipped $name.dll: $in not installed"
		continue
	fi
	if check "$name.dll woven by CecilWeaver" dotnet "$cw" "$in" "$dest/mono/$name.dll"; then
		got=$(sites "$(dotnet "$cw" "$in" "$LT_TMP/$name.dll")")
		want=$(timed_by_cecil "$in")
		check "$name.dll: $got sites, locktime list $want" test "$got" = "$want" || fail=1
		check "$name.dll: woven verifies" ltcheck verify "$dest/mono/$name.dll" || fail=1
	else
		fail=1
	fi
done

# ---- the Mono corpus program, woven, on the woven mscorlib and System ----
program=$LT_CORPUS/mono/Release/MonoLocks.exe
mono_runs() {
	mono "$program" >"$LT_TMP/expected" 2>/dev/null &&
		LOCKTIME_THRESHOLD_MS=0 MONO_PATH=$dest/mono mono -O=-aot "$dest/mono/MonoLocks.exe" \
			>"$LT_TMP/out" 2>"$LT_TMP/err" &&
		diff "$LT_TMP/expected" "$LT_TMP/out" &&
		grep -q '^LockTime(cecil): System\.' "$LT_TMP/err" && grep -q '^LockTime(cecil): MonoLocks' "$LT_TMP/err"
}
if command -v mono >/dev/null && [ -f "$program" ] && [ -f "$dest/mono/mscorlib.dll" ] && [ -f "$dest/mono/System.dll" ]; then
	if check "MonoLocks.exe woven by CecilWeaver" dotnet "$cw" "$program" "$dest/mono/MonoLocks.exe"; then
		check "mono: woven program on woven mscorlib + System, same stdout, reports from both" mono_runs || fail=1
	else
		fail=1
	fi
else
	echo "# skipped the Mono run: needs mono and build/corpus/mono (tests/corpus/build.sh)"
fi
exit "$fail"
