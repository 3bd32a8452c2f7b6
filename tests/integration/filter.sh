#!/usr/bin/env bash
# Choosing what is woven, end to end on tests/corpus/filter (built here by the .NET SDK, Debug and
# Release; and compiled by Mono's mcs, run under Mono):
#   - an attribute named LockTimeIgnoreAttribute (the program's own) on a method leaves it, its
#     lambdas and iterators alone; on a type, the type and its nested types; on the assembly,
#     everything (no lock woven: the file is left byte for byte, warning LT022 says how many sites it has);
#   - --include / --exclude: ';'-separated patterns with '*', spaces around them ignored, repeatable,
#     @FILE; an include that matches nothing, or an exclude of everything, leaves the file alone with
#     warning LT022 naming the sites found (as `locktime list` counts them) and the patterns; an
#     --include or --exclude that holds no pattern ('', ' ; ', an empty @FILE) is refused (LT012);
#   - the woven program prints what the un-woven one prints, and ltcheck verify accepts it.
source "$(dirname "$0")/../lib.sh"
LT=${LOCKTIME:-$LT_BUILD/san/locktime}
export MSBUILDDISABLENODEREUSE=1 DOTNET_CLI_USE_MSBUILD_SERVER=0
SRC=$LT_ROOT/tests/corpus/filter

check "ltcheck builds" tools_build || exit 1
build_filter() { # CONFIG (output: build/corpus/filter/CONFIG, by tests/corpus/Directory.Build.props)
	dotnet build "$SRC/Filter.csproj" -c "$1" -nologo -v q -nodeReuse:false -p:UseSharedCompilation=false >"$LT_TMP/build-$1.log" 2>&1 ||
		{ tail -n 5 "$LT_TMP/build-$1.log"; return 1; }
}
check "Filter builds (Debug)" build_filter Debug || exit 1
check "Filter builds (Release)" build_filter Release || exit 1
mono_filter() {
	mkdir -p "$LT_TMP/mono" && mcs -out:"$LT_TMP/mono/Filter.exe" "$SRC/Ignored.cs"
}
check "Filter compiles with mcs" mono_filter

