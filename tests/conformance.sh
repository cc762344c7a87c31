#!/bin/sh
# The conformance suite (docs/conformance.md): every op of the op table over a
# set of shapes and attributes, compiled for a target, run, and compared with
# the reference interpreter by `gdcc run -t TARGET --check`.
#
#   CONFORMANCE_TARGET  the target (default x86-avx2)
#   CONFORMANCE_VLEN    for a scalable-vector target: the VLEN to run at
#
#   GDCC        the gdcc binary (default: ./gdcc)
#   SRCDIR      the source tree (default: this script's folder's parent)
#   EVIDENCE    where the JSON Lines evidence goes
#               (default: tests/conformance-x86-avx2.jsonl under the current folder)
#   JOBS        cases run in parallel (default 2)
#   CONFORMANCE_CASES   an extended regular expression: run only the matching cases
#   CONFORMANCE_KEEP    set: keep the generated cases and their outputs (the folder is printed)
#   CONFORMANCE_PER_OP  set: also print a per-op count before the summary
#   CONFORMANCE_TIMEOUT seconds one case may take (default 60)
#   CONFORMANCE_ARGS    more options for `gdcc run` (e.g. --param array_rows=32)
#
# Exit status: 0 no case failed, 1 a case failed (an unsupported case is not a
# failure, and is never counted as passed), 77 skipped (no python3), 99 a setup error.
set -u

TARGET=${CONFORMANCE_TARGET:-x86-avx2}
VLENARG=
[ -n "${CONFORMANCE_VLEN:-}" ] && VLENARG="--vlen $CONFORMANCE_VLEN"
GDCC=${GDCC:-./gdcc}
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
JOBS=${JOBS:-2}
CASE_TIMEOUT=${CONFORMANCE_TIMEOUT:-60}
PYTHON=${PYTHON:-python3}
SUITE=$SRCDIR/tests/conformance/suite.py

if ! command -v "$PYTHON" >/dev/null 2>&1; then
	echo "conformance: SKIP: no $PYTHON (the case generator needs it)"
	exit 77
fi
case $GDCC in
/*) ;;
*) GDCC=$(pwd)/$GDCC ;;
esac
if [ ! -x "$GDCC" ]; then
	echo "conformance: error: no gdcc at $GDCC (set GDCC)" >&2
	exit 99
fi
if [ -z "${EVIDENCE:-}" ]; then
	mkdir -p tests || exit 99
	EVIDENCE=$(pwd)/tests/conformance-$TARGET${CONFORMANCE_VLEN:+-vlen$CONFORMANCE_VLEN}.jsonl
fi
case $EVIDENCE in
/*) ;;
*) EVIDENCE=$(pwd)/$EVIDENCE ;;
esac

dir=$(mktemp -d "${TMPDIR:-/tmp}/gdcc-conformance.XXXXXX") || exit 99
if [ -n "${CONFORMANCE_KEEP:-}" ]; then
	echo "conformance: cases and outputs kept in $dir"
else
	trap 'rm -rf "$dir"' EXIT
	trap 'rm -rf "$dir"; exit 130' INT TERM
fi

"$PYTHON" "$SUITE" gen "$dir" || { echo "conformance: error: the generator failed" >&2; exit 99; }
version=$("$GDCC" --version | sed -n '1s/^gdcc //p')
if command -v timeout >/dev/null 2>&1; then
	TIMEOUT="timeout $CASE_TIMEOUT"
else
	TIMEOUT=
fi

# One case: NAME.ir with the extra arguments in NAME.args (the seed, npy inputs);
# stdout, stderr and the exit status go to NAME.out, NAME.err, NAME.rc.
cat >"$dir/run1.sh" <<'EOF'
cd "$1" || exit 1
n=$2
args=$(cat "$n.args")
# shellcheck disable=SC2086
$TIMEOUT "$GDCC" run "$n.ir" -t "$TARGET" $VLENARG $EXTRAARGS --check --report="$n.report.json" $args >"$n.out" 2>"$n.err" </dev/null
echo $? >"$n.rc"
EOF
EXTRAARGS=${CONFORMANCE_ARGS:-}
export GDCC TARGET TIMEOUT VLENARG EXTRAARGS

sed -n 's/^{"case": "\([^"]*\)".*/\1/p' "$dir/cases.jsonl" >"$dir/names"
if [ -n "${CONFORMANCE_CASES:-}" ]; then
	grep -E -e "$CONFORMANCE_CASES" "$dir/names" >"$dir/names.sel"
	mv "$dir/names.sel" "$dir/names"
fi
echo "conformance: $(wc -l <"$dir/names" | tr -d ' ') cases for $TARGET${CONFORMANCE_VLEN:+ at VLEN $CONFORMANCE_VLEN}, $JOBS at a time"
if [ -s "$dir/names" ]; then
	xargs -P "$JOBS" -n 1 sh "$dir/run1.sh" "$dir" <"$dir/names"
fi

echo "conformance: evidence in $EVIDENCE"
"$PYTHON" "$SUITE" collect "$dir" "$EVIDENCE" "$version" "$TARGET"
