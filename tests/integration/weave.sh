#!/usr/bin/env bash
# `locktime weave` end to end on real programs (C#, VB, F# for .NET 10 in Debug and Release; C# for
# .NET Framework built by Mono's mcs and run under Mono) and on real third-party assemblies:
#   - stdout of the woven program equals the un-woven run; with threshold 0 every site reports;
#   - a contended lock reports the holder's hold (>= 50 ms) and the waiter's wait (>= 40 ms);
#   - every method JIT-compiles; ltcheck verify accepts the output;
#   - `locktime list` finds exactly the call sites an independent count finds;
#   - weaving twice = weaving once, byte for byte; the same input gives the same bytes;
#   - an assembly with no lock is left byte-identical; LOCKTIME_DISABLED=1 prints nothing.
source "$(dirname "$0")/../lib.sh"
LT=${LOCKTIME:-$LT_BUILD/san/locktime}

check "ltcheck builds" tools_build || exit 1
check "corpus builds" corpus_build || exit 1

# Every acquisition site that `list` names (but synchronized methods) appears in the reports.
all_sites_report() { # INPUT REPORTS
	"$LT" list "$1" | awk '$3 != "Synchronized" { print $1 " at " (NF >= 4 ? $4 : $2) }' | sort -u >"$LT_TMP/listed" || return 1
	sed -nE 's/^LockTime: ([^ ]+) .* at ([^ ]+)$/\1 at \2/p' "$2" | sort -u >"$LT_TMP/reported"
	[ -s "$LT_TMP/listed" ] && comm -23 "$LT_TMP/listed" "$LT_TMP/reported" | tee "$LT_TMP/missing" && [ ! -s "$LT_TMP/missing" ]
}

# `list` and ltcheck's independent System.Reflection.Metadata count agree.
list_matches_count() { # FILE
	local ours theirs
	ours=$("$LT" list "$1" | grep -vc ' Synchronized') || return 1
	theirs=$(ltcheck locks "$1" | sed -nE 's/^total [0-9]+: ([0-9]+) call sites.*/\1/p')
	echo "locktime list: $ours call sites; ltcheck: $theirs"
	[ "$ours" = "$theirs" ]
}

# Contended: one holder line with held >= 50 ms and one waiter line with waited >= 40 ms.
contended_reported() { # REPORTS METHOD
	awk -v m="$2" '$2 == m && $3 == "held" { if ($4 + 0 >= 50) h = 1; if ($7 + 0 >= 40) w = 1 }
		END { exit !(h && w) }' "$1" || { grep -F "$2" "$1"; return 1; }
}

weave_twice_is_once() { # FILE
	cp "$1" "$LT_TMP/twice.dll" && "$LT" weave -q "$LT_TMP/twice.dll" && cmp "$1" "$LT_TMP/twice.dll"
}

deterministic() { # INPUT WOVEN
	"$LT" weave -q --threshold-ms 0 "$1" -o "$LT_TMP/again.dll" && cmp "$2" "$LT_TMP/again.dll"
}

while read -r name runner file; do
	dir=$LT_TMP/${name//\//-}
	rm -rf "$dir"; cp -r "$(dirname "$file")" "$dir"
	out=$dir/$(basename "$file")
	"$runner" "$file" >"$LT_TMP/expected" 2>/dev/null
	check "$name: list matches an independent count" list_matches_count "$file"
	check "$name: weave" "$LT" weave --threshold-ms 0 "$out" || continue
	check "$name: metadata reader accepts it" ltcheck verify "$out"
	[ "$runner" = dotnet ] && check "$name: every method JIT-compiles" ltcheck jit "$out"
	"$runner" "$out" >"$LT_TMP/actual" 2>"$LT_TMP/reports"
	check_same "$name: same stdout" "$LT_TMP/expected" "$LT_TMP/actual"
	check "$name: every site reports at threshold 0" all_sites_report "$file" "$LT_TMP/reports"
	case $name in csharp/*)
		check "$name: contended lock: hold and wait measured" contended_reported "$LT_TMP/reports" LockCorpus.Threads::Contended ;;
	esac
	LOCKTIME_DISABLED=1 "$runner" "$out" >"$LT_TMP/actual" 2>"$LT_TMP/reports"
	check_same "$name: LOCKTIME_DISABLED=1: same stdout" "$LT_TMP/expected" "$LT_TMP/actual"
	check "$name: LOCKTIME_DISABLED=1: no report" test ! -s "$LT_TMP/reports"
	check "$name: weaving again is a no-op" weave_twice_is_once "$out"
	check "$name: deterministic output" deterministic "$file" "$out"
done < <(corpus_programs)

# Third-party code: woven, readable, and (for .NET assemblies) every method JIT-compiles.
# Mono's mscorlib has no Stopwatch and cannot reference System.dll, so it is refused, clearly.
corlib_refused() { # FILE
	"$LT" weave "$1" -o "$LT_TMP/corlib.dll" 2>&1 | grep -q 'error LT015: .*core library.*Stopwatch' && [ ! -e "$LT_TMP/corlib.dll" ]
}
while read -r file; do
	name=$(basename "$file")
	out=$LT_TMP/tp/$name
	if [ "$name" = mscorlib.dll ]; then
		check "$name: list matches an independent count" list_matches_count "$file"
		check "$name: refused with a clear LT015 error" corlib_refused "$file"
		continue
	fi
	mkdir -p "$LT_TMP/tp"
	check "$name: list matches an independent count" list_matches_count "$file"
	check "$name: weave" "$LT" weave -q "$file" -o "$out" || continue
	check "$name: metadata reader accepts it" ltcheck verify "$out"
	case $name in
	Newtonsoft.Json.dll | Serilog.dll | NLog.dll | log4net.dll | Polly*.dll)
		check "$name: every method JIT-compiles" ltcheck jit "$out" "$(dirname "$file")" ;;
	esac
done < <(corpus_thirdparty)

# No lock: the file is left byte-identical, and the tool says so.
nolock=/usr/lib/mono/4.5/Facades/System.Runtime.dll
cp "$nolock" "$LT_TMP/nolock.dll"
check "no lock: nothing to weave" "$LT" weave "$LT_TMP/nolock.dll"
check "no lock: byte-identical" cmp "$nolock" "$LT_TMP/nolock.dll"

# Bad input: exit 1, an LT0NN error, the file untouched; usage errors exit 2.
printf 'MZ not a PE file' >"$LT_TMP/bad.dll"
cp "$LT_TMP/bad.dll" "$LT_TMP/bad.orig"
"$LT" weave "$LT_TMP/bad.dll" 2>"$LT_TMP/err"
rc=$?
if [ "$rc" = 1 ] && grep -q "bad.dll: error LT002: " "$LT_TMP/err" && cmp -s "$LT_TMP/bad.dll" "$LT_TMP/bad.orig"; then
	ok "bad input: error LT002, exit 1, file untouched"
else
	not_ok "bad input: error LT002, exit 1, file untouched" "exit $rc: $(cat "$LT_TMP/err")"
fi
"$LT" weave --threshold-ms nope "$LT_TMP/bad.dll" 2>/dev/null
check "usage error exits 2" test $? = 2
