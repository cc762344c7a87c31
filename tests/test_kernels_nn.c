/* Conv, pooling and normalization: reference kernels against values
 * worked out by hand (the arithmetic is in the comments), and the shape
 * rules' rejections with their messages and locations. */
#include <math.h>
#include <stdlib.h>

#include "test_util.h"

#define TOL 1e-6

/* Run a model with one input x and one output; compare with want. */
static void check1(const char *text, Tensor *x, int rank, const int64_t *dims, const float *want)
{
	Graph *g = t_model(text);
	Tensor *in[1] = {x};
	Tensor **o = t_run(g, in);
	t_assert_close(o[0], rank, dims, want, TOL, TOL);
	t_free_outputs(g, o);
	graph_free(g);
	tensor_free(x);
}

static void expect_err(const char *text, const char *msg, int line, int col)
{
	Diag d;
	t_expect_errors(text, &d);
	t_assert_error_at(&d, msg, line, col);
	diag_free(&d);
}

/* x = [[0,1,2],[3,4,5],[6,7,8]] and w = [[1,2],[3,4]] serve many conv tests. */
static Tensor *x3x3(void)
{
	return t_f32(4, DIMS(1, 1, 3, 3), F32S(0, 1, 2, 3, 4, 5, 6, 7, 8));
}

#define CONV_HEAD "graph t {\n  input x : f32[1,1,3,3]\n  const w : f32[1,1,2,2] = [1, 2, 3, 4]\n"

/* ---- conv ---------------------------------------------------------------- */
Test(nn, conv_no_padding)
{
	/* y00 = 0*1+1*2+3*3+4*4 = 27, y01 = 1+4+12+20 = 37,
	 * y10 = 3+8+18+28 = 57, y11 = 4+10+21+32 = 67 */
	check1(CONV_HEAD "  y = conv(x, w)\n  output y\n}\n", x3x3(), 4, DIMS(1, 1, 2, 2), F32S(27, 37, 57, 67));
	check1(CONV_HEAD "  y = conv(x, w, auto_pad=\"VALID\", kernel_shape=[2,2])\n  output y\n}\n", x3x3(), 4,
	       DIMS(1, 1, 2, 2), F32S(27, 37, 57, 67));
}

Test(nn, conv_bias)
{
	check1("graph t {\n  input x : f32[1,1,3,3]\n  const w : f32[1,1,2,2] = [1, 2, 3, 4]\n"
	       "  const b : f32[1] = [0.5]\n  y = conv(x, w, b)\n  output y\n}\n",
	       x3x3(), 4, DIMS(1, 1, 2, 2), F32S(27.5, 37.5, 57.5, 67.5));
}

Test(nn, conv_stride_and_symmetric_pads)
{
	/* Padded to 5x5, windows start at -1 and 1 on each axis:
	 * y00 = x00*w11 = 0; y01 = x01*w10 + x02*w11 = 3 + 8 = 11;
	 * y10 = x10*w01 + x20*w11 = 6 + 24 = 30; y11 = 4+10+21+32 = 67 */
	check1(CONV_HEAD "  y = conv(x, w, pads=[1,1,1,1], strides=[2,2])\n  output y\n}\n", x3x3(), 4,
	       DIMS(1, 1, 2, 2), F32S(0, 11, 30, 67));
}

Test(nn, conv_asymmetric_pads)
{
	/* pads [h_begin 0, w_begin 1, h_end 1, w_end 0]: out 3x3,
	 * y[r][c] = sum x[r+a][c-1+b] * w[a][b].
	 * r0: x00*2+x10*4 = 12, 27, 37
	 * r1: x10*2+x20*4 = 30, 57, 67
	 * r2 (row 3 is padding): x20*2 = 12, x20*1+x21*2 = 20, x21*1+x22*2 = 23 */
	check1(CONV_HEAD "  y = conv(x, w, pads=[0,1,1,0])\n  output y\n}\n", x3x3(), 4, DIMS(1, 1, 3, 3),
	       F32S(12, 27, 37, 30, 57, 67, 12, 20, 23));
}

Test(nn, conv_dilation)
{
	/* dilated 2x2 kernel spans 3x3: x00*1 + x02*2 + x20*3 + x22*4 = 0+4+18+32 */
	check1(CONV_HEAD "  y = conv(x, w, dilations=[2,2])\n  output y\n}\n", x3x3(), 4, DIMS(1, 1, 1, 1),
	       F32S(54));
}

Test(nn, conv_auto_pad_same)
{
	/* SAME_UPPER, stride 1: total pad 1, at the end.
	 * y02 = x02*1 + x12*3 = 17, y12 = x12*1 + x22*3 = 29,
	 * y20 = x20*1 + x21*2 = 20, y21 = x21*1 + x22*2 = 23, y22 = x22*1 = 8 */
	check1(CONV_HEAD "  y = conv(x, w, auto_pad=\"SAME_UPPER\")\n  output y\n}\n", x3x3(), 4, DIMS(1, 1, 3, 3),
	       F32S(27, 37, 17, 57, 67, 29, 20, 23, 8));
	/* SAME_LOWER: the pad at the beginning; windows rows r-1..r, cols c-1..c.
	 * y00 = x00*4 = 0, y01 = x00*3 + x01*4 = 4, y02 = x01*3 + x02*4 = 11,
	 * y10 = x00*2 + x10*4 = 12, y20 = x10*2 + x20*4 = 30 */
	check1(CONV_HEAD "  y = conv(x, w, auto_pad=\"SAME_LOWER\")\n  output y\n}\n", x3x3(), 4, DIMS(1, 1, 3, 3),
	       F32S(0, 4, 11, 12, 27, 37, 30, 57, 67));
	/* SAME_UPPER, stride 2: out ceil(3/2) = 2, total pad (2-1)*2 + 2 - 3 = 1
	 * at the end; windows start at 0 and 2: 27, 17, 20, 8 */
	check1(CONV_HEAD "  y = conv(x, w, auto_pad=\"SAME_UPPER\", strides=[2,2])\n  output y\n}\n", x3x3(), 4,
	       DIMS(1, 1, 2, 2), F32S(27, 17, 20, 8));
}

Test(nn, conv_groups)
{
	/* C = 4, group 2: output 0 sees channels 0,1, output 1 channels 2,3.
	 * y0 = 1*1 + 2*10 = 21, y1 = 3*100 + 4*1000 = 4300 */
	check1("graph t {\n  input x : f32[1,4,1,1]\n  const w : f32[2,2,1,1] = [1, 10, 100, 1000]\n"
	       "  y = conv(x, w, group=2)\n  output y\n}\n",
	       t_f32(4, DIMS(1, 4, 1, 1), F32S(1, 2, 3, 4)), 4, DIMS(1, 2, 1, 1), F32S(21, 4300));
	/* C = 2, M = 4, group 2 (a depthwise conv with multiplier 2):
	 * outputs 0,1 from channel 0 = [1,2,3,4], outputs 2,3 from channel 1 = [5,6,7,8].
	 * w0 = [1,0,0,0] -> 1, w1 = ones -> 10, w2 = [0,0,0,1] -> 8,
	 * w3 = [1,-1,1,-1] -> 5-6+7-8 = -2; plus bias [1,2,3,4] */
	check1("graph t {\n  input x : f32[1,2,2,2]\n"
	       "  const w : f32[4,1,2,2] = [1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, -1, 1, -1]\n"
	       "  const b : f32[4] = [1, 2, 3, 4]\n  y = conv(x, w, b, group=2)\n  output y\n}\n",
	       t_f32(4, DIMS(1, 2, 2, 2), F32S(1, 2, 3, 4, 5, 6, 7, 8)), 4, DIMS(1, 4, 1, 1), F32S(2, 12, 11, 2));
}

