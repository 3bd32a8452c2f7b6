#!/usr/bin/env bash
# `locktime weave` end to end on real programs (C#, VB, F# for .NET 10 in Debug and Release; C# for
# .NET Framework 4.8 built by the .NET SDK and C# built by Mono's mcs, both run under Mono) and on real
# third-party assemblies:
#   - stdout of the woven program equals the un-woven run; with threshold 0 every site reports
#     ([MethodImpl(Synchronized)] methods included); afterwards another thread can take every lock;
#   - a contended lock reports the holder's hold (>= 50 ms) and the waiter's wait (>= 40 ms);
#   - every method JIT-compiles; ltcheck verify accepts the output;
#   - `locktime list` finds exactly the call sites an independent count finds;
#   - weaving twice = weaving once, byte for byte; the same input gives the same bytes;
#   - LOCKTIME_OUTPUT (stdout, a file: appended, whole lines while threads report at once),
#     LOCKTIME_THRESHOLD_MS and LOCKTIME_DISABLED=1 at run time;
#   - an assembly whose only locks are synchronized methods is woven;
#   - Mono's own mscorlib and System woven, and a woven Mono program run on them;
#   - an assembly with no lock is left byte-identical; bad input fails cleanly.
source "$(dirname "$0")/../lib.sh"
LT=${LOCKTIME:-$LT_BUILD/san/locktime}

check "ltcheck builds" tools_build || exit 1
check "corpus builds" corpus_build || exit 1

# One report line: what the run-time writes (weaver/runtime/README.md), the holder when it is known,
# nothing else on the line.
REPORT_RE='^LockTime: [^ ].* (held [0-9]+\.[0-9]{3} ms, waited [0-9]+\.[0-9]{3} ms|waited [0-9]+\.[0-9]{3} ms, not acquired) at [^ ]+( \(held by [^ ].* at [^ ]+\))?$'

# The slow-lock lines of REPORTS, TAB-separated: method, held ms ("" when not acquired), waited ms,
# location.  A name may hold spaces ("Run (lambda at Closures.cs:67)", "Run > Local"): each line is
# taken apart by its shape, not by spaces.
slow_lines() { # REPORTS
	sed -nE 's/^LockTime: (.+) held ([0-9.]+) ms, waited ([0-9.]+) ms at ([^ ]+)( \(held by .*\))?$/\1\t\2\t\3\t\4/p
		s/^LockTime: (.+) waited ([0-9.]+) ms, not acquired at ([^ ]+)( \(held by .*\))?$/\1\t\t\2\t\3/p' "$1"
}

# Every acquisition site that `list` names appears in the reports, but the C# corpus's
# Exceptions::Misuse, whose lock calls all throw (a null lock, a bad timeout...) and acquire nothing;
# a site whose every acquisition re-entered a lock its thread held (Nested's inner lock of the outer
# lock's object) has no line - it is in the JSON report with its re-entries, no acquisition.
all_sites_report() { # INPUT REPORTS REPORT.json
	"$LT" list "$1" | list_fields | awk -F'\t' '$1 !~ /::Misuse( |$)/ { print $1 " at " ($4 != "" ? $4 : $2) }' |
		sort -u >"$LT_TMP/listed" || return 1
	{
		slow_lines "$2" | awk -F'\t' '{ print $1 " at " $4 }'
		python3 -c 'import json, sys
for s in json.load(open(sys.argv[1]))["sites"]:
    if s["acquisitions"] == 0 and s["failed"] == 0 and s.get("reentries", 0) > 0:
        print(s["method"] + " at " + s["location"])' "$3"
	} | sort -u >"$LT_TMP/reported"
	[ -s "$LT_TMP/listed" ] && comm -23 "$LT_TMP/listed" "$LT_TMP/reported" | tee "$LT_TMP/missing" && [ ! -s "$LT_TMP/missing" ]
}

