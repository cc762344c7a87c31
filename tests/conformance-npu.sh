#!/bin/sh
# The conformance suite for npu-systolic: what the NPU runs natively goes
# through gdcc's simulator (sim/npusim), the fallback nodes run on the host
# target (x86-avx2), and each evidence record lists where every node ran.
# All cases on the default machine (16x16, weight stationary); the array's
# ops (conv, matmul, gemm) again output-stationary and on a 32x32 array.
set -u
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
status=0 passed=0 failed=0
run() { # EVIDENCE-SUFFIX CASES ARGS
	out=$(CONFORMANCE_TARGET=npu-systolic CONFORMANCE_CASES=$2 CONFORMANCE_ARGS=$3 \
		EVIDENCE=$(pwd)/tests/conformance-npu-systolic$1.jsonl sh "$SRCDIR/tests/conformance.sh")
	st=$?
	printf '%s\n' "$out" | grep -v '^PASS: '
	p=$(printf '%s\n' "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
	f=$(printf '%s\n' "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	[ $st -eq 0 ] || status=1
}
mkdir -p tests
run "" "" ""
run -os '^(conv|matmul|gemm)' "--param dataflow=output_stationary"
run -32x32 '^(conv|matmul|gemm)' "--param array_rows=32 --param array_cols=32"
echo "$passed passed, $failed failed"
exit $status