Test(nn, conv_depthwise)
{
	/* group = C = 3: ch0 [1,2,3,4] * ones = 10; ch1 [5,6,7,8] * [1,0,0,-1] = -3;
	 * ch2 [9,10,11,12] * [0,.5,.5,0] = 10.5 */
	check1("graph t {\n  input x : f32[1,3,2,2]\n"
	       "  const w : f32[3,1,2,2] = [1, 1, 1, 1, 1, 0, 0, -1, 0, 0.5, 0.5, 0]\n"
	       "  y = conv(x, w, group=3)\n  output y\n}\n",
	       t_f32(4, DIMS(1, 3, 2, 2), F32S(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)), 4, DIMS(1, 3, 1, 1),
	       F32S(10, -3, 10.5));
	/* depthwise with pads 1 and stride 2 on 2x2 planes, 1x1 kernels [2, 3]:
	 * padded 4x4, windows at -1 and 1: only (1,1) of each plane is inside */
	check1("graph t {\n  input x : f32[1,2,2,2]\n  const w : f32[2,1,1,1] = [2, 3]\n"
	       "  y = conv(x, w, group=2, pads=[1,1,1,1], strides=[2,2])\n  output y\n}\n",
	       t_f32(4, DIMS(1, 2, 2, 2), F32S(1, 2, 3, 4, 5, 6, 7, 8)), 4, DIMS(1, 2, 2, 2),
	       F32S(0, 0, 0, 8, 0, 0, 0, 24));
}

Test(nn, conv_batch_and_channels)
{
	/* N = 2, C = 2, M = 2, 1x1 kernels: y[n][m] = sum_c w[m][c] * x[n][c].
	 * w = [[1,2],[-1,1]]; n0: x = [1],[3] -> 7, 2; n1: x = [2],[-1] -> 0, -3 */
	check1("graph t {\n  input x : f32[2,2,1,1]\n  const w : f32[2,2,1,1] = [1, 2, -1, 1]\n"
	       "  y = conv(x, w)\n  output y\n}\n",
	       t_f32(4, DIMS(2, 2, 1, 1), F32S(1, 3, 2, -1)), 4, DIMS(2, 2, 1, 1), F32S(7, 2, 0, -3));
}

Test(nn, conv_1d)
{
	/* x = [1..5], w = [1,0,-1], pads 1, stride 2: out (5+2-3)/2+1 = 3,
	 * windows -1..1: 0 - 2 = -2; 1..3: 2 - 4 = -2; 3..5: 4 - 0 = 4 */
	check1("graph t {\n  input x : f32[1,1,5]\n  const w : f32[1,1,3] = [1, 0, -1]\n"
	       "  y = conv(x, w, pads=[1,1], strides=[2])\n  output y\n}\n",
	       t_f32(3, DIMS(1, 1, 5), F32S(1, 2, 3, 4, 5)), 3, DIMS(1, 1, 3), F32S(-2, -2, 4));
	/* dilation 2: x0*1 + x2*0 + x4*(-1) = -4 */
	check1("graph t {\n  input x : f32[1,1,5]\n  const w : f32[1,1,3] = [1, 0, -1]\n"
	       "  y = conv(x, w, dilations=[2])\n  output y\n}\n",
	       t_f32(3, DIMS(1, 1, 5), F32S(1, 2, 3, 4, 5)), 3, DIMS(1, 1, 1), F32S(-4));
}

Test(nn, conv_3d)
{
	/* x[d][h][w] = 1..8, kernel [2,1,2] = [[1,2]],[[3,4]] (d, w):
	 * h0: 1*1 + 2*2 + 5*3 + 6*4 = 44; h1: 3*1 + 4*2 + 7*3 + 8*4 = 64 */
	check1("graph t {\n  input x : f32[1,1,2,2,2]\n  const w : f32[1,1,2,1,2] = [1, 2, 3, 4]\n"
	       "  y = conv(x, w)\n  output y\n}\n",
	       t_f32(5, DIMS(1, 1, 2, 2, 2), F32S(1, 2, 3, 4, 5, 6, 7, 8)), 5, DIMS(1, 1, 1, 2, 1), F32S(44, 64));
	/* w_begin pad 1: column 0 of the output sees cols -1,0:
	 * h0: x[0][0][0]*2 + x[1][0][0]*4 = 2 + 20 = 22; h1: 3*2 + 7*4 = 34 */
	check1("graph t {\n  input x : f32[1,1,2,2,2]\n  const w : f32[1,1,2,1,2] = [1, 2, 3, 4]\n"
	       "  const b : f32[1] = [-1]\n  y = conv(x, w, b, pads=[0,0,1,0,0,0])\n  output y\n}\n",
	       t_f32(5, DIMS(1, 1, 2, 2, 2), F32S(1, 2, 3, 4, 5, 6, 7, 8)), 5, DIMS(1, 1, 1, 2, 2),
	       F32S(21, 43, 33, 63));
}

/* ---- conv rejections ------------------------------------------------------ */
Test(nn, conv_rejects_group_not_dividing_channels)
{
	expect_err("graph t {\n  input x : f32[1,3,4,4]\n  const w : f32[2,1,2,2] = zeros\n"
		   "  y = conv(x, w, group=2)\n  output y\n}\n",
		   "conv: channels not divisible by group: operand 1 ('x') is f32[1,3,4,4] with 3 channels, group = 2",
		   4, 18);
	expect_err("graph t {\n  input x : f32[1,4,4,4]\n  const w : f32[3,2,2,2] = zeros\n"
		   "  y = conv(x, w, group=2)\n  output y\n}\n",
		   "conv: output channels not divisible by group: operand 2 ('w') is f32[3,2,2,2]", 4, 18);
}

Test(nn, conv_rejects_weight_channel_mismatch)
{
	expect_err("graph t {\n  input x : f32[1,3,4,4]\n  const w : f32[2,2,2,2] = zeros\n"
		   "  y = conv(x, w)\n  output y\n}\n",
		   "conv: shape mismatch: operand 2 ('w') is f32[2,2,2,2] and operand 1 ('x') is f32[1,3,4,4]: the "
		   "weights have 2 input channels per group, expected 3",
		   4, 15);
	expect_err("graph t {\n  input x : f32[1,3,4,4]\n  const w : f32[2,3,2] = zeros\n"
		   "  y = conv(x, w)\n  output y\n}\n",
		   "conv: shape mismatch: operand 2 ('w') is f32[2,3,2] and operand 1 ('x') is f32[1,3,4,4]", 4, 15);
}

Test(nn, conv_rejects_bad_bias_and_kernel_shape)
{
	expect_err("graph t {\n  input x : f32[1,1,4,4]\n  const w : f32[2,1,2,2] = zeros\n"
		   "  const b : f32[3] = zeros\n  y = conv(x, w, b)\n  output y\n}\n",
		   "conv: shape mismatch: operand 3 ('b') is f32[3] and operand 2 ('w') is f32[2,1,2,2]", 5, 18);
	expect_err("graph t {\n  input x : f32[1,1,4,4]\n  const w : f32[2,1,2,2] = zeros\n"
		   "  y = conv(x, w, kernel_shape=[3,3])\n  output y\n}\n",
		   "conv: attribute 'kernel_shape' = [3,3] does not match the weights: operand 2 ('w') is f32[2,1,2,2]",
		   4, 18);
}

