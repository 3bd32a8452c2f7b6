#!/usr/bin/env bash
# The lock types beside Monitor and Lock, end to end on tests/corpus/locks (built here by the .NET
# SDK, Debug and Release): ReaderWriterLockSlim, SemaphoreSlim (Wait, WaitAsync in async methods),
# SpinLock (a struct, on a field and a local), Mutex (WaitOne, declared on WaitHandle, on a field, a
# local, a parameter, a property, in a lambda; on a WaitHandle-typed value; WaitAny / WaitAll) and
# ReaderWriterLock (with ReleaseLock / RestoreLock):
#   - `locktime list` names each acquisition with its kind at its marker's line ("// site: KIND"),
#     and nothing else: not WaitOne on an event's static type; WaitOne on a WaitHandle-typed value
#     and WaitAny / WaitAll are sites that the stub times only when a Mutex is among the handles;
#   - an independent count (ltcheck locks) finds as many call sites;
#   - `locktime weave` times every one of them (no lock call is left outside the stubs); a 60 ms hold
#     (a write lock, a Mutex, a semaphore, an async holder awaiting Task.Delay(60), a SpinLock, the
#     old ReaderWriterLock's writer) is reported held >= 50 ms at the holder's line and the waiter
#     behind it waited >= 40 ms at its line, naming the holder when the waiter had a fast try; a
#     counting semaphore's hold is "not applicable"; the woven program prints what the un-woven one
#     prints (results and the exceptions of misuse: SynchronizationLockException,
#     LockRecursionException, SemaphoreFullException, AbandonedMutexException...), ltcheck verify
#     accepts it and every method JIT-compiles;
#   - a Mutex acquired by a WaitOne that threw AbandonedMutexException is held until its ReleaseMutex;
#     WaitAll acquires the Mutexes of its array; the time between ReaderWriterLock.ReleaseLock and
#     RestoreLock is no hold; a SemaphoreSlim(1, 1) and a Monitor lock taken in both orders give one
#     potential deadlock;
#   - tests/corpus/deadlocks: two threads taking two locks in opposite orders at once (two monitors,
#     two Locks, a write or read lock or a Mutex with a monitor) print one deadlock line as they hang,
#     naming both waits; with a SemaphoreSlim(1, 1), whose hold is no thread's, the potential deadlock
#     only; waits ended by Thread.Interrupt, the interrupted
#     thread working on inside a lock the other then waits for, print none; a SemaphoreSlim(0, 1) used as
#     a signal is no lock (no deadlock, no potential one); a SemaphoreSlim(1, 1) taken by the blocking
#     Wait() in an async method or an async iterator that awaits while it holds it is kept out of the
#     lock order (no potential deadlock; its holds still timed), and without the await it is not;
#   - the same program compiled by mcs (its .mdb giving the lines) and run under Mono shows the same.
source "$(dirname "$0")/../lib.sh"
LT=${LOCKTIME:-$LT_BUILD/san/locktime}
export MSBUILDDISABLENODEREUSE=1 DOTNET_CLI_USE_MSBUILD_SERVER=0
SRC=$LT_ROOT/tests/corpus/locks

check "ltcheck builds" tools_build || exit 1
build_locks() { # CONFIG (output: build/corpus/locks/CONFIG, by tests/corpus/Directory.Build.props)
	dotnet build "$SRC/Locks.csproj" -c "$1" -nologo -v q -nodeReuse:false -p:UseSharedCompilation=false >"$LT_TMP/build-$1.log" 2>&1 ||
		{ tail -n 5 "$LT_TMP/build-$1.log"; return 1; }
}

# "KIND Locks.cs:LINE" for every "// site: KIND" marker, sorted.
marked_sites() {
	grep -nE '// site: [A-Za-z.]+$' "$SRC/Locks.cs" | sed -E 's/^([0-9]+):.*\/\/ site: ([^ ]+)$/\2 Locks.cs:\1/' | sort
}