# Each site's "within" in the JSON report says what its name says after the method (" (lambda at X)",
# " (lambda)", " > Local"), and null for every other site; in the C# program, Closures::Run's two
# lambdas and its local functions Local and StaticLocal are there with the enclosing method.
within_fields() { # REPORT.json NAME
	python3 - "$1" "$2" <<'PY'
import json, re, sys
sites, name = json.load(open(sys.argv[1]))["sites"], sys.argv[2]
seen = set()
for s in sites:
    m, w = s["method"], s["within"]
    lam, loc = re.fullmatch(r"(.*) \(lambda(?: at (.*))?\)", m), re.fullmatch(r"(.*?) > (.*)", m)
    want = ({"kind": "lambda", "method": lam[1], "location": lam[2]} if lam else
            {"kind": "local function", "method": loc[1], "name": loc[2]} if loc else None)
    if w != want:
        sys.exit("%s: within %s, the name says %s" % (m, w, want))
    if w and w["method"] == "LockCorpus.Closures::Run":
        seen.add((w["kind"], w.get("name") or (w["location"] or "").split(":")[0]))
if name.startswith(("csharp/", "net48/")) and seen != {("lambda", "Closures.cs"), ("local function", "Local"),
                                                       ("local function", "StaticLocal")}:
    sys.exit("Closures::Run's lambdas and local functions: %s" % sorted(seen))
PY
}

# `list` and ltcheck's independent System.Reflection.Metadata count agree.
list_matches_count() { # FILE
	local ours theirs
	ours=$("$LT" list "$1" | grep -vc ' Synchronized') || return 1
	theirs=$(ltcheck locks "$1" | sed -nE 's/^total [0-9]+: ([0-9]+) call sites.*/\1/p')
	echo "locktime list: $ours call sites; ltcheck: $theirs"
	[ "$ours" = "$theirs" ]
}

# Contended: one holder line with held >= 50 ms and one waiter line with waited >= 40 ms, in METHOD
# or a lambda of it.
contended_reported() { # REPORTS METHOD
	slow_lines "$1" | awk -F'\t' -v m="$2" '{ sub(/ \(lambda( at [^)]*)?\)$/, "", $1) }
		$1 == m && $2 != "" { if ($2 + 0 >= 50) h = 1; if ($3 + 0 >= 40) w = 1 }
		END { exit !(h && w) }' || { grep -F "$2" "$1"; return 1; }
}

# Monitor.Wait inside a synchronized method: the ~100 ms spent waiting is not hold time.
wait_not_held() { # REPORTS
	slow_lines "$1" | awk -F'\t' '$1 ~ /SyncCounter::Wait(Static)?Ready$/ && $2 != "" { n++; if ($2 + 0 >= 50) bad = 1 }
		END { exit !(n == 2 && !bad) }' || { grep -F 'Ready held' "$1"; return 1; }
}

# The program's last check: another thread took and released every lock it knows.
all_released() { # STDOUT
	grep -E 'released' "$1" && grep -qE 'released:? ([0-9]+) of \1( locks free)?$' "$1"
}

weave_twice_is_once() { # FILE
	cp "$1" "$LT_TMP/twice.dll" && "$LT" weave -q "$LT_TMP/twice.dll" && cmp "$1" "$LT_TMP/twice.dll"
}

deterministic() { # INPUT WOVEN
	"$LT" weave -q --threshold-ms 0 "$1" -o "$LT_TMP/again.dll" && cmp "$2" "$LT_TMP/again.dll"
}

