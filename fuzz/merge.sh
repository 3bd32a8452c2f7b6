#!/usr/bin/env bash
# Keeps what fuzzing found: merges each target's working corpus (build/fuzz/corpus/TARGET, grown by
# `make fuzz`) into fuzz/corpus/TARGET, the minimized corpus kept in the repository, which fuzz/run.sh
# reads on every machine. libFuzzer's -merge=1 adds only the inputs that reach code the kept ones do not.
# The targets that read assemblies share one (fuzz/corpus/{image,weave,roundtrip} are links to
# fuzz/corpus/assemblies): each adds what reaches code of its own.
#   bash fuzz/merge.sh [TARGET...]     (default: every target with a working corpus; `make fuzz-corpus`)
set -u
cd "$(dirname "$0")/.."
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(image sig weave roundtrip pdb mdb nupkg report monokey)
for t in "${targets[@]}"; do
	[ -d "build/fuzz/corpus/$t" ] || continue
	make -s "build/fuzz/fuzz_$t" || exit 1
	[ -e "fuzz/corpus/$t" ] || mkdir -p "fuzz/corpus/$t"
	before=$(find "fuzz/corpus/$t/" -type f | wc -l)
	timeout 3600 "build/fuzz/fuzz_$t" -merge=1 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
		"fuzz/corpus/$t" "build/fuzz/corpus/$t" >"build/fuzz/logs/merge-$t.log" 2>&1 ||
		{ echo "fuzz/merge.sh: $t: the merge failed (build/fuzz/logs/merge-$t.log)"; exit 1; }
	echo "$t: $before -> $(find "fuzz/corpus/$t/" -type f | wc -l) inputs, $(du -sh "fuzz/corpus/$t/" | cut -f1)"
done
