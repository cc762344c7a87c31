#!/bin/sh
# gdcc run --profile (docs/profile.md): each kernel of the compiled model
# timed in a build with each kernel its own function.  Per model: the
# profile's kernels are the report's code.kernels of the normal build,
# every node of the report in exactly one kernel (views and empty results in
# no_kernel instead; constants are data, in neither), shares summing to 1,
# times positive, measured cycles = time x clock_ghz, and the outputs
# identical to a run without --profile (tests/check_profile.py).  Then the
# table, riscv-rvv under qemu (when the cross tools exist), npu-systolic's
# refusal, and bad flag values: precise errors, nothing written.
set -u
GDCC=${GDCC:-./gdcc}
SRCDIR=${SRCDIR:-.}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# profile MODEL TARGET EXTRA_RUN_ARGS NO_KERNEL_NODES...
profile() {
	m=$1 t=$2 extra=$3
	shift 3
	name=$(basename "$m" .ir).$t
	rm -rf "$tmp/plain" "$tmp/prof"
	mkdir -p "$tmp/plain" "$tmp/prof"
	# shellcheck disable=SC2086
	if ! "$GDCC" run "$m" -t "$t" $extra --seed 3 --report="$tmp/$name.report.json" --output-dir "$tmp/plain" \
		>"$tmp/out" 2>&1; then
		bad "$name: the run without --profile failed"; cat "$tmp/out"; return
	fi
	# shellcheck disable=SC2086
	if ! "$GDCC" run "$m" -t "$t" $extra --seed 3 --check --profile="$tmp/$name.profile.json" --profile-runs=3 \
		--output-dir "$tmp/prof" >"$tmp/$name.table" 2>"$tmp/err"; then
		bad "$name: --profile failed"; cat "$tmp/err" "$tmp/$name.table"; return
	fi
	if "$PY" "$SRCDIR/tests/check_profile.py" "$tmp/$name.profile.json" "$tmp/$name.report.json" "$t" "$@" \
		>"$tmp/check" 2>&1; then ok; else bad "$name: the profile JSON"; cat "$tmp/check"; fi
	# the outputs: byte for byte those of the run without --profile
	n=0
	for f in "$tmp/plain"/*.npy; do
		n=$((n + 1))
		if cmp -s "$f" "$tmp/prof/$(basename "$f")"; then ok; else bad "$name: $(basename "$f") differs with --profile"; fi
	done
	[ "$n" -gt 0 ] || bad "$name: no outputs written"
	# the table: a header, a row per kernel, the total
	k=$(sed -n 's/.*"kernels": *\([0-9]*\).*/\1/p' "$tmp/$name.report.json" | tail -1)
	rows=$(grep -c '^ *[0-9][0-9]*  ' "$tmp/$name.table")
	if grep -q "^profile of .* on $t.*: $k kernels, median of 3 runs; times: " "$tmp/$name.table" &&
	   [ "$rows" = "$k" ] && grep -q '^ *total (kernels) .*100.0%' "$tmp/$name.table"; then ok; else
		bad "$name: the table ($rows rows, $k kernels)"; cat "$tmp/$name.table"; fi
	grep -q ': ok$' "$tmp/$name.table" && ! grep -q MISMATCH "$tmp/$name.table" && ok || bad "$name: --check with --profile"
}

profile "$SRCDIR/examples/resnet_block.ir" x86-avx2 ""
profile "$SRCDIR/examples/bert_layer.ir" x86-avx2 ""
profile "$SRCDIR/examples/mlp.ir" x86-avx2 "-O0"
# a flatten that is a view (no kernel); empty results; outputs copied
profile "$SRCDIR/tests/backend/reduce_layernorm_outputs.ir" x86-avx2 "" f
profile "$SRCDIR/tests/backend/empty_results.ir" x86-avx2 ""
profile "$SRCDIR/tests/backend/outputs_copied.ir" x86-avx2 ""
profile "$SRCDIR/tests/backend/fuse_prologue.ir" x86-avx2 ""

# the fused kernels of resnet_block: conv + relu, conv + add + relu
if grep -q '"nodes": \[{"name": "n1", "op": "conv"}, {"name": "r1", "op": "relu"}\]' \
	"$tmp/resnet_block.x86-avx2.profile.json"; then ok; else bad "resnet_block: kernel 0 is not conv + relu"; fi
