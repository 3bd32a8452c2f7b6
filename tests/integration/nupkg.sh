#!/usr/bin/env bash
# `locktime weave` and `locktime list` on NuGet packages, end to end, on real packages whose code
# takes locks (Newtonsoft.Json, Serilog, NLog, log4net, Polly.Core) and on hostile ones:
#   - `list` names, per entry, exactly the sites `list` finds in the package's extracted assemblies;
#   - the woven package keeps every other entry byte for byte (names, order, raw bytes, CRC, times)
#     and drops .signature.p7s with a warning; the input is untouched; weaving it again changes
#     nothing; in place (atomic) gives the bytes -o gives; every woven assembly passes ltcheck verify;
#   - the woven packages restore from a local folder feed (nuget.config adds the folder and keeps the
#     configured sources; a private NUGET_PACKAGES under build/ keeps the user's cache out of it) into
#     tests/package/Consumer, which prints what it prints with the original packages, JIT-compiles,
#     and reports locks taken inside each library at LOCKTIME_THRESHOLD_MS=0;
#   - LockTimePackages: an app built with the LockTime package (make package) and LockTimePackages
#     naming two of its three packages gets woven copies of those two in bin/ and in what dotnet
#     publish writes, reports locks inside them and not inside the third; a no-change build does
#     not weave again; LockTimeEnabled=false copies the package's own; the packages folder's
#     contents stay the same;
#   - hostile packages (path traversal, absolute paths, drive letters, backslashes, %-escaped dots,
#     duplicates, a zip bomb, a huge declared size, too many entries, no or a malformed .nuspec, not a
#     zip, truncated, corrupt): error LT016, exit 1, no output, input untouched, nothing written
#     anywhere.
# Needs python3 (tests/package/zipcheck.py reads and makes zips with Python's zipfile).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../nuget_lib.sh"
LT=${LOCKTIME:-$LT_BUILD/san/locktime}
ZIPCHECK=$LT_ROOT/tests/package/zipcheck.py
PKG=$LT_BUILD/package
PACKAGES=(Newtonsoft.Json/13.0.3 Serilog/4.4.0 NLog/6.2.2 log4net/3.6.0 Polly.Core/8.9.1)
export MSBUILDDISABLENODEREUSE=1 DOTNET_CLI_USE_MSBUILD_SERVER=0
DOTNET_OPTS=(-nologo -v q -nodeReuse:false -p:UseSharedCompilation=false)
mkdir -p "$PKG"
# The original packages are kept in build/package/orig between runs; everything else goes to this
# run's own folder (other sessions may run this suite at the same time), removed on exit, as are
# the folders of runs killed more than a day ago.
find "$PKG" -maxdepth 1 -name 'run.*' -mmin +1440 -exec rm -rf {} + 2>/dev/null
RUN=$(mktemp -d "$PKG/run.XXXXXX")
trap 'rm -rf "$LT_TMP" "$RUN"' EXIT

check "ltcheck builds" tools_build || exit 1
check "python3 is there (tests/package/zipcheck.py)" python3 -c 'import zipfile' || exit 1

