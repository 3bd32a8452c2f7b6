#!/usr/bin/env bash
# The NuGet package and its MSBuild targets end to end (make package -> build/LockTime.<version>.nupkg):
#   - the package: its files, developmentDependency, and a locktime that needs no shared library but
#     glibc's (none at all: it is static) and weaves alone in an empty root;
#   - the projects of tests/msbuild/, copied under a path with a space and restored from a local folder
#     feed (a nuget.config that adds it to the configured sources) into a packages folder whose path has
#     a space and from which LockTime is removed first, so that every run extracts the fresh package:
#     1. net10.0 console: reports; the properties; LockTimeEnabled=false gives the very bytes of a build
#        without the package; reference assemblies left alone;
#     2. incremental: a no-change build runs no weave; touching a source weaves once; clean removes the stamp;
#     3. net48;net10.0: each woven against its own framework, net48 run under Mono;
#     4. library + app: both woven, and so are what dotnet pack and dotnet publish ship; over a library whose
#        output is not woven, the app's build warns LT109 naming it and its sites;
#     5. VB and F#;
#     6. a classic project importing the package as packages.config projects do, built by Mono's xbuild;
#        signed with SignAssembly: sn -vf verifies the woven output (and so for the console app);
#     settings: booleans other than true/false and numbers out of form or range (LockTimeSummary,
#     LockTimeThresholdMs) are error LT104 naming the property, the value and the range,
#     LockTimeSummary/LockTimeReport/LockTimeLockOrder reach the weave and the program, LockTimeInclude/LockTimeExclude
#     (one that leaves no method: warning LT022), and
#     dotnet pack of a woven library warns LT105 unless LockTimePack=true;
#     7. a corrupt intermediate assembly fails the build with error LT0NN, and so does the next build;
#        no binary, a binary that is not executable, an unsupported host: one error each.
# Runs share the packages folder and build/LockTime.<version>.nupkg with testgate.sh: one at a time
# (msbuild_lib.sh).
source "$(dirname "$0")/../msbuild_lib.sh" "$@"

# --- The package ------------------------------------------------------------------------------------------

package_files() {
	unzip -Z1 "$NUPKG" | grep -vE '^(_rels/|package/|\[Content_Types\]\.xml$|LockTime\.nuspec$)' | LC_ALL=C sort >"$LT_TMP/files"
	printf '%s\n' LICENSE README.md THIRD-PARTY-NOTICES.txt build/LockTime.Gate.Mtp.cs build/LockTime.Gate.targets build/LockTime.Host.targets build/LockTime.Host.xbuild.targets \
		build/LockTime.Numbers.targets build/LockTime.Packages.targets build/LockTime.References.targets build/LockTime.props build/LockTime.targets tools/linux-arm64/locktime \
		tools/linux-x64/locktime tools/win-x64/locktime.exe | diff - "$LT_TMP/files"
}
notices() { # THIRD-PARTY-NOTICES.txt names every library linked, and holds the licence texts it points to
	unzip -p "$NUPKG" THIRD-PARTY-NOTICES.txt >"$LT_TMP/notices" || return 1
	for name in libzip zlib Mini-XML 'Mbed TLS' Jansson protobuf-c 'Petri Lehtinen' 'GNU C Library' mingw-w64 'Apache License' \
		'GNU LESSER GENERAL PUBLIC LICENSE' 'ZPL-2.1' 'Dieter Baron' 'Jean-loup Gailly'; do
		grep -qF "$name" "$LT_TMP/notices" || { echo "no $name"; return 1; }
	done
}
nuspec_has() { # PATTERN
	unzip -p "$NUPKG" LockTime.nuspec | grep -qF "$1"
}
check "package: build/ props and targets, tools/{linux-x64,linux-arm64,win-x64}, LICENSE, notices, README" package_files
check "package: MIT licence expression" nuspec_has '<license type="expression">MIT</license>'
check "package: LICENSE is the repository's" cmp <(unzip -p "$NUPKG" LICENSE) "$LT_ROOT/LICENSE"
check "package: THIRD-PARTY-NOTICES.txt covers libzip, zlib, Mini-XML, Mbed TLS, Jansson, protobuf-c, the C runtimes" notices
check "package: version $VERSION, cli.h's with -dev.<time>" nuspec_has "<version>$(sed -n 's/^#define LOCKTIME_VERSION "\(.*\)"$/\1/p' "$LT_ROOT/weaver/cli/cli.h")-dev."
check "package: developmentDependency" nuspec_has "<developmentDependency>true</developmentDependency>"
check "package: its locktime is the static build" cmp <(unzip -p "$NUPKG" tools/linux-x64/locktime) "$STATIC"

