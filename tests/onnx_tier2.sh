#!/bin/sh
# The Tier-2 ONNX backend cases beyond Tier 1 (tests/onnx/tier2.txt, issue 17)
# through tests/onnx_suite.sh on the reference and every target: each passes
# or is reported unsupported with the reason (the count is printed); a wrong
# answer or a crash fails.
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
ONNX_CASES=${ONNX_CASES:-$SRCDIR/tests/onnx/tier2.txt} ONNX_RESULTS=${ONNX_RESULTS:-tests/onnx-results-tier2.jsonl} \
	ONNX_REDUCED=${ONNX_REDUCED:-tests/onnx-reduced-tier2} exec sh "$SRCDIR/tests/onnx_suite.sh"
