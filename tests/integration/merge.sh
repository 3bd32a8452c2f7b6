#!/usr/bin/env bash
# The run-time merger (weaver/weave/merge/weave_merge.h) end to end, with the test template
# tests/merge/Template (build/san/lt-merge, tests/tools/merge.c):
#   - the template is inside the merger's subset, and a template outside it is refused, each
#     construct named (closures, iterators, async, generics, FieldRVA, P/Invoke, attributes, an
#     explicit static constructor; more, on edits of the run-time template: tests/unit/test_weave_template.c);
#   - merged into every corpus program and third-party assembly (Mono's mscorlib and System
#     included), the output verifies and JIT-compiles (ltcheck), and the probe the host calls by
#     reflection answers as the template itself does, with the merge's substitution, on .NET 10
#     and on Mono (Mono's mscorlib: the probe runs on the merged core library, its own clock);
#   - the same bytes twice; a merged assembly is not merged again;
#   - resolved with reference assemblies (-r) too, all of them or too few (they add to the target's
#     framework); a framework without a type the template needs is an LT015 error naming it, and no output.
source "$(dirname "$0")/../lib.sh"
MERGE=${LT_MERGE:-$LT_BUILD/san/lt-merge}
TEMPLATE=$LT_BUILD/merge/Template/LockTime.MergeTemplate.dll
BAD=$LT_BUILD/merge/BadTemplate/BadTemplate.dll
HOST=$LT_BUILD/merge/Host/Host.dll
MONO_HOST=$LT_BUILD/merge/Host.exe
# The substitutions the run-time gets: a baked default, a table whose body calls merged methods, and
# on a core library without Stopwatch its own clock.
SUBSTS=(-s LockTime.MergeTest.Defaults::Sink=string:merged-sink
	-s LockTime.MergeTest.Defaults::Load=record:LockTime.MergeTest.Registry::Record:loaded
	-s LockTime.MergeTest.Clock::Timestamp=corlib-timestamp -s LockTime.MergeTest.Clock::Frequency=corlib-frequency)
merge() { # IN OUT [ARGS...]: the test template merged into IN, written to OUT
	"$MERGE" "$TEMPLATE" "$1" "$2" "${SUBSTS[@]}" "${@:3}"
}

check "ltcheck builds" tools_build || exit 1
check "corpus builds" corpus_build || exit 1
check "merge test projects build" bash "$LT_ROOT/tests/merge/build.sh" || exit 1

check "the test template is inside the merger's subset" "$MERGE" --check "$TEMPLATE"

# Each construct of BadTemplate/Bad.cs is named.
"$MERGE" --check "$BAD" >"$LT_TMP/bad" 2>&1
bad_rc=$?
for what in 'DisplayClass.*closure' 'Iterator>d__.*iterator' 'Async>d__' 'Bad::Generic: a generic method' \
	'Box`1: generic' 'FieldRVA' 'getpid: no IL body' 'ImplMap' 'ObsoleteAttribute' \
	'AsyncStateMachineAttribute (an async method)' 'ExplicitCctor::.cctor: an explicit static constructor'; do
	if [ "$bad_rc" = 1 ] && grep -q "$what" "$LT_TMP/bad"; then
		ok "outside the subset: $what is named"
	else
		not_ok "outside the subset: $what is named" "exit $bad_rc: $(cat "$LT_TMP/bad")"
	fi
done
"$MERGE" "$BAD" "$LT_CORPUS/csharp/Release/LockCorpus.dll" "$LT_TMP/bad.dll" >"$LT_TMP/err" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q 'error LT015: the run-time template uses what the merger does not support' "$LT_TMP/err" &&
	[ ! -e "$LT_TMP/bad.dll" ]; then
	ok "merging a template outside the subset: LT015, no output"
else
	not_ok "merging a template outside the subset: LT015, no output" "exit $rc: $(cat "$LT_TMP/err")"
fi

# What the probe answers: the template's own answer with the substituted sink and table (a site 9).
dotnet "$HOST" "$TEMPLATE" 2>/dev/null | sed 's/^sink=template-sink;\(.*\);load=-1;/sink=merged-sink;\1;load=9;/' \
	>"$LT_TMP/expected"
check "the probe runs in the template itself" \
	grep -q '^sink=merged-sink;a=7;sites=2;load=9;.*clock ok$' "$LT_TMP/expected"

