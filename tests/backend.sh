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
	# (one flat loop over two buffers: nothing to spill even with 4 registers)
	case $name in fuse_cse_relu) continue ;; esac
	# (copies and a relu: with constants read RIP-relatively, no address
	# made in a register, 4 registers hold them; 3 do not)
	regs=4
	case $name in outputs_copied) regs=3 ;; esac
	if GDCC_MAX_REGS=$regs "$GDCC" run "$m" -t x86-avx2 --check --seed 4 >"$tmp/out" 2>&1; then ok; else
		bad "$name: run --check with $regs registers"; cat "$tmp/out"; fi
	GDCC_MAX_REGS=$regs "$GDCC" -S -t x86-avx2 "$m" -o "$tmp/$name.4.s" 2>/dev/null
	frame=$(sed -n 's/.*"frame_bytes": \([0-9]*\).*/\1/p' "$tmp/$name.4.s.json")
	[ "${frame:-0}" -gt 0 ] && ok || bad "$name: no spill slots with $regs registers"
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
# (at -O0 the nodes are the model's own; at -O2, the default, every pass is
# listed with what it did, and the nodes are those after the graph passes)
if "$GDCC" -S -t x86-avx2 "$SRCDIR/examples/mlp.ir" -o "$tmp/r.s" --report="$tmp/r.json" 2>"$tmp/err" &&
	"$GDCC" -S -O0 -t x86-avx2 "$SRCDIR/examples/mlp.ir" -o "$tmp/r0.s" --report="$tmp/r0.json" 2>"$tmp/err"; then ok; else bad "--report"; cat "$tmp/err"; fi
if /usr/bin/python3 - "$tmp/r.json" "$tmp/r.s.json" "$tmp/r0.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); m = json.load(open(sys.argv[2])); r0 = json.load(open(sys.argv[3]))
assert r["schema"] == "gdcc.report" and r["schema_version"] == 1
names = ["parse+verify", "canonicalize", "fold", "bnfold", "cse", "dce", "fuse",
         "legalize", "plan-memory", "lower", "select", "allocate", "emit"]
assert [p["name"] for p in r["passes"]] == names, [p["name"] for p in r["passes"]]
assert [p["name"] for p in r0["passes"]] == names
assert all(p["seconds"] >= 0 and p["ran"] for p in r["passes"])
# -O0 runs no graph pass, and says so
assert [p["name"] for p in r0["passes"] if not p["ran"]] == names[1:7], r0["passes"]
assert all(p.get("skipped") == "-O0" for p in r0["passes"][1:7])
graph = [p for p in r["passes"] if "rewrites" in p]
assert graph[0]["nodes_before"] == r0["passes"][1]["nodes_after"]
assert all(a["nodes_after"] == b["nodes_before"] for a, b in zip(graph, graph[1:]))
lower = [p for p in r["passes"] if p["name"] == "lower"][0]
assert lower["kernels"] > 0 and "peak_rss_kib" in lower
ops = [n["op"] for n in r0["nodes"]]
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

# The GEMMs with B^T's copy by scalar loads and stores, as on a target without
# lane permutations (x86-avx2 transposes tiles in registers otherwise).
for m in "$SRCDIR"/tests/backend/gemm_*.ir "$SRCDIR"/tests/backend/matmul_gemm.ir; do
	name=$(basename "$m" .ir)
	if GDCC_NO_LANE_PERMUTES=1 "$GDCC" run "$m" -t x86-avx2 --check --seed 9 >"$tmp/out" 2>&1; then ok; else
		bad "$name: run --check without lane permutations"; cat "$tmp/out"; fi
done

