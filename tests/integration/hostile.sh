#!/usr/bin/env bash
# Hostile and broken inputs, end to end through `locktime weave` (in place, as a build runs it):
#   - thousands of truncated, bit-flipped and spliced copies of real assemblies (the release build;
#     a smaller sample with the ASan+UBSan build): each gives exit 1 with "error LT0NN" and the
#     input byte-identical, or exit 0 with the file left as it was or woven; a woven one reads
#     back, weaves again as "already woven", and (a sample) passes ltcheck verify whenever the
#     broken input itself did;
#   - SIGKILL while writing (in the write, before the rename, after it; and at random times):
#     the file is the old one or the new one, and a later run leaves no temporary or lock file;
#   - parallel weaves of one file (spelled differently): woven once, the others see it woven;
#   - a SizeOfHeaders past the file (refused, input untouched) and one whose table fills the headers
#     (woven, headers grown);
#   - assemblies with thousands of lock calls: woven within seconds;
#   - the whole corpus: weaving is deterministic and weaving twice equals weaving once.
# HOSTILE_N (default 700) scales the number of broken inputs: 3/2 N truncations, 2 N flips, N splices.
source "$(dirname "$0")/../lib.sh"
FAST=$LT_BUILD/locktime
SAN=${LOCKTIME:-$LT_BUILD/san/locktime}
N=${HOSTILE_N:-700}
MUTATE=$LT_BUILD/hostile_mutate
FAILED=$LT_BUILD/hostile/failed

check "ltcheck builds" tools_build || exit 1
check "corpus builds" corpus_build || exit 1
check "release build of locktime" make -s -C "$LT_ROOT" build/locktime || exit 1
check "mutator builds" cc -std=c11 -O2 -Wall -Wextra -o "$MUTATE" "$LT_ROOT/tests/integration/hostile_mutate.c" || exit 1
mkdir -p "$FAILED"

inputs=()
while read -r _ _ file; do inputs+=("$file"); done < <(corpus_programs)
inputs+=("$LT_CORPUS/thirdparty/Serilog.dll")

# ---- broken inputs ----

# The weaver's working file: in memory when /dev/shm is writable, where fsync costs nothing.
WORK=$LT_TMP
if work=$(mktemp -d /dev/shm/lt-hostile.XXXXXX 2>/dev/null); then
	WORK=$work
	trap 'rm -rf "$LT_TMP" "$WORK"' EXIT
fi

