#!/bin/sh
# Sharded models across processes on MPI (issue 18; docs/ir.md "Sharding"):
# each case runs `gdcc run -t TARGET` on a mesh of N devices (mpirun -np N
# --oversubscribe: more processes than this machine's cores), one program
# per device, and compares the joined outputs with the single-process
# reference interpreter on the whole model; the same partitioning is also
# run on devices simulated in one process (no -t), which must match too.
#   the BERT layer tensor-parallel (Megatron: column-parallel Q, K, V and
#   FFN-in, row-parallel output projection and FFN-out, one all-reduce
#   each), the MLP data-parallel, resnet18 batch-split (and channel-split),
#   an MLP on a 2 x 2 mesh (data x tensor), a 4-stage pipeline of a BERT
#   stack (tests/spmd/bert_stack.ir), with and without micro-batches, on
#   x86-avx2 and npu-systolic
#   (whose devices each run the simulator, with host fallbacks).
# Tolerance: the compiled code's arithmetic (fused, reassociated) against the
# reference's: --check's per-op bound (1e-5 + 1e-4 |ref|) for the BERT layer
# and the MLP; resnet18's 18 layers: 1e-4 + 1e-3 |ref| (tests/models/compare.py,
# as models-check).  Skipped (77) without Open MPI's runtime (gdcc-spmd).
set -u
GDCC=${GDCC:-./gdcc}
SRCDIR=${SRCDIR:-.}
PY=/usr/bin/python3
if [ ! -x runtime/gdcc-spmd ]; then
	echo "spmd: SKIP: gdcc was built without MPI (install openmpi-bin and libopenmpi-dev, reconfigure)"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# check WHAT MODEL TARGET OPTIONS...: --check against the reference
check() {
	what=$1 model=$2 t=$3
	shift 3
	if "$GDCC" run "$model" -t "$t" "$@" --check >"$tmp/out" 2>"$tmp/err" && ! grep -q MISMATCH "$tmp/out"; then
		ok
		echo "ok: $what [$t]: $(head -1 "$tmp/out")"
	else
		bad "$what [$t]"
		sed 's/^/  | /' "$tmp/out" "$tmp/err" | head -30
	fi
	# the same partitioning on simulated devices
	if "$GDCC" run "$model" "$@" >"$tmp/out" 2>"$tmp/err" && grep -q "^spmd: " "$tmp/out" && ! grep -q MISMATCH "$tmp/out"; then
		ok
	else
		bad "$what [simulated]"
		sed 's/^/  | /' "$tmp/out" "$tmp/err" | head -30
	fi
}

# close WHAT MODEL TARGET OPTIONS...: the output against the reference's
# within compare.py's tolerance
close() {
	what=$1 model=$2 t=$3
	shift 3
	rm -f "$tmp/got.npy" "$tmp/ref.npy"
	if "$GDCC" run "$model" -t "$t" "$@" --output logits="$tmp/got.npy" >"$tmp/out" 2>"$tmp/err" &&
		"$GDCC" run "$model" --output logits="$tmp/ref.npy" >/dev/null 2>>"$tmp/err" &&
		cmp=$($PY "$SRCDIR/tests/models/compare.py" "$tmp/got.npy" "$tmp/ref.npy"); then
		ok
		echo "ok: $what [$t]: $cmp"
	else
		bad "$what [$t]: ${cmp:-the run failed}"
		sed 's/^/  | /' "$tmp/out" "$tmp/err" | head -30
	fi
}

E=$SRCDIR/examples
R=$SRCDIR/tests/spmd/resnet18.ir
for t in x86-avx2 npu-systolic; do
	check "bert_layer tensor-parallel, 2 devices" "$E/bert_layer.ir" "$t" --parallel=tensor --devices 2
	check "bert_layer tensor-parallel, 4 devices" "$E/bert_layer.ir" "$t" --parallel=tensor --devices 4
	check "mlp data-parallel, 4 devices" "$E/mlp.ir" "$t" --parallel=data --devices 4
	check "mlp on a 2 x 2 mesh" "$E/mlp.ir" "$t" --mesh dp=2,tp=2 --shard "x=[dp,_]" --shard "w1=[_,tp]" --shard "w2=[tp,_]"
	close "resnet18 batch-split, 4 devices" "$R" "$t" --parallel=data --devices 4
