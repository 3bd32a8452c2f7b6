#!/usr/bin/env bash
# Generates and compiles the weave-benchmark libraries: for each SIZE (a method count; default
# 12500 25000 50000 100000) build/bench/gen/<SIZE>/Gen<SIZE>.dll (+ .pdb), a net10.0 Release class
# library with SIZE methods of which LOCK_PERCENT (default 5) % hold a lock (bench/gen/gen.py; another
# percentage builds build/bench/gen/<SIZE>-<PERCENT>/).
# With CALLS=1 (the "lock calls per method" series) SIZE is a count of lock calls instead:
# build/bench/gen/Calls<SIZE>/GenCalls<SIZE>.dll has one method of SIZE `lock` statements.
# A size already built is skipped (delete its folder to rebuild). Prints the compile time of each.
set -euo pipefail
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
# No MSBuild node or compiler server outlives the build (the machine is shared).
export MSBUILDDISABLENODEREUSE=1 DOTNET_CLI_USE_MSBUILD_SERVER=0

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out_root=$root/build/bench/gen
pct=${LOCK_PERCENT:-5}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(12500 25000 50000 100000)

mkdir -p "$out_root"
# Empty Directory.Build.props/.targets here stop MSBuild's upward search, so nothing above build/bench
# changes how the library is built.
for f in Directory.Build.props Directory.Build.targets; do
	[ -f "$out_root/$f" ] || printf '<Project>\n</Project>\n' >"$out_root/$f"
done

for size in "${sizes[@]}"; do
	[[ "$size" =~ ^[0-9]+$ ]] || { echo "build.sh: SIZE must be a method count, not '$size'" >&2; exit 2; }
	if [ -n "${CALLS:-}" ]; then
		name=GenCalls$size methods=1 locks=1 calls=$size
	else
		name=Gen$size methods=$size locks=$((size * pct / 100)) calls=1
	fi
	dir=$out_root/${name#Gen}
	[ -n "${CALLS:-}" ] || [ "$pct" = 5 ] || dir=$dir-$pct # another LOCK_PERCENT: a library of its own
	dll=$dir/$name.dll
	# .built records the lock count it was made with, so another LOCK_PERCENT rebuilds.
	if [ -f "$dll" ] && [ "$(cat "$dir/.built" 2>/dev/null)" = "$locks" ]; then
		echo "gen $size: up to date ($dll)"
		continue
	fi
	rm -rf "$dir"
	mkdir -p "$dir/proj"
	python3 "$here/gen.py" "$dir/src" "$methods" "$locks" "$calls"
	cp "$here/Gen.csproj" "$dir/proj/$name.csproj"
	start=$EPOCHREALTIME
	if ! dotnet build "$dir/proj/$name.csproj" -c Release -o "$dir" -nologo -v q -tl:off \
		-nodeReuse:false -p:UseSharedCompilation=false >"$dir/build.log" 2>&1; then
		tail -n 20 "$dir/build.log" >&2
		echo "build.sh: compiling $name failed (log: $dir/build.log)" >&2
		exit 1
	fi
	end=$EPOCHREALTIME
	echo "$locks" >"$dir/.built"
	printf 'gen %s: %d methods, %d lock sites, compiled in %.1f s -> %s\n' \
		"$size" "$methods" "$((locks * calls))" "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" "$dll"
done
