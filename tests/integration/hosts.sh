#!/usr/bin/env bash
# The package's other hosts: the linux-arm64 binary under qemu-user and the win-x64 binary under wine.
#   - each binary's format and CPU, static (Linux) or importing only system DLLs (Windows), none with OpenSSL;
#   - each weaves the corpus, Mono's class libraries and a .nupkg to the very bytes linux-x64's does,
#     and lists the same sites;
#   - Windows: "\" paths, a drive letter (wine's Z: is /), a non-ASCII folder, in-place weaving, two
#     parallel weaves of one file (one waits for the other's LockFileEx lock; no lock file or
#     temporary left), stdout in binary mode ("\n", not "\r\n"); --key-container reads CryptoAPI's key
#     containers (user's and machine's, filled by tests/integration/keycontainer_win.c): sn -vf verifies,
#     LT020 for a key that cannot be exported, LT021 for none;
#   - the end-to-end suites with each binary as the tool ($LOCKTIME a wrapper): under wine weave.sh's
#     C# Release program, pdb, nupkg and hostile; under qemu pdb (LT_HOSTS_FULL=1: all four whole on
#     both; see the end for why).
# Needs make static-tools (run here), qemu-aarch64-static, wine (make deps installs them).
source "$(dirname "$0")/../lib.sh"
export WINEDEBUG=-all WINEPREFIX=$LT_BUILD/wine
LINUX=$LT_BUILD/static/locktime
ARM=$LT_BUILD/static/linux-arm64/locktime
WIN=$LT_BUILD/static/win-x64/locktime.exe

check "make static-tools (linux-x64, linux-arm64, win-x64)" make -s -C "$LT_ROOT" static-tools || exit 1
check "ltcheck and the corpus build" corpus_build || exit 1

# --- The binaries ------------------------------------------------------------------------------------------

is_format() { # FILE PATTERN: file(1) says PATTERN
	file -b "$1" | tee /dev/stderr | grep -qE "$2"
}
check "linux-x64: static-pie ELF for x86-64" is_format "$LINUX" '^ELF 64-bit LSB pie executable, x86-64, .*static-pie linked'
check "linux-arm64: static-pie ELF for AArch64" is_format "$ARM" '^ELF 64-bit LSB pie executable, ARM aarch64, .*static-pie linked'
check "win-x64: PE32+ console program for x86-64" is_format "$WIN" '^PE32\+ executable \(console\) x86-64'
no_dynamic() { # ELF: no program interpreter, no needed library
	! readelf -lW "$1" | grep -q 'INTERP' && ! readelf -dW "$1" | grep -q '(NEEDED)'
}
check "linux-x64: needs no shared library" no_dynamic "$LINUX"
check "linux-arm64: needs no shared library" no_dynamic "$ARM"
system_dlls_only() { # PE: every imported DLL is one Windows itself has
	local dlls
	dlls=$(objdump -p "$1" | sed -n 's/^[[:space:]]*DLL Name: //p' | tr '[:upper:]' '[:lower:]' | sort -u)
	echo "imports:" $dlls
	[ -n "$dlls" ] && [ -z "$(printf '%s\n' $dlls | grep -vxE 'kernel32\.dll|msvcrt\.dll|advapi32\.dll|shell32\.dll|bcrypt\.dll|user32\.dll')" ]
}
check "win-x64: imports only system DLLs" system_dlls_only "$WIN"
no_openssl() { # FILE: no OpenSSL library, symbol or string in it
	! grep -qaiE 'openssl|libssl|libcrypto\.so' "$1"
}
check "linux-x64: no OpenSSL in it" no_openssl "$LINUX"
check "linux-arm64: no OpenSSL in it" no_openssl "$ARM"
check "win-x64: no OpenSSL in it" no_openssl "$WIN"

# --- Byte-identical weaves ---------------------------------------------------------------------------------

# The wrappers: one command per host, as the tool of the suites below.
mkdir -p "$LT_TMP/bin"
printf '#!/bin/sh\nexec qemu-aarch64-static "%s" "$@"\n' "$ARM" >"$LT_TMP/bin/locktime-linux-arm64"
printf '#!/bin/sh\nexec wine "%s" "$@"\n' "$WIN" >"$LT_TMP/bin/locktime-win-x64"
chmod +x "$LT_TMP/bin/"*
# One wine server and its services for every run, started with no pipe of ours open (wine's services
# would keep a captured output open forever), stopped at the end.
wine_start() {
	wineserver -p </dev/null >/dev/null 2>&1 && wine wineboot </dev/null >/dev/null 2>&1
}
wine_start
trap 'wineserver -k 2>/dev/null; rm -rf "$LT_TMP"' EXIT
check "win-x64: starts under wine" "$LT_TMP/bin/locktime-win-x64" --version

