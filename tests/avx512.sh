#!/bin/sh
# x86-avx512 where this machine runs its code (gdcc --list-targets says
# native): the conformance suite, every backend model and example (run
# --check, also with 4 registers per pool), and the ONNX Tier-1 cases.  On a
# CPU without AVX-512F/VL/DQ/BW the test is reported as skipped (77) with the
# reason gdcc gives, never as passed.
set -u
GDCC=${GDCC:-./gdcc}
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
here=$("$GDCC" --list-targets | awk '$1 == "x86-avx512"')
if [ -z "$here" ]; then
	echo "FAIL: x86-avx512 is not a target of this build"
	exit 1
fi
case $here in
*" native"*) ;;
*)
	why=$(printf '%s\n' "$here" | sed 's/.* no: \(.*\) md\/x86-avx512\.md.*/\1/')
	echo "avx512: SKIP: x86-avx512's code does not run on this machine: $why"
	exit 77
	;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
for m in "$SRCDIR"/tests/backend/*.ir "$SRCDIR"/examples/*.ir; do
	name=$(basename "$m" .ir)
	if "$GDCC" run "$m" -t x86-avx512 --check --seed 3 >"$tmp/out" 2>&1; then pass=$((pass + 1)); else
		fail=$((fail + 1)); echo "FAIL: $name on x86-avx512"; tail -5 "$tmp/out"; fi
	case $name in resnet_block|bert_layer|fuse_cse_relu) continue ;; esac
	if GDCC_MAX_REGS=4 "$GDCC" run "$m" -t x86-avx512 --check --seed 4 >"$tmp/out" 2>&1; then pass=$((pass + 1)); else
		fail=$((fail + 1)); echo "FAIL: $name on x86-avx512 with 4 registers"; tail -5 "$tmp/out"; fi
done
echo "avx512 backend models: $pass passed, $fail failed"
. "$SRCDIR/tests/conformance/runs.sh"
conf_run CONFORMANCE_TARGET=x86-avx512
st=$conf_status
if [ -d "${ONNX_DATA:-/usr/share/libonnx-testdata/data}" ]; then
	if ONNX_TARGETS=x86-avx512 ONNX_RESULTS="$tmp/onnx.jsonl" ONNX_REDUCE=0 sh "$SRCDIR/tests/onnx_suite.sh" >"$tmp/onnx" 2>&1; then
		tail -2 "$tmp/onnx"
	else
		st=1; grep -v '^PASS' "$tmp/onnx" | tail -20
	fi
else
	echo "avx512: ONNX Tier-1 not run: no libonnx-testdata"
fi
echo "$conf_passed conformance cases passed, $conf_failed failed"
[ "$fail" -eq 0 ] && [ "$st" -eq 0 ]
