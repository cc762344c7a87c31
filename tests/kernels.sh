#!/bin/sh
# Fused kernels (issue 13): a fusion group is one kernel.  code.kernels in
# the manifest, per model and level, on the CPU targets; --emit=loops shows a
# fused elementwise group as one loop nest, a contraction's epilogue and a
# reduction's prologue.
# (Results are checked elsewhere: these models are in tests/backend, run by
# backend.sh and opt_levels.sh on every target.)
set -u
GDCC=${GDCC:-./gdcc}
SRCDIR=${SRCDIR:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
# the device cycles a `gdcc run --report=FILE` on npu-systolic says (empty: none)
report_cycles() { sed -n 's/.*"cycles": \([0-9]*\).*/\1/p' "$1" | head -1; }

kernels() { # MODEL TARGET LEVEL EXPECTED
	if ! "$GDCC" "$3" -S "$1" -t "$2" -o "$tmp/k.s" 2>"$tmp/err"; then
		bad "$1 $2 $3: -S failed: $(head -3 "$tmp/err")"
		return
	fi
	n=$(sed -n 's/.*"kernels": *\([0-9]*\).*/\1/p' "$tmp/k.s.json" | head -1)
	if [ "$n" = "$4" ]; then ok; else bad "$1 $2 $3: $n kernels, expected $4"; fi
}

for t in x86-avx2 riscv-rvv; do
	# add(relu(x), relu(x)): CSE leaves one relu, fusion one kernel
	kernels "$SRCDIR/tests/backend/fuse_cse_relu.ir" $t -O2 1
	kernels "$SRCDIR/tests/backend/fuse_cse_relu.ir" $t -O1 2
	kernels "$SRCDIR/tests/backend/fuse_cse_relu.ir" $t -O0 3
	# four contractions, each with its epilogue
	kernels "$SRCDIR/tests/backend/fuse_epilogue.ir" $t -O2 4
	kernels "$SRCDIR/tests/backend/fuse_epilogue.ir" $t -O0 13
	# three reductions, each with its prologue
	kernels "$SRCDIR/tests/backend/fuse_prologue.ir" $t -O2 3
	kernels "$SRCDIR/tests/backend/fuse_prologue.ir" $t -O0 7
	# conv + relu; conv + add + relu (batchnorm folded)
	kernels "$SRCDIR/examples/resnet_block.ir" $t -O2 2
done

# the dump: the fused group is one loop nest storing only its output
"$GDCC" "$SRCDIR/tests/backend/fuse_cse_relu.ir" -t x86-avx2 --emit=loops >"$tmp/loops" 2>&1
if grep -q '^kernel 0: c = relu, add (fusion group)' "$tmp/loops" &&
   [ "$(grep -c '^kernel' "$tmp/loops")" = 1 ] &&
   grep -q 'c\[i0\] = add.v(%t0, %t0)' "$tmp/loops" && ! grep -q '^ *a\[' "$tmp/loops"; then
	ok
else
	bad "fuse_cse_relu --emit=loops: not one fused loop nest"; cat "$tmp/loops"
fi
# a contraction's epilogue: the rest of the group before the store
"$GDCC" "$SRCDIR/tests/backend/fuse_epilogue.ir" -t x86-avx2 --emit=loops >"$tmp/loops" 2>&1
if grep -q '^kernel 0: y = conv, mul, add, relu (fusion group)' "$tmp/loops" &&
   grep '^ *y\[' "$tmp/loops" | grep -q '= max.v(add.v(mul.v(%t0, sc\[.*, r\[.*), 0)$'; then
	ok
else
	bad "fuse_epilogue --emit=loops: no conv epilogue"; grep -A8 '^epilogue' "$tmp/loops" | head -20
fi
# a reduction's prologue: computed in its first pass, stored for the others
"$GDCC" "$SRCDIR/tests/backend/fuse_prologue.ir" -t x86-avx2 --emit=loops >"$tmp/loops" 2>&1
if grep -q '^kernel 0: y = add, mul, layernorm (fusion group)' "$tmp/loops" &&
   sed -n '/^loops of y/,/^kernel/p' "$tmp/loops" | grep -q '^ *%t[0-9]* = mul.v(add.v(x\[.*r\[.*h\[0\])'; then
	ok
else
	bad "fuse_prologue --emit=loops: no prologue in the layernorm"; sed -n '/^loops of y/,/^kernel/p' "$tmp/loops" | head -20
fi

# The register-blocked convolution (issue 14): its block follows the .md's
# vector registers (15 allocatable ymm of x86-avx2: 6 channels x 2 rows x 1
# vector, 12 accumulators); a strided one reads its input split by stride
# phase; many input channels go in L1-sized slices (l1d_bytes).
# resnet_block's 3x3 stride-1 convolutions go to Winograd F(2, 3) along the
# rows (the cost model's choice), whose 1 x 3 convolutions take the 6 x 2 x 1
# block
"$GDCC" "$SRCDIR/examples/resnet_block.ir" -t x86-avx2 --emit=loops >"$tmp/loops" 2>&1
if grep -q '# register block: 6 channels x 2 rows x 1 vectors (15 registers of 15)' "$tmp/loops" &&
	[ "$(grep -c '# Winograd F(2, 3) along the rows: 4 x (1 x 3) convolutions of 64 channels' "$tmp/loops")" -eq 2 ]; then ok; else
	bad "resnet_block --emit=loops: not Winograd on the 6 x 2 x 1 register block"; grep '#' "$tmp/loops" | head; fi
# a strided conv stays direct, over the phase split
"$GDCC" "$SRCDIR/tests/backend/conv_blocked.ir" -t x86-avx2 --emit=loops >"$tmp/loops" 2>&1
if grep -q '# input padded and split into 2 x 2 stride phases of 7 x 6, a group at a time' "$tmp/loops" &&
	! grep -q 'Winograd' "$tmp/loops"; then ok; else bad "conv_blocked: a strided conv not direct"; fi
# Winograd's slices (small l2_bytes) against the reference
if "$GDCC" run "$SRCDIR/tests/backend/conv_winograd.ir" -t x86-avx2 --param l2_bytes=8192 --check --seed 9 >"$tmp/out" 2>&1 &&
	"$GDCC" "$SRCDIR/tests/backend/conv_winograd.ir" -t x86-avx2 --param l2_bytes=8192 --emit=loops 2>&1 |
	grep -q 'input channels in 3 slices of 14 (partial sums in (winograd products))'; then ok; else
	bad "conv_winograd with slices"; tail -5 "$tmp/out"; fi
# (slices from l2_bytes: a small L2 makes the test model's 300 channels twelve
# slices, the first, a loop of middle ones and the last; and they compute
# what the reference does)
"$GDCC" "$SRCDIR/tests/backend/conv_blocked.ir" -t x86-avx2 --emit=loops --param l2_bytes=32768 >"$tmp/loops" 2>&1
if grep -q '# input padded and split into 3 x 3 stride phases of 6 x 7' "$tmp/loops" &&
	grep -q '# input channels in 12 slices of 25 (partial sums in c3)' "$tmp/loops"; then ok; else
	bad "conv_blocked --emit=loops: no phases or slices"; grep '#' "$tmp/loops" | head; fi
if "$GDCC" run "$SRCDIR/tests/backend/conv_blocked.ir" -t x86-avx2 --param l2_bytes=32768 --check --seed 8 >"$tmp/out" 2>&1; then
	ok; else bad "conv_blocked with twelve slices: run --check"; tail -5 "$tmp/out"; fi
"$GDCC" "$SRCDIR/examples/resnet_block.ir" -t x86-avx2 --emit=loops >"$tmp/loops" 2>&1
if ! grep -q 'slices' "$tmp/loops"; then ok; else bad "resnet_block: its 64 channels in slices"; fi
# GEMM in every layout on the register-blocked kernel (issue 14): a
# transposed input B packed at run time, a constant B at compile time, the
# N edge as a masked vector, and no scalar column loop left (the plain
# nest's k loop would hold a lone fma.v whose B index moves by K)
"$GDCC" "$SRCDIR/tests/backend/gemm_layouts.ir" -t x86-avx2 --emit=loops >"$tmp/loops" 2>&1
nt=$(sed -n '/^loops of nt:/,/^kernel/p' "$tmp/loops")
tt=$(sed -n '/^loops of tcbt:/,/^kernel/p' "$tmp/loops")
if echo "$nt" | grep -q '# B packed per K block at run time (transposed)' &&
   echo "$nt" | grep -q 'masked: 5 lanes' && [ "$(echo "$nt" | grep -c 'fma.v')" -ge 12 ] &&
   echo "$tt" | grep -q '# B packed at compile time' && ! grep -q 'bt\[[^]]*37\*i[0-9]* + i[0-9]*\]' "$tmp/loops"; then
	ok
else
	bad "gemm_layouts --emit=loops: a layout off the blocked kernel"; echo "$nt" | head -30
fi
# N blocks (a loop over two of 208 columns, then 176) and A's rows copied
# into micro-panels (its rows 4 KiB apart; transposed A side by side a k)
"$GDCC" "$SRCDIR/tests/backend/gemm_nblocks.ir" -t x86-avx2 --emit=loops >"$tmp/loops" 2>&1
cp "$tmp/loops" "$tmp/nblocks.loops"
y=$(sed -n '/^loops of y:/,/^loops of z/p' "$tmp/loops")
z=$(sed -n '/^loops of z:/,/^kernel/p' "$tmp/loops")
# (B packed an N block at a time, into a scratch of one N block's K block
# (256 x 208) and A's micro-panel (6 x 256), just before the rows read it;
# the micro-kernel's k loop unrolled 4 times)
if echo "$y" | grep -q "# A's rows copied at run time into a micro-panel a register block: 6 rows x 256 k" &&
   echo "$y" | grep -q '# B packed per K block at run time (larger than half of L2): panels of 16 columns x 256 k, an N block at a time' &&
   echo "$y" | grep -q 'buffers: .*(scratch)\[54784\]' &&
   echo "$y" | grep -q '(scratch)\[4096\*i[0-9]* + 16\*i[0-9]* + i[0-9]*\]{%t[0-9]* + 0} = b\[600\*i[0-9]* + 16\*i[0-9]* + i0 + i[0-9]*\]' &&
   [ "$(echo "$y" | grep -c 'for i[0-9]* in \[0, 256) step 4')" -ge 2 ] &&
   echo "$y" | grep -q '# N blocks of 208 columns (B.s K block of one in half of L2): 2, then 176' &&
   echo "$y" | grep -q 'for i[0-9]* in \[0, 416) step 208' &&
   echo "$z" | grep -q 'for i[0-9]* in \[0, 6) masked: 6 lanes' &&
   echo "$z" | grep -q 'for i[0-9]* in \[0, 4) masked: 4 lanes' &&
   echo "$z" | grep -q '(scratch)\[i[0-9]* + 4\*i[0-9]*\]{%t[0-9]* + i[0-9]*} = at\[i[0-9]* + 64\*i[0-9]* + 60\]' &&
   ! echo "$z" | grep -q '# N blocks'; then
	ok
else
	bad "gemm_nblocks --emit=loops: no N blocks or no micro-panels of A"; echo "$y" | grep '#'; echo "$z" | head -12
fi
# a K block shortened by less than a third for one N block (x86-avx2: KC
# 256 -> 200, N = 320; x86-avx512 at 2048^3 transposed A: KC 192 -> 128, A's
# micro-panels 14 x 128); where the shorter KC would not do, N blocks stay
"$GDCC" "$SRCDIR/tests/backend/gemm_one_nblock.ir" -t x86-avx2 --emit=loops >"$tmp/loops" 2>&1
printf 'graph tn {\n input a : f32[2048, 2048]\n input b : f32[2048, 2048]\n y = gemm(a, b, trans_a=1)\n output y\n}\n' >"$tmp/tn.ir"
"$GDCC" "$tmp/tn.ir" -t x86-avx512 --emit=loops >"$tmp/loops.512" 2>&1
if [ "$(grep -c '# B packed per K block at run time (.*): panels of 16 columns x 200 k$' "$tmp/loops")" = 2 ] &&
   ! grep -q '# N blocks' "$tmp/loops" &&
   grep -q "# A's rows copied at run time into a micro-panel a register block: 14 rows x 128 k" "$tmp/loops.512" &&
   ! grep -q '# N blocks' "$tmp/loops.512" &&
   grep -q '# N blocks of 208 columns' "$tmp/nblocks.loops"; then
	ok
else
	bad "gemm_one_nblock --emit=loops: KC not shortened for one N block"; grep '#' "$tmp/loops" "$tmp/loops.512"
fi
# a constant read RIP-relatively (the mem form addr.sym), not through a leaq
"$GDCC" -S "$tmp/tn.ir" -t x86-avx512 -o "$tmp/tn.s" 2>"$tmp/err"
if grep -q 'vbroadcastss gdcc_data_[0-9]*(%rip), %zmm' "$tmp/tn.s" && ! grep -q 'leaq gdcc_data' "$tmp/tn.s"; then
	ok
else
	bad "2048^3 TN on x86-avx512: a constant's address made in a register"; grep -m3 'gdcc_data' "$tmp/tn.s"
fi
# rows of A that do not share L1 sets (K = 300) are read in place
"$GDCC" "$SRCDIR/tests/backend/gemm_packs.ir" -t x86-avx2 --emit=loops >"$tmp/loops" 2>&1
if ! grep -q "# A's rows copied" "$tmp/loops" && grep -q '# B packed per K block at run time (transposed)' "$tmp/loops"; then
	ok
else
	bad "gemm_packs --emit=loops: A copied where in place it stays in L1, or B^T not packed"; grep '#' "$tmp/loops"
fi
# attention's q k^T: the transpose only the matmul reads is not computed,
# the GEMM reads k through it (fixed vectors), and is on riscv-rvv
"$GDCC" "$SRCDIR/tests/backend/gemm_batched.ir" -t x86-avx2 --emit=loops >"$tmp/loops" 2>&1
"$GDCC" "$SRCDIR/tests/backend/gemm_batched.ir" -t riscv-rvv --emit=loops >"$tmp/loops.rvv" 2>&1
if grep -q '(read transposed by sa: not materialized)' "$tmp/loops" &&
   grep -q '# fused into this kernel: transpose k4t (B^T read from k4)' "$tmp/loops" &&
   ! grep -q '^loops of kt' "$tmp/loops" && grep -q '^loops of kt' "$tmp/loops.rvv"; then
	ok
else
	bad "gemm_batched --emit=loops: k^T materialized on x86-avx2 (or not on riscv-rvv)"; grep -E '^kernel|transpose' "$tmp/loops"
fi
# Remainders as the .md's costs say (cg_tail): one masked vector on
# x86-avx512 (opmasks), none left as a scalar loop, reductions included; a
# scalar loop on x86-avx2 (its masked store is microcoded); the report says so.
"$GDCC" "$SRCDIR/tests/backend/masked_tails.ir" -t x86-avx512 --emit=loops >"$tmp/loops" 2>&1
"$GDCC" "$SRCDIR/tests/backend/masked_tails.ir" -t x86-avx2 --emit=loops >"$tmp/loops.avx2" 2>&1
if grep -q 'masked: 5 lanes    # remainder (masked)' "$tmp/loops" && ! grep -q '# remainder$' "$tmp/loops" &&
   grep -q 'redmax.v' "$tmp/loops" && grep -q '# remainder$' "$tmp/loops.avx2" && ! grep -q 'remainder (masked)' "$tmp/loops.avx2"; then
	ok
else
	bad "masked_tails --emit=loops: remainders not as the targets' costs say"; grep remainder "$tmp/loops" "$tmp/loops.avx2" | head
fi
# x86-avx512's lane masks (opmask registers of their own) are made once
# before the loops: the GEMM's masked copies of a transposed A (14 lanes),
# its last rows (6) and its N edge (8 lanes, in the k loop) read k1-k3, and
# no lane-index compare is left inside a loop.
"$GDCC" -S "$SRCDIR/tests/backend/gemm_ta_masks.ir" -t x86-avx512 -o "$tmp/m.s" 2>"$tmp/err"
if [ "$(grep -c vcmpltps "$tmp/m.s")" = 3 ] && [ "$(awk '/^\.L/ { exit } /vcmpltps/ { n++ } END { print n + 0 }' "$tmp/m.s")" = 3 ] &&
   grep -q 'vmovups ([^)]*), %zmm[0-9]*{%k[1-3]}{z}' "$tmp/m.s"; then ok; else
	bad "gemm_ta_masks on x86-avx512: a lane mask made inside a loop (or not 3 made before)"; grep -n 'vcmpltps\|^\.L' "$tmp/m.s" | head; fi
# A transposed A (its rows 230 floats apart at each k): the k loop of a
# register block's first column class prefetches the next block's rows
# (row i0 + 27: 14 rows on), where the .md has a prefetch (x86: prefetcht0),
# one a k (4 in the loop unrolled 4 times), and not on riscv-rvv (none).
"$GDCC" "$SRCDIR/tests/backend/gemm_ta_masks.ir" -t x86-avx512 --emit=loops >"$tmp/loops" 2>&1
"$GDCC" "$SRCDIR/tests/backend/gemm_ta_masks.ir" -t riscv-rvv --emit=loops >"$tmp/loops.rvv" 2>&1
if grep -q 'prefetch a\[i[0-9]* + 230\*i[0-9]* + 27\]' "$tmp/loops" && [ "$(grep -c 'prefetcht0' "$tmp/m.s")" -ge 4 ] &&
   ! grep -q prefetch "$tmp/loops.rvv"; then ok; else
	bad "gemm_ta_masks: the next register block's rows of A not prefetched on x86-avx512 (or prefetched on riscv-rvv)"; grep -m3 prefetch "$tmp/loops" "$tmp/loops.rvv"; fi
# ... once, in the k loop of the column panel one micro-kernel before the next
# block's copy (gemm_ta_copy: N = 256, 8 panels: the 7th, after a loop over 6
# and before the last; a prefetch a k, 4 in the loop unrolled 4 times), not in
# the copy nor in the other panels.
"$GDCC" "$SRCDIR/tests/backend/gemm_ta_copy.ir" -t x86-avx512 --emit=loops >"$tmp/loops" 2>&1
if [ "$(grep -c 'prefetch a\[i[0-9]* + 1024\*i[0-9]* + [0-9]*\]' "$tmp/loops")" = 4 ] && [ "$(grep -c 'prefetch' "$tmp/loops")" = 4 ] &&
   awk '/for i[0-9]* in \[0, 6\)/ { six = NR } /prefetch a/ && !p { p = NR } /vector step 32/ { v[++n] = NR } END { exit !(six && n >= 3 && p > v[2] && p < v[3]) }' "$tmp/loops"; then ok; else
	bad "gemm_ta_copy: the next block's rows of A not prefetched in the 7th column panel's k loop alone"; grep -n 'prefetch\|for ' "$tmp/loops" | head -12; fi
# B transposed, packed at run time (gemm_packs' g: bt 37 x 300), by scalar
# copies (a target without lane permutations: GDCC_NO_LANE_PERMUTES): the
# copy of a group of columns goes a cache line of k's at a time (16 k's), and
# at each k prefetches rows of the next group at that line: x86-avx512, a
# group of 32 columns, 2 rows a k (rows 32 + 2 ki and the one after: 600
# elements a k); x86-avx2, groups of 16, 1 row a k (the next group's 16 rows
# on); none on riscv-rvv.
GDCC_NO_LANE_PERMUTES=1 "$GDCC" "$SRCDIR/tests/backend/gemm_packs.ir" -t x86-avx512 --emit=loops >"$tmp/loops" 2>&1
GDCC_NO_LANE_PERMUTES=1 "$GDCC" "$SRCDIR/tests/backend/gemm_packs.ir" -t x86-avx2 --emit=loops >"$tmp/loops.avx2" 2>&1
if grep -q 'prefetch bt\[16\*i[0-9]* + 600\*i[0-9]* + 9600\]' "$tmp/loops" &&
   grep -q 'prefetch bt\[16\*i[0-9]* + 600\*i[0-9]* + 9900\]' "$tmp/loops" &&
   grep -q 'prefetch bt\[16\*i[0-9]* + 300\*i[0-9]* + 4800\*i[0-9]* + 4800\]' "$tmp/loops.avx2"; then ok; else
	bad "gemm_packs: the copy of B^T does not prefetch the next group's rows"; grep -m4 prefetch "$tmp/loops" "$tmp/loops.avx2"; fi
"$GDCC" "$SRCDIR/tests/backend/gemm_packs.ir" -t riscv-rvv --emit=loops >"$tmp/loops" 2>&1
if ! grep -q prefetch "$tmp/loops"; then ok; else bad "gemm_packs on riscv-rvv: a prefetch (its .md has none)"; fi
# ... but where a group's rows at one k would be more lines in one L1 set
# than its ways (gemm_bt_rows: K = 1024, rows 4 KiB apart), 4 rows at a time
# (their 4 lines a k: at most half of a 12-way set's ways; 8 would be more):
# a line of 16 k's of 4 rows, k by k (4 contiguous stores a k), then the
# next 4 rows, each prefetching the next group's same rows (row 32 on: 32768
# elements); gemm_packs' K = 300 stays k by k (above).  (Scalar copies too.)
GDCC_NO_LANE_PERMUTES=1 "$GDCC" "$SRCDIR/tests/backend/gemm_bt_rows.ir" -t x86-avx512 --emit=loops >"$tmp/loops" 2>&1
if grep -q '(scratch)\[6144\*i[0-9]* + 512\*i[0-9]* + 4\*i[0-9]* + 481\]{%t[0-9]* + 481} = bt\[16\*i[0-9]* + 32768\*i[0-9]* + 4096\*i[0-9]* + 1039\]' "$tmp/loops" &&
   ! grep -q '+ 4\*i[0-9]* + 4\]{' "$tmp/loops" &&
   grep -q 'prefetch bt\[16\*i[0-9]* + 32768\*i[0-9]* + 4096\*i[0-9]* + 35840\]' "$tmp/loops"; then ok; else
	bad "gemm_bt_rows: the copy of B^T (rows 4 KiB apart) not 4 rows at a time"; grep -m4 'bt\[' "$tmp/loops"; fi
# Where the .md has lane permutations, B^T's copy transposes tiles in
# registers (gemm_bt_rows): x86-avx512 tiles of 16 x 16, a vector load of 16
# k's of each row (rows 1024 elements apart), 32 zips, 16 zips of pairs, 8
# halves and 8 segment gathers each (the K blocks of 192 and the first of 64:
# 64 lanes' worth; the group's masked 6 columns stay scalar), vshuff32x4 in the
# code; x86-avx2 tiles of 8 x 8, no segment gathers (vperm2f128); none on
# riscv-rvv (no rules: strips of its own).
"$GDCC" "$SRCDIR/tests/backend/gemm_bt_rows.ir" -t x86-avx512 --emit=loops >"$tmp/loops" 2>&1
"$GDCC" -S "$SRCDIR/tests/backend/gemm_bt_rows.ir" -t x86-avx512 -o "$tmp/btr.s" 2>>"$tmp/loops"
"$GDCC" "$SRCDIR/tests/backend/gemm_bt_rows.ir" -t x86-avx2 --emit=loops >"$tmp/loops.avx2" 2>&1
"$GDCC" -S "$SRCDIR/tests/backend/gemm_bt_rows.ir" -t x86-avx2 -o "$tmp/btr2.s" 2>>"$tmp/loops.avx2"
"$GDCC" "$SRCDIR/tests/backend/gemm_bt_rows.ir" -t riscv-rvv --emit=loops >"$tmp/loops.rvv" 2>&1
if grep -q '%t[0-9]* = bt\[16\*i[0-9]* + i[0-9]* + 32768\*i[0-9]* + 16384\*i[0-9]* + 15360\]' "$tmp/loops" &&
   [ "$(grep -c '= ziplo.v(' "$tmp/loops")" = "$(grep -c '= segev.v(' "$tmp/loops")" ] &&
   [ "$(grep -c '= segev.v(' "$tmp/loops")" -ge 8 ] && [ "$(grep -c '= ziplo2.v(' "$tmp/loops")" -ge 8 ] &&
   grep -q 'vshuff32x4 \$0x88, %zmm' "$tmp/btr.s" && grep -q 'vunpcklps %zmm' "$tmp/btr.s" &&
   [ "$(grep -c '= halflo.v(' "$tmp/loops.avx2")" -ge 4 ] && ! grep -q 'segev.v' "$tmp/loops.avx2" &&
   grep -q 'vperm2f128 \$0x20, %ymm' "$tmp/btr2.s" && ! grep -q 'zip\|half\|seg[eo]' "$tmp/loops.rvv"; then ok; else
	bad "gemm_bt_rows: B^T's copy not transposed in registers on x86 (or not scalar on riscv-rvv)"; grep -c 'ziplo\|segev\|halflo' "$tmp/loops" "$tmp/loops.avx2" "$tmp/loops.rvv"; fi
# An index computed once for the accesses that differ only in their
# constant (loop/lower.c): a register block's loads and stores of Y (14 rows x
# 2 vectors) take one index register and displacements, not a multiply and
# adds each (x86-avx512: 377 multiplies before, 86 after; riscv-rvv 18, 4).
"$GDCC" -S "$SRCDIR/tests/backend/gemm_nblocks.ir" -t x86-avx512 -o "$tmp/nb.s" 2>"$tmp/err"
"$GDCC" -S "$SRCDIR/tests/backend/gemm_nblocks.ir" -t riscv-rvv -o "$tmp/nb.rvv.s" 2>>"$tmp/err"
if [ "$(grep -c imul "$tmp/nb.s")" -le 120 ] && [ "$(grep -c '[[:space:]]mul[[:space:]]' "$tmp/nb.rvv.s")" -le 8 ] &&
   grep -q 'vmovups %zmm[0-9]*, 2400(%r[a-z0-9]*,%r[a-z0-9]*,4)' "$tmp/nb.s"; then ok; else
	bad "gemm_nblocks: Y's accesses of a register block each compute their index"; grep -c imul "$tmp/nb.s"; grep -c '[[:space:]]mul[[:space:]]' "$tmp/nb.rvv.s"; fi
# B's panels (from L2) prefetched prefetch_bytes (the .md's) ahead in the k
# loop, a prefetch a vector: x86-avx512 1024 bytes = 8 k's of a 32-column panel
# (gemm_nblocks' y: B packed at run time); none where the .md says none.
"$GDCC" "$SRCDIR/tests/backend/gemm_nblocks.ir" -t x86-avx512 --emit=loops >"$tmp/loops" 2>&1
"$GDCC" "$SRCDIR/tests/backend/gemm_nblocks.ir" -t x86-avx2 --emit=loops >"$tmp/loops.avx2" 2>&1
if grep -q 'prefetch (scratch)\[[0-9]*\*i[0-9]* + 32\*i[0-9]* + 256\]' "$tmp/loops" &&
   grep -q 'prefetch (scratch)\[[0-9]*\*i[0-9]* + 32\*i[0-9]* + 272\]' "$tmp/loops" && ! grep -q 'prefetch (scratch)' "$tmp/loops.avx2"; then ok; else
	bad "gemm_nblocks: B's panels not prefetched 8 k's ahead on x86-avx512 (or prefetched on x86-avx2)"; grep -m4 'prefetch' "$tmp/loops" "$tmp/loops.avx2"; fi
# Y's lines prefetched for each K block that adds to its partial sums (not
# the first, which only stores): a row's 32 columns a line each, and, where a
# row starts inside a line (600 columns), its last column too; spread over
# the k loop unrolled 4 times, a row an iteration (N / 4 = 150 a k: row (k -
# k0) / 4), where N is a multiple of 4; gemm_bt_rows' N = 70 is not: all of
# the block's before the loop. x86-avx2 as well (a cache_line and a
# prefetch), riscv-rvv none (no prefetch).
"$GDCC" "$SRCDIR/tests/backend/gemm_nblocks.ir" -t riscv-rvv --emit=loops >"$tmp/loops.rvv" 2>&1
"$GDCC" "$SRCDIR/tests/backend/gemm_bt_rows.ir" -t x86-avx512 --emit=loops >"$tmp/loops.btr" 2>&1
if awk '/prefetch y\[600\*i[0-9]* \+ 32\*i[0-9]* \+ 150\*i[0-9]* - [0-9]*\]/ { o = $0; sub(/.* - /, "", o); sub(/\].*/, "", o); have[o + 0] = 1 }
	END { for (o in have) if ((o - 16) in have && (o - 31) in have) ok = 1; exit !ok }' "$tmp/loops" &&
   awk '/^ *y\[.*\] = / && !st { st = NR } /prefetch y/ && !pf { pf = NR } END { exit !(st && pf > st) }' "$tmp/loops" &&
   awk '/for i[0-9]* in .* step 4$/ { inl = 1 } /prefetch y/ && !inl { exit 1 } END { exit !inl }' "$tmp/loops" &&
   grep -q 'prefetch y\[70\*i[0-9]* + 32\*i[0-9]* + 16\]' "$tmp/loops.btr" &&
   grep -q 'prefetch y\[' "$tmp/loops.avx2" && ! grep -q 'prefetch' "$tmp/loops.rvv"; then ok; else
	bad "gemm_nblocks / gemm_bt_rows: Y's lines not prefetched for the K blocks that add to them (or prefetched on riscv-rvv)"; grep -m4 'prefetch y' "$tmp/loops" "$tmp/loops.btr" "$tmp/loops.avx2" "$tmp/loops.rvv"; fi
# The GEMM's register block rows come from the vector registers (32 zmm:
# 14, 16 ymm: 6): what each .md's gemm_mr says of its machine.
for tr in "x86-avx512 masked vector" "x86-avx2 scalar loop"; do
	set -- $tr
	mr=$(sed -n 's/^param gemm_mr *= *\([0-9]*\).*/\1/p' "$SRCDIR/md/$1.md")
	"$GDCC" -S "$SRCDIR/tests/backend/matmul_gemm.ir" -t "$1" -o "$tmp/g.s" --report="$tmp/g.json" 2>"$tmp/err"
	want=$(echo "$tr" | cut -d' ' -f2-3)
	if [ -n "$mr" ] && grep -q "\"remainder\": \"$want\"" "$tmp/g.json" && grep -q "\"gemm\": {\"rows\": $mr," "$tmp/g.json"; then ok; else
		bad "$1 report: remainder not '$want' or GEMM rows not the .md's gemm_mr ($mr)"; grep -E '"vector"|"gemm"' "$tmp/g.json"; fi
done
# npu-systolic: the cost model flattens a small map's output rows when that
# beats the other mappings (the first three convs: the 1x1 one writes its
# flattened rows as they are, the others by row segments), and not where the
# rows fill the tiles as they are (the fourth); the first conv's k is
# chunked.
"$GDCC" "$SRCDIR/tests/backend/conv_flat_rows.ir" -t npu-systolic --emit=loops >"$tmp/loops" 2>&1
if [ "$(grep -c 'conv on the array:.*: flattened$' "$tmp/loops")" = 3 ] &&
   [ "$(grep -c 'flattened over the input.s width, [0-9]* + [1-9][0-9]* (its output by row segments): flattened$' "$tmp/loops")" = 2 ] &&
   grep -q 'flattened over the input.s width, [0-9]* + 0 (its output by row segments): flattened$' "$tmp/loops" &&
   [ "$(grep -c 'rows flattened over .*: \(row by row\|k packed\|dense pixels\)$' "$tmp/loops")" = 1 ] &&
   grep -q 'k in \([2-9]\|[1-9][0-9]\) chunk(s)' "$tmp/loops"; then ok; else
	bad "conv_flat_rows on npu-systolic: not three flattened (one without segments), one conv not flattened and a chunked k"; grep -E 'conv on|tiles' "$tmp/loops"; fi
# npu-systolic: two sets of accumulators (even and odd j) where the slots
# hold both and the j tiles alternate strictly (weight stationary, and output
# stationary with two output registers a PE); one set where a product has one
# j tile, and under output stationary with one output register a PE.
"$GDCC" "$SRCDIR/tests/backend/tile_accsets.ir" -t npu-systolic --emit=loops >"$tmp/loops" 2>&1
"$GDCC" "$SRCDIR/tests/backend/tile_accsets.ir" -t npu-systolic --param dataflow=output_stationary --emit=loops >"$tmp/loops.os" 2>&1
"$GDCC" "$SRCDIR/tests/backend/tile_accsets.ir" -t npu-systolic --param dataflow=output_stationary --param os_output_buffers=1 \
	--emit=loops >"$tmp/loops.os1" 2>&1
if [ "$(grep -c 'two sets of accumulators (even and odd j)' "$tmp/loops")" = 2 ] &&
   [ "$(grep -c 'one set of accumulators' "$tmp/loops")" = 1 ] &&
   [ "$(grep -c 'two sets of accumulators (even and odd j)' "$tmp/loops.os")" = 2 ] &&
   [ "$(grep -c 'one set of accumulators' "$tmp/loops.os1")" = 3 ]; then ok; else
	bad "tile_accsets on npu-systolic: not two products with two sets of accumulators and one with one (all one set under OS with one output register a PE)"; grep tiles "$tmp/loops" "$tmp/loops.os" "$tmp/loops.os1"; fi
# npu-systolic: dense pixels with four channel tiles (and a map wider than a
# tile with two: dense too): one DMA a row segment
# for all of a kernel position's channel tiles, the weights stored tile by
# tile (a panel's row tile one DMA), weight- and output-stationary, checked.
for df in weight_stationary output_stationary; do
	"$GDCC" "$SRCDIR/tests/backend/conv_dense_tiles.ir" -t npu-systolic --param dataflow=$df --emit=loops >"$tmp/loops" 2>&1
	if [ "$(grep -c 'conv on the array: dense pixels, .*: dense pixels$' "$tmp/loops")" = 2 ] &&
	   grep -q 'weights stored tile by tile: a panel.s row tile of the whole k row in one DMA' "$tmp/loops" &&
	   grep -q 'dense pixels: one DMA a row segment for the 4 channel tiles of a kernel position' "$tmp/loops" &&
	   grep -q 'conv on the array: dense pixels, .*: dense pixels$' "$tmp/loops" &&
	   grep -q 'dense pixels: one DMA a row segment for the 2 channel tiles of a kernel position' "$tmp/loops" &&
	   "$GDCC" run "$SRCDIR/tests/backend/conv_dense_tiles.ir" -t npu-systolic --param dataflow=$df --check --seed 1 >"$tmp/out" 2>&1; then ok; else
		bad "conv_dense_tiles on npu-systolic ($df): not dense pixels with a segment's channel tiles in one DMA and the weights tile by tile, or a mismatch"
		grep -E 'conv on|tiles|dense|weights' "$tmp/loops"; cat "$tmp/out"; fi
done
# npu-systolic: one j tile under output stationary with a fast DMA: the
# weights stream in a row tile at a time, a pass ahead; checked.
"$GDCC" "$SRCDIR/tests/backend/conv_astream.ir" -t npu-systolic --param dataflow=output_stationary --param dma_bytes_per_cycle=1024 \
	--emit=loops >"$tmp/loops" 2>&1
if grep -q 'tiles 16x16: panels of 4 row tiles .*, A streamed a row tile at a time, one pass ahead' "$tmp/loops" &&
   "$GDCC" run "$SRCDIR/tests/backend/conv_astream.ir" -t npu-systolic --param dataflow=output_stationary \
	--param dma_bytes_per_cycle=1024 --check --seed 1 >"$tmp/out" 2>&1; then ok; else
	bad "conv_astream on npu-systolic: the weights not streamed a row tile at a time, or a mismatch"; grep -E 'tiles' "$tmp/loops"; cat "$tmp/out"; fi
# ... and without a bias, two panels: they alternate between two sets of
# accumulators, each panel zeroing the next one's before its own move out
# (not behind its last row tile's, which waits for the array); checked.
"$GDCC" "$SRCDIR/tests/backend/conv_astream_sets.ir" -t npu-systolic --param dataflow=output_stationary \
	--param dma_bytes_per_cycle=1024 --emit=loops >"$tmp/loops" 2>&1
if grep -q 'tiles 16x16: panels of 4 row tiles .*, A streamed a row tile at a time, one pass ahead, two sets of accumulators (the panels in turn' "$tmp/loops" &&
   "$GDCC" run "$SRCDIR/tests/backend/conv_astream_sets.ir" -t npu-systolic --param dataflow=output_stationary \
	--param dma_bytes_per_cycle=1024 --check --seed 1 >"$tmp/out" 2>&1; then ok; else
	bad "conv_astream_sets on npu-systolic: the panels not in turn on two sets of accumulators, or a mismatch"; grep -E 'tiles' "$tmp/loops"; cat "$tmp/out"; fi
# ... and k-fused (CB5a_2 at 32 x 32): the first pass's mmas as the B row
# loads, the first row tile and the next one a kernel position at a time
# among them, the panels in turn on two sets; checked, and in fewer
# simulated cycles (deterministic) than SCALE-Sim's 74,719 for the layer.
np32="--param array_rows=32 --param array_cols=32 --param dataflow=output_stationary --param dma_bytes_per_cycle=1024 --param scratchpad_bytes=4194304"
"$GDCC" "$SRCDIR/tests/backend/conv_astream_kf.ir" -t npu-systolic $np32 --emit=loops >"$tmp/loops" 2>&1
if grep -q 'tiles 32x32: panels of 4 row tiles .*A streamed a row tile at a time, one pass ahead, two sets of accumulators (the panels in turn.*each j.s mmas as its row loads (k-fused)' "$tmp/loops" &&
   "$GDCC" run "$SRCDIR/tests/backend/conv_astream_kf.ir" -t npu-systolic $np32 --check --seed 1 --report="$tmp/kf.json" >"$tmp/out" 2>&1 &&
   cyc=$(report_cycles "$tmp/kf.json") && [ -n "$cyc" ] && [ "$cyc" -lt 74719 ]; then ok; else
	bad "conv_astream_kf on npu-systolic at 32 x 32: not streamed k-fused on two sets, a mismatch, or not under 74,719 cycles (${cyc:-?})"
	grep -E 'tiles' "$tmp/loops"; tail -3 "$tmp/out"; fi
# npu-systolic at 32 x 32, output stationary with a fast DMA, several
# panels of 2 row tiles, k-fused: the next panel's weights come during the
# first j of this one (so no panel but the first waits for its weights);
# checked.
P32="--param array_rows=32 --param array_cols=32 --param scratchpad_bytes=4194304 --param dataflow=output_stationary --param dma_bytes_per_cycle=1024"
# shellcheck disable=SC2086
"$GDCC" "$SRCDIR/tests/backend/conv_apre.ir" -t npu-systolic $P32 --emit=loops >"$tmp/loops" 2>&1
# shellcheck disable=SC2086
if grep -q "tiles 32x32: panels of 2 row tiles x 54 k tiles .*, B streamed by double-buffered DMA, the next panel of A loaded during this one's first j, two sets of accumulators (even and odd j), each j's mmas as its row loads (k-fused)" "$tmp/loops" &&
   "$GDCC" run "$SRCDIR/tests/backend/conv_apre.ir" -t npu-systolic $P32 --check --seed 1 >"$tmp/out" 2>&1; then ok; else
	bad "conv_apre on npu-systolic: the next panel's weights not loaded during this one, or a mismatch"; grep -E 'tiles' "$tmp/loops"; cat "$tmp/out"; fi
# npu-systolic: with fewer input channels than the array's rows, k packed
# ((kw, kh, channel) rows, one DMA a group) where it beats tiles of C rows.
"$GDCC" "$SRCDIR/tests/backend/conv_packed_k.ir" -t npu-systolic --emit=loops >"$tmp/loops" 2>&1
if [ "$(grep -c 'conv on the array: .* k packed, .*: packed$' "$tmp/loops")" = 5 ] &&
   grep -q 'conv on the array: 9 k tiles of 3 channels at one kernel position, .* k packed, 2 tiles' "$tmp/loops"; then ok; else
	bad "conv_packed_k on npu-systolic: not five convolutions with k packed (the first 9 -> 2 tiles)"; grep -E 'conv on' "$tmp/loops"; fi
# (the stride-2 ones, at the .md's 16 B a cycle, split by phase first by
# DMA (gathering with dmaes once) rather than gathering every B row; with
# a fast DMA they gather in place; never a split on the vector unit)
"$GDCC" -S "$SRCDIR/tests/backend/conv_packed_k.ir" -t npu-systolic -o "$tmp/cpk.s" 2>"$tmp/err"
"$GDCC" "$SRCDIR/tests/backend/conv_packed_k.ir" -t npu-systolic --param dma_bytes_per_cycle=1024 --emit=loops >"$tmp/loops2" 2>&1
if grep -q 'dmaes' "$tmp/cpk.s" && ! grep -q 'column phase\|copy of' "$tmp/loops" &&
   [ "$(grep -c 'rows gathered every 2 columns, .*: split by phase$' "$tmp/loops")" = 3 ] &&
   [ "$(grep -c 'phase split by DMA: ' "$tmp/loops")" = 3 ] &&
   [ "$(grep -c 'rows gathered every 2 columns, .*: gathered$' "$tmp/loops2")" = 3 ]; then ok; else
	bad "conv_packed_k on npu-systolic: stride-2 rows not split by phase by DMA (16 B a cycle) or not gathered (1024)"
	grep -E 'gathered|phase' "$tmp/loops" "$tmp/loops2"; fi
# npu-systolic: packed k without padding in (kh, channel, kw) order, a
# (kh, channel) group's kernel columns one DMA (rows dw columns apart): the
# dilated 3 x 3 and the 7 x 7 always, the stride-2 5 x 5 where it is
# gathered in place (a fast DMA; split by phase at 16 B a cycle, which
# keeps the (kw, kh, channel) groups); checked at both DMA speeds.
"$GDCC" "$SRCDIR/tests/backend/conv_kwrows.ir" -t npu-systolic --emit=loops >"$tmp/loops" 2>&1
"$GDCC" "$SRCDIR/tests/backend/conv_kwrows.ir" -t npu-systolic --param dma_bytes_per_cycle=1024 --emit=loops >"$tmp/loops2" 2>&1
kwr="k packed, [0-9]* tiles of (kh, channel, kw) rows (a (kh, channel) group's kernel columns one DMA), [0-9]*: packed"
if [ "$(grep -c "$kwr" "$tmp/loops")" = 3 ] && grep -q 'rows gathered every 2 columns, .*: split by phase$' "$tmp/loops" &&
   grep -q 'rows gathered every 2 columns, .*: gathered$' "$tmp/loops2" &&
   "$GDCC" run "$SRCDIR/tests/backend/conv_kwrows.ir" -t npu-systolic --check --seed 1 >"$tmp/out" 2>&1 &&
   "$GDCC" run "$SRCDIR/tests/backend/conv_kwrows.ir" -t npu-systolic --param dma_bytes_per_cycle=1024 --check --seed 1 >>"$tmp/out" 2>&1; then ok; else
	bad "conv_kwrows on npu-systolic: packed k not in (kh, channel, kw) groups, or a mismatch"; grep -E 'conv on' "$tmp/loops" "$tmp/loops2"; cat "$tmp/out"; fi
# npu-systolic at 32 x 32 with the .md's 256 KiB scratchpad: rows one by
# one of a 5 x 5 and a 7 x 7 over 3 channels (25 and 49 k tiles of a k row
# that cannot be chunked) do not fit, but packed k does: every conv stays
# on the array (it went to the vector unit, 4 x slower); checked.
# shellcheck disable=SC2086
"$GDCC" "$SRCDIR/tests/backend/conv_kwrows.ir" -t npu-systolic --param array_rows=32 --param array_cols=32 --emit=loops >"$tmp/loops" 2>&1
if [ "$(grep -c 'one kernel position, no plan fits the scratchpad; k packed, .*: packed$' "$tmp/loops")" = 2 ] &&
   [ "$(grep -c '^  tiles 32x32: ' "$tmp/loops")" = 3 ] && ! grep -q 'register block' "$tmp/loops" &&
   "$GDCC" run "$SRCDIR/tests/backend/conv_kwrows.ir" -t npu-systolic --param array_rows=32 --param array_cols=32 --check --seed 1 >"$tmp/out" 2>&1; then ok; else
	bad "conv_kwrows on npu-systolic at 32 x 32: a conv whose rows one by one do not fit left the array, or a mismatch"
	grep -E 'conv on|tiles|register' "$tmp/loops"; cat "$tmp/out"; fi
# npu-systolic: depthwise convolutions on the array, in parts of 16
# channels of one image with diagonal weights (the bias and a relu on the
# array too), at the default 16 x 16 and at 32 x 32; checked.
"$GDCC" "$SRCDIR/tests/backend/conv_depthwise.ir" -t npu-systolic --emit=loops >"$tmp/loops" 2>&1
if grep -q '^  depthwise on the array: 2 image(s) x 2 part(s) of 16 channels (the last 4), each a convolution with diagonal weights' "$tmp/loops" &&
   [ "$(grep -c '^  depthwise on the array: 1 image(s) x 2 part(s) of 16 channels (the last 8)' "$tmp/loops")" = 2 ] &&
   grep -q '^  fused into this kernel: relu y2$' "$tmp/loops" && ! grep -q 'register block' "$tmp/loops" &&
   "$GDCC" run "$SRCDIR/tests/backend/conv_depthwise.ir" -t npu-systolic --check --seed 1 >"$tmp/out" 2>&1 &&
   "$GDCC" run "$SRCDIR/tests/backend/conv_depthwise.ir" -t npu-systolic --param array_rows=32 --param array_cols=32 \
	--param scratchpad_bytes=4194304 --check --seed 1 >>"$tmp/out" 2>&1; then ok; else
	bad "conv_depthwise on npu-systolic: not on the array in parts, or a mismatch"; grep -E 'kernel|depthwise|fused' "$tmp/loops"; cat "$tmp/out"; fi
# npu-systolic: MobileNet-v2's stride-2 depthwise layer (96 channels at
# 112 x 112, bench/npu-models.sh's c4) on the array in fewer than 1.5 M
# cycles (its vector loop nest, which split the input by phase element by
# element, took 7.58 M); checked.
cat >"$tmp/dw2.ir" <<'IR'
graph dw2 {
  input x : f32[1, 96, 112, 112]
  const w : f32[96, 1, 3, 3] = normal(seed=1, mean=0, std=0.1)
  const b : f32[96] = normal(seed=2, mean=0, std=0.1)
  y = conv(x, w, b, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], group=96)
  output y
}
IR
if "$GDCC" run "$tmp/dw2.ir" -t npu-systolic --check --seed 1 --report="$tmp/dw2.json" >"$tmp/out" 2>&1 &&
   cyc=$(report_cycles "$tmp/dw2.json") && [ -n "$cyc" ] && [ "$cyc" -lt 1500000 ]; then ok; else
	bad "MobileNet's stride-2 depthwise layer on npu-systolic: a mismatch, or not under 1.5 M cycles (${cyc:-?})"; tail -3 "$tmp/out"; fi
