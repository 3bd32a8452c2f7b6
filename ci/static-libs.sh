#!/usr/bin/env bash
# Builds static libraries from Debian's source packages, for the static `locktime` binaries in the package.
#   ci/static-libs.sh RID PREFIX SOURCE...
#     RID     linux-x64 (this machine's gcc), linux-arm64 (aarch64-linux-gnu-gcc) or win-x64 (x86_64-w64-mingw32-gcc)
#     SOURCE  Debian source packages, built in the order given: zlib, libzip (after zlib: it uses it), mxml, mbedtls,
#             jansson, protobuf-c
#   installs PREFIX/lib/lib{zip,z,mxml,mbedcrypto,jansson,protobuf-c}.a and their headers under PREFIX/include.
# Linux targets take libz.a, libmxml.a, libmbedcrypto.a, libjansson.a and libprotobuf-c.a from Debian's -dev packages (the :arm64 ones for
# arm64) and need libzip only; Windows has none of them. The sources come through apt itself (signed
# indexes, checked hashes), with deb-src entries made from this machine's own deb entries and a private apt
# state under PREFIX, so it needs neither root nor a change to the system's apt setup. Each version is the
# one of the installed -dev package when Debian still serves it, else the current one.
# Needs: apt-get, dpkg-source (dpkg-dev), cmake, make, the RID's C compiler, zlib1g-dev (headers for libzip).
set -eu
usage="usage: ci/static-libs.sh linux-x64|linux-arm64|win-x64 PREFIX SOURCE..."
rid=${1:?$usage} prefix=${2:?$usage}
shift 2
[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
case $rid in
linux-x64) host=; system=Linux; cpu=x86_64 ;;
linux-arm64) host=aarch64-linux-gnu; system=Linux; cpu=aarch64 ;;
win-x64) host=x86_64-w64-mingw32; system=Windows; cpu=AMD64 ;;
*) echo "$usage" >&2; exit 2 ;;
esac
cc=${host:+$host-}gcc ar=${host:+$host-}ar
command -v "$cc" >/dev/null || { echo "ci/static-libs.sh: no $cc (make deps installs it)" >&2; exit 1; }
mkdir -p "$prefix/lib" "$prefix/include"
prefix=$(cd "$prefix" && pwd)
work=$prefix/work
rm -rf "$work"
mkdir -p "$work/sources.list.d" "$work/lists/partial" "$work/cache/archives/partial" "$work/src"
log=$work/build.log

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
"${apt[@]}" update >"$log" 2>&1 || true

fail() { tail -n 40 "$log" >&2; echo "ci/static-libs.sh: $1 for $rid failed (log: $log)" >&2; exit 1; }

# Unpacks Debian's source package $1 (the version of the installed binary package $2 if still served, else
# the newest listed, else - a mirror that lists an update it does not serve - the release's own, with a
# warning naming both) and prints its folder.
unpack() {
	local version release
	version=$(dpkg-query -W -f='${source:Version}\n' "$2" 2>/dev/null | head -n 1 || true)
	release=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	(cd "$work/src" && { { [ -n "$version" ] && "${apt[@]}" source "$1=$version"; } ||
		"${apt[@]}" source "$1"; }) >>"$log" 2>&1 ||
		{ [ -n "$release" ] && (cd "$work/src" && "${apt[@]}" source "$1/$release") >>"$log" 2>&1 &&
			echo "ci/static-libs.sh: warning: the source of $1 ${version:-(newest)} is listed but not served; built $release's own" >&2; } ||
		fail "apt-get source $1"
	find "$work/src" -mindepth 1 -maxdepth 1 -type d -name "$1-*" | head -n 1
}

# cmake for the RID: a cross build names the system, the compiler, and looks for libraries in PREFIX first.
cmake_build() { # source folder, target, cmake options...
	local src=$1 target=$2
	shift 2
	cmake -S "$src" -B "$src/_build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER="$cc" \
		${host:+-DCMAKE_SYSTEM_NAME=$system -DCMAKE_SYSTEM_PROCESSOR=$cpu} -DCMAKE_PREFIX_PATH="$prefix" \
		-DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib -DBUILD_SHARED_LIBS=OFF \
		-DCMAKE_POSITION_INDEPENDENT_CODE=ON "$@" >>"$log" 2>&1 &&
		cmake --build "$src/_build" -j "$(nproc)" --target "$target" >>"$log" 2>&1
}

