#!/bin/sh
# -O0 against -O2 (the default): every model in tests/backend and every
# example, on every target (riscv-rvv under qemu at VLEN 256, npu-systolic in
# its simulator with the host for its fallback nodes), compiled and run at
# both levels with the same inputs.  Each run is checked against the
# reference interpreter (run --check), and the two levels' outputs are
# compared with each other under the backend's tolerance (|a - b| <= 1e-5 +
# 1e-4 |b|, NaN only against NaN): the graph passes may reassociate floating
# point (docs/design.md), never change a result beyond that.  -O1 is run on
# the examples too.  Every program starts with its workspace and outputs
# filled with 0xff (GDCC_RUN_FILL, runtime/harness.c and npusim), not zeros:
# a memory plan that let two live values share bytes, or a kernel that read
# what it had not written, shows as a mismatch.
#   OPT_TARGETS  default "x86-avx2 riscv-rvv npu-systolic"
set -u
GDCC=${GDCC:-./gdcc}
SRCDIR=${SRCDIR:-.}
PY=${PYTHON_NUMPY:-/usr/bin/python3}
[ -x "$PY" ] || PY=/usr/bin/python3
if ! "$PY" -c 'import numpy' 2>/dev/null; then
	echo "opt_levels: SKIP: numpy is not importable by $PY (apt-get install python3-numpy)"
	exit 77
fi
targets=${OPT_TARGETS:-"x86-avx2 riscv-rvv npu-systolic"}
if ! command -v qemu-riscv64 >/dev/null 2>&1 || ! command -v riscv64-linux-gnu-gcc >/dev/null 2>&1; then
	case $targets in *riscv-rvv*) echo "opt_levels: riscv-rvv not run: no qemu-riscv64 / riscv64-linux-gnu-gcc" ;; esac
	targets=$(echo "$targets" | sed 's/riscv-rvv//')
fi
GDCC_RUN_FILL=0xff
export GDCC_RUN_FILL
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

same() { # DIR_A DIR_B: every .npy of A matches B's
	"$PY" - "$1" "$2" <<'PY'
import os, sys
import numpy as np
a, b = sys.argv[1], sys.argv[2]
names = sorted(f for f in os.listdir(a) if f.endswith(".npy"))
assert names and names == sorted(f for f in os.listdir(b) if f.endswith(".npy")), (names, os.listdir(b))
for f in names:
    x, y = np.load(os.path.join(a, f)), np.load(os.path.join(b, f))
    assert x.dtype == y.dtype and x.shape == y.shape, (f, x.dtype, x.shape, y.dtype, y.shape)
    if x.dtype.kind != "f":
        assert np.array_equal(x, y), f
        continue
    assert (np.isnan(x) == np.isnan(y)).all(), f + ": NaN in one level only"
    inf = np.isinf(x) | np.isinf(y)
    assert (x[inf] == y[inf]).all(), f + ": an infinity in one level only"
    fin = ~(np.isnan(x) | inf)
    d = np.abs(x.astype(np.float64) - y.astype(np.float64))[fin]
    tol = (1e-5 + 1e-4 * np.abs(y.astype(np.float64)))[fin]
    assert (d <= tol).all(), "%s: max |O0 - O2| %.3g" % (f, d.max() if d.size else 0)
PY
}

for t in $targets; do
	set --
	case $t in riscv-rvv) set -- --vlen 256 ;; esac
	for m in "$SRCDIR"/tests/backend/*.ir "$SRCDIR"/examples/*.ir; do
		name=$(basename "$m" .ir)
		# (the big examples on the simulated targets: mlp only, as backend.sh does)
		case $t:$name in riscv-rvv:resnet_block | riscv-rvv:bert_layer) continue ;; esac
		levels="0 2"
		case $m in */examples/*) levels="0 1 2" ;; esac
		good=1
		for o in $levels; do
			mkdir -p "$tmp/$t.$name.O$o"
			if "$GDCC" run "$m" -t "$t" "$@" -O$o --check --seed 9 --output-dir "$tmp/$t.$name.O$o" >"$tmp/out" 2>&1; then ok; else
				bad "$name on $t at -O$o: run --check"; cat "$tmp/out"; good=0; fi
		done
		[ $good = 1 ] || continue
		for o in $levels; do
			[ $o = 2 ] && continue
			if same "$tmp/$t.$name.O$o" "$tmp/$t.$name.O2" >"$tmp/out" 2>&1; then ok; else
				bad "$name on $t: -O$o and -O2 differ"; cat "$tmp/out"; fi
		done
	done
done
echo "opt_levels: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