# npu-systolic: a Clip(0, 6) after a convolution goes out with the tiles
# (tstore.relu6; a depthwise and a 1 x 1), one with other bounds or a minimum
# only is a vector pass; checked (values past both bounds).
"$GDCC" "$SRCDIR/tests/backend/conv_relu6.ir" -t npu-systolic --emit=loops >"$tmp/loops" 2>&1
"$GDCC" -S "$SRCDIR/tests/backend/conv_relu6.ir" -t npu-systolic -o "$tmp/r6.s" 2>"$tmp/err"
if [ "$(grep -c 'tiles out through min(max(x, 0), 6) (tstore.relu6)$' "$tmp/loops")" = 2 ] &&
   grep -q '^kernel [0-9]*: y3 = clip$' "$tmp/loops" && grep -q '^kernel [0-9]*: y4 = clip$' "$tmp/loops" &&
   grep -q 'tstore.relu6' "$tmp/r6.s" &&
   "$GDCC" run "$SRCDIR/tests/backend/conv_relu6.ir" -t npu-systolic --check --seed 1 >"$tmp/out" 2>&1; then ok; else
	bad "conv_relu6 on npu-systolic: a Clip(0, 6) not on the array's move out, another clip fused, or a mismatch"
	grep -E 'kernel|fused|epilogue' "$tmp/loops"; cat "$tmp/out"; fi
