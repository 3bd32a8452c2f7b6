#!/usr/bin/env bash
# dotnet-locktime, the .NET tool package (nuget/dotnet-locktime/), end to end. `make package` builds it
# beside the LockTime package, of the same version; it is installed from a local folder feed (a
# nuget.config that adds the folder for dotnet-locktime and keeps the configured sources for the rest),
# with NuGet's folders, DOTNET_CLI_HOME and every tool folder under this run's temporary folder:
#   - the packages: dotnet-locktime.<version>.nupkg beside LockTime.<version>.nupkg; the binaries in both
#     print that version (`locktime --version`), the build's own locktime cli.h's with -dev;
#   - --tool-path: `dotnet-locktime --version` prints the package's version; the host's binary stripped
#     of its execute bits gets them back from the launcher; `weave` on an assembly in a folder whose name has a space
#     writes the bytes the build's locktime writes, which pass ltcheck verify and run, writing a report;
#     `report` (text from standard input too, HTML) and `check` on that report print what the build's
#     locktime prints and exit as it does; an unknown command's exit status comes through;
#   - a local tool manifest (dotnet new tool-manifest, dotnet tool install): `dotnet locktime --version`
#     and `dotnet locktime check`;
#   - -g: `dotnet-locktime --version` from the global tools folder (of this run's DOTNET_CLI_HOME), and
#     `dotnet locktime --version` with that folder on PATH;
#   - dnx (the SDK's `dotnet dnx`, .NET 10): `--version`.
# Not under wine: the launcher is a .NET program, and wine here has no Windows .NET runtime to run it
# (tests/integration/hosts.sh runs the win-x64 binary itself under wine).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../nuget_lib.sh"
LT=${LOCKTIME:-$LT_BUILD/san/locktime}
export MSBUILDDISABLENODEREUSE=1 DOTNET_CLI_USE_MSBUILD_SERVER=0
unset LOCKTIME_DISABLED LOCKTIME_THRESHOLD_MS LOCKTIME_OUTPUT LOCKTIME_REPORT LOCKTIME_REPORT_INTERVAL_S
WORK=$LT_TMP/work FEED=$LT_TMP/feed TOOLS=$LT_TMP/tools
APP="$LT_TMP/app dir"
mkdir -p "$WORK" "$FEED" "$APP"

check "ltcheck builds" tools_build || exit 1
check "the corpus builds" corpus_build || exit 1
check "make package" timeout 1800 make -s -C "$LT_ROOT" package || exit 1
# From here on nothing outside this run's folder: NuGet's packages, caches and scratch, the CLI's home
# (global tools).
export NUGET_PACKAGES=$LT_TMP/nuget/packages NUGET_HTTP_CACHE_PATH=$LT_TMP/nuget/http-cache \
	NUGET_SCRATCH=$LT_TMP/nuget/scratch NUGET_PLUGINS_CACHE_PATH=$LT_TMP/nuget/plugins DOTNET_CLI_HOME=$LT_TMP/home
mkdir -p "$DOTNET_CLI_HOME"
VERSION=$(cat "$LT_BUILD/package/dev.version") # cli.h's version, -dev.<time> (Makefile)
CLI_VERSION=$(sed -n 's/^#define LOCKTIME_VERSION "\(.*\)"$/\1/p' "$LT_ROOT/weaver/cli/cli.h")
TOOL_NUPKG=$LT_BUILD/dotnet-locktime.$VERSION.nupkg

check "dotnet-locktime.$VERSION.nupkg beside LockTime.$VERSION.nupkg" test -f "$TOOL_NUPKG" -a -f "$LT_BUILD/LockTime.$VERSION.nupkg" || exit 1
cp "$TOOL_NUPKG" "$FEED/"