# The methods `list` shows in a woven copy of FILE woven with ARGS..., one a line, sorted.
woven_methods() { # FILE ARGS...
	local f=$1 d=$LT_TMP/w
	shift
	rm -rf "$d" && mkdir -p "$d" && cp "$(dirname "$f")"/* "$d/" 2>/dev/null
	"$LT" weave -q "$@" "$d/$(basename "$f")" || return 1
	"$LT" list "$d/$(basename "$f")" | awk '{ print $1 }' | sort -u
}
has() { # LIST NAME...
	local list=$1 name
	shift
	for name in "$@"; do
		grep -qxF "$name" <<<"$list" || { echo "missing: $name"; return 1; }
	done
}
has_not() { # LIST NAME...
	local list=$1 name
	shift
	for name in "$@"; do
		! grep -qxF "$name" <<<"$list" || { echo "woven: $name"; return 1; }
	done
}

ignored_left_alone() { # FILE
	local list
	list=$(woven_methods "$1") || return 1
	echo "$list"
	has "$list" Filter.Kept::Timed Filter.Kept::Counted Filter.Kept::Numbers &&
		has_not "$list" Filter.Kept::Untimed Filter.Ignored::Run Filter.Ignored+Nested::Run
}
# The woven copy (woven_methods left it in $LT_TMP/w) prints on stdout what the input does.
same_output() { # RUNNER FILE
	"$1" "$2" >"$LT_TMP/expected" 2>/dev/null
	"$1" "$LT_TMP/w/$(basename "$2")" >"$LT_TMP/actual" 2>/dev/null
	grep -q '^done$' "$LT_TMP/expected" && diff "$LT_TMP/expected" "$LT_TMP/actual" && ltcheck verify "$LT_TMP/w/$(basename "$2")"
}
for config in Debug Release; do
	dll=$LT_CORPUS/filter/$config/Filter.dll
	check "$config: LockTimeIgnoreAttribute on a method (its lambda, not its iterator helper) and a type (nested too): not woven" \
		ignored_left_alone "$dll"
	check "$config: the woven program prints the same, verifies" same_output dotnet "$dll"
done
check "mcs: LockTimeIgnoreAttribute left alone" ignored_left_alone "$LT_TMP/mono/Filter.exe"
check "mcs: the woven program prints the same under Mono" same_output mono "$LT_TMP/mono/Filter.exe"

dll=$LT_CORPUS/filter/Release/Filter.dll
only_included() {
	local list
	list=$(woven_methods "$dll" --include 'Filter.Kept::*ed') || return 1
	[ "$list" = "$(printf '%s\n' Filter.Kept::Counted Filter.Kept::Timed)" ] || { echo "$list"; return 1; }
}
check "--include 'Filter.Kept::*ed': only those" only_included
excluded() {
	local list
	list=$(woven_methods "$dll" --exclude ' Filter.Kept::Num* ; *::Timed') || return 1
	[ "$list" = Filter.Kept::Counted ] || { echo "$list"; return 1; }
}
check "--exclude: ';'-separated, spaces around a pattern ignored" excluded
from_file() {
	local list
	printf '%s\n' '*::Timed' '' 'No.Such::Method' >"$LT_TMP/patterns"
	list=$(woven_methods "$dll" --include "@$LT_TMP/patterns" --include '*::Numbers') || return 1
	[ "$list" = "$(printf '%s\n' Filter.Kept::Numbers Filter.Kept::Timed)" ] || { echo "$list"; return 1; }
}
check "--include @FILE (one a line) and repeated" from_file
filtered_out() { # WARNING-PATTERNS OPTION...: every site left alone, the warning names them
	local d=$LT_TMP/none out sites want=$1
	shift
	rm -rf "$d" && mkdir "$d" && cp "$dll" "$d/"
	sites=$("$LT" list "$dll" | wc -l)
	[ "$sites" -gt 0 ] || return 1
	out=$("$LT" weave "$@" "$d/Filter.dll" 2>&1) || return 1
	echo "$out"
	grep -qF "$d/Filter.dll: warning LT022: $sites lock sites found, all filtered out by $want or LockTimeIgnoreAttribute: nothing woven" <<<"$out" &&
		! grep -q 'no lock found' <<<"$out" && cmp "$dll" "$d/Filter.dll"
}
check "--include that matches nothing: warning LT022 with the sites found and the pattern, the file left byte for byte" \
	filtered_out "--include 'No.Such::*'" --include 'No.Such::*'
check "--exclude '*' with an --include: warning LT022 naming both" \
	filtered_out "--include 'Filter.*' --exclude '*'" --exclude '*' --include 'Filter.*'
no_pattern() { # OPTION VALUE
	local d=$LT_TMP/none out
	rm -rf "$d" && mkdir "$d" && cp "$dll" "$d/"
	out=$("$LT" weave "$1" "$2" "$d/Filter.dll" 2>&1)
	[ $? = 2 ] || { echo "$out"; return 1; }
	echo "$out"
	grep -qF "error LT012: $1: '$2' holds no pattern" <<<"$out" && cmp "$dll" "$d/Filter.dll"
}
check "--include '': refused (LT012), the file untouched" no_pattern --include ''
check "--exclude ' ; ': refused (LT012)" no_pattern --exclude ' ; '
: >"$LT_TMP/empty-patterns"
check "--include @EMPTY-FILE: refused (LT012)" no_pattern --include "@$LT_TMP/empty-patterns"

# [assembly: LockTimeIgnore]: a Mono (mcs) program whose attribute is in no namespace.
assembly_ignored() {
	local d=$LT_TMP/asm
	mkdir -p "$d"
	cat >"$d/A.cs" <<'CS'
using System;
[assembly: LockTimeIgnore]
[AttributeUsage(AttributeTargets.All)] class LockTimeIgnoreAttribute : Attribute { }
static class P { static readonly object G = new object(); static void Main() { lock (G) Console.WriteLine("ran"); } }
CS
	sed '/assembly: LockTimeIgnore/d' "$d/A.cs" >"$d/B.cs"
	mcs -out:"$d/A.exe" "$d/A.cs" && mcs -out:"$d/B.exe" "$d/B.cs" || return 1
	cp "$d/A.exe" "$d/A.orig"
	"$LT" weave "$d/A.exe" 2>&1 | grep -qF "$d/A.exe: warning LT022: 1 lock site found, all filtered out by LockTimeIgnoreAttribute" &&
		cmp "$d/A.exe" "$d/A.orig" &&
		"$LT" weave "$d/B.exe" | grep -q 'woven, 1 lock site' && [ "$(LOCKTIME_THRESHOLD_MS=0 mono "$d/B.exe" 2>&1 | grep -c '^LockTime: P::Main')" = 1 ]
}
check "[assembly: LockTimeIgnore] (mcs, no namespace): nothing woven; without it, woven and reporting under Mono" assembly_ignored
done_testing
