#!/usr/bin/env bash
# Strong names after `locktime weave`, checked by Mono's `sn -vf` (which verifies the signature over the
# file's bytes as the runtimes do):
#   - --key FILE.snk signs a woven assembly again: a C# library built by the .NET SDK (net10.0, and
#     net48 run under Mono), one built by Mono's mcs, one by a classic project under xbuild;
#   - a net48 program under Mono that references the woven, re-signed library by its strong name
#     loads it and reports its lock; Mono's gacutil (which checks the signature) installs it;
#   - without the key: warning LT018, and sn -vf says the signature is gone; another key, or a
#     public key only: error LT020, the input untouched;
#   - PublicSign and DelaySign builds stay as they were: public key kept, no signature, no warning,
#     a note with -v.
source "$(dirname "$0")/../lib.sh"
LT=${LOCKTIME:-$LT_BUILD/san/locktime}
export MSBUILDDISABLENODEREUSE=1 DOTNET_CLI_USE_MSBUILD_SERVER=0
DOTNET_OPTS=(-nologo -v q -nodeReuse:false -p:UseSharedCompilation=false)
d=$LT_TMP/sn
mkdir -p "$d"
cd "$d" || exit 1

verified() { # FILE: sn -vf accepts its signature
	local out
	out=$(sn -vf "$1" 2>&1 | tail -n 1)
	echo "$out"
	grep -q 'is strongnamed' <<<"$out"
}

sn -q -k key.snk >/dev/null && sn -q -k other.snk >/dev/null && sn -q -p key.snk public.snk >/dev/null
cat >Lib.cs <<'CS'
namespace SnLib
{
    public static class Counter
    {
        private static readonly object Gate = new object();
        private static int _n;
        public static int Add()
        {
            lock (Gate)
            {
                System.Threading.Thread.Sleep(30);
                return ++_n;
            }
        }
    }
}
CS
cat >App.cs <<'CS'
class Program { static void Main() { System.Console.WriteLine("added " + SnLib.Counter.Add()); } }
CS

# A library of the .NET SDK, signed with key.snk (or public-signed / delay-signed with public.snk).
sdk_lib() { # NAME TFM EXTRA_PROPERTIES
	mkdir -p "$1" && cp Lib.cs "$1/" && cat >"$1/$1.csproj" <<PROJ
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>$2</TargetFramework>
    <AssemblyName>SnLib</AssemblyName>
    <SignAssembly>true</SignAssembly>
    $3
  </PropertyGroup>
</Project>
PROJ
	dotnet build "$1" -o "$1/out" "${DOTNET_OPTS[@]}" >"$1.log" 2>&1 || { tail -n 5 "$1.log"; return 1; }
}

resigned() { # FILE: woven with --key key.snk, sn -vf accepts it
	"$LT" weave -v --key "$d/key.snk" "$1" >"$LT_TMP/resign.out" 2>&1 || { cat "$LT_TMP/resign.out"; return 1; }
	grep -q 'strong-name signed again' "$LT_TMP/resign.out" && grep -q 'woven, 1 lock site' "$LT_TMP/resign.out" &&
		! grep -q warning "$LT_TMP/resign.out" && verified "$1"
}

check "net10.0 SDK library (SignAssembly) builds, signed" sdk_lib Net10 net10.0 '<AssemblyOriginatorKeyFile>../key.snk</AssemblyOriginatorKeyFile>' &&
	check "net10.0: the compiler's signature verifies" verified Net10/out/SnLib.dll &&
	check "net10.0: woven with --key: sn -vf verifies the new signature" resigned Net10/out/SnLib.dll

check "net48 SDK library builds, signed" sdk_lib Net48 net48 '<AssemblyOriginatorKeyFile>../key.snk</AssemblyOriginatorKeyFile>' &&
	check "net48: woven with --key: sn -vf verifies" resigned Net48/out/SnLib.dll