# `list` FILE gives exactly the marked sites.
listed_as_marked() { # FILE
	"$LT" list "$1" >"$LT_TMP/list" || return 1
	list_fields <"$LT_TMP/list" | awk -F'\t' '{ print $3, $4 }' | sort >"$LT_TMP/listed"
	marked_sites >"$LT_TMP/marked"
	echo "$(wc -l <"$LT_TMP/listed") sites listed, $(wc -l <"$LT_TMP/marked") marked"
	diff "$LT_TMP/marked" "$LT_TMP/listed" &&
		list_fields <"$LT_TMP/list" | awk -F'\t' 'NF != 5 || $4 == "" || $5 != "" { print "not a site line: " $0; bad = 1 } END { exit bad }'
}

# `list` and ltcheck's independent count agree.
count_agrees() { # FILE
	local ours theirs
	ours=$("$LT" list "$1" | wc -l)
	theirs=$(ltcheck locks "$1" | sed -nE 's/^total [0-9]+: ([0-9]+) call sites.*/\1/p')
	echo "locktime list: $ours; ltcheck: $theirs"
	[ "$ours" = "$theirs" ]
}

# Woven: every site, as the input's list has it, marked woven; ltcheck finds no lock call left outside
# the merged run-time's types (<LockTime>...).
all_woven() { # INPUT WOVEN SAID
	local n left
	"$LT" list "$1" | list_fields | awk -F'\t' '{ print $1, $3, $4, "(woven)" }' | sort >"$LT_TMP/sites.list"
	n=$(wc -l <"$LT_TMP/sites.list")
	grep -q "woven, $n lock sites timed" "$3" || { cat "$3"; return 1; }
	"$LT" list "$2" | list_fields | awk -F'\t' '{ print $1, $3, $4, $5 }' | sort >"$LT_TMP/woven.list" || return 1
	diff "$LT_TMP/sites.list" "$LT_TMP/woven.list" || return 1
	left=$(ltcheck locks "$2" | grep -v '^total' | grep -vc '^<LockTime>')
	echo "$n sites woven; lock calls left outside the stubs: $left"
	[ "$left" = 0 ]
}

# The location `locktime list` gives INPUT's first site in METHOD.
listed_at() { # INPUT METHOD
	"$LT" list "$1" | list_fields | awk -F'\t' -v m="$2" '$1 == m { print $4; exit }'
}

# REPORTS has the holder's line at its listed location, held >= 50 ms, and the waiter's, waited >= 40 ms
# there, naming the holder (unless NAMED is 0: no holder is looked for behind a SpinLock, a WaitAny, the
# old ReaderWriterLock).
held_and_waited() { # REPORTS INPUT HOLDER-METHOD WAITER-METHOD [NAMED]
	local hat wat named=${5:-1}
	hat=$(listed_at "$2" "$3")
	wat=$(listed_at "$2" "$4")
	echo "holder at $hat, waiter at $wat"
	awk -v h="$3" -v w="$4" -v hat="$hat" -v wat="$wat" -v named="$named" '
		$2 == h && $3 == "held" && $10 == hat && $4 + 0 >= 50 { ok1 = 1 }
		$2 == w && $3 == "held" && $10 == wat && $7 + 0 >= 40 && (!named || index($0, "(held by " h " at " hat ")")) { ok2 = 1 }
		END { exit !(ok1 && ok2) }' "$1" || { grep -F -e "$3" -e "$4" "$1"; return 1; }
}

# REPORTS has the line of the waiter's try that gave up at its listed location, naming the holder.
gave_up_behind() { # REPORTS INPUT HOLDER-METHOD WAITER-METHOD
	local hat wat
	hat=$(listed_at "$2" "$3")
	wat=$(listed_at "$2" "$4")
	echo "holder at $hat, waiter at $wat"
	awk -v w="$4" -v tail=" ms, not acquired at $wat (held by $3 at $hat)" '
		$2 == w && $3 == "waited" && substr($0, length($0) - length(tail) + 1) == tail { ok = 1 }
		END { exit !ok }' "$1" || { grep -F -e "$3" -e "$4" "$1"; return 1; }
}