# The inputs: the corpus (every assembly compiled from tests/corpus), Mono's class libraries, a .nupkg.
inputs=()
while IFS= read -r f; do inputs+=("$f"); done < <(find "$LT_CORPUS" -path '*/obj/*' -prune -o \
	\( -name '*.dll' -o -name '*.exe' \) -path '*/Release/*' -print | LC_ALL=C sort)
for f in mscorlib System System.Core System.Xml System.Data System.Net.Http System.Web; do
	inputs+=("/usr/lib/mono/4.5/$f.dll")
done
# A package of two corpus assemblies (python's zipfile, as tests/package does).
python3 - "$LT_TMP/Corpus.1.0.0.nupkg" "$LT_CORPUS/csharp/Release/LockCorpus.dll" "$LT_CORPUS/net48/Release/LockCorpus48.exe" <<'EOF'
import sys, zipfile
out, dll, exe = sys.argv[1:]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("[Content_Types].xml", '<?xml version="1.0" encoding="utf-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="nuspec" ContentType="application/octet"/><Default Extension="dll" ContentType="application/octet"/><Default Extension="exe" ContentType="application/octet"/></Types>')
    z.writestr("Corpus.nuspec", '<?xml version="1.0" encoding="utf-8"?><package xmlns="http://schemas.microsoft.com/packaging/2013/05/nuspec.xsd"><metadata><id>Corpus</id><version>1.0.0</version><authors>LockTime tests</authors><description>corpus</description></metadata></package>')
    z.write(dll, "lib/net8.0/LockCorpus.dll")
    z.write(exe, "lib/net48/LockCorpus48.exe")
EOF
inputs+=("$LT_TMP/Corpus.1.0.0.nupkg")

# weave_all DIR TOOL: each input copied to DIR (with its .pdb), woven there by TOOL; the list of sites too.
weave_all() {
	local dir=$1 tool=$2 f name
	mkdir -p "$dir"
	for f in "${inputs[@]}"; do
		name=$(echo "${f#/}" | tr '/' '_')
		cp "$f" "$dir/$name"
		[ -f "${f%.*}.pdb" ] && cp "${f%.*}.pdb" "$dir/${name%.*}.pdb"
		"$tool" list "$dir/$name" >"$dir/$name.list" 2>"$dir/$name.err"
		"$tool" weave -q "$dir/$name" >"$dir/$name.log" 2>&1 || { echo "$name: exit $?"; cat "$dir/$name.log"; return 1; }
	done
}
check "linux-x64: weaves ${#inputs[@]} inputs (the corpus, Mono's class libraries, a .nupkg)" weave_all "$LT_TMP/out/linux-x64" "$LINUX"
# Wine's own diagnostics on a program's stderr ("0024:fixme:...", "wine: ..."; once, under load, before the first
# list's output), which are not the tool's.
not_wine() {
	grep -vE '^[0-9a-f]{4}:(fixme|err|warn|trace):|^wine: ' "$1"
}
same_as_x64() { # RID: every output, PDB and list (and what the list said on stderr) is byte-identical to linux-x64's
	local f differ=0
	for f in "$LT_TMP/out/linux-x64/"*; do
		[[ $f == *.log ]] && continue
		if [[ $f == *.err ]]; then
			cmp <(not_wine "$f") <(not_wine "$LT_TMP/out/$1/${f##*/}") || differ=1
		else
			cmp "$f" "$LT_TMP/out/$1/${f##*/}" || differ=1
		fi
	done
	return $differ
}
for rid in linux-arm64 win-x64; do
	check "$rid: weaves the same ${#inputs[@]} inputs" weave_all "$LT_TMP/out/$rid" "$LT_TMP/bin/locktime-$rid"
	check "$rid: every woven file, PDB and site list is byte-identical to linux-x64's" same_as_x64 "$rid"
done

# --- Windows paths, locks and streams ----------------------------------------------------------------------

W=$LT_TMP/bin/locktime-win-x64
# The C# corpus program without its PDB (each test copies the .dll alone), and linux-x64's weave of it.
mkdir -p "$LT_TMP/nopdb"
src=$LT_TMP/nopdb/LockCorpus.dll expected=$LT_TMP/nopdb/expected.dll
cp "$LT_CORPUS/csharp/Release/LockCorpus.dll" "$src"
cp "$src" "$expected" && "$LINUX" weave -q "$expected"
winpath() { # PATH: its Windows name under wine (Z: is /), with "\"
	printf 'Z:%s' "$1" | tr '/' '\\'
}
nonascii="$LT_TMP/dé jà vu ünïcødé"
mkdir -p "$nonascii"
cp "$src" "$nonascii/in.dll"
check "win-x64: \\ paths and a drive letter (Z:\\...), -o into a non-ASCII folder" \
	"$W" weave -q -o "$(winpath "$nonascii/out.dll")" "$(winpath "$nonascii/in.dll")"
