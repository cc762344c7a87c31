#!/bin/sh
# Batched matmul (attention's shapes) for x86-avx2 (TARGET=x86-avx512: that target): one batched kernel
# against B calls of the 2-D kernel of one batch and B calls of OpenBLAS
# (bench_batched.c), NN and NT (b given as transpose(k): the kernel reads
# k through it).  usage: bench/batched.sh [GDCC] [B,M,N,K ...]
set -eu
GDCC=${1:-./gdcc}
[ $# -gt 0 ] && shift
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shapes=${*:-"12,128,128,64 12,128,64,128 8,197,197,64"}
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
pin=""
command -v taskset >/dev/null && pin="taskset -c 1"
ws() { sed -n 's/.*"workspace": {"arg": [0-9]*, "bytes": \([0-9]*\)}.*/\1/p' "$1"; }
echo "| batches x M×N×K | layout | batched GFLOP/s | 2-D x B GFLOP/s | OpenBLAS x B GFLOP/s | batched / 2-D time | ratio to OpenBLAS |"
echo "|---|---|---|---|---|---|---|"
for s in $shapes; do
	B=${s%%,*}; r=${s#*,}; M=${r%%,*}; r=${r#*,}; N=${r%%,*}; K=${r#*,}
	for tb in 0 1; do
		if [ $tb = 1 ]; then
			bdecl="input b : f32[$B, $N, $K]"; tr="  bt = transpose(b, perm=[0, 2, 1])"; bb=bt
			odecl="input b2 : f32[$N, $K]"; one="y = gemm(a2, b2, trans_b=1)"
		else
			bdecl="input b : f32[$B, $K, $N]"; tr=""; bb=b
			odecl="input b2 : f32[$K, $N]"; one="y = gemm(a2, b2)"
		fi
		printf 'graph bat {\n  input a : f32[%s, %s, %s]\n  %s\n%s\n  y = matmul(a, %s)\n  output y\n}\n' "$B" "$M" "$K" "$bdecl" "$tr" "$bb" >"$tmp/bat.ir"
		printf 'graph one {\n  input a2 : f32[%s, %s]\n  %s\n  %s\n  output y\n}\n' "$M" "$K" "$odecl" "$one" >"$tmp/one.ir"
		"$GDCC" -S -t "${TARGET:-x86-avx2}" "$tmp/bat.ir" -o "$tmp/bat.s"
		"$GDCC" -S -t "${TARGET:-x86-avx2}" "$tmp/one.ir" -o "$tmp/one.s"
		cc -c -o "$tmp/bat.o" "$tmp/bat.s" && cc -c -o "$tmp/one.o" "$tmp/one.s"
		objcopy --redefine-sym gdcc_entry=bat_entry "$tmp/bat.o"
		objcopy --redefine-sym gdcc_entry=one_entry "$tmp/one.o"
		cc -O2 -o "$tmp/bench" "$here/bench_batched.c" "$tmp/bat.o" "$tmp/one.o" -lopenblas
		$pin "$tmp/bench" "$B" "$M" "$N" "$K" $tb "$(ws "$tmp/bat.s.json")" "$(ws "$tmp/one.s.json")"
	done
done