Test(nn, conv_rejects_list_lengths)
{
	expect_err(CONV_HEAD "  y = conv(x, w, pads=[1,1])\n  output y\n}\n",
		   "conv: attribute 'pads' has 2 entries, expected 4", 4, 18);
	expect_err(CONV_HEAD "  y = conv(x, w, strides=[1,1,1])\n  output y\n}\n",
		   "conv: attribute 'strides' has 3 entries, expected 2", 4, 18);
	expect_err(CONV_HEAD "  y = conv(x, w, dilations=[2])\n  output y\n}\n",
		   "conv: attribute 'dilations' has 1 entries, expected 2", 4, 18);
	expect_err(CONV_HEAD "  y = conv(x, w, auto_pad=\"SAME_UPPER\", pads=[1,1,1,1])\n  output y\n}\n",
		   "conv: attribute 'pads' = [1,1,1,1] cannot be used with auto_pad = SAME_UPPER", 4, 41);
}

Test(nn, conv_rejects_kernel_larger_than_input)
{
	expect_err("graph t {\n  input x : f32[1,1,2,2]\n  const w : f32[1,1,3,3] = zeros\n"
		   "  y = conv(x, w)\n  output y\n}\n",
		   "conv: output would be empty: spatial axis 0 of f32[1,1,2,2] has size 2 (2 with pads) but the kernel "
		   "spans 3",
		   4, 7);
	/* the same kernel fits once padded: 2 + 1 = 3 */
	Graph *g = t_model("graph t {\n  input x : f32[1,1,2,2]\n  const w : f32[1,1,3,3] = zeros\n"
			   "  y = conv(x, w, pads=[1,1,0,0])\n  output y\n}\n");
	cr_assert_eq(g->outputs[0]->type.shape.dim[2], 1);
	graph_free(g);
	expect_err(CONV_HEAD "  y = conv(x, w, dilations=[3,1])\n  output y\n}\n",
		   "conv: output would be empty: spatial axis 0 of f32[1,1,3,3] has size 3 (3 with pads) but the kernel "
		   "spans 4 (size 2, dilation 3)",
		   4, 7);
}

Test(nn, conv_rejects_dtype_and_rank)
{
	expect_err("graph t {\n  input x : i64[1,1,3,3]\n  const w : i64[1,1,2,2] = zeros\n"
		   "  y = conv(x, w)\n  output y\n}\n",
		   "conv: dtype mismatch: operand 1 ('x') is i64, expected f32", 4, 12);
	expect_err("graph t {\n  input x : f32[3,3]\n  const w : f32[1,1] = zeros\n"
		   "  y = conv(x, w)\n  output y\n}\n",
		   "conv: operand 1 ('x') has type f32[3,3]: expected rank 3 to 5", 4, 12);
}

/* ---- maxpool ---------------------------------------------------------------- */
/* x = [[3,1,4],[1,5,9],[2,6,5]] */
static Tensor *pi3x3(float sign)
{
	float v[9] = {3, 1, 4, 1, 5, 9, 2, 6, 5};
	for (int i = 0; i < 9; i++)
		v[i] *= sign;
	return t_f32(4, DIMS(1, 1, 3, 3), v);
}

#define POOL_HEAD "graph t {\n  input x : f32[1,1,3,3]\n"

Test(nn, maxpool_basic)
{
	/* max(3,1,1,5) = 5, max(1,4,5,9) = 9, max(1,5,2,6) = 6, max(5,9,6,5) = 9 */
	check1(POOL_HEAD "  y = maxpool(x, kernel_shape=[2,2])\n  output y\n}\n", pi3x3(1), 4, DIMS(1, 1, 2, 2),
	       F32S(5, 9, 6, 9));
}

Test(nn, maxpool_pads_and_strides)
{
	/* x negated, pads 1, stride 2: padding must not count as 0.
	 * y00 = -3; y01 = max(-1,-4) = -1; y10 = max(-1,-2) = -1; y11 = max(-5,-9,-6,-5) = -5 */
	check1(POOL_HEAD "  y = maxpool(x, kernel_shape=[2,2], pads=[1,1,1,1], strides=[2,2])\n  output y\n}\n",
	       pi3x3(-1), 4, DIMS(1, 1, 2, 2), F32S(-3, -1, -1, -5));
	/* asymmetric: pads [0,0,1,1] with a 2x2 kernel, stride 1: out 3x3;
	 * the last row/column windows see the last row/column only (negated) */
	check1(POOL_HEAD "  y = maxpool(x, kernel_shape=[2,2], pads=[0,0,1,1])\n  output y\n}\n", pi3x3(-1), 4,
	       DIMS(1, 1, 3, 3), F32S(-1, -1, -4, -1, -5, -5, -2, -5, -5));
}

Test(nn, maxpool_dilations)
{
	/* x = [[1,9,2,0],[8,3,7,4],[5,6,0,1],[2,4,3,9]], 2x2 kernel, dilation 2:
	 * y00 = max(1,2,5,0) = 5, y01 = max(9,0,6,1) = 9,
	 * y10 = max(8,7,2,3) = 8, y11 = max(3,4,4,9) = 9 */
	check1("graph t {\n  input x : f32[1,1,4,4]\n  y = maxpool(x, kernel_shape=[2,2], dilations=[2,2])\n"
	       "  output y\n}\n",
	       t_f32(4, DIMS(1, 1, 4, 4), F32S(1, 9, 2, 0, 8, 3, 7, 4, 5, 6, 0, 1, 2, 4, 3, 9)), 4, DIMS(1, 1, 2, 2),
	       F32S(5, 9, 8, 9));
}

Test(nn, maxpool_ceil_mode)
{
	/* same x, 3x3 kernel, stride 2: floor gives 1x1, ceil 2x2 with the
	 * last windows clipped: y00 = 9 (rows/cols 0-2), y01 = max(2,0,7,4,0,1) = 7,
	 * y10 = max(5,6,0,2,4,3) = 6, y11 = max(0,1,3,9) = 9 */
	const char *floor_m = "graph t {\n  input x : f32[1,1,4,4]\n"
			      "  y = maxpool(x, kernel_shape=[3,3], strides=[2,2])\n  output y\n}\n";
	const char *ceil_m = "graph t {\n  input x : f32[1,1,4,4]\n"
			     "  y = maxpool(x, kernel_shape=[3,3], strides=[2,2], ceil_mode=1)\n  output y\n}\n";
	float v[16] = {1, 9, 2, 0, 8, 3, 7, 4, 5, 6, 0, 1, 2, 4, 3, 9};
	check1(floor_m, t_f32(4, DIMS(1, 1, 4, 4), v), 4, DIMS(1, 1, 1, 1), F32S(9));
	check1(ceil_m, t_f32(4, DIMS(1, 1, 4, 4), v), 4, DIMS(1, 1, 2, 2), F32S(9, 7, 6, 9));
	/* auto_pad VALID is floor whatever ceil_mode says (ONNX: ceil((in - k + 1) / stride)) */
	check1("graph t {\n  input x : f32[1,1,4,4]\n"
	       "  y = maxpool(x, kernel_shape=[3,3], strides=[2,2], ceil_mode=1, auto_pad=\"VALID\")\n  output y\n}\n",
	       t_f32(4, DIMS(1, 1, 4, 4), v), 4, DIMS(1, 1, 1, 1), F32S(9));
}

