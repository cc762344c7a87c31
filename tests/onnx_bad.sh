#!/bin/sh
# Malformed and hostile ONNX models and TensorProto files (tests/onnx-bad:
# the 2026-12-01 fuzzing run's reproducers and the cases found since; the
# .txt beside a .onnx is the protobuf text it is encoded from).  Each bad
# file, through `gdcc -S`, `gdcc import` (and a .pb through `gdcc run
# --input`), must exit 1 with a message that names the file and what in it
# is wrong, leave no output file behind, and give no sanitizer report (the
# test also runs in the ASan+UBSan build).  A few well-formed models check
# what the importer once got wrong (operand caps, exponential or deep
# evaluation, a newline in a name), and generated 100,000-node models must
# import in time linear in their size.
#   GDCC, SRCDIR: as `make check` sets them; ONNX_PROTO: onnx.proto for
#   protoc-c --encode (default Debian's /usr/include/onnx/onnx.proto).
set -u
GDCC=${GDCC:-./gdcc}
SRCDIR=${SRCDIR:-.}
D=$SRCDIR/tests/onnx-bad
ONNX_PROTO=${ONNX_PROTO:-/usr/include/onnx/onnx.proto}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# check_bad WHAT EXPECT CMD...: run CMD in an empty $tmp/w (outputs go
# there); exit 1, stderr has EXPECT and no sanitizer report, nothing left.
check_bad() {
	cb_what=$1 cb_expect=$2
	shift 2
	rm -rf "$tmp/w"
	mkdir "$tmp/w"
	timeout 60 "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 1 ]; then
		bad "$cb_what: exit $rc, expected 1"
		sed 's/^/  | /' "$tmp/err" | head -20
		return
	fi
	if ! grep -qF -- "$cb_expect" "$tmp/err"; then
		bad "$cb_what: no '$cb_expect' in:"
		sed 's/^/  | /' "$tmp/err" | head -20
		return
	fi
	if grep -q 'runtime error:\|Sanitizer\|fatal:' "$tmp/err"; then
		bad "$cb_what: a sanitizer report or a fatal error:"
		sed 's/^/  | /' "$tmp/err" | head -20
		return
	fi
	# The message never carries raw control bytes from the file.
	if LC_ALL=C grep -q '[[:cntrl:]]' "$tmp/err"; then
		bad "$cb_what: control characters in the message"
		return
	fi
	left=$(ls -A "$tmp/w")
	if [ -n "$left" ]; then
		bad "$cb_what: left $left"
		return
	fi
	ok
}

# FILE|what the message must say after "FILE: error: " (or anywhere, for
# messages the verifier gives, which a note then places in the node).
while IFS='|' read -r f expect; do
	case $f in '#'* | '') continue ;; esac
	expect=$(printf '%s' "$expect" | sed "s|\\\$D|$D|g")
	check_bad "$f (-S)" "$D/$f: error: $expect" "$GDCC" -S -t x86-avx2 -o "$tmp/w/o.s" "$D/$f"
	check_bad "$f (import)" "$D/$f: error: $expect" "$GDCC" import "$D/$f" -o "$tmp/w/out.ir"
