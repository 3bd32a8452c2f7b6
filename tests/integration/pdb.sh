#!/usr/bin/env bash
# Debug symbols after `locktime weave` (portable PDB files and embedded PDBs), end to end:
#   - PdbLocks (tests/corpus/pdb) in Debug and Release, with a separate and an embedded PDB: its stack
#     traces, thrown inside and after woven locks (nested scopes, async, iterator, lambda, Monitor and
#     Lock forms, a synchronized method, a type with > 2048 methods), print the same file:line woven
#     as un-woven;
#   - ltcheck pdb (System.Reflection.Metadata) reads the woven PDB: every sequence point on an
#     instruction of the new body and over the same input instructions, scopes and async offsets
#     re-mapped, PDB id = CodeView GUID + stamp, PdbChecksum = hash of the content;
#   - the same for the C#, VB and F# corpus programs;
#   - weaving is deterministic for the PDB too, -o writes the PDB next to the output, weaving again
#     leaves both files alone;
#   - stale symbols (a Windows PDB, another build's PDB, a PDB no CodeView entry names) are left
#     alone with a warning, and the assembly is still woven; with no PDB at all or a stale one, the
#     woven assembly names a new PDB id, so that the input's PDB put back later is not used;
#   - a package's PDB beside its assembly is rewritten in the package.  (Mono's .mdb symbols:
#     tests/integration/mdb.sh.)
source "$(dirname "$0")/../lib.sh"
LT=${LOCKTIME:-$LT_BUILD/san/locktime}
PDB_CORPUS=$LT_CORPUS/pdb
# No lock report may mix into the stack traces compared.
WEAVE_OPTS="--threshold-ms 100000"

check "ltcheck builds" tools_build || exit 1
check "corpus builds" corpus_build || exit 1
check "PDB corpus builds" bash "$LT_ROOT/tests/corpus/pdb/build.sh" || exit 1

# The pdb check must have compared rewritten methods of every kind the corpus has.
compared_kinds() { # INPUT WOVEN KIND...
	local out kind
	out=$(ltcheck pdb "$1" "$2") || { echo "$out"; return 1; }
	shift 2
	for kind in "$@"; do
		grep -qE "^rewritten methods: .*[1-9][0-9]* $kind" <<<"$out" || { echo "$out" | tail -n 2; echo "missing: $kind"; return 1; }
	done
}

# More than 2048 MethodDefs: the PDB's HasCustomDebugInformation cells take 4 bytes (5 tag bits, II.24.2.6).
many_methods() { # INPUT WOVEN
	local n
	n=$(ltcheck pdb "$1" "$2" | sed -n 's/^pdb .*: \([0-9]*\) methods, .*/\1/p')
	echo "$n methods"
	[ "${n:-0}" -ge 2048 ]
}

# Weaving the input again, elsewhere, gives the same assembly and the same PDB.
deterministic() { # INPUT WOVEN_DIR PDB_NAME
	rm -rf "$LT_TMP/det" && mkdir "$LT_TMP/det" &&
		"$LT" weave -q $WEAVE_OPTS "$1" -o "$LT_TMP/det/$(basename "$1")" &&
		cmp "$2/$(basename "$1")" "$LT_TMP/det/$(basename "$1")" &&
		{ [ -z "$3" ] || cmp "$2/$3" "$LT_TMP/det/$3"; }
}

# Weaving a woven assembly changes neither file.
weave_again_noop() { # DIR DLL PDB_NAME
	local before after
	before=$(cd "$1" && md5sum "$2" ${3:+"$3"})
	"$LT" weave -q "$1/$2" || return 1
	after=$(cd "$1" && md5sum "$2" ${3:+"$3"})
	[ "$before" = "$after" ]
}

