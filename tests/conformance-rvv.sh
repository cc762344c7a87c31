#!/bin/sh
# The conformance suite for riscv-rvv under qemu at VLEN 128, 256 and 512
# (one binary per case, vector-length agnostic).  Needs Debian's
# gcc-riscv64-linux-gnu and qemu-user (README); without them the test is
# reported as skipped (77), never as passed.
set -u
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
if ! command -v riscv64-linux-gnu-gcc >/dev/null 2>&1 || ! command -v qemu-riscv64 >/dev/null 2>&1; then
	echo "conformance-rvv: SKIP: no riscv64-linux-gnu-gcc or qemu-riscv64 (gcc-riscv64-linux-gnu, qemu-user)"
	exit 77
fi
. "$SRCDIR/tests/conformance/runs.sh"
for v in 128 256 512; do
	conf_run CONFORMANCE_TARGET=riscv-rvv CONFORMANCE_VLEN=$v
done
conf_done