check "win-x64: that output is linux-x64's" cmp "$expected" "$nonascii/out.dll"
check "win-x64: in place in the non-ASCII folder, / paths" "$W" weave -q "$nonascii/in.dll"
check "win-x64: the in-place output is linux-x64's" cmp "$expected" "$nonascii/in.dll"
check "win-x64: weaving the woven file again is a no-op" "$W" weave -q "$(winpath "$nonascii/in.dll")"
check "win-x64: still linux-x64's" cmp "$expected" "$nonascii/in.dll"
mixed() { # a relative path with "\" from the file's folder (a build runs in the project folder)
	cp "$src" "$nonascii/rel.dll" && (cd "$LT_TMP" && "$W" weave -q "${nonascii##*/}\\rel.dll") && cmp "$expected" "$nonascii/rel.dll"
}
check "win-x64: a relative path with \\" mixed
two_at_once() { # two processes weave one file in place: one waits for the other; one weaves, one finds it woven
	local i
	for i in 1 2 3; do
		cp "$src" "$nonascii/both.dll"
		"$W" weave "$(winpath "$nonascii/both.dll")" >"$LT_TMP/p1.log" 2>&1 &
		"$W" weave "$nonascii/both.dll" >"$LT_TMP/p2.log" 2>&1 || { cat "$LT_TMP/p2.log"; return 1; }
		wait $! || { cat "$LT_TMP/p1.log"; return 1; }
		cmp "$expected" "$nonascii/both.dll" || return 1
		[ "$(cat "$LT_TMP/p1.log" "$LT_TMP/p2.log" | grep -c 'woven, [0-9]* lock sites')" = 1 ] ||
			{ cat "$LT_TMP/p1.log" "$LT_TMP/p2.log"; return 1; }
	done
}
check "win-x64: two parallel weaves of one file (3 rounds): one weaves, the other waits and finds it woven" two_at_once
leftovers() {
	local left
	left=$(find "$nonascii" -name '*.locktime*')
	[ -z "$left" ] || { echo "left: $left"; return 1; }
}
check "win-x64: no lock file or temporary left behind" leftovers
no_cr() { # list's lines end in "\n" alone, and are linux-x64's
	"$W" list "$src" >"$LT_TMP/win.list" && ! grep -q $'\r' "$LT_TMP/win.list" && "$LINUX" list "$src" | cmp - "$LT_TMP/win.list"
}
check "win-x64: stdout in binary mode (list: no \\r, linux-x64's very bytes)" no_cr

# --- Windows key containers --------------------------------------------------------------------------------

# CryptoAPI's key containers (what csc -keycontainer signs with, and MSBuild's VS_KEY_ containers of .pfx
# keys), filled under wine by keycontainer_win as `sn -i` does, read by --key-container.
KC=$LT_TMP/keycontainer_win.exe
check "keycontainer_win builds (mingw-w64)" \
	x86_64-w64-mingw32-gcc -std=c11 -O2 -Wall -Wextra -o "$KC" "$LT_ROOT/tests/integration/keycontainer_win.c" -ladvapi32
