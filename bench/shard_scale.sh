#!/bin/sh
# The sharding cost model on paper, 8 to 1,024 devices (issue 18): the
# predicted step time, speedup and efficiency of data, tensor and pipeline
# parallelism for a 12-layer BERT-base encoder stack (sequence 128, global
# batch 1,024) and resnet18 (224 x 224, global batch 1,024), from
# `gdcc --emit=sharding -t TARGET --parallel=P --devices N` (the model's
# shapes only: nothing runs).  Assumptions: each device computes at the
# .md's cost model and clock (x86-avx2 by default: one core at 3 GHz),
# links of --link-gbps (100) and --link-latency-us (5), ring collectives,
# no overlap of compute and communication, a pipeline without micro-batches
# (its stages one after the other) and with 4 per stage (GPipe: M + N - 1
# slots of the slowest stage), the batch split evenly or not at all.
# (Shapes this large pass the tensor limits with --max-*-bytes=1T: the
# limits guard what runs; nothing is allocated here.)
#   usage: bench/shard_scale.sh [GDCC] [TARGET]   (markdown table on stdout)
set -eu
GDCC=${1:-build/gdcc}
T=${2:-x86-avx2}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$top/tests/spmd/gen_bert_stack.py" 12 1024 128 768 12 3072 >"$tmp/bert.ir"
python3 "$top/tests/spmd/gen_resnet18.py" 1024 224 >"$tmp/resnet18.ir"
echo "| model | devices | strategy | compute ms | communication ms | step ms | speedup | efficiency |"
echo "|---|---:|---|---:|---:|---:|---:|---:|"
for m in bert resnet18; do
	for n in 8 16 64 256 1024; do
		mb=$((4 * n))
		[ $mb -gt 1024 ] && mb=1024
		for p in data tensor pipeline "pipeline --micro-batches $mb"; do
			line=$("$GDCC" --emit=sharding -t "$T" --parallel=$p --devices $n --max-workspace-bytes=1T --max-tensor-bytes=1T "$tmp/$m.ir" 2>/dev/null | grep '^# estimate on') || {
				echo "| $m | $n | $p | - | - | - | - | - |"
				continue
			}
			p=$(echo "$p" | sed 's/ --micro-batches / + micro-batches /')
			echo "$line" | sed -E "s/.*compute ([0-9.]+) ms, communication ([0-9.]+) ms, step ([0-9.]+) ms; one device [0-9.]+ ms: speedup ([0-9.]+)x on [0-9]+ devices \\(efficiency ([0-9]+)%\\).*/| $m | $n | $p | \\1 | \\2 | \\3 | \\4 | \\5% |/"
		done
	done
done