done <<'EOF'
# missing names: NULL in protobuf-c (a missing optional input is "", which is fine)
onnx-null-optype-1.onnx|node 1 has no op_type
onnx-null-output-name-1.onnx|graph output 1 has no name
onnx-null-input-name-1.onnx|graph input 1 has no name
onnx-null-input-name-2.onnx|graph input 1 has no name
onnx-null-initializer-name-1.onnx|initializer 1 has no name
onnx-null-attr-name-1.onnx|node 1 (LeakyRelu, opset 13): attribute 1 has no name
# arity: every operand and result is checked before it is read
onnx-constant-no-output-1.onnx|node 1 (Constant, opset 13): a Constant needs exactly one named result (it has 0)
onnx-constant-two-results-1.onnx|node 1 (Constant, opset 13): a Constant needs exactly one named result (it has 2)
onnx-old-softmax-no-input-1.onnx|node 1 (Softmax, opset 11): it has 0 inputs, Softmax takes at least 1
onnx-relu-no-results-1.onnx|node 1 (Relu, opset 13): it has no results
onnx-gemm-empty-middle-input-1.onnx|node 1 (Gemm, opset 13): input 2 is empty
# values taken as attributes
onnx-float-to-int-cast-1.onnx|node 1 (Reshape, opset 13): its shape ('s') must hold integers, not f32
onnx-constant-value-float-data-1.onnx|node 2 (Reshape, opset 13): its shape ('s') must hold integers, not f32
onnx-reshape-shape-from-input-1.onnx|node 1 (Reshape, opset 13): its shape ('s') is not known when compiling
onnx-gather-index-oob-shape-1.onnx|node 3 (Reshape, opset 13): its shape ('d') cannot be computed when compiling: gather: index 7 is out of range
onnx-constant-of-shape-empty-value-1.onnx|node 1 (ConstantOfShape, opset 13): attribute 'value' has 0 elements, not one
# ops imported as several gdcc ops (frontend/onnx_compose.c), and If
onnx-resize-sizes-runtime-1.onnx|node 1 (Resize, opset 13): its sizes ('s') is not known when compiling
onnx-resize-bad-mode-1.onnx|node 1 (Resize, opset 13): attribute 'mode' = "lanczos" is not one of nearest, linear, cubic
onnx-resize-scale-count-1.onnx|node 1 (Resize, opset 13): it has 3 scales for 2 axes
onnx-convtranspose-weights-1.onnx|node 1 (ConvTranspose, opset 13): its weights [3, ...] do not match 3 input channels in 2 groups
onnx-if-runtime-cond-1.onnx|node 1 (If, opset 13): its condition ('c') is not known when compiling: it is the model's input 'c' (shapes are static in gdcc: give its value with --bind c=FILE.npy
onnx-if-branch-error-1.onnx|node 1 (Frobnicate, opset 13): op 'Frobnicate' is not supported by gdcc
onnx-resize-huge-1.onnx|node 1 (Resize, opset 13): its result: f32[100000000,100000000] is 40000000000000000 bytes
onnx-convtranspose-stride-huge-1.onnx|node 1 (ConvTranspose, opset 13): its input spread by the strides: f32[1,1,8796093018112,8796093018112]: dimension 3
# RNN, GRU, LSTM, DFT, STFT, Compress, GridSample, Det, RoiAlign (frontend/onnx_compose.c): shapes, attributes, lengths
onnx-rnn-weights-shape-1.onnx|node 1 (RNN, opset 14): its weights W must be f32[1,4,2] (it is f32[1,4,3])
onnx-rnn-activation-1.onnx|node 1 (RNN, opset 14): activation 'Frobnicate' is not one of ONNX's
onnx-rnn-direction-1.onnx|node 1 (RNN, opset 14): direction 'sideways' is not forward, reverse or bidirectional
onnx-rnn-alpha-left-1.onnx|node 1 (RNN, opset 14): 1 of activation_alpha's and 0 of activation_beta's values are left over
onnx-rnn-seq-lens-1.onnx|node 1 (RNN, opset 14): its sequence_lens[0] = 5 is outside [0, 2]
onnx-dft-axis-1.onnx|node 1 (DFT, opset 17): its axis 2 is not one of the input's first 2
onnx-stft-frame-1.onnx|node 1 (STFT, opset 17): its frame_step (1) and frame_length (9) must be positive, the frame no longer than the signal (5)
onnx-compress-none-1.onnx|node 1 (Compress, opset 11): its condition selects nothing: the result would be empty
onnx-gridsample-mode-1.onnx|node 1 (GridSample, opset 16): its mode 'lanczos' is not bilinear, nearest or bicubic
# (a string attribute longer than the translation's buffer was once cut short without a mark)
onnx-gridsample-mode-long-1.onnx|node 1 (GridSample, opset 16): its mode 'bilinearbilinearbilinearbili...' is not bilinear, nearest or bicubic
onnx-det-size-1.onnx|node 1 (Det, opset 11): its matrices are 6 x 6: gdcc's Det (the Leibniz formula) takes at most 5 x 5
onnx-rnn-steps-1.onnx|node 1 (RNN, opset 14): its 100000000 steps (100000000 long, 1 direction): gdcc unrolls a recurrence and takes at most 8192
# (found by the fuzzer: an image of width 0 once reached a gather with no operand)
onnx-gridsample-empty-1.onnx|node 1 (GridSample, opset 16): its input and grid must not be empty
onnx-roialign-adaptive-1.onnx|node 1 (RoiAlign, opset 16): its sampling_ratio 0 is not one of 1 to 64
onnx-cumsum-axis-1.onnx|node 1 (CumSum, opset 14): its axis 2 is out of range for rank 2
onnx-cumsum-bool-1.onnx|node 1 (CumSum, opset 14): its input is bool: CumSum sums f32, i32 or i64
onnx-cumsum-no-axis-1.onnx|node 1 (CumSum, opset 14): its axis (input 2) is missing
# sizes, checked before anything is allocated; data lengths checked exactly
onnx-init-huge-alloc-1.onnx|initializer 'w': f32[1099511627776] is 4398046511104 bytes
onnx-init-shape-overflow-1.onnx|initializer 'w': f32[1099511627776,1099511627776] has more elements than fit in 64 bits
onnx-input-shape-overflow-1.onnx|input 'x': f32[4294967296,4294967296] has more elements than fit in 64 bits
onnx-manifest-overflow-1.onnx|input 'x': f32[9223372036854775807]: dimension 1
onnx-shape-wrap-transpose-oob-1.onnx|input 'x': f32[3,6148914691236517206]: dimension 2
onnx-negative-dim-1.onnx|input 'x': f32[-2,3] has a negative dimension
onnx-dim-param-1.onnx|input 'x': dimension 1 is not a number (dynamic shapes are not supported)
onnx-output-type-huge-1.onnx|output 'y': its declared type: f32[4294967296,4294967296] has more elements
onnx-raw-data-short-1.onnx|initializer 'w': it holds 4 bytes of raw data, its shape needs 24
onnx-typed-data-long-1.onnx|initializer 'w': it holds 4 values, its shape needs 3
# external data (TensorProto.external_data, a file beside the model)
onnx-external-no-location-1.onnx|initializer 'w': its data is external but external_data has no "location"
onnx-external-absolute-1.onnx|initializer 'w': external data location "/etc/passwd" is not a relative path inside the model's directory
onnx-external-dotdot-1.onnx|initializer 'w': external data location "sub/../../onnx-external-data-1.bin" is not a relative path
onnx-external-missing-1.onnx|initializer 'w': cannot read its external data $D/no-such-file.bin: No such file or directory
onnx-external-directory-1.onnx|initializer 'w': its external data $D/. is not a regular file
onnx-external-short-1.onnx|initializer 'w': its external data $D/onnx-external-data-1.bin holds 20 bytes, the tensor needs 12 at offset 12
onnx-external-length-1.onnx|initializer 'w': its external data is 16 bytes, its shape needs 12
onnx-external-offset-bad-1.onnx|initializer 'w': external data offset "-4" is not a byte count
# the model as a whole
onnx-no-outputs-unlocated-1.onnx|graph 'g' has no outputs
onnx-duplicate-definition-1.onnx|node 2 (Neg, opset 13): 'y' is defined twice
onnx-initializer-twice-1.onnx|initializer 'w' is given twice
onnx-opset-huge-1.onnx|opset version 1000000000000 is not supported
onnx-deep-nesting-1.onnx|not an ONNX model: messages nested more than 100 deep
# bytes from the file are escaped in messages
onnx-nonprintable-optype-1.onnx|node 'n\x1b[31m\x0a' (Re\x1b]0;x\x07lu\x0a, opset 13): op 'Re\x1b]0;x\x07lu\x0a' is not supported
onnx-nonprintable-name-1.onnx|node 1 (Relu, opset 13): input 1 ('x\x1b[2J') is not defined before the node
onnx-string-attr-nonprintable-1.onnx|node 1 (Pad, opset 13): attribute 'mode' = "\x1b]0;pwned\x07" is not a printable string
EOF