# mutants LABEL LOCKTIME KIND COUNT SEED: weave COUNT mutants in place, one TAP line for all of them.
mutants() {
	local label=$1 lt=$2 kind=$3 count=$4 seed=$5 dir=$LT_TMP/${1//[^a-z]/_} work=$WORK/${1//[^a-z]/_}.dll
	local refused=0 same=0 woven=0 nbad=0 sampled=0 name what rc code line
	local -A codes=()
	mkdir -p "$dir/m" "$LT_TMP/verify"
	if ! "$MUTATE" "$dir/m" "$kind" "$count" "$seed" "${inputs[@]}" >"$dir/list"; then
		not_ok "$label: mutants written"; return
	fi
	: >"$dir/bad"
	bad() { # NAME WHAT DETAIL
		nbad=$((nbad + 1))
		cp "$dir/m/$1" "$FAILED/${label//[^a-z]/_}-$1.dll"
		printf '%s (%s): %s\n' "$1" "$2" "$3" >>"$dir/bad"
	}
	while IFS=$'\t' read -r name what; do
		cp "$dir/m/$name" "$work"
		timeout 60 "$lt" weave -q "$work" >/dev/null 2>"$dir/err"
		rc=$?
		# The error line (a warning such as LT018 may come first).
		line=$(grep -a -m1 ': error LT' "$dir/err" || head -n 1 "$dir/err")
		if [ "$rc" = 1 ]; then
			code=; [[ $line =~ \.dll:\ error\ (LT0[0-9][0-9]):\  ]] && code=${BASH_REMATCH[1]}
			if [ -z "$code" ]; then
				bad "$name" "$what" "exit 1 without 'error LT0NN': $line"
			elif ! cmp -s "$dir/m/$name" "$work"; then
				bad "$name" "$what" "exit 1 ($code) but the input changed"
			elif [ "$code" = LT013 ]; then
				bad "$name" "$what" "out of memory on a small input (a missing bound?): $line"
			else
				refused=$((refused + 1)); codes[$code]=$((${codes[$code]:-0} + 1))
			fi
		elif [ "$rc" != 0 ]; then
			bad "$name" "$what" "exit $rc (crash or hang): $(head -c 600 "$dir/err")"
		elif cmp -s "$dir/m/$name" "$work"; then
			same=$((same + 1))
		elif ! "$lt" list "$work" >/dev/null 2>"$dir/err"; then
			bad "$name" "$what" "woven, but locktime cannot read its output: $(head -c 300 "$dir/err")"
		elif [[ $("$lt" weave "$work" 2>&1) != *"already woven"* ]]; then
			bad "$name" "$what" "woven, but weaving the output again does not say 'already woven'"
		else
			woven=$((woven + 1))
			if [ "$sampled" -lt 8 ]; then
				sampled=$((sampled + 1))
				cp "$dir/m/$name" "$LT_TMP/verify/${label//[^a-z]/_}-$name-in.dll"
				cp "$work" "$LT_TMP/verify/${label//[^a-z]/_}-$name-out.dll"
			fi
		fi
	done <"$dir/list"
	local stray histogram c
	stray=$(find "$WORK" -maxdepth 1 -name "${work##*/}.locktime*")
	if [ -n "$stray" ]; then
		nbad=$((nbad + 1)); echo "stray files left: $stray" >>"$dir/bad"
	fi
	histogram=$(for c in "${!codes[@]}"; do echo "$c x${codes[$c]}"; done | sort | paste -sd ' ')
	if [ "$nbad" -eq 0 ]; then
		ok "$label: $count inputs: $refused refused with an LT0NN error and left untouched ($histogram), $same left as they were, $woven woven and read back"
	else
		not_ok "$label: $nbad of $count inputs mishandled (inputs kept in $FAILED)" "$(head -n 20 "$dir/bad")"
	fi
}

# Three at a time (each with its own working file), their TAP lines printed in order.
mutants "truncated" "$FAST" trunc $((N * 3 / 2)) 1 >"$LT_TMP/tap1" &
mutants "bit-flipped" "$FAST" flip $((N * 2)) 2 >"$LT_TMP/tap2" &
mutants "spliced" "$FAST" splice "$N" 3 >"$LT_TMP/tap3" &
wait
mutants "sanitized: truncated" "$SAN" trunc 60 4 >"$LT_TMP/tap4" &
mutants "sanitized: bit-flipped" "$SAN" flip 120 5 >"$LT_TMP/tap5" &
mutants "sanitized: spliced" "$SAN" splice 60 6 >"$LT_TMP/tap6" &
wait
cat "$LT_TMP"/tap[1-6]

# A woven output passes ltcheck verify whenever its broken input did (weaving must not break
# what was readable; it keeps what was already broken as it was).
verify_sample() {
	local log=$LT_TMP/verify.log in out bad=0
	ls "$LT_TMP"/verify/*-in.dll >/dev/null 2>&1 || { echo "no woven mutant to verify"; return 0; }
	ltcheck verify "$LT_TMP"/verify/*.dll >"$log" 2>&1
	for in in "$LT_TMP"/verify/*-in.dll; do
		out=${in%-in.dll}-out.dll
		if grep -q "^ok $in:" "$log" && ! grep -q "^ok $out:" "$log"; then
			echo "$(basename "$in"): the input verifies, the woven output does not:"
			grep -A3 "^FAIL $out:" "$log"
			bad=1
		fi
	done
	echo "$(ls "$LT_TMP"/verify/*-in.dll | wc -l) woven mutants checked"
	return "$bad"
}
check "woven mutants: ltcheck verify accepts every output whose input it accepts" verify_sample

# ---- a header the writer cannot trust ----

# SizeOfHeaders 0xfffffe06 (fuzz weave): once a heap overflow in the writer that replaced the input
# with a broken file and aborted, leaving the lock file. Now refused when read, by both builds: exit
# 1, LT002 naming the field, the input byte-identical, no temporary or lock file beside it.
untrusted_header() { # LOCKTIME
	local dir=$LT_TMP/header out rc
	rm -rf "$dir" && mkdir -p "$dir" && cp "$LT_ROOT/fuzz/regress/weave/size-of-headers-past-file" "$dir/h.dll"
	out=$(timeout 60 "$1" weave "$dir/h.dll" 2>&1)
	rc=$?
	[ "$rc" -eq 1 ] || { echo "exit $rc: $out"; return 1; }
	grep -q "h.dll: error LT002: optional header: SizeOfHeaders 0xfffffe06 passes the end of the file" <<<"$out" ||
		{ echo "unexpected message: $out"; return 1; }
	cmp -s "$dir/h.dll" "$LT_ROOT/fuzz/regress/weave/size-of-headers-past-file" || { echo "the input changed"; return 1; }
	[ "$(ls "$dir")" = "h.dll" ] || { echo "stray files:"; ls "$dir"; return 1; }
}
check "SizeOfHeaders past the file: refused, input untouched, no stray file (release build)" untrusted_header "$FAST"
check "SizeOfHeaders past the file: refused, input untouched, no stray file (ASan+UBSan build)" untrusted_header "$SAN"

# The same file with a true SizeOfHeaders whose section table fills the headers: woven with the
# headers grown, it lists its sites as woven and weaves again as "already woven".
headers_full() {
	local dir=$LT_TMP/header
	rm -rf "$dir" && mkdir -p "$dir" && cp "$LT_ROOT/fuzz/regress/weave/headers-full" "$dir/f.dll"
	timeout 60 "$SAN" weave -q "$dir/f.dll" || return 1
	[ "$(timeout 60 "$SAN" list "$dir/f.dll" | grep -c '(woven)$')" -eq 3 ] || { echo "not 3 woven sites"; return 1; }
	timeout 60 "$SAN" weave "$dir/f.dll" 2>&1 | grep -q "already woven" || { echo "not already woven"; return 1; }
}
check "a section table that fills the headers: woven (headers grown), reads back, already woven after" headers_full

# ---- many lock calls: woven in bounded time ----

# An assembly assembled by Mono's ilasm, which writes one MemberRef per call: class Q with
# METHODS static methods, each calling Monitor.Enter(object) CALLS times.
many_calls() { # NAME METHODS CALLS
	awk -v m="$2" -v c="$3" -v name="$1" 'BEGIN {
		print ".assembly extern mscorlib {}"; print ".assembly " name " {}"
		print ".class public Q extends [mscorlib]System.Object {"
		for (i = 0; i < m; i++) {
			print ".method public static void M" i "(object o) cil managed { .maxstack 8"
			for (j = 0; j < c; j++) print "ldarg.0 call void [mscorlib]System.Threading.Monitor::Enter(object)"
			print "ret }"
		}
		print "}" }' >"$LT_TMP/$1.il" &&
		ilasm /dll /quiet /output:"$LT_TMP/$1.dll" "$LT_TMP/$1.il" >/dev/null
}

if many_calls OneMethod 1 8000 && many_calls ManyMethods 16400 1 && many_calls Woven 50 40; then
	check "8000 lock calls in one method: woven within 30 s" timeout 30 "$FAST" weave -q "$LT_TMP/OneMethod.dll"
	check "16400 lock calls in one assembly: woven within 30 s" timeout 30 "$FAST" weave -q "$LT_TMP/ManyMethods.dll"
	check "2000 lock calls in 50 methods: woven within 30 s" timeout 30 "$FAST" weave -q "$LT_TMP/Woven.dll"
else
	not_ok "many lock calls: ilasm assembles the test assemblies"
fi

# ---- SIGKILL while writing ----

big=$LT_CORPUS/thirdparty/System.Xml.dll
kdir=$LT_TMP/kill
mkdir -p "$kdir"
"$FAST" weave -q "$big" -o "$kdir/expected.dll" || not_ok "kill: reference weave of $(basename "$big")"
old_sum=$(sha256sum <"$big")
new_sum=$(sha256sum <"$kdir/expected.dll")

# The file is the old or the new one; a later run weaves it (or finds it woven) and leaves
# neither a temporary nor a lock file.
after_kill() { # LABEL
	local sum
	sum=$(sha256sum <"$kdir/a.dll")
	if [ "$sum" != "$old_sum" ] && [ "$sum" != "$new_sum" ]; then
		echo "$1: the file is neither the old nor the new one"; return 1
	fi
	"$FAST" weave -q "$kdir/a.dll" || { echo "$1: the later run failed"; return 1; }
	[ "$(sha256sum <"$kdir/a.dll")" = "$new_sum" ] || { echo "$1: the later run did not give the woven file"; return 1; }
	if [ -n "$(find "$kdir" -name 'a.dll.locktime*')" ]; then
		echo "$1: stray files after the later run:"; ls "$kdir"; return 1
	fi
}

# killed_in LABEL WAIT-CONDITION STRACE-ARGS...: run the weave under strace, which holds the
# chosen system call for 10 s; once the condition holds, SIGKILL the weaver.
killed_in() {
	local label=$1 cond=$2 spid child i
	shift 2
	cp "$big" "$kdir/a.dll"
	strace -f -qq -o /dev/null "$@" "$FAST" weave -q "$kdir/a.dll" &
	spid=$!
	for i in $(seq 1 500); do
		eval "$cond" && break
		sleep 0.02
	done
	if ! eval "$cond"; then
		kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null
		echo "$label: the weaver never reached the point to kill it at"; return 1
	fi
	sleep 0.1
	child=$(cat "/proc/$spid/task/$spid/children" 2>/dev/null)
	[ -n "$child" ] && kill -KILL $child
	sleep 0.1
	kill -KILL "$spid" 2>/dev/null # strace itself would wait out the delay
	wait "$spid" 2>/dev/null
	after_kill "$label"
}
# The assembly and its portable PDB are both written to temporaries (fsync 1: the assembly's,
# 2: the PDB's) before two renames put them in place; killed in the second fsync, the run leaves
# the old pair as it was, and the next run weaves both, its PDB matching, with no temporary left.
killed_in_pdb() {
	local d=$LT_TMP/killpdb spid child i
	rm -rf "$d"; mkdir -p "$d/orig"
	cp "$LT_CORPUS"/csharp/Debug/LockCorpus.{dll,pdb} "$d/"
	cp "$LT_CORPUS"/csharp/Debug/LockCorpus.{dll,pdb} "$d/orig/"
	strace -f -qq -o /dev/null -e trace=fsync -e inject=fsync:delay_enter=10000000:when=2 \
		"$FAST" weave -q "$d/LockCorpus.dll" &
	spid=$!
	for i in $(seq 1 500); do
		[ -n "$(find "$d" -name 'LockCorpus.pdb.locktime-*' -size +0)" ] && break
		sleep 0.02
	done
	sleep 0.1
	child=$(cat "/proc/$spid/task/$spid/children" 2>/dev/null)
	[ -n "$child" ] && kill -KILL $child
	sleep 0.1
	kill -KILL "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	[ -n "$(find "$d" -name 'LockCorpus.pdb.locktime-*')" ] || { echo "the kill missed the PDB write"; return 1; }
	cmp -s "$d/LockCorpus.dll" "$d/orig/LockCorpus.dll" && cmp -s "$d/LockCorpus.pdb" "$d/orig/LockCorpus.pdb" ||
		{ echo "the kill changed the assembly or its PDB"; return 1; }
	"$FAST" weave "$d/LockCorpus.dll" || return 1
	[ -z "$(find "$d" -name '*.locktime*')" ] || { echo "stray files:"; ls "$d"; return 1; }
	ltcheck pdb "$d/orig/LockCorpus.dll" "$d/LockCorpus.dll" || { echo "the PDB does not match the woven assembly"; return 1; }
}
# Killed between the two renames (the assembly's done, the PDB's not): the woven assembly lies beside
# the input's PDB, its own PDB staged; the next run finds the assembly woven and puts that PDB in place.
killed_between_renames() {
	local d=$LT_TMP/killrename
	rm -rf "$d"; mkdir -p "$d/orig"
	cp "$LT_CORPUS"/csharp/Debug/LockCorpus.{dll,pdb} "$d/"
	cp "$LT_CORPUS"/csharp/Debug/LockCorpus.{dll,pdb} "$d/orig/"
	strace -f -qq -o /dev/null -e trace=rename,renameat,renameat2 -e inject=rename,renameat,renameat2:signal=SIGKILL:when=2 \
		"$FAST" weave -q "$d/LockCorpus.dll" 2>/dev/null
	cmp -s "$d/LockCorpus.pdb" "$d/orig/LockCorpus.pdb" && ! cmp -s "$d/LockCorpus.dll" "$d/orig/LockCorpus.dll" ||
		{ echo "the kill did not fall between the two renames"; return 1; }
	"$FAST" weave "$d/LockCorpus.dll" || return 1
	[ -z "$(find "$d" -name '*.locktime*')" ] || { echo "stray files:"; ls "$d"; return 1; }
	ltcheck pdb "$d/orig/LockCorpus.dll" "$d/LockCorpus.dll" || { echo "the PDB does not match the woven assembly"; return 1; }
}
temp_exists() { [ -n "$(find "$kdir" -name 'a.dll.locktime-*' -size +0)" ]; }
temp_created() { [ -n "$(find "$kdir" -name 'a.dll.locktime-*')" ]; }
renamed() { [ "$(sha256sum <"$kdir/a.dll")" = "$new_sum" ]; }

if strace -f -qq -o /dev/null true 2>/dev/null; then
	check "kill in the write of the temporary: old file kept, no stray file after a later run" \
		killed_in "write" temp_created -e trace=writev -e inject=writev:delay_enter=10000000:when=1
	check "kill after writing the temporary, before fsync and rename: old file kept, no stray file after" \
		killed_in "fsync" temp_exists -e trace=fsync -e inject=fsync:delay_enter=10000000:when=1
	check "kill after the rename, before the folder's fsync: new file, no stray file after" \
		killed_in "rename" renamed -e trace=fsync -e inject=fsync:delay_enter=10000000:when=2
	check "kill while writing the PDB: the old pair stays, a later run weaves both and leaves no temporary" killed_in_pdb
	check "kill between the renames of the assembly and its PDB: a later run puts the woven assembly's PDB in place" \
		killed_between_renames
else
	skip "kill at chosen system calls" "strace cannot trace here"
fi

# At random times over a whole run (most land before the write: the old file must stay).
random_kills() {
	local i pid start end span delay
	start=$(date +%s%N)
	cp "$big" "$kdir/a.dll"; "$FAST" weave -q "$kdir/a.dll"
	end=$(date +%s%N)
	span=$(((end - start) / 1000))
	for i in $(seq 1 20); do
		cp "$big" "$kdir/a.dll"
		delay=$((RANDOM * 32768 + RANDOM))
		delay=$((delay % (span + 1)))
		"$FAST" weave -q "$kdir/a.dll" &
		pid=$!
		sleep "$(awk -v us="$delay" 'BEGIN { printf "%.6f", us / 1e6 }')"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		after_kill "random kill $i at $delay us of $span us" || return 1
	done
}
check "20 kills at random times: old or new file, no stray file after a later run" random_kills

# ---- parallel weaves ----

parallel_weaves() { # LOCKTIME ROUNDS
	local lt=$1 rounds=$2 r woven already
	for r in $(seq 1 "$rounds"); do
		cp "$big" "$kdir/p.dll"
		(cd "$kdir" && "$lt" weave p.dll >"$kdir/o1" 2>&1) &
		(cd "$kdir" && "$lt" weave ./p.dll >"$kdir/o2" 2>&1) &
		"$lt" weave "$kdir/../kill/p.dll" >"$kdir/o3" 2>&1 &
		wait
		woven=$(cat "$kdir"/o[123] | grep -c ': woven, ')
		already=$(cat "$kdir"/o[123] | grep -c 'already woven')
		if [ "$woven" != 1 ] || [ "$already" != 2 ]; then
			echo "round $r: $woven woven, $already already woven:"; cat "$kdir"/o[123]; return 1
		fi
		cmp "$kdir/p.dll" "$kdir/expected.dll" || { echo "round $r: not the woven file"; return 1; }
		[ -z "$(find "$kdir" -name 'p.dll.locktime*')" ] || { echo "round $r: stray files"; ls "$kdir"; return 1; }
	done
}
check "3 parallel weaves of one file, 10 rounds: woven once, the others see it woven" parallel_weaves "$FAST" 10
check "the same with the sanitized build, 2 rounds" parallel_weaves "$SAN" 2
check "the file woven in parallel passes ltcheck verify" ltcheck verify "$kdir/p.dll"

# ---- determinism and idempotence on the whole corpus ----

whole_corpus() {
	local f bad=0 n=0 rc1 rc2
	while read -r f; do
		n=$((n + 1))
		rm -f "$kdir/d1.dll" "$kdir/d2.dll"
		"$FAST" weave -q "$f" -o "$kdir/d1.dll" 2>"$kdir/e1"; rc1=$?
		"$FAST" weave -q "$f" -o "$kdir/d2.dll" 2>"$kdir/e2"; rc2=$?
		if [ "$rc1" != "$rc2" ] || ! cmp -s "$kdir/e1" "$kdir/e2"; then
			echo "$f: two runs differ (exit $rc1 and $rc2)"; bad=1; continue
		fi
		if [ "$rc1" != 0 ]; then
			[ ! -e "$kdir/d1.dll" ] || { echo "$f: refused, yet an output was written"; bad=1; }
			continue
		fi
		cmp -s "$kdir/d1.dll" "$kdir/d2.dll" || { echo "$f: the same input gave different bytes"; bad=1; }
		cp "$kdir/d1.dll" "$kdir/d3.dll"
		"$FAST" weave -q "$kdir/d3.dll" && cmp -s "$kdir/d1.dll" "$kdir/d3.dll" ||
			{ echo "$f: weaving twice differs from weaving once"; bad=1; }
	done < <({ corpus_programs | awk '{ print $3 }'; corpus_thirdparty; ls "$LT_CORPUS"/fsharp/Release/FSharp.Core.dll; } | sort -u)
	echo "$n assemblies"
	return "$bad"
}
check "whole corpus: same input same bytes, weaving twice = weaving once" whole_corpus
done_testing
