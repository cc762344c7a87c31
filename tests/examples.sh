#!/bin/sh
# The bundled examples check and run with the reference interpreter, their
# outputs load in numpy with the right dtypes and shapes, and the MLP agrees
# with an independent numpy computation (tests/check_mlp.py).
# Needs Debian's python3-numpy (README); without it the test is reported as
# SKIPPED (exit 77), never as passed.
set -u
GDCC=${GDCC:-./gdcc}
SRCDIR=${SRCDIR:-.}
PY=${PYTHON_NUMPY:-/usr/bin/python3}
[ -x "$PY" ] || PY=/usr/bin/python3
if ! "$PY" -c 'import numpy' 2>/dev/null; then
	echo "SKIP: numpy is not importable by $PY (apt-get install python3-numpy)"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

check() { # MODEL OUTPUT SHAPE
	"$PY" - "$tmp/$1/$2.npy" "$3" <<'PY' && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: $1 $2"; }
import sys
import numpy as np
a = np.load(sys.argv[1])
want = tuple(int(d) for d in sys.argv[2].split(","))
assert a.dtype == np.float32, a.dtype
assert a.shape == want, (a.shape, want)
assert np.isfinite(a).all(), "non-finite values"
assert a.std() > 0, "constant output"
PY
}

for m in mlp resnet_block bert_layer; do
	mkdir -p "$tmp/$m"
	if "$GDCC" run "$SRCDIR/examples/$m.ir" --seed 1 --output-dir "$tmp/$m" >"$tmp/$m.log" 2>&1; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: gdcc run $m"
		cat "$tmp/$m.log"
	fi
done
check mlp logits 64,10
check mlp probs 64,10
check resnet_block y 1,64,56,56
check bert_layer y 1,128,768
if "$PY" "$SRCDIR/tests/check_mlp.py" 1 "$tmp/mlp"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: mlp vs numpy"; fi

echo "examples: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
