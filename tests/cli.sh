#!/bin/sh
# Command-line tests of the gdcc driver: exit codes, messages, the error
# corpus in tests/errors (each file lists what it must print in its
# "# expect:" lines), and that a failed run leaves no output file.
# Run by `make check` with GDCC and SRCDIR set.
set -u
GDCC=${GDCC:-./gdcc}
SRCDIR=${SRCDIR:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect_status WANT DESCRIPTION -- COMMAND...
expect_status() {
	want=$1 what=$2
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" -eq "$want" ]; then ok; else bad "$what: exit $got, expected $want"; sed 's/^/  | /' "$tmp/err"; fi
}
expect_in() { # FILE TEXT DESCRIPTION
	if grep -qF -- "$2" "$1"; then ok; else bad "$3: no '$2' in:"; sed 's/^/  | /' "$1"; fi
}

# ---- the error corpus ------------------------------------------------------
for model in "$SRCDIR"/tests/errors/*.ir; do
	name=$(basename "$model" .ir)
	rm -f "$tmp/out.ir"
	expect_status 1 "$name" -- "$GDCC" --emit=ir -o "$tmp/out.ir" "$model"
	grep '^# expect: ' "$model" | sed 's/^# expect: //' | while IFS= read -r line; do
		case $line in
		[0-9]*:[0-9]*:*) line="$model:$line" ;;
		esac
		grep -qF -- "$line" "$tmp/err" || { echo "FAIL: $name: no '$line' in:"; sed 's/^/  | /' "$tmp/err"; echo x >>"$tmp/corpus_fail"; }
	done
	if [ -e "$tmp/out.ir" ]; then bad "$name: an output file was written"; else ok; fi
	# The caret line follows the quoted source line.
	grep -q '^ *\^$' "$tmp/err" && ok || bad "$name: no caret under the error"
done
[ -e "$tmp/corpus_fail" ] && fail=$((fail + $(wc -l <"$tmp/corpus_fail")))

# ---- options -----------------------------------------------------------------
expect_status 0 "--help" -- "$GDCC" --help
expect_in "$tmp/out" "usage: gdcc" "--help"
expect_status 0 "--version" -- "$GDCC" --version
expect_in "$tmp/out" "gdcc 0." "--version"
expect_status 0 "--list-ops" -- "$GDCC" --list-ops
expect_in "$tmp/out" "conv" "--list-ops"
expect_status 2 "unknown option" -- "$GDCC" --frobnicate "$SRCDIR/examples/mlp.ir"
expect_in "$tmp/err" "gdcc: error: unknown option '--frobnicate'" "unknown option"
expect_status 2 "no model" -- "$GDCC"
expect_in "$tmp/err" "no model given" "no model"
expect_status 2 "two models" -- "$GDCC" a.ir b.ir
expect_status 2 "bad --emit" -- "$GDCC" --emit=asm "$SRCDIR/examples/mlp.ir"
expect_in "$tmp/err" "unknown --emit stage 'asm'" "bad --emit"
expect_status 2 "unknown target" -- "$GDCC" -t vax "$SRCDIR/examples/mlp.ir"

expect_in "$tmp/err" "unknown target 'vax'" "unknown target"
expect_status 2 "-o without --emit" -- "$GDCC" -o "$tmp/x" "$SRCDIR/examples/mlp.ir"
expect_status 2 "-o missing argument" -- "$GDCC" "$SRCDIR/examples/mlp.ir" -o
expect_in "$tmp/err" "needs an argument" "-o missing argument"
expect_status 1 "missing model file" -- "$GDCC" "$tmp/none.ir"
expect_in "$tmp/err" "$tmp/none.ir: error: cannot read model: No such file or directory" "missing model file"

# ---- --emit=ir -----------------------------------------------------------------
for model in "$SRCDIR"/examples/*.ir; do
	name=$(basename "$model" .ir)
	expect_status 0 "$name check" -- "$GDCC" "$model"
	expect_status 0 "$name --emit=ir" -- "$GDCC" --emit=ir -o "$tmp/$name.1.ir" "$model"
	expect_status 0 "$name reparse" -- "$GDCC" --emit=ir -o "$tmp/$name.2.ir" "$tmp/$name.1.ir"
	cmp -s "$tmp/$name.1.ir" "$tmp/$name.2.ir" && ok || bad "$name: print -> parse -> print is not a fixed point"
done

# ---- a dead node: a warning at the node, and the model compiles ------------------
# (the backend copes with it at -O0; pass_dce removes it at -O1 and above)
printf 'graph g {\n  input x : f32[2]\n  input u : f32[2]\n  t = exp(x)\n  y = relu(x)\n  output y\n}\n' >"$tmp/dead.ir"
expect_status 0 "dead node: check" -- "$GDCC" "$tmp/dead.ir"
expect_in "$tmp/err" "$tmp/dead.ir:4:3: warning: 't' is computed but never used and is not an output" "dead node: warning"
grep -q 'error:' "$tmp/err" && bad "dead node: an error reported" || ok
expect_status 0 "dead node: --emit=ir" -- "$GDCC" --emit=ir -o "$tmp/dead.1.ir" "$tmp/dead.ir"
expect_in "$tmp/dead.1.ir" "t : f32[2] = exp(x)" "dead node: --emit=ir keeps it"
for t in $("$GDCC" --list-targets | awk 'NR > 1 {print $1}'); do
	expect_status 0 "dead node: -S -O0 -t $t" -- "$GDCC" -S -O0 -t "$t" -o "$tmp/dead.$t.s" "$tmp/dead.ir"
done
expect_status 0 "dead node: run -O0 -t x86-avx2 --check" -- "$GDCC" run -O0 -t x86-avx2 --check "$tmp/dead.ir"
expect_status 0 "dead node: -S -O1" -- "$GDCC" -S -O1 -t x86-avx2 --print-after=dce -o "$tmp/dead.s" "$tmp/dead.ir"
expect_in "$tmp/err" "# --- after dce" "dead node: dce ran at -O1"
grep -q 't : f32\[2\] = exp(x)' "$tmp/err" && bad "dead node: still there after dce at -O1" || ok
expect_in "$tmp/err" "input u : f32[2]" "dead node: an unused input stays an input"

# ---- gdcc run ------------------------------------------------------------------
cat >"$tmp/small.ir" <<'IR'
graph small {
  input x : f32[2, 8]
  input idx : i64[2]
  y = relu(x)
  g = gather(y, idx, axis=1)
  output y, g
}
IR
expect_status 0 "run default" -- "$GDCC" run "$tmp/small.ir"
expect_in "$tmp/out" "y : f32[2,8]" "run prints a summary"
expect_status 0 "run seeded" -- "$GDCC" run "$tmp/small.ir" --seed 7 --output y="$tmp/y7a.npy"
expect_status 0 "run seeded again" -- "$GDCC" run "$tmp/small.ir" --seed 7 --output y="$tmp/y7b.npy"
cmp -s "$tmp/y7a.npy" "$tmp/y7b.npy" && ok || bad "the same seed gave different outputs"
expect_status 0 "run other seed" -- "$GDCC" run "$tmp/small.ir" --seed 8 --output y="$tmp/y8.npy"
cmp -s "$tmp/y7a.npy" "$tmp/y8.npy" && bad "another seed gave the same outputs" || ok
expect_status 0 "run output-dir" -- "$GDCC" run "$tmp/small.ir" --output-dir "$tmp"
[ -s "$tmp/y.npy" ] && [ -s "$tmp/g.npy" ] && ok || bad "--output-dir did not write y.npy and g.npy"
# Feed an output back as an input: relu(relu(x)) == relu(x).
expect_status 0 "run with --input" -- "$GDCC" run "$tmp/small.ir" --input x="$tmp/y.npy" --output y="$tmp/yy.npy"
cmp -s "$tmp/y.npy" "$tmp/yy.npy" && ok || bad "relu is not idempotent through --input"
expect_status 1 "run wrong input name" -- "$GDCC" run "$tmp/small.ir" --input nope="$tmp/y.npy"
expect_in "$tmp/err" "the model has no input named 'nope'" "run wrong input name"
expect_status 1 "run wrong input type" -- "$GDCC" run "$tmp/small.ir" --input idx="$tmp/y.npy"
expect_in "$tmp/err" "$tmp/y.npy: error: holds f32[2,8] but input 'idx' is i64[2]" "run wrong input type"
expect_status 1 "run missing input file" -- "$GDCC" run "$tmp/small.ir" --input x="$tmp/nothere.npy"
expect_in "$tmp/err" "cannot open" "run missing input file"
expect_status 1 "run wrong output name" -- "$GDCC" run "$tmp/small.ir" --output zz="$tmp/zz.npy"
[ -e "$tmp/zz.npy" ] && bad "an output file was written for a failed run" || ok
expect_status 2 "run bad binding" -- "$GDCC" run "$tmp/small.ir" --input x
expect_in "$tmp/err" "expected NAME=FILE.npy" "run bad binding"
expect_status 2 "run bad seed" -- "$GDCC" run "$tmp/small.ir" --seed -3
expect_status 2 "run no model" -- "$GDCC" run
expect_status 1 "run invalid model" -- "$GDCC" run "$SRCDIR/tests/errors/shape_mismatch.ir" --output y="$tmp/bad.npy"
[ -e "$tmp/bad.npy" ] && bad "an output file was written for an invalid model" || ok
# A run-time error (an index out of range) exits 3 and writes nothing.
printf 'graph mk {\n  const i : i64[2] = [0, 9]\n  output i\n}\n' >"$tmp/mk.ir"
expect_status 0 "make an index file" -- "$GDCC" run "$tmp/mk.ir" --output i="$tmp/idx.npy"
rm -f "$tmp/g2.npy"
expect_status 3 "run index out of range" -- "$GDCC" run "$tmp/small.ir" --input idx="$tmp/idx.npy" --output g="$tmp/g2.npy"
expect_in "$tmp/err" "out of range" "run index out of range"
[ -e "$tmp/g2.npy" ] && bad "an output file was written for a failed run" || ok
expect_status 3 "run unwritable output" -- "$GDCC" run "$tmp/small.ir" --output y=/nonexistent-dir/y.npy
expect_in "$tmp/err" "cannot create" "run unwritable output"

# A target whose .md cannot cover the program (the test-only toy target has
# no branches or returns): each uncovered operator once, with a count, and
# no assembly or manifest left behind.
GDCC_TOY=${GDCC_TOY:-tests/gdcc_toy}
rm -f "$tmp/toy.s" "$tmp/toy.s.json"
printf 'graph g {\n  input x : f32[4, 8]\n  const w : f32[8, 3] = zeros\n  y = matmul(x, w)\n  output y\n}\n' >"$tmp/mm.ir"
expect_status 1 "compile for a target with missing patterns" -- "$GDCC_TOY" -S "$tmp/mm.ir" -t toy -o "$tmp/toy.s"
expect_in "$tmp/err" "cannot select ret (as stmt) on toy: no pattern covers it (2 trees)" "uncovered operators counted"
expect_in "$tmp/err" "cannot select brlt.i (as stmt) on toy: no pattern covers it (3 trees)" "uncovered operators counted"
[ "$(grep -c 'cannot select ret' "$tmp/err")" -eq 1 ] && ok || bad "an uncovered operator is reported more than once"
[ -e "$tmp/toy.s" ] || [ -e "$tmp/toy.s.json" ] && bad "output written for a failed compilation" || ok

# ---- ONNX models: malformed input, import, ONNX names -----------------------
printf 'graph g {\n}\n' >"$tmp/text.onnx"
rm -f "$tmp/t.ir"
expect_status 1 "malformed ONNX" -- "$GDCC" import "$tmp/text.onnx" -o "$tmp/t.ir"
expect_in "$tmp/err" "not an ONNX model" "malformed ONNX"
[ -e "$tmp/t.ir" ] && bad "an output file was written for a malformed model" || ok
head -c 100 /dev/urandom >"$tmp/noise.onnx"
expect_status 1 "random bytes as ONNX" -- "$GDCC" run "$tmp/noise.onnx"
: >"$tmp/empty.onnx"
expect_status 1 "empty ONNX file" -- "$GDCC" -S "$tmp/empty.onnx" -t x86-avx2 -o "$tmp/e.s"
[ -e "$tmp/e.s" ] && bad "assembly was written for an empty model" || ok
expect_status 1 "missing ONNX file" -- "$GDCC" import "$tmp/nonexistent.onnx"
expect_status 2 "import of a .ir" -- "$GDCC" import "$tmp/small.ir"
DATA=${ONNX_DATA:-/usr/share/libonnx-testdata/data}
if [ -d "$DATA" ]; then
	conv=$DATA/pytorch-converted/test_Conv2d
	# weights go beside the model.ir; small constants stay inline
	expect_status 0 "import Conv2d" -- "$GDCC" import "$conv/model.onnx" -o "$tmp/conv.ir"
	ls "$tmp"/conv.*.npy >/dev/null 2>&1 && ok || bad "import wrote no weight file"
	expect_in "$tmp/conv.ir" 'npy("conv.' "import: weights by npy()"
	expect_in "$tmp/conv.ir" "input 0 -> v0" "import: renamed inputs listed"
	# the imported model.ir computes exactly what the .onnx does
	expect_status 0 "run the .onnx by its ONNX names" -- "$GDCC" run "$conv/model.onnx" --input 0="$conv/test_data_set_0/input_0.pb" --output 3="$tmp/a.npy"
	expect_status 0 "run the imported .ir" -- "$GDCC" run "$tmp/conv.ir" --input v0="$conv/test_data_set_0/input_0.pb" --output v3="$tmp/b.npy"
	cmp -s "$tmp/a.npy" "$tmp/b.npy" && ok || bad "the imported model.ir does not compute what the .onnx does"
	# without -o, a model with weights cannot be printed
	expect_status 1 "import with weights to stdout" -- "$GDCC" import "$conv/model.onnx"
	expect_in "$tmp/err" "give -o FILE.ir" "import with weights to stdout"
	# an integer input that decides a shape: without its value the message
	# names it and --bind; run's --input and -S's --bind specialize to it
	rs=$DATA/node/test_reshape_reordered_all_dims
	expect_status 1 "reshape by an input, no value" -- "$GDCC" -S "$rs/model.onnx" -t x86-avx2 -o "$tmp/rs.s"
	expect_in "$tmp/err" "its shape ('shape') is not known when compiling: it is the model's input 'shape'" "reshape by an input, no value"
	expect_in "$tmp/err" "--bind shape=FILE.npy" "reshape by an input, no value"
	[ ! -e "$tmp/rs.s" ] && ok || bad "a failed -S left $tmp/rs.s"
	expect_status 0 "run --input specializes an integer input" -- "$GDCC" run "$rs/model.onnx" -t x86-avx2 \
		--input data="$rs/test_data_set_0/input_0.pb" --input shape="$rs/test_data_set_0/input_1.pb" --output reshaped="$tmp/rs.npy"
	expect_status 0 "run --onnx-test, the same" -- "$GDCC" run "$rs/model.onnx" -t x86-avx2 --onnx-test "$rs/test_data_set_0" \
		--output reshaped="$tmp/rs2.npy"
	cmp -s "$tmp/rs.npy" "$tmp/rs2.npy" && ok || bad "run --input and --onnx-test differ"
	expect_status 0 "-S --bind" -- "$GDCC" -S "$rs/model.onnx" -t x86-avx2 --bind shape="$rs/test_data_set_0/input_1.pb" -o "$tmp/rs.s"
	expect_status 1 "--bind of a name the model lacks" -- "$GDCC" -S "$conv/model.onnx" -t x86-avx2 --bind nosuch="$rs/test_data_set_0/input_1.pb" -o "$tmp/c.s"
	expect_in "$tmp/err" "--bind nosuch: the model has no integer input 'nosuch'" "--bind of a name the model lacks"
	expect_status 1 "--bind of the wrong type" -- "$GDCC" -S "$rs/model.onnx" -t x86-avx2 --bind shape="$rs/test_data_set_0/input_0.pb" -o "$tmp/rs3.s"
	expect_in "$tmp/err" "input 'shape': the value given for it is f32[2,3,4], not of the model's declared type" "--bind of the wrong type"
	expect_status 2 "--bind without a file" -- "$GDCC" -S "$rs/model.onnx" -t x86-avx2 --bind shape -o "$tmp/rs3.s"
	[ ! -e "$tmp/rs3.s" ] && [ ! -e "$tmp/c.s" ] && ok || bad "a failed --bind left an output"
	# a sequence input: one graph input per tensor of the test data; without
	# test data its length is unknown, and the message says so
	sq=$DATA/node/test_identity_sequence
	expect_status 0 "a sequence input from the test data" -- "$GDCC" run "$sq/model.onnx" -t x86-avx2 --onnx-test "$sq/test_data_set_0"
	expect_in "$tmp/out" "y_1: max abs error 0" "a sequence input from the test data"
	expect_status 1 "a sequence input without test data" -- "$GDCC" -S "$sq/model.onnx" -t x86-avx2 -o "$tmp/sq.s"
	expect_in "$tmp/err" "input 'x' is a sequence, not a tensor: not supported by gdcc (its length is data" "a sequence input without test data"
	# an integer exponent known at import time becomes f32: pow compiles
	pw=$DATA/node/test_pow_types_float32_int64
	expect_status 0 "pow with a constant integer exponent" -- "$GDCC" run "$pw/model.onnx" -t x86-avx2 --onnx-test "$pw/test_data_set_0"
	# an integer base: exact integer pow (an f32 exponent through where / floor)
	pw=$DATA/node/test_pow_types_int64_float32
	expect_status 0 "pow with an integer base" -- "$GDCC" run "$pw/model.onnx" -t x86-avx2 --onnx-test "$pw/test_data_set_0"
	# an unsupported op is named with its node and opset
	# (TfIdfVectorizer is in neither tier, nor among the extra ops)
	expect_status 1 "unsupported ONNX op" -- "$GDCC" run "$DATA/node/test_tfidfvectorizer_tf_only_bigrams_skip0/model.onnx"
	expect_in "$tmp/err" "(TfIdfVectorizer, opset" "unsupported ONNX op"
	expect_in "$tmp/err" "not supported" "unsupported ONNX op"
fi

# ---- the pass manager's options ------------------------------------------------
m=$SRCDIR/examples/mlp.ir
expect_status 0 "--list-passes" -- "$GDCC" --list-passes
for p in canonicalize fold bnfold cse dce fuse legalize plan-memory lower select allocate emit; do
	expect_in "$tmp/out" "$p " "--list-passes lists $p"
done
expect_status 2 "-O3" -- "$GDCC" -S -O3 -t x86-avx2 -o "$tmp/o3.s" "$m"
expect_in "$tmp/err" "-O3: the optimization levels are -O0, -O1 and -O2" "-O3"
[ -e "$tmp/o3.s" ] && bad "-O3 wrote an output" || ok
expect_status 2 "unknown --print-after pass" -- "$GDCC" -S -t x86-avx2 --print-after=fusion -o "$tmp/p.s" "$m"
expect_in "$tmp/err" "unknown pass 'fusion' (known: all, canonicalize," "unknown --print-after pass"
expect_status 2 "unknown --disable-pass" -- "$GDCC" -S -t x86-avx2 --disable-pass=all -o "$tmp/p.s" "$m"
expect_in "$tmp/err" "--disable-pass=all: unknown pass 'all'" "unknown --disable-pass"
expect_status 2 "--print-after without a compilation" -- "$GDCC" --print-after=cse "$m"
expect_in "$tmp/err" "--print-after shows a compilation's passes" "--print-after without a compilation"
expect_status 2 "an unknown short option is named itself" -- "$GDCC" -S -Q "$m"
expect_in "$tmp/err" "unknown option '-Q'" "an unknown short option is named itself"
# every pass prints after itself with --print-after=all: graph passes as model.ir
expect_status 0 "--print-after=all" -- "$GDCC" -S -t x86-avx2 --print-after=all -o "$tmp/all.s" "$m"
for p in canonicalize fold bnfold cse dce fuse; do
	expect_in "$tmp/err" "# --- after $p (" "--print-after=all: $p"
done
for p in legalize plan-memory lower select allocate emit; do
	expect_in "$tmp/err" "# --- after $p on x86-avx2" "--print-after=all: $p"
done
expect_in "$tmp/err" "# kernel 0: gemm + relu" "--print-after=all: the fusion groups"
# the model.ir a graph pass prints parses again
sed -n '/^# --- after cse (/,/^}/p' "$tmp/err" | sed 1d >"$tmp/after-cse.ir"
expect_status 0 "the graph printed after cse parses" -- "$GDCC" "$tmp/after-cse.ir"
# -O0 runs no graph pass (the report says why), --disable-pass one
expect_status 0 "-O0 --report" -- "$GDCC" -S -O0 -t x86-avx2 -o "$tmp/o0.s" --report="$tmp/o0.json" "$m"
expect_in "$tmp/o0.json" '{"name": "cse", "ran": false, "skipped": "-O0"' "-O0: cse skipped"
expect_status 0 "--disable-pass=cse --report" -- "$GDCC" -S -t x86-avx2 --disable-pass=cse -o "$tmp/d.s" --report="$tmp/d.json" "$m"
expect_in "$tmp/d.json" '{"name": "cse", "ran": false, "skipped": "--disable-pass"' "--disable-pass=cse"
expect_in "$tmp/d.json" '{"name": "canonicalize", "ran": true' "--disable-pass=cse leaves canonicalize"
expect_status 0 "run -O0 --check" -- "$GDCC" run -O0 -t x86-avx2 --check "$m"

# ---- sharding over a device mesh (docs/ir.md, "Sharding") -----------------------------
# BERT's layer, tensor-parallel over 4: Megatron's two all-reduces, nothing else
expect_status 0 "--emit=sharding tensor" -- "$GDCC" --emit=sharding --parallel=tensor --devices 4 "$SRCDIR/examples/bert_layer.ir"
expect_in "$tmp/out" "# 2 collectives, 1179648 bytes sent per device" "--emit=sharding tensor"
expect_in "$tmp/out" "q                      f32[1,12,128,64]       [_, tp, _, _]              f32[1,3,128,64]" "--emit=sharding tensor: heads split"
# data-parallel MLP: the batch split, the output gathered
expect_status 0 "--emit=sharding data" -- "$GDCC" --emit=sharding --parallel=data --devices 2 "$SRCDIR/examples/mlp.ir"
expect_in "$tmp/out" "all_gather(" "--emit=sharding data"
# a batch that does not divide: a warning, everything whole
expect_status 0 "--parallel=data, batch 1" -- "$GDCC" --emit=sharding --parallel=data --devices 2 "$SRCDIR/examples/resnet_block.ir"
expect_in "$tmp/err" "warning: --parallel=data: input 'x' (f32[1,64,56,56]) is not split" "--parallel=data, batch 1"
# --mesh and --shard on the command line
expect_status 0 "--mesh --shard" -- "$GDCC" --emit=sharding --mesh tp=2 --shard "w1=[_,tp]" "$SRCDIR/examples/mlp.ir"
expect_in "$tmp/out" "[_, tp]" "--mesh --shard"
expect_status 1 "--shard of an unknown value" -- "$GDCC" --emit=sharding --mesh tp=2 --shard "nope=[tp]" "$SRCDIR/examples/mlp.ir"
expect_in "$tmp/err" "--shard nope=[tp]: the model has no value 'nope'" "--shard of an unknown value"
expect_status 1 "--mesh malformed" -- "$GDCC" --emit=sharding --mesh tp "$SRCDIR/examples/mlp.ir"
expect_in "$tmp/err" "--mesh tp: 'tp' is not NAME=SIZE" "--mesh malformed"
expect_status 2 "--parallel without --devices" -- "$GDCC" --emit=sharding --parallel=data "$SRCDIR/examples/mlp.ir"
expect_in "$tmp/err" "--parallel needs --devices N" "--parallel without --devices"
expect_status 1 "--parallel=auto without a target" -- "$GDCC" --emit=sharding --parallel=auto --devices 4 "$SRCDIR/examples/mlp.ir"
expect_in "$tmp/err" "--parallel=auto chooses by the target's cost model: give -t TARGET" "--parallel=auto without a target"
# auto: every strategy estimated, the MLP's batch of 64 split (data) the fastest
expect_status 0 "--parallel=auto" -- "$GDCC" --emit=sharding -t x86-avx2 --parallel=auto --devices 4 "$SRCDIR/examples/mlp.ir"
expect_in "$tmp/out" "#   pipeline compute" "--parallel=auto"
expect_in "$tmp/out" "# chosen: data (the shortest estimated step)" "--parallel=auto"
expect_in "$tmp/out" "#   per layer group (data, data, data, data): step" "--parallel=auto"
expect_in "$tmp/out" "# estimate on x86-avx2 (the .md's cost model and clock), links 100 Gb/s and 5 us" "--parallel=auto"
expect_status 2 "--link-gbps 0" -- "$GDCC" --emit=sharding -t x86-avx2 --parallel=data --devices 2 --link-gbps 0 "$SRCDIR/examples/mlp.ir"
expect_in "$tmp/err" "--link-gbps needs a positive number, got '0'" "--link-gbps 0"
expect_status 0 "--parallel=pipeline" -- "$GDCC" --emit=sharding --parallel=pipeline --devices 2 "$SRCDIR/examples/mlp.ir"
expect_in "$tmp/out" "# note: stage 1: " "--parallel=pipeline"
expect_status 2 "--shard without a mesh" -- "$GDCC" --emit=sharding --shard "x=[dp]" "$SRCDIR/examples/mlp.ir"
expect_status 1 "--emit=sharding without a mesh" -- "$GDCC" --emit=sharding "$SRCDIR/examples/mlp.ir"
expect_in "$tmp/err" "the model has no mesh" "--emit=sharding without a mesh"
# compiling a sharded model for a target is not built yet: said, no output left
rm -f "$tmp/sh.s"
expect_status 1 "-S of a sharded model" -- "$GDCC" -S -t x86-avx2 --parallel=tensor --devices 2 "$SRCDIR/examples/mlp.ir" -o "$tmp/sh.s"
expect_in "$tmp/err" "its programs, one per device, are made and run by 'gdcc run -t TARGET' (over MPI)" "-S of a sharded model"
if [ -e "$tmp/sh.s" ]; then bad "-S of a sharded model left $tmp/sh.s"; else ok; fi
# the devices simulated with the reference kernels give what the whole graph gives
expect_status 0 "run: BERT tensor-parallel over 4" -- "$GDCC" run --parallel=tensor --devices 4 "$SRCDIR/examples/bert_layer.ir"
expect_in "$tmp/out" "spmd: 4 devices simulated" "run: BERT tensor-parallel over 4"
expect_in "$tmp/out" "0 of 98304 outside" "run: BERT tensor-parallel over 4"
expect_status 0 "run: MLP data-parallel over 4" -- "$GDCC" run --parallel=data --devices 4 "$SRCDIR/examples/mlp.ir"
expect_in "$tmp/out" "probs: max abs error 0," "run: MLP data-parallel over 4"
expect_status 0 "run: MLP on a 2 x 2 mesh" -- "$GDCC" run --mesh dp=2,tp=2 --shard "x=[dp,_]" --shard "w1=[_,tp]" --shard "w2=[tp,_]" "$SRCDIR/examples/mlp.ir"
expect_in "$tmp/out" "spmd: 4 devices simulated (3 collective" "run: MLP on a 2 x 2 mesh"
expect_status 0 "run: resnet block channel-parallel" -- "$GDCC" run --parallel=tensor --devices 2 "$SRCDIR/examples/resnet_block.ir"
expect_in "$tmp/out" "0 of 200704 outside" "run: resnet block channel-parallel"
expect_status 1 "run -t --profile of a sharded model" -- "$GDCC" run -t x86-avx2 --profile --parallel=tensor --devices 2 "$SRCDIR/examples/mlp.ir"
expect_in "$tmp/err" "--profile: not for a model sharded over several devices yet" "run -t --profile of a sharded model"
# mesh and shard statements print back
printf 'graph g {\n  mesh [d=2]\n  input x : f32[4, 2]\n  y = relu(x)\n  shard x [d, _]\n  output y\n}\n' >"$tmp/sh.ir"
expect_status 0 "mesh/shard print back" -- "$GDCC" --emit=ir "$tmp/sh.ir"
expect_in "$tmp/out" "  shard x [d, _]" "mesh/shard print back"

# ---- constant data beyond the code's reach (docs/backend.md, "Constant data") ---
# --param near_data_bytes=0 takes the far path for any model: on x86 the data
# goes to .lrodata and its addresses come from the GOT; the program still
# matches the reference; on riscv-rvv the data goes to .gdcc.far, which the
# link places at 4 GiB, its addresses from the GOT.  (A target without a far
# rule: tests/targets.sh, the toy.)
expect_status 0 "far data: -S" -- "$GDCC" -S -t x86-avx2 --param near_data_bytes=0 -o "$tmp/far.s" "$SRCDIR/examples/mlp.ir"
expect_in "$tmp/far.s" '.section .lrodata,"al"' "far data: the large-data section"
expect_in "$tmp/far.s" '@GOTPCREL(%rip)' "far data: addresses from the GOT"
if grep -q 'leaq gdcc_data' "$tmp/far.s"; then bad "far data: a RIP-relative leaq of a data symbol is left"; else ok; fi
expect_status 0 "far data: run --check" -- "$GDCC" run -t x86-avx2 --param near_data_bytes=0 --check --seed 1 "$SRCDIR/examples/mlp.ir"
expect_status 0 "near data: -S" -- "$GDCC" -S -t x86-avx2 -o "$tmp/near.s" "$SRCDIR/examples/mlp.ir"
if grep -q 'lrodata\|GOTPCREL' "$tmp/near.s"; then bad "near data: the far path taken for a small model"; else ok; fi
expect_status 0 "far data on riscv-rvv: -S" -- "$GDCC" -S -t riscv-rvv --param near_data_bytes=0 -o "$tmp/farrv.s" "$SRCDIR/examples/mlp.ir"
expect_in "$tmp/farrv.s" '.section .gdcc.far,"a"' "far data on riscv-rvv: its section"
expect_in "$tmp/farrv.s" '.option pic' "far data on riscv-rvv: addresses from the GOT"
if command -v qemu-riscv64 >/dev/null 2>&1; then
	expect_status 0 "far data on riscv-rvv: run --check" -- "$GDCC" run -t riscv-rvv --param near_data_bytes=0 --check --seed 1 "$SRCDIR/examples/mlp.ir"
else
	echo "SKIP: far data on riscv-rvv: run --check: no qemu-riscv64"
fi

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
