#!/usr/bin/env bash
# A woven app published trimmed (PublishTrimmed) and as NativeAOT (PublishAot), tests/trim/TrimApp woven
# as the package's targets weave (the compiled assembly, after CoreCompile):
#   - the publish gives no trim or AOT analysis warning (IL2xxx, IL3xxx): the merged run-time's reflection
#     is either analysable or carries the target framework's UnconditionalSuppressMessage / DynamicDependency;
#   - the program runs; a SemaphoreSlim(1, 1) is a lock (its hold measured, >= 50 ms), under NativeAOT too;
#   - the trimmed app has the Meter "LockTime" (6 instruments: 4 counters, 2 histograms); the NativeAOT one has none (docs/metrics.md);
#   - SIGTERM: the summary all the same, the exit code the signal's (143).
# Then a woven netstandard2.0 library (tests/trimlib/Lib, its framework without the trimmer's attributes) in a
# net10.0 app (tests/trimlib/App) published both ways:
#   - the library carries the run-time's attributes for the trimmer as the template's classes merged under their
#     full names (the trimmer and ILC know them by name): no IL2xxx/IL3xxx warning, trimmed or NativeAOT;
#   - the app runs, the library's monitor and SemaphoreSlim(1, 1) are timed (the report: holds >= 20 ms);
#   - a library with its own internal UnconditionalSuppressMessageAttribute (a polyfill) has the run-time's
#     suppressions on that class - no second TypeDef of the name - and publishes as NativeAOT without a warning;
#   - one whose own class has another constructor: woven, the suppressions left out, warning LT025.
# NativeAOT needs the ILCompiler package from the configured NuGet sources: the restore fetches it.
source "$(dirname "$0")/../lib.sh"
LT=${LOCKTIME:-$LT_BUILD/san/locktime}
export MSBUILDDISABLENODEREUSE=1 DOTNET_CLI_USE_MSBUILD_SERVER=0
unset LOCKTIME_DISABLED LOCKTIME_THRESHOLD_MS LOCKTIME_OUTPUT LOCKTIME_SUMMARY LOCKTIME_REPORT LOCKTIME_REPORT_INTERVAL_S \
	LOCKTIME_LOCK_ORDER LOCKTIME_METRICS

publish() { # NAME DIR PROJECT PROPERTY: DIR copied into $LT_TMP/NAME, its PROJECT published with PROPERTY
	rm -rf "${LT_TMP:?}/$1" && cp -r "$2" "$LT_TMP/$1" &&
	dotnet publish "$LT_TMP/$1/$3" -c Release -r linux-x64 -nologo -tl:off -nodeReuse:false \
		-p:UseSharedCompilation=false "-p:$4" "-p:LockTimeWeaver=$LT" -o "$LT_TMP/$1/out" >"$LT_TMP/$1.log" 2>&1 ||
		{ tail -n 30 "$LT_TMP/$1.log"; return 1; }
}
# no_warnings NAME: the publish log of NAME has no IL2xxx/IL3xxx warning
no_warnings() {
	local warnings
	warnings=$(grep -E 'warning IL[23][0-9]{3}' "$LT_TMP/$1.log" | sed 's/ \[.*//' | sort -u)
	if [ -z "$warnings" ]; then ok "$1: no trim or AOT analysis warning"; else not_ok "$1: no trim or AOT analysis warning" "$warnings"; fi
}
# site_hold REPORT KIND: the hold max (ms) of the site of that kind, and whether the hold applies
site_hold() {
	python3 - "$@" <<'PY'
import json, sys
s = [s for s in json.load(open(sys.argv[1]))["sites"] if s["kind"] == sys.argv[2]]
print(max(x["hold_ms"]["max"] for x in s), all(x.get("hold_applies", True) for x in s))
PY
}

for mode in trimmed:PublishTrimmed aot:PublishAot; do
	name=${mode%%:*}
	check "$name: publishes" publish "$name" "$LT_ROOT/tests/trim" TrimApp.csproj "${mode#*:}=true" || continue
	no_warnings "$name"
	rm -f "$LT_TMP/$name.json"
	LOCKTIME_REPORT="$LT_TMP/$name.json" timeout 120 "$LT_TMP/$name/out/TrimApp" >"$LT_TMP/$name.out" 2>"$LT_TMP/$name.err"
	check "$name: runs, with a summary" grep -q '^LockTime: summary: 3 sites in 1 assembly; 3 acquisitions' "$LT_TMP/$name.err"
	hold=$(site_hold "$LT_TMP/$name.json" SemaphoreSlim.Wait)
	check "$name: the SemaphoreSlim(1, 1) is a lock, its hold measured ($hold)" \
		python3 -c "import sys; h, applies = sys.argv[1:3]; sys.exit(not (float(h) >= 50 and applies == 'True'))" $hold
	want=6
	[ "$name" = aot ] && want=0
	check "$name: the Meter LockTime has $want instruments" grep -qx "LockTime instruments: $want" "$LT_TMP/$name.out"
	terminated "$LT_TMP/$name-term.out" "$LT_TMP/$name-term.err" serving "$LT_TMP/$name/out/TrimApp" serve
	rc=$?
	check "$name: SIGTERM: exit code 143, one summary" \
		test "$rc $(grep -c '^LockTime: summary: 4 sites in 1 assembly' "$LT_TMP/$name-term.err")" = "143 1"
