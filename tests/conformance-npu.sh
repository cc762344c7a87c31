#!/bin/sh
# The conformance suite for npu-systolic: what the NPU runs natively goes
# through gdcc's simulator (sim/npusim), the fallback nodes run on the host
# target (x86-avx2), and each evidence record lists where every node ran.
set -u
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
CONFORMANCE_TARGET=npu-systolic exec sh "$SRCDIR/tests/conformance.sh"