Test(nn, maxpool_ceil_mode_drops_window_in_end_padding)
{
	/* in 3, kernel 2, stride 2, pads 1,1: ceil((3+2-2)/2)+1 = 3, but the
	 * third window would start at 2*2-1 = 3, inside the end padding:
	 * dropped.  Windows [-1,0] -> 1, [1,2] -> 3 */
	check1("graph t {\n  input x : f32[1,1,3]\n  y = maxpool(x, kernel_shape=[2], strides=[2], pads=[1,1], "
	       "ceil_mode=1)\n  output y\n}\n",
	       t_f32(3, DIMS(1, 1, 3), F32S(1, 2, 3)), 3, DIMS(1, 1, 2), F32S(1, 3));
	/* in 4, kernel 3, stride 2, pads 1,1: ceil((4+2-3)/2)+1 = 3, third
	 * window starts at 3 < 4: kept.  [-1..1] -> 2, [1..3] -> 4, [3..5] -> 4;
	 * floor mode gives the first two */
	check1("graph t {\n  input x : f32[1,1,4]\n  y = maxpool(x, kernel_shape=[3], strides=[2], pads=[1,1], "
	       "ceil_mode=1)\n  output y\n}\n",
	       t_f32(3, DIMS(1, 1, 4), F32S(1, 2, 3, 4)), 3, DIMS(1, 1, 3), F32S(2, 4, 4));
	check1("graph t {\n  input x : f32[1,1,4]\n  y = maxpool(x, kernel_shape=[3], strides=[2], pads=[1,1])\n"
	       "  output y\n}\n",
	       t_f32(3, DIMS(1, 1, 4), F32S(1, 2, 3, 4)), 3, DIMS(1, 1, 2), F32S(2, 4));
}

Test(nn, maxpool_1d_and_auto_pad)
{
	/* x = [1,3,2,5,4], kernel 2: [3,3,5,5] */
	check1("graph t {\n  input x : f32[1,1,5]\n  y = maxpool(x, kernel_shape=[2])\n  output y\n}\n",
	       t_f32(3, DIMS(1, 1, 5), F32S(1, 3, 2, 5, 4)), 3, DIMS(1, 1, 4), F32S(3, 3, 5, 5));
	/* SAME_UPPER: one pad at the end -> last window [4] = 4 */
	check1("graph t {\n  input x : f32[1,1,5]\n  y = maxpool(x, kernel_shape=[2], auto_pad=\"SAME_UPPER\")\n"
	       "  output y\n}\n",
	       t_f32(3, DIMS(1, 1, 5), F32S(1, 3, 2, 5, 4)), 3, DIMS(1, 1, 5), F32S(3, 3, 5, 5, 4));
	/* SAME_LOWER: one pad at the beginning -> first window [1] = 1 */
	check1("graph t {\n  input x : f32[1,1,5]\n  y = maxpool(x, kernel_shape=[2], auto_pad=\"SAME_LOWER\")\n"
	       "  output y\n}\n",
	       t_f32(3, DIMS(1, 1, 5), F32S(1, 3, 2, 5, 4)), 3, DIMS(1, 1, 5), F32S(1, 3, 3, 5, 5));
	/* SAME_UPPER with stride 2: out ceil(5/2) = 3, total pad (3-1)*2+2-5 = 1:
	 * windows [0,1] -> 3, [2,3] -> 5, [4,5] -> 4 */
	check1("graph t {\n  input x : f32[1,1,5]\n"
	       "  y = maxpool(x, kernel_shape=[2], strides=[2], auto_pad=\"SAME_UPPER\")\n  output y\n}\n",
	       t_f32(3, DIMS(1, 1, 5), F32S(1, 3, 2, 5, 4)), 3, DIMS(1, 1, 3), F32S(3, 5, 4));
}

Test(nn, maxpool_3d)
{
	/* x[d][h][w] = [[[1,8],[3,6]],[[5,4],[7,2]]], kernel [1,2,1]: max over h:
	 * d0: max(1,3) = 3, max(8,6) = 8; d1: max(5,7) = 7, max(4,2) = 4 */
	check1("graph t {\n  input x : f32[1,1,2,2,2]\n  y = maxpool(x, kernel_shape=[1,2,1])\n  output y\n}\n",
	       t_f32(5, DIMS(1, 1, 2, 2, 2), F32S(1, 8, 3, 6, 5, 4, 7, 2)), 5, DIMS(1, 1, 2, 1, 2), F32S(3, 8, 7, 4));
	check1("graph t {\n  input x : f32[1,1,2,2,2]\n  y = maxpool(x, kernel_shape=[2,2,2])\n  output y\n}\n",
	       t_f32(5, DIMS(1, 1, 2, 2, 2), F32S(1, 8, 3, 6, 5, 4, 7, 2)), 5, DIMS(1, 1, 1, 1, 1), F32S(8));
}

Test(nn, maxpool_channels_and_nan)
{
	/* two planes pooled separately; a NaN in the window propagates */
	check1("graph t {\n  input x : f32[2,1,1,2]\n  y = maxpool(x, kernel_shape=[1,2])\n  output y\n}\n",
	       t_f32(4, DIMS(2, 1, 1, 2), F32S(-7, -8, NAN, 1)), 4, DIMS(2, 1, 1, 1), F32S(-7, NAN));
}

Test(nn, maxpool_rejections)
{
	expect_err(POOL_HEAD "  y = maxpool(x, strides=[1,1])\n  output y\n}\n",
		   "maxpool: missing required attribute 'kernel_shape'", 3, 7);
	expect_err(POOL_HEAD "  y = maxpool(x, kernel_shape=[2])\n  output y\n}\n",
		   "maxpool: attribute 'kernel_shape' has 1 entries, expected 2 (one for each of the 2 spatial axes of "
		   "f32[1,1,3,3])",
		   3, 18);
	expect_err(POOL_HEAD "  y = maxpool(x, kernel_shape=[4,2])\n  output y\n}\n",
		   "maxpool: output would be empty: spatial axis 0 of f32[1,1,3,3] has size 3 (3 with pads) but the "
		   "kernel spans 4",
		   3, 7);
	expect_err(POOL_HEAD "  y = maxpool(x, kernel_shape=[2,2], pads=[0,0,0])\n  output y\n}\n",
		   "maxpool: attribute 'pads' has 3 entries, expected 4", 3, 38);
	/* a window entirely in the padding */
	expect_err(POOL_HEAD "  y = maxpool(x, kernel_shape=[1,1], pads=[1,0,0,0])\n  output y\n}\n",
		   "maxpool: window 0 along spatial axis 0 of f32[1,1,3,3] covers only padding", 3, 38);
	expect_err("graph t {\n  input x : f32[3,3]\n  y = maxpool(x, kernel_shape=[2])\n  output y\n}\n",
		   "maxpool: operand 1 ('x') has type f32[3,3]: expected rank 3 to 5", 3, 15);
}

