#!/bin/sh
# Targets: every target of md/targets.list exports its legality table in
# JSON (validated against docs/legality.schema.json), CSV and Markdown; and
# a test-only target (tests/md/toy.md, and toy-wide which extends it) built
# into tests/gdcc_toy from one .md file and one list line, with no C change,
# is listed, exported and selectable.
set -u
GDCC=${GDCC:-./gdcc}
GDCC_TOY=${GDCC_TOY:-tests/gdcc_toy}
SRCDIR=${SRCDIR:-.}
PY=${PYTHON_NUMPY:-/usr/bin/python3}
[ -x "$PY" ] || PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
# The schema check needs Debian's python3-jsonschema (README): without it
# this test fails rather than pass with the check left out.
if ! "$PY" -c 'import jsonschema' 2>/dev/null; then
	echo "FAIL: $PY cannot import jsonschema (apt-get install python3-jsonschema)"
	exit 1
fi

export_all() { # GDCC TARGET
	for fmt in json csv md; do
		rm -f "$tmp/$2.$fmt"
		if "$1" --print-legality -t "$2" --format=$fmt -o "$tmp/$2.$fmt" 2>"$tmp/err"; then ok; else bad "$2 $fmt export"; cat "$tmp/err"; fi
	done
	"$1" --list-ops >"$tmp/ops"
	if "$PY" "$SRCDIR/tests/check_legality.py" "$SRCDIR/docs/legality.schema.json" "$tmp/ops" \
		"$tmp/$2.json" "$tmp/$2.csv" "$tmp/$2.md"; then ok; else bad "$2: legality exports do not check"; fi
}