# npu-systolic: packed k over dense pixels (a j tile n of the output's
# pixels in order, its k row one DMA a (kh, channel) group for each output
# row it covers), at both DMA speeds; checked.
dpk="k packed, output rows one by one, estimated [0-9]* cycles; over dense pixels ([0-9]* x [0-9]* in tiles of 16), [0-9]*: dense pixels"
"$GDCC" "$SRCDIR/tests/backend/conv_packed_dense.ir" -t npu-systolic --emit=loops >"$tmp/loops" 2>&1
"$GDCC" "$SRCDIR/tests/backend/conv_packed_dense.ir" -t npu-systolic --param dma_bytes_per_cycle=1024 --emit=loops >"$tmp/loops2" 2>&1
if [ "$(grep -c "$dpk" "$tmp/loops")" = 2 ] && [ "$(grep -c "$dpk" "$tmp/loops2")" = 2 ] &&
   "$GDCC" run "$SRCDIR/tests/backend/conv_packed_dense.ir" -t npu-systolic --check --seed 1 >"$tmp/out" 2>&1 &&
   "$GDCC" run "$SRCDIR/tests/backend/conv_packed_dense.ir" -t npu-systolic --param dma_bytes_per_cycle=1024 --check --seed 1 >>"$tmp/out" 2>&1; then ok; else
	bad "conv_packed_dense on npu-systolic: packed k not over dense pixels, or a mismatch"; grep -E 'conv on' "$tmp/loops" "$tmp/loops2"; cat "$tmp/out"; fi