/* ---- avgpool ---------------------------------------------------------------- */
/* x = [[1,2,3],[4,5,6],[7,8,9]] */
static Tensor *seq3x3(void)
{
	return t_f32(4, DIMS(1, 1, 3, 3), F32S(1, 2, 3, 4, 5, 6, 7, 8, 9));
}

Test(nn, avgpool_basic)
{
	/* (1+2+4+5)/4 = 3, (2+3+5+6)/4 = 4, (4+5+7+8)/4 = 6, (5+6+8+9)/4 = 7 */
	check1(POOL_HEAD "  y = avgpool(x, kernel_shape=[2,2])\n  output y\n}\n", seq3x3(), 4, DIMS(1, 1, 2, 2),
	       F32S(3, 4, 6, 7));
}

Test(nn, avgpool_pads_count_include_pad)
{
	/* pads 1, stride 2, kernel 2: windows rows/cols {-1,0} and {1,2}.
	 * excluding pads: 1/1, (2+3)/2, (4+7)/2, (5+6+8+9)/4 */
	check1(POOL_HEAD "  y = avgpool(x, kernel_shape=[2,2], pads=[1,1,1,1], strides=[2,2])\n  output y\n}\n",
	       seq3x3(), 4, DIMS(1, 1, 2, 2), F32S(1, 2.5, 5.5, 7));
	/* including pads: every window counts 4 */
	check1(POOL_HEAD "  y = avgpool(x, kernel_shape=[2,2], pads=[1,1,1,1], strides=[2,2], "
			 "count_include_pad=1)\n  output y\n}\n",
	       seq3x3(), 4, DIMS(1, 1, 2, 2), F32S(0.25, 1.25, 2.75, 7));
	/* kernel 3, pads 1, stride 1: corners see 4 elements, edges 6, centre 9 */
	check1(POOL_HEAD "  y = avgpool(x, kernel_shape=[3,3], pads=[1,1,1,1])\n  output y\n}\n", seq3x3(), 4,
	       DIMS(1, 1, 3, 3), F32S(12 / 4.0, 21 / 6.0, 16 / 4.0, 27 / 6.0, 5, 33 / 6.0, 24 / 4.0, 39 / 6.0, 28 / 4.0));
	check1(POOL_HEAD "  y = avgpool(x, kernel_shape=[3,3], pads=[1,1,1,1], count_include_pad=1)\n"
			 "  output y\n}\n",
	       seq3x3(), 4, DIMS(1, 1, 3, 3),
	       F32S(12 / 9.0, 21 / 9.0, 16 / 9.0, 27 / 9.0, 5, 33 / 9.0, 24 / 9.0, 39 / 9.0, 28 / 9.0));
}

Test(nn, avgpool_ceil_mode)
{
	/* x = 1..16 in 4x4, kernel 3, stride 2, ceil_mode: 2x2 with the last
	 * windows clipped at the end of the input:
	 * y00 = (1+2+3+5+6+7+9+10+11)/9 = 6, y01 = (3+4+7+8+11+12)/6 = 7.5,
	 * y10 = (9+10+11+13+14+15)/6 = 12, y11 = (11+12+15+16)/4 = 13.5.
	 * Without pads the padded end is the input's end, so
	 * count_include_pad changes nothing. */
	float v[16];
	for (int i = 0; i < 16; i++)
		v[i] = (float)(i + 1);
	check1("graph t {\n  input x : f32[1,1,4,4]\n"
	       "  y = avgpool(x, kernel_shape=[3,3], strides=[2,2], ceil_mode=1)\n  output y\n}\n",
	       t_f32(4, DIMS(1, 1, 4, 4), v), 4, DIMS(1, 1, 2, 2), F32S(6, 7.5, 12, 13.5));
	check1("graph t {\n  input x : f32[1,1,4,4]\n"
	       "  y = avgpool(x, kernel_shape=[3,3], strides=[2,2], ceil_mode=1, count_include_pad=1)\n"
	       "  output y\n}\n",
	       t_f32(4, DIMS(1, 1, 4, 4), v), 4, DIMS(1, 1, 2, 2), F32S(6, 7.5, 12, 13.5));
}

Test(nn, avgpool_ceil_mode_with_pads)
{
	/* x = [1,2,3,4], kernel 3, stride 2, pads 1,1, ceil: windows [-1..1],
	 * [1..3], [3..5]; the padded extent is [-1, 5).
	 * count_include_pad 1: (0+1+2)/3 = 1, (2+3+4)/3 = 3, (4+0)/2 = 2 (position 5 clipped)
	 * count_include_pad 0: 3/2 = 1.5, 3, 4/1 = 4 */
	check1("graph t {\n  input x : f32[1,1,4]\n  y = avgpool(x, kernel_shape=[3], strides=[2], pads=[1,1], "
	       "ceil_mode=1, count_include_pad=1)\n  output y\n}\n",
	       t_f32(3, DIMS(1, 1, 4), F32S(1, 2, 3, 4)), 3, DIMS(1, 1, 3), F32S(1, 3, 2));
	check1("graph t {\n  input x : f32[1,1,4]\n  y = avgpool(x, kernel_shape=[3], strides=[2], pads=[1,1], "
	       "ceil_mode=1)\n  output y\n}\n",
	       t_f32(3, DIMS(1, 1, 4), F32S(1, 2, 3, 4)), 3, DIMS(1, 1, 3), F32S(1.5, 3, 4));
}

Test(nn, avgpool_1d_3d_dilation_same)
{
	/* 1-d, kernel 2, dilation 2 over [1..5]: {0,2} {1,3} {2,4} -> 2, 3, 4 */
	check1("graph t {\n  input x : f32[1,1,5]\n  y = avgpool(x, kernel_shape=[2], dilations=[2])\n  output y\n}\n",
	       t_f32(3, DIMS(1, 1, 5), F32S(1, 2, 3, 4, 5)), 3, DIMS(1, 1, 3), F32S(2, 3, 4));
	/* 3-d, kernel 2x2x2 over 1..8: 36/8 */
	check1("graph t {\n  input x : f32[1,1,2,2,2]\n  y = avgpool(x, kernel_shape=[2,2,2])\n  output y\n}\n",
	       t_f32(5, DIMS(1, 1, 2, 2, 2), F32S(1, 2, 3, 4, 5, 6, 7, 8)), 5, DIMS(1, 1, 1, 1, 1), F32S(4.5));
	/* SAME_UPPER over [1..5], kernel 2: the last window holds 5 alone (the
	 * pad is not counted) */
	check1("graph t {\n  input x : f32[1,1,5]\n  y = avgpool(x, kernel_shape=[2], auto_pad=\"SAME_UPPER\")\n"
	       "  output y\n}\n",
	       t_f32(3, DIMS(1, 1, 5), F32S(1, 2, 3, 4, 5)), 3, DIMS(1, 1, 5), F32S(1.5, 2.5, 3.5, 4.5, 5));
	/* SAME_LOWER with count_include_pad: the first window is (0 + 1)/2 */
	check1("graph t {\n  input x : f32[1,1,5]\n"
	       "  y = avgpool(x, kernel_shape=[2], auto_pad=\"SAME_LOWER\", count_include_pad=1)\n  output y\n}\n",
	       t_f32(3, DIMS(1, 1, 5), F32S(1, 2, 3, 4, 5)), 3, DIMS(1, 1, 5), F32S(0.5, 1.5, 2.5, 3.5, 4.5));
}