# prints VERSION CMD...: CMD --version prints "locktime VERSION" and nothing else.
prints() {
	local want=$1 got
	shift
	got=$(timeout 120 "$@" --version) || return 1
	echo "$got"
	[ "$got" = "locktime $want" ]
}
# The binaries each package carries (unzipped), the build's own.
entry_prints() { # NUPKG ENTRY
	rm -rf "$LT_TMP/entry" && mkdir "$LT_TMP/entry" && timeout 60 unzip -q -d "$LT_TMP/entry" "$1" "$2" &&
		chmod +x "$LT_TMP/entry/$2" && prints "$VERSION" "$LT_TMP/entry/$2"
}
check "LockTime package: tools/linux-x64/locktime prints the package's version" entry_prints "$LT_BUILD/LockTime.$VERSION.nupkg" tools/linux-x64/locktime
check "dotnet-locktime package: linux-x64/locktime prints the package's version" entry_prints "$TOOL_NUPKG" tools/net8.0/any/linux-x64/locktime
check "the build's locktime prints cli.h's version with -dev" prints "$CLI_VERSION-dev" "$LT"

write_nuget_config "$WORK" locktime-tool "$FEED" dotnet-locktime
# install LOG ARGS...: dotnet tool install dotnet-locktime of this version, from WORK (its nuget.config).
install() {
	local log=$1
	shift
	(cd "$WORK" && timeout 300 dotnet tool install dotnet-locktime --version "$VERSION" "$@") >"$log" 2>&1 || { tail -n 20 "$log"; return 1; }
}

# ---- --tool-path ----
if check "dotnet tool install --tool-path" install "$LT_TMP/install-path.log" --tool-path "$TOOLS"; then
	DL=$TOOLS/dotnet-locktime
	check "--tool-path: dotnet-locktime --version prints the package's version" prints "$VERSION" "$DL"
	# The host's binary without its execute bits (as an extraction may leave it): the launcher gives them
	# back and runs it.
	made_executable() {
		local bin
		bin=$(find "$TOOLS/.store" -path '*/linux-x64/locktime' -type f) && [ -n "$bin" ] || { echo "no linux-x64/locktime in the store"; return 1; }
		chmod a-x "$bin" && ls -l "$bin" && prints "$VERSION" "$DL" && ls -l "$bin" && test -x "$bin"
	}
	check "--tool-path: the host's binary without execute bits: the launcher sets them and runs it" made_executable

	src=$LT_CORPUS/csharp/Release
	cp -r "$src/." "$APP/"
	timeout 120 "$LT" weave -q "$src/LockCorpus.dll" -o "$LT_TMP/expected.dll" 2>"$LT_TMP/expected-weave.err"
	check "--tool-path: weave (a folder whose name has a space)" timeout 120 "$DL" weave -q "$APP/LockCorpus.dll"
	check "--tool-path: weave writes the bytes the build's locktime writes" cmp "$LT_TMP/expected.dll" "$APP/LockCorpus.dll"
	check "--tool-path: the woven assembly passes ltcheck verify" ltcheck verify "$APP/LockCorpus.dll"
	LOCKTIME_THRESHOLD_MS=0 LOCKTIME_REPORT=$LT_TMP/run.json timeout 120 dotnet "$APP/LockCorpus.dll" >"$LT_TMP/run.out" 2>"$LT_TMP/run.err"
	check "--tool-path: the woven corpus runs (exit 0) and writes a report" test $? = 0 -a -s "$LT_TMP/run.json"

	# same NAME ARGS...: dotnet-locktime ARGS and the build's locktime ARGS print the same (stdout, stderr)
	# and exit the same (SAME_RC: the exit status); stdin is run.json.
	same() {
		local name=$1 rc_tool rc_ref
		shift
		timeout 120 "$DL" "$@" <"$LT_TMP/run.json" >"$LT_TMP/tool.out" 2>"$LT_TMP/tool.err"
		rc_tool=$?
		timeout 120 "$LT" "$@" <"$LT_TMP/run.json" >"$LT_TMP/ref.out" 2>"$LT_TMP/ref.err"
		rc_ref=$?
		SAME_RC=$rc_tool
		if [ "$rc_tool" = "$rc_ref" ] && cmp -s "$LT_TMP/ref.out" "$LT_TMP/tool.out" && cmp -s "$LT_TMP/ref.err" "$LT_TMP/tool.err"; then
			ok "--tool-path: $name: as the build's locktime (exit $rc_tool, $(wc -l <"$LT_TMP/tool.out") lines out, $(wc -l <"$LT_TMP/tool.err") err)"
			return 0
		fi
		not_ok "--tool-path: $name: as the build's locktime" "exit $rc_tool, the build's $rc_ref"$'\n'"$(diff "$LT_TMP/ref.out" "$LT_TMP/tool.out" | head -n 10)"$'\n'"$(diff "$LT_TMP/ref.err" "$LT_TMP/tool.err" | head -n 10)"
		return 1
	}
	same "report --format text" report "$LT_TMP/run.json" --format text
	check "--tool-path: report --format text: a table (exit 0)" test "$SAME_RC" = 0 -a -s "$LT_TMP/tool.out"
	same "report --format text of standard input" report /dev/stdin --format text
	same "check --max-hold-ms 0" check "$LT_TMP/run.json" --max-hold-ms 0
	check "--tool-path: check --max-hold-ms 0: exit 1, LT200 lines" test "$SAME_RC" = 1 -a -n "$(grep -h ' error LT200: ' "$LT_TMP/tool.out" "$LT_TMP/tool.err")"
	same "check under generous limits" check "$LT_TMP/run.json" --max-hold-ms 1000000 --max-wait-ms 1000000 --ignore-deadlocks
	check "--tool-path: check under generous limits: exit 0" test "$SAME_RC" = 0
	same "an unknown command" no-such-command
	check "--tool-path: an unknown command: exit 2, the error and the usage" test "$SAME_RC" = 2 -a -n "$(grep -l 'unknown command' "$LT_TMP/tool.err")"
	check "--tool-path: report -o page.html" timeout 120 "$DL" report "$LT_TMP/run.json" -o "$LT_TMP/page.html"
	check "--tool-path: the page is HTML" grep -qi '<html' "$LT_TMP/page.html"
