#!/bin/sh
# Compile time: each model compiled for x86-avx2 (TARGET=x86-avx512: that target) to an object file (`gdcc -c`;
# `-S` plus the .md's assembler where this gdcc has no -c), median of 5 runs,
# wall-clock seconds of the whole command, one pinned thread; also the output's size.
# Models: the examples and every .onnx file in DIR (bench/pytorch.sh --workdir=DIR
# --keep leaves resnet18, mobilenet_v2, the block, the MLP and the BERT layer there).
# usage: bench/compile.sh [GDCC] [DIR]   (BENCH_CORE=N: pin to core N, default 1)
set -eu
GDCC=${1:-./gdcc}
DIR=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pin=""
command -v taskset >/dev/null && pin="taskset -c ${BENCH_CORE:-1}"
cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
echo "CPU: $cpu"
if "$GDCC" --help 2>&1 | grep -q -- '^  -c'; then mode=-c; else mode=-S; fi
now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
models="$here/../examples/*.ir"
[ -n "$DIR" ] && models="$models $DIR/*.onnx"
printf '%-20s %-4s %10s %12s\n' model mode seconds "object B"
for m in $models; do
	[ -f "$m" ] || continue
	name=$(basename "$m")
	: >"$tmp/t"
	for i in 1 2 3 4 5; do
		rm -f "$tmp/out"*
		t0=$(now)
		if [ $mode = -c ]; then
			$pin "$GDCC" -c -t "${TARGET:-x86-avx2}" "$m" -o "$tmp/out.o" >/dev/null
		else
			$pin "$GDCC" -S -t "${TARGET:-x86-avx2}" "$m" -o "$tmp/out.s" >/dev/null && cc -c -o "$tmp/out.o" "$tmp/out.s"
		fi
		t1=$(now)
		echo $(( (t1 - t0) / 1000000 )) >>"$tmp/t"
	done
	ms=$(median <"$tmp/t")
	bytes=$(cat "$tmp"/out.o | wc -c)
	printf '%-20s %-4s %10s %12s\n' "$name" "$mode" "$(awk "BEGIN {printf \"%.3f\", $ms / 1000}")" "$bytes"
done
