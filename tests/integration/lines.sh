#!/usr/bin/env bash
# The source line a lock site reports, end to end on the C# corpus (Debug and Release): every lock
# in tests/corpus/csharp/Shop/Lines.cs carries a "site: NAME" marker on its line, found here with
# grep, and `locktime list` and the woven program's reports must name that line:
#   - C# 13 `lock` on a System.Threading.Lock (no sequence point of its own), first statement of a
#     method and not, with and without braces, after a comment that mentions a lock;
#   - two sites on one line add their columns (the columns of the two `lock` keywords);
#   - paths are relative to the common folder of the documents (Shop/Lines.cs, Program.cs);
#   - with the source file changed since the build (its hash no longer the PDB's), the lines the
#     sequence points alone give: Debug ones all, Release ones but the lock after a comment.
source "$(dirname "$0")/../lib.sh"
LT=${LOCKTIME:-$LT_BUILD/san/locktime}
SRC=$LT_ROOT/tests/corpus/csharp/Shop/Lines.cs

check "ltcheck builds" tools_build || exit 1
check "corpus builds" corpus_build || exit 1

marker_line() { # NAME
	grep -n "// site: $1\$" "$SRC" | cut -d: -f1
}

# The 1-based columns of the `lock` keywords on line N of the source.
lock_columns() { # N
	sed -n "$1p" "$SRC" | awk '{ s = $0; c = 0; while ((i = index(s, "lock (")) > 0) { c += i; print c; s = substr(s, i + 1) } }'
}

# `list` FILE names site METHOD at LOCATION.
listed_at() { # LIST_OUTPUT METHOD LOCATION
	grep -E "^LockCorpus\.Shop\.Lines::$2 IL_[0-9a-f]+ [^ ]+ $3\$" "$1" || { grep "::$2 " "$1"; echo "want $3"; return 1; }
}

# The woven program reports METHOD at LOCATION.
reported_at() { # REPORTS METHOD LOCATION
	grep -qE "^LockTime: LockCorpus\.Shop\.Lines::$2 .* at $3\$" "$1" || { grep "::$2 " "$1"; echo "want $3"; return 1; }
}

# `list` on the woven assembly: the sites of the input's list (method, kind, location as reports
# print it; "-" for the IL offset, which a woven assembly no longer knows), each marked "(woven)".
woven_list_same() { # INPUT_LIST WOVEN_DLL
	"$LT" list "$2" >"$LT_TMP/woven.list" || return 1
	grep -vc ' (woven)$' "$LT_TMP/woven.list" | grep -qx 0 || { echo "unmarked:"; grep -v ' (woven)$' "$LT_TMP/woven.list"; return 1; }
	# A site with no line reports its input offset: the input's list leaves that field out.
	diff <(list_fields <"$1" | awk -F'\t' '{ print $1, $3, ($4 != "" ? $4 : $2) }') \
		<(list_fields <"$LT_TMP/woven.list" | awk -F'\t' '{ print $1, $3, $4 }')
}

single_sites="FirstStatement:first NotFirst:not-first NoBraces:no-braces MonitorBeside:monitor"
two=$(marker_line two)
cols=$(lock_columns "$two" | tr '\n' ' ')

