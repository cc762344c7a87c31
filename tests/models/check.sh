#!/bin/sh
# Real models against PyTorch: resnet18, mobilenet_v2 and a BERT-base encoder
# layer (seq 128) exported by tests/models/export.py with PyTorch's outputs
# on a seeded input; gdcc compiles each for every target (timed), runs it,
# and compares with PyTorch's output (rtol 1e-3, atol 1e-4; outside it, as
# close to PyTorch's float64 output as PyTorch's float32 output is).  `gdcc import`
# is checked too: the imported model.ir must give the .onnx's exact output.
#
#   MODELS         default "resnet18 mobilenet_v2 bert_layer seg_head"
#   MODELS_TARGETS default "reference x86-avx2 riscv-rvv npu-systolic" (riscv-rvv at VLEN
#                  256 under qemu; skipped without it)
#   MODELS_DIR     where the exports and results go (default models-out)
#   MODELS_OPSETS  the opsets to export at (default 17; "14 17": each in
#                  MODELS_DIR/opsetN)
#   MODELS=torchvision  every classification model of torchvision
#                  (torchvision.models.list_models), as the opset-14/17
#                  sweep of issue 17 runs them (where it stands, model by
#                  model: tests/models/torchvision.md)
# Run by `make models-check`.
set -u
GDCC=${GDCC:-./gdcc}
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
PY=/usr/bin/python3
DIR=${MODELS_DIR:-models-out}
models=${MODELS:-"resnet18 mobilenet_v2 bert_layer seg_head"}
opsets=${MODELS_OPSETS:-17}
targets=${MODELS_TARGETS:-"reference x86-avx2 riscv-rvv npu-systolic"}
if ! $PY -c 'import torch, torchvision' 2>/dev/null; then
	echo "models: SKIP: no python3-torch / python3-torchvision (apt-get install python3-torch python3-torchvision)"
	exit 77
fi
if ! command -v qemu-riscv64 >/dev/null 2>&1; then
	targets=$(echo "$targets" | sed 's/riscv-rvv//')
	echo "models: riscv-rvv not run: no qemu-riscv64"
fi
if [ "$models" = torchvision ]; then
	models=$($PY -c 'import torchvision; print(" ".join(torchvision.models.list_models(module=torchvision.models)))') || exit 1
fi
now() { date +%s.%N; }
pass=0 fail=0 skip=0
top=$DIR
mkdir -p "$top"
: >"$top/results.txt"
for opset in $opsets; do
DIR=$top
[ "$opsets" = 17 ] || DIR=$top/opset$opset
mkdir -p "$DIR"
for m in $models; do
	[ -f "$DIR/$m.onnx" ] && [ -f "$DIR/$m.output.npy" ] ||
		OPSET=$opset $PY "$SRCDIR/tests/models/export.py" "$DIR" "$m" || { echo "SKIP: $m [op$opset]: PyTorch's export fails (not counted)"; skip=$((skip + 1)); }
done
for m in $models; do
	[ -f "$DIR/$m.onnx" ] || continue
	for t in $targets; do
		set --
		case $t in reference) ;; riscv-rvv) set -- -t riscv-rvv --vlen 256 ;; *) set -- -t "$t" ;; esac
		ct=-
		if [ "$t" != reference ]; then
			t0=$(now)
			if ! "$GDCC" -S "$DIR/$m.onnx" -t "$t" -o "$DIR/$m.$t.s"; then
				echo "FAIL: $m [op$opset $t]: does not compile"; fail=$((fail + 1)); continue
			fi
			ct=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
		fi
		rm -f "$DIR/$m.$t.npy"
		cmp=
		if ! "$GDCC" run "$DIR/$m.onnx" "$@" --input input="$DIR/$m.input.npy" --output output="$DIR/$m.$t.npy" ||
		   ! cmp=$($PY "$SRCDIR/tests/models/compare.py" "$DIR/$m.$t.npy" "$DIR/$m.output.npy" $([ -f "$DIR/$m.output64.npy" ] && echo "$DIR/$m.output64.npy")); then
			echo "FAIL: $m [op$opset $t]: ${cmp:-the run failed}"; fail=$((fail + 1)); continue
		fi
		printf '%-13s %-6s %-10s compile %6ss  %s\n' "$m" "op$opset" "$t" "$ct" "$cmp" | tee -a "$top/results.txt"
		pass=$((pass + 1))
	done
	# gdcc import: the text model (weights in .npy beside it) gives the same result
	# (model.ir renames 'input' and 'output', keywords there; its header says to what)
	cmp=
	[ -f "$DIR/$m.reference.npy" ] ||
		"$GDCC" run "$DIR/$m.onnx" --input input="$DIR/$m.input.npy" --output output="$DIR/$m.reference.npy" || true
	if "$GDCC" import "$DIR/$m.onnx" -o "$DIR/$m.ir" &&
	   in=$(sed -n 's/^#   input input -> //p' "$DIR/$m.ir") && out=$(sed -n 's/^#   output output -> //p' "$DIR/$m.ir") &&
	   "$GDCC" run "$DIR/$m.ir" --input "${in:-input}=$DIR/$m.input.npy" --output "${out:-output}=$DIR/$m.ir.npy" &&
	   cmp=$($PY "$SRCDIR/tests/models/compare.py" "$DIR/$m.ir.npy" "$DIR/$m.reference.npy" 0 0); then
		printf '%-13s %-6s %-10s %s\n' "$m" "op$opset" "import" "model.ir equals model.onnx: $cmp" | tee -a "$top/results.txt"
		pass=$((pass + 1))
	else
		echo "FAIL: $m [op$opset import]: ${cmp:-import or run failed}"; fail=$((fail + 1))
	fi
done
done
echo "models: $pass passed, $fail failed, $skip not exported by PyTorch (results in $top/results.txt)"
[ "$fail" -eq 0 ]
