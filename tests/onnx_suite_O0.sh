#!/bin/sh
# The Tier-1 ONNX cases of tests/onnx_suite.sh again at -O0 (no graph passes,
# one workspace slot per value) on every target: the unoptimized pipeline
# stays correct, and the cases whose operands are all constants, which -O2
# folds at compile time, run their kernels here.  (The reference interpreter
# does not depend on -O: it runs in onnx_suite.sh.)
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
ONNX_ARGS="-O0 ${ONNX_ARGS:-}" ONNX_TARGETS=${ONNX_TARGETS:-"x86-avx2 riscv-rvv npu-systolic"} \
	ONNX_RESULTS=${ONNX_RESULTS:-tests/onnx-results-O0.jsonl} ONNX_REDUCED=${ONNX_REDUCED:-tests/onnx-reduced-O0} \
	exec sh "$SRCDIR/tests/onnx_suite.sh"