# Every marked site found by CHECKER (listed_at or reported_at) in OUTPUT at its marker's line.
all_sites_at_their_lines() { # LABEL CHECKER OUTPUT
	local pair method col
	for pair in $single_sites; do
		method=${pair%%:*}
		check "$1: $method at its lock's line" "$2" "$3" "$method" "Shop/Lines.cs:$(marker_line "${pair#*:}")"
	done
	for col in $cols; do
		check "$1: two on line $two: with column $col" "$2" "$3" TwoOnOneLine "Shop/Lines.cs:$two:$col"
	done
}

for config in Debug Release; do
	dll=$LT_CORPUS/csharp/$config/LockCorpus.dll
	"$LT" list "$dll" >"$LT_TMP/list.$config" 2>&1
	all_sites_at_their_lines "$config: listed" listed_at "$LT_TMP/list.$config"
	check "$config: a file in the common folder is named without folders" grep -qE '^LockCorpus\.Statements::[^ ]+ IL_[0-9a-f]+ [^ ]+ Program\.cs:[0-9]+$' "$LT_TMP/list.$config"

	rm -rf "$LT_TMP/$config" && cp -r "$(dirname "$dll")" "$LT_TMP/$config"
	check "$config: weave" "$LT" weave -q "$LT_TMP/$config/LockCorpus.dll" || continue
	LOCKTIME_THRESHOLD_MS=0 dotnet "$LT_TMP/$config/LockCorpus.dll" >"$LT_TMP/reports.$config" 2>&1
	all_sites_at_their_lines "$config: reported" reported_at "$LT_TMP/reports.$config"
	check "$config: locktime list on the woven assembly gives the same sites, marked woven" \
		woven_list_same "$LT_TMP/list.$config" "$LT_TMP/$config/LockCorpus.dll"
done

# The source changed since the build: a copy of the PDB whose Document hash of Lines.cs is flipped
# (the PDB id is not a hash over the Document table, so the PDB still matches the assembly).
changed_source() { # CONFIG
	local dir=$LT_TMP/changed-$1
	rm -rf "$dir" && cp -r "$LT_CORPUS/csharp/$1" "$dir" &&
		python3 - "$dir/LockCorpus.pdb" "$SRC" <<'PY'
import hashlib, sys
pdb, src = sys.argv[1], sys.argv[2]
data = bytearray(open(pdb, 'rb').read())
digest = hashlib.sha256(open(src, 'rb').read()).digest()
at = data.find(digest)
assert at > 0, "the Document hash of Lines.cs is not in the PDB"
data[at] ^= 0xFF
open(pdb, 'wb').write(data)
PY
}
for config in Debug Release; do
	check "$config: PDB copy with a changed source hash" changed_source "$config" || continue
	"$LT" list "$LT_TMP/changed-$config/LockCorpus.dll" >"$LT_TMP/list.changed.$config" 2>&1
	sites="FirstStatement:first NoBraces:no-braces"
	[ "$config" = Debug ] && sites="$sites NotFirst:not-first"
	for pair in $sites; do
		method=${pair%%:*}
		check "$config, source changed: $method listed at its lock's line" listed_at "$LT_TMP/list.changed.$config" "$method" "Shop/Lines.cs:$(marker_line "${pair#*:}")"
	done
	check "$config, source changed: the two on line $two told apart by column" \
		bash -c "[ \$(grep -cE '::TwoOnOneLine IL_[0-9a-f]+ [^ ]+ Shop/Lines.cs:$two:[0-9]+\$' '$LT_TMP/list.changed.$config' | tr -d ' ') = 2 ] &&
			[ \$(grep -oE 'Shop/Lines.cs:$two:[0-9]+' '$LT_TMP/list.changed.$config' | sort -u | wc -l) = 2 ]"
done

# Names a reader recognises (a Mono program, mcs, lines from its .mdb): a lambda's site is named
# after its method and the lambda's line; a name holding a newline and a control character (legal
# in metadata, II.22: the #Strings bytes are changed after the build) is escaped, so each site is one
# line in `locktime list` and each slow lock one line; a 1,500-character name is never cut.
names() {
	local d=$LT_TMP/names long line
	long=$(printf 'L%.0s' $(seq 1 500))
	rm -rf "$d" && mkdir -p "$d" || return 1
	cat >"$d/N.cs" <<CS
using System;
namespace N$long {
static class C$long {
	static readonly object G = new object();
	static void LockXY() { lock (G) { } }
	static void M$long() { lock (G) { } }
	static void Main() {
		Action a = () => { lock (G) { } }; // the lambda
		a();
		LockXY();
		M$long();
	}
}
}
CS
	line=$(grep -n '// the lambda' "$d/N.cs" | cut -d: -f1)
	mcs -debug -out:"$d/N.exe" "$d/N.cs" || return 1
	python3 - "$d/N.exe" <<'PY' || return 1
import sys
d = open(sys.argv[1], "rb").read()
assert d.count(b"LockXY\0") == 1
open(sys.argv[1], "wb").write(d.replace(b"LockXY\0", b"Lo\nk\x01Y\0"))
PY
	local name="N$long.C$long"
	"$LT" list "$d/N.exe" >"$d/list" || return 1
	[ "$(wc -l <"$d/list")" = 3 ] || { echo "not one line per site:"; cat "$d/list"; return 1; }
	grep -qxE "$name::Lo\\\\nk\\\\u0001Y IL_[0-9a-f]{4} Monitor\.Enter N\.cs:5" "$d/list" &&
		grep -qxE "$name::M$long IL_[0-9a-f]{4} Monitor\.Enter N\.cs:6" "$d/list" &&
		grep -qF "$name::Main (lambda at N.cs:$line) IL_" "$d/list" || { sed 's/L\{20,\}/L.../g' "$d/list"; return 1; }
	"$LT" weave -q "$d/N.exe" && LOCKTIME_THRESHOLD_MS=0 timeout 60 mono "$d/N.exe" 2>"$d/err" || return 1
	grep -v '^LockTime: ' "$d/err" && { echo "a line without the prefix"; return 1; }
	grep -qF "LockTime: $name::Lo\nk\u0001Y held " "$d/err" && grep -qF "LockTime: $name::M$long held " "$d/err" &&
		grep -qF "LockTime: $name::Main (lambda at N.cs:$line) held " "$d/err" || { sed 's/L\{20,\}/L.../g' "$d/err"; return 1; }
}
check "names: a lambda's line, escaped control characters, a long name whole (list, lines)" names
done_testing
