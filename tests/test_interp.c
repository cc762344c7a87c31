/* Interpreter: constants of every initializer kind, generated inputs,
 * input checking, and whole small models. */
#include <math.h>
#include <string.h>

#include "npy.h"
#include "rng.h"
#include "test_util.h"

Test(interp, inline_zeros_fill_constants)
{
	Graph *g = t_model("graph g {\n  const a : f32[2, 2] = [1, -2.5, 3, 4]\n  const z : i64[3] = zeros\n"
			   "  const f : f32[2] = fill(0.25)\n  const b : bool[3] = [1, 0, 1]\n  output a, z, f, b\n}\n");
	Tensor **o = t_run(g, NULL);
	t_assert_close(o[0], 2, DIMS(2, 2), F32S(1, -2.5f, 3, 4), 0, 0);
	t_assert_i64(o[1], 1, DIMS(3), I64S(0, 0, 0));
	t_assert_close(o[2], 1, DIMS(2), F32S(0.25f, 0.25f), 0, 0);
	cr_assert_eq(o[3]->type.dtype, DT_BOOL);
	cr_assert_eq(((uint8_t *)o[3]->data)[0], 1);
	cr_assert_eq(((uint8_t *)o[3]->data)[1], 0);
	t_free_outputs(g, o);
	graph_free(g);
}

Test(interp, random_constants_are_seeded_and_in_range)
{
	Graph *g = t_model("graph g {\n  const a : f32[1000] = random(seed=5, low=-0.5, high=0.25)\n"
			   "  const b : f32[1000] = random(seed=5, low=-0.5, high=0.25)\n"
			   "  const c : f32[1000] = random(seed=6, low=-0.5, high=0.25)\n"
			   "  const n : f32[20000] = normal(seed=1, mean=2, std=0.5)\n  output a, b, c, n\n}\n");
	Tensor **o = t_run(g, NULL);
	cr_assert_eq(memcmp(o[0]->data, o[1]->data, tensor_bytes(o[0])), 0, "same seed, same data");
	cr_assert_neq(memcmp(o[0]->data, o[2]->data, tensor_bytes(o[0])), 0, "another seed, other data");
	double lo = 1, hi = -1;
	for (int i = 0; i < 1000; i++) {
		float x = f32(o[0])[i];
		lo = x < lo ? x : lo;
		hi = x > hi ? x : hi;
	}
	cr_assert(lo >= -0.5 && hi < 0.25);
	cr_assert(lo < -0.49 && hi > 0.24, "1000 draws should come near both ends");
	double sum = 0, sq = 0;
	for (int i = 0; i < 20000; i++) {
		double x = f32(o[3])[i];
		sum += x;
		sq += x * x;
	}
	double mean = sum / 20000, sd = sqrt(sq / 20000 - mean * mean);
	/* standard error of the mean: 0.5 / sqrt(20000) = 0.0035 */
	cr_assert(fabs(mean - 2) < 0.02, "mean %g", mean);
	cr_assert(fabs(sd - 0.5) < 0.02, "sd %g", sd);
	t_free_outputs(g, o);
	graph_free(g);
}

Test(interp, rng_is_splitmix64)
{
	/* Reference values of splitmix64 from seed 0 (Vigna's published
	 * sequence): 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4. */
	Rng r;
	rng_seed(&r, 0);
	cr_assert_eq(rng_next(&r), 0xe220a8397b1dcdafull);
	cr_assert_eq(rng_next(&r), 0x6e789e6aa1b965f4ull);
}

Test(interp, npy_constant)
{
	Tensor *t = t_f32(2, DIMS(1, 3), F32S(7, 8, 9));
	char *err = NULL;
	cr_assert(npy_write("interp_w.npy", t, &err));
	tensor_free(t);
	Graph *g = t_model("graph g {\n  const w : f32[1, 3] = npy(\"interp_w.npy\")\n  output w\n}\n");
	Tensor **o = t_run(g, NULL);
	t_assert_close(o[0], 2, DIMS(1, 3), F32S(7, 8, 9), 0, 0);
	t_free_outputs(g, o);
	graph_free(g);
	remove("interp_w.npy");
}

Test(interp, input_passed_through)
{
	Graph *g = t_model("graph g {\n  input x : f32[2]\n  output x\n}\n");
	Tensor *x = t_f32(1, DIMS(2), F32S(3, 4));
	Tensor **o = t_run(g, &x);
	t_assert_close(o[0], 1, DIMS(2), F32S(3, 4), 0, 0);
	tensor_free(x);
	t_free_outputs(g, o);
	graph_free(g);
}

Test(interp, rejects_input_of_wrong_type)
{
	Graph *g = t_model("graph g {\n  input x : f32[2]\n  output x\n}\n");
	Tensor *x = t_f32(1, DIMS(3), F32S(1, 2, 3));
	Tensor *o[1] = {NULL};
	Diag d;
	diag_init(&d);
	cr_assert_not(interp_run(g, &x, o, &d));
	const DiagEntry *e = diag_find(&d, "input 'x' is f32[2] but the value given is f32[3]");
	cr_assert_not_null(e);
	cr_assert_eq(e->loc.line, 2);
	cr_assert_null(o[0]);
	diag_free(&d);
	tensor_free(x);
	graph_free(g);
}

Test(interp, generated_inputs_are_deterministic)
{
	Shape s = shape_make(1, DIMS(64));
	Tensor *a = tensor_new(DT_F32, &s), *b = tensor_new(DT_F32, &s), *c = tensor_new(DT_I64, &s);
	fill_random_input(a, rng_derive(1, 0));
	fill_random_input(b, rng_derive(1, 0));
	fill_random_input(c, rng_derive(1, 1));
	cr_assert_eq(memcmp(a->data, b->data, tensor_bytes(a)), 0);
	for (int i = 0; i < 64; i++) {
		cr_assert(f32(a)[i] >= -1 && f32(a)[i] < 1);
		int64_t v = ((int64_t *)c->data)[i];
		cr_assert(v >= 0 && v < 8);
	}
	cr_assert_neq(rng_derive(1, 0), rng_derive(1, 1));
	cr_assert_neq(rng_derive(1, 0), rng_derive(2, 0));
	tensor_free(a);
	tensor_free(b);
	tensor_free(c);
}

Test(interp, small_mlp_by_hand)
{
	/* y = relu(x W + b): x = [1, 2], W = [[1, -1], [2, 0.5]], b = [-4, 1]
	 * x W = [1 + 4, -1 + 1] = [5, 0]; + b = [1, 1]; relu = [1, 1].
	 * Second row x = [-1, 1]: x W = [-1 + 2, 1 + 0.5] = [1, 1.5];
	 * + b = [-3, 2.5]; relu = [0, 2.5]. */
	Graph *g = t_model("graph g {\n  input x : f32[2, 2]\n  const w : f32[2, 2] = [1, -1, 2, 0.5]\n"
			   "  const b : f32[2] = [-4, 1]\n  h = matmul(x, w)\n  a = add(h, b)\n  y = relu(a)\n"
			   "  output y\n}\n");
	Tensor *x = t_f32(2, DIMS(2, 2), F32S(1, 2, -1, 1));
	Tensor **o = t_run(g, &x);
	t_assert_close(o[0], 2, DIMS(2, 2), F32S(1, 1, 0, 2.5f), 0, 0);
	tensor_free(x);
	t_free_outputs(g, o);
	graph_free(g);
}
