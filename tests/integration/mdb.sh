#!/usr/bin/env bash
# Mono's .mdb symbols (what mcs -debug and classic xbuild projects write), end to end:
#   - tests/corpus/mdb/Traces.cs compiled with Debian's mcs -debug: `locktime list` names every site
#     at its marker's line (Traces.cs:N, two sites on one line with their columns), and so do the
#     woven program's slow-lock reports and `list` of the woven assembly;
#   - the .mdb is rewritten beside the woven assembly with the new Mvid as its GUID: `mono --debug`
#     stack traces of exceptions thrown inside and after woven locks name the same file:line woven
#     as un-woven (the IL offsets they print moved), which the input's .mdb no longer gives (Mono
#     rejects it: another module's GUID);
#   - weaving is deterministic for the .mdb too, -o writes <output>.mdb and leaves the input's, and
#     weaving again leaves both files alone;
#   - a corrupt .mdb and another build's .mdb: the assembly is woven anyway with one LT017 warning
#     naming the file, the .mdb is left byte for byte, `list` gives IL offsets;
#   - a classic project built by xbuild with mcs (DebugType full: a .mdb in obj/ and bin/): woven, the
#     same stack-trace lines and listed lines;
#   - the corpus Mono program (tests/corpus/mono, mcs -debug): every site listed with its Locks.cs line.
source "$(dirname "$0")/../lib.sh"
LT=${LOCKTIME:-$LT_BUILD/san/locktime}
SRC=$LT_ROOT/tests/corpus/mdb/Traces.cs
D=$LT_TMP/in

check "ltcheck builds" tools_build || exit 1
check "corpus builds" corpus_build || exit 1
mkdir -p "$D"
check "mcs -debug compiles the program and writes its .mdb" \
	bash -c "mcs -debug -optimize- -out:'$D/Traces.exe' '$SRC' && test -s '$D/Traces.exe.mdb'" || exit 1

marker_line() { # NAME
	grep -n "// site: $1\$" "$SRC" | cut -d: -f1
}

# `list` output FILE names METHOD's site at LOCATION (add " (woven)" for a woven assembly, whose
# IL offsets are "-").
listed_at() { # FILE METHOD LOCATION [SUFFIX]
	grep -qE "^Traces\.Program::$2 (IL_[0-9a-f]+|-) Monitor\.Enter $3${4:-}\$" "$1" || { cat "$1"; echo "want $2 at $3"; return 1; }
}

all_listed() { # FILE [SUFFIX]
	local n
	n=$(marker_line nested)
	listed_at "$1" Slow "Traces.cs:$(marker_line slow)" "${2:-}" &&
		listed_at "$1" Inside "Traces.cs:$(marker_line inside)" "${2:-}" &&
		listed_at "$1" After "Traces.cs:$(marker_line after)" "${2:-}" &&
		listed_at "$1" Nested "Traces.cs:$n:13" "${2:-}" && listed_at "$1" Nested "Traces.cs:$n:27" "${2:-}" &&
		listed_at "$1" Nested "Traces.cs:$(marker_line monitor)" "${2:-}"
}

# The "trace" lines of a run with the IL offsets Mono prints ("[0x0002f]") left out.
traces() { # FILE
	grep '^trace ' "$1" | sed -E 's/ \[0x[0-9a-f]+\]//'
}

"$LT" list "$D/Traces.exe" >"$LT_TMP/in.list" 2>&1
check "list: every site at its marker's line from the .mdb (two on one line with columns)" all_listed "$LT_TMP/in.list"

(cd "$D" && mono --debug Traces.exe >"$LT_TMP/expected.out" 2>&1)
traces "$LT_TMP/expected.out" >"$LT_TMP/expected"
check "un-woven: stack traces name Traces.cs lines" grep -qE 'Traces\.cs:[0-9]+$' "$LT_TMP/expected"

W=$LT_TMP/woven
cp -r "$D" "$W"
weave_quiet() { # EXE: woven with no warning
	"$LT" weave -q --threshold-ms 20 "$1" 2>"$LT_TMP/weave.err" && [ ! -s "$LT_TMP/weave.err" ] || { cat "$LT_TMP/weave.err"; return 1; }
}
check "weave: no warning" weave_quiet "$W/Traces.exe" || exit 1
check "the .mdb was rewritten" test "$(md5sum <"$D/Traces.exe.mdb")" != "$(md5sum <"$W/Traces.exe.mdb")"