for v in Debug-portable Debug-embedded Release-portable Release-embedded; do
	src=$PDB_CORPUS/$v
	dir=$LT_TMP/$v
	pdb=
	case $v in *-portable) pdb=PdbLocks.pdb ;; esac
	cp -r "$src" "$dir"
	dotnet "$src/PdbLocks.dll" >"$LT_TMP/expected" 2>&1
	check "$v: un-woven stack traces carry file:line" grep -q ' Program.cs:[0-9]' "$LT_TMP/expected"
	check "$v: weave" "$LT" weave -q $WEAVE_OPTS "$dir/PdbLocks.dll" || continue
	[ -n "$pdb" ] && check "$v: the PDB file was rewritten" test "$(md5sum <"$src/$pdb")" != "$(md5sum <"$dir/$pdb")"
	dotnet "$dir/PdbLocks.dll" >"$LT_TMP/actual" 2>&1
	check_same "$v: same stack-trace file:line woven as un-woven" "$LT_TMP/expected" "$LT_TMP/actual"
	check "$v: ltcheck pdb: lines, scopes, async offsets, PDB id, checksum" ltcheck pdb "$src/PdbLocks.dll" "$dir/PdbLocks.dll"
	check "$v: rewritten methods with local scopes, hoisted scopes and async stepping were compared" \
		compared_kinds "$src/PdbLocks.dll" "$dir/PdbLocks.dll" "local scopes" "hoisted local scopes" "async stepping blobs"
	check "$v: more than 2048 methods (4-byte coded indexes in the PDB)" many_methods "$src/PdbLocks.dll" "$dir/PdbLocks.dll"
	check "$v: metadata reader accepts the assembly" ltcheck verify "$dir/PdbLocks.dll"
	check "$v: every method JIT-compiles" ltcheck jit "$dir/PdbLocks.dll"
	check "$v: deterministic, PDB written next to -o output" deterministic "$src/PdbLocks.dll" "$dir" "$pdb"
	check "$v: weaving again leaves the assembly and its PDB alone" weave_again_noop "$dir" PdbLocks.dll "$pdb"
done

# Written with -o beside the input: the input keeps its PDB; the output gets Woven.pdb, named in its
# CodeView entry, and the same stack-trace lines.
beside_input() {
	local d=$LT_TMP/beside sum
	rm -rf "$d" && cp -r "$PDB_CORPUS/Debug-portable" "$d" || return 1
	sum=$(md5sum <"$d/PdbLocks.pdb")
	"$LT" weave -q $WEAVE_OPTS "$d/PdbLocks.dll" -o "$d/Woven.dll" || return 1
	[ "$(md5sum <"$d/PdbLocks.pdb")" = "$sum" ] || { echo "the input's PDB changed"; return 1; }
	ltcheck pdb "$d/PdbLocks.dll" "$d/Woven.dll" | grep -q '^pdb Woven.pdb: .* 0 problems$' || { ltcheck pdb "$d/PdbLocks.dll" "$d/Woven.dll"; return 1; }
	cp "$d/PdbLocks.runtimeconfig.json" "$d/Woven.runtimeconfig.json"
	dotnet "$PDB_CORPUS/Debug-portable/PdbLocks.dll" >"$LT_TMP/beside.expected" 2>&1
	dotnet "$d/Woven.dll" >"$LT_TMP/beside.actual" 2>&1
	diff "$LT_TMP/beside.expected" "$LT_TMP/beside.actual"
}
check "-o beside the input: the input keeps its PDB, the output gets its own with the same lines" beside_input