containers=(LockTimeUser LockTimeMachine LockTimeFixed)
drop_containers() { # what this section (or a killed run of it) put in the wine prefix
	local c
	for c in "${containers[@]}"; do
		wine "$KC" delete "$c" </dev/null >/dev/null 2>&1
		wine "$KC" delete "$c" machine </dev/null >/dev/null 2>&1
	done
	return 0
}
drop_containers
sn -q -k "$LT_TMP/win.snk" >/dev/null
printf 'public static class SnWin { static readonly object G = new object(); public static void F() { lock (G) { } } }\n' >"$LT_TMP/SnWin.cs"
check "a key pair imported into the user's container LockTimeUser (exportable)" wine "$KC" import "$(winpath "$LT_TMP/win.snk")" LockTimeUser
check "... into the machine's container LockTimeMachine" wine "$KC" import "$(winpath "$LT_TMP/win.snk")" LockTimeMachine machine
check "... into LockTimeFixed, not exportable" wine "$KC" import "$(winpath "$LT_TMP/win.snk")" LockTimeFixed unexportable
token() { # ASSEMBLY: its public key token
	sn -T "$1" | sed -n 's/^Public Key Token: *//p' | tr -d '\r '
}
signed_win() { # NAME: a library signed with win.snk, in $LT_TMP/NAME.dll
	mcs -target:library "-keyfile:$LT_TMP/win.snk" "-out:$LT_TMP/$1.dll" "$LT_TMP/SnWin.cs"
}
from_container_win() { # NAME CONTAINER: woven by win-x64 with --key-container, sn -vf verifies, the token unchanged
	local f=$LT_TMP/$1.dll before
	signed_win "$1" && before=$(token "$f") || return 1
	"$W" weave -v --key-container "$2" "$(winpath "$f")" >"$LT_TMP/kc.out" 2>&1 || { cat "$LT_TMP/kc.out"; return 1; }
	grep -q 'strong-name signed again' "$LT_TMP/kc.out" && sn -vf "$f" | tail -n 1 | tee /dev/stderr | grep -q 'is strongnamed' &&
		[ -n "$before" ] && [ "$(token "$f")" = "$before" ]
}
check "win-x64: --key-container LockTimeUser (user's key set): sn -vf verifies, public key token unchanged" from_container_win KcUser LockTimeUser
check "win-x64: --key-container LockTimeMachine (machine's key set): sn -vf verifies, token unchanged" from_container_win KcMachine LockTimeMachine
refused_win() { # NAME CONTAINER PATTERN: the weave fails with PATTERN (grep -E), the input untouched
	local f=$LT_TMP/$1.dll sum
	signed_win "$1" && sum=$(md5sum <"$f") || return 1
	"$W" weave --key-container "$2" "$f" 2>"$LT_TMP/kc.err" && { echo "weave succeeded"; return 1; }
	cat "$LT_TMP/kc.err"
	grep -qE "$3" "$LT_TMP/kc.err" && [ "$(md5sum <"$f")" = "$sum" ]
}
check "win-x64: a container whose key pair is not exportable: error LT020 saying so, input untouched" refused_win KcFixed LockTimeFixed \
	"locktime: error LT020: the key pair of container 'LockTimeFixed' \(user key set\) cannot be exported \(it was imported without CRYPT_EXPORTABLE\)"
check "win-x64: no such container: error LT021 naming it and both key sets, input untouched" refused_win KcNone LockTimeNone \
	"locktime: error LT021: no key container 'LockTimeNone' in CryptoAPI's key sets \(PROV_RSA_FULL\): neither the user's nor the machine's"
drop_containers

# --- The end-to-end suites with each binary as the tool ----------------------------------------------------

# suite RID NAME [ARGS]: tests/integration/NAME.sh with LOCKTIME=the RID's wrapper, its TAP lines prefixed.
# suite RID NAME CMD...: the suite NAME.sh run with the RID's locktime, its TAP lines named for both and
# counted here; its own plan checked (a suite that stopped early fails) and not repeated.
suite() {
	local rid=$1 name=$2 out
	shift 2
	out=$(LOCKTIME=$LT_TMP/bin/locktime-$rid "$@" bash "$LT_ROOT/tests/integration/$name.sh" 2>&1 |
		sed -E "s/^(not )?ok - /\1ok - $rid: $name: /")
	printf '%s\n' "$out" | grep -vE '^1[.][.][0-9]+$' | tap_relay
	grep -qE '^1[.][.][0-9]+$' <<<"$out" ||
		not_ok "$rid: $name: the suite ran to its end (its plan printed)" "$(tail -n 5 <<<"$out")"
}
# The suites' cost is mostly .NET's and Mono's (weave.sh runs every corpus program eight ways) and the
# release build's (hostile.sh's thousands of mutants), not the tool's, so CI runs a subset
# (LT_HOSTS_FULL=1: all four whole on both): on win-x64, whose file layer is its own, weave.sh's C#
# Release program, pdb, nupkg and hostile; on linux-arm64, the same POSIX code as linux-x64 compiled
# for another CPU (its corpus and Mono weaves are byte-identical above), pdb.
if [ -n "${LT_HOSTS_FULL:-}" ]; then
	runs=("linux-arm64 weave" "linux-arm64 pdb" "linux-arm64 nupkg" "linux-arm64 hostile"
		"win-x64 weave" "win-x64 pdb" "win-x64 nupkg" "win-x64 hostile")
else
	runs=("linux-arm64 pdb" "win-x64 weave csharp/Release" "win-x64 pdb" "win-x64 nupkg" "win-x64 hostile")
fi
for run in "${runs[@]}"; do
	read -r rid name only <<<"$run"
	start=$SECONDS
	suite "$rid" "$name" env LT_WEAVE_ONLY="${only:-}"
	echo "# $rid: $name.sh took $((SECONDS - start)) s"
done
done_testing