# npu-systolic at 32 x 32, weight stationary, SCALE-Sim's generous memory:
# ResNet's first layer (7 x 7 / 2, 3 -> 64, 224 x 224, bench/npu-scalesim.sh)
# packed over dense pixels fills the array's columns (372 j tiles where rows
# one by one take 436) and takes fewer cycles than SCALE-Sim's 121,939;
# checked.
cat >"$tmp/conv1.ir" <<'IR'
graph conv1 {
  input x : f32[1, 3, 224, 224]
  const w : f32[64, 3, 7, 7] = normal(seed=1, mean=0, std=0.05)
  y = conv(x, w, kernel_shape=[7, 7], strides=[2, 2])
  output y
}
IR
ws32="--param array_rows=32 --param array_cols=32 --param dataflow=weight_stationary --param dma_bytes_per_cycle=1024 --param scratchpad_bytes=4194304"
# shellcheck disable=SC2086
"$GDCC" "$tmp/conv1.ir" -t npu-systolic $ws32 --emit=loops >"$tmp/loops" 2>&1
# shellcheck disable=SC2086
if grep -q 'over dense pixels (109 x 109 in tiles of 32), [0-9]*: dense pixels$' "$tmp/loops" &&
   "$GDCC" run "$tmp/conv1.ir" -t npu-systolic $ws32 --check --seed 1 --report="$tmp/c1.json" >"$tmp/out" 2>&1 &&
   cyc=$(report_cycles "$tmp/c1.json") && [ -n "$cyc" ] && [ "$cyc" -lt 121939 ]; then ok; else
	bad "ResNet's Conv1 on npu-systolic at 32 x 32 WS: not packed over dense pixels, a mismatch, or not under 121,939 cycles (${cyc:-?})"
	grep -E 'conv on' "$tmp/loops"; tail -3 "$tmp/out"; fi
