#!/bin/sh
# ONNX cases beyond the Tier-2 list (issue 17) through tests/onnx_suite.sh
# on the reference and every target: tests/onnx/extra.txt from Debian's
# libonnx-testdata (the loss ops in their own form), and the f32 Einsum
# cases of tests/onnx-cases (numpy.einsum's outputs stored as the oracle,
# tests/onnx-cases/gen_einsum.py).  Each must pass.
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
(cd "$SRCDIR/tests/onnx-cases" && ls -d node/*) >"$tmp/einsum.txt"
st=0
ONNX_CASES=$SRCDIR/tests/onnx/extra.txt ONNX_RESULTS=${ONNX_RESULTS:-tests/onnx-results-extra.jsonl} \
	ONNX_REDUCED=${ONNX_REDUCED:-tests/onnx-reduced-extra} sh "$SRCDIR/tests/onnx_suite.sh" >"$tmp/a" 2>&1 || st=1
cat "$tmp/a"
grep -q '^onnx: SKIP' "$tmp/a" && exit 77
ONNX_DATA=$SRCDIR/tests/onnx-cases ONNX_CASES=$tmp/einsum.txt ONNX_RESULTS=tests/onnx-results-einsum.jsonl \
	ONNX_REDUCED=tests/onnx-reduced-einsum sh "$SRCDIR/tests/onnx_suite.sh" >"$tmp/b" 2>&1 || st=1
cat "$tmp/b"
# every case passes: none unsupported
for f in "$tmp/a" "$tmp/b"; do
	grep -q ' 0 failed, 0 unsupported, 0 crashed' "$f" || { echo "onnx_extra: a case did not pass"; st=1; }
done
exit $st
