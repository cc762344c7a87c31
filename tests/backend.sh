#!/bin/sh
# The x86-avx2 backend end to end: each model in tests/backend and each
# example compiles (-S, with its manifest), assembles, links, runs natively
# and matches the reference interpreter (run --check); then again with the
# allocator limited to 4 registers per pool (GDCC_MAX_REGS=4), which forces
# spill code everywhere, and the frame must show the spill slots.
set -u
GDCC=${GDCC:-./gdcc}
SRCDIR=${SRCDIR:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
if ! command -v cc >/dev/null 2>&1; then
	echo "FAIL: no cc to assemble and link with (build-essential)"
	exit 1
fi
for m in "$SRCDIR"/tests/backend/*.ir "$SRCDIR"/examples/*.ir; do
	name=$(basename "$m" .ir)
	if "$GDCC" -S -t x86-avx2 "$m" -o "$tmp/$name.s" 2>"$tmp/err"; then ok; else bad "$name: -S"; cat "$tmp/err"; continue; fi
	grep -q '"schema": "gdcc.manifest"' "$tmp/$name.s.json" && ok || bad "$name: no manifest"
	if cc -c -o "$tmp/$name.o" "$tmp/$name.s" 2>"$tmp/err"; then ok; else bad "$name: does not assemble"; cat "$tmp/err"; fi
	if "$GDCC" run "$m" -t x86-avx2 --check --seed 3 >"$tmp/out" 2>&1; then ok; else bad "$name: run --check"; cat "$tmp/out"; fi
	case $name in resnet_block|bert_layer) continue ;; esac # big: the spill run is for the small ones
	if GDCC_MAX_REGS=4 "$GDCC" run "$m" -t x86-avx2 --check --seed 4 >"$tmp/out" 2>&1; then ok; else
		bad "$name: run --check with 4 registers"; cat "$tmp/out"; fi
	GDCC_MAX_REGS=4 "$GDCC" -S -t x86-avx2 "$m" -o "$tmp/$name.4.s" 2>/dev/null
	frame=$(sed -n 's/.*"frame_bytes": \([0-9]*\).*/\1/p' "$tmp/$name.4.s.json")
	[ "${frame:-0}" -gt 0 ] && ok || bad "$name: no spill slots with 4 registers"
done
# riscv-rvv under qemu at three vector lengths (when the cross tools exist;
# conformance-rvv.sh reports the skip otherwise).
if command -v riscv64-linux-gnu-gcc >/dev/null 2>&1 && command -v qemu-riscv64 >/dev/null 2>&1; then
	for m in "$SRCDIR"/tests/backend/*.ir "$SRCDIR"/examples/mlp.ir; do
		name=$(basename "$m" .ir)
		for v in 128 256 512; do
			if "$GDCC" run "$m" -t riscv-rvv --vlen $v --check --seed 5 >"$tmp/out" 2>&1; then ok; else
				bad "$name: riscv-rvv at VLEN $v"; cat "$tmp/out"; fi
		done
		if GDCC_MAX_REGS=4 "$GDCC" run "$m" -t riscv-rvv --vlen 256 --check --seed 6 >"$tmp/out" 2>&1; then ok; else
			bad "$name: riscv-rvv with 4 registers"; cat "$tmp/out"; fi
	done
	if "$GDCC" -S -t riscv-rvv "$SRCDIR/examples/bert_layer.ir" -o "$tmp/bert.s" 2>"$tmp/err" &&
		riscv64-linux-gnu-gcc -march=rv64gcv -c -o "$tmp/bert.o" "$tmp/bert.s" 2>>"$tmp/err"; then ok; else
		bad "bert_layer: riscv-rvv -S does not assemble"; cat "$tmp/err"; fi
fi

# The report and the manifest are JSON with their schema names and figures.
if "$GDCC" -S -t x86-avx2 "$SRCDIR/examples/mlp.ir" -o "$tmp/r.s" --report="$tmp/r.json" 2>"$tmp/err"; then ok; else bad "--report"; cat "$tmp/err"; fi
if /usr/bin/python3 - "$tmp/r.json" "$tmp/r.s.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); m = json.load(open(sys.argv[2]))
assert r["schema"] == "gdcc.report" and r["schema_version"] == 1
assert [p["name"] for p in r["passes"]] == ["parse+verify", "legality", "lower", "select", "allocate"]
assert all(p["seconds"] >= 0 for p in r["passes"])
ops = [n["op"] for n in r["nodes"]]
assert ops == ["matmul", "add", "relu", "gemm", "relu", "gemm", "softmax"], ops
assert r["nodes"][0]["estimated_cycles"] > 0 and r["code"]["instructions"] > 0 and r["code"]["bytes"] > 0
assert m["schema"] == "gdcc.manifest" and m["entry"] == "gdcc_entry"
assert [i["name"] for i in m["inputs"]] == ["x"] and m["inputs"][0]["shape"] == [64, 784]
assert [o["name"] for o in m["outputs"]] == ["logits", "probs"] and m["outputs"][1]["arg"] == 2
assert m["content_hash"] == r["content_hash"] and len(m["content_hash"]) == 16
PY
then ok; else bad "report or manifest content"; fi

# A run-time error in compiled code: an index out of range stops the model
# (the entry returns 1), gdcc reports it and writes no output.
cat >"$tmp/oob.ir" <<'IR'
graph oob {
  input x : f32[4, 5]
  const i : i64[2] = [1, 5]
  a = gather(x, i, axis=1)
  output a
}
IR
"$GDCC" run "$tmp/oob.ir" -t x86-avx2 --output a="$tmp/oob.npy" >"$tmp/out" 2>&1
st=$?
[ $st -eq 3 ] && ok || bad "out-of-range index: exit $st, expected 3"
grep -q "an index out of range" "$tmp/out" && ok || { bad "out-of-range index: no message"; cat "$tmp/out"; }
[ -e "$tmp/oob.npy" ] && bad "out-of-range index: an output was written" || ok

echo "backend: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