# npu-systolic: a convolution's constant bias starts the accumulators and a
# relu after it goes out with the tiles (tstore.relu): no vector pass.
"$GDCC" "$SRCDIR/examples/resnet_block.ir" -t npu-systolic --emit=loops >"$tmp/loops" 2>&1
"$GDCC" -S "$SRCDIR/examples/resnet_block.ir" -t npu-systolic -o "$tmp/rb.s" 2>"$tmp/err"
if [ "$(grep -c 'epilogue on the array: accumulators start from the bias, tiles out through relu' "$tmp/loops")" = 1 ] &&
   [ "$(grep -c 'epilogue on the array: accumulators start from the bias$' "$tmp/loops")" = 1 ] &&
   grep -q 'tstore.relu' "$tmp/rb.s" && grep -q 'tload' "$tmp/rb.s"; then ok; else
	bad "resnet_block on npu-systolic: the convolutions' bias and relu not on the array"; grep -E 'epilogue|kernel' "$tmp/loops"; fi
# npu-systolic: the rest of a convolution's fusion group that the array
# does not take (the residual add and the relu after it) is one vector pass,
# not one per node (a segment keeps pass_fuse's groups).
if grep -q '^kernel [0-9]*: y = add, relu (fusion group)$' "$tmp/loops" && ! grep -q '^kernel [0-9]*: s = add$' "$tmp/loops"; then ok; else
	bad "resnet_block on npu-systolic: the residual add and relu not one kernel after the conv"; grep '^kernel' "$tmp/loops"; fi
