#!/usr/bin/env bash
# Runs fuzz targets one after the other, each for FUZZ_SECONDS seconds (default 60), and prints one TAP
# line per target: "ok - fuzz TARGET: N runs in S s, corpus C inputs" or "not ok - ..." with the
# sanitizer's report and the saved input.  `make fuzz` calls it; tests/integration/fuzz.sh runs it briefly.
#   bash fuzz/run.sh [TARGET...]        (default: image sig weave roundtrip pdb mdb nupkg report monokey; the binaries are built with make)
# Each input gets 10 s and may allocate 512 MiB at once (inputs are a few KiB: more means that a
# size read from the file was trusted).  Under build/fuzz: seed/TARGET (made from build/corpus when
# missing), corpus/TARGET (what the fuzzer found, kept between runs), crash/TARGET (inputs that
# crashed: fix the bug, then copy the input to fuzz/regress/TARGET/ so that `make test` keeps
# checking it), logs/TARGET.log, and stats.tsv (one line per run: date, target, seconds it ran,
# executions, result, corpus size; docs/TESTING.md sums them up).
set -u
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(image sig weave roundtrip pdb mdb nupkg report monokey)
out=build/fuzz
corpus=build/corpus

make -s "${targets[@]/#/$out/fuzz_}" "$out/fuzz-seeds" || { echo "not ok - fuzz: the fuzz targets build"; exit 1; }
if [ ! -f "$corpus/csharp/.built" ]; then
	bash tests/corpus/build.sh || { echo "not ok - fuzz: the corpus builds"; exit 1; }
fi

# Seed inputs: the corpus programs (small assemblies, with and without locks; for the weave also
# one with an embedded PDB), their portable PDBs, the signature blobs of those and of two
# third-party libraries (generics, custom modifiers), and small packages holding a corpus program
# (deflated and stored) plus the SDK's smallest template; the run-time's report in docs/report-format.md.
seed() { # TARGET
	local dir=$out/seed/$1
	[ -d "$dir" ] && return 0
	mkdir -p "$dir.tmp"
	case $1 in
	image | weave | roundtrip)
		for f in "$corpus"/*/*/LockCorpus*.dll "$corpus"/*/*/LockCorpus48.exe "$corpus"/mono/*/*.exe \
			"$corpus"/synconly/*.exe; do
			cp "$f" "$dir.tmp/$(echo "$f" | tr / _)"
		done
		# An embedded portable PDB, for the weave's source lines and PDB rewriting.
		[ "$1" = weave ] && cp "$corpus"/pdb/Release-embedded/PdbLocks.dll "$dir.tmp/" 2>/dev/null
		cp /usr/lib/mono/4.5/Facades/System.Runtime.dll "$dir.tmp/" 2>/dev/null ;;
	pdb)
		for f in "$corpus"/*/*/*.pdb; do
			cp "$f" "$dir.tmp/$(echo "$f" | tr / _)"
		done ;;
	mdb)
		cp "$corpus"/mono/Debug/*.mdb "$dir.tmp/" ;;
	sig)
		"$out/fuzz-seeds" "$dir.tmp" "$corpus"/*/*/LockCorpus*.dll "$corpus"/mono/*/*.exe \
			"$corpus"/thirdparty/{Newtonsoft.Json,Polly.Core}.dll || return 1 ;;
	nupkg)
		python3 - "$dir.tmp" "$corpus"/csharp/Release/LockCorpus.dll "$corpus"/vb/Release/LockCorpusVb.dll <<'EOF' || return 1
import sys, zipfile
out, dlls = sys.argv[1], sys.argv[2:]
nuspec = ('<?xml version="1.0" encoding="utf-8"?><package xmlns="http://schemas.microsoft.com/packaging/2013/05/nuspec.xsd">'
          '<metadata><id>Fuzz.Seed</id><version>1.0.0</version><authors>x</authors><description>x</description>'
          '<dependencies><group targetFramework="net8.0" /></dependencies></metadata></package>')
for i, dll in enumerate(dlls):
    for kind, method in (("deflated", zipfile.ZIP_DEFLATED), ("stored", zipfile.ZIP_STORED)):
        with zipfile.ZipFile(f"{out}/seed{i}-{kind}.nupkg", "w", method) as z:
            z.writestr("Fuzz.Seed.nuspec", nuspec)
            z.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types />')
            z.write(dll, "lib/net8.0/" + dll.rsplit("/", 1)[1])
EOF
		cp /usr/share/dotnet/templates/*/microsoft.mcpserver.*.nupkg "$dir.tmp/" 2>/dev/null ;;
	report)
		# the report of a real run shown in docs/report-format.md (fuzz/regress/report holds others)
		sed -n '/^```json$/,/^```$/p' docs/report-format.md | sed '1d;$d' >"$dir.tmp/docs-example.json"
		[ -s "$dir.tmp/docs-example.json" ] || return 1 ;;
	monokey)
		# none beyond fuzz/regress/monokey, which holds a key container file Mono wrote
		;;
	esac
	mv "$dir.tmp" "$dir"
}

failed=0
for t in "${targets[@]}"; do
	log=$out/logs/$t.log
	mkdir -p "$out/corpus/$t" "$out/crash/$t" "$out/logs" "fuzz/regress/$t"
	if ! seed "$t"; then
		echo "not ok - fuzz $t: seed inputs"; failed=1; continue
	fi
	before=$(find "$out/crash/$t" -type f | wc -l)
	start=$SECONDS
	# FUZZ_RUNS and FUZZ_SEED make a run repeatable (CI): the same inputs are tried every time.
	"$out/fuzz_$t" -max_total_time="$seconds" ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} ${FUZZ_SEED:+-seed=$FUZZ_SEED} -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 -print_final_stats=1 \
		-artifact_prefix="$out/crash/$t/" "$out/corpus/$t" "$out/seed/$t" "fuzz/regress/$t" $(ls -d "fuzz/corpus/$t" 2>/dev/null) >"$log" 2>&1
	rc=$?
	elapsed=$((SECONDS - start))
	runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$log" | tail -n 1)
	size=$(find "$out/corpus/$t" "$out/seed/$t" -type f | wc -l)
	new=$(find "$out/crash/$t" -type f | wc -l)
	result=ok
	[ "$rc" -eq 0 ] && [ "$new" -eq "$before" ] || result=crash
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "$elapsed" "${runs:-0}" "$result" "$size" >>"$out/stats.tsv"
	if [ "$result" = ok ]; then
		echo "ok - fuzz $t: ${runs:-0} runs in $elapsed s, corpus $size inputs"
	else
		failed=1
		echo "not ok - fuzz $t: exit $rc after ${runs:-0} runs (log: $log)"
		grep -E 'ERROR|SUMMARY|runtime error|^fuzz: |^    #[0-9] |Test unit written' "$log" | head -n 30 | sed 's/^/# /'
	fi
done
exit "$failed"
