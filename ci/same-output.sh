#!/usr/bin/env bash
# Whether two builds of locktime give the same bytes: each input is woven by both (into copies, with
# its PDB or .mdb beside it when it has one) and every file each weave writes is compared, with the
# exit status and the messages, and so is `locktime list`'s output.  For a change that must not change
# behaviour (moves, renames).  Inputs by default: the test corpus (build/corpus), Mono's class
# libraries, and packages of the corpus programs (.nupkg).
#   bash ci/same-output.sh OLD_LOCKTIME NEW_LOCKTIME [INPUT...]
# Prints one line per difference and "N inputs, N same, N different"; exits 1 when any differs.
set -u
old=$1 new=$2
shift 2
cd "$(dirname "$0")/.."
inputs=("$@")
if [ ${#inputs[@]} -eq 0 ]; then
	inputs=($(ls build/corpus/*/*/*.dll build/corpus/*/*/*.exe build/corpus/thirdparty/*.dll \
		/usr/lib/mono/4.5/*.dll /usr/lib/mono/4.5/Facades/*.dll 2>/dev/null))
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Packages: each corpus program of C# and VB in a .nupkg, woven whole.
if [ $# -eq 0 ]; then
	for dll in build/corpus/csharp/Release/LockCorpus.dll build/corpus/vb/Release/LockCorpusVb.dll; do
		[ -f "$dll" ] || continue
		pkg=$work/$(basename "$dll" .dll).1.0.0.nupkg
		python3 - "$pkg" "$dll" <<'PY'
import sys, zipfile
pkg, dll = sys.argv[1:]
with zipfile.ZipFile(pkg, "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("Same.nuspec", '<?xml version="1.0"?><package><metadata><id>Same</id><version>1.0.0</version>'
               '<authors>x</authors><description>x</description></metadata></package>')
    z.write(dll, "lib/net8.0/" + dll.rsplit("/", 1)[1])
PY
		inputs+=("$pkg")
	done
fi
same=0 differ=0
for f in "${inputs[@]}"; do
	base=$(basename "$f")
	stem=${base%.*}
	for side in old new; do
		d=$work/$side
		rm -rf "$d" && mkdir -p "$d"
		cp "$f" "$d/"
		for sym in "${f%.*}.pdb" "$f.mdb"; do [ -f "$sym" ] && cp "$sym" "$d/"; done
		bin=$old && [ $side = new ] && bin=$new
		(cd "$d" && "$bin" list "$base" > ../$side.list 2>&1; echo "exit $?" >> ../$side.list
		 "$bin" weave "$base" > ../$side.weave 2>&1; echo "exit $?" >> ../$side.weave)
	done
	if diff -r "$work/old" "$work/new" > /dev/null && cmp -s "$work/old.list" "$work/new.list" &&
		cmp -s "$work/old.weave" "$work/new.weave"; then
		same=$((same + 1))
	else
		differ=$((differ + 1))
		echo "differs: $f"
	fi
done
echo "${#inputs[@]} inputs, $same same, $differ different"
[ $differ -eq 0 ]