# npu-systolic: small maps without padding in dense pixels where that beats
# rows one by one and flattened rows (the stride-1 one), B tiles built by
# mvin.k.
"$GDCC" "$SRCDIR/tests/backend/conv_dense.ir" -t npu-systolic --emit=loops >"$tmp/loops" 2>&1
"$GDCC" -S "$SRCDIR/tests/backend/conv_dense.ir" -t npu-systolic -o "$tmp/cd.s" 2>"$tmp/err"
if [ "$(grep -c 'conv on the array: output rows one by one, .* dense pixels .*: dense pixels$' "$tmp/loops")" = 3 ] &&
   [ "$(grep -c 'conv on the array: dense pixels, .*rows flattened.*: dense pixels$' "$tmp/loops")" = 1 ] &&
   grep -q 'mvin.k' "$tmp/cd.s" && grep -q 'dmaes' "$tmp/cd.s"; then ok; else
	bad "conv_dense on npu-systolic: not three convolutions in dense pixels (the stride-1 one offered flattened rows too)"; grep 'conv on' "$tmp/loops"; fi
# npu-systolic: a small padded map flattened over a copy of its input with
# the zeros in place, made by DMA through the scratchpad; a large one
# (resnet_block's 56 x 56) not copied.
"$GDCC" "$SRCDIR/tests/backend/conv_pad_copy.ir" -t npu-systolic --emit=loops >"$tmp/loops" 2>&1
"$GDCC" "$SRCDIR/examples/resnet_block.ir" -t npu-systolic --emit=loops >"$tmp/rbloops" 2>&1
if [ "$(grep -c 'conv on the array: output rows one by one, .* flattened over a padded copy .*: padded copy$' "$tmp/loops")" = 2 ] &&
   grep -q "padded copy by DMA: 64 planes of 7 x 7" "$tmp/loops" && grep -q "padded copy by DMA: 62 planes of 6 x 5" "$tmp/loops" &&
   ! grep -q "padded copy" "$tmp/rbloops"; then ok; else
	bad "conv_pad_copy on npu-systolic: not two padded copies by DMA, or resnet_block's copied"; grep -E 'conv on|padded' "$tmp/loops" "$tmp/rbloops"; fi