# LT_WEAVE_ONLY=csharp/Release: only the corpus programs whose name starts so (tests/integration/hosts.sh
# runs this suite under wine, where each weave starts a Windows process).
while read -r name runner file; do
	[[ $name == "${LT_WEAVE_ONLY:-}"* ]] || continue
	dir=$LT_TMP/${name//\//-}
	rm -rf "$dir"; cp -r "$(dirname "$file")" "$dir"
	out=$dir/$(basename "$file")
	"$runner" "$file" >"$LT_TMP/expected" 2>/dev/null
	check "$name: list matches an independent count" list_matches_count "$file"
	check "$name: weave" "$LT" weave --threshold-ms 0 "$out" || continue
	check "$name: metadata reader accepts it" ltcheck verify "$out"
	[ "$runner" = dotnet ] && check "$name: every method JIT-compiles" ltcheck jit "$out"
	rm -f "$LT_TMP/run.json"
	LOCKTIME_REPORT="$LT_TMP/run.json" "$runner" "$out" >"$LT_TMP/actual" 2>"$LT_TMP/reports"
	check_same "$name: same stdout" "$LT_TMP/expected" "$LT_TMP/actual"
	check "$name: every site reports at threshold 0" all_sites_report "$file" "$LT_TMP/reports" "$LT_TMP/run.json"
	check "$name: the report's within fields" within_fields "$LT_TMP/run.json" "$name"
	case $name in csharp/* | net48/*)
		check "$name: contended lock: hold and wait measured" contended_reported "$LT_TMP/reports" LockCorpus.Threads::Contended
		check "$name: Monitor.Wait in a synchronized method is not hold time" wait_not_held "$LT_TMP/reports" ;;
	esac
	case $name in csharp/* | net48/* | mono/*)
		check "$name: every lock can be taken afterwards" all_released "$LT_TMP/actual" ;;
	esac
	LOCKTIME_DISABLED=1 "$runner" "$out" >"$LT_TMP/actual" 2>"$LT_TMP/reports"
	check_same "$name: LOCKTIME_DISABLED=1: same stdout" "$LT_TMP/expected" "$LT_TMP/actual"
	check "$name: LOCKTIME_DISABLED=1: no report" test ! -s "$LT_TMP/reports"
	check "$name: weaving again is a no-op" weave_twice_is_once "$out"
	check "$name: deterministic output" deterministic "$file" "$out"
done < <(corpus_programs)

# ---- Run-time switches, on the C# program woven above with threshold 0 ----
plain=$LT_CORPUS/csharp/Release/LockCorpus.dll
woven=$LT_TMP/csharp-Release/LockCorpus.dll
dotnet "$plain" >"$LT_TMP/expected" 2>/dev/null

# LOCKTIME_OUTPUT=stdout: reports come on stdout as whole lines among the program's; stderr stays empty.
output_stdout() {
	LOCKTIME_OUTPUT=stdout dotnet "$woven" >"$LT_TMP/out" 2>"$LT_TMP/err" || return 1
	grep -v '^LockTime: ' "$LT_TMP/out" | diff "$LT_TMP/expected" - || return 1
	grep '^LockTime: ' "$LT_TMP/out" | grep -vE "$REPORT_RE" | head -5 >"$LT_TMP/bad"
	cat "$LT_TMP/bad" "$LT_TMP/err"
	grep -qE "$REPORT_RE" "$LT_TMP/out" && [ ! -s "$LT_TMP/bad" ] && [ ! -s "$LT_TMP/err" ]
}

# LOCKTIME_OUTPUT=FILE: appended (what was there stays), whole lines; the Burst class has 4 threads
# release one lock 1000 times at once, and each release writes a line: none may be mixed or lost.
output_file() {
	local log=$LT_TMP/locks.log n1 n2 burst
	echo "a line from before" >"$log"
	LOCKTIME_OUTPUT=$log dotnet "$woven" >"$LT_TMP/out" 2>"$LT_TMP/err" || return 1
	diff "$LT_TMP/expected" "$LT_TMP/out" && [ ! -s "$LT_TMP/err" ] || return 1
	n1=$(wc -l <"$log")
	LOCKTIME_OUTPUT=$log dotnet "$woven" >/dev/null 2>&1 || return 1
	n2=$(wc -l <"$log")
	echo "lines after one run: $n1, after two: $n2"
	[ "$(head -n 1 "$log")" = "a line from before" ] && [ "$n2" -gt "$n1" ] || return 1
	tail -n +2 "$log" | grep -vE "$REPORT_RE" | head -5 | tee "$LT_TMP/bad"
	burst=$(grep -cE '^LockTime: LockCorpus\.Burst::Run \(lambda at Program\.cs:[0-9]+\) held' "$log")
	echo "burst reports: $burst of 2000"
	[ ! -s "$LT_TMP/bad" ] && [ "$burst" -eq 2000 ]
}

# LOCKTIME_THRESHOLD_MS overrides the baked threshold: 100 s silences this threshold-0 weave.
threshold_raised() {
	LOCKTIME_THRESHOLD_MS=100000 dotnet "$woven" >"$LT_TMP/out" 2>"$LT_TMP/err" || return 1
	cat "$LT_TMP/err"
	diff "$LT_TMP/expected" "$LT_TMP/out" && [ ! -s "$LT_TMP/err" ]
}

# ... and 0 makes a weave with the default threshold (1 ms) report every site.
threshold_lowered() {
	local dir=$LT_TMP/default-threshold
	rm -rf "$dir" && cp -r "$(dirname "$plain")" "$dir" && "$LT" weave -q "$dir/LockCorpus.dll" || return 1
	LOCKTIME_THRESHOLD_MS=0 dotnet "$dir/LockCorpus.dll" >"$LT_TMP/out" 2>"$LT_TMP/err" || return 1
	diff "$LT_TMP/expected" "$LT_TMP/out" && all_sites_report "$plain" "$LT_TMP/err"
}

check "LOCKTIME_OUTPUT=stdout: whole report lines on stdout, none on stderr" output_stdout
check "LOCKTIME_OUTPUT=FILE: appended, whole lines from 4 threads at once" output_file
check "LOCKTIME_THRESHOLD_MS=100000 silences a threshold-0 weave" threshold_raised
check "LOCKTIME_THRESHOLD_MS=0 makes a default weave report every site" threshold_lowered

# -r adds to the framework the target references: System.Runtime.dll alone (no Thread in it) weaves as
# no -r does, the program verifies, JIT-compiles and reports every site.
one_reference() {
	local dir=$LT_TMP/one-reference ref
	ref=$(ls /usr/share/dotnet/packs/Microsoft.NETCore.App.Ref/*/ref/net*/System.Runtime.dll | tail -n 1)
	[ -f "$ref" ] || return 1
	rm -rf "$dir" && cp -r "$(dirname "$plain")" "$dir" || return 1
	"$LT" weave --threshold-ms 0 -r "$ref" "$dir/LockCorpus.dll" | tee "$LT_TMP/said" || return 1
	grep -q 'woven, [0-9]* lock sites timed' "$LT_TMP/said" && ltcheck verify "$dir/LockCorpus.dll" &&
		ltcheck jit "$dir/LockCorpus.dll" || return 1
	dotnet "$dir/LockCorpus.dll" >"$LT_TMP/out" 2>"$LT_TMP/err" || return 1
	diff "$LT_TMP/expected" "$LT_TMP/out" && all_sites_report "$plain" "$LT_TMP/err"
}
check "-r System.Runtime.dll alone adds to the framework: woven, verifies, JIT-compiles, every site reports" one_reference