# A SemaphoreSlim(1, 1) and a Monitor lock taken in both orders on one thread (Locks.Ordered::Run): one
# "potential deadlock" line naming that method, and in the report one cycle, between its semaphore and
# Monitor sites.
order_cycle() { # REPORTS JSON INPUT
	local lines
	"$LT" list "$3" | list_fields | awk -F'\t' '$1 == "Locks.Ordered::Run" { print $3, $4 }' >"$LT_TMP/ordered.sites"
	lines=$(grep -c '^LockTime: potential deadlock: ' "$1")
	echo "$lines potential deadlock line(s); sites: $(tr '\n' ' ' <"$LT_TMP/ordered.sites")"
	[ "$lines" = 1 ] && grep '^LockTime: potential deadlock: ' "$1" | grep -qF '(Locks.Ordered::Run)' || return 1
	python3 - "$2" "$LT_TMP/ordered.sites" <<'PY'
import json, sys
sites = dict(line.split()[::-1] for line in open(sys.argv[2]))   # location -> kind
cycles = json.load(open(sys.argv[1]))["lock_order_cycles"]
kinds = [sorted({sites.get(e["held"]["location"]), sites.get(e["acquired"]["location"])}) for c in cycles for e in c["edges"]]
print("cycles:", len(cycles), "edge kinds:", kinds)
sys.exit(not (len(cycles) == 1 and kinds == [["Monitor.Enter", "SemaphoreSlim.Wait"]] * 2))
PY
}

# The line of Locks.cs that holds TEXT (once).
line_of() { # TEXT
	grep -nF "$1" "$SRC/Locks.cs" | cut -d: -f1
}

# The report file's site at Locks.cs:LINE (the first one) meets the Python condition COND over its
# acquisitions `a`, failed acquisitions `f` and maximal hold `hold` (ms).
site_is() { # JSON LINE COND
	python3 - "$1" "Locks.cs:$2" "$3" <<'PY'
import json, sys
sites = [s for s in json.load(open(sys.argv[1]))["sites"] if s["location"] == sys.argv[2]]
s = sites[0] if sites else {"kind": "(no entry)", "acquisitions": 0, "failed": 0, "hold_ms": {"max": 0}}
a, f, hold = s["acquisitions"], s["failed"], s["hold_ms"]["max"]
print("%s %s: %d acquisitions, %d failed, hold max %.3f ms" % (s["kind"], sys.argv[2], a, f, hold))
sys.exit(not eval(sys.argv[3]))
PY
}

# Locks.Handles::Take's WaitAny over events only and its WaitOne on an event typed WaitHandle: sites, not timed.
untimed_events() { # JSON
	site_is "$1" "$(line_of '{ never, ready }, 0)')" 'a == 0 and f == 0' &&
		site_is "$1" "$(line_of 'Event().WaitOne(0)')" 'a == 0 and f == 0'
}

weave_into() { # FILE SAID
	"$LT" weave --threshold-ms 0 "$1" >"$2" 2>&1 || { cat "$2"; return 1; }
}