# ---- npu-systolic: the NPU part in the simulator, the fallback on the host ----
for m in "$SRCDIR"/tests/backend/*.ir "$SRCDIR"/examples/*.ir; do
	name=$(basename "$m" .ir)
	if "$GDCC" run "$m" -t npu-systolic --check --seed 7 --report="$tmp/$name.npu.json" >"$tmp/out" 2>&1; then ok; else
		bad "$name: npu-systolic run --check"; cat "$tmp/out"; fi
	case $name in resnet_block|bert_layer) continue ;; esac
	# (the tile schedule's register allocation runs out at 4 registers
	# from about 100 rows: a known limit of sched_tiles, not of the model)
	case $name in gemm_packs) continue ;; esac
	if GDCC_MAX_REGS=4 "$GDCC" run "$m" -t npu-systolic --check --seed 8 >"$tmp/out" 2>&1; then ok; else
		bad "$name: npu-systolic with 4 registers"; cat "$tmp/out"; fi
done
# the reports say where every node ran, and why; the simulator's figures
if /usr/bin/python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
def rep(n): return json.load(open("%s/%s.npu.json" % (d, n)))
r = rep("mlp")
pl = r["placement"]
assert pl["device"] == "npu-systolic" and pl["host"] == "x86-avx2"
where = {n["name"]: (n["runs_on"], n["reason"]) for n in pl["nodes"]}
# (at -O2 the matmul and bias add a1 = h1 + b1 are one gemm, named a1)
assert where["a1"] == ("npu-systolic", "native") and where["a2"][0] == "npu-systolic", where
assert "h1" not in where, where
assert where["probs"][0] == "x86-avx2" and "exp" in where["probs"][1], where["probs"]
assert [s["runs_on"] for s in pl["segments"]] == ["npu-systolic", "x86-avx2"]
xf = {(t["value"], t["from"], t["to"]): t["bytes"] for t in pl["transfers"]}
assert xf[("x", "x86-avx2", "npu-systolic")] == 64 * 784 * 4 and xf[("logits", "npu-systolic", "x86-avx2")] == 64 * 10 * 4, xf
assert len(r["segments"]) == 2 and r["segments"][0]["target"] == "npu-systolic" and r["segments"][1]["target"] == "x86-avx2"
s = r["simulator"][0]
assert s["schema"] == "gdcc.npusim" and s["cycles"] > 0 and s["macs"] == 64 * (784 * 512 + 512 * 512 + 512 * 16), s["macs"]  # (edge tiles padded: N 10 -> 16)
assert 0 < s["pe_utilization"] <= 1
r = rep("resnet_block")
assert {n["runs_on"] for n in r["placement"]["nodes"]} == {"npu-systolic"}  # batchnorm folded: constants
r = rep("bert_layer")
ops = {n["op"]: n["runs_on"] for n in r["placement"]["nodes"]}
assert ops["matmul"] == "npu-systolic" and ops["softmax"] == "x86-avx2" and ops["layernorm"] == "x86-avx2", ops
PY
then ok; else bad "npu-systolic report: placement and simulator figures"; fi
# -S: the device part, the host part, the manifest; --emit=placement
rm -f "$tmp/n.s" "$tmp/n.host.s" "$tmp/n.s.json"
if "$GDCC" -S -t npu-systolic "$SRCDIR/examples/mlp.ir" -o "$tmp/n.s" 2>"$tmp/err" && grep -q '^gdcc_seg0:' "$tmp/n.s" &&
	grep -q 'mma t' "$tmp/n.s" && grep -q '^gdcc_seg1:' "$tmp/n.host.s" && cc -c -o "$tmp/n.host.o" "$tmp/n.host.s" 2>>"$tmp/err" &&
	grep -q '"runs_on": "x86-avx2"' "$tmp/n.s.json"; then ok; else bad "npu-systolic -S: device part, host part, manifest"; cat "$tmp/err"; fi
"$GDCC" --emit=placement -t npu-systolic "$SRCDIR/examples/mlp.ir" >"$tmp/pl" 2>&1
grep -q '^transfer logits: npu-systolic -> x86-avx2, 2560 bytes$' "$tmp/pl" && grep -q '^segment 1 on x86-avx2 (host):$' "$tmp/pl" &&
	grep -q 'probs  *softmax  *softmax needs exp' "$tmp/pl" && ok || { bad "--emit=placement"; cat "$tmp/pl"; }
"$GDCC" --emit=loops -t npu-systolic "$SRCDIR/examples/mlp.ir" >"$tmp/loops" 2>&1
grep -q '^# segment 1 on x86-avx2 (host)$' "$tmp/loops" && grep -q 'tiles 16x16: panels of' "$tmp/loops" && ok || { bad "--emit=loops of a placed model"; cat "$tmp/loops"; }
# other array sizes and dataflows: the same code generator, the same simulator
for p in "array_rows=32 --param array_cols=32" "dataflow=output_stationary"; do
	# shellcheck disable=SC2086
	if "$GDCC" run "$SRCDIR/tests/backend/matmul_gemm.ir" -t npu-systolic --param $p --check --seed 9 >"$tmp/out" 2>&1; then ok; else
		bad "npu-systolic --param $p"; cat "$tmp/out"; fi
done
"$GDCC" -S -t npu-systolic --param nosuch=1 "$SRCDIR/examples/mlp.ir" -o "$tmp/bad.s" >"$tmp/out" 2>&1
st=$?
[ $st -eq 2 ] && grep -q "nosuch" "$tmp/out" && [ ! -e "$tmp/bad.s" ] && ok || { bad "--param unknown: exit $st"; cat "$tmp/out"; }
# --param overrides stay what strategy(tiles) accepts (core/lowerings.def), as mdgen checked the .md
"$GDCC" -S -t npu-systolic --param array_rows=0 "$SRCDIR/examples/mlp.ir" -o "$tmp/bad.s" >"$tmp/out" 2>&1
st=$?
[ $st -eq 2 ] && grep -qF "param array_rows = 0: strategy(tiles) needs an integer in [1, 4096]" "$tmp/out" && [ ! -e "$tmp/bad.s" ] &&
	[ "$(grep -c 'error:' "$tmp/out")" -eq 1 ] && ok || { bad "--param array_rows=0: exit $st"; cat "$tmp/out"; }
"$GDCC" -S -t npu-systolic --param array_cols=8 "$SRCDIR/examples/mlp.ir" -o "$tmp/bad.s" >"$tmp/out" 2>&1
st=$?
[ $st -eq 2 ] && grep -qF "param array_cols = 8 differs from param array_rows = 16: strategy(tiles) needs them equal" "$tmp/out" &&
	[ ! -e "$tmp/bad.s" ] && ok || { bad "--param array_cols=8: exit $st"; cat "$tmp/out"; }
"$GDCC" -S -t npu-systolic --param dataflow=row_stationary "$SRCDIR/examples/mlp.ir" -o "$tmp/bad.s" >"$tmp/out" 2>&1
st=$?
[ $st -eq 2 ] && grep -qF 'param dataflow = "row_stationary": strategy(tiles) needs a string, one of "weight_stationary", "output_stationary"' "$tmp/out" &&
	[ ! -e "$tmp/bad.s" ] && ok || { bad "--param dataflow=row_stationary: exit $st"; cat "$tmp/out"; }
"$GDCC" -S -t npu-systolic --host nosuch "$SRCDIR/examples/mlp.ir" -o "$tmp/bad.s" >"$tmp/out" 2>&1
st=$?
[ $st -ne 0 ] && grep -q "host target 'nosuch'" "$tmp/out" && [ ! -e "$tmp/bad.s" ] && ok || { bad "--host unknown: exit $st"; cat "$tmp/out"; }

echo "backend: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