# A net48 program under Mono that references the library by its strong name.
by_strong_name() {
	local lib=$d/Net48/out/SnLib.dll token out
	token=$(sn -T "$lib" | sed -n 's/^Public Key Token: *//p' | tr -d '\r ')
	mcs -sdk:4.5 -out:"$d/App.exe" -r:"$lib" App.cs || return 1
	cp "$lib" "$d/SnLib.dll"
	out=$(LOCKTIME_THRESHOLD_MS=10 mono "$d/App.exe" 2>&1) || { echo "$out"; return 1; }
	echo "$out (token $token)"
	[ -n "$token" ] && monodis --assemblyref "$d/App.exe" | grep -A3 'Name=SnLib' | tr -d ' ' | tr 'A-F' 'a-f' | grep -q "$token" && grep -qx 'added 1' <<<"$out" &&
		grep -qE '^LockTime: SnLib\.Counter::Add held [0-9.]+ ms' <<<"$out"
}
check "net48 under Mono: a program referencing the woven library by strong name loads it, and it reports" by_strong_name
gac_install() {
	mkdir -p "$d/gac" && gacutil -root "$d/gac" -i "$d/Net48/out/SnLib.dll" >"$LT_TMP/gac.out" 2>&1
	cat "$LT_TMP/gac.out"
	grep -q 'Installed' "$LT_TMP/gac.out"
}
check "net48: Mono's gacutil, which checks the signature, installs the woven library" gac_install

mcs_signed() {
	mcs -target:library -keyfile:key.snk -out:Mcs.dll Lib.cs && verified Mcs.dll && resigned Mcs.dll
}
check "mcs library (-keyfile): woven with --key, sn -vf verifies" mcs_signed

# A classic project (packages.config era) built by xbuild, signed by its csproj.
classic() {
	mkdir -p Classic && cp Lib.cs Classic/ && cat >Classic/Classic.csproj <<'PROJ'
<?xml version="1.0" encoding="utf-8"?>
<Project ToolsVersion="4.0" DefaultTargets="Build" xmlns="http://schemas.microsoft.com/developer/msbuild/2003">
  <PropertyGroup>
    <OutputType>Library</OutputType>
    <AssemblyName>SnClassic</AssemblyName>
    <TargetFrameworkVersion>v4.5</TargetFrameworkVersion>
    <OutputPath>bin</OutputPath>
    <SignAssembly>true</SignAssembly>
    <AssemblyOriginatorKeyFile>../key.snk</AssemblyOriginatorKeyFile>
  </PropertyGroup>
  <ItemGroup>
    <Reference Include="System" />
    <Compile Include="Lib.cs" />
  </ItemGroup>
  <Import Project="$(MSBuildToolsPath)/Microsoft.CSharp.targets" />
</Project>
PROJ
	xbuild /nologo /v:q Classic/Classic.csproj >Classic.log 2>&1 || { grep -i error Classic.log | tail -n 5; return 1; }
	verified Classic/bin/SnClassic.dll && resigned Classic/bin/SnClassic.dll
}
check "classic xbuild project (SignAssembly): woven with --key, sn -vf verifies" classic

without_key() {
	mcs -target:library -keyfile:key.snk -out:NoKey.dll Lib.cs || return 1
	"$LT" weave NoKey.dll 2>"$LT_TMP/nokey.err" || return 1
	grep -q 'NoKey.dll: warning LT018: ' "$LT_TMP/nokey.err" && ! verified NoKey.dll
}
check "without --key: warning LT018, and the signature no longer verifies" without_key

refused() { # KEY PATTERN
	local sum
	mcs -target:library -keyfile:key.snk -out:Refused.dll Lib.cs || return 1
	sum=$(md5sum <Refused.dll)
	"$LT" weave --key "$1" Refused.dll 2>"$LT_TMP/refused.err" && { echo "weave succeeded"; return 1; }
	cat "$LT_TMP/refused.err"
	grep -qE "$2" "$LT_TMP/refused.err" && [ "$(md5sum <Refused.dll)" = "$sum" ]
}
check "--key of another key pair: error LT020, input untouched" refused other.snk 'Refused.dll: error LT020: the key is not this assembly'
check "--key of a public key only: error LT020, input untouched" refused public.snk 'public.snk: error LT020: a public key only'