Test(nn, avgpool_all_padding_window)
{
	/* count_include_pad 1: a window of padding only averages to 0 */
	check1("graph t {\n  input x : f32[1,1,2]\n"
	       "  y = avgpool(x, kernel_shape=[1], pads=[1,0], count_include_pad=1)\n  output y\n}\n",
	       t_f32(3, DIMS(1, 1, 2), F32S(4, 6)), 3, DIMS(1, 1, 3), F32S(0, 4, 6));
	expect_err("graph t {\n  input x : f32[1,1,2]\n  y = avgpool(x, kernel_shape=[1], pads=[1,0])\n"
		   "  output y\n}\n",
		   "avgpool: window 0 along spatial axis 0 of f32[1,1,2] covers only padding", 3, 36);
}

/* ---- global pools ------------------------------------------------------------- */
Test(nn, global_pools)
{
	/* ch0 [1,2,3,4]: mean 2.5, max 4; ch1 [-1,5,0,2]: mean 1.5, max 5 */
	const char *avg = "graph t {\n  input x : f32[1,2,2,2]\n  y = global_avgpool(x)\n  output y\n}\n";
	const char *max = "graph t {\n  input x : f32[1,2,2,2]\n  y = global_maxpool(x)\n  output y\n}\n";
	float v[8] = {1, 2, 3, 4, -1, 5, 0, 2};
	check1(avg, t_f32(4, DIMS(1, 2, 2, 2), v), 4, DIMS(1, 2, 1, 1), F32S(2.5, 1.5));
	check1(max, t_f32(4, DIMS(1, 2, 2, 2), v), 4, DIMS(1, 2, 1, 1), F32S(4, 5));
	/* 1-d and 3-d spatial, two batches */
	check1("graph t {\n  input x : f32[2,1,3]\n  y = global_avgpool(x)\n  output y\n}\n",
	       t_f32(3, DIMS(2, 1, 3), F32S(1, 2, 6, -3, -3, 0)), 3, DIMS(2, 1, 1), F32S(3, -2));
	check1("graph t {\n  input x : f32[1,1,2,1,2]\n  y = global_maxpool(x)\n  output y\n}\n",
	       t_f32(5, DIMS(1, 1, 2, 1, 2), F32S(-4, -2, -3, -9)), 5, DIMS(1, 1, 1, 1, 1), F32S(-2));
	expect_err("graph t {\n  input x : f32[2,3]\n  y = global_avgpool(x)\n  output y\n}\n",
		   "global_avgpool: operand 1 ('x') has type f32[2,3]: expected rank 3 to 8", 3, 22);
}

/* ---- batchnorm ------------------------------------------------------------------ */
#define BN_CONSTS                                                                                                      \
	"  const s : f32[2] = [2, 0.5]\n  const b : f32[2] = [1, -1]\n  const m : f32[2] = [2, 3]\n"

Test(nn, batchnorm_inference)
{
	/* epsilon 0: ch0 (x-2)/2*2+1 on [1,3] -> 0, 2; ch1 var 0.25: (x-3)/0.5*0.5-1
	 * on [2,4] -> -2, 0 */
	check1("graph t {\n  input x : f32[1,2,1,2]\n" BN_CONSTS "  const v : f32[2] = [4, 0.25]\n"
	       "  y = batchnorm(x, s, b, m, v, epsilon=0)\n  output y\n}\n",
	       t_f32(4, DIMS(1, 2, 1, 2), F32S(1, 3, 2, 4)), 4, DIMS(1, 2, 1, 2), F32S(0, 2, -2, 0));
	/* epsilon 0.21 with var [3.79, 0.04]: the same divisors 2 and 0.5 */
	check1("graph t {\n  input x : f32[1,2,1,2]\n" BN_CONSTS "  const v : f32[2] = [3.79, 0.04]\n"
	       "  y = batchnorm(x, s, b, m, v, epsilon=0.21)\n  output y\n}\n",
	       t_f32(4, DIMS(1, 2, 1, 2), F32S(1, 3, 2, 4)), 4, DIMS(1, 2, 1, 2), F32S(0, 2, -2, 0));
	/* rank 2 input [N, C]: rows n=0 [1,2], n=1 [3,4] with var [4, 0.25]:
	 * ch0: 1 -> 0, 3 -> 2; ch1: 2 -> -2, 4 -> 0 */
	check1("graph t {\n  input x : f32[2,2]\n" BN_CONSTS "  const v : f32[2] = [4, 0.25]\n"
	       "  y = batchnorm(x, s, b, m, v, epsilon=0)\n  output y\n}\n",
	       t_f32(2, DIMS(2, 2), F32S(1, 2, 3, 4)), 2, DIMS(2, 2), F32S(0, -2, 2, 0));
}

Test(nn, batchnorm_training)
{
	/* x [N=2, C=2, 1]: ch0 = {1, 3}: mean 2, var 1; ch1 = {2, 6}: mean 4, var 4.
	 * scale [1,2], B [0,1], eps 0: ch0 -> -1, 1; ch1: (x-4)/2*2+1 -> -1, 3.
	 * momentum 0.75, input mean [0,10], input var [1,1]:
	 * running_mean = [0*.75 + 2*.25, 10*.75 + 4*.25] = [0.5, 8.5]
	 * running_var = [1*.75 + 1*.25, 1*.75 + 4*.25] = [1, 1.75] */
	const char *text = "graph t {\n  input x : f32[2,2,1]\n  const s : f32[2] = [1, 2]\n"
			   "  const b : f32[2] = [0, 1]\n  const m : f32[2] = [0, 10]\n  const v : f32[2] = [1, 1]\n"
			   "  y, rm, rv = batchnorm(x, s, b, m, v, epsilon=0, momentum=0.75, training_mode=1)\n"
			   "  output y, rm, rv\n}\n";
	Graph *g = t_model(text);
	Tensor *x = t_f32(3, DIMS(2, 2, 1), F32S(1, 2, 3, 6));
	Tensor **o = t_run(g, (Tensor *[]){x});
	t_assert_close(o[0], 3, DIMS(2, 2, 1), F32S(-1, -1, 1, 3), TOL, TOL);
	t_assert_close(o[1], 1, DIMS(2), F32S(0.5, 8.5), TOL, TOL);
	t_assert_close(o[2], 1, DIMS(2), F32S(1, 1.75), TOL, TOL);
	t_free_outputs(g, o);
	graph_free(g);
	/* Y alone is fine too */
	check1("graph t {\n  input x : f32[2,2,1]\n  const s : f32[2] = [1, 2]\n"
	       "  const b : f32[2] = [0, 1]\n  const m : f32[2] = [0, 10]\n  const v : f32[2] = [1, 1]\n"
	       "  y = batchnorm(x, s, b, m, v, epsilon=0, training_mode=1)\n  output y\n}\n",
	       x, 3, DIMS(2, 2, 1), F32S(-1, -1, 1, 3));
}