grep -q '"measured_on": "native' "$tmp/resnet_block.x86-avx2.profile.json" && ok || bad "resnet_block: measured_on"

if command -v riscv64-linux-gnu-gcc >/dev/null 2>&1 && command -v qemu-riscv64 >/dev/null 2>&1; then
	profile "$SRCDIR/examples/mlp.ir" riscv-rvv "--vlen 256"
	# the header says the times are qemu's
	grep -q '^profile of mlp on riscv-rvv at VLEN 256: .*times: qemu' "$tmp/mlp.riscv-rvv.table" && ok ||
		bad "riscv-rvv: the table does not say the times are qemu's"
	grep -q '"vlen": 256,' "$tmp/mlp.riscv-rvv.profile.json" && ok || bad "riscv-rvv: vlen not 256 in the JSON"
else
	echo "(riscv-rvv: no riscv64-linux-gnu-gcc or qemu-riscv64, not profiled)"
fi

# ---- refusals and bad values: exit status, the message, nothing written ----------
m=$SRCDIR/examples/mlp.ir
refuse() { # STATUS MESSAGE -- ARGS...
	want=$1 msg=$2
	shift 3
	rm -rf "$tmp/o"
	mkdir "$tmp/o"
	"$GDCC" run "$m" "$@" --output-dir "$tmp/o" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" = "$want" ] && grep -qF -- "$msg" "$tmp/err" && [ -z "$(ls -A "$tmp/o")" ] && [ ! -e "$tmp/p.json" ]; then
		ok
	else
		bad "$*: exit $got (expected $want), files: $(ls -A "$tmp/o"), message:"; cat "$tmp/err"
	fi
	rm -f "$tmp/p.json"
}
refuse 2 "--profile is not supported for npu-systolic: its .md has no \`param profile\`" -- -t npu-systolic --profile="$tmp/p.json"
refuse 2 "--profile-runs needs a number of runs from 1 to 1000000, got '0'" -- -t x86-avx2 --profile="$tmp/p.json" --profile-runs=0
refuse 2 "--profile-runs needs a number of runs from 1 to 1000000, got '3x'" -- -t x86-avx2 --profile --profile-runs=3x
refuse 2 "--profile-runs needs a number of runs from 1 to 1000000, got '-1'" -- -t x86-avx2 --profile --profile-runs=-1
refuse 2 "--profile-runs sets how often --profile repeats the run: give --profile too" -- -t x86-avx2 --profile-runs=2
refuse 2 "--profile times the kernels of a compiled model: give -t TARGET" -- --profile="$tmp/p.json"
refuse 2 "--profile=FILE needs a file name" -- -t x86-avx2 --profile=
refuse 2 "--profile is not supported for a model placed on x86-avx2 and a host" -- -t x86-avx2 --host x86-avx2 --profile
refuse 3 "cannot create '$tmp/no/such/dir/p.json'" -- -t x86-avx2 --profile="$tmp/no/such/dir/p.json"
refuse 3 "cannot write '$tmp'" -- -t x86-avx2 --profile="$tmp"
# a failed run leaves an existing profile as it was
echo keep >"$tmp/old.json"
"$GDCC" run "$m" -t x86-avx2 --profile="$tmp/old.json" --input nosuch=x.npy >/dev/null 2>&1
[ "$(cat "$tmp/old.json")" = keep ] && ok || bad "a failed --profile run changed the existing FILE"
# --profile=-: the JSON on stdout, the table on stderr
if "$GDCC" run "$m" -t x86-avx2 --profile=- --profile-runs=1 >"$tmp/stdout.json" 2>"$tmp/stderr" &&
   "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema"] == "gdcc.profile"' "$tmp/stdout.json" \
	2>/dev/null && grep -q '^profile of mlp on x86-avx2' "$tmp/stderr"; then ok; else
	bad "--profile=-"; head -5 "$tmp/stdout.json" "$tmp/stderr"; fi
# the normal build carries no instrumentation: no kernel functions, no table
"$GDCC" -S -t x86-avx2 "$m" -o "$tmp/n.s" 2>/dev/null
if grep -q 'gdcc_entry:' "$tmp/n.s" && ! grep -q 'gdcc_kernel_\|gdcc_profile' "$tmp/n.s"; then ok; else
	bad "the normal build has profile symbols"; fi

echo "profile: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
