#!/bin/sh
# Every fuzz target (tests/fuzz/run-NAME, the standalone build of
# tests/fuzz/fuzz_NAME.c) on every input of its seed corpus
# tests/fuzz/corpus/NAME/ and on the repository's inputs of its kind
# (examples/, tests/: model.ir files, .npy, .md, .onnx, .pb), each input
# within a time limit (FUZZ_CORPUS_TIMEOUT seconds, default 20).
# An input passes when the target returns: no crash, no sanitizer report
# (in the --enable-sanitizers build), no failed oracle (tests/fuzz/README.md).
# Run by `make check` with GDCC and SRCDIR set (the programs are beside GDCC).
set -u
GDCC=${GDCC:-./gdcc}
SRCDIR=${SRCDIR:-.}
SRCDIR=$(cd "$SRCDIR" && pwd)
bin=$(cd "$(dirname "$GDCC")" && pwd)/tests/fuzz
limit=${FUZZ_CORPUS_TIMEOUT:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

# inputs NAME: the files target NAME runs on, one per line
. "$SRCDIR/tests/fuzz/inputs.sh"
inputs() { fuzz_inputs "$1"; }

# one FILE: run it alone; counts and reports
run_one() {
	(cd "$(dirname "$1")" && exec timeout "$limit" "$prog" "$(basename "$1")") >"$tmp/log" 2>&1 </dev/null
	st=$?
	if [ "$st" -eq 0 ]; then
		pass=$((pass + 1))
		return 0
	fi
	fail=$((fail + 1))
	[ "$st" -eq 124 ] && why="timed out after ${limit}s" || why="exit $st"
	echo "FAIL: run-$name ${1#"$SRCDIR"/} ($why)"
	grep -v '^standalone: running' "$tmp/log" | tail -25 | sed 's/^/  | /'
	return 1
}

ntargets=0
for prog in "$bin"/run-*; do
	[ -x "$prog" ] || continue
	name=${prog##*/run-}
	ntargets=$((ntargets + 1))
	inputs "$name" | LC_ALL=C sort -u >"$tmp/list"
	if [ ! -s "$tmp/list" ]; then
		fail=$((fail + 1))
		echo "FAIL: run-$name: no inputs found"
		continue
	fi
	# The inputs of one folder in one process (from that folder: a model's
	# npy("...") paths are relative to it), each within the time limit;
	# when that fails, each input alone, to name the ones that fail.
	sed 's|/[^/]*$||' "$tmp/list" | LC_ALL=C sort -u >"$tmp/dirs"
	while IFS= read -r d; do
		grep -F "$d/" "$tmp/list" | while IFS= read -r f; do
			[ "$(dirname "$f")" = "$d" ] && basename "$f"
		done >"$tmp/group"
		n=$(wc -l <"$tmp/group")
		if (cd "$d" && FUZZ_INPUT_TIMEOUT=$limit exec xargs -d '\n' "$prog" <"$tmp/group") >"$tmp/blog" 2>&1; then
			pass=$((pass + n))
			continue
		fi
		before=$fail
		while IFS= read -r f; do run_one "$d/$f"; done <"$tmp/group"
		if [ "$fail" -eq "$before" ]; then
			fail=$((fail + 1))
			echo "FAIL: run-$name on ${d#"$SRCDIR"/}: fails when its inputs run in one process, not alone:"
			grep -v '^standalone: running' "$tmp/blog" | tail -25 | sed 's/^/  | /'
		fi
	done <"$tmp/dirs"
	echo "run-$name: $(wc -l <"$tmp/list") inputs"
done
if [ "$ntargets" -eq 0 ]; then
	fail=$((fail + 1))
	echo "FAIL: no fuzz targets in $bin"
fi
echo "fuzz-corpus: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
