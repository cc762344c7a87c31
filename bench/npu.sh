#!/bin/sh
# npu-systolic in its simulator: the 3x3 convolutions of ResNet-18's basic
# blocks (stage 1 is examples/resnet_block.ir's c1 and c2) and a 512^3 GEMM,
# compiled by gdcc and run by npusim at array sizes 16x16 and 32x32, weight-
# and output-stationary.  The peer is the array's own peak in the same run:
# utilization = MACs / (cycles x n^2), i.e. ideal cycles / simulated cycles.
# Every run is also checked against the reference interpreter.
#
#   sh bench/npu.sh [GDCC]       (from the build folder: sh ../bench/npu.sh ./gdcc)
set -eu
GDCC=${1:-./gdcc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

conv() { # NAME C HW  (useful MACs: C * C * 9 * HW * HW)
	cat >"$tmp/$1.ir" <<IR
graph $1 {
  input x : f32[1, $2, $3, $3]
  const w : f32[$2, $2, 3, 3] = normal(seed=1, mean=0, std=0.05)
  y = conv(x, w, kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])
  output y
}
IR
}
conv stage1_64x56 64 56
conv stage2_128x28 128 28
conv stage3_256x14 256 14
conv stage4_512x7 512 7
cat >"$tmp/gemm512.ir" <<'IR'
graph gemm512 {
  input a : f32[512, 512]
  const b : f32[512, 512] = normal(seed=1, mean=0, std=0.05)
  y = matmul(a, b)
  output y
}
IR

# MACs: what the array performed (edge tiles padded to n); util: of the array's
# peak over the whole run; useful: the model's own MACs (no padding) likewise;
# busy: while the array was working; dma: cycles the array waited for DMA.
printf '%-15s %-6s %-19s %11s %10s %9s %6s %7s %6s %8s %10s\n' kernel array dataflow MACs cycles ideal util useful busy dma core_stall
for m in stage1_64x56 stage2_128x28 stage3_256x14 stage4_512x7 gemm512; do
	for n in 16 32; do
		for df in weight_stationary output_stationary; do
			"$GDCC" run "$tmp/$m.ir" -t npu-systolic --param array_rows=$n --param array_cols=$n --param dataflow=$df \
				--check --seed 1 --report="$tmp/r.json" >"$tmp/out" 2>&1 || { cat "$tmp/out"; exit 1; }
			/usr/bin/python3 - "$tmp/r.json" "$m" "$n" "$df" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
s = r["simulator"][0]
n = int(sys.argv[3])
m = re.match(r"stage\d_(\d+)x(\d+)", sys.argv[2])
useful = int(m.group(1)) ** 2 * 9 * int(m.group(2)) ** 2 if m else 512 ** 3
ideal = s["macs"] / (n * n)
st = s["stalls"]
print("%-15s %-6s %-19s %11d %10d %9d %6.3f %7.3f %6.3f %8d %10d" % (
    sys.argv[2], "%dx%d" % (n, n), sys.argv[4], s["macs"], s["cycles"], ideal, s["pe_utilization"],
    useful / (s["cycles"] * n * n), s["array_utilization_busy"], st["dma"],
    st["dependency"] + st["queue_full"] + st["structural"]))
PY
		done
	done
done