lower() { echo "$1" | tr '[:upper:]' '[:lower:]'; }
# orig_dir PACKAGE/VERSION: where NuGet extracted it; orig_nupkg: the .nupkg it downloaded.
orig_dir() { echo "$PKG/orig/$(lower "${1%/*}")/${1#*/}"; }
orig_nupkg() { echo "$(orig_dir "$1")/$(lower "${1%/*}").${1#*/}.nupkg"; }

# restore_into FOLDER PACKAGE/VERSION...: a scratch project restores the packages into FOLDER (a
# private NUGET_PACKAGES); Newtonsoft.Json also comes from this machine's offline folder when there.
restore_into() {
	local folder=$1 dir=$RUN/restore pkg refs="" extra=""
	shift
	for pkg in "$@"; do
		refs+="<PackageReference Include=\"${pkg%/*}\" Version=\"[${pkg#*/}]\" />"
	done
	[ -d /opt/nuget/packages ] && extra="<RestoreAdditionalProjectSources>/opt/nuget/packages</RestoreAdditionalProjectSources>"
	rm -rf "$dir"
	mkdir -p "$dir"
	cat >"$dir/restore.csproj" <<-EOF
		<Project Sdk="Microsoft.NET.Sdk">
		  <PropertyGroup><TargetFramework>net10.0</TargetFramework><NuGetAudit>false</NuGetAudit>$extra</PropertyGroup>
		  <ItemGroup>$refs</ItemGroup>
		</Project>
	EOF
	NUGET_PACKAGES=$folder timeout -k 10 "$LT_DOTNET_TIMEOUT" dotnet restore "$dir/restore.csproj" "${DOTNET_OPTS[@]}"
}

# The original packages: restored once, kept in build/package/orig.
restored=()
for pkg in "${PACKAGES[@]}"; do
	[ -f "$(orig_nupkg "$pkg")" ] || { restore_into "$PKG/orig" "${PACKAGES[@]}" >"$PKG/restore.log" 2>&1; break; }
done
for pkg in "${PACKAGES[@]}"; do
	[ -f "$(orig_nupkg "$pkg")" ] || restore_into "$PKG/orig" "$pkg" >>"$PKG/restore.log" 2>&1
	[ -f "$(orig_nupkg "$pkg")" ] && restored+=("$pkg")
done
check "at least three real packages restore (${restored[*]})" test "${#restored[@]}" -ge 3 || exit 1

# `list` on the package = `list` on each assembly NuGet extracted (type, method, offset, kind).
list_matches_assemblies() { # NUPKG EXTRACTED_DIR
	local f
	"$LT" list "$1" | awk '{ print $1, $2, $3, $4 }' | sort >"$LT_TMP/listed" || return 1
	(cd "$2" && find lib runtimes -type f \( -iname '*.dll' -o -iname '*.exe' \) 2>/dev/null) | grep -Ev '^runtimes/[^/]+/native/' |
		while read -r f; do
			"$LT" list "$2/$f" | awk -v e="$f:" '{ print e, $1, $2, $3 }'
		done | sort >"$LT_TMP/expected"
	echo "$(wc -l <"$LT_TMP/listed") sites listed in the package, $(wc -l <"$LT_TMP/expected") in its assemblies"
	[ -s "$LT_TMP/listed" ] && diff "$LT_TMP/expected" "$LT_TMP/listed"
}

weave_package() { # IN OUT
	"$LT" weave "$1" -o "$2" 2>"$LT_TMP/warnings" || { cat "$LT_TMP/warnings"; return 1; }
	if python3 -c 'import sys, zipfile; sys.exit(".signature.p7s" not in zipfile.ZipFile(sys.argv[1]).namelist())' "$1"; then
		grep -q 'warning LT016: .signature.p7s dropped' "$LT_TMP/warnings" || { echo "no warning for the signature"; return 1; }
	fi
}

# weave -v: each woven entry's "woven" line is followed by its live-metrics line, in the format an
# assembly's has, with the framework of the entry's folder (lib/net8.0: .NETCoreApp, netstandard2.0: a
# library, net35: none named).
verbose_metrics() { # IN
	"$LT" weave -v "$1" -o "$LT_TMP/verbose.nupkg" 2>/dev/null >"$LT_TMP/verbose" || return 1
	python3 - "$1" "$LT_TMP/verbose" <<'PY'
import re, sys
pkg, lines = sys.argv[1], open(sys.argv[2]).read().splitlines()
woven = [i for i, l in enumerate(lines) if re.match(re.escape(pkg) + r": [^:]+: woven, \d+ lock sites? timed$", l)]
assert woven, lines
for i in woven:
    entry = lines[i][len(pkg) + 2:].split(": ")[0]
    tfm = entry.split("/")[-2]
    m = re.fullmatch(re.escape(pkg + ": " + entry + ": ") + r"(live metrics: the Meter \"LockTime\"|no live metrics:|live metrics when the program runs on \.NET 6 or later) \(?([^ )]+).*", lines[i + 1])
    assert m, (lines[i], lines[i + 1])
    # .NET Framework before 4 has no TargetFrameworkAttribute: "(no TargetFrameworkAttribute)".
    family = ".NETStandard" if tfm.startswith("netstandard") else "no" if re.fullmatch(r"net[23]\d", tfm) else ".NETFramework" if re.fullmatch(r"net\d{2,3}", tfm) else ".NETCoreApp"
    assert m.group(2).startswith(family), (entry, lines[i + 1])
print(len(woven), "woven entries, each with its live-metrics line")
PY
}

weave_again_is_noop() { # WOVEN
	cp "$1" "$LT_TMP/again.nupkg" && "$LT" weave -q "$LT_TMP/again.nupkg" && cmp "$1" "$LT_TMP/again.nupkg" &&
		"$LT" weave -q "$1" -o "$LT_TMP/again2.nupkg" && cmp "$1" "$LT_TMP/again2.nupkg"
}

in_place_is_same() { # ORIG WOVEN
	cp "$1" "$LT_TMP/inplace.nupkg" && "$LT" weave -q "$LT_TMP/inplace.nupkg" 2>/dev/null && cmp "$2" "$LT_TMP/inplace.nupkg"
}

# Every assembly of the woven package that weaving changed passes ltcheck verify, and the package's
# PDB beside it, rewritten with it, passes ltcheck pdb (sequence points, PDB id = CodeView entry).
verify_woven() { # ORIG_DIR WOVEN
	local f n=0 p=0
	while read -r f; do
		mkdir -p "$LT_TMP/entry" && python3 "$ZIPCHECK" extract "$2" "$f" "$LT_TMP/entry/$(basename "$f")" || return 1
		cmp -s "$1/$f" "$LT_TMP/entry/$(basename "$f")" && continue
		ltcheck verify "$LT_TMP/entry/$(basename "$f")" >"$LT_TMP/verify.log" 2>&1 || { echo "$f:"; cat "$LT_TMP/verify.log"; return 1; }
		n=$((n + 1))
		[ -f "$1/${f%.*}.pdb" ] || continue
		python3 "$ZIPCHECK" extract "$2" "${f%.*}.pdb" "$LT_TMP/entry/$(basename "${f%.*}").pdb" || return 1
		ltcheck pdb "$1/$f" "$LT_TMP/entry/$(basename "$f")" >"$LT_TMP/verify.log" 2>&1 || { echo "${f%.*}.pdb:"; cat "$LT_TMP/verify.log"; return 1; }
		p=$((p + 1))
		rm -f "$LT_TMP/entry/"*
	done < <(cd "$1" && find lib runtimes -type f -iname '*.dll' 2>/dev/null | grep -Ev '^runtimes/[^/]+/native/')
	echo "$n woven assemblies verified, $p of their PDBs"
	[ "$n" -gt 0 ]
}

mkdir -p "$RUN/feed"
for pkg in "${restored[@]}"; do
	id=${pkg%/*} orig=$(orig_nupkg "$pkg")
	woven=$RUN/feed/$id.${pkg#*/}.nupkg
	sum=$(sha256sum <"$orig")
	check "$id: list matches the extracted assemblies" list_matches_assemblies "$orig" "$(orig_dir "$pkg")"
	check "$id: weave, the signature dropped with a warning" weave_package "$orig" "$woven" || continue
	check "$id: every other entry byte-identical" python3 "$ZIPCHECK" compare "$orig" "$woven"
	check "$id: input untouched" test "$(sha256sum <"$orig")" = "$sum"
	check "$id: weave -v: a live-metrics line per woven assembly" verbose_metrics "$orig"
	check "$id: weaving the woven package again changes nothing" weave_again_is_noop "$woven"
	check "$id: in place (atomic) gives the same bytes as -o" in_place_is_same "$orig" "$woven"
	check "$id: woven assemblies pass ltcheck verify" verify_woven "$(orig_dir "$pkg")" "$woven"
done

# ---- the woven packages in a consumer app ----

build_consumer() { # DIR NUGET_PACKAGES
	NUGET_PACKAGES=$2 timeout -k 10 "$LT_DOTNET_TIMEOUT" dotnet build "$1/Consumer.csproj" -c Release -o "$1/out" "${DOTNET_OPTS[@]}"
}

restored_is_woven() { # PACKAGE/VERSION
	local got
	got=$RUN/packages/$(lower "${1%/*}")/${1#*/}/$(lower "${1%/*}").${1#*/}.nupkg
	cmp "$RUN/feed/${1%/*}.${1#*/}.nupkg" "$got"
}

# Reports at threshold 0 include a site inside the library (its namespace).
reports_inside() { # REPORTS NAMESPACE
	grep -E "^LockTime: $2[.][^ ]+::" "$1" | head -n 3 | grep . || { echo "no report inside $2"; head -n 5 "$1"; return 1; }
}

if [ "${#restored[@]}" -ne "${#PACKAGES[@]}" ]; then
	skip "consumer app" "not every package restored: ${restored[*]}"
else
	base=$RUN/consumer-orig app=$RUN/consumer
	cp -r "$LT_ROOT/tests/package/Consumer" "$base"
	cp -r "$LT_ROOT/tests/package/Consumer" "$app"
	# The original packages, from the folder they were restored into (no source is asked).
	check "consumer builds with the original packages" build_consumer "$base" "$PKG/orig"
	write_nuget_config "$app" locktime-woven "$RUN/feed" "$(printf '%s,' "${PACKAGES[@]%/*}")"
	if check "consumer restores the woven packages from the local feed and builds" build_consumer "$app" "$RUN/packages"; then
		for pkg in "${PACKAGES[@]}"; do
			check "${pkg%/*}: the package restored is the woven one" restored_is_woven "$pkg"
		done
		timeout -k 10 "$LT_DOTNET_TIMEOUT" dotnet "$base/out/Consumer.dll" >"$LT_TMP/expected" 2>"$LT_TMP/base-reports"
		check "consumer runs with the original packages, no report" test -s "$LT_TMP/expected" -a ! -s "$LT_TMP/base-reports"
		LOCKTIME_THRESHOLD_MS=0 dotnet "$app/out/Consumer.dll" >"$LT_TMP/actual" 2>"$LT_TMP/reports"
		check "consumer with woven packages runs (exit 0)" test $? = 0
		check_same "consumer: same stdout as with the original packages" "$LT_TMP/expected" "$LT_TMP/actual"
		for ns in Newtonsoft.Json Serilog NLog log4net Polly; do
			check "$ns: locks inside the library reported" reports_inside "$LT_TMP/reports" "$ns"
		done
		for dll in Newtonsoft.Json Serilog NLog log4net Polly.Core; do
			check "$dll.dll from the woven package: every method JIT-compiles" ltcheck jit "$app/out/$dll.dll" "$app/out"
		done
		LOCKTIME_DISABLED=1 dotnet "$app/out/Consumer.dll" >"$LT_TMP/actual" 2>"$LT_TMP/reports"
		check_same "consumer: LOCKTIME_DISABLED=1: same stdout" "$LT_TMP/expected" "$LT_TMP/actual"
		check "consumer: LOCKTIME_DISABLED=1: no report" test ! -s "$LT_TMP/reports"
	fi
fi

# ---- LockTimePackages: the LockTime package's MSBuild targets weave named packages in a build ----

uses=$RUN/uses gp=$RUN/uses-packages
ubin=$uses/bin/Release/net10.0 uobj=$uses/obj/Release/net10.0/locktime-packages

# dn LOG ARGS...: dotnet ARGS (with a private NUGET_PACKAGES) into LOG; on failure, its errors.
dn() {
	local log=$1
	shift
	NUGET_PACKAGES=$gp dotnet "$@" "${DOTNET_OPTS[@]}" >"$log" 2>&1 && return 0
	grep -E ': (error|warning) ' "$log" | sort -u | tail -n 10
	return 1
}
# The names and contents of every file in the packages folder.
folder_hash() { (cd "$gp" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum); }
# FILE is the woven copy WOVEN, not the package's own ORIGINAL.
woven_from() { # FILE WOVEN ORIGINAL
	cmp -s "$1" "$3" && { echo "$1 is the package's own"; return 1; }
	cmp "$1" "$2"
}
not() { # CMD...: CMD fails
	! "$@"
}
reports_none_inside() { # REPORTS NAMESPACE
	! grep -E "^LockTime: $2[.]" "$1"
}

if [ "${#restored[@]}" -ne "${#PACKAGES[@]}" ]; then
	skip "LockTimePackages" "not every package restored: ${restored[*]}"
elif check "make package (the LockTime package)" make -s -C "$LT_ROOT" package; then
	VERSION=$(cat "$LT_BUILD/package/dev.version") # cli.h's version, -dev.<time> (Makefile)
	export LockTimeTestVersion=$VERSION # read by tests/package/UsesPackages
	mkdir -p "$RUN/locktime-feed"
	cp "$LT_BUILD/LockTime.$VERSION.nupkg" "$RUN/locktime-feed/"
	cp -r "$LT_ROOT/tests/package/UsesPackages" "$uses"
	# LockTime from its feed, the libraries from the folder the originals were restored into.
	write_nuget_config "$uses" locktime-package "$RUN/locktime-feed" LockTime \
		locktime-originals "$PKG/orig" Newtonsoft.Json,Serilog,Polly.Core
	nj=$gp/newtonsoft.json/13.0.3/lib/net6.0/Newtonsoft.Json.dll se=$gp/serilog/4.4.0/lib/net10.0/Serilog.dll
	nj_w=$uobj/Newtonsoft.Json/13.0.3/lib/net6.0/Newtonsoft.Json.dll se_w=$uobj/Serilog/4.4.0/lib/net10.0/Serilog.dll
	if check "LockTimePackages: restore (private packages folder)" dn "$LT_TMP/u-restore.log" restore "$uses"; then
		before=$(folder_hash)
		check "LockTimePackages: build" dn "$LT_TMP/u1.log" build "$uses" -c Release -v:n
		check "LockTimePackages: Newtonsoft.Json in bin/ is the woven copy from obj/" woven_from "$ubin/Newtonsoft.Json.dll" "$nj_w" "$nj"
		check "LockTimePackages: Serilog in bin/ is the woven copy from obj/" woven_from "$ubin/Serilog.dll" "$se_w" "$se"
		check "LockTimePackages: Polly.Core (not named) in bin/ as in its package" cmp "$ubin/Polly.Core.dll" "$gp/polly.core/8.9.1/lib/net10.0/Polly.Core.dll"
		LOCKTIME_THRESHOLD_MS=0 dotnet "$ubin/UsesPackages.dll" >"$LT_TMP/u-out" 2>"$LT_TMP/u-reports"
		check "LockTimePackages: the app runs" grep -q '^polly: 42$' "$LT_TMP/u-out"
		check "LockTimePackages: locks inside Newtonsoft.Json reported" reports_inside "$LT_TMP/u-reports" Newtonsoft.Json
		check "LockTimePackages: locks inside Serilog reported" reports_inside "$LT_TMP/u-reports" Serilog
		check "LockTimePackages: none inside Polly (not named)" reports_none_inside "$LT_TMP/u-reports" Polly
		stamp=$(stat -c %y "$nj_w")
		check "LockTimePackages: no-change build" dn "$LT_TMP/u2.log" build "$uses" -c Release -v:n
		check "LockTimePackages: no-change build: no weave" not grep -q 'weave.* --unpack ' "$LT_TMP/u2.log"
		check "LockTimePackages: no-change build: woven copy untouched" test "$stamp" = "$(stat -c %y "$nj_w")"
		check "LockTimePackages: dotnet publish" dn "$LT_TMP/u3.log" publish "$uses" -c Release -o "$uses/pub"
		check "LockTimePackages: published Newtonsoft.Json is the woven copy" woven_from "$uses/pub/Newtonsoft.Json.dll" "$nj_w" "$nj"
		check "LockTimePackages: published Serilog is the woven copy" woven_from "$uses/pub/Serilog.dll" "$se_w" "$se"
		LOCKTIME_THRESHOLD_MS=0 dotnet "$uses/pub/UsesPackages.dll" >/dev/null 2>"$LT_TMP/u-reports"
		check "LockTimePackages: the published app reports inside Newtonsoft.Json" reports_inside "$LT_TMP/u-reports" Newtonsoft.Json
		check "LockTimePackages: LockTimeEnabled=false" dn "$LT_TMP/u4.log" build "$uses" -c Release -p:LockTimeEnabled=false
		check "LockTimePackages: LockTimeEnabled=false: the package's own Newtonsoft.Json in bin/" cmp "$ubin/Newtonsoft.Json.dll" "$nj"
		check "LockTimePackages: the packages folder's contents are the same after the builds" test "$(folder_hash)" = "$before"
	fi
fi

# ---- hostile packages ----

# The packages and a working folder live in hostile/ (snapshotted), what the checks write elsewhere.
hostile_dir=$LT_TMP/hostile logs=$LT_TMP/hostile-logs
mkdir -p "$hostile_dir/work/deep" "$logs"
# Every file with its size and time, every folder by name (a lock file made and removed beside the
# output changes its folder's time, not what the folder holds).
snapshot() { (cd "$hostile_dir" && find . \( -type d -printf '%p/\n' \) -o -printf '%p %s %T@\n' | sort); }

# Refused: exit 1 and LT016 from weave -o, weave in place and list, run from a folder deep inside;
# no output, the input untouched, no file created or changed under hostile/, nothing at the
# absolute path the "absolute" package names.
refused() { # NUPKG
	local in=$1 cmd rc
	snapshot >"$logs/before"
	for cmd in "weave $in -o $hostile_dir/out.nupkg" "weave $in" "list $in"; do
		# shellcheck disable=SC2086
		(cd "$hostile_dir/work/deep" && "$LT" $cmd) >"$logs/out" 2>"$logs/err"
		rc=$?
		if [ "$rc" != 1 ] || ! grep -q "error LT016: " "$logs/err"; then
			echo "locktime $cmd: exit $rc"
			cat "$logs/err"
			return 1
		fi
	done
	head -n 1 "$logs/err"
	[ ! -e /tmp/locktime-evil.txt ] || { echo "/tmp/locktime-evil.txt was written"; return 1; }
	snapshot | diff "$logs/before" -
}

for kind in traversal absolute drive backslash escaped-dots duplicate duplicate-case bomb huge many no-nuspec bad-nuspec not-zip; do
	python3 "$ZIPCHECK" hostile "$kind" "$hostile_dir/$kind.nupkg" || { not_ok "hostile: $kind: made"; continue; }
	check "hostile: $kind: LT016, nothing written" refused "$hostile_dir/$kind.nupkg"
done
# A real package cut short, and one whose central directory is overwritten.
real=$(orig_nupkg "${restored[0]}")
size=$(stat -c %s "$real")
head -c $((size / 2)) "$real" >"$hostile_dir/truncated.nupkg"
check "hostile: truncated: LT016, nothing written" refused "$hostile_dir/truncated.nupkg"
cp "$real" "$hostile_dir/corrupt.nupkg"
printf 'corrupt central directory %.0s' {1..8} | dd of="$hostile_dir/corrupt.nupkg" bs=1 seek=$((size - 600)) conv=notrunc status=none
check "hostile: corrupt central directory: LT016, nothing written" refused "$hostile_dir/corrupt.nupkg"
done_testing