# list on a reference assembly - one that references its attribute (System.Threading) and the core
# one that defines it (System.Runtime) - prints no site and says why, exit 0.
list_reference() {
	local ref dir
	dir=$(dirname "$(ls /usr/share/dotnet/packs/Microsoft.NETCore.App.Ref/*/ref/net*/System.Runtime.dll | tail -n 1)")
	for ref in "$dir/System.Threading.dll" "$dir/System.Runtime.dll"; do
		"$LT" list "$ref" >"$LT_TMP/out" 2>"$LT_TMP/err" || return 1
		cat "$LT_TMP/err"
		[ ! -s "$LT_TMP/out" ] && grep -qF "$ref: a reference assembly: its methods have no real bodies, so no lock sites" "$LT_TMP/err" ||
			return 1
	done
}
check "list on a reference assembly: no site, a note that it has no bodies, exit 0" list_reference

# ---- An assembly whose only locks are synchronized methods ----
synconly=$LT_CORPUS/synconly/SyncOnly.exe
sync_only() {
	local out=$LT_TMP/SyncOnly.exe
	cp "$synconly" "$out" && "$LT" weave --threshold-ms 0 "$out" | tee "$LT_TMP/said" || return 1
	grep -q 'woven, 3 lock sites timed' "$LT_TMP/said" || return 1
	mono "$synconly" >"$LT_TMP/expected" 2>/dev/null
	mono "$out" >"$LT_TMP/out" 2>"$LT_TMP/err" || return 1
	diff "$LT_TMP/expected" "$LT_TMP/out" && all_sites_report "$synconly" "$LT_TMP/err"
}
check "synchronized methods only: woven, every one reports" sync_only