# ---- the real targets ----------------------------------------------------------
targets=$(grep -v '^#' "$SRCDIR/md/targets.list" | awk 'NF {print $1}')
"$GDCC" --list-targets >"$tmp/list" || bad "--list-targets"
for t in $targets; do
	grep -q "^$t " "$tmp/list" && ok || bad "--list-targets does not show $t"
	export_all "$GDCC" "$t"
	for m in "$SRCDIR"/examples/*.ir; do
		"$GDCC" -t "$t" --emit=legality "$m" >"$tmp/decisions" 2>"$tmp/err"
		st=$?
		# Every node gets a decision; unsupported ones are errors with a reason.
		if [ $st -eq 0 ] || { [ $st -eq 1 ] && grep -q "is unsupported on $t" "$tmp/err"; }; then ok; else
			bad "$t $(basename "$m"): exit $st"; cat "$tmp/err"; fi
	done
done

# A native row's strategy(NAME) is in every export and in a model's
# decisions: npu-systolic's matmul, gemm and conv run the tile schedule,
# its add and x86-avx2's matmul name none.
for op in matmul gemm conv; do
	grep -q "\"op\": \"$op\", \"dtype\": \"f32\", \"action\": \"native\", .*\"strategy\": \"tiles\"" "$tmp/npu-systolic.json" && ok ||
		bad "npu-systolic $op: no strategy tiles in the JSON export"
	grep -q "^npu-systolic,$op,f32,native,.*,tiles\$" "$tmp/npu-systolic.csv" && ok || bad "npu-systolic $op: no strategy tiles in the CSV export"
	grep -q "^| $op | f32 | native | .* | tiles |\$" "$tmp/npu-systolic.md" && ok || bad "npu-systolic $op: no strategy tiles in the Markdown export"
done
grep -q '"op": "add", "dtype": "f32", "action": "native", .*"strategy": null' "$tmp/npu-systolic.json" && ok || bad "npu-systolic add has a strategy"
grep -q '"op": "matmul", "dtype": "f32", .*"strategy": null' "$tmp/x86-avx2.json" && ok || bad "x86-avx2 matmul has a strategy"
"$GDCC" -t npu-systolic --emit=legality "$SRCDIR/examples/mlp.ir" >"$tmp/decisions" 2>"$tmp/err"
grep -q ' gemm .*native .*strategy(tiles)' "$tmp/decisions" && ok || { bad "mlp on npu-systolic: no strategy(tiles) decision"; cat "$tmp/decisions"; }

# ---- the test-only targets --------------------------------------------------------
"$GDCC_TOY" --list-targets >"$tmp/toylist"
grep -q '^toy ' "$tmp/toylist" && ok || bad "gdcc_toy does not list toy"
grep -q '^toy-wide .*extends toy' "$tmp/toylist" && ok || bad "gdcc_toy does not list toy-wide as extending toy"
grep -q '^toy ' "$tmp/list" && bad "the real gdcc lists the test-only toy" || ok
# x86-avx2-wrong: x86-avx2 with a planted wrong pattern, for tests/reduce.sh
grep -q '^x86-avx2-wrong .*extends .*x86-avx2$' "$tmp/toylist" && ok || bad "gdcc_toy does not list x86-avx2-wrong as extending x86-avx2"
grep -q '^x86-avx2-wrong ' "$tmp/list" && bad "the real gdcc lists the test-only x86-avx2-wrong" || ok
for t in $targets; do grep -q "^$t " "$tmp/toylist" && ok || bad "gdcc_toy lost $t"; done
export_all "$GDCC_TOY" toy
export_all "$GDCC_TOY" toy-wide
grep -q '"op": "sqrt", "dtype": "f32", "action": "native"' "$tmp/toy-wide.json" && ok || bad "toy-wide: sqrt is not native"
grep -q '"op": "sqrt", "dtype": "f32", "action": "unsupported"' "$tmp/toy.json" && ok || bad "toy: sqrt is not unsupported"
# toy-wide's 256-bit vectors halve the estimated cost of a native add.
grep -q '"op": "add", "dtype": "f32", "action": "native", .*"estimated_cost": 0.25,' "$tmp/toy.json" && ok || bad "toy add cost"
grep -q '"op": "add", "dtype": "f32", "action": "native", .*"estimated_cost": 0.125,' "$tmp/toy-wide.json" && ok || bad "toy-wide add cost"

# Selectable: -t toy checks a model against toy's table.
cat >"$tmp/m.ir" <<'IR'
graph m {
  input x : f32[1, 4, 8, 8]
  const w : f32[4, 1, 3, 3] = zeros
  const w1 : f32[4, 4, 1, 1] = zeros
  a = relu(x)
  b = conv(a, w, group=4, pads=[1, 1, 1, 1])
  c = conv(b, w1)
  output c
}
IR
if "$GDCC_TOY" -t toy --emit=legality "$tmp/m.ir" >"$tmp/dec" 2>"$tmp/err"; then ok; else bad "-t toy on a supported model"; cat "$tmp/err"; fi
grep -q '^a  *relu .*native  *uses(max.v)' "$tmp/dec" && ok || bad "relu is not native on toy"
grep -q '^b  *conv .*fallback  *"grouped convolution runs on the host"' "$tmp/dec" && ok || bad "grouped conv did not fall back"
grep -q '^c  *conv .*expand  *loop_nest when' "$tmp/dec" && ok || bad "conv group 1 was not expanded"
cat >"$tmp/bad.ir" <<'IR'
graph m {
  input x : f32[2, 3]
  y = exp(x)
  output y
}
IR
"$GDCC_TOY" -t toy "$tmp/bad.ir" 2>"$tmp/err"
[ $? -eq 1 ] && ok || bad "an unsupported op did not fail"
grep -qF "bad.ir:3:7: error: exp f32[2,3] is unsupported on toy: not on the toy (tests/md/toy.md:" "$tmp/err" && ok || { bad "unsupported message"; cat "$tmp/err"; }
# More constant data than the toy's code reaches (its near_data_bytes, here
# 0), and no addr.far rule: the reason, before any other, and no output.
cat >"$tmp/far.ir" <<'IR'
graph m {
  input x : f32[4]
  const w : f32[4] = fill(2)
  y = add(x, w)
  output y
}
IR
rm -f "$tmp/far.s"
"$GDCC_TOY" -S -t toy --param near_data_bytes=0 -o "$tmp/far.s" "$tmp/far.ir" 2>"$tmp/err"
[ $? -eq 1 ] && ok || bad "far data on a target without addr.far did not fail"
grep -qF "error: the model's constant data (16 bytes) is more than toy's code reaches directly (param near_data_bytes = 0), and tests/md/toy.md has no rule for addr.far" "$tmp/err" && ok || { bad "far data message"; cat "$tmp/err"; }
[ -e "$tmp/far.s" ] && bad "far data on toy: an output file was written" || ok
"$GDCC" -t toy "$tmp/bad.ir" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "unknown target 'toy'" "$tmp/err" && ok || bad "the real gdcc accepted -t toy"
"$GDCC" --print-legality 2>/dev/null; [ $? -eq 2 ] && ok || bad "--print-legality without -t"
"$GDCC" --print-legality -t x --format=xml 2>/dev/null; [ $? -eq 2 ] && ok || bad "--format=xml accepted"

# How each target's code runs here (issue 15): --list-targets says native,
# qemu, simulator or why not, and which target -t native picks; GDCC_CPU_FLAGS
# plays a CPU with those flags.  A run on a target this machine cannot run is
# refused before anything is built (exit 3), with the reason; -S still works.
lt=$(GDCC_CPU_FLAGS="sse2 avx2 fma bmi2" "$GDCC" --list-targets)
echo "$lt" | grep -q '^x86-avx2 .* native (-t native) ' && ok || bad "--list-targets: x86-avx2 not native (-t native) with avx2 flags"
echo "$lt" | grep -q '^x86-avx512 .* no: this CPU lacks avx512f ' && ok || { bad "--list-targets: x86-avx512 not refused without avx512f"; echo "$lt"; }
echo "$lt" | grep -q '^npu-systolic .* simulator ' && ok || bad "--list-targets: npu-systolic not in the simulator"
echo "$lt" | grep -Eq '^riscv-rvv .* (qemu|no: its emulator qemu-riscv64 is not on PATH) ' && ok || bad "--list-targets: riscv-rvv"
lt=$(GDCC_CPU_FLAGS="avx2 fma bmi2 avx512f avx512vl avx512dq avx512bw" "$GDCC" --list-targets)
echo "$lt" | grep -q '^x86-avx512 .* native (-t native) ' && ok || bad "--list-targets: x86-avx512 not -t native with its flags"
GDCC_CPU_FLAGS="avx2 fma bmi2" "$GDCC" run "$SRCDIR/examples/mlp.ir" -t x86-avx512 --output-dir "$tmp/none" >"$tmp/out" 2>"$tmp/err"
st=$?
if [ $st -eq 3 ] && grep -q "error: run -t x86-avx512: this machine cannot run x86-avx512's code (this CPU lacks avx512f" "$tmp/err" &&
	[ ! -e "$tmp/none" ]; then ok; else bad "run -t x86-avx512 without avx512f: exit $st"; cat "$tmp/err"; fi
if GDCC_CPU_FLAGS="avx2 fma bmi2" "$GDCC" -S -t x86-avx512 "$SRCDIR/examples/mlp.ir" -o "$tmp/m512.s" 2>"$tmp/err" &&
	grep -q '%zmm' "$tmp/m512.s"; then ok; else bad "-S -t x86-avx512 without avx512f"; cat "$tmp/err"; fi
GDCC_CPU_FLAGS="avx2 fma bmi2" "$GDCC" -t native --emit=loops "$SRCDIR/examples/mlp.ir" 2>/dev/null | grep -q 'on x86-avx2, 8 lanes' &&
	ok || bad "-t native on an AVX2 CPU is not x86-avx2"
GDCC_CPU_FLAGS="avx2 fma bmi2 avx512f avx512vl avx512dq avx512bw" "$GDCC" -t native --emit=loops "$SRCDIR/examples/mlp.ir" 2>/dev/null |
	grep -q 'on x86-avx512, 16 lanes' && ok || bad "-t native on an AVX-512 CPU is not x86-avx512"
GDCC_CPU_FLAGS="sse2" "$GDCC" -t native "$SRCDIR/examples/mlp.ir" >/dev/null 2>"$tmp/err"
st=$?
[ $st -eq 2 ] && grep -q "error: -t native: no target's code runs natively on this machine" "$tmp/err" && ok ||
	bad "-t native with no native target: exit $st"

echo "targets: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