# PublicSign / DelaySign: as they were. The signature blob (all zeros) and the public key stay.
as_it_was() { # NAME
	local f=$1/out/SnLib.dll before after
	before=$(monodis --assembly "$f" | sed -n '/PublicKey:/,/Culture:/p')
	"$LT" weave -v "$f" >"$LT_TMP/as.out" 2>&1 || { cat "$LT_TMP/as.out"; return 1; }
	cat "$LT_TMP/as.out"
	after=$(monodis --assembly "$f" | sed -n '/PublicKey:/,/Culture:/p')
	! grep -q 'warning' "$LT_TMP/as.out" && grep -qE 'SnLib.dll: (public|delay)-signed: public key kept, left without a signature' "$LT_TMP/as.out" &&
		[ -n "$before" ] && [ "$before" = "$after" ] && ! verified "$f"
}
check "PublicSign library builds" sdk_lib Public net10.0 '<PublicSign>true</PublicSign><AssemblyOriginatorKeyFile>../public.snk</AssemblyOriginatorKeyFile>' &&
	check "PublicSign: woven, public key kept, no signature, no warning, a note with -v" as_it_was Public
check "DelaySign library builds" sdk_lib Delay net48 '<DelaySign>true</DelaySign><AssemblyOriginatorKeyFile>../public.snk</AssemblyOriginatorKeyFile>' &&
	check "DelaySign: woven, public key kept, no signature, no warning, a note with -v" as_it_was Delay

# A package whose assembly is strong-named, woven as LockTimePackages does (--unpack): LT018 too.
package_unpacked() {
	mkdir -p pkg/lib/net45 && mcs -target:library -keyfile:key.snk -out:pkg/lib/net45/Signed.dll Lib.cs || return 1
	cat >pkg/Signed.nuspec <<'SPEC'
<?xml version="1.0"?>
<package xmlns="http://schemas.microsoft.com/packaging/2013/05/nuspec.xsd">
  <metadata><id>Signed</id><version>1.0.0</version><authors>test</authors><description>test</description></metadata>
</package>
SPEC
	python3 -c 'import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for name in sys.argv[2:]:
        z.write("pkg/" + name, name)' Signed.1.0.0.nupkg Signed.nuspec lib/net45/Signed.dll || return 1
	"$LT" weave --unpack unpacked Signed.1.0.0.nupkg 2>"$LT_TMP/unpack.err" || { cat "$LT_TMP/unpack.err"; return 1; }
	grep -q 'Signed.1.0.0.nupkg: warning LT018: lib/net45/Signed.dll: ' "$LT_TMP/unpack.err" && ! verified unpacked/lib/net45/Signed.dll
}
check "a package's strong-named assembly woven with --unpack: warning LT018" package_unpacked

# --- Key containers: Mono's key store, the one `mcs -keycontainer` (and xbuild's KeyContainerName) signs
# with, in a private home so that the machine's store is not touched. Mono 6.8's `sn -i key.snk NAME` does
# not fill it (it imports the key with ImportParameters, which never saves: the store stays empty), so
# the key is put in as `sn -i` means to, by Mono's own RSACryptoServiceProvider (importer.cs).
store_home=$d/home
in_store() { # CMD...: CMD with the private home as the user's, Mono's user store under it
	HOME=$store_home XDG_CONFIG_HOME= "$@"
}
mkdir -p "$store_home"
cat >importer.cs <<'CS'
// importer KEY.snk NAME: the key pair of KEY.snk into Mono's key container NAME (what sn -i does on .NET).
using System.IO;
using System.Security.Cryptography;
class Importer {
    static void Main(string[] args) {
        var file = new RSACryptoServiceProvider();
        file.ImportCspBlob(File.ReadAllBytes(args[0]));
        var container = new RSACryptoServiceProvider(new CspParameters { KeyContainerName = args[1] });
        container.ImportParameters(file.ExportParameters(true));
        container.PersistKeyInCsp = true;
    }
}
CS
sn_i_leaves_nothing() {
	in_store sn -q -i key.snk LockTimeTest >/dev/null 2>&1
	[ -z "$(find "$store_home" -type f)" ]
}
check "Mono's sn -i leaves its key store empty (so the tests fill it themselves)" sn_i_leaves_nothing
imported() {
	mcs -out:importer.exe importer.cs && in_store mono importer.exe key.snk LockTimeTest &&
		find "$store_home/.config/.mono/keypairs" -type f | grep .
}
check "key.snk imported into Mono's key container LockTimeTest (~/.config/.mono/keypairs)" imported

