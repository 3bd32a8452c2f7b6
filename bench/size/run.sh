#!/usr/bin/env bash
# Woven file sizes: each input woven with `locktime weave -o`, its size against the input's, one
# line per input:
#   size: mscorlib.dll 466 sites: input 4811264 bytes, woven 4870144 bytes (+1.2%)
#   bench/size/run.sh [INPUT...]        BEFORE=/path/to/an/older/locktime adds its woven size
# Default inputs: Debian Mono's mscorlib.dll and System.dll, the NuGet libraries of the test corpus
# (build/corpus/thirdparty), a corpus program (C#, Release) and a lock-free assembly (left alone).
# The woven assembly grows by the rewritten bodies, the new metadata rows and the stub type only
# (docs/image-layout.md); with BEFORE, the older binary's output is measured the same way.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
locktime=${LOCKTIME:-build/locktime}
out=build/bench/size
[ -n "${LOCKTIME:-}" ] || make -s build/locktime
inputs=("$@")
if [ ${#inputs[@]} -eq 0 ]; then
	bash tests/corpus/build.sh
	inputs=(/usr/lib/mono/4.5/mscorlib.dll /usr/lib/mono/4.5/System.dll)
	for name in Newtonsoft.Json NLog Serilog log4net Polly; do
		[ -f "build/corpus/thirdparty/$name.dll" ] && inputs+=("build/corpus/thirdparty/$name.dll")
	done
	inputs+=(build/corpus/csharp/Release/LockCorpus.dll /usr/lib/mono/4.5/Accessibility.dll)
fi
rm -rf "$out"
mkdir -p "$out"
for in in "${inputs[@]}"; do
	name=$(basename "$in")
	woven=$out/$name
	said=$("$locktime" weave -o "$woven" "$in" 2>>"$out/warnings.log")
	sites=$(sed -n 's/.*woven, \([0-9]*\) lock site.*/\1/p' <<<"$said")
	sites=${sites:-0}
	line=$(printf 'size: %s %d sites: input %d bytes, woven %d bytes (%+.1f%%)' "$name" "$sites" \
		"$(stat -L -c %s "$in")" "$(stat -L -c %s "$woven")" \
		"$(awk -v a="$(stat -L -c %s "$in")" -v b="$(stat -L -c %s "$woven")" 'BEGIN { print (b - a) * 100 / a }')")
	if [ -n "${BEFORE:-}" ]; then
		mkdir -p "$out/before"
		"$BEFORE" weave -q -o "$out/before/$name" "$in" 2>>"$out/warnings.log"
		line+=$(printf '; before this layout %d bytes (%+.1f%%)' "$(stat -L -c %s "$out/before/$name")" \
			"$(awk -v a="$(stat -L -c %s "$in")" -v b="$(stat -L -c %s "$out/before/$name")" 'BEGIN { print (b - a) * 100 / a }')")
	fi
	echo "$line"
done
