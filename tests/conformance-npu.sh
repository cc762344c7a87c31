#!/bin/sh
# The conformance suite for npu-systolic: what the NPU runs natively goes
# through gdcc's simulator (sim/npusim), the fallback nodes run on the host
# target (x86-avx2), and each evidence record lists where every node ran.
# All cases on the default machine (16x16, weight stationary); the array's
# ops (conv, matmul, gemm) again output-stationary and on a 32x32 array.
set -u
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$SRCDIR/tests/conformance/runs.sh"
mkdir -p tests
ev=$(pwd)/tests/conformance-npu-systolic
conf_run CONFORMANCE_TARGET=npu-systolic EVIDENCE="$ev.jsonl"
conf_run CONFORMANCE_TARGET=npu-systolic CONFORMANCE_CASES='^(conv|matmul|gemm)' \
	CONFORMANCE_ARGS="--param dataflow=output_stationary" EVIDENCE="$ev-os.jsonl"
conf_run CONFORMANCE_TARGET=npu-systolic CONFORMANCE_CASES='^(conv|matmul|gemm)' \
	CONFORMANCE_ARGS="--param array_rows=32 --param array_cols=32" EVIDENCE="$ev-32x32.jsonl"
conf_done