# The .mdb's GUID (bytes 16-31) is the woven module's Mvid, which Mono compares.
guid_is_mvid() { # EXE
	local mdb mvid
	mdb=$(od -An -tx1 -j16 -N16 "$1.mdb" | tr -d ' \n')
	mvid=$(monodis --module "$1" 2>/dev/null | sed -nE 's/.*\{([0-9A-Fa-f-]+)\}.*/\1/p' | head -n 1)
	[ -n "$mvid" ] || { monodis --module "$1"; return 1; }
	python3 -c 'import sys, uuid; sys.exit(uuid.UUID(sys.argv[2]).bytes_le.hex() != sys.argv[1])' "$mdb" "$mvid" ||
		{ echo "mdb GUID $mdb, Mvid $mvid"; return 1; }
}
check "the woven .mdb's GUID is the woven module's new Mvid" guid_is_mvid "$W/Traces.exe"
check "the input's .mdb GUID is the input's Mvid" guid_is_mvid "$D/Traces.exe"

(cd "$W" && LOCKTIME_THRESHOLD_MS=20 mono --debug Traces.exe >"$LT_TMP/actual.out" 2>"$LT_TMP/actual.err")
traces "$LT_TMP/actual.out" >"$LT_TMP/actual"
check_same "woven: mono --debug stack traces name the same file:line as un-woven" "$LT_TMP/expected" "$LT_TMP/actual"
# The check above means something only if weaving moved the IL offsets the traces print.
check "woven: the IL offsets in the stack traces moved" \
	test "$(grep '^trace inside' "$LT_TMP/expected.out" | head -n 1)" != "$(grep '^trace inside' "$LT_TMP/actual.out" | head -n 1)"
check "woven: the program's output is the same" diff <(grep -v '^trace ' "$LT_TMP/expected.out") <(grep -v '^trace ' "$LT_TMP/actual.out")
check "woven: the slow lock is reported at its line" \
	grep -qE "^LockTime: Traces\.Program::Slow held [0-9.]+ ms, waited [0-9.]+ ms at Traces\.cs:$(marker_line slow)\$" "$LT_TMP/actual.err"
"$LT" list "$W/Traces.exe" >"$LT_TMP/woven.list" 2>&1
check "list of the woven assembly: the same lines, marked woven" all_listed "$LT_TMP/woven.list" " \(woven\)"
check "woven: metadata reader accepts the assembly" ltcheck verify "$W/Traces.exe"
check "woven: every method JIT-compiles" ltcheck jit "$W/Traces.exe"

# Mono refuses the input's .mdb beside the woven assembly (another GUID): no lines, so the rewrite
# is what gives them.
stale_gives_no_lines() {
	local s=$LT_TMP/stalemdb
	mkdir -p "$s" && cp "$W/Traces.exe" "$s/" && cp "$D/Traces.exe.mdb" "$s/" || return 1
	(cd "$s" && mono --debug Traces.exe >"$s/out" 2>&1)
	grep -q '^trace inside' "$s/out" && ! grep -qE '^trace .*Traces\.cs:[0-9]+$' "$s/out" || { cat "$s/out"; return 1; }
}
check "the input's .mdb beside the woven assembly gives no lines (Mono checks the GUID)" stale_gives_no_lines

weave_again_noop() { # DIR
	local before after
	before=$(cd "$1" && md5sum Traces.exe Traces.exe.mdb)
	"$LT" weave -q "$1/Traces.exe" 2>&1 | grep . && return 1
	after=$(cd "$1" && md5sum Traces.exe Traces.exe.mdb)
	[ "$before" = "$after" ]
}
check "weaving again leaves the assembly and its .mdb alone" weave_again_noop "$W"

# -o elsewhere: the same bytes as the in-place weave, <output>.mdb beside it, the input's .mdb kept.
deterministic_o() {
	local o=$LT_TMP/o sum
	sum=$(md5sum <"$D/Traces.exe.mdb")
	mkdir -p "$o" && "$LT" weave -q --threshold-ms 20 "$D/Traces.exe" -o "$o/Traces.exe" || return 1
	cmp "$W/Traces.exe" "$o/Traces.exe" && cmp "$W/Traces.exe.mdb" "$o/Traces.exe.mdb" &&
		[ "$(md5sum <"$D/Traces.exe.mdb")" = "$sum" ] || return 1
	"$LT" weave -q --threshold-ms 20 "$D/Traces.exe" -o "$o/Other.exe" && cmp "$W/Traces.exe.mdb" "$o/Other.exe.mdb"
}
check "deterministic: -o writes <output>.mdb, the input's .mdb stays" deterministic_o