done

# lib_holds REPORT: "<monitor hold max> <semaphore hold max>" (ms) of the library's sites
lib_holds() {
	python3 - "$1" <<'PY'
import json, sys
s = [s for s in json.load(open(sys.argv[1]))["sites"] if s["method"].startswith("TrimLib.Shelf::")]
print(*(max([x["hold_ms"]["max"] for x in s if x["kind"] == k] or [0]) for k in ("Monitor.Enter", "SemaphoreSlim.Wait")))
PY
}
# runs_timed NAME: the published app of NAME runs, the library's locks timed
runs_timed() {
	local holds
	rm -f "$LT_TMP/$1.json"
	check "$1: runs" env LOCKTIME_REPORT="$LT_TMP/$1.json" timeout 120 "$LT_TMP/$1/out/App"
	holds=$(lib_holds "$LT_TMP/$1.json")
	check "$1: the library's monitor and SemaphoreSlim(1, 1) are timed ($holds ms)" \
		python3 -c "import sys; sys.exit(not all(float(h) >= 20 for h in sys.argv[1:]))" $holds
}
# classes DLL: how many TypeDefs System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessageAttribute and
# ...DynamicDependencyAttribute the assembly has
classes() {
	local listing
	listing=$(monodis --typedef "$1")
	echo "$(grep -c 'System\.Diagnostics\.CodeAnalysis\.UnconditionalSuppressMessageAttribute ' <<<"$listing")" \
		"$(grep -c 'System\.Diagnostics\.CodeAnalysis\.DynamicDependencyAttribute ' <<<"$listing")"
}
lib=Lib/obj/Release/netstandard2.0/Lib.dll # the woven library (woven in obj/, after CoreCompile)
for mode in trimmed aot; do
	name=lib-$mode
	check "$name: publishes" publish "$name" "$LT_ROOT/tests/trimlib" App/App.csproj "LibPublish=$mode" || continue
	no_warnings "$name"
	runs_timed "$name"
	check "$name: the trimmer's attribute classes merged under their full names, once each" \
		test "$(classes "$LT_TMP/$name/$lib")" = "1 1"
done

# polyfill DIR PARAMETERS: tests/trimlib in DIR, its library with an internal UnconditionalSuppressMessageAttribute
# of its own whose constructor takes PARAMETERS
polyfill() {
	rm -rf "$1" && cp -r "$LT_ROOT/tests/trimlib" "$1" && cat >"$1/Lib/Polyfill.cs" <<EOF
namespace System.Diagnostics.CodeAnalysis
{
    [AttributeUsage(AttributeTargets.All, Inherited = false, AllowMultiple = true)]
    internal sealed class UnconditionalSuppressMessageAttribute : Attribute
    {
        public UnconditionalSuppressMessageAttribute($2) { }
        public string Justification { get; set; }
    }
}
EOF
}
polyfill "$LT_TMP/poly-src" "string category, string checkId"
if check "lib-poly: publishes (NativeAOT)" publish lib-poly "$LT_TMP/poly-src" App/App.csproj LibPublish=aot; then
	no_warnings lib-poly
	runs_timed lib-poly
	check "lib-poly: its own UnconditionalSuppressMessageAttribute used (one TypeDef of the name), DynamicDependency merged" \
		test "$(classes "$LT_TMP/lib-poly/$lib")" = "1 1"
	class_suppressions() { # DLL: the UnconditionalSuppressMessage uses on classes
		monodis --customattr "$1" | grep -c "TypeDef: .*UnconditionalSuppressMessageAttribute::'.ctor'(string, string)"
	}
	check "lib-poly: the run-time's suppressions on its class, as many as the template's classes carry" \
		test "$(class_suppressions "$LT_TMP/lib-poly/$lib")" = "$(class_suppressions "$LT_BUILD/runtime/LockTime.Runtime.dll")"
fi
unfit=$LT_TMP/lib-unfit
polyfill "$unfit" "string checkId"
if dotnet build "$unfit/Lib/Lib.csproj" -c Release -nologo -tl:off -nodeReuse:false -p:UseSharedCompilation=false \
	"-p:LockTimeWeaver=$LT" -o "$unfit/bin" >"$unfit.log" 2>&1; then
	ok "lib-unfit: builds"
	check "lib-unfit: warning LT025 naming its class" \
		grep -q 'warning LT025: its own System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessageAttribute does not fit' "$unfit.log"
	check "lib-unfit: woven (its sites listed as woven)" grep -q '(woven)' <("$LT" list "$unfit/bin/Lib.dll")
	check "lib-unfit: no suppression of the run-time on its class" \
		test "$(monodis --customattr "$unfit/bin/Lib.dll" | grep -c "UnconditionalSuppressMessageAttribute::'.ctor'")" = 0
else
	not_ok "lib-unfit: builds" "$(tail -n 30 "$unfit.log")"
fi
done_testing
