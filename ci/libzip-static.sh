#!/usr/bin/env bash
# Builds a static libzip (zlib only) from Debian's source package, for the static `locktime` in the package.
#   ci/libzip-static.sh PREFIX      installs PREFIX/lib/libzip.a and PREFIX/include/{zip,zipconf}.h
# Debian ships libz.a, libmxml.a and libmbedcrypto.a but no libzip.a. The source comes through apt itself
# (signed indexes, checked hashes), with deb-src entries made from this machine's own deb entries and
# a private apt state under PREFIX, so it needs neither root nor a change to the system's apt setup.
# The version is the one of the installed libzip-dev when Debian still serves it, else the current one.
# Needs: apt-get, dpkg-source (dpkg-dev), cmake, a C compiler, zlib1g-dev.
set -eu
prefix=${1:?usage: ci/libzip-static.sh PREFIX}
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
work=$prefix/work
rm -rf "$work"
mkdir -p "$work/sources.list.d" "$work/lists/partial" "$work/cache/archives/partial" "$work/src"

# deb-src twins of the configured deb entries, deb822 (*.sources) and one-line (*.list) forms alike.
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] && sed -E 's/^Types:.*$/Types: deb-src/' "$f" >"$work/sources.list.d/$(basename "$f")"
done
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
	[ -f "$f" ] && sed -nE 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f" >>"$work/sources.list.d/from-lists.list"
done
apt=(apt-get -q -o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$work/sources.list.d"
	-o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o "Debug::NoLocking=1"
	-o "APT::Sandbox::User=$(id -un)")
# A third-party repository without sources fails its part of the update; apt-get source says if Debian's did.
"${apt[@]}" update >"$work/apt.log" 2>&1 || true

version=$(dpkg-query -W -f='${source:Version}' libzip-dev 2>/dev/null || true)
cd "$work/src"
if ! { [ -n "$version" ] && "${apt[@]}" source "libzip=$version" >>"$work/apt.log" 2>&1; }; then
	"${apt[@]}" source libzip >>"$work/apt.log" 2>&1 || { cat "$work/apt.log" >&2; exit 1; }
fi
srcdir=$(find "$work/src" -mindepth 1 -maxdepth 1 -type d -name 'libzip-*' | head -n 1)
[ -n "$srcdir" ] || { echo "ci/libzip-static.sh: no libzip source unpacked" >&2; exit 1; }

# Static library only, zlib the only compression, no crypto back end (locktime reads plain .nupkg zips).
cmake -S "$srcdir" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
	-DCMAKE_INSTALL_LIBDIR=lib -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
	-DENABLE_BZIP2=OFF -DENABLE_LZMA=OFF -DENABLE_ZSTD=OFF \
	-DENABLE_COMMONCRYPTO=OFF -DENABLE_GNUTLS=OFF -DENABLE_MBEDTLS=OFF -DENABLE_OPENSSL=OFF \
	-DENABLE_WINDOWS_CRYPTO=OFF -DBUILD_TOOLS=OFF -DBUILD_REGRESS=OFF -DBUILD_EXAMPLES=OFF \
	-DBUILD_DOC=OFF >"$work/cmake.log" 2>&1 &&
	cmake --build "$work/build" -j "$(nproc)" >>"$work/cmake.log" 2>&1 &&
	cmake --install "$work/build" >>"$work/cmake.log" 2>&1 || { tail -n 40 "$work/cmake.log" >&2; exit 1; }
echo "$(basename "$srcdir") from Debian's source package -> $prefix/lib/libzip.a"
rm -rf "$work"
