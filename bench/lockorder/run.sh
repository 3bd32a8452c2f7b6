#!/usr/bin/env bash
# The lock order on per-object locks: bench/lockorder (one thread, nested locks on many objects), built
# twice - un-woven, and woven by `locktime weave` - and run ROUNDS times (default 3) per case, the three
# runs interleaved in each round: un-woven, woven with LOCKTIME_LOCK_ORDER=0 (timing alone), woven with
# the lock order on. Prints the medians of the program's own wall time (its loop, after a warm-up) and
# the ratio of order on to order off (the target: at most 2x on 10,000 accounts), and the time per
# transfer as the accounts grow (the target: flat, linear in acquisitions, up to 10^6 objects).
# Cases: CASES (default below), each "name:arguments".
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
locktime=${LOCKTIME:-build/locktime}
rounds=${ROUNDS:-3}
out=build/bench/lockorder
[ -n "${LOCKTIME:-}" ] || make -s build/locktime
rm -rf "$out"
mkdir -p "$out"
cp bench/lockorder/Program.cs bench/lockorder/LockOrderBench.csproj "$out/"
timeout 600 dotnet build "$out/LockOrderBench.csproj" -c Release -o "$out/plain" -nologo -v q -p:UseSharedCompilation=false >"$out/build.log"
cp -r "$out/plain" "$out/woven"
"$locktime" weave -q "$out/woven/LockOrderBench.dll"
default_cases="accounts-10k:accounts 10000 200000
accounts-100k:accounts 100000 200000
accounts-1M:accounts 1000000 200000
random-10k:accounts 10000 200000 random
fresh-1M:fresh 1000000"
cases=${CASES:-$default_cases}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
run() { timeout 900 env "$@" 2>/dev/null | awk '/^elapsed/ { print $2 " " $4 }'; }
while IFS= read -r line; do
	name=${line%%:*}
	args=${line#*:}
	plain=() off=() on=() cplain=() coff=() con=()
	for r in $(seq "$rounds"); do
		read -r w c <<<"$(run LOCKTIME_SUMMARY=0 dotnet "$out/plain/LockOrderBench.dll" $args)"
		plain+=("$w") cplain+=("$c")
		read -r w c <<<"$(run LOCKTIME_SUMMARY=0 LOCKTIME_LOCK_ORDER=0 dotnet "$out/woven/LockOrderBench.dll" $args)"
		off+=("$w") coff+=("$c")
		read -r w c <<<"$(run LOCKTIME_SUMMARY=0 LOCKTIME_LOCK_ORDER=1 dotnet "$out/woven/LockOrderBench.dll" $args)"
		on+=("$w") con+=("$c")
	done
	m_plain=$(printf '%s\n' "${plain[@]}" | median)
	m_off=$(printf '%s\n' "${off[@]}" | median)
	m_on=$(printf '%s\n' "${on[@]}" | median)
	c_plain=$(printf '%s\n' "${cplain[@]}" | median)
	c_off=$(printf '%s\n' "${coff[@]}" | median)
	c_on=$(printf '%s\n' "${con[@]}" | median)
	ratio=$(awk -v a="$m_on" -v b="$m_off" 'BEGIN { printf "%.2f", a / b }')
	cratio=$(awk -v a="$c_on" -v b="$c_off" 'BEGIN { printf "%.2f", a / b }')
	n=$(echo "$args" | awk '{ print ($1 == "fresh") ? $2 : $3 }')
	per=$(awk -v a="$c_on" -v b="$c_off" -v n="$n" 'BEGIN { printf "%.0f", (a - b) * 1e6 / n }')
	echo "lockorder: $name ($args): medians of $rounds, wall: un-woven $m_plain ms, lock order off $m_off ms, on $m_on ms ($ratio x off); CPU: $c_plain, $c_off, $c_on ms ($cratio x off, +$per ns per iteration); wall on [${on[*]}], off [${off[*]}], un-woven [${plain[*]}]"
	if [ "$name" = accounts-10k ]; then
		met=$(awk -v r="$ratio" -v c="$cratio" 'BEGIN { print (r <= 2 && c <= 2) ? "met" : "NOT MET" }')
		echo "lockorder: target lock order on at most 2x off on 10,000 accounts: wall ${ratio}x, CPU ${cratio}x, $met"
	fi
done <<<"$cases"
