/* The convolution's register block (core/kern_conv.c, cg_conv_block):
 * chosen from the machine's figures, which come from the target's .md. */
#include <criterion/criterion.h>

#include "cg.h"

/* ---- the convolution's register block (core/kern_conv.c) ------------- */
/* The block follows the machine's figures (the .md's): registers, lanes,
 * FMA units and latency, load ports. */
Test(loopir, conv_block_follows_the_machine)
{
	/* x86-avx2: 15 allocatable ymm, 2 FMA units of latency 4, 2 loads a
	 * cycle.  resnet18's 56 x 56 3x3 layer (64 -> 64): 6 channels x 2 rows
	 * x 1 vector, 12 accumulators + 2 input vectors + 1 broadcast. */
	ConvMachine avx2 = {15, 2, 4, 2, 1, 8};
	double cy;
	ConvBlock b = cg_conv_block(&avx2, 64, 56, 56, 64 * 9, &cy);
	cr_assert(b.mb == 6 && b.rb == 2 && b.nv == 1, "avx2: %d x %d x %d", b.mb, b.rb, b.nv);
	cr_assert_eq(cg_conv_block_regs(b.mb, b.rb, b.nv), 15);
	/* at the FMA peak (2 units x 8 lanes x 2 flop a cycle) the 231 MFLOP
	 * layer takes 7.2 M cycles; the estimate is above that, within 2x */
	cr_assert(cy > 7.2e6 && cy < 14.4e6, "estimate %g", cy);
	/* twice the input channels: about twice the cycles */
	double cy2;
	cg_conv_block(&avx2, 64, 56, 56, 128 * 9, &cy2);
	cr_assert(cy2 > 1.9 * cy && cy2 < 2.1 * cy);
	/* 31 registers (32 zmm less a scratch), 16 lanes: more accumulators */
	ConvMachine wide = {31, 2, 4, 2, 1, 16};
	b = cg_conv_block(&wide, 64, 56, 56, 64 * 9, &cy);
	cr_assert(b.mb * b.rb * b.nv >= 18 && cg_conv_block_regs(b.mb, b.rb, b.nv) <= 31, "wide: %d x %d x %d", b.mb, b.rb,
		  b.nv);
	/* a depthwise layer (one channel per group) blocks over rows and
	 * vectors, enough chains for 1.5 x latency x units */
	b = cg_conv_block(&avx2, 1, 112, 112, 9, &cy);
	cr_assert(b.mb == 1 && b.rb * b.nv >= 12 && cg_conv_block_regs(b.mb, b.rb, b.nv) <= 15, "dw: %d x %d x %d", b.mb,
		  b.rb, b.nv);
	/* four registers: a block that fits them */
	ConvMachine tiny = {4, 1, 4, 1, 1, 4};
	b = cg_conv_block(&tiny, 64, 56, 56, 64 * 9, &cy);
	cr_assert(cg_conv_block_regs(b.mb, b.rb, b.nv) <= 4 && cy > 0);
	/* two registers: nothing fits */
	ConvMachine none = {2, 1, 4, 1, 1, 4};
	cg_conv_block(&none, 64, 56, 56, 64 * 9, &cy);
	cr_assert(cy < 0);
	/* one load port: fewer loads per FMA than with two (a block of more
	 * channels than vectors, whose loads are fewer) */
	ConvMachine one_port = {15, 2, 4, 1, 1, 8};
	b = cg_conv_block(&one_port, 64, 7, 7, 512 * 9, &cy);
	double loads = (double)b.rb * b.nv + b.mb, fmas = (double)b.mb * b.rb * b.nv;
	cr_assert(loads / fmas <= 8.0 / 12.0 + 1e-9, "one port: %d x %d x %d", b.mb, b.rb, b.nv);
}