# The verifier's message, then a note naming the node.
for cmd in -S import; do
	f=onnx-string-attr-null-data-1.onnx
	if [ $cmd = -S ]; then set -- "$GDCC" -S -t x86-avx2 -o "$tmp/w/o.s" "$D/$f"; else set -- "$GDCC" import "$D/$f" -o "$tmp/w/out.ir"; fi
	check_bad "$f ($cmd)" "$D/$f: error: pad: attribute 'mode' = \"\" is not one of" "$@"
	grep -qF "$D/$f: note: in node 1 (Pad, opset 13)" "$tmp/err" && ok || bad "$f ($cmd): no note naming the node"
done

# TensorProto files as run inputs.
for f in tpb-huge-alloc-1.pb:"tensor 'x': f32[1099511627776] is 4398046511104 bytes" \
	tpb-shape-overflow-1.pb:"tensor 'x': f32[1099511627776,1099511627776] has more elements than fit in 64 bits"; do
	pb=${f%%:*} expect=${f#*:}
	check_bad "$pb (run)" "$D/$pb: error: $expect" "$GDCC" run "$D/relu-model.ir" --input x="$D/$pb" --output y="$tmp/w/y.npy"
done

# ---- well-formed models the importer once got wrong ------------------------------------
# 9 results, 17 operands: operand and result lists were cut at 8 and 16
"$GDCC" --emit=ir "$D/onnx-many-operands-1.onnx" >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 0 ] && grep -q 'a8 : f32\[1,2\] = split' "$tmp/out" && grep -q 'y : f32\[17,2\] = concat(a0, .*a6, a8, axis=0)' "$tmp/out"; then
	ok
