#!/bin/sh
# The conformance suite at -O0 (no graph passes, one workspace slot per
# value) on every target: x86-avx2, riscv-rvv under qemu at VLEN 128 and 512
# (when the cross tools exist), npu-systolic with its host.  At -O2 (the
# other conformance runs) a case whose operands are all constants is folded
# at compile time; here every case runs its kernel.
set -u
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$SRCDIR/tests/conformance/runs.sh"
mkdir -p tests
ev=$(pwd)/tests/conformance-O0
conf_run CONFORMANCE_TARGET=x86-avx2 CONFORMANCE_ARGS=-O0 EVIDENCE="$ev-x86-avx2.jsonl"
if command -v riscv64-linux-gnu-gcc >/dev/null 2>&1 && command -v qemu-riscv64 >/dev/null 2>&1; then
	for v in 128 512; do
		conf_run CONFORMANCE_TARGET=riscv-rvv CONFORMANCE_VLEN=$v CONFORMANCE_ARGS=-O0 EVIDENCE="$ev-riscv-rvv-vlen$v.jsonl"
	done
else
	echo "conformance-O0: riscv-rvv not run: no riscv64-linux-gnu-gcc or qemu-riscv64"
fi
conf_run CONFORMANCE_TARGET=npu-systolic CONFORMANCE_ARGS=-O0 EVIDENCE="$ev-npu-systolic.jsonl"
conf_done