# What every run of the woven program must show (LABEL: Debug, Release, Mono), from its stderr REPORTS,
# its report file JSON and the un-woven INPUT's list.
timed_as_said() { # LABEL REPORTS JSON INPUT
	check "$1: ReaderWriterLockSlim: the writer held >= 50 ms, the reader behind it waited >= 40 ms" \
		held_and_waited "$2" "$4" Locks.Cache::Write Locks.Cache::Read
	check "$1: Mutex: the holder held >= 50 ms, the waiter waited >= 40 ms" \
		held_and_waited "$2" "$4" Locks.Mutexes::Hold Locks.Mutexes::Take
	check "$1: SemaphoreSlim(1, 1): the holder held >= 50 ms, a Wait(5000) waited >= 40 ms, naming it" \
		held_and_waited "$2" "$4" Locks.Gates::Hold Locks.Gates::Take
	check "$1: Monitor.TryEnter(o, 5000): the holder held >= 50 ms, the try waited >= 40 ms, naming it" \
		held_and_waited "$2" "$4" Locks.Timed::Hold Locks.Timed::Take
	check "$1: Monitor.TryEnter(o, 10, ref taken) that gave up behind the holder names it" \
		gave_up_behind "$2" "$4" Locks.Timed::Hold Locks.Timed::GiveUp
	check "$1: Monitor.TryEnter(o, TimeSpan.FromSeconds(5)): the try waited >= 40 ms, naming the holder" \
		held_and_waited "$2" "$4" Locks.Timed::Hold Locks.Timed::TakeSpan
	check "$1: SemaphoreSlim(1, 1): an async holder across await Task.Delay(60), an awaiting waiter" \
		held_and_waited "$2" "$4" Locks.Gates::HoldAcrossAwait Locks.Gates::TakeAsync
	check "$1: SpinLock: the holder held >= 50 ms, the waiter waited >= 40 ms" \
		held_and_waited "$2" "$4" Locks.Spinner::Hold Locks.Spinner::Add 0
	check "$1: ReaderWriterLock: the writer held >= 50 ms, a reader waited >= 40 ms" \
		held_and_waited "$2" "$4" Locks.OldRw::Hold Locks.OldRw::Read 0
	check "$1: a SemaphoreSlim(1, 1) and a Monitor lock in both orders: one potential deadlock, one cycle in the report" \
		order_cycle "$2" "$3" "$4"
	check "$1: an AbandonedMutexException acquired the Mutex: held >= 50 ms until ReleaseMutex" \
		site_is "$3" "$(line_of 'try { m.WaitOne(); }')" 'a == 1 and hold >= 50'
	check "$1: a WaitAny that threw AbandonedMutexException acquired the Mutex at its index: held >= 50 ms" \
		site_is "$3" "$(line_of 'try { WaitHandle.WaitAny(new WaitHandle[] { never, m }); }')" 'a == 1 and hold >= 50'
	check "$1: a Mutex as a WaitHandle held >= 50 ms, WaitAny behind it waited >= 40 ms" \
		held_and_waited "$2" "$4" Locks.Handles::Hold Locks.Handles::Take 0
	check "$1: WaitAll over a Mutex and an event: the Mutex acquired, held until ReleaseMutex" \
		site_is "$3" "$(line_of 'WaitHandle.WaitAll(new WaitHandle[] { owned, ready }')" 'a == 1 and f == 0'
	check "$1: WaitAny over events only, WaitOne on an event as a WaitHandle: not timed" \
		untimed_events "$3"
	check "$1: ReaderWriterLock ReleaseLock / RestoreLock: the 60 ms between them is no hold" \
		site_is "$3" "$(line_of 'AcquireWriterLock(1000)')" 'a == 1 and hold < 30'
	check "$1: SemaphoreSlim(1, 1): 8 async workers x 200 contended WaitAsync, each acquisition recorded at its release" \
		site_is "$3" "$(line_of 'await queue.WaitAsync()')" 'a == 1600 and f == 0'
	check "$1: a counting SemaphoreSlim: its hold not applicable" \
		grep -qE '^LockTime: Locks\.Gates::Counting waited [0-9.]+ ms at Locks\.cs:[0-9]+ \(hold not applicable\)$' "$2"
}

