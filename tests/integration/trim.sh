#!/usr/bin/env bash
# A woven app published trimmed (PublishTrimmed) and as NativeAOT (PublishAot), tests/trim/TrimApp woven
# as the package's targets weave (the compiled assembly, after CoreCompile):
#   - the publish gives no trim or AOT analysis warning (IL2xxx, IL3xxx): the merged run-time's reflection
#     is either analysable or carries the target framework's UnconditionalSuppressMessage / DynamicDependency;
#   - the program runs; a SemaphoreSlim(1, 1) is a lock (its hold measured, >= 50 ms), under NativeAOT too;
#   - the trimmed app has the Meter "LockTime" (4 instruments); the NativeAOT one has none (docs/metrics.md);
#   - SIGTERM: the summary all the same, the exit code the signal's (143).
# Then a woven netstandard2.0 library (tests/trimlib/Lib, its framework without the trimmer's attributes) in a
# net10.0 app (tests/trimlib/App) published both ways:
#   - the library carries the run-time's suppressions in ILLink.LinkAttributes.xml: the trimmed publish gives no
#     IL2xxx/IL3xxx warning; NativeAOT's compiler reads no suppression from that file (only attribute removals):
#     its warnings are the suppressed ones of the merged Metrics, no other (docs/weaving.md, "Trimming");
#   - the app runs, the library's monitor and SemaphoreSlim(1, 1) are timed (the report: holds >= 20 ms);
#   - a library with an ILLink.LinkAttributes.xml of its own keeps it byte for byte, and the build says
#     (warning LT024) that the run-time's suppressions are not in it.
# NativeAOT needs the ILCompiler package from the configured NuGet sources: the restore fetches it.
source "$(dirname "$0")/../lib.sh"
LT=${LOCKTIME:-$LT_BUILD/san/locktime}
export MSBUILDDISABLENODEREUSE=1 DOTNET_CLI_USE_MSBUILD_SERVER=0
unset LOCKTIME_DISABLED LOCKTIME_THRESHOLD_MS LOCKTIME_OUTPUT LOCKTIME_SUMMARY LOCKTIME_REPORT LOCKTIME_REPORT_INTERVAL_S \
	LOCKTIME_LOCK_ORDER LOCKTIME_METRICS

publish() { # NAME DIR PROJECT PROPERTY: tests/DIR copied into $LT_TMP/NAME, its PROJECT published with PROPERTY
	rm -rf "$LT_TMP/$1" && cp -r "$LT_ROOT/tests/$2" "$LT_TMP/$1" &&
	dotnet publish "$LT_TMP/$1/$3" -c Release -r linux-x64 -nologo -tl:off -nodeReuse:false \
		-p:UseSharedCompilation=false "-p:$4" "-p:LockTimeWeaver=$LT" -o "$LT_TMP/$1/out" >"$LT_TMP/$1.log" 2>&1 ||
		{ tail -n 30 "$LT_TMP/$1.log"; return 1; }
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
	check "$name: publishes" publish "$name" trim TrimApp.csproj "${mode#*:}=true" || continue
	warnings=$(grep -E 'warning IL[23][0-9]{3}' "$LT_TMP/$name.log" | sed 's/ \[.*//' | sort -u)
	if [ -z "$warnings" ]; then ok "$name: no trim or AOT analysis warning"; else not_ok "$name: no trim or AOT analysis warning" "$warnings"; fi
	rm -f "$LT_TMP/$name.json"
	LOCKTIME_REPORT="$LT_TMP/$name.json" timeout 120 "$LT_TMP/$name/out/TrimApp" >"$LT_TMP/$name.out" 2>"$LT_TMP/$name.err"
	check "$name: runs, with a summary" grep -q '^LockTime: summary: 3 sites in 1 assembly; 3 acquisitions' "$LT_TMP/$name.err"
	hold=$(site_hold "$LT_TMP/$name.json" SemaphoreSlim.Wait)
	check "$name: the SemaphoreSlim(1, 1) is a lock, its hold measured ($hold)" \
		python3 -c "import sys; h, applies = sys.argv[1:3]; sys.exit(not (float(h) >= 50 and applies == 'True'))" $hold
	want=4
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
# The run-time's suppressed warnings: the checks its Metrics type suppresses (weaver/runtime/Metrics.cs).
suppressed='IL(2060|2065|2070|3050): <LockTime>Metrics\.'
for mode in trimmed aot; do
	name=lib-$mode
	check "$name: publishes" publish "$name" trimlib App/App.csproj "LibPublish=$mode" || continue
	warnings=$(grep -E 'warning IL[23][0-9]{3}' "$LT_TMP/$name.log" | sed 's/ \[.*//' | sort -u)
	if [ "$mode" = trimmed ]; then
		if [ -z "$warnings" ]; then ok "$name: no trim or AOT analysis warning"; else not_ok "$name: no trim or AOT analysis warning" "$warnings"; fi
	else
		others=$(grep -vE "$suppressed" <<<"$warnings" | grep .)
		if [ -n "$warnings" ] && [ -z "$others" ]; then ok "$name: only the run-time's suppressed warnings (ILC reads no suppression from the resource)"
		else not_ok "$name: only the run-time's suppressed warnings" "${others:-none at all: ILC reads the suppressions now (update docs/weaving.md)}"; fi
	fi
	rm -f "$LT_TMP/$name.json"
	check "$name: runs" env LOCKTIME_REPORT="$LT_TMP/$name.json" timeout 120 "$LT_TMP/$name/out/App"
	holds=$(lib_holds "$LT_TMP/$name.json")
	check "$name: the library's monitor and SemaphoreSlim(1, 1) are timed ($holds ms)" \
		python3 -c "import sys; sys.exit(not all(float(h) >= 20 for h in sys.argv[1:]))" $holds
done

own=$LT_TMP/lib-own
rm -rf "$own" && cp -r "$LT_ROOT/tests/trimlib" "$own"
printf '<linker>\n  <!-- the library'"'"'s own -->\n</linker>\n' >"$own/Lib/ILLink.LinkAttributes.xml"
cat >"$own/Lib/Directory.Build.targets" <<'EOF'
<Project>
  <ItemGroup>
    <EmbeddedResource Include="ILLink.LinkAttributes.xml" LogicalName="ILLink.LinkAttributes.xml" />
  </ItemGroup>
</Project>
EOF
if dotnet build "$own/Lib/Lib.csproj" -c Release -nologo -tl:off -nodeReuse:false -p:UseSharedCompilation=false \
	"-p:LockTimeWeaver=$LT" -o "$own/bin" >"$own.log" 2>&1; then
	ok "lib-own: builds"
	check "lib-own: warning LT024, the suppressions not added" grep -q 'warning LT024: .*ILLink.LinkAttributes.xml is kept' "$own.log"
	mkdir -p "$own/res" && (cd "$own/res" && monodis --mresources "$own/bin/Lib.dll" >/dev/null 2>&1)
	check "lib-own: its ILLink.LinkAttributes.xml byte for byte" cmp "$own/Lib/ILLink.LinkAttributes.xml" "$own/res/ILLink.LinkAttributes.xml"
	check "lib-own: woven (its sites listed as woven)" grep -q '(woven)' <("$LT" list "$own/bin/Lib.dll")
else
	not_ok "lib-own: builds" "$(tail -n 30 "$own.log")"
fi
