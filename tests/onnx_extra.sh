#!/bin/sh
# ONNX cases beyond the Tier-2 list (issue 17) through tests/onnx_suite.sh
# on the reference and every target: tests/onnx/extra.txt from Debian's
# libonnx-testdata (the loss ops in their own form, RNN, GRU, LSTM ...), and
# the cases of tests/onnx-cases: f32 Einsum, DFT, STFT, ReverseSequence,
# MelWeightMatrix, Det, CumSum (numpy's outputs stored as the oracle:
# gen_einsum.py, gen_dft.py, gen_det.py, gen_cumsum.py), GridSample and RoiAlign (PyTorch's and
# torchvision's: gen_gridsample.py, gen_roialign.py) and
# RNN, GRU, LSTM with what the suite's own cases leave out (PyTorch's
# outputs, or a numpy reading of the ONNX text checked against PyTorch and
# the suite: gen_rnn.py).  Each must pass.  The cases with sequence_lens run
# again with it an input when running (the suite's runner, like `gdcc run
# MODEL.onnx --input`, makes integer inputs constants; `gdcc import` keeps
# them inputs), their .npy copies the data.
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
GDCC=${GDCC:-./gdcc}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
(cd "$SRCDIR/tests/onnx-cases" && ls -d node/*) >"$tmp/cases.txt"
st=0
ONNX_CASES=$SRCDIR/tests/onnx/extra.txt ONNX_RESULTS=${ONNX_RESULTS:-tests/onnx-results-extra.jsonl} \
	ONNX_REDUCED=${ONNX_REDUCED:-tests/onnx-reduced-extra} sh "$SRCDIR/tests/onnx_suite.sh" >"$tmp/a" 2>&1 || st=1
cat "$tmp/a"
grep -q '^onnx: SKIP' "$tmp/a" && exit 77
ONNX_DATA=$SRCDIR/tests/onnx-cases ONNX_CASES=$tmp/cases.txt ONNX_RESULTS=tests/onnx-results-cases.jsonl \
	ONNX_REDUCED=tests/onnx-reduced-cases sh "$SRCDIR/tests/onnx_suite.sh" >"$tmp/b" 2>&1 || st=1
cat "$tmp/b"
# every case passes: none unsupported
for f in "$tmp/a" "$tmp/b"; do
	grep -q ' 0 failed, 0 unsupported, 0 crashed' "$f" || { echo "onnx_extra: a case did not pass"; st=1; }
done
# sequence_lens an input when running: the same outputs (ONNX's rule)
PY=${PYTHON_NUMPY:-/usr/bin/python3}
targets="reference x86-avx2 npu-systolic"
command -v qemu-riscv64 >/dev/null 2>&1 && command -v riscv64-linux-gnu-gcc >/dev/null 2>&1 && targets="$targets riscv-rvv"
for npy in "$SRCDIR"/tests/onnx-cases/node/*/npy; do
	d=$(dirname "$npy")
	name=$(basename "$d")
	if ! "$GDCC" import "$d/model.onnx" -o "$tmp/$name.ir" >"$tmp/out" 2>&1 || ! grep -q '^  input sequence_lens : i32' "$tmp/$name.ir"; then
		echo "onnx_extra: $name: import failed, or sequence_lens is not an input of the model.ir"; cat "$tmp/out"; st=1; continue
	fi
	for t in $targets; do
		set --
		for f in "$npy"/*.npy; do
			k=$(basename "$f" .npy)
			case $k in Y | Y_h | Y_c) set -- "$@" --output "$k=$tmp/$k.npy" ;; *) set -- "$@" --input "$k=$f" ;; esac
		done
		case $t in reference) ;; riscv-rvv) set -- "$@" -t riscv-rvv --vlen 256 ;; *) set -- "$@" -t "$t" ;; esac
		rm -f "$tmp"/Y*.npy
		if ! "$GDCC" run "$tmp/$name.ir" "$@" >"$tmp/out" 2>&1; then
			echo "onnx_extra: $name on $t with sequence_lens an input: run failed"; cat "$tmp/out"; st=1; continue
		fi
		if "$PY" - "$npy" "$tmp" <<'PYEOF'; then echo "onnx_extra: $name on $t with sequence_lens an input: ok"; else
import numpy as np, os, sys
npy, tmp = sys.argv[1], sys.argv[2]
for k in ("Y", "Y_h", "Y_c"):
    if os.path.exists(os.path.join(npy, k + ".npy")):
        want, got = np.load(os.path.join(npy, k + ".npy")), np.load(os.path.join(tmp, k + ".npy"))
        assert got.shape == want.shape and (np.abs(got - want) <= 1e-7 + 1e-3 * np.abs(want)).all(), (k, np.abs(got - want).max())
PYEOF
			echo "onnx_extra: $name on $t with sequence_lens an input: MISMATCH"; st=1
		fi
	done
done
exit $st