for source in "$@"; do
	case $source in
	libzip) # zlib the only compression, no crypto back end: locktime reads plain .nupkg zips.
		src=$(unpack libzip libzip-dev)
		cmake_build "$src" zip -DENABLE_BZIP2=OFF -DENABLE_LZMA=OFF -DENABLE_ZSTD=OFF \
			-DENABLE_COMMONCRYPTO=OFF -DENABLE_GNUTLS=OFF -DENABLE_MBEDTLS=OFF -DENABLE_OPENSSL=OFF \
			-DENABLE_WINDOWS_CRYPTO=OFF -DBUILD_TOOLS=OFF -DBUILD_REGRESS=OFF -DBUILD_EXAMPLES=OFF \
			-DBUILD_DOC=OFF && cmake --install "$src/_build" >>"$log" 2>&1 || fail libzip ;;
	zlib) # The library is the C files at the top of zlib's tree (Debian's copy drops the win32/ makefiles).
		src=$(unpack zlib zlib1g-dev)
		(cd "$src" && for c in *.c; do "$cc" -O2 -c "$c" || exit 1; done && "$ar" rcs libz.a ./*.o) >>"$log" 2>&1 ||
			fail zlib
		cp "$src/libz.a" "$prefix/lib/" && cp "$src/zlib.h" "$src/zconf.h" "$prefix/include/" ;;
	mxml) # No threads (locktime parses on one); mingw's read/write/close are declared in <io.h>.
		src=$(unpack mxml libmxml-dev)
		(cd "$src" && ./configure --host="${host:-$(gcc -dumpmachine)}" --prefix="$prefix" --disable-shared \
			--disable-threads CFLAGS="-O2${host:+ -include io.h}" && make libmxml.a) >>"$log" 2>&1 || fail mxml
		cp "$src/libmxml.a" "$prefix/lib/" && cp "$src/mxml.h" "$prefix/include/" ;;
	mbedtls) # libmbedcrypto only (hashes, RSA), without threading: locktime calls it from one thread.
		src=$(unpack mbedtls libmbedtls-dev)
		(cd "$src" && python3 scripts/config.py unset MBEDTLS_THREADING_C &&
			python3 scripts/config.py unset MBEDTLS_THREADING_PTHREAD) >>"$log" 2>&1 || fail "mbedtls config"
		cmake_build "$src" mbedcrypto -DENABLE_PROGRAMS=OFF -DENABLE_TESTING=OFF \
			-DUSE_SHARED_MBEDTLS_LIBRARY=OFF -DUSE_STATIC_MBEDTLS_LIBRARY=ON || fail mbedtls
		cp "$src/_build/library/libmbedcrypto.a" "$prefix/lib/" && cp -r "$src/include/mbedtls" "$prefix/include/" ;;
	jansson) # The JSON reader of `locktime report`; no docs, examples or tests.
		src=$(unpack jansson libjansson-dev)
		cmake_build "$src" jansson -DJANSSON_BUILD_DOCS=OFF -DJANSSON_EXAMPLES=OFF -DJANSSON_WITHOUT_TESTS=ON \
			-DJANSSON_BUILD_SHARED_LIBS=OFF && cmake --install "$src/_build" >>"$log" 2>&1 || fail jansson ;;
	protobuf-c) # The run-time library only (one C file); the compiler, protoc-c, is Debian's on the build machine.
		src=$(unpack protobuf-c libprotobuf-c-dev)
		(cd "$src" && "$cc" -O2 -I. -c protobuf-c/protobuf-c.c -o protobuf-c.o && "$ar" rcs libprotobuf-c.a protobuf-c.o) \
			>>"$log" 2>&1 || fail protobuf-c
		mkdir -p "$prefix/include/protobuf-c" && cp "$src/libprotobuf-c.a" "$prefix/lib/" &&
			cp "$src/protobuf-c/protobuf-c.h" "$prefix/include/protobuf-c/" ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
	echo "$(basename "$src") from Debian's source package -> $prefix ($rid)"
done
rm -rf "$work"
