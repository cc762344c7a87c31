#!/bin/sh
# The Tier-2 ONNX backend cases beyond Tier 1 (tests/onnx/tier2.txt, issue 17)
# through tests/onnx_suite.sh on the reference and every target: each must
# pass (a wrong answer, a crash or an unsupported case fails the test).
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
out=$(ONNX_CASES=${ONNX_CASES:-$SRCDIR/tests/onnx/tier2.txt} ONNX_RESULTS=${ONNX_RESULTS:-tests/onnx-results-tier2.jsonl} \
	ONNX_REDUCED=${ONNX_REDUCED:-tests/onnx-reduced-tier2} sh "$SRCDIR/tests/onnx_suite.sh" 2>&1)
st=$?
printf '%s\n' "$out"
[ $st -eq 77 ] && exit 77
# every Tier-2 case passes on every target: an unsupported one fails too
if ! printf '%s\n' "$out" | grep -q '^onnx: [0-9]* passed, 0 failed, 0 unsupported, 0 crashed'; then
	echo "onnx_tier2: a Tier-2 case failed, crashed or is unsupported (each must pass)"
	exit 1
fi
exit $st
