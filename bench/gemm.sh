#!/bin/sh
# gdcc's GEMM against OpenBLAS sgemm, one thread, pinned to one core, as a
# ratio measured in the same process (bench_gemm.c): y = gemm(a, b,
# trans_a, trans_b) with both operands inputs, every shape under every
# layout given.  Prints a Markdown table (GFLOP/s, the ratio, gdcc's share
# of the target's peak_gflops_1core).  Needs libopenblas-dev.
# usage: bench/gemm.sh [GDCC] [M,N,K ...]
#   LAYOUTS="NN NT TN TT" (the default), TRIALS=9, GDCC_FLAGS=..., TARGET=x86-avx512
#   (the last column: the kernel OpenBLAS chose for this CPU; OPENBLAS_CORETYPE=SkylakeX
#   makes it run its AVX-512 one where it would not pick it, as on AMD Zen 4/5)
set -eu
GDCC=${1:-./gdcc}
[ $# -gt 0 ] && shift
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shapes=${*:-"256,256,256 512,512,512 1024,1024,1024 2048,2048,2048 128,3072,768 3136,64,576 64,512,784"}
layouts=${LAYOUTS:-"NN NT TN TT"}
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
pin=""
command -v taskset >/dev/null && pin="taskset -c 1"
peak=$(sed -n 's/^param peak_gflops_1core *= *\([0-9.]*\).*/\1/p' "$here/../md/${TARGET:-x86-avx2}.md")
# the peak column: this core's FMA peak at the target's vector width
reg=ymm
grep -q '^ *vector fixed 512' "$here/../md/${TARGET:-x86-avx2}.md" && reg=zmm
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'); $(grep -o -w 'avx512f\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')"
echo "(target ${TARGET:-x86-avx2}; .md peak_gflops_1core: $peak; the peak column is this core's $reg FMA peak, measured in each run)"
echo "| M×N×K | layout | gdcc GFLOP/s | OpenBLAS GFLOP/s | ratio (medians) | ratio (bests) | gdcc / $reg peak | $reg peak | max diff | OpenBLAS kernel |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for s in $shapes; do
	M=${s%%,*}; rest=${s#*,}; N=${rest%%,*}; K=${rest#*,}
	for l in $layouts; do
		case $l in ?T) tb=1; bsh="$N, $K" ;; *) tb=0; bsh="$K, $N" ;; esac
		case $l in T?) ta=1; ash="$K, $M" ;; *) ta=0; ash="$M, $K" ;; esac
		cat >"$tmp/mm.ir" <<IR
graph mm {
  input a : f32[$ash]
  input b : f32[$bsh]
  y = gemm(a, b, trans_a=$ta, trans_b=$tb)
  output y
}
IR
		# shellcheck disable=SC2086
		"$GDCC" -S -t "${TARGET:-x86-avx2}" ${GDCC_FLAGS:-} "$tmp/mm.ir" -o "$tmp/mm.s"
		ws=$(sed -n 's/.*"workspace": {"arg": [0-9]*, "bytes": \([0-9]*\)}.*/\1/p' "$tmp/mm.s.json")
		cc -O2 -o "$tmp/bench" "$here/bench_gemm.c" "$tmp/mm.s" -lopenblas -lm
		$pin "$tmp/bench" "$M" "$N" "$K" "${ws:-0}" $ta $tb $reg "${TRIALS:-9}" || echo "(mismatch above)"
	done
done