# ---- Third-party code: woven, readable, and (for .NET assemblies) every method JIT-compiles ----
while read -r file; do
	name=$(basename "$file")
	out=$LT_TMP/tp/$name
	mkdir -p "$LT_TMP/tp"
	check "$name: list matches an independent count" list_matches_count "$file"
	check "$name: weave" "$LT" weave -q "$file" -o "$out" || continue
	check "$name: metadata reader accepts it" ltcheck verify "$out"
	case $name in
	Newtonsoft.Json.dll | Serilog.dll | NLog.dll | log4net.dll | Polly*.dll)
		check "$name: every method JIT-compiles" ltcheck jit "$out" "$(dirname "$file")" ;;
	esac
done < <(corpus_thirdparty)

# ---- Mono: the program's Console is made on the program's thread ----
# Mono makes Console's writers in its class constructor, and the run-time's sinks write through
# Console.Error there: made by the writer thread while the program's first Console.WriteLine waited
# for it, that WriteLine threw NullReferenceException (about 1 run in 600). The start makes Console
# on the program's thread first (Consoles.Prepare): a woven program that never uses Console, with a
# line to write, checks its terminal (TCGETS) on its main thread only, in every run.
console_on_main() {
	local dir=$LT_TMP/monoconsole main
	mkdir -p "$dir"
	printf '%s\n' 'class NoConsole { static readonly object a = new object();' \
		'static void Main() { lock (a) { } System.Threading.Thread.Sleep(50); } }' >"$dir/NoConsole.cs"
	mcs -out:"$dir/NoConsole.exe" "$dir/NoConsole.cs" && "$LT" weave -q "$dir/NoConsole.exe" || return 1
	LOCKTIME_THRESHOLD_MS=0 strace -f -o "$dir/strace" -e trace=execve,ioctl mono "$dir/NoConsole.exe" >"$dir/out" 2>"$dir/err" || return 1
	grep -q '^LockTime: NoConsole::Main held' "$dir/err" || { cat "$dir/err"; return 1; }
	main=$(awk '/execve\(/ { print $1; exit }' "$dir/strace")
	grep 'TCGETS' "$dir/strace"
	[ -n "$main" ] && grep -q "^$main .*TCGETS" "$dir/strace" && ! grep 'TCGETS' "$dir/strace" | grep -qv "^$main "
}
if command -v strace >/dev/null && strace -o /dev/null true 2>/dev/null; then
	check "mono: Console made on the program's thread, not the writer's" console_on_main
else
	skip "mono: Console made on the program's thread" "no strace, or no ptrace here"
fi