probe() { # RUNNER FILE: the probe's answer from the merged FILE
	if [ "$1" = dotnet ]; then dotnet "$HOST" "$2"; else mono "$MONO_HOST" "$2"; fi 2>/dev/null >"$LT_TMP/actual" &&
		diff "$LT_TMP/expected" "$LT_TMP/actual"
}
deterministic() { # IN OUT: a second merge of IN gives OUT's bytes
	merge "$1" "$LT_TMP/again" >/dev/null && cmp "$2" "$LT_TMP/again"
}
not_twice() { # OUT: merging OUT again does nothing
	merge "$1" "$LT_TMP/twice" | grep -q '^already merged$' && [ ! -e "$LT_TMP/twice" ]
}

while read -r name runner file; do
	dir=$LT_TMP/${name//\//-}
	rm -rf "$dir"; cp -r "$(dirname "$file")" "$dir"
	out=$dir/$(basename "$file")
	check "$name: merged" merge "$file" "$out" || continue
	check "$name: metadata reader accepts it" ltcheck verify "$out"
	[ "$runner" = dotnet ] && check "$name: every method JIT-compiles, merged ones included" ltcheck jit "$out"
	check "$name: the merged probe answers ($runner)" probe "$runner" "$out"
	check "$name: the same bytes twice" deterministic "$file" "$out"
	check "$name: not merged twice" not_twice "$out"
done < <(corpus_programs)

while read -r file; do
	name=$(basename "$file")
	out=$LT_TMP/tp/$name
	mkdir -p "$LT_TMP/tp"
	check "$name: merged" merge "$file" "$out" || continue
	check "$name: metadata reader accepts it" ltcheck verify "$out"
	case $name in
	Newtonsoft.Json.dll | Serilog.dll | NLog.dll | log4net.dll | Polly*.dll)
		check "$name: every method JIT-compiles, merged ones included" ltcheck jit "$out" "$(dirname "$file")"
		check "$name: the merged probe answers (dotnet)" probe dotnet "$out" ;;
	System.dll | System.Core.dll)
		check "$name: the merged probe answers (mono)" probe mono "$out" ;;
	esac
	check "$name: the same bytes twice" deterministic "$file" "$out"
done < <(corpus_thirdparty)

# Mono's mscorlib has no Stopwatch: the clock is substituted by its own. The probe runs inside the
# merged core library (-O=-aot: Mono's precompiled mscorlib would not match it, see weave.sh).
monolib=$LT_TMP/monolib
mkdir -p "$monolib"
mono_corlib_probe() {
	MONO_PATH=$monolib mono -O=-aot "$MONO_HOST" 2>/dev/null >"$LT_TMP/actual" && diff "$LT_TMP/expected" "$LT_TMP/actual"
}
check "mono mscorlib.dll: merged" merge "$LT_CORPUS/thirdparty/mscorlib.dll" "$monolib/mscorlib.dll" &&
	check "mono mscorlib.dll: the probe answers inside the merged core library" mono_corlib_probe
# refused FILE PATTERN ARGS...: lt-merge ARGS fails with exit 1, an error matching PATTERN, no FILE.
refused() {
	local file=$1 pattern=$2 rc
	shift 2
	"$MERGE" "$@" >"$LT_TMP/err" 2>&1
	rc=$?
	[ "$rc" = 1 ] && grep -q "$pattern" "$LT_TMP/err" && [ ! -e "$file" ] && return 0
	echo "exit $rc"
	cat "$LT_TMP/err"
	return 1
}
check "mono mscorlib.dll without the clock substitution: LT015 naming Stopwatch" \
	refused "$LT_TMP/nosubst.dll" "error LT015: .*the target.s framework has no System.Diagnostics.Stopwatch" \
	"$TEMPLATE" "$LT_CORPUS/thirdparty/mscorlib.dll" "$LT_TMP/nosubst.dll"

# With .NET's reference assemblies (as MSBuild passes them), and with too few of them.
refs=()
for f in /usr/share/dotnet/packs/Microsoft.NETCore.App.Ref/*/ref/net*/*.dll; do refs+=(-r "$f"); done
dir=$LT_TMP/refs
rm -rf "$dir"; cp -r "$LT_CORPUS/csharp/Release" "$dir"
if check "with reference assemblies: merged" merge "$LT_CORPUS/csharp/Release/LockCorpus.dll" "$dir/LockCorpus.dll" \
	"${refs[@]}"; then
	check "with reference assemblies: every method JIT-compiles" ltcheck jit "$dir/LockCorpus.dll"
	check "with reference assemblies: the merged probe answers" probe dotnet "$dir/LockCorpus.dll"