# npu-systolic: B resident where several panels share a matrix B (a
# matmul, a flattened conv), and not for a gathered B (resnet_block's
# convolutions row by row); at the .md's 16 B a cycle the next panel of A
# loads during this one, with a fast DMA (1024 B a cycle: the core's
# instructions outlast the transfers) it does not (that run --check'ed).
"$GDCC" "$SRCDIR/tests/backend/tile_bresident.ir" -t npu-systolic --emit=loops >"$tmp/loops" 2>&1
"$GDCC" "$SRCDIR/tests/backend/tile_bresident.ir" -t npu-systolic --param dma_bytes_per_cycle=1024 --emit=loops >"$tmp/loops2" 2>&1
# (and the partial sums of the k chunks kept in the scratchpad: every
# panel's with B resident, the panel's with B streamed)
if [ "$(grep -c 'tiles 16x16: .* k in [2-9] chunk(s) (the partial sums of every panel kept in the scratchpad), B resident .*, the next panel of A loaded during this one, two sets' "$tmp/loops")" = 2 ] &&
   [ "$(grep -c 'tiles 16x16: .* k in [2-9] chunk(s).*, B resident (each j.s k row loaded by the chunk.s first panel, kept for the others), two sets.*(k-fused' "$tmp/loops2")" = 1 ] &&
   [ "$(grep -c 'tiles 16x16: .* k in [2-9] chunk(s) (the panel.s partial sums kept in the scratchpad), B streamed' "$tmp/loops2")" = 1 ] &&
   ! grep -q 'B resident' "$tmp/rbloops" &&
   "$GDCC" run "$SRCDIR/tests/backend/tile_bresident.ir" -t npu-systolic --param dma_bytes_per_cycle=1024 --check >"$tmp/out" 2>&1; then ok; else
	bad "tile_bresident on npu-systolic: not B resident with A prefetched and every panel's partial sums kept (16 B a cycle), and B resident k-fused without, and a panel's partial sums kept (1024), or a mismatch"
	grep -E 'tiles 16' "$tmp/loops" "$tmp/loops2" "$tmp/rbloops"; cat "$tmp/out"; fi