token() { # ASSEMBLY: its public key token
	sn -T "$1" | sed -n 's/^Public Key Token: *//p' | tr -d '\r '
}
from_container() { # ASSEMBLY ARGS...: woven with ARGS (a key container), sn -vf verifies, the token unchanged
	local f=$1 before
	shift
	before=$(token "$f")
	in_store "$LT" weave -v "$@" "$f" >"$LT_TMP/kc.out" 2>&1 || { cat "$LT_TMP/kc.out"; return 1; }
	grep -q 'strong-name signed again' "$LT_TMP/kc.out" && ! grep -q warning "$LT_TMP/kc.out" && verified "$f" &&
		[ -n "$before" ] && [ "$(token "$f")" = "$before" ] && echo "token $before"
}
kc_keyfile() {
	mcs -target:library -keyfile:key.snk -out:KcFile.dll Lib.cs && from_container KcFile.dll --key-container LockTimeTest
}
check "--key-container LockTimeTest (key.snk's pair): sn -vf verifies, public key token unchanged" kc_keyfile
kc_mcs() {
	in_store mcs -target:library -keycontainer:LockTimeTest -out:KcMcs.dll Lib.cs && verified KcMcs.dll &&
		[ "$(token KcMcs.dll)" = "$(token KcFile.dll)" ] && from_container KcMcs.dll --key-container LockTimeTest
}
check "mcs -keycontainer:LockTimeTest library: woven with --key-container, sn -vf verifies" kc_mcs
kc_first() { # both: the container wins, as csc and mcs choose
	mcs -target:library -keyfile:key.snk -out:KcBoth.dll Lib.cs &&
		from_container KcBoth.dll --key other.snk --key-container LockTimeTest &&
		grep -qx 'locktime: strong-name key: key container LockTimeTest' "$LT_TMP/kc.out"
}
check "--key other.snk --key-container LockTimeTest: the container is used (csc's order)" kc_first
kc_else_file() { # both, no such container: the key file
	mcs -target:library -keyfile:key.snk -out:KcElse.dll Lib.cs && from_container KcElse.dll --key key.snk --key-container Absent &&
		grep -qx 'locktime: strong-name key: key file key.snk' "$LT_TMP/kc.out"
}
check "--key key.snk --key-container Absent: the key file is used" kc_else_file
kc_xdg() { # XDG_CONFIG_HOME moves Mono's user store: there, not under the home
	mkdir -p "$d/xdg" && HOME=$store_home XDG_CONFIG_HOME=$d/xdg mono importer.exe key.snk InXdg &&
		[ -n "$(find "$d/xdg/.mono/keypairs" -type f)" ] && mcs -target:library -keyfile:key.snk -out:KcXdg.dll Lib.cs || return 1
	HOME=$store_home XDG_CONFIG_HOME=$d/xdg "$LT" weave --key-container InXdg KcXdg.dll && verified KcXdg.dll
}
check "XDG_CONFIG_HOME: Mono's user store there, read there" kc_xdg
kc_missing() {
	local sum
	mcs -target:library -keyfile:key.snk -out:KcMissing.dll Lib.cs || return 1
	sum=$(md5sum <KcMissing.dll)
	in_store "$LT" weave --key-container Absent KcMissing.dll 2>"$LT_TMP/kc.err" && { echo "weave succeeded"; return 1; }
	cat "$LT_TMP/kc.err"
	grep -qF "locktime: error LT021: no key container 'Absent' in Mono's key stores: no $store_home/.config/.mono/keypairs/[1][" "$LT_TMP/kc.err" &&
		grep -qF '][-1].xml nor /usr/share/.mono/keypairs/[1][' "$LT_TMP/kc.err" && [ "$(md5sum <KcMissing.dll)" = "$sum" ]
}
check "--key-container of no container: error LT021 naming it and where it looked, input untouched" kc_missing
kc_other() { # a container of another key pair: LT020, as for a key file
	in_store mono importer.exe other.snk Other && mcs -target:library -keyfile:key.snk -out:KcOther.dll Lib.cs &&
		! in_store "$LT" weave --key-container Other KcOther.dll 2>"$LT_TMP/kc.err" &&
		grep -q 'KcOther.dll: error LT020: the key is not this assembly' "$LT_TMP/kc.err"
}
check "--key-container of another key pair: error LT020" kc_other
done_testing