# The other corpus programs (C#, VB, F#; Debug and Release), woven in a copy of their folder.
while read -r name runner file; do
	[ "$runner" = dotnet ] || continue
	dir=$LT_TMP/${name//\//-}
	cp -r "$(dirname "$file")" "$dir"
	check "$name: weave" "$LT" weave -q "$dir/$(basename "$file")" || continue
	check "$name: ltcheck pdb" ltcheck pdb "$file" "$dir/$(basename "$file")"
done < <(corpus_programs)

# Stale symbols: woven anyway, the symbols left byte for byte, one LT017 warning that names them.
stale_left_alone() { # NAME DIR DLL SYMBOLS EXPECTED_WARNING
	local sum
	sum=$(md5sum <"$2/$4")
	"$LT" weave -q "$2/$3" 2>"$LT_TMP/stale.err" || { cat "$LT_TMP/stale.err"; return 1; }
	grep -q "warning LT017: .*$5.*stale" "$LT_TMP/stale.err" || { echo "no warning: $(cat "$LT_TMP/stale.err")"; return 1; }
	[ "$(md5sum <"$2/$4")" = "$sum" ] || { echo "$4 changed"; return 1; }
	if "$LT" weave -q "$2/$3" 2>&1 | grep .; then
		echo "weaving again printed that"
		return 1
	fi
}

cp -r "$PDB_CORPUS/Debug-portable" "$LT_TMP/windows"
printf 'Microsoft C/C++ MSF 7.00\r\n\032DS\0\0\0' >"$LT_TMP/windows/PdbLocks.pdb"
check "Windows PDB: woven, PDB left alone, warned" stale_left_alone windows "$LT_TMP/windows" PdbLocks.dll PdbLocks.pdb "Windows PDB"

cp -r "$PDB_CORPUS/Debug-portable" "$LT_TMP/other"
cp "$PDB_CORPUS/Release-portable/PdbLocks.pdb" "$LT_TMP/other/PdbLocks.pdb"
check "another build's PDB: woven, PDB left alone, warned" stale_left_alone other "$LT_TMP/other" PdbLocks.dll PdbLocks.pdb "does not match"

mkdir -p "$LT_TMP/nocv"
cp "$LT_CORPUS/mono/Release/MonoLocks.exe" "$LT_TMP/nocv/"
cp "$PDB_CORPUS/Debug-portable/PdbLocks.pdb" "$LT_TMP/nocv/MonoLocks.pdb"
check "a PDB no CodeView entry names: woven, PDB left alone, warned" stale_left_alone nocv "$LT_TMP/nocv" MonoLocks.exe MonoLocks.pdb "no CodeView"

# A PDB that matched the input and is not rewritten (absent, or another build's beside it) must not
# match the woven assembly: put back later, it would give the lines of the input's IL (line 10 for a
# throw at line 9).  The woven assembly names a new PDB id (CodeView GUID) and says so (LT017).
stale_pdb_unused() { # DIR VARIANT: a woven PdbLocks.dll of the corpus' VARIANT, whose own PDB is put back beside it
	cp "$PDB_CORPUS/$2/PdbLocks.pdb" "$1/PdbLocks.pdb" || return 1
	dotnet "$1/PdbLocks.dll" >"$LT_TMP/putback.out" 2>&1
	grep -q '^throw inside a lock: ArgumentOutOfRangeException' "$LT_TMP/putback.out" || { echo "it did not run:"; cat "$LT_TMP/putback.out"; return 1; }
	if grep ' Program.cs:[0-9]' "$LT_TMP/putback.out"; then
		echo "the input's PDB, put back, still gives lines for the woven IL"
		return 1
	fi
}
no_pdb() {
	rm -rf "$LT_TMP/nopdb" && cp -r "$PDB_CORPUS/Release-portable" "$LT_TMP/nopdb" && rm "$LT_TMP/nopdb/PdbLocks.pdb" &&
		"$LT" weave -q $WEAVE_OPTS "$LT_TMP/nopdb/PdbLocks.dll" 2>"$LT_TMP/nopdb.err" || return 1
	grep -q "warning LT017: PdbLocks.pdb, which its debug directory names, is neither beside it nor embedded: the woven assembly names a new PDB id" "$LT_TMP/nopdb.err" ||
		{ echo "no warning: $(cat "$LT_TMP/nopdb.err")"; return 1; }
	[ "$(wc -l <"$LT_TMP/nopdb.err")" = 1 ] && [ ! -e "$LT_TMP/nopdb/PdbLocks.pdb" ] && ltcheck verify "$LT_TMP/nopdb/PdbLocks.dll" &&
		stale_pdb_unused "$LT_TMP/nopdb" Release-portable
}
check "no PDB file: woven, no PDB invented, a new PDB id named, warned; the PDB put back is not used" no_pdb
check "another build's PDB beside it: the input's own PDB put back later is not used" stale_pdb_unused "$LT_TMP/other" Debug-portable

# A package that carries its assemblies' PDBs (lib/<tfm>/X.pdb beside X.dll): rewritten with them.
in_package() {
	local d=$LT_TMP/pkg lib=lib/net8.0
	rm -rf "$d" && mkdir -p "$d/src/$lib" "$d/woven" && cp "$PDB_CORPUS/Release-portable/PdbLocks."{dll,pdb} "$d/src/$lib/" &&
		printf '<?xml version="1.0" encoding="utf-8"?>\n<package><metadata><id>PdbLocks</id><version>1.0.0</version><authors>LockTime</authors><description>PDB test</description></metadata></package>\n' >"$d/src/PdbLocks.nuspec" &&
		(cd "$d/src" && zip -qr ../PdbLocks.1.0.0.nupkg PdbLocks.nuspec lib) || return 1
	"$LT" weave -q $WEAVE_OPTS "$d/PdbLocks.1.0.0.nupkg" 2>"$d/err" || { cat "$d/err"; return 1; }
	[ ! -s "$d/err" ] || { echo "warned: $(cat "$d/err")"; return 1; }
	(cd "$d/woven" && unzip -q ../PdbLocks.1.0.0.nupkg) || return 1
	cmp -s "$d/woven/$lib/PdbLocks.pdb" "$d/src/$lib/PdbLocks.pdb" && { echo "the package's PDB was not rewritten"; return 1; }
	ltcheck pdb "$d/src/$lib/PdbLocks.dll" "$d/woven/$lib/PdbLocks.dll" >"$d/pdb.out" || { cat "$d/pdb.out"; return 1; }
	cp "$PDB_CORPUS/Release-portable/PdbLocks."{deps,runtimeconfig}.json "$d/woven/$lib/" &&
		dotnet "$PDB_CORPUS/Release-portable/PdbLocks.dll" >"$d/expected" 2>&1
	dotnet "$d/woven/$lib/PdbLocks.dll" >"$d/actual" 2>&1
	grep -q ' Program.cs:[0-9]' "$d/expected" && diff "$d/expected" "$d/actual"
}
check "a package's PDB beside its assembly: rewritten in the package, the same stack-trace lines" in_package

# Woven through a symbolic link in another folder: the PDB beside the file the link names is read
# (every site keeps its line) and rewritten with it; the link stays a link; no lock file is left.
through_link() {
	local d=$LT_TMP/link before
	rm -rf "$d" && mkdir -p "$d/real" "$d/links" && cp "$PDB_CORPUS/Release-portable/PdbLocks."{dll,pdb} "$d/real/" &&
		ln -s ../real/PdbLocks.dll "$d/links/Link.dll" || return 1
	before=$("$LT" list "$d/real/PdbLocks.dll" | sed 's/ IL_[0-9a-f]* / /') || return 1
	"$LT" weave -q "$d/links/Link.dll" || return 1
	[ -L "$d/links/Link.dll" ] || { echo "the link was replaced"; return 1; }
	[ "$(ls -A "$d/links")" = Link.dll ] && [ "$(ls "$d/real")" = "$(printf 'PdbLocks.dll\nPdbLocks.pdb')" ] ||
		{ echo "stray files:"; ls -A "$d/links" "$d/real"; return 1; }
	cmp -s "$d/real/PdbLocks.pdb" "$PDB_CORPUS/Release-portable/PdbLocks.pdb" && { echo "the PDB was not rewritten"; return 1; }
	# The same sites with the same lines, now marked woven, listed through the link and directly.
	[ "$("$LT" list "$d/links/Link.dll" | grep -c ' (woven)$')" = "$(echo "$before" | wc -l)" ] &&
		! "$LT" list "$d/links/Link.dll" | grep -v '\.cs:[0-9]' | grep . &&
		"$LT" list "$d/links/Link.dll" | cmp -s - <("$LT" list "$d/real/PdbLocks.dll") && ltcheck verify "$d/real/PdbLocks.dll"
}
if [[ $(basename "$LT") == *win-x64* ]]; then # hosts.sh: the Windows binary under wine
	skip "woven through a symbolic link" "wine shows the Windows binary a Unix symbolic link as the file itself, no reparse point"
else
	check "woven through a symbolic link: the PDB beside the file it names read and rewritten, the link kept" through_link
fi
done_testing