Test(nn, batchnorm_rejections)
{
	expect_err("graph t {\n  input x : f32[1,2,2,2]\n  const s : f32[3] = zeros\n  const b : f32[2] = zeros\n"
		   "  y = batchnorm(x, s, b, b, b)\n  output y\n}\n",
		   "batchnorm: shape mismatch: operand 2 ('s') is f32[3] and operand 1 ('x') is f32[1,2,2,2]: the scale "
		   "must be f32[2], one per channel",
		   5, 20);
	expect_err("graph t {\n  input x : f32[1,2,2,2]\n  const s : f32[2,1] = zeros\n  const b : f32[2] = zeros\n"
		   "  y = batchnorm(x, b, b, b, s)\n  output y\n}\n",
		   "batchnorm: shape mismatch: operand 5 ('s') is f32[2,1] and operand 1 ('x') is f32[1,2,2,2]", 5, 29);
	expect_err("graph t {\n  input x : f32[1,2,2,2]\n  const b : f32[2] = zeros\n"
		   "  y, rm, rv = batchnorm(x, b, b, b, b)\n  output y, rm, rv\n}\n",
		   "batchnorm: training_mode = 0 gives exactly 1 result (y), got 3 names", 4, 15);
	expect_err("graph t {\n  input x : f32[1,2,2,2]\n  const b : f32[2] = zeros\n"
		   "  y, rm = batchnorm(x, b, b, b, b, training_mode=1)\n  output y, rm\n}\n",
		   "batchnorm: training_mode = 1 gives 1 result (y) or 3", 4, 11);
	expect_err("graph t {\n  input x : f32[2]\n  const b : f32[2] = zeros\n"
		   "  y = batchnorm(x, b, b, b, b)\n  output y\n}\n",
		   "batchnorm: operand 1 ('x') has type f32[2]: expected rank 2 to 8", 4, 17);
}

/* ---- layernorm ------------------------------------------------------------------ */
/* 1/sqrt(1.25): [1,2,3,4] has mean 2.5 and variance (2.25+.25+.25+2.25)/4 = 1.25 */
#define INV125 0.894427190999915879
#define N1 (1.5 * INV125) /* 1.3416407865 */
#define N2 (0.5 * INV125) /* 0.4472135955 */

Test(nn, layernorm_last_axis)
{
	/* row0 [1,2,3,4] -> [-N1,-N2,N2,N1]; row1 [-1,1,-1,1]: mean 0, var 1 -> itself.
	 * scale [1,2,1,0.5], B [0,0,1,0], epsilon 0 */
	Graph *g = t_model("graph t {\n  input x : f32[2,4]\n  const s : f32[4] = [1, 2, 1, 0.5]\n"
			   "  const b : f32[4] = [0, 0, 1, 0]\n  y, mu, inv = layernorm(x, s, b, epsilon=0)\n"
			   "  output y, mu, inv\n}\n");
	Tensor *x = t_f32(2, DIMS(2, 4), F32S(1, 2, 3, 4, -1, 1, -1, 1));
	Tensor **o = t_run(g, (Tensor *[]){x});
	t_assert_close(o[0], 2, DIMS(2, 4), F32S(-N1, -2 * N2, N2 + 1, 0.5 * N1, -1, 2, 0, 0.5), TOL, TOL);
	t_assert_close(o[1], 2, DIMS(2, 1), F32S(2.5, 0), TOL, TOL);
	t_assert_close(o[2], 2, DIMS(2, 1), F32S(INV125, 1), TOL, TOL);
	t_free_outputs(g, o);
	graph_free(g);
	tensor_free(x);
}

Test(nn, layernorm_axis1_of_3d)
{
	/* batch0 [1,2,3,4] -> [-N1,-N2,N2,N1]; batch1 [0,0,4,4]: mean 2, var 4 ->
	 * [-1,-1,1,1]; scale [[1,2],[3,4]], no bias, epsilon 0 */
	Graph *g = t_model("graph t {\n  input x : f32[2,2,2]\n  const s : f32[2,2] = [1, 2, 3, 4]\n"
			   "  y, mu, inv = layernorm(x, s, axis=1, epsilon=0)\n  output y, mu, inv\n}\n");
	Tensor *x = t_f32(3, DIMS(2, 2, 2), F32S(1, 2, 3, 4, 0, 0, 4, 4));
	Tensor **o = t_run(g, (Tensor *[]){x});
	t_assert_close(o[0], 3, DIMS(2, 2, 2), F32S(-N1, -2 * N2, 3 * N2, 4 * N1, -1, -2, 3, 4), TOL, TOL);
	t_assert_close(o[1], 3, DIMS(2, 1, 1), F32S(2.5, 2), TOL, TOL);
	t_assert_close(o[2], 3, DIMS(2, 1, 1), F32S(INV125, 0.5), TOL, TOL);
	t_free_outputs(g, o);
	graph_free(g);
	tensor_free(x);
}

Test(nn, layernorm_broadcast_scale_and_bias)
{
	/* normalized shape [2,2]; scale [1,10] varies along the last axis, B
	 * [[0],[100]] along the first.  batch0 normalized [-N1,-N2,N2,N1],
	 * batch1 [-1,-1,1,1]; axis -2 is axis 1 */
	check1("graph t {\n  input x : f32[2,2,2]\n  const s : f32[2] = [1, 10]\n  const b : f32[2,1] = [0, 100]\n"
	       "  y = layernorm(x, s, b, axis=-2, epsilon=0)\n  output y\n}\n",
	       t_f32(3, DIMS(2, 2, 2), F32S(1, 2, 3, 4, 0, 0, 4, 4)), 3, DIMS(2, 2, 2),
	       F32S(-N1, -10 * N2, N2 + 100, 10 * N1 + 100, -1, -10, 101, 110));
	/* axis 0: the whole tensor [[1,2],[3,4]], scale f32[1] = [2] */
	check1("graph t {\n  input x : f32[2,2]\n  const s : f32[1] = [2]\n"
	       "  y = layernorm(x, s, axis=0, epsilon=0)\n  output y\n}\n",
	       t_f32(2, DIMS(2, 2), F32S(1, 2, 3, 4)), 2, DIMS(2, 2), F32S(-2 * N1, -2 * N2, 2 * N2, 2 * N1));
}

Test(nn, layernorm_epsilon)
{
	/* [0, 2]: mean 1, var 1, epsilon 3 -> 1/sqrt(4) = 0.5: [-0.5, 0.5] */
	Graph *g = t_model("graph t {\n  input x : f32[1,2]\n  const s : f32[2] = [1, 1]\n"
			   "  y, mu, inv = layernorm(x, s, epsilon=3)\n  output y, mu, inv\n}\n");
	Tensor *x = t_f32(2, DIMS(1, 2), F32S(0, 2));
	Tensor **o = t_run(g, (Tensor *[]){x});
	t_assert_close(o[0], 2, DIMS(1, 2), F32S(-0.5, 0.5), TOL, TOL);
	t_assert_close(o[1], 2, DIMS(1, 1), F32S(1), TOL, TOL);
	t_assert_close(o[2], 2, DIMS(1, 1), F32S(0.5), TOL, TOL);
	t_free_outputs(g, o);
	graph_free(g);
	tensor_free(x);
}