fi
# .NET Framework's reference assemblies (the NuGet package the net48 corpus builds with), for net48.
fx=$(ls -d "$HOME"/.nuget/packages/microsoft.netframework.referenceassemblies.net48/*/build/.NETFramework/v4.8 \
	2>/dev/null | tail -n 1)
if [ -n "$fx" ]; then
	dir=$LT_TMP/refs48
	rm -rf "$dir"; cp -r "$LT_CORPUS/net48/Release" "$dir"
	check "net48 with its reference assemblies: merged" merge "$LT_CORPUS/net48/Release/LockCorpus48.exe" \
		"$dir/LockCorpus48.exe" -r "$fx/mscorlib.dll" -r "$fx/System.dll" -r "$fx/System.Core.dll" &&
		check "net48 with its reference assemblies: the merged probe answers (mono)" probe mono "$dir/LockCorpus48.exe"
else
	skip "net48 with its reference assemblies" "no .NET Framework 4.8 reference assemblies"
fi

# Reference assemblies add to the target's framework: what System.Runtime alone lacks
# (Dictionary`2, Thread...) is where the framework puts it.
ref_dir=$(dirname "${refs[1]}")
dir=$LT_TMP/fewrefs
rm -rf "$dir"; cp -r "$LT_CORPUS/csharp/Release" "$dir"
if check "with System.Runtime alone: merged, the framework giving what it lacks" \
	merge "$LT_CORPUS/csharp/Release/LockCorpus.dll" "$dir/LockCorpus.dll" -r "$ref_dir/System.Runtime.dll"; then
	check "with System.Runtime alone: every method JIT-compiles" ltcheck jit "$dir/LockCorpus.dll"
	check "with System.Runtime alone: the merged probe answers" probe dotnet "$dir/LockCorpus.dll"
fi
check "a substitution naming no template method: LT015" \
	refused "$LT_TMP/nosuch.dll" "error LT015: substitution LockTime.MergeTest.Nope::Nope: .* no such method" \
	"$TEMPLATE" "$LT_CORPUS/csharp/Release/LockCorpus.dll" "$LT_TMP/nosuch.dll" -s LockTime.MergeTest.Nope::Nope=i8:1

# LockTime's own run-time template (weaver/runtime/, built by make into build/runtime/): inside the
# subset, merged with its substitutions into a .NET program (JIT-compiled), a net48 one, Mono's
# mscorlib (its own clock) and a library resolved with .NET's reference assemblies.
RUNTIME=$LT_BUILD/runtime/LockTime.Runtime.dll
check "run-time template builds (make runtime)" make -C "$LT_ROOT" --no-print-directory -s runtime || exit 1
rt_substs=(-s LockTime.Runtime.Clock::Ticks=corlib-timestamp -s LockTime.Runtime.Clock::Frequency=corlib-frequency
	-s LockTime.Runtime.Baked::ThresholdMs=string:0 -s LockTime.Runtime.Baked::Output=string:stdout)
check "run-time template: inside the merger's subset" "$MERGE" --check "$RUNTIME"
mkdir -p "$LT_TMP/runtime"
for file in "$LT_CORPUS/csharp/Release/LockCorpus.dll" "$LT_CORPUS/vb/Debug/LockCorpusVb.dll" \
	"$LT_CORPUS/net48/Release/LockCorpus48.exe" "$LT_CORPUS/thirdparty/mscorlib.dll" \
	"$LT_CORPUS/thirdparty/Newtonsoft.Json.dll"; do
	name=$(basename "$file")
	out=$LT_TMP/runtime/$name
	args=("${rt_substs[@]}")
	[ "$name" = Newtonsoft.Json.dll ] && args+=("${refs[@]}")
	check "run-time template into $name: merged" "$MERGE" "$RUNTIME" "$file" "$out" "${args[@]}" || continue
	check "run-time template into $name: metadata reader accepts it" ltcheck verify "$out"
	case $name in
	*.dll) [ "$name" != mscorlib.dll ] && check "run-time template into $name: every method JIT-compiles" \
		ltcheck jit "$out" "$(dirname "$file")" ;;
	esac
done
done_testing
