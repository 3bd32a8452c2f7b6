#!/usr/bin/env bash
# Checks the corpus and ltcheck themselves (TAP): every program builds, runs and prints the same thing
# twice; ltcheck verify/jit/dump/locks accept every corpus assembly; verify and jit reject a damaged copy.
# Run: bash tests/integration/corpus.sh   (builds ltcheck and the corpus first when needed)
source "$(dirname "$0")/../lib.sh"

check "ltcheck builds" tools_build || exit 1
check "corpus builds" corpus_build || exit 1
if [ -s "$LT_CORPUS/thirdparty/MISSING.txt" ]; then
	echo "# third-party assemblies that did not restore: $(tr '\n' ' ' <"$LT_CORPUS/thirdparty/MISSING.txt")"
fi

# Each program's output is whatever the program prints (never written down here); it must exit 0,
# say "done", and print the same on a second run (the weaving tests compare woven runs to it).
run_twice() { # RUNNER FILE
	"$1" "$2" >"$LT_TMP/first" 2>&1 || { cat "$LT_TMP/first"; return 1; }
	"$1" "$2" >"$LT_TMP/second" 2>&1 || { cat "$LT_TMP/second"; return 1; }
	grep -q 'done$' "$LT_TMP/first" && diff "$LT_TMP/first" "$LT_TMP/second"
}

# The lock sites ltcheck finds must include a Monitor or Lock acquisition.
has_locks() { # FILE
	ltcheck locks "$1" >"$LT_TMP/locks" || return 1
	tail -n 1 "$LT_TMP/locks"
	grep -qE '^total [1-9]' "$LT_TMP/locks"
}

# The dump of an assembly must be stable: the same text twice.
dump_stable() { # FILE
	ltcheck dump "$1" >"$LT_TMP/dump1" && ltcheck dump "$1" >"$LT_TMP/dump2" &&
		[ -s "$LT_TMP/dump1" ] && cmp -s "$LT_TMP/dump1" "$LT_TMP/dump2"
}

while read -r name runner file; do
	check "$name runs deterministically" run_twice "$runner" "$file"
	check "$name verify" ltcheck verify "$file"
	check "$name jit" ltcheck jit "$file"
	check "$name locks" has_locks "$file"
	check "$name dump" dump_stable "$file"
done < <(corpus_programs)

while read -r file; do
	check "thirdparty $(basename "$file") verify" ltcheck verify "$file"
	check "thirdparty $(basename "$file") dump" dump_stable "$file"
done < <(corpus_thirdparty)
# Only the NuGet assemblies target a framework the .NET 10 JIT can load (Mono's own class libraries can't be).
for file in "$LT_CORPUS"/thirdparty/{Newtonsoft.Json,Serilog,NLog,log4net,Polly,Polly.Core}.dll; do
	[ -f "$file" ] && check "thirdparty $(basename "$file") jit" ltcheck jit "$file"
done

# A damaged copy: the first `call` to a MemberRef (0x28, token 0x0Axxxxxx) gets row 0xFFFF, which
# does not exist. verify and jit must both say so.
damaged=$LT_TMP/Damaged/LockCorpus.dll
mkdir -p "$(dirname "$damaged")"
cp "$LT_CORPUS"/csharp/Release/LockCorpus.* "$(dirname "$damaged")/"
perl -0777 -pi -e 's/\x28..\x00\x0A/\x28\xff\xff\x00\x0A/s' "$damaged"
expect_failure() { # PATTERN CMD...: CMD must fail and print PATTERN
	local pattern=$1 out
	shift
	out=$("$@" 2>&1) && { echo "unexpectedly succeeded: $out"; return 1; }
	grep -qE "$pattern" <<<"$out" || { echo "$out"; return 1; }
}
check "verify rejects a bad call token" expect_failure 'token 0x0a00ffff is not a row' ltcheck verify "$damaged"
check "jit rejects a bad call token" expect_failure '^FAIL .*(BadImageFormat|MissingMethod|InvalidProgram)' ltcheck jit "$damaged"

# FSharp.Core ships beside the F# program: a large real library built by another compiler.
check "FSharp.Core verify" ltcheck verify "$LT_CORPUS/fsharp/Release/FSharp.Core.dll"
check "FSharp.Core jit" ltcheck jit "$LT_CORPUS/fsharp/Release/FSharp.Core.dll"
done_testing
