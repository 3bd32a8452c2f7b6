#!/usr/bin/env bash
# The image layer end to end: every corpus program and third-party assembly is opened, every method
# body edited (a nop and one more local), TypeRef/MemberRef/TypeDef/Field/MethodDef/Param rows added,
# and written back by the C image layer (tests/tools/roundtrip.c). Then:
#   - System.Reflection.Metadata reads every table, heap, body and signature (ltcheck verify);
#   - every method of a .NET assembly JIT-compiles (ltcheck jit: RuntimeHelpers.PrepareMethod);
#   - the program prints exactly what the input printed;
#   - with the bodies left alone, the disassembly equals the input's but for the added type.
source "$(dirname "$0")/../lib.sh"
RT=${LT_ROUNDTRIP:-$LT_BUILD/san/lt-roundtrip}

check "ltcheck builds" tools_build || exit 1
check "corpus builds" corpus_build || exit 1

# Disassembly of OUT equals IN's once the added probe type is taken out.
dump_matches() { # IN OUT
	ltcheck dump "$1" >"$LT_TMP/in.dump" && ltcheck dump "$2" >"$LT_TMP/out.dump" || return 1
	awk '/^type <LockTimeProbe>/ { skip = 1; next } /^type / { skip = 0 } !skip' "$LT_TMP/out.dump" >"$LT_TMP/out.filtered"
	grep -q '^type <LockTimeProbe>' "$LT_TMP/out.dump" && diff "$LT_TMP/in.dump" "$LT_TMP/out.filtered"
}

while read -r name runner file; do
	dir=$LT_TMP/${name//\//-}
	rm -rf "$dir"; cp -r "$(dirname "$file")" "$dir"
	out=$dir/$(basename "$file")
	"$runner" "$file" >"$LT_TMP/expected" 2>&1
	check "$name: rows added, bodies kept" "$RT" --rows-only "$file" "$LT_TMP/rows-only" &&
		check "$name: disassembly unchanged but for the edits" dump_matches "$file" "$LT_TMP/rows-only"
	check "$name: every body edited and written" "$RT" "$file" "$out" || continue
	check "$name: metadata reader accepts it" ltcheck verify "$out"
	[ "$runner" = dotnet ] && check "$name: every method JIT-compiles" ltcheck jit "$out"
	"$runner" "$out" >"$LT_TMP/actual" 2>&1
	check_same "$name: same output" "$LT_TMP/expected" "$LT_TMP/actual"
done < <(corpus_programs)

while read -r file; do
	name=$(basename "$file")
	out=$LT_TMP/tp/$name
	mkdir -p "$LT_TMP/tp"
	check "$name: every body edited and written" "$RT" "$file" "$out" || continue
	check "$name: metadata reader accepts it" ltcheck verify "$out"
	case $name in
	Newtonsoft.Json.dll | Serilog.dll | NLog.dll | log4net.dll | Polly*.dll)
		check "$name: every method JIT-compiles" ltcheck jit "$out" "$(dirname "$file")" ;;
	esac
	check "$name: rows added, bodies kept" "$RT" --rows-only "$file" "$LT_TMP/rows-only.dll" &&
		check "$name: disassembly unchanged but for the edits" dump_matches "$file" "$LT_TMP/rows-only.dll"
done < <(corpus_thirdparty)

# Malformed inputs: an error and exit status 1, never a crash, and no output file.
printf 'MZ not really a PE file' >"$LT_TMP/bad.dll"
head -c 3000 "$LT_CORPUS/csharp/Release/LockCorpus.dll" >"$LT_TMP/truncated.dll"
for bad in bad.dll truncated.dll; do
	"$RT" "$LT_TMP/$bad" "$LT_TMP/$bad.out" >"$LT_TMP/err" 2>&1
	rc=$?
	if [ "$rc" = 1 ] && grep -q 'error LT0' "$LT_TMP/err" && [ ! -e "$LT_TMP/$bad.out" ]; then
		ok "$bad: refused with an LT0NN error"
	else
		not_ok "$bad: refused with an LT0NN error" "exit $rc: $(cat "$LT_TMP/err")"
	fi
done
done_testing