# ---- Mono's own class libraries, woven and run ----
# mscorlib has no Stopwatch (Mono keeps it in System.dll): its stubs use mscorlib's own clock. The
# woven mscorlib and System go first on MONO_PATH, under the woven Mono program - without -O=-aot:
# Debian's Mono ships mscorlib compiled ahead of time (/usr/lib/mono/aot-cache) and matches that
# native code to an assembly by the first entry of its #GUID heap, which weaving replaces with the
# new Mvid, so Mono JIT-compiles the woven IL instead of running the un-woven mscorlib's native code.
monolib=$LT_TMP/monolib
mono_program() { # the woven copy of the Mono corpus program in $monolib
	cp "$LT_CORPUS/mono/Release/MonoLocks.exe" "$monolib/" && "$LT" weave -q "$monolib/MonoLocks.exe"
}
# The woven module's Mvid is a new GUID, and it is the first #GUID entry (what Mono takes).
new_first_guid() { # INPUT WOVEN
	local a b
	a=$(monodis --module "$1" | sed -n 's/^1: .*{\(.*\)}$/\1/p')
	b=$(monodis --module "$2" | sed -n 's/^1: .*{\(.*\)}$/\1/p')
	echo "Mvid $a -> $b"
	[ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ] &&
		[ "$(od -An -tx1 -N16 -j "$(guid_heap_offset "$2")" "$2" | tr -d ' \n')" = "$(guid_bytes "$b")" ]
}
# The file offset of the #GUID heap (from the metadata root's stream headers, II.24.2.2).
guid_heap_offset() { # FILE
	python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
pe = struct.unpack_from('<I', d, 0x3c)[0]
nsec = struct.unpack_from('<H', d, pe + 6)[0]
opt = pe + 24
magic = struct.unpack_from('<H', d, opt)[0]
dirs = opt + (96 if magic == 0x10b else 112)
secs = opt + struct.unpack_from('<H', d, pe + 20)[0]
def off(rva):
    for i in range(nsec):
        va, size, raw = struct.unpack_from('<I', d, secs + 40 * i + 12)[0], struct.unpack_from('<I', d, secs + 40 * i + 8)[0], struct.unpack_from('<I', d, secs + 40 * i + 20)[0]
        if va <= rva < va + max(size, 1):
            return rva - va + raw
cli = off(struct.unpack_from('<I', d, dirs + 14 * 8)[0])
root = off(struct.unpack_from('<I', d, cli + 8)[0])
vlen = struct.unpack_from('<I', d, root + 12)[0]
p = root + 16 + vlen + 2
for _ in range(struct.unpack_from('<H', d, p)[0]):
    o, s = struct.unpack_from('<II', d, p + 2)
    name = d[p + 10:d.index(b'\0', p + 10)]
    if name == b'#GUID':
        print(root + o)
    p = p + 8 + (len(name) + 4) // 4 * 4
PY
}
guid_bytes() { # {GUID text}: its 16 bytes in #GUID order (Data1-3 little-endian)
	local g=${1//-/}
	echo "${g:6:2}${g:4:2}${g:2:2}${g:0:2}${g:10:2}${g:8:2}${g:14:2}${g:12:2}${g:16:16}" | tr 'A-F' 'a-f'
}
mono_on_woven_corlib() {
	mono "$LT_CORPUS/mono/Release/MonoLocks.exe" >"$LT_TMP/expected" 2>/dev/null
	LOCKTIME_THRESHOLD_MS=0 MONO_PATH=$monolib mono "$monolib/MonoLocks.exe" >"$LT_TMP/out" 2>"$LT_TMP/err" ||
		{ tail -n 5 "$LT_TMP/err"; return 1; }
	diff "$LT_TMP/expected" "$LT_TMP/out"
}
reports_from_both() {
	grep -m 3 '^LockTime: System\.' "$LT_TMP/err" && grep -q '^LockTime: MonoLocks' "$LT_TMP/err"
}
# The program's one SemaphoreSlim.Wait is counted once: the woven mscorlib has no site inside the lock
# types' own methods (SemaphoreSlim.Wait() calls its own Wait(int, CancellationToken)), and the report
# file has one SemaphoreSlim.Wait acquisition in all, at the program's site. The run prints its summary,
# which the next check counts: two copies that each owned a registry printed two (and the report of the
# one whose exit wrote last: mscorlib's, without the program's site, in 1 run of 5).
semaphore_once() {
	local inside
	inside=$("$LT" list "$monolib/mscorlib.dll" | awk '$1 ~ /^System\.Threading\.(SemaphoreSlim|Monitor|Mutex|WaitHandle|SpinLock|ReaderWriterLock(Slim)?)(\+|::)/' | wc -l)
	echo "woven mscorlib: $inside sites inside the lock types"
	[ "$inside" = 0 ] || return 1
	env -u LOCKTIME_SUMMARY LOCKTIME_REPORT="$LT_TMP/mono-report.json" MONO_PATH="$monolib" mono "$monolib/MonoLocks.exe" >/dev/null 2>"$LT_TMP/mono-once.err" || return 1
	python3 - "$LT_TMP/mono-report.json" <<'PY'
import json, sys
sites = [s for s in json.load(open(sys.argv[1]))["sites"] if s["kind"] == "SemaphoreSlim.Wait" and s["acquisitions"]]
print("SemaphoreSlim.Wait sites acquired: " + ", ".join("%s %d" % (s["method"], s["acquisitions"]) for s in sites))
sys.exit(not (len(sites) == 1 and sites[0]["method"] == "MonoLocks::Gated" and sites[0]["acquisitions"] == 1))
PY
}
mkdir -p "$monolib"
if check "mono mscorlib.dll + System.dll: woven" "$LT" weave -q "$LT_CORPUS/thirdparty/mscorlib.dll" -o "$monolib/mscorlib.dll" &&
	"$LT" weave -q "$LT_CORPUS/thirdparty/System.dll" -o "$monolib/System.dll" && check "mono: program woven" mono_program; then
	check "mono: woven mscorlib's Mvid is new, and the first #GUID entry" new_first_guid "$LT_CORPUS/thirdparty/mscorlib.dll" "$monolib/mscorlib.dll"
	check "mono: the woven program runs on the woven mscorlib and System (no -O=-aot), same stdout" mono_on_woven_corlib &&
		check "mono: reports from the class library and from the program" reports_from_both &&
		check "mono: the program's one SemaphoreSlim.Wait is counted once on the woven mscorlib" semaphore_once &&
		check "mono: one summary on the woven mscorlib (one registry: Console's timed locks in the program's start join it)" \
			test "$(grep -c '^LockTime: summary: ' "$LT_TMP/mono-once.err")" = 1
fi

# No lock: the file is left byte-identical, and the tool says so.
nolock=/usr/lib/mono/4.5/Facades/System.Runtime.dll
cp "$nolock" "$LT_TMP/nolock.dll"
check "no lock: nothing to weave" "$LT" weave "$LT_TMP/nolock.dll"
check "no lock: byte-identical" cmp "$nolock" "$LT_TMP/nolock.dll"

# refused FILE ERROR: weaving FILE exits 1 with "FILE: error ERROR" and leaves it as it was.
refused() {
	local rc
	cp "$1" "$LT_TMP/refused.orig"
	"$LT" weave "$1" 2>"$LT_TMP/err"
	rc=$?
	[ "$rc" = 1 ] && grep -q "$(basename "$1"): error $2" "$LT_TMP/err" && cmp -s "$1" "$LT_TMP/refused.orig" ||
		{ echo "exit $rc: $(cat "$LT_TMP/err")"; return 1; }
}

# Bad input: exit 1, an LT0NN error, the file untouched; usage errors exit 2.
printf 'MZ not a PE file' >"$LT_TMP/bad.dll"
check "bad input: error LT002, exit 1, file untouched" refused "$LT_TMP/bad.dll" "LT002: "
"$LT" weave --threshold-ms nope "$LT_TMP/bad.dll" 2>/dev/null
check "usage error exits 2" test $? = 2

# A ReadyToRun assembly (the shared framework's are) is refused as one, whatever else it lacks.
r2r=$(ls "$(dirname "$(readlink -f "$(command -v dotnet)")")"/shared/Microsoft.NETCore.App/*/System.Collections.Concurrent.dll 2>/dev/null | head -n 1)
if [ -n "$r2r" ]; then
	cp "$r2r" "$LT_TMP/r2r.dll"
	check "ReadyToRun input: error LT008, exit 1, file untouched" refused "$LT_TMP/r2r.dll" "LT008: ReadyToRun"
else
	skip "ReadyToRun input" "no shared framework found beside dotnet"
fi

# list on a woven assembly lists its woven sites, as many as before weaving, each marked (woven).
listed_woven() {
	local f=$LT_TMP/listed.dll before after
	cp "$LT_CORPUS/csharp/Release/LockCorpus.dll" "$f"
	before=$("$LT" list "$f" | wc -l)
	"$LT" weave -q "$f" || return 1
	"$LT" list "$f" >"$LT_TMP/list.out" 2>"$LT_TMP/list.err" || { cat "$LT_TMP/list.err"; return 1; }
	after=$(grep -c ' (woven)$' "$LT_TMP/list.out")
	echo "$before sites before, $after woven sites listed after"
	[ "$before" -gt 0 ] && [ "$before" = "$after" ] && [ "$(wc -l <"$LT_TMP/list.out")" = "$after" ] && [ ! -s "$LT_TMP/list.err" ]
}
check "list on a woven assembly: its sites, marked woven, exit 0" listed_woven
done_testing