# Symbols that cannot be used: woven anyway, the .mdb left byte for byte, one LT017 warning naming it.
stale_left_alone() { # DIR EXPECTED_WARNING
	local sum
	sum=$(md5sum <"$1/Traces.exe.mdb")
	"$LT" weave -q "$1/Traces.exe" 2>"$LT_TMP/stale.err" || { cat "$LT_TMP/stale.err"; return 1; }
	[ "$(grep -c 'warning LT017' "$LT_TMP/stale.err")" = 1 ] &&
		grep -q "warning LT017: .*Traces.exe.mdb: .*$2.*stale" "$LT_TMP/stale.err" || { echo "warnings: $(cat "$LT_TMP/stale.err")"; return 1; }
	[ "$(md5sum <"$1/Traces.exe.mdb")" = "$sum" ] || { echo "the .mdb changed"; return 1; }
	"$LT" list "$1/Traces.exe" | grep -qE ' Monitor\.Enter IL_[0-9a-f]+ \(woven\)$' || { "$LT" list "$1/Traces.exe"; return 1; }
	if "$LT" weave -q "$1/Traces.exe" 2>&1 | grep .; then
		echo "weaving again printed that"
		return 1
	fi
}
# An IL-offset-only site line: list gives no location without symbols.
lists_offsets_only() { # DIR
	"$LT" list "$1/Traces.exe" >"$LT_TMP/offsets.list" 2>&1 &&
		grep -qE '^Traces\.Program::Slow IL_[0-9a-f]+ Monitor\.Enter$' "$LT_TMP/offsets.list" || { cat "$LT_TMP/offsets.list"; return 1; }
}

C=$LT_TMP/corrupt
cp -r "$D" "$C"
head -c 300 "$D/Traces.exe.mdb" >"$C/Traces.exe.mdb"
check "corrupt .mdb: list gives IL offsets" lists_offsets_only "$C"
check "corrupt .mdb (truncated): woven, .mdb left alone, warned" stale_left_alone "$C" "offset table says"

O=$LT_TMP/other
cp -r "$D" "$O"
mcs -debug -optimize+ -out:"$LT_TMP/Release.exe" "$SRC" && cp "$LT_TMP/Release.exe.mdb" "$O/Traces.exe.mdb"
check "another build's .mdb: woven, .mdb left alone, warned" stale_left_alone "$O" "another build"

# A classic project as xbuild builds it with mcs: the .mdb beside the assembly in bin/.
xbuild_project() {
	local x=$LT_TMP/xbuild
	mkdir -p "$x" && cp "$SRC" "$x/" || return 1
	cat >"$x/Traces.csproj" <<'XML'
<?xml version="1.0" encoding="utf-8"?>
<Project ToolsVersion="4.0" DefaultTargets="Build" xmlns="http://schemas.microsoft.com/developer/msbuild/2003">
  <PropertyGroup>
    <Configuration>Debug</Configuration>
    <OutputType>Exe</OutputType>
    <AssemblyName>Traces</AssemblyName>
    <TargetFrameworkVersion>v4.5</TargetFrameworkVersion>
    <OutputPath>bin\Debug\</OutputPath>
    <DebugSymbols>true</DebugSymbols>
    <DebugType>full</DebugType>
    <Optimize>false</Optimize>
    <CscToolExe>mcs.exe</CscToolExe>
  </PropertyGroup>
  <ItemGroup>
    <Reference Include="System" />
    <Compile Include="Traces.cs" />
  </ItemGroup>
  <Import Project="$(MSBuildToolsPath)\Microsoft.CSharp.targets" />
</Project>
XML
	xbuild /nologo /v:q "$x/Traces.csproj" >"$x/build.log" 2>&1 && [ -s "$x/bin/Debug/Traces.exe.mdb" ] || { cat "$x/build.log"; return 1; }
	(cd "$x/bin/Debug" && mono --debug Traces.exe >"$x/expected.out" 2>&1)
	weave_quiet "$x/bin/Debug/Traces.exe" || return 1
	(cd "$x/bin/Debug" && mono --debug Traces.exe >"$x/actual.out" 2>&1)
	grep -qE '^trace inside: .*Traces\.cs:[0-9]+$' "$x/expected.out" && diff <(traces "$x/expected.out") <(traces "$x/actual.out") || return 1
	"$LT" list "$x/bin/Debug/Traces.exe" >"$x/list" && all_listed "$x/list" " \(woven\)"
}
check "xbuild project with mcs: woven, the same stack-trace lines, listed lines" xbuild_project

# The corpus Mono program: every site it lists has a Locks.cs line.
corpus_lines() {
	"$LT" list "$LT_CORPUS/mono/Debug/MonoLocks.exe" >"$LT_TMP/corpus.list" || return 1
	[ -s "$LT_TMP/corpus.list" ] && ! grep -vE ' Locks\.cs:[0-9]+(:[0-9]+)?$' "$LT_TMP/corpus.list"
}
check "corpus Mono program: every site listed with its Locks.cs line" corpus_lines
done_testing