Test(nn, layernorm_constant_row)
{
	/* a constant row gives exactly B; with the default epsilon InvStdDev is
	 * 1/sqrt(1e-5) = 316.227766..., with epsilon 0 it is infinite and Y is
	 * still B, not NaN */
	const char *text[2] = {"graph t {\n  input x : f32[1,3]\n  const s : f32[3] = [2, 3, 4]\n"
			       "  const b : f32[3] = [0.5, -1, 7]\n  y, mu, inv = layernorm(x, s, b)\n"
			       "  output y, mu, inv\n}\n",
			       "graph t {\n  input x : f32[1,3]\n  const s : f32[3] = [2, 3, 4]\n"
			       "  const b : f32[3] = [0.5, -1, 7]\n  y, mu, inv = layernorm(x, s, b, epsilon=0)\n"
			       "  output y, mu, inv\n}\n"};
	float inv[2] = {316.227766016837933f, INFINITY};
	for (int k = 0; k < 2; k++) {
		Graph *g = t_model(text[k]);
		Tensor *x = t_f32(2, DIMS(1, 3), F32S(5.1f, 5.1f, 5.1f));
		Tensor **o = t_run(g, (Tensor *[]){x});
		t_assert_close(o[0], 2, DIMS(1, 3), F32S(0.5, -1, 7), 0, 0);
		t_assert_close(o[1], 2, DIMS(1, 1), F32S(5.1f), 0, 0);
		t_assert_close(o[2], 2, DIMS(1, 1), (float[]){inv[k]}, TOL, 0);
		t_free_outputs(g, o);
		graph_free(g);
		tensor_free(x);
	}
}

Test(nn, layernorm_rejections)
{
	expect_err("graph t {\n  input x : f32[2,3]\n  const s : f32[3] = zeros\n"
		   "  y = layernorm(x, s, axis=2)\n  output y\n}\n",
		   "layernorm: attribute 'axis' = 2 is out of range [-2, 1]", 4, 23);
	expect_err("graph t {\n  input x : f32[2,3]\n  const s : f32[3] = zeros\n"
		   "  y = layernorm(x, s, axis=-3)\n  output y\n}\n",
		   "layernorm: attribute 'axis' = -3 is out of range [-2, 1]", 4, 23);
	expect_err("graph t {\n  input x : f32[2,3,4]\n  const s : f32[3] = zeros\n"
		   "  y = layernorm(x, s)\n  output y\n}\n",
		   "layernorm: shape mismatch: operand 2 ('s') is f32[3] and operand 1 ('x') is f32[2,3,4]: not "
		   "broadcastable to the normalized shape [4] (axis 2)",
		   4, 20);
	expect_err("graph t {\n  input x : f32[2,3,4]\n  const s : f32[4] = zeros\n  const b : f32[2,3,4] = zeros\n"
		   "  y = layernorm(x, s, b, axis=1)\n  output y\n}\n",
		   "layernorm: shape mismatch: operand 3 ('b') is f32[2,3,4] and operand 1 ('x') is f32[2,3,4]: not "
		   "broadcastable to the normalized shape [3,4] (axis 1)",
		   5, 23);
}

/* ---- empty tensors ---------------------------------------------------------------
 * These call the kernel of the graph's last node directly, so that they
 * test this file's kernels only. */
static Tensor **run_last_node(const Graph *g, Tensor *const *in)
{
	const Node *n = g->nodes[g->nnodes - 1];
	Tensor **out = calloc((size_t)n->nout, sizeof *out);
	for (int k = 0; k < n->nout; k++)
		out[k] = tensor_new(n->out[k]->type.dtype, &n->out[k]->type.shape);
	Diag d;
	diag_init(&d);
	bool ok = op_info[n->op].kernel(n, in, out, &d);
	diag_free(&d);
	cr_assert(ok, "kernel failed");
	return out;
}

static void free_outs(Tensor **out, int n)
{
	for (int k = 0; k < n; k++)
		tensor_free(out[k]);
	free(out);
}

Test(nn, empty_batch)
{
	Graph *g = t_model("graph t {\n  input x : f32[0,1,3,3]\n  input w : f32[2,1,2,2]\n"
			   "  y = conv(x, w)\n  output y\n}\n");
	Tensor *in[2] = {t_f32(4, DIMS(0, 1, 3, 3), NULL), t_f32(4, DIMS(2, 1, 2, 2), F32S(1, 2, 3, 4, 5, 6, 7, 8))};
	Tensor **o = run_last_node(g, in);
	t_assert_close(o[0], 4, DIMS(0, 2, 2, 2), NULL, TOL, TOL);
	free_outs(o, 1);
	graph_free(g);
	g = t_model("graph t {\n  input x : f32[0,1,3,3]\n  y = maxpool(x, kernel_shape=[2,2])\n  output y\n}\n");
	o = run_last_node(g, in);
	t_assert_close(o[0], 4, DIMS(0, 1, 2, 2), NULL, TOL, TOL);
	free_outs(o, 1);
	graph_free(g);
	tensor_free(in[0]);
	tensor_free(in[1]);
}

Test(nn, conv_zero_channels_gives_bias)
{
	/* no input channels: every output is its bias */
	Graph *g = t_model("graph t {\n  input x : f32[1,0,3,3]\n  input w : f32[2,0,2,2]\n  input b : f32[2]\n"
			   "  y = conv(x, w, b)\n  output y\n}\n");
	Tensor *in[3] = {t_f32(4, DIMS(1, 0, 3, 3), NULL), t_f32(4, DIMS(2, 0, 2, 2), NULL),
			 t_f32(1, DIMS(2), F32S(1, 2))};
	Tensor **o = run_last_node(g, in);
	t_assert_close(o[0], 4, DIMS(1, 2, 2, 2), F32S(1, 1, 1, 1, 2, 2, 2, 2), 0, 0);
	free_outs(o, 1);
	graph_free(g);
	for (int k = 0; k < 3; k++)
		tensor_free(in[k]);
}

Test(nn, layernorm_empty_row)
{
	/* rows of no elements: Y is empty, the mean of nothing is NaN */
	Graph *g = t_model("graph t {\n  input x : f32[2,0]\n  input s : f32[0]\n"
			   "  y, mu, inv = layernorm(x, s)\n  output y, mu, inv\n}\n");
	Tensor *in[2] = {t_f32(2, DIMS(2, 0), NULL), t_f32(1, DIMS(0), NULL)};
	Tensor **o = run_last_node(g, in);
	t_assert_close(o[0], 2, DIMS(2, 0), NULL, TOL, TOL);
	t_assert_close(o[1], 2, DIMS(2, 1), F32S(NAN, NAN), TOL, TOL);
	free_outs(o, 3);
	graph_free(g);
	tensor_free(in[0]);
	tensor_free(in[1]);
}

Test(nn, batchnorm_empty_batch)
{
	/* inference: nothing to do; training: the batch mean is NaN, so are the
	 * running statistics */
	Graph *g = t_model("graph t {\n  input x : f32[0,2]\n  input s : f32[2]\n"
			   "  y, rm, rv = batchnorm(x, s, s, s, s, training_mode=1)\n  output y, rm, rv\n}\n");
	Tensor *in[5] = {t_f32(2, DIMS(0, 2), NULL)};
	for (int k = 1; k < 5; k++)
		in[k] = t_f32(1, DIMS(2), F32S(1, 1));
	Tensor **o = run_last_node(g, in);
	t_assert_close(o[0], 2, DIMS(0, 2), NULL, TOL, TOL);
	t_assert_close(o[1], 1, DIMS(2), F32S(NAN, NAN), TOL, TOL);
	t_assert_close(o[2], 1, DIMS(2), F32S(NAN, NAN), TOL, TOL);
	free_outs(o, 3);
	graph_free(g);
	for (int k = 0; k < 5; k++)
		tensor_free(in[k]);
}