else
	bad "onnx-many-operands-1.onnx: not imported whole:"
	cat "$tmp/out" "$tmp/err" | sed 's/^/  | /'
fi
# an If whose condition is known when compiling: the branch taken, inline,
# under the If's result name
"$GDCC" --emit=ir "$D/onnx-if-known-cond-1.onnx" >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 0 ] && grep -q '= relu(x)' "$tmp/out" && ! grep -q 'neg' "$tmp/out" && grep -q 'output y$' "$tmp/out"; then
	ok
else
	bad "onnx-if-known-cond-1.onnx: not the then branch under the name y:"
	cat "$tmp/out" "$tmp/err" | sed 's/^/  | /'
fi
# an initializer in an external file, at an offset, its checksum not read
"$GDCC" --emit=ir "$D/onnx-external-data-1.onnx" >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 0 ] && grep -qF 'const w : f32[3] = [1.5, -2.0, 0.25]' "$tmp/out"; then
	ok
else
	bad "onnx-external-data-1.onnx: its external initializer not read:"
	cat "$tmp/out" "$tmp/err" | sed 's/^/  | /'
fi
# each value of a shape computation uses the one before twice (60 deep: 2^59
# evaluations without a memo); answered at once
if timeout 20 "$GDCC" --emit=ir "$D/onnx-shape-dag-exponential-1.onnx" >"$tmp/out" 2>"$tmp/err" &&
	grep -qF 'reshape(x, shape=[2, 3])' "$tmp/out"; then ok; else bad "onnx-shape-dag-exponential-1.onnx: exit $?"; sed 's/^/  | /' "$tmp/err"; fi
# what `gdcc import` writes reads back: a newline in a name stays inside the
# header comment; a graph named "graph" is not `graph graph {`
for f in onnx-header-newline-name-1.onnx:'#   input x\x0ay = neg(x) -> ' onnx-graph-name-keyword-1.onnx:'graph graph_ {'; do
	m=${f%%:*} want=${f#*:}
	rm -rf "$tmp/w" && mkdir "$tmp/w"
	if "$GDCC" import "$D/$m" -o "$tmp/w/h.ir" 2>"$tmp/err" && "$GDCC" --emit=ir "$tmp/w/h.ir" >"$tmp/out" 2>>"$tmp/err" &&
		grep -qF -- "$want" "$tmp/w/h.ir"; then
		ok
	else
		bad "$m: the imported model does not read back"
		cat "$tmp/w/h.ir" "$tmp/err" 2>/dev/null | sed 's/^/  | /'
	fi
done

# ---- time linear in the model's size -------------------------------------------------------
timed() { # SECONDS WHAT CMD...: the command succeeds within the time
	limit=$1 what=$2
	shift 2
	start=$(date +%s)
	if timeout "$((limit * 3))" "$@" >"$tmp/out" 2>"$tmp/err"; then
		t=$(($(date +%s) - start))
		if [ "$t" -le "$limit" ]; then ok; else bad "$what: $t s (bound $limit s)"; fi
	else
		bad "$what: failed or timed out"
		tail -5 "$tmp/err"
	fi
}
if command -v protoc-c >/dev/null 2>&1 && [ -f "$ONNX_PROTO" ]; then
	encode() { protoc-c -I"$(dirname "$ONNX_PROTO")" --encode=onnx.ModelProto "$ONNX_PROTO"; }
	# 100,000 relus in a chain (the names were looked up by scanning every value: minutes)
	awk -v n=100000 'BEGIN {
		printf "ir_version: 7 opset_import { version: 13 } graph { name: \"g\"\n"
		for (i = 0; i < n; i++) printf "node { input: \"%s\" output: \"v%d\" op_type: \"Relu\" }\n", i ? "v" (i - 1) : "x", i
		printf "input { name: \"x\" type { tensor_type { elem_type: 1 shape { dim { dim_value: 2 } } } } }\n"
		printf "output { name: \"v%d\" type { tensor_type { elem_type: 1 } } } }\n", n - 1 }' | encode >"$tmp/chain.onnx"
	timed 20 "100,000-node relu chain: import" "$GDCC" import "$tmp/chain.onnx" -o "$tmp/chain.ir"
	# a shape computed through 100,000 nodes (the import-time evaluation recursed once per node)
	awk -v n=100000 'BEGIN {
		printf "ir_version: 7 opset_import { version: 13 } graph { name: \"g\"\n"
		printf "node { input: \"x\" output: \"s0\" op_type: \"Shape\" }\n"
		for (i = 1; i < n; i++) printf "node { input: \"s%d\" input: \"s%d\" output: \"s%d\" op_type: \"Max\" }\n", i - 1, i - 1, i
		printf "node { input: \"x\" input: \"s%d\" output: \"y\" op_type: \"Reshape\" }\n", n - 1
		printf "input { name: \"x\" type { tensor_type { elem_type: 1 shape { dim { dim_value: 2 } dim { dim_value: 3 } } } } }\n"
		printf "output { name: \"y\" type { tensor_type { elem_type: 1 } } } }\n" }' | encode >"$tmp/shape.onnx"
	timed 20 "100,000-node shape computation: import" "$GDCC" --emit=ir -o "$tmp/shape.ir" "$tmp/shape.onnx"
	grep -qF 'reshape(x, shape=[2, 3])' "$tmp/shape.ir" 2>/dev/null && ok || bad "100,000-node shape computation: not folded"
	# no silent limits (issue 17): a concat of 40 operands and rank-8 tensors
	# import whole and run right on every target; rank 9 is a clear error
	awk -v n=40 'BEGIN {
		printf "ir_version: 7 opset_import { version: 13 } graph { name: \"g\"\nnode {"
		for (i = 0; i < n; i++) printf " input: \"x%d\"", i
		printf " output: \"y\" op_type: \"Concat\" attribute { name: \"axis\" i: 1 type: INT } }\n"
		for (i = 0; i < n; i++)
			printf "input { name: \"x%d\" type { tensor_type { elem_type: 1 shape { dim { dim_value: 2 } dim { dim_value: %d } } } } }\n", i, i % 3 + 1
		printf "output { name: \"y\" type { tensor_type { elem_type: 1 } } } }\n" }' | encode >"$tmp/concat40.onnx"
	dims() { for d in "$@"; do printf 'dim { dim_value: %d } ' "$d"; done; }
	printf 'ir_version: 7 opset_import { version: 13 } graph { name: "g"
