#!/bin/sh
# gdcc's x86-avx2 code against PyTorch eager (resnet18, mobilenet_v2, a ResNet
# basic block, an MLP, a BERT-base layer), one thread, pinned to one core, as
# ratios measured in the same process (pytorch_bench.py; its --help for the
# options: --gdcc-flags=..., --compare=-O0,-O2, --models=..., --seconds=...).
# usage: bench/pytorch.sh [GDCC] [pytorch_bench.py options]
set -eu
GDCC=./gdcc
case ${1:-} in ""|-*) ;; *) GDCC=$1; shift ;; esac
here=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
if ! $PY -c 'import torch, torchvision, onnx' 2>/dev/null; then
	echo "pytorch.sh: needs python3-torch, python3-torchvision and python3-onnx (Debian's /usr/bin/python3)" >&2
	exit 77
fi
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
fam=$(grep -m1 'cpu family' /proc/cpuinfo | sed 's/.*: //')
mod=$(grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | sed 's/.*: //')
isa=$(grep -o -w 'avx2\|avx512f\|fma\|amx_tile' /proc/cpuinfo | sort -u | tr '\n' ' ')
echo "CPU: $cpu (family $fam, model $mod); flags: $isa"
pin=""
if command -v taskset >/dev/null; then pin="taskset -c 1"; else echo "pytorch.sh: no taskset, not pinned" >&2; fi
exec $pin $PY "$here/pytorch_bench.py" --gdcc="$GDCC" "$@"