for config in Debug Release; do
	check "Locks builds ($config)" build_locks "$config" || continue
	dll=$LT_CORPUS/locks/$config/Locks.dll
	check "$config: list names every marked site with its kind and line" listed_as_marked "$dll"
	check "$config: list matches an independent count" count_agrees "$dll"
	dir=$LT_TMP/$config
	rm -rf "$dir" && cp -r "$(dirname "$dll")" "$dir"
	dotnet "$dll" >"$LT_TMP/expected.$config" 2>/dev/null
	check "$config: weave" weave_into "$dir/Locks.dll" "$LT_TMP/said.$config" || continue
	check "$config: every site is woven" all_woven "$dll" "$dir/Locks.dll" "$LT_TMP/said.$config"
	check "$config: metadata reader accepts it" ltcheck verify "$dir/Locks.dll"
	check "$config: every method JIT-compiles" ltcheck jit "$dir/Locks.dll"
	LOCKTIME_REPORT=$LT_TMP/report.$config.json dotnet "$dir/Locks.dll" >"$LT_TMP/actual.$config" 2>"$LT_TMP/reports.$config"
	check_same "$config: same output, the same exceptions of misuse" "$LT_TMP/expected.$config" "$LT_TMP/actual.$config"
	timed_as_said "$config" "$LT_TMP/reports.$config" "$LT_TMP/report.$config.json" "$dll"
done