# npu-systolic: a phase split of 132 (phase, column chunk) pairs (regression:
# an internal error past 64).
if "$GDCC" "$SRCDIR/tests/backend/conv_phase_wide.ir" -t npu-systolic --emit=loops 2>&1 | grep -q 'phase split by DMA: 36 rows of 2100 into 2 phases of 1050'; then ok; else
	bad "conv_phase_wide on npu-systolic: not split by phase by DMA"; fi
# npu-systolic: the k-fused schedule, where the command queue covers the
# DMA's latency (32 x 32, generous DMA): all three products weight
# stationary (the panel's A loaded in the first j's k loop too), the
# matrix-vector one output stationary (A before it); both checked.
big="--param array_rows=32 --param array_cols=32 --param dma_bytes_per_cycle=1024 --param scratchpad_bytes=4194304"
# shellcheck disable=SC2086
"$GDCC" "$SRCDIR/tests/backend/tile_kfused.ir" -t npu-systolic $big --emit=loops >"$tmp/loops" 2>&1
# shellcheck disable=SC2086
"$GDCC" "$SRCDIR/tests/backend/tile_kfused.ir" -t npu-systolic $big --param dataflow=output_stationary --emit=loops >"$tmp/loops.os" 2>&1
# shellcheck disable=SC2086
if [ "$(grep -c 'tiles 32x32: .*(k-fused; the panel.s A with the first j.s row)' "$tmp/loops")" = 3 ] &&
   grep -q 'tiles 32x32: panels of 1 row tiles .*(k-fused)' "$tmp/loops.os" &&
   "$GDCC" run "$SRCDIR/tests/backend/tile_kfused.ir" -t npu-systolic $big --check >"$tmp/out" 2>&1 &&
   "$GDCC" run "$SRCDIR/tests/backend/tile_kfused.ir" -t npu-systolic $big --param dataflow=output_stationary --check >>"$tmp/out" 2>&1; then ok; else
	bad "tile_kfused on npu-systolic at 32 x 32: not three k-fused products (weight stationary) and the vector's (output stationary), or a mismatch"
	grep tiles "$tmp/loops" "$tmp/loops.os"; cat "$tmp/out"; fi
# npu-systolic: a padded stride-2 map in dense pixels over a padded copy
# (resnet_block's 56 x 56 maps: not).
"$GDCC" "$SRCDIR/tests/backend/conv_dense_padcopy.ir" -t npu-systolic --emit=loops >"$tmp/loops" 2>&1
if grep -q 'dense pixels over a padded copy (16 x 16), .*: dense pixels, copied$' "$tmp/loops" &&
   grep -q 'padded copy by DMA: 128 planes of 14 x 14 into 16 x 16' "$tmp/loops" &&
   ! grep -q 'dense pixels, copied' "$tmp/rbloops"; then ok; else
	bad "conv_dense_padcopy on npu-systolic: not dense pixels over a padded copy"; grep -E 'conv on|padded' "$tmp/loops"; fi
echo "kernels: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
