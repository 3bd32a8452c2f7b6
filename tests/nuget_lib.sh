#!/usr/bin/env bash
# A nuget.config for the suites that take packages from local folder feeds (nupkg.sh, tool.sh): source it
# after lib.sh.
#
# write_nuget_config DIR [KEY FOLDER IDS]...: DIR/nuget.config adds each FOLDER as source KEY for the
# package ids IDS (comma-separated) only, and keeps every source configured here for everything else
# (package source mapping, so that NuGet cannot take one of those ids from another source).
write_nuget_config() {
	local dir=$1 name sources="" mapping=""
	shift
	while [ $# -ge 3 ]; do
		sources+="    <add key=\"$1\" value=\"$2\" />"$'\n'
		mapping+="    <packageSource key=\"$1\">$(printf '<package pattern="%s" />' ${3//,/ })</packageSource>"$'\n'
		shift 3
	done
	while read -r name; do
		mapping+="    <packageSource key=\"$name\"><package pattern=\"*\" /></packageSource>"$'\n'
	done < <(cd "$dir" && timeout 60 dotnet nuget list source | sed -nE 's/^ *[0-9]+\. +(.*) \[Enabled\]$/\1/p')
	printf '<?xml version="1.0" encoding="utf-8"?>\n<configuration>\n  <packageSources>\n%s  </packageSources>\n  <packageSourceMapping>\n%s  </packageSourceMapping>\n</configuration>\n' \
		"$sources" "$mapping" >"$dir/nuget.config"
}