# ---- Deadlocks (tests/corpus/deadlocks): for each lock type whose blocking wait is followed, two threads
# taking two locks in opposite orders at once hang; the woven program says so as it happens, once, naming
# both threads' waits at the lines marked "// KIND waits"; the same orders one after the other only
# give the potential deadlock; waits that Thread.Interrupt ends, while the interrupted thread goes on
# holding a lock that the other then waits for, are no deadlock; nor is a SemaphoreSlim(0, 1) used as a
# signal, which is no lock; nor a SemaphoreSlim(1, 1) held across an await after a blocking Wait().
DSRC=$LT_ROOT/tests/corpus/deadlocks
deadlock_seen() { # KIND MARK: one deadlock line, naming the waits at the lines marked "// MARK waits"
	local err=$LT_TMP/dl-$1.err line l
	LOCKTIME_SUMMARY=0 terminate_after /dev/null "$err" "$err" 0 '^LockTime: deadlock: ' dotnet "$LT_TMP/dl/Deadlocks.dll" "$1"
	line=$(grep '^LockTime: deadlock: ' "$err")
	[ "$(grep -c '^LockTime: deadlock: ' "$err")" = 1 ] || { cat "$err"; return 1; }
	for l in $(grep -n "// $2 waits$" "$DSRC/Deadlocks.cs" | cut -d: -f1); do
		grep -qE "thread [0-9]+ waits at Deadlocks\.cs:$l \(Deadlocks::" <<<"$line" || { echo "no wait at line $l: $line"; return 1; }
	done
}
# A SemaphoreSlim's hold is no thread's (any thread may release it): the hang gives its potential
# deadlock, and no deadlock is claimed through it.
semaphore_hang() {
	local err=$LT_TMP/dl-semaphore.err
	LOCKTIME_SUMMARY=0 terminate_after /dev/null "$err" "$err" 1 '^LockTime: potential deadlock: ' dotnet "$LT_TMP/dl/Deadlocks.dll" semaphore
	grep -q '^LockTime: potential deadlock: ' "$err" && ! grep -q '^LockTime: deadlock' "$err" || { cat "$err"; return 1; }
}
# An async method and an async iterator that take a SemaphoreSlim(1, 1) with the blocking Wait() and await
# while they hold it, their thread taking a monitor meanwhile: no potential deadlock, and each Wait site
# ("// awaited holds", "// iterated holds") acquired once and held >= 50 ms across its Task.Delay(60).
awaited_unordered() {
	local out=$LT_TMP/dl-awaited
	LOCKTIME_SUMMARY=0 LOCKTIME_REPORT=$out.json timeout 60 dotnet "$LT_TMP/dl/Deadlocks.dll" awaited >"$out.out" 2>"$out.err"
	grep -qx awaited "$out.out" && grep -qx done "$out.out" && ! grep -q deadlock "$out.err" || { cat "$out.out" "$out.err"; return 1; }
	python3 - "$out.json" "$(grep -n '// awaited holds$' "$DSRC/Deadlocks.cs" | cut -d: -f1)" \
		"$(grep -n '// iterated holds$' "$DSRC/Deadlocks.cs" | cut -d: -f1)" <<'PY'
import json, sys
sites = {s["location"]: s for s in json.load(open(sys.argv[1]))["sites"]}
ok = True
for line in sys.argv[2:]:
    s = sites.get("Deadlocks.cs:" + line, {"kind": "(no entry)", "acquisitions": 0, "hold_ms": {"max": 0}})
    print("%s Deadlocks.cs:%s: %d acquisitions, hold max %.3f ms" % (s["kind"], line, s["acquisitions"], s["hold_ms"]["max"]))
    ok = ok and s["kind"] == "SemaphoreSlim.Wait" and s["acquisitions"] == 1 and s["hold_ms"]["max"] >= 50
sys.exit(not ok)
PY
}
# ordered_at MODE MARK: the mode runs to its end (it prints MODE), no deadlock, and the potential deadlock
# names the line marked "// MARK": "held", awaited's counterpart without an await (a lambda on a
# thread-pool thread); "inlock", an async method's Wait() inside a lock - that edge is in the order (the
# hold is not) - and the other order in sync code.
ordered_at() {
	local out=$LT_TMP/dl-$1
	LOCKTIME_SUMMARY=0 timeout 60 dotnet "$LT_TMP/dl/Deadlocks.dll" "$1" >"$out.out" 2>"$out.err"
	grep -qx "$1" "$out.out" && ! grep -q '^LockTime: deadlock' "$out.err" &&
		grep '^LockTime: potential deadlock: ' "$out.err" |
		grep -qF "Deadlocks.cs:$(grep -n "// $2\$" "$DSRC/Deadlocks.cs" | cut -d: -f1) " || { cat "$out.out" "$out.err"; return 1; }
}
if check "Deadlocks builds" dotnet build "$DSRC/Deadlocks.csproj" -c Release -nologo -v q -nodeReuse:false -p:UseSharedCompilation=false; then
	rm -rf "$LT_TMP/dl" && cp -r "$LT_CORPUS/deadlocks/Release" "$LT_TMP/dl"
	if check "Deadlocks: weave" weave_into "$LT_TMP/dl/Deadlocks.dll" "$LT_TMP/said.dl"; then
		check "Deadlocks: every method JIT-compiles" ltcheck jit "$LT_TMP/dl/Deadlocks.dll"
		check "deadlock of two monitors: seen as it forms, both waits named" deadlock_seen monitor monitor
		check "deadlock of two System.Threading.Locks" deadlock_seen lock lock
		check "deadlock of a write lock and a monitor" deadlock_seen rw rw
		check "deadlock of a read lock and a monitor (the writer waits for the reader)" deadlock_seen reader rw
		check "a SemaphoreSlim(1, 1) and a monitor taken in opposite orders at once: the potential deadlock, no deadlock claimed" semaphore_hang
		check "deadlock of a Mutex and a monitor" deadlock_seen mutex mutex
		LOCKTIME_SUMMARY=0 timeout 60 dotnet "$LT_TMP/dl/Deadlocks.dll" none >"$LT_TMP/dl-none.out" 2>"$LT_TMP/dl-none.err"
		check "the two orders one after the other: no deadlock, a potential one" \
			eval 'grep -qx done "$LT_TMP/dl-none.out" && ! grep -q "^LockTime: deadlock" "$LT_TMP/dl-none.err" && grep -q "^LockTime: potential deadlock: " "$LT_TMP/dl-none.err"'
		LOCKTIME_SUMMARY=0 timeout 60 dotnet "$LT_TMP/dl/Deadlocks.dll" interrupted >"$LT_TMP/dl-int.out" 2>"$LT_TMP/dl-int.err"
		check "a wait ended by Thread.Interrupt, caught inside the held lock, which another thread then waits for: no deadlock (each lock type)" \
			eval '[ "$(grep -c " interrupted$" "$LT_TMP/dl-int.out")" = 5 ] && grep -qx done "$LT_TMP/dl-int.out" && ! grep -q "^LockTime: deadlock" "$LT_TMP/dl-int.err"'
		LOCKTIME_SUMMARY=0 timeout 60 dotnet "$LT_TMP/dl/Deadlocks.dll" signal >"$LT_TMP/dl-sig.out" 2>"$LT_TMP/dl-sig.err"
		check "a SemaphoreSlim(0, 1) used as a signal, waited for under a monitor another consumer waits for: no deadlock, no potential one" \
			eval 'grep -qx signalled "$LT_TMP/dl-sig.out" && grep -qx done "$LT_TMP/dl-sig.out" && ! grep -q "deadlock" "$LT_TMP/dl-sig.err"'
		check "a SemaphoreSlim(1, 1) taken by Wait() in an async method and an async iterator that await while holding it: no potential deadlock, its holds timed" \
			awaited_unordered
		check "the same without an await (a lambda on a thread-pool thread): the potential deadlock" ordered_at held "held holds"
		check "an async method's Wait() inside a lock, the other order in sync code: the potential deadlock" ordered_at inlock "inlock waits"
		LOCKTIME_SUMMARY=0 timeout 60 dotnet "$LT_TMP/dl/Deadlocks.dll" timed >"$LT_TMP/dl-timed.out" 2>"$LT_TMP/dl-timed.err"
		check "two Monitor.TryEnter(o, 300) in opposite orders at once: both give up, each naming its holder; the potential deadlock, no deadlock claimed" \
			eval 'grep -qx "timed gave up" "$LT_TMP/dl-timed.out" && ! grep -q "^LockTime: deadlock" "$LT_TMP/dl-timed.err" &&
				grep -q "^LockTime: potential deadlock: " "$LT_TMP/dl-timed.err" &&
				[ "$(grep -c "ms, not acquired at Deadlocks.cs:$(grep -n "// timed tries$" "$DSRC/Deadlocks.cs" | cut -d: -f1) (held by " "$LT_TMP/dl-timed.err")" = 2 ]'

	fi
fi

# ---- Mono: the same program compiled by mcs (with its .mdb for lines), woven, run under mono ----
mdir=$LT_TMP/mono
mkdir -p "$mdir/woven"
if check "Mono: Locks builds (mcs -debug)" mcs -sdk:4.5 -debug -out:"$mdir/Locks.exe" "$SRC/Locks.cs"; then
	cp "$mdir/Locks.exe" "$mdir/Locks.exe.mdb" "$mdir/woven/"
	check "Mono: list names every marked site with its kind and line" listed_as_marked "$mdir/Locks.exe"
	check "Mono: list matches an independent count" count_agrees "$mdir/Locks.exe"
	mono "$mdir/Locks.exe" >"$LT_TMP/expected.mono" 2>/dev/null
	if check "Mono: weave" weave_into "$mdir/woven/Locks.exe" "$LT_TMP/said.mono"; then
		check "Mono: every site is woven" all_woven "$mdir/Locks.exe" "$mdir/woven/Locks.exe" "$LT_TMP/said.mono"
		LOCKTIME_REPORT=$LT_TMP/report.mono.json mono "$mdir/woven/Locks.exe" >"$LT_TMP/actual.mono" 2>"$LT_TMP/reports.mono"
		check_same "Mono: same output, the same exceptions of misuse" "$LT_TMP/expected.mono" "$LT_TMP/actual.mono"
		timed_as_said Mono "$LT_TMP/reports.mono" "$LT_TMP/report.mono.json" "$mdir/Locks.exe"
	fi
fi
done_testing