done
close "resnet18 channel-split, 2 devices" "$R" x86-avx2 --parallel=tensor --devices 2
# a 4-stage pipeline of a BERT stack (4 layers): one layer a device, the
# hidden state sent from stage to stage
for t in x86-avx2 npu-systolic; do
	check "bert_stack 4-stage pipeline" "$SRCDIR/tests/spmd/bert_stack.ir" "$t" --parallel=pipeline --devices 4
	# with micro-batches (GPipe): each stage's programs for half the batch,
	# run twice, the next stage on one while this one does the other
	check "bert_stack 4-stage pipeline, 2 micro-batches" "$SRCDIR/tests/spmd/bert_stack.ir" "$t" --parallel=pipeline --devices 4 --micro-batches 2
done
close "resnet18 2-stage pipeline, 4 micro-batches" "$R" x86-avx2 --parallel=pipeline --devices 2 --micro-batches 4
# a batch that does not divide, a model that mixes its batch: said, nothing run
printf 'graph g {\n  input x : f32[4, 2]\n  y = softmax(x, axis=0)\n  output y\n}\n' >"$tmp/mix.ir"
if "$GDCC" run "$tmp/mix.ir" -t x86-avx2 --parallel=pipeline --devices 2 --micro-batches 2 >"$tmp/out" 2>"$tmp/err"; then
	bad "micro-batches of a softmax over the batch: exit 0"
elif grep -q "mix.ir:3:7: error: --micro-batches: softmax does not keep the batch apart: its axis is the batch" "$tmp/err"; then
	ok
else
	bad "micro-batches of a softmax over the batch: no located error"
	sed 's/^/  | /' "$tmp/err"
fi
if "$GDCC" run "$SRCDIR/tests/spmd/bert_stack.ir" -t x86-avx2 --parallel=pipeline --devices 2 --micro-batches 3 >"$tmp/out" 2>"$tmp/err"; then
	bad "3 micro-batches of a batch of 2: exit 0"
elif grep -q "the batch (2, axis 0 of 'x') does not divide into 3" "$tmp/err"; then
	ok
else
	bad "3 micro-batches of a batch of 2: no message"
	sed 's/^/  | /' "$tmp/err"
fi
"$GDCC" --emit=sharding --parallel=pipeline --devices 4 "$SRCDIR/tests/spmd/bert_stack.ir" >"$tmp/out" 2>&1
if grep -q "# 3 transfers between stages, 393216 bytes in all" "$tmp/out" &&
	[ "$(grep -c '% of the work' "$tmp/out")" -eq 4 ] && grep -q "stage 1: l1.q0 .. l1.y, 25.0% of the work" "$tmp/out"; then
	ok
else
	bad "bert_stack's pipeline: not one layer a stage"
	sed 's/^/  | /' "$tmp/out" | grep -v constant | tail -12
fi
check "resnet_block channel-split, 2 devices" "$E/resnet_block.ir" x86-avx2 --parallel=tensor --devices 2

# --parallel=auto: the estimated choice runs; every alternative is run and
# measured next to its estimate
if "$GDCC" run "$R" -t x86-avx2 --parallel=auto --devices 4 >"$tmp/out" 2>"$tmp/err" &&
	grep -q "# chosen: data" "$tmp/out" && [ "$(grep -c '^spmd: --parallel=auto, .* estimated step .* measured compute' "$tmp/out")" -eq 3 ]; then
	ok
else
	bad "resnet18 --parallel=auto"
	sed 's/^/  | /' "$tmp/out" "$tmp/err" | grep -v '^  | *\[' | head -20
fi

# what each device runs: BERT's two all-reduces and nothing else over MPI
GDCC_KEEP_SPMD=1 TMPDIR=$tmp "$GDCC" run "$E/bert_layer.ir" -t x86-avx2 --parallel=tensor --devices 2 >/dev/null 2>&1
plan=$(ls "$tmp"/gdcc-spmd-*/r1.plan 2>/dev/null | head -1)
if [ -n "$plan" ] && [ "$(grep -c '^coll all_reduce ' "$plan")" -eq 2 ] &&
	[ "$(grep '^coll ' "$plan" | grep -vc ' shard_partial ')" -eq 2 ]; then
	ok
else
	bad "bert_layer's device plan: not two all-reduces"
	cat "$plan" 2>/dev/null | cut -c1-120 | sed 's/^/  | /'
fi

# a device that fails stops the run with its message
printf 'graph g {\n  input x : f32[4, 2]\n  y = relu(x)\n  output y\n}\n' >"$tmp/small.ir"
if GDCC_SPMD=/bin/false "$GDCC" run "$tmp/small.ir" -t x86-avx2 --parallel=data --devices 2 >"$tmp/out" 2>"$tmp/err"; then
	bad "a failing device run: exit 0"
elif grep -q "on 2 devices: the run failed" "$tmp/err"; then
	ok
else
	bad "a failing device run: no message"
	sed 's/^/  | /' "$tmp/err"
fi

echo "spmd: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