node { input: "a" input: "b" output: "c" op_type: "Add" }
node { input: "c" output: "y" op_type: "Transpose" attribute { name: "perm" ints: 7 ints: 0 ints: 6 ints: 1 ints: 5 ints: 2 ints: 4 ints: 3 type: INTS } }
input { name: "a" type { tensor_type { elem_type: 1 shape { %s} } } }
input { name: "b" type { tensor_type { elem_type: 1 shape { %s} } } }
output { name: "y" type { tensor_type { elem_type: 1 } } } }\n' "$(dims 1 2 1 3 1 2 1 2)" "$(dims 2 1 2 1 2 1 3 1)" | encode >"$tmp/rank8.onnx"
	"$GDCC" --emit=ir "$tmp/concat40.onnx" >"$tmp/out" 2>&1 &&
		grep -q 'y : f32\[2,79\] = concat(x0, x1, .*, x38, x39, axis=1)' "$tmp/out" && ok || {
		bad "40-operand concat: not imported whole"; sed 's/^/  | /' "$tmp/out"; }
	"$GDCC" --emit=ir "$tmp/rank8.onnx" >"$tmp/out" 2>&1 &&
		grep -qF 'y : f32[2,2,3,2,2,2,2,3] = transpose(c, perm=[7, 0, 6, 1, 5, 2, 4, 3])' "$tmp/out" && ok || {
		bad "rank-8 add and transpose: not imported"; sed 's/^/  | /' "$tmp/out"; }
	for t in x86-avx2 riscv-rvv npu-systolic; do
		for m in concat40 rank8; do
			if "$GDCC" run "$tmp/$m.onnx" -t $t --check --seed 2 >"$tmp/out" 2>&1; then ok; else
				bad "$m.onnx on $t: run --check"; sed 's/^/  | /' "$tmp/out"; fi
		done
	done
	printf 'ir_version: 7 opset_import { version: 13 } graph { name: "g"
node { input: "a" output: "y" op_type: "Relu" }
input { name: "a" type { tensor_type { elem_type: 1 shape { %s} } } }
output { name: "y" type { tensor_type { elem_type: 1 } } } }\n' "$(dims 1 1 1 1 1 1 1 1 2)" | encode >"$tmp/rank9.onnx"
	check_bad "rank-9 input" "rank9.onnx: error: input 'a': its rank is not supported (gdcc takes f32, i32, i64, bool, rank 0 to 8" \
		"$GDCC" -S -t x86-avx2 "$tmp/rank9.onnx" -o "$tmp/w/r9.s"
else
	echo "onnx_bad: timing cases skipped: no protoc-c or $ONNX_PROTO"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
