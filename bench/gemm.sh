#!/bin/sh
# gdcc's matmul against OpenBLAS sgemm (BASELINES.md shapes), one thread,
# pinned to one core, as a ratio measured in the same process.  Needs
# libopenblas-dev.  usage: bench/gemm.sh [GDCC] [M,N,K ...]
set -eu
GDCC=${1:-./gdcc}
[ $# -gt 0 ] && shift
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shapes=${*:-"256,256,256 512,512,512 1024,1024,1024 128,3072,768 3136,64,576 64,512,784"}
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
pin=""
command -v taskset >/dev/null && pin="taskset -c 1"
for s in $shapes; do
	M=${s%%,*}; rest=${s#*,}; N=${rest%%,*}; K=${rest#*,}
	cat >"$tmp/mm.ir" <<IR
graph mm {
  input a : f32[$M, $K]
  input b : f32[$K, $N]
  y = matmul(a, b)
  output y
}
IR
	"$GDCC" -S -t x86-avx2 "$tmp/mm.ir" -o "$tmp/mm.s"
	ws=$(sed -n 's/.*"workspace": {"arg": [0-9]*, "bytes": \([0-9]*\)}.*/\1/p' "$tmp/mm.s.json")
	cc -O2 -o "$tmp/bench" "$here/bench_gemm.c" "$tmp/mm.s" -lopenblas -lm
	$pin "$tmp/bench" "$M" "$N" "$K" "${ws:-0}"
done