fi

# ---- a local tool manifest ----
local_manifest() {
	(cd "$WORK" && timeout 120 dotnet new tool-manifest --force) >"$LT_TMP/manifest.log" 2>&1 &&
		install "$LT_TMP/install-local.log" || { cat "$LT_TMP/manifest.log"; return 1; }
}
if check "local tool manifest: dotnet new tool-manifest, dotnet tool install" local_manifest; then
	in_work() { (cd "$WORK" && "$@"); }
	check "local tool manifest: dotnet locktime --version prints the package's version" in_work prints "$VERSION" dotnet locktime
	check "local tool manifest: dotnet tool run dotnet-locktime --version" in_work prints "$VERSION" dotnet tool run dotnet-locktime
	if [ -s "$LT_TMP/run.json" ]; then
		manifest_check() {
			(cd "$WORK" && timeout 120 dotnet locktime check "$LT_TMP/run.json" --max-hold-ms 0) >"$LT_TMP/local.out" 2>&1
			[ $? = 1 ] && grep -q ' error LT200: ' "$LT_TMP/local.out" || { cat "$LT_TMP/local.out"; return 1; }
		}
		check "local tool manifest: dotnet locktime check --max-hold-ms 0: LT200, exit 1" manifest_check
	fi
fi

# ---- -g (the global tools folder of this run's DOTNET_CLI_HOME) ----
if check "dotnet tool install -g" install "$LT_TMP/install-g.log" -g; then
	check "-g: dotnet-locktime --version prints the package's version" prints "$VERSION" "$DOTNET_CLI_HOME/.dotnet/tools/dotnet-locktime"
	# dotnet runs dotnet-<name> from PATH as `dotnet <name>`, from any folder.
	check "-g: dotnet locktime --version (the tools folder on PATH, in another folder)" \
		env -C "$LT_TMP" PATH="$DOTNET_CLI_HOME/.dotnet/tools:$PATH" bash -c "$(declare -f prints); prints '$VERSION' dotnet locktime"
fi

# ---- dnx ----
if timeout 60 dotnet dnx --help >/dev/null 2>&1; then
	# The tool's arguments after "--" (dnx has a --version of its own).
	dnx_version() {
		local got
		got=$(cd "$WORK" && timeout 300 dotnet dnx "dotnet-locktime@$VERSION" -- --version </dev/null 2>&1) || { echo "$got"; return 1; }
		echo "$got"
		[ "$(echo "$got" | tail -n 1)" = "locktime $VERSION" ]
	}
	check "dotnet dnx dotnet-locktime@$VERSION -- --version prints the package's version" dnx_version
else
	skip "dnx" "this SDK ($(dotnet --version)) has no dnx"
fi
done_testing