# An x86-64 ELF that needs no shared library but glibc's, and no glibc symbol version above 2.28.
glibc_floor() { # FILE
	local needed newest
	readelf -hW "$1" | grep -qE 'Machine:[[:space:]]+Advanced Micro Devices X86-64' || { echo "not x86-64"; return 1; }
	needed=$(readelf -dW "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
	newest=$(objdump -T "$1" 2>/dev/null | grep -oE 'GLIBC_[0-9]+(\.[0-9]+)+' | sed 's/^GLIBC_//' | sort -uV | tail -n 1)
	echo "shared libraries: ${needed:-none}; newest glibc symbol version: ${newest:-none}"
	[ -z "$(printf '%s\n' $needed | grep -vxE 'libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|ld-linux-x86-64\.so\.2')" ] &&
		{ [ -z "$newest" ] || [ "$(printf '%s\n' "$newest" 2.28 | sort -V | tail -n 1)" = 2.28 ]; }
}
check "package: locktime needs no library but glibc, no symbol newer than GLIBC_2.28" glibc_floor "$STATIC"

# The binary alone in an empty root (no libzip, Mini-XML, zlib, Mbed TLS, not even a C library) weaves.
# Whether chroot works here is asked of a known-good static program, never of the binary under test
# (a broken static locktime must fail this check, not skip it).
mkdir -p "$LT_TMP/root"
cp "$STATIC" "$LT_TMP/root/locktime"
cp /usr/lib/mono/4.5/System.Core.dll "$LT_TMP/root/in.dll"
printf 'int main(void) { return 0; }\n' >"$LT_TMP/probe.c"
if cc -static -o "$LT_TMP/root/probe" "$LT_TMP/probe.c" && chroot "$LT_TMP/root" /probe; then
	check "package: locktime weaves in an empty root" chroot "$LT_TMP/root" /locktime weave -q /in.dll
else
	skip "package: locktime weaves in an empty root" "chroot not permitted here"
fi

# --- The projects -----------------------------------------------------------------------------------------

work="$LT_TMP/my projects"
feed="$LT_TMP/local feed"
sn -q -k "$LT_TMP/key.snk" >/dev/null
cp -r "$LT_ROOT/tests/msbuild/." "$work/"
msbuild_feed "$work" "$feed"

woven_times() { # LOG N: the weaver wove exactly N assemblies in the build logged in LOG (-v:n)
	local n
	n=$(grep -cE ': woven, [0-9]+ lock sites? timed' "$1")
	echo "woven $n times"
	[ "$n" = "$2" ]
}
is_woven() { # FILE: it has LockTime's stub type
	dotnet "$LT_LTCHECK" dump "$1" | grep -q '^type <LockTime> '
}
not_woven() { # FILE
	[ -f "$1" ] && ! is_woven "$1"
}
run_app() { # RUNNER FILE: runs it; stdout in $out, stderr in $err (each group of tests has its own)
	"$1" "$2" >"$out" 2>"$err"
}
reports() { # FILE METHOD: FILE has a report of METHOD's lock held >= 25 ms (the programs hold 30 ms)
	awk -v m="$2" '$1 == "LockTime:" && (m == "" || $2 == m) && $3 == "held" && $4 + 0 >= 25 { found = 1 } END { exit !found }' "$1" ||
		{ cat "$1"; return 1; }
}
no_reports() { # FILE
	! grep -q '^LockTime:' "$1" || { cat "$1"; return 1; }
}
not() { # CMD...: CMD fails
	! "$@"
}

# 1, 2 and 7: a net10.0 console app, built again and again (ConsoleApp).
c=$work/ConsoleApp
cobj=$c/obj/Debug/net10.0
cbin=$c/bin/Debug/net10.0
bundled=$NUGET_PACKAGES/locktime/$VERSION/tools/linux-x64/locktime

console_first_build() {
	check "console: restore from the local feed (packages folder path with a space)" dn "$LT_TMP/restore.log" restore "$c"
	chmod a-x "$bundled" # as a NuGet extraction may leave it
	check "console: build" dn "$LT_TMP/c1.log" build "$c" -v:n
	check "console: the first build made the package's locktime executable" test -x "$bundled"
	check "console: woven once" woven_times "$LT_TMP/c1.log" 1
	run_app dotnet "$cbin/ConsoleApp.dll"
	check "console: runs as before" grep -qx 'done 42' "$out"
	check "console: the slow lock reports on stderr" reports "$err" Program::Slow
	check "console: the report names the source line" grep -qE '^LockTime: Program::Slow .* at Program\.cs:[0-9]+$' "$err"
	check "console: obj/ assembly woven" is_woven "$cobj/ConsoleApp.dll"
	check "console: reference assembly (ref/) not woven" not_woven "$cobj/ref/ConsoleApp.dll"
	check "console: reference assembly (refint/) not woven" not_woven "$cobj/refint/ConsoleApp.dll"
}

console_properties() {
	check "console: LockTimeThresholdMs=1000 LockTimeOutput=stdout LockTimeVerbose=true" \
		dn "$LT_TMP/c2.log" build "$c" -v:m -p:LockTimeThresholdMs=1000 -p:LockTimeOutput=stdout -p:LockTimeVerbose=true
	check "console: LockTimeVerbose shows the weave at minimal verbosity" woven_times "$LT_TMP/c2.log" 1
	run_app dotnet "$cbin/ConsoleApp.dll"
	check "console: LockTimeThresholdMs=1000: the 30 ms lock does not report" no_reports "$out"
	check "console: LockTimeThresholdMs=1000: nothing on stderr either" no_reports "$err"
	LOCKTIME_THRESHOLD_MS=0 run_app dotnet "$cbin/ConsoleApp.dll"
	check "console: LockTimeOutput=stdout: reports on stdout (LOCKTIME_THRESHOLD_MS=0 at run time)" reports "$out" Program::Slow
	check "console: LockTimeOutput=stdout: the fast lock too, at threshold 0" grep -q '^LockTime: Program::Fast held' "$out"
	check "console: LockTimeOutput=stdout: nothing on stderr" no_reports "$err"

	check "console: LockTimeEnabled=false" dn "$LT_TMP/c3.log" build "$c" -v:n -p:LockTimeEnabled=false
	check "console: LockTimeEnabled=false: no weave" woven_times "$LT_TMP/c3.log" 0
	run_app dotnet "$cbin/ConsoleApp.dll"
	check "console: LockTimeEnabled=false: no report" no_reports "$err"
	cp "$cbin/ConsoleApp.dll" "$LT_TMP/disabled.dll"
	check "console: build without the package" dn "$LT_TMP/c4.log" build "$c" -p:NoLockTime=true
	check "console: LockTimeEnabled=false = the bytes of a build without the package" cmp "$cbin/ConsoleApp.dll" "$LT_TMP/disabled.dll"
}

# Settings: the booleans refuse what is not true/false (LT104); include/exclude patterns; SignAssembly
# with a key file signs the woven assembly again (sn -vf verifies it). Ends on a signed build, so that
# the next build (no key) weaves again.
sn_verifies() { # FILE
	sn -vf "$1" 2>&1 | tail -n 1 | tee /dev/stderr | grep -q 'is strongnamed'
}
console_settings() {
	check "settings: LockTimeEnabled=yes: one error LT104 naming it" \
		one_error "$LT_TMP/s1.log" "error LT104: LockTime: LockTimeEnabled is 'yes': it takes true or false" build "$c" -p:LockTimeEnabled=yes
	check "settings: LockTimeVerbose=1: one error LT104" \
		one_error "$LT_TMP/s2.log" "error LT104: LockTime: LockTimeVerbose is '1'" build "$c" -p:LockTimeVerbose=1
	check "settings: LockTimeLockOrder=maybe: one error LT104 naming it" \
		one_error "$LT_TMP/s2b.log" "error LT104: LockTime: LockTimeLockOrder is 'maybe': it takes true or false" build "$c" -p:LockTimeLockOrder=maybe
	check "settings: LockTimeLines=some: one error LT104 with what it takes" \
		one_error "$LT_TMP/s2e.log" "error LT104: LockTime: LockTimeLines is 'some': it takes all or a number of lines a second from 0 to 1000000" build "$c" -p:LockTimeLines=some
	check "settings: LockTimeSummary=ten: one error LT104 naming it" \
		one_error "$LT_TMP/s2c.log" "error LT104: LockTime: LockTimeSummary is 'ten': it takes a whole number" build "$c" -p:LockTimeSummary=ten
	check "settings: LockTimeSummary=2000000: one error LT104 with the range" \
		one_error "$LT_TMP/s2d.log" "error LT104: LockTime: LockTimeSummary is '2000000': it takes a whole number of rows from 0 to 1000000" build "$c" -p:LockTimeSummary=2000000
	check "settings: LockTimeThresholdMs=abc: one error LT104 with the range" \
		one_error "$LT_TMP/s2e.log" "error LT104: LockTime: LockTimeThresholdMs is 'abc': it takes a number of milliseconds from 0 to 1000000000000" build "$c" -p:LockTimeThresholdMs=abc
	check "settings: LockTimeThresholdMs=-5: one error LT104, no error of locktime's" \
		one_error "$LT_TMP/s2f.log" "error LT104: LockTime: LockTimeThresholdMs is '-5'" build "$c" -p:LockTimeThresholdMs=-5
	check "settings: LockTimeEnabled=FALSE (any case)" dn "$LT_TMP/s3.log" build "$c" -v:n -p:LockTimeEnabled=FALSE
	check "settings: LockTimeEnabled=FALSE: no weave" woven_times "$LT_TMP/s3.log" 0
	check "settings: LockTimeExclude=Program::Slow, LockTimeInclude=Program::*%3BNo::Such" \
		dn "$LT_TMP/s4.log" build "$c" -v:n -p:LockTimeExclude=Program::Slow "-p:LockTimeInclude=Program::*%3BNo::Such"
	check "settings: include/exclude: woven once" woven_times "$LT_TMP/s4.log" 1
	LOCKTIME_THRESHOLD_MS=0 run_app dotnet "$cbin/ConsoleApp.dll"
	check "settings: include/exclude: Program::Fast reports" grep -q '^LockTime: Program::Fast held' "$err"
	check "settings: include/exclude: Program::Slow is not woven" not grep -q '^LockTime: Program::Slow' "$err"
	check "settings: LockTimeInclude=Nothing.* (no method): builds" \
		dn "$LT_TMP/s4b.log" build "$c" -v:n "-p:LockTimeInclude=Nothing.*"
	check "settings: LockTimeInclude=Nothing.*: warning LT022 with the sites found and the pattern, not woven" \
		grep -qE "warning LT022: [0-9]+ lock sites? found, all filtered out by --include 'Nothing\.\*' or LockTimeIgnoreAttribute" "$LT_TMP/s4b.log"
	# KeyContainerName: the SDK's ResolveKeySource hands the compiler the container it resolves (on Windows
	# a .pfx's), on this host none - the compiler signs nothing, and LockTime gets no container either.
	check "settings: SignAssembly with KeyContainerName (resolved to none on Linux)" \
		dn "$LT_TMP/s6.log" build "$c" -v:n -p:SignAssembly=true -p:KeyContainerName=LockTimeAbsent
	check "settings: KeyContainerName: woven once, no LT018, no LT021, no --key-container" bash -c "grep -cE ': woven, [0-9]+ lock sites? timed' '$LT_TMP/s6.log' | grep -qx 1 &&
		! grep -qE 'LT018|LT021' '$LT_TMP/s6.log' && ! grep -qx -- --key-container '$cobj/ConsoleApp.dll.locktime.args'"
	check "settings: SignAssembly with AssemblyOriginatorKeyFile" \
		dn "$LT_TMP/s5.log" build "$c" -v:n -p:SignAssembly=true "-p:AssemblyOriginatorKeyFile=$LT_TMP/key.snk"
	check "settings: signed: woven once, no LT018" bash -c "grep -cE ': woven, [0-9]+ lock sites? timed' '$LT_TMP/s5.log' | grep -qx 1 && ! grep -q LT018 '$LT_TMP/s5.log'"
	check "settings: signed: sn -vf verifies the woven assembly in bin/" sn_verifies "$cbin/ConsoleApp.dll"
	check "settings: signed: and it is woven" is_woven "$cbin/ConsoleApp.dll"
}

# The run-time's options baked in by the weave: LockTimeSummary, LockTimeReport, LockTimeLockOrder, LockTimeLines.
args_has() { # LINE NEXT: the weave's response file has the line LINE followed by NEXT
	grep -A1 -xF -- "$1" "$cobj/ConsoleApp.dll.locktime.args" | tail -n 1 | grep -qxF -- "$2"
}
shows() { # PATTERN FILE [OTHER...]: FILE has a line matching PATTERN (grep -E); else FILE and the OTHER files are shown
	grep -qE -- "$1" "$2" || { shift; tail -n +1 "$@"; return 1; }
}
run_baked() { # RUNNER FILE: as run_app, with no LOCKTIME_SUMMARY (lib.sh sets it to 0): the baked summary shows
	env -u LOCKTIME_SUMMARY "$1" "$2" >"$out" 2>"$err"
}
console_runtime_options() {
	check "settings: LockTimeSummary=0 LockTimeReport=PATH/run.{pid}.json LockTimeLockOrder=false LockTimeLines=0.5" \
		dn "$LT_TMP/r1.log" build "$c" -v:n -p:LockTimeSummary=0 "-p:LockTimeReport=$LT_TMP/run.{pid}.json" -p:LockTimeLockOrder=false \
		-p:LockTimeLines=0.5
	check "settings: woven once" woven_times "$LT_TMP/r1.log" 1
	check "settings: the weave got --summary 0" args_has --summary 0
	check "settings: the weave got --lock-order off" args_has --lock-order off
	check "settings: the weave got --lines 0.5" args_has --lines 0.5
	rm -f "$LT_TMP"/run.*.json
	run_baked dotnet "$cbin/ConsoleApp.dll"
	check "settings: LockTimeSummary=0: no summary at exit" not grep -q '^LockTime: summary:' "$err"
	check "settings: LockTimeReport: the report is written, {pid} replaced" bash -c "ls '$LT_TMP'/run.[0-9]*.json"
	check "settings: LockTimeReport: the report has the slow lock" bash -c "grep -q '\"method\": \"Program::Slow\"' '$LT_TMP'/run.[0-9]*.json"
	LOCKTIME_SUMMARY=1 run_app dotnet "$cbin/ConsoleApp.dll"
	check "settings: LOCKTIME_SUMMARY=1 overrides the baked 0" shows '^LockTime: summary:' "$err"
	LOCKTIME_LINES=many run_app dotnet "$cbin/ConsoleApp.dll"
	check "settings: LockTimeLines=0.5 baked in: a bad LOCKTIME_LINES warns, using it" \
		shows '^LockTime: warning: LOCKTIME_LINES="many" is not all or a number of lines a second from 0 to 1000000; using 0\.5$' "$err"
	check "settings: LockTimeSummary=2 LockTimeLockOrder=TRUE" dn "$LT_TMP/r2.log" build "$c" -v:n -p:LockTimeSummary=2 -p:LockTimeLockOrder=TRUE
	check "settings: LockTimeSummary=2: woven once" woven_times "$LT_TMP/r2.log" 1
	check "settings: the weave got --summary 2" args_has --summary 2
	check "settings: the weave got --lock-order on" args_has --lock-order on
	run_baked dotnet "$cbin/ConsoleApp.dll"
	check "settings: LockTimeSummary=2: the summary's top 2 sites at exit" shows '^LockTime: top 2 sites' "$err" "$out"
}

console_incremental() {
	local before
	check "incremental: build with the package again" dn "$LT_TMP/i1.log" build "$c" -v:n
	check "incremental: woven once" woven_times "$LT_TMP/i1.log" 1
	before=$(stat -c %Y.%y "$cobj/ConsoleApp.dll")
	check "incremental: no-change build" dn "$LT_TMP/i2.log" build "$c" -v:n
	check "incremental: no-change build: no weave" woven_times "$LT_TMP/i2.log" 0
	check "incremental: no-change build: obj/ assembly untouched" test "$before" = "$(stat -c %Y.%y "$cobj/ConsoleApp.dll")"
	run_app dotnet "$cbin/ConsoleApp.dll"
	check "incremental: no-change build: still reports" reports "$err" Program::Slow
	touch "$c/Program.cs"
	check "incremental: build after touching a source" dn "$LT_TMP/i3.log" build "$c" -v:n
	check "incremental: touched source: woven exactly once" woven_times "$LT_TMP/i3.log" 1
	run_app dotnet "$cbin/ConsoleApp.dll"
	check "incremental: touched source: reports" reports "$err" Program::Slow
}

# A corrupt intermediate assembly, newer than its sources: nothing compiles, the weave fails, and
# (no stamp) the next build tries again. Then a compile fixes it; clean removes the stamp; and a
# weaver that is missing, not executable or for another host each give one error.
console_errors() {
	printf 'MZ this is no assembly' >"$cobj/ConsoleApp.dll"
	check "error: corrupt obj/ assembly fails the build with error LT0NN" \
		fails "$LT_TMP/e1.log" 'ConsoleApp\.dll : error LT0[0-9][0-9]: ' build "$c"
	check "error: no stamp after the failed weave" test ! -e "$cobj/ConsoleApp.dll.locktime.stamp"
	check "error: the corrupt assembly was not copied to bin/" is_woven "$cbin/ConsoleApp.dll"
	check "error: the next build tries again, and fails again" \
		fails "$LT_TMP/e2.log" 'ConsoleApp\.dll : error LT0[0-9][0-9]: ' build "$c"
	touch "$c/Program.cs"
	check "error: a compile fixes it" dn "$LT_TMP/e4.log" build "$c" -v:n
	check "error: a compile fixes it: woven once" woven_times "$LT_TMP/e4.log" 1
	check "clean: stamp present" test -f "$cobj/ConsoleApp.dll.locktime.stamp"
	check "clean: dotnet clean" dn "$LT_TMP/e5.log" clean "$c"
	check "clean: dotnet clean removed the stamp" test ! -e "$cobj/ConsoleApp.dll.locktime.stamp"
	check "error: no weaver: one error LT101" one_error "$LT_TMP/e6.log" 'error LT101: ' \
		build "$c" -p:LockTimeExecutable=/nonexistent/locktime
	cp "$STATIC" "$LT_TMP/locktime-noexec"
	chmod a-x "$LT_TMP/locktime-noexec"
	check "error: weaver not executable: one error LT102" one_error "$LT_TMP/e7.log" 'error LT102: ' \
		build "$c" -p:LockTimeExecutable="$LT_TMP/locktime-noexec"
}

# 3. Multi-targeting net48;net10.0.
stopwatch_scopes() { # FILE: the assembly scopes its Stopwatch references name, e.g. "[System] "
	dotnet "$LT_LTCHECK" dump "$1" | grep -oE '\[[^]]+\]System\.Diagnostics\.Stopwatch' | sed 's/System\.Diagnostics\.Stopwatch$//' | sort -u | tr '\n' ' '
}
multi_targeting() {
	local m=$work/Multi
	check "multi: build net48;net10.0" dn "$LT_TMP/m1.log" build "$m" -v:n
	check "multi: two weaves" woven_times "$LT_TMP/m1.log" 2
	check "multi: net48 woven" is_woven "$m/obj/Debug/net48/Multi.exe"
	check "multi: net10.0 woven" is_woven "$m/obj/Debug/net10.0/Multi.dll"
	check "multi: net48 times with .NET Framework's Stopwatch ([System])" test "$(stopwatch_scopes "$m/obj/Debug/net48/Multi.exe")" = "[System] "
	check "multi: net10.0 times with .NET's Stopwatch ([System.Runtime])" test "$(stopwatch_scopes "$m/obj/Debug/net10.0/Multi.dll")" = "[System.Runtime] "
	run_app mono "$m/bin/Debug/net48/Multi.exe"
	check "multi: net48 under Mono reports" reports "$err" Program::Main
	run_app dotnet "$m/bin/Debug/net10.0/Multi.dll"
	check "multi: net10.0 reports" reports "$err" Program::Main
}

# 4. A library and an app that references it, both with the package.
library_and_app() {
	local a=$work/App libpkg=$LT_TMP/libpkg/LockTimeTest.Lib.1.0.0.nupkg
	check "lib+app: build" dn "$LT_TMP/l1.log" build "$a" -v:n
	check "lib+app: two weaves" woven_times "$LT_TMP/l1.log" 2
	check "lib+app: library woven" is_woven "$work/Lib/obj/Debug/net10.0/Lib.dll"
	check "lib+app: app woven" is_woven "$a/obj/Debug/net10.0/App.dll"
	run_app dotnet "$a/bin/Debug/net10.0/App.dll"
	check "lib+app: the app's lock reports" reports "$err" Program::Main
	check "lib+app: the library's lock reports" reports "$err" Lib.Counter::Add
	check "lib+app: dotnet pack of the library" dn "$LT_TMP/l2.log" pack "$work/Lib" -o "$LT_TMP/libpkg"
	check "lib+app: dotnet pack of a woven library warns LT105" grep -q 'warning LT105: LockTime: the package ships the woven Lib.dll' "$LT_TMP/l2.log"
	check "lib+app: dotnet pack -p:LockTimePack=true" dn "$LT_TMP/l2b.log" pack "$work/Lib" -o "$LT_TMP/libpkg-on-purpose" -p:LockTimePack=true
	check "lib+app: LockTimePack=true: no LT105" not grep -q 'LT105' "$LT_TMP/l2b.log"
	unzip -p "$libpkg" lib/net10.0/Lib.dll >"$LT_TMP/packed-Lib.dll"
	check "lib+app: the packed library is woven" is_woven "$LT_TMP/packed-Lib.dll"
	unzip -p "$libpkg" LockTimeTest.Lib.nuspec >"$LT_TMP/packed.nuspec"
	check "lib+app: the packed library does not depend on LockTime" not grep -q 'id="LockTime"' "$LT_TMP/packed.nuspec"
	check "lib+app: dotnet publish of the app" dn "$LT_TMP/l3.log" publish "$a" -o "$LT_TMP/published"
	check "lib+app: published app woven" is_woven "$LT_TMP/published/App.dll"
	check "lib+app: published library woven" is_woven "$LT_TMP/published/Lib.dll"
	run_app dotnet "$LT_TMP/published/App.dll"
	check "lib+app: the published app reports" reports "$err" Lib.Counter::Add
	check "lib+app: both woven: no LT109" not grep -q 'LT109' "$LT_TMP/l1.log"
	# The library's output not woven (as without the package in it): the app's build says so, LT109.
	check "lib+app: the library built without weaving" dn "$LT_TMP/l4.log" build "$work/Lib" -p:LockTimeEnabled=false
	check "lib+app: the library's output is not woven" not_woven "$work/Lib/bin/Debug/net10.0/Lib.dll"
	check "lib+app: the app over an unwoven library builds" dn "$LT_TMP/l5.log" build "$a" -p:BuildProjectReferences=false
	check "lib+app: warning LT109 names the library, its site count and the fix" \
		grep -q "warning LT109: LockTime: Lib, which App references, has 1 lock site(s) that are not woven: .* Add the package to Lib too" "$LT_TMP/l5.log"
	check "lib+app: LockTimeCheckReferences=false" dn "$LT_TMP/l6.log" build "$a" -p:BuildProjectReferences=false -p:LockTimeCheckReferences=false
	check "lib+app: LockTimeCheckReferences=false: no LT109" not grep -q 'LT109' "$LT_TMP/l6.log"
	check "lib+app: the library woven again" dn "$LT_TMP/l7.log" build "$work/Lib"
}

# 5. VB and F#.
vb_and_fsharp() {
	local name
	for name in Vb Fs; do
		check "$name: build" dn "$LT_TMP/$name.log" build "$work/$name" -v:n
		check "$name: woven once" woven_times "$LT_TMP/$name.log" 1
		run_app dotnet "$work/$name/bin/Debug/net10.0/$name.dll"
		check "$name: runs as before" grep -qx done "$out"
		check "$name: the lock reports" reports "$err" ""
	done
}

# 6. A classic project built by Mono's xbuild, with the package unpacked as packages.config restores do.
xb() { # LOG ARGS...
	local log=$1
	shift
	xbuild /nologo /v:n "$@" "$work/Classic/Classic.csproj" >"$log" 2>&1 || { grep -E 'error' "$log" | sort -u | tail -n 10; return 1; }
}
in_keyhome() { # CMD...: with a private home, whose Mono key store is the user's
	HOME=$LT_TMP/keyhome XDG_CONFIG_HOME= "$@"
}
classic_xbuild() {
	local cl=$work/Classic
	mkdir -p "$cl/packages"
	unzip -q -d "$cl/packages/LockTime.$VERSION" "$NUPKG"
	check "xbuild: build" xb "$LT_TMP/x1.log"
	check "xbuild: woven once" woven_times "$LT_TMP/x1.log" 1
	run_app mono "$cl/bin/Debug/Classic.exe"
	check "xbuild: runs under Mono and reports" reports "$err" Program::Main
	check "xbuild: no-change build" xb "$LT_TMP/x2.log"
	check "xbuild: no-change build: no weave" woven_times "$LT_TMP/x2.log" 0
	check "xbuild: LockTimeEnabled=false" xb "$LT_TMP/x3.log" /p:LockTimeEnabled=false
	run_app mono "$cl/bin/Debug/Classic.exe"
	check "xbuild: LockTimeEnabled=false: no report" no_reports "$err"
	check "xbuild: LockTimeEnabled=0: error LT104" not xb "$LT_TMP/x4.log" /p:LockTimeEnabled=0
	check "xbuild: LockTimeEnabled=0: the error names it" grep -q "error LT104: LockTime: LockTimeEnabled is '0'" "$LT_TMP/x4.log"
	check "xbuild: SignAssembly with a key file" xb "$LT_TMP/x5.log" /p:SignAssembly=true "/p:AssemblyOriginatorKeyFile=$LT_TMP/key.snk"
	check "xbuild: signed: woven once" woven_times "$LT_TMP/x5.log" 1
	check "xbuild: signed: sn -vf verifies the woven Classic.exe" sn_verifies "$cl/bin/Debug/Classic.exe"
	run_app mono "$cl/bin/Debug/Classic.exe"
	check "xbuild: signed: runs under Mono and reports" reports "$err" Program::Main
	# KeyContainerName: xbuild passes it to mcs (-keycontainer), which signs from Mono's key store - in a
	# private home here, where mcs makes the container LockTimeBuild (a new key pair) as it signs.
	mkdir -p "$LT_TMP/keyhome"
	check "xbuild: KeyContainerName (Mono's key store)" in_keyhome xb "$LT_TMP/x6.log" /p:SignAssembly=true /p:KeyContainerName=LockTimeBuild
	check "xbuild: key container: mcs made it" bash -c "find '$LT_TMP/keyhome/.config/.mono/keypairs' -name '*.xml' | grep ."
	check "xbuild: key container: woven once" woven_times "$LT_TMP/x6.log" 1
	check "xbuild: key container: no LT018" not grep -q LT018 "$LT_TMP/x6.log"
	check "xbuild: key container: sn -vf verifies the woven Classic.exe" sn_verifies "$cl/bin/Debug/Classic.exe"
	check "xbuild: key container: and it is woven" is_woven "$cl/bin/Debug/Classic.exe"
}

# Two lines of work at once (2 cores): the console app's builds, which depend on each other, and the
# other projects, which start once the first build has extracted the package and set its execute bit.
out=$LT_TMP/out err=$LT_TMP/err
console_first_build
(
	out=$LT_TMP/other-out err=$LT_TMP/other-err
	multi_targeting
	library_and_app
	vb_and_fsharp
	classic_xbuild
) >"$LT_TMP/other.tap" 2>&1 &
other=$!
console_properties
console_settings
console_runtime_options
console_incremental
console_errors
wait "$other"
cat "$LT_TMP/other.tap"
# A project whose folder name holds $HOME and a backtick command, and an output path with a $: the
# targets pass both to the shell as data (built from inside the folder: the dotnet CLI itself takes
# no such path as an argument).
shell_chars() {
	local d="$work/shell \$HOME \`touch $LT_TMP/injected\`"
	mkdir -p "$d"
	cp -r "$c" "$d/"
	rm -rf "$d/ConsoleApp/bin" "$d/ConsoleApp/obj"
	(cd "$d/ConsoleApp" && dotnet build "${DOTNET_OPTS[@]}" -v:n "-p:LockTimeOutput=$LT_TMP/out \$HOME.log") \
		>"$LT_TMP/shell.log" 2>&1 || { grep -E ': error ' "$LT_TMP/shell.log" | sort -u | tail -n 5; return 1; }
	woven_times "$LT_TMP/shell.log" 1 || return 1
	[ ! -e "$LT_TMP/injected" ] || { echo "the backtick command in the path ran"; return 1; }
	dotnet "$d/ConsoleApp/bin/Debug/net10.0/ConsoleApp.dll" >/dev/null 2>&1
	reports "$LT_TMP/out \$HOME.log" Program::Slow
}
check "console: a project path with \$HOME and a backtick, an output path with \$: passed as data, never run" shell_chars

winroot() { # PATH: its name under wine (Z: is /), with "\"
	printf 'Z:%s' "$1" | tr '/' '\\'
}
# The weaver for each host (LockTimeHostRid drives every branch here). The package's linux-arm64 and
# win-x64 binaries are wrapped, in this run's extracted copy of the package, by scripts that run them
# under qemu-user and wine, so each really weaves; each build's log names the binary picked.
host_rids() {
	local h=$work/Hosts/ConsoleApp tools=$NUGET_PACKAGES/locktime/$VERSION/tools rid
	local picked=$NUGET_PACKAGES/locktime/$VERSION/build/../tools # as the targets name it
	mkdir -p "$work/Hosts" "$LT_TMP/onpath"
	cp -r "$c" "$work/Hosts/"
	rm -rf "$h/bin" "$h/obj"
	mv "$tools/linux-arm64/locktime" "$tools/linux-arm64/locktime.real"
	printf '#!/bin/sh\nexec qemu-aarch64-static "$(dirname "$0")/locktime.real" "$@"\n' >"$tools/linux-arm64/locktime"
	mv "$tools/win-x64/locktime.exe" "$tools/win-x64/locktime.exe.real"
	printf '#!/bin/sh\nWINEDEBUG=-all WINEPREFIX="%s" exec wine "$(dirname "$0")/locktime.exe.real" "$@"\n' "$LT_BUILD/msbuild/wine" \
		>"$tools/win-x64/locktime.exe" # made executable by the targets' chmod, as NuGet leaves it
	check "hosts: restore" dn "$LT_TMP/h0.log" restore "$h"
	# One wine server and its services for the builds below, started with no pipe of theirs open (Exec
	# would wait for wine's services to close it), stopped at the end.
	export WINEPREFIX=$LT_BUILD/msbuild/wine WINEDEBUG=-all
	wineserver -p </dev/null >/dev/null 2>&1 && wine wineboot </dev/null >/dev/null 2>&1
	picks() { # RID BINARY: a build for RID runs BINARY, weaves once, and the program reports
		dn "$LT_TMP/h-$1.log" build "$h" -v:n -p:LockTimeHostRid="$1" || return 1
		grep -F "LockTime: host $1, weaver $2" "$LT_TMP/h-$1.log" || { grep -F 'LockTime: host' "$LT_TMP/h-$1.log"; return 1; }
		woven_times "$LT_TMP/h-$1.log" 1 && is_woven "$h/bin/Debug/net10.0/ConsoleApp.dll" &&
			dotnet "$h/bin/Debug/net10.0/ConsoleApp.dll" 2>&1 >/dev/null | grep -q '^LockTime: Program::Slow'
	}
	check "hosts: linux-x64 runs tools/linux-x64/locktime" picks linux-x64 "$picked/linux-x64/locktime"
	cp "$h/bin/Debug/net10.0/ConsoleApp.dll" "$LT_TMP/host-linux-x64.dll"
	for rid in linux-arm64 win-x64; do
		local exe=locktime
		[ "$rid" = win-x64 ] && exe=locktime.exe
		check "hosts: $rid runs tools/$rid/$exe (qemu-user or wine)" picks "$rid" "$picked/$rid/$exe"
		check "hosts: $rid: the woven assembly is linux-x64's, byte for byte" cmp "$LT_TMP/host-linux-x64.dll" "$h/bin/Debug/net10.0/ConsoleApp.dll"
	done
	check "hosts: win-arm64 runs the win-x64 binary" picks win-arm64 "$picked/win-x64/locktime.exe"
	un_woven() { # a host with no binary in the package and none on PATH: warning LT106, a successful un-woven build
		PATH=$(dirname "$(command -v dotnet)"):/usr/bin:/bin dn "$LT_TMP/h-osx.log" build "$h" -v:n -p:LockTimeHostRid=osx-arm64 || return 1
		grep -qE 'warning LT106: LockTime: not woven on this host \(osx-arm64\)' "$LT_TMP/h-osx.log" &&
			grep -qE '^ +0 Error\(s\)' "$LT_TMP/h-osx.log" && woven_times "$LT_TMP/h-osx.log" 0 &&
			not_woven "$h/bin/Debug/net10.0/ConsoleApp.dll"
	}
	check "hosts: osx-arm64 with no locktime on PATH: warning LT106, the build succeeds un-woven" un_woven
	ln -sf "$STATIC" "$LT_TMP/onpath/locktime"
	PATH="$LT_TMP/onpath:$PATH" check "hosts: osx-arm64 with a locktime on PATH: woven by it" picks osx-arm64 locktime
	# The cmd.exe form of the command (what Exec runs on Windows), run as Exec runs it there (a .cmd file,
	# cmd /Q /D /C) by wine's cmd.exe: paths with spaces, &, ( ), !, ^ and non-ASCII letters reach
	# locktime through the environment and the response file. (Not %: wine's cmd expands a %NAME% inside
	# an expanded value again, which Windows' does not.)
	cmd_form() {
		local text d="$LT_TMP/cmd a&b (x) !y! ^z é"
		text=$(dotnet msbuild "$h" "${DOTNET_OPTS[@]}" -getProperty:_LockTimeRunCommand -p:OS=Windows_NT) || return 1
		text=$(printf '%s' "$text" | tr -d '\r' | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//')
		printf 'command: %q\n' "$text"
		[ "$text" = '"%_LT_EXE%" @"%_LT_ARGS%"' ] || return 1
		mkdir -p "$d"
		cp /usr/lib/mono/4.5/System.dll "$d/in.dll"
		printf 'weave\n-o\n%s\n%s\n' "$(winroot "$d/out.dll")" "$(winroot "$d/in.dll")" >"$d/args"
		printf '%s\r\n' "$text" >"$LT_TMP/exec.cmd" # Exec's is in %TEMP%
		_LT_EXE=$(winroot "$tools/win-x64/locktime.exe.real") _LT_ARGS=$(winroot "$d/args") WINEDEBUG=-all \
			WINEPREFIX="$LT_BUILD/msbuild/wine" wine cmd /Q /D /C "$(winroot "$LT_TMP/exec.cmd")" || return 1
		"$STATIC" weave -q -o "$d/expected.dll" "$d/in.dll" && cmp "$d/expected.dll" "$d/out.dll"
	}
	check "hosts: the cmd.exe command text runs under wine's cmd.exe, paths with & ( ) ! ^ é as data" cmd_form
	wineserver -k 2>/dev/null || true # the server may be gone already: its end is no test
}
host_rids

# Last (it replaces the package the tests above read): a package built again has a newer version, and
# the console app referencing any prerelease of cli.h's version (VERSION-*) restores and weaves with it.
newer_package() {
	local v
	sleep 1 # the version's time is in seconds
	make -s -C "$LT_ROOT" -W nuget/README.md package >/dev/null || return 1
	v=$(cat "$LT_BUILD/package/dev.version")
	echo "first $VERSION, then $v"
	[[ "$v" > "$VERSION" ]] && cp "$LT_BUILD/LockTime.$v.nupkg" "$feed/" || return 1
	dn "$LT_TMP/float.log" build "$c" -v:n -p:LockTimeTestVersion="${VERSION%-dev.*}-*" || return 1
	test -x "$NUGET_PACKAGES/locktime/$v/tools/linux-x64/locktime" && woven_times "$LT_TMP/float.log" 1
}
check "package: built again, a newer version, which a reference to VERSION-* takes" newer_package
done_testing
