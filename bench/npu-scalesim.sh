#!/bin/sh
# npu-systolic against SCALE-Sim (scale-sim-v2) on the ResNet-50 layers of
# ../shared/BASELINES.md: each layer as a one-node model (batch 1, no
# padding), compiled by gdcc and run by its simulator (npusim) at 32 x 32,
# weight- and output-stationary, with DMA and scratchpad made generous
# (SCALE-Sim assumes stall-free memory), and at the .md's default 16 x 16
# (with the same generous memory).
# Prints gdcc's cycles next to SCALE-Sim's and their ratio (below 1: fewer
# cycles than SCALE-Sim).  Every run is also checked against the reference
# interpreter (--check).  The SCALE-Sim figures are BASELINES.md's (32 x 32,
# 64 KiB SRAMs, stall-free bandwidth); there are none at 16 x 16.
#
#   sh bench/npu-scalesim.sh [GDCC] [LAYER ...]   (from the build folder:
#   sh ../bench/npu-scalesim.sh ./gdcc; LAYERS: conv1 cb2a_2 cb2a_3 cb3a_2
#   cb4a_2 cb5a_2 fc6)
set -eu
GDCC=${1:-./gdcc}
[ $# -gt 0 ] && shift
layers=${*:-"conv1 cb2a_2 cb2a_3 cb3a_2 cb4a_2 cb5a_2 fc6"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

conv() { # NAME C HW M K STRIDE  (useful MACs: M C K^2 OH OW into $tmp/NAME.macs)
	oh=$((($3 - $5) / $6 + 1))
	echo $(($4 * $2 * $5 * $5 * oh * oh)) >"$tmp/$1.macs"
	cat >"$tmp/$1.ir" <<IR
graph $1 {
  input x : f32[1, $2, $3, $3]
  const w : f32[$4, $2, $5, $5] = normal(seed=1, mean=0, std=0.05)
  y = conv(x, w, kernel_shape=[$5, $5], strides=[$6, $6])
  output y
}
IR
}
conv conv1 3 224 64 7 2
conv cb2a_2 64 56 64 3 1
conv cb2a_3 64 56 256 1 1
conv cb3a_2 128 28 128 3 1
conv cb4a_2 256 14 256 3 1
conv cb5a_2 512 7 512 3 1
echo $((2048 * 1000)) >"$tmp/fc6.macs"
cat >"$tmp/fc6.ir" <<'IR'
graph fc6 {
  input x : f32[1, 2048]
  const w : f32[2048, 1000] = normal(seed=1, mean=0, std=0.05)
  y = matmul(x, w)
  output y
}
IR

# SCALE-Sim's cycles at 32 x 32 (BASELINES.md): WS OS
scalesim() {
	case $1 in
	conv1) echo "121939 158421" ;;
	cb2a_2) echo "108359 117391" ;;
	cb2a_3) echo "51679 98783" ;;
	cb3a_2) echo "110879 106831" ;;
	cb4a_2) echo "137087 94639" ;;
	cb5a_2) echo "274175 74719" ;;
	fc6) echo "194559 67519" ;;
	esac
}

cycles() { # LAYER N DATAFLOW -> cycles and useful PE utilization (the layer's
	# own MACs over cycles x N^2, no padding counted), or the failure
	if ! "$GDCC" run "$tmp/$1.ir" -t npu-systolic --param array_rows="$2" --param array_cols="$2" --param dataflow="$3" \
		--param dma_bytes_per_cycle=1024 --param scratchpad_bytes=4194304 \
		--check --seed 1 --report="$tmp/r.json" >"$tmp/out" 2>&1; then
		echo "failed: $(tail -1 "$tmp/out")"
		return
	fi
	/usr/bin/python3 - "$tmp/r.json" "$(cat "$tmp/$1.macs")" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = sum(s["cycles"] for s in r["simulator"])
n = int(sys.argv[3])
print("%d %.3f" % (c, int(sys.argv[2]) / (c * n * n) if c else 0))
PY
}

echo "(util: the layer's own MACs / (cycles x array PEs); ratio: gdcc cycles / SCALE-Sim cycles)"
echo "| layer | SCALE-Sim WS | gdcc WS (util) | ratio | SCALE-Sim OS | gdcc OS (util) | ratio | gdcc 16×16 WS | gdcc 16×16 OS |"
echo "|---|---|---|---|---|---|---|---|---|"
for l in $layers; do
	set -- $(scalesim "$l")
	ws=$1 os=$2
	row="| $l | $ws"
	for df in weight_stationary output_stationary; do
		set -- $(cycles "$l" 32 $df)
		if [ "$1" = failed: ]; then
			row="$row | $* | –"
		else
			ref=$ws; [ $df = output_stationary ] && ref=$os
			row="$row | $1 ($2) | $(awk "BEGIN {printf \"%.2f\", $1 / $ref}")"
		fi
		[ $df = weight_stationary ] && row="$row | $os"
	done
	for df in weight_stationary output_stationary; do
		set -- $(cycles "$l" 16 $df)
		row="$row | $1"
	done
	echo "$row |"
done
