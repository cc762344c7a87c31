/* The NPU simulator (sim/npusim.c): the functional semantics of the ISA and
 * the closed forms of the timing model stated in docs/npusim.md, on tiny
 * programs written here, and a 512 x 512 x 512 GEMM generated in C. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "npusim.h"
#include "util.h"

static const Target *npu(void)
{
	const Target *t = target_lookup("npu-systolic");
	cr_assert_not_null(t);
	return t;
}

static NpuSim *load_on(const Target *t, const char *text)
{
	Diag d;
	diag_init(&d);
	NpuSim *s = npusim_new(t, &d);
	if (!s)
		diag_print(&d, stderr);
	cr_assert_not_null(s);
	bool ok = npusim_load(s, text, "t.s", &d);
	if (!ok)
		diag_print(&d, stderr);
	cr_assert(ok);
	diag_free(&d);
	return s;
}

/* Run, asserting success and a0 == 0. */
static void run_ok(NpuSim *s, int nb, void *const *bufs, const size_t *sizes)
{
	Diag d;
	diag_init(&d);
	int64_t ret = -1;
	bool ok = npusim_run(s, "gdcc_entry", nb, bufs, sizes, &ret, &d);
	if (!ok)
		diag_print(&d, stderr);
	cr_assert(ok);
	cr_assert_eq(ret, 0);
	diag_free(&d);
}

/* Run expecting a simulation error whose message contains msg at line:col. */
static void run_fails(NpuSim *s, int nb, void *const *bufs, const size_t *sizes, const char *msg, int line, int col)
{
	Diag d;
	diag_init(&d);
	int64_t ret;
	cr_assert_not(npusim_run(s, "gdcc_entry", nb, bufs, sizes, &ret, &d));
	const DiagEntry *e = diag_find(&d, msg);
	if (!e)
		diag_print(&d, stderr);
	cr_assert_not_null(e, "no error containing '%s'", msg);
	cr_assert_str_eq(e->loc.file, "t.s");
	cr_assert_eq(e->loc.line, line, "line %d, want %d", e->loc.line, line);
	cr_assert_eq(e->loc.col, col, "col %d, want %d", e->loc.col, col);
	diag_free(&d);
}

static void load_fails(const Target *t, const char *text, const char *msg, int line, int col)
{
	Diag d;
	diag_init(&d);
	NpuSim *s = npusim_new(t, &d);
	cr_assert_not_null(s);
	cr_assert_not(npusim_load(s, text, "t.s", &d));
	const DiagEntry *e = diag_find(&d, msg);
	if (!e)
		diag_print(&d, stderr);
	cr_assert_not_null(e, "no error containing '%s'", msg);
	cr_assert_eq(e->loc.line, line, "line %d, want %d", e->loc.line, line);
	cr_assert_eq(e->loc.col, col, "col %d, want %d", e->loc.col, col);
	npusim_free(s);
	diag_free(&d);
}

static Target *with2(const char *setting, const char *setting2)
{
	Diag d;
	diag_init(&d);
	const char *set[] = {setting, setting2};
	Target *t = target_with_params(npu(), setting2 ? 2 : 1, set, &d);
	if (!t)
		diag_print(&d, stderr);
	cr_assert_not_null(t);
	diag_free(&d);
	return t;
}

static Target *with(const char *setting)
{
	return with2(setting, NULL);
}

/* k mma into t0 from tiles at scratchpad 0 and `b`, then `tail`. */
static char *mma_chain(int k, int b, const char *tail)
{
	char *p = xasprintf("gdcc_entry:\n\tli a1, #0\n\tli a2, #%d\n", b);
	for (int i = 0; i < k; i++) {
		char *q = xasprintf("%s\tmma t0, [a1], [a2]\n", p);
		free(p);
		p = q;
	}
	char *q = xasprintf("%s%s\tli a0, #0\n\tret\n", p, tail);
	free(p);
	return q;
}

/* An instruction on more than four units keeps each of them busy
 * (npu-units: li on all six, throughput 2): the simulator once counted the
 * first four. */
Test(npusim, instruction_on_six_units)
{
	const Target *t = target_lookup("npu-units");
	cr_assert_not_null(t);
	NpuSim *s = load_on(t, "gdcc_entry:\n\tli a1, #1\n\tli a2, #2\n\tli a0, #0\n\tret\n");
	run_ok(s, 0, NULL, NULL);
	const char *units[] = {"ctrl", "lsu", "dma", "array", "acc", "vec"};
	for (int u = 0; u < 6; u++)
		cr_assert_float_eq(npusim_unit_busy(s, units[u]), 3 * 2 + (u == 0), 0, "%s busy %g", units[u],
				   npusim_unit_busy(s, units[u]));
	npusim_free(s);
}

/* ---- timing: closed forms (docs/npusim.md, "Closed forms") ---------------- */

Test(npusim, ws_mma_chain)
{
	/* li, li issue at 0 and 1; the first mma at 2 starts at once, preloads
	 * n = 16, streams 16; each next one streams 16 behind it; the sums of
	 * the last are ready 2n - 1 = 31 later: 2 + 16 + 16k + 31. */
	for (int k = 1; k <= 8; k++) {
		char *text = mma_chain(k, 1088, ""); /* B at row 17: bank 1 */
		NpuSim *s = load_on(npu(), text);
		run_ok(s, 0, NULL, NULL);
		cr_assert_float_eq(npusim_cycles(s), 2 + 16 + 16.0 * k + 31, 0, "k=%d: %g", k, npusim_cycles(s));
		cr_assert_float_eq(npusim_macs(s), 4096.0 * k, 0);
		cr_assert_float_eq(npusim_array_busy(s), 16 + 16.0 * k, 0);
		cr_assert_float_eq(npusim_stall(s, "bank_conflict"), 0, 0);
		cr_assert_float_eq(npusim_stall(s, "dma"), 0, 0);
		npusim_free(s);
		free(text);
	}
}

Test(npusim, ws_chain_with_fence)
{
	/* fence issues at 2 + k and waits until 49 + 16k; li a0 and ret follow. */
	int k = 4;
	char *text = mma_chain(k, 1088, "\tfence\n");
	NpuSim *s = load_on(npu(), text);
	run_ok(s, 0, NULL, NULL);
	cr_assert_float_eq(npusim_stall(s, "fence"), (49 + 16.0 * k) - (2 + k), 0);
	cr_assert_float_eq(npusim_cycles(s), 49 + 16.0 * k + 2 + 1, 0); /* li, ret (latency 1) */
	npusim_free(s);
	free(text);
}

Test(npusim, bank_conflict)
{
	/* B at row 16: rows 0 and 16 are both in bank 0 of 4: every mma streams 2n. */
	int k = 3;
	char *text = mma_chain(k, 1024, "");
	NpuSim *s = load_on(npu(), text);
	run_ok(s, 0, NULL, NULL);
	cr_assert_float_eq(npusim_cycles(s), 2 + 16 + 32.0 * k + 31, 0, "%g", npusim_cycles(s));
	cr_assert_float_eq(npusim_stall(s, "bank_conflict"), 16.0 * k, 0);
	npusim_free(s);
	free(text);
}

Test(npusim, os_mma_chain)
{
	/* Output stationary: the first mma fills 2n - 2 = 30, each streams 16;
	 * the results stay in the array (done at the last stream's end). */
	Target *t = with("dataflow=output_stationary");
	int k = 4;
	char *text = mma_chain(k, 1088, "");
	NpuSim *s = load_on(t, text);
	run_ok(s, 0, NULL, NULL);
	cr_assert_float_eq(npusim_cycles(s), 2 + 30 + 16.0 * k, 0, "%g", npusim_cycles(s));
	npusim_free(s);
	free(text);
	/* A tstore of the resident slot forces its drain (n) before its n cycles. */
	text = mma_chain(k, 1088, "\tli a3, #4096\n\ttstore [a3], t0\n");
	s = load_on(t, text);
	run_ok(s, 0, NULL, NULL);
	cr_assert_float_eq(npusim_cycles(s), 2 + 30 + 16.0 * k + 16 + 16, 0, "%g", npusim_cycles(s));
	npusim_free(s);
	free(text);
	/* One output register a PE: switching the resident slot drains it
	 * (n) and fills (2n - 2) before the stream (n). */
	Target *t1 = with2("dataflow=output_stationary", "os_output_buffers=1");
	const char *two = "gdcc_entry:\n\tli a1, #0\n\tli a2, #1088\n\tmma t0, [a1], [a2]\n\tmma t1, [a1], [a2]\n"
			  "\tli a0, #0\n\tret\n";
	s = load_on(t1, two);
	run_ok(s, 0, NULL, NULL);
	cr_assert_float_eq(npusim_cycles(s), 2 + 46 + 16 + 30 + 16, 0, "%g", npusim_cycles(s));
	npusim_free(s);
	target_copy_free(t1);
	/* Two (the .md's): t0's results move to the second set and drain
	 * there; t1's wavefront follows t0's (its fill hidden), its results
	 * done 2n - 2 after its stream: 2 + 30 + 16 + 16 + 30. */
	s = load_on(t, two);
	run_ok(s, 0, NULL, NULL);
	cr_assert_float_eq(npusim_cycles(s), 2 + 30 + 16 + 16 + 30, 0, "%g", npusim_cycles(s));
	npusim_free(s);
	/* Four one-mma folds: the third switch waits for the second set (t1's
	 * drain ends at 64 + 30 + 16 = 110), and t3's fill is paid again:
	 * 110 + 30 + 16. */
	s = load_on(t, "gdcc_entry:\n\tli a1, #0\n\tli a2, #1088\n\tmma t0, [a1], [a2]\n\tmma t1, [a1], [a2]\n"
		       "\tmma t2, [a1], [a2]\n\tmma t3, [a1], [a2]\n\tli a0, #0\n\tret\n");
	run_ok(s, 0, NULL, NULL);
	cr_assert_float_eq(npusim_cycles(s), 110 + 30 + 16, 0, "%g", npusim_cycles(s));
	npusim_free(s);
	/* A tile op on the resident slot drains it off the array: t0's chain
	 * ends at 3 + 30 + 32 = 65, drains to 81 and is stored by 97, while
	 * the array goes on (t1's chain streams 65 .. 97, fill hidden, its
	 * results done 30 later). */
	s = load_on(t, "gdcc_entry:\n\tli a1, #0\n\tli a2, #1088\n\tli a3, #4096\n\tmma t0, [a1], [a2]\n"
		       "\tmma t0, [a1], [a2]\n\ttstore [a3], t0\n\tmma t1, [a1], [a2]\n\tmma t1, [a1], [a2]\n"
		       "\tli a0, #0\n\tret\n");
	run_ok(s, 0, NULL, NULL);
	cr_assert_float_eq(npusim_cycles(s), 3 + 30 + 32 + 32 + 30, 0, "%g", npusim_cycles(s));
	npusim_free(s);
	target_copy_free(t);
}

Test(npusim, ws_vs_os_same_program)
{
	/* The same 4-mma chain: WS pays preload + drain 2n-1, OS the fill 2n-2. */
	char *text = mma_chain(4, 1088, "");
	Target *t = with("dataflow=output_stationary");
	NpuSim *ws = load_on(npu(), text), *os = load_on(t, text);
	run_ok(ws, 0, NULL, NULL);
	run_ok(os, 0, NULL, NULL);
	cr_assert_float_eq(npusim_cycles(ws) - npusim_cycles(os), (16 + 31) - 30, 0);
	npusim_free(ws);
	npusim_free(os);
	target_copy_free(t);
	free(text);
}

Test(npusim, one_mvin)
{
	/* ld at 0 (ready 2), li at 1, li at 2, mvin at 3: lands at
	 * 3 + dma_latency_cycles + 1024 / dma_bytes_per_cycle = 3 + 100 + 64. */
	NpuSim *s = load_on(npu(), "gdcc_entry:\n\tld a1, [a0]\n\tli a2, #0\n\tli a3, #16\n\tmvin [a2], [a1], a3\n"
				   "\tli a0, #0\n\tret\n");
	float buf[256] = {0};
	void *bufs[] = {buf};
	size_t sizes[] = {sizeof buf};
	run_ok(s, 1, bufs, sizes);
	cr_assert_float_eq(npusim_cycles(s), 3 + 100 + 64, 0, "%g", npusim_cycles(s));
	cr_assert_float_eq(npusim_traffic(s, "dram_read_bytes"), 1024, 0);
	cr_assert_float_eq(npusim_unit_busy(s, "dma"), 64, 0);
	npusim_free(s);
	/* With other params: latency 10, 32 bytes a cycle: 3 + 10 + 32. */
	Diag d;
	diag_init(&d);
	const char *set[] = {"dma_latency_cycles=10", "dma_bytes_per_cycle=32"};
	Target *t = target_with_params(npu(), 2, set, &d);
	cr_assert_not_null(t);
	s = load_on(t, "gdcc_entry:\n\tld a1, [a0]\n\tli a2, #0\n\tli a3, #16\n\tmvin [a2], [a1], a3\n"
		       "\tli a0, #0\n\tret\n");
	run_ok(s, 1, bufs, sizes);
	cr_assert_float_eq(npusim_cycles(s), 3 + 10 + 32, 0, "%g", npusim_cycles(s));
	npusim_free(s);
	target_copy_free(t);
	diag_free(&d);
}

Test(npusim, k_long_gemm_buffered)
{
	/* C = sum over kk of A_kk x B_kk, K = 8 n, each tile into its own
	 * scratchpad buffer (a ring deep enough to cover the DMA latency), DMA at
	 * 256 bytes a cycle (4 cycles a tile).  A_0 starts at 5 and lands at
	 * 5 + 100 + 4 = 109; B_0 starts at 9 (after A_0), lands at 113: the
	 * first mma waits 113 - 7 = 106 cycles (dma), preloads 16, streams 16;
	 * every later pair lands before the array is free: no more stalls,
	 * preloads hidden.  Total: 113 + 16 + 8 * 16 + 31. */
	Target *t = with("dma_bytes_per_cycle=256");
	char *p = xstrdup("gdcc_entry:\n\tld a1, [a0+0]\n\tld a2, [a0+8]\n\tli a3, #16\n\tli a4, #0\n\tli a5, #8256\n");
	for (int kk = 0; kk < 8; kk++) {
		char *q = xasprintf("%s%s\tmvin [a4], [a1], a3\n\tmvin [a5], [a2], a3\n\tmma t0, [a4], [a5]\n", p,
				    kk ? "\taddi a4, a4, #1024\n\taddi a5, a5, #1024\n\taddi a1, a1, #1024\n\taddi a2, a2, #1024\n"
				       : "");
		free(p);
		p = q;
	}
	char *text = xasprintf("%s\tli a0, #0\n\tret\n", p);
	free(p);
	float *a = xcalloc(8 * 256, sizeof(float)), *b = xcalloc(8 * 256, sizeof(float));
	void *bufs[] = {a, b};
	size_t sizes[] = {8 * 1024, 8 * 1024};
	NpuSim *s = load_on(t, text);
	run_ok(s, 2, bufs, sizes);
	cr_assert_float_eq(npusim_stall(s, "dma"), 106, 0, "%g", npusim_stall(s, "dma"));
	cr_assert_float_eq(npusim_array_busy(s), 16 + 8 * 16, 0);
	cr_assert_float_eq(npusim_cycles(s), 113 + 16 + 8 * 16 + 31, 0, "%g", npusim_cycles(s));
	npusim_free(s);
	free(text);
	free(a);
	free(b);
	target_copy_free(t);
}

/* ---- functional ------------------------------------------------------------ */

static uint32_t rng_state = 12345;
static float rnd(void)
{
	rng_state = rng_state * 1664525u + 1013904223u;
	return (float)((rng_state >> 8) & 0xffff) / 65536.0f * 2.0f - 1.0f;
}

Test(npusim, mma_bit_exact)
{
	/* C (16 x 16) = A x B through DMA, tzero, mma, tstore, mvout. */
	const char *text = "gdcc_entry:\n"
			   "\tld a1, [a0+0]\n\tld a2, [a0+8]\n\tld a3, [a0+16]\n"
			   "\tli a4, #16\n\tli a5, #0\n\tli a6, #1088\n\tli a7, #4096\n"
			   "\tmvin [a5], [a1], a4\n\tmvin [a6], [a2], a4\n"
			   "\ttzero t2\n\tmma t2, [a5], [a6]\n\tmma t2, [a6], [a5]\n"
			   "\ttstore [a7], t2\n\tmvout [a3], [a7], a4\n\tfence\n\tli a0, #0\n\tret\n";
	float a[256], b[256], c[256], want[256];
	for (int i = 0; i < 256; i++) {
		a[i] = rnd();
		b[i] = rnd();
	}
	for (int i = 0; i < 16; i++)
		for (int j = 0; j < 16; j++) {
			float acc = 0.0f;
			for (int k = 0; k < 16; k++)
				acc = fmaf(a[i * 16 + k], b[k * 16 + j], acc);
			for (int k = 0; k < 16; k++)
				acc = fmaf(b[i * 16 + k], a[k * 16 + j], acc);
			want[i * 16 + j] = acc;
		}
	void *bufs[] = {a, b, c};
	size_t sizes[] = {sizeof a, sizeof b, sizeof c};
	NpuSim *s = load_on(npu(), text);
	run_ok(s, 3, bufs, sizes);
	cr_assert_eq(memcmp(c, want, sizeof c), 0, "not bit-exact");
	cr_assert_float_eq(npusim_macs(s), 2 * 4096, 0);
	npusim_free(s);
}

Test(npusim, mma_t_reads_b_transposed)
{
	/* mma.t: C += A x B^T, B's tile stored n rows of k; same timing as mma */
	const char *text = "gdcc_entry:\n"
			   "\tld a1, [a0+0]\n\tld a2, [a0+8]\n\tld a3, [a0+16]\n"
			   "\tli a4, #16\n\tli a5, #0\n\tli a6, #1088\n\tli a7, #4096\n"
			   "\tmvin [a5], [a1], a4\n\tmvin [a6], [a2], a4\n"
			   "\ttzero t1\n\tmma.t t1, [a5], [a6]\n"
			   "\ttstore [a7], t1\n\tmvout [a3], [a7], a4\n\tfence\n\tli a0, #0\n\tret\n";
	float a[256], b[256], c[256], want[256];
	for (int i = 0; i < 256; i++) {
		a[i] = rnd();
		b[i] = rnd();
	}
	for (int i = 0; i < 16; i++)
		for (int j = 0; j < 16; j++) {
			float acc = 0.0f;
			for (int k = 0; k < 16; k++)
				acc = fmaf(a[i * 16 + k], b[j * 16 + k], acc);
			want[i * 16 + j] = acc;
		}
	void *bufs[] = {a, b, c};
	size_t sizes[] = {sizeof a, sizeof b, sizeof c};
	NpuSim *s = load_on(npu(), text);
	run_ok(s, 3, bufs, sizes);
	cr_assert_eq(memcmp(c, want, sizeof c), 0, "not bit-exact");
	cr_assert_float_eq(npusim_macs(s), 4096, 0);
	npusim_free(s);
}

Test(npusim, mvin_partial_and_zero_fill)
{
	/* 3 rows of 8 bytes with a DRAM stride of 12 bytes; the rest zero;
	 * tstore.relu on the way out; mvout writes 3 rows of 8 bytes at stride 12. */
	const char *text = "gdcc_entry:\n"
			   "\tld a1, [a0+0]\n\tld a2, [a0+8]\n\tli a3, #3\n\tli a4, #8\n\tli a5, #12\n"
			   "\tdmacfg a4, a5\n\tli a6, #2048\n\tmvin [a6], [a1], a3\n"
			   "\ttload t1, [a6]\n\tli a7, #3072\n\ttstore.relu [a7], t1\n"
			   "\tmvout [a2], [a7], a3\n"
			   "\tli a4, #64\n\tli a5, #64\n\tdmacfg a4, a5\n\tli a3, #16\n\taddi a2, a2, #64\n"
			   "\tmvout [a2], [a6], a3\n\tfence\n\tli a0, #0\n\tret\n";
	float in[9] = {1, -2, 99, 3, 4, 99, -5, 6, 99};
	float out[16 + 256];
	for (int i = 0; i < 16 + 256; i++)
		out[i] = 7.0f;
	void *bufs[] = {in, out};
	size_t sizes[] = {sizeof in, sizeof out};
	NpuSim *s = load_on(npu(), text);
	run_ok(s, 2, bufs, sizes);
	/* relu'd rows at stride 12 bytes: floats 0,1 / 3,4 / 6,7; 2, 5 untouched */
	float w[9] = {1, 0, 7, 3, 4, 7, 0, 6, 7};
	for (int i = 0; i < 9; i++)
		cr_assert_float_eq(out[i], w[i], 0, "out[%d] = %g", i, out[i]);
	/* the whole tile at 16 floats on: rows 0-2 hold 2 values, the rest zero */
	float *t = out + 16;
	for (int r = 0; r < 16; r++)
		for (int c = 0; c < 16; c++) {
			float e = (r < 3 && c < 2) ? in[r * 3 + c] : 0.0f;
			cr_assert_float_eq(t[r * 16 + c], e, 0, "tile[%d][%d] = %g", r, c, t[r * 16 + c]);
		}
	npusim_free(s);
}

Test(npusim, relu6_on_the_way_out_and_in_place)
{
	/* one row of 8 values into a tile; tstore.relu6 clamps to [0, 6] on
	 * the way out (a NaN stays a NaN, as the reference's Clip), trelu6 in
	 * the accumulator; both rows out */
	const char *text = "gdcc_entry:\n"
			   "\tld a1, [a0+0]\n\tld a2, [a0+8]\n\tli a3, #1\n\tli a4, #32\n\tli a5, #32\n"
			   "\tdmacfg a4, a5\n\tli a6, #2048\n\tmvin [a6], [a1], a3\n"
			   "\ttload t1, [a6]\n\tli a7, #3072\n\ttstore.relu6 [a7], t1\n\tmvout [a2], [a7], a3\n"
			   "\ttload t2, [a6]\n\ttrelu6 t2\n\tli a7, #4096\n\ttstore [a7], t2\n\taddi a2, a2, #32\n"
			   "\tmvout [a2], [a7], a3\n\tfence\n\tli a0, #0\n\tret\n";
	float in[8] = {-1.5f, 0.0f, 3.25f, 6.0f, 6.5f, 1e30f, -1e30f, NAN};
	float out[16];
	void *bufs[] = {in, out};
	size_t sizes[] = {sizeof in, sizeof out};
	NpuSim *s = load_on(npu(), text);
	run_ok(s, 2, bufs, sizes);
	float w[8] = {0.0f, 0.0f, 3.25f, 6.0f, 6.0f, 6.0f, 0.0f, NAN};
	for (int h = 0; h < 2; h++)
		for (int i = 0; i < 7; i++)
			cr_assert_float_eq(out[h * 8 + i], w[i], 0, "out[%d] = %g", h * 8 + i, out[h * 8 + i]);
	cr_assert(isnan(out[7]) && isnan(out[15]), "NaN clamped: %g %g", out[7], out[15]);
	npusim_free(s);
}

Test(npusim, mvin_spans_tiles)
{
	/* 40 rows of 64 bytes (the .md's dma_max_tiles lets one mvin fill
	 * several tiles): rows 0-15 into the tile at 0, 16-31 into the next,
	 * 32-39 into the third, whose rows 40-47 are zeroed; the tile after
	 * it untouched; mvout of 40 rows back out the same way; then the DMA
	 * time is that of 40 rows (latency 100, 16 bytes a cycle) */
	const char *text = "gdcc_entry:\n"
			   "\tld a1, [a0+0]\n\tld a2, [a0+8]\n\tli a6, #3072\n\tli a3, #16\n\tmvin [a6], [a1], a3\n"
			   "\tli a6, #0\n\tli a3, #40\n\tmvin [a6], [a1], a3\n"
			   "\tli a3, #48\n\tmvout [a2], [a6], a3\n\tli a3, #16\n\tli a6, #3072\n\taddi a2, a2, #3072\n"
			   "\tmvout [a2], [a6], a3\n\tfence\n\tli a0, #0\n\tret\n";
	static float in[40 * 16], out[64 * 16];
	for (int i = 0; i < 40 * 16; i++)
		in[i] = (float)(i + 1);
	for (int i = 0; i < 64 * 16; i++)
		out[i] = -1.0f;
	void *bufs[] = {in, out};
	size_t sizes[] = {sizeof in, sizeof out};
	NpuSim *s = load_on(npu(), text);
	run_ok(s, 2, bufs, sizes);
	for (int i = 0; i < 48 * 16; i++)
		cr_assert_float_eq(out[i], i < 40 * 16 ? in[i] : 0.0f, 0, "out[%d] = %g", i, out[i]);
	/* (the fourth tile: the first mvin's 16 rows, not the second's zeros) */
	for (int i = 48 * 16; i < 64 * 16; i++)
		cr_assert_float_eq(out[i], in[i - 48 * 16], 0, "out[%d] = %g", i, out[i]);
	npusim_free(s);
}

Test(npusim, mvin_span_errors)
{
	/* more rows than dma_max_tiles tiles hold, and a span past the
	 * scratchpad's end (256 KiB: the last tile at 261120) */
	Target *t = with("dma_max_tiles=2");
	static float in[48 * 16];
	void *bufs[] = {in};
	size_t sizes[] = {sizeof in};
	NpuSim *s = load_on(t, "gdcc_entry:\n\tld a1, [a0]\n\tli a2, #0\n\tli a3, #33\n\tmvin [a2], [a1], a3\n\tret\n");
	run_fails(s, 1, bufs, sizes, "mvin of 33 rows: need 0..32 (2 tiles of 16 rows: dma_max_tiles)", 5, 2);
	npusim_free(s);
	target_copy_free(t);
	s = load_on(npu(), "gdcc_entry:\n\tld a1, [a0]\n\tli a2, #261120\n\tli a3, #17\n\tmvin [a2], [a1], a3\n\tret\n");
	run_fails(s, 1, bufs, sizes, "mvin of 17 rows at scratchpad address 0x3fc00 runs past the scratchpad (262144 bytes)", 5, 2);
	npusim_free(s);
}

Test(npusim, dmaes_gathers_and_scatters)
{
	/* dmaes 8: a row of 4 elements (16 bytes) gathers every other float;
	 * 2 rows at a DRAM stride of 4 bytes (overlapping spans: rows start
	 * one float apart); mvout scatters every third float back; dmacfg
	 * resets the element stride (the last mvout is contiguous). Costs: the
	 * spanned bytes, (4 - 1) * 8 + 4 = 28 a row. */
	const char *text = "gdcc_entry:\n"
			   "\tld a1, [a0+0]\n\tld a2, [a0+8]\n\tli a3, #2\n\tli a4, #16\n\tli a5, #4\n"
			   "\tdmacfg a4, a5\n\tli a7, #8\n\tdmaes a7\n\tli a6, #0\n\tmvin [a6], [a1], a3\n"
			   "\tli a5, #64\n\tdmacfg a4, a5\n\tli a7, #12\n\tdmaes a7\n\tmvout [a2], [a6], a3\n"
			   "\tdmacfg a4, a5\n\taddi a2, a2, #128\n\tmvout [a2], [a6], a3\n\tfence\n\tli a0, #0\n\tret\n";
	float in[16], out[64];
	for (int i = 0; i < 16; i++)
		in[i] = (float)(i + 1);
	for (int i = 0; i < 64; i++)
		out[i] = -1.0f;
	void *bufs[] = {in, out};
	size_t sizes[] = {sizeof in, sizeof out};
	NpuSim *s = load_on(npu(), text);
	run_ok(s, 2, bufs, sizes);
	/* row 0: in[0, 2, 4, 6], row 1: in[1, 3, 5, 7]; scattered at stride 3
	 * floats from out[0] and out[16]; contiguous at out[32] and out[48] */
	for (int r = 0; r < 2; r++)
		for (int e = 0; e < 4; e++) {
			float v = in[r + 2 * e];
			cr_assert_float_eq(out[16 * r + 3 * e], v, 0, "scatter row %d element %d: %g", r, e, out[16 * r + 3 * e]);
			cr_assert_float_eq(out[32 + 16 * r + e], v, 0, "contiguous row %d element %d", r, e);
			if (e < 3)
				cr_assert_float_eq(out[16 * r + 3 * e + 1], -1.0f, 0, "a gap written: row %d after %d", r, e);
		}
	/* gather 2 * 28 bytes, scatter 2 * 40 (3 strides of 12 and a float), 2 * 16 */
	cr_assert_float_eq(npusim_traffic(s, "dram_read_bytes"), 56, 0, "%g", npusim_traffic(s, "dram_read_bytes"));
	cr_assert_float_eq(npusim_traffic(s, "dram_write_bytes"), 80 + 32, 0, "%g", npusim_traffic(s, "dram_write_bytes"));
	npusim_free(s);
	/* an element stride that is not a multiple of 4 */
	s = load_on(npu(), "gdcc_entry:\n\tli a1, #6\n\tdmaes a1\n\tli a0, #0\n\tret\n");
	run_fails(s, 0, NULL, NULL, "dmaes: element stride 6 bytes", 3, 2);
	npusim_free(s);
}

Test(npusim, mvin_k_keeps_the_rest)
{
	/* mvin of 0 rows zeroes the tile; mvin.k writes 2 rows of 2 floats at
	 * skip 8 bytes, then 1 row at skip 0: the rest stays as it was */
	const char *text = "gdcc_entry:\n"
			   "\tld a1, [a0+0]\n\tld a2, [a0+8]\n\tli a6, #0\n\tli a3, #0\n\tmvin [a6], [a1], a3\n"
			   "\tli a4, #8\n\tli a5, #8\n\tdmacfg a4, a5, a5\n\tli a3, #2\n\tmvin.k [a6], [a1], a3\n"
			   "\tli a7, #0\n\tdmacfg a4, a5, a7\n\tli a3, #1\n\taddi a1, a1, #32\n\tmvin.k [a6], [a1], a3\n"
			   "\tli a4, #64\n\tdmacfg a4, a4\n\tli a3, #16\n\tmvout [a2], [a6], a3\n\tfence\n\tli a0, #0\n\tret\n";
	float in[16], out[256];
	for (int i = 0; i < 16; i++)
		in[i] = (float)(i + 1);
	for (int i = 0; i < 256; i++)
		out[i] = -1.0f;
	void *bufs[] = {in, out};
	size_t sizes[] = {sizeof in, sizeof out};
	NpuSim *s = load_on(npu(), text);
	run_ok(s, 2, bufs, sizes);
	for (int r = 0; r < 16; r++)
		for (int c = 0; c < 16; c++) {
			float e = 0.0f;
			if (r < 2 && (c == 2 || c == 3))
				e = in[r * 2 + c - 2];
			if (r == 0 && c < 2)
				e = in[8 + c];
			cr_assert_float_eq(out[r * 16 + c], e, 0, "tile[%d][%d] = %g, want %g", r, c, out[r * 16 + c], e);
		}
	npusim_free(s);
}

Test(npusim, masked_vectors_and_reductions)
{
	/* 5 floats only: a masked load of 5 lanes must not touch lanes 5-15
	 * (beyond the buffer); the store writes 5; the reductions are of
	 * (x + x) with the masked-off lanes 0; vsel / vcmplt pick max(x, 0). */
	const char *text = "gdcc_entry:\n"
			   "\tld a1, [a0+0]\n\tld a2, [a0+8]\n\tli a3, #5\n\tvmask k1, a3\n"
			   "\tvld v0, [a1], k1\n\tvadd v1, v0, v0\n\tvredsum s0, v1\n\tvredmax s1, v1\n"
			   "\tfst s0, [a2+20]\n\tfst s1, [a2+24]\n"
			   "\tvsub v2, v0, v0\n\tvcmplt k2, v0, v2\n\tvsel v3, k2, v2, v0\n"
			   "\tvst v3, [a2], k1\n\tli a0, #0\n\tret\n";
	float in[5] = {1.5f, -2.0f, 3.25f, -0.5f, 4.0f};
	float out[7] = {9, 9, 9, 9, 9, 9, 9};
	void *bufs[] = {in, out};
	size_t sizes[] = {sizeof in, sizeof out};
	NpuSim *s = load_on(npu(), text);
	run_ok(s, 2, bufs, sizes);
	float w[5] = {1.5f, 0.0f, 3.25f, 0.0f, 4.0f};
	for (int i = 0; i < 5; i++)
		cr_assert_float_eq(out[i], w[i], 0, "out[%d] = %g", i, out[i]);
	/* tree: (x0+x8)+(x4+x12)... all exact here */
	cr_assert_float_eq(out[5], 2 * (1.5f - 2.0f + 3.25f - 0.5f + 4.0f), 0);
	cr_assert_float_eq(out[6], 8.0f, 0);
	npusim_free(s);
}

Test(npusim, redsum_tree_order)
{
	/* lanes 0 and 8 are paired first: 1e8 + -1e8 = 0, then + 1 ... = 1;
	 * a sequential sum would give 0 ((1e8 + 1) - 1e8 in f32). */
	const char *text = "gdcc_entry:\n\tld a1, [a0+0]\n\tvld v0, [a1]\n\tvredsum s0, v0\n\tfst s0, [a1]\n"
			   "\tli a0, #0\n\tret\n";
	float v[16] = {1e8f, 1.0f, 0, 0, 0, 0, 0, 0, -1e8f, 0, 0, 0, 0, 0, 0, 0};
	void *bufs[] = {v};
	size_t sizes[] = {sizeof v};
	NpuSim *s = load_on(npu(), text);
	run_ok(s, 1, bufs, sizes);
	cr_assert_float_eq(v[0], 1.0f, 0);
	npusim_free(s);
}

Test(npusim, control_and_data)
{
	/* sum of the .long data (1..10) with a loop; ldw sign-extends; sb. */
	const char *text = "\t.text\n\t.globl gdcc_entry\n\t.type gdcc_entry, @function\n"
			   "gdcc_entry:\n\tla a1, tab   # the table\n\tli a2, #0\n\tli a3, #0\n\tli a5, #10\n"
			   ".Lloop:\n\tshli a6, a2, #2\n\tadd a6, a1, a6\n\tldw a4, [a6]\n\tadd a3, a3, a4\n"
			   "\taddi a2, a2, #1\n\tblt a2, a5, .Lloop\n"
			   "\tld a7, [a0+0]\n\tst a3, [a7]\n\tldw a4, [a1+40]\n\tst a4, [a7+8]\n\tsb a5, [a7+16]\n"
			   "\tli a0, #0\n\tret\n\t.size gdcc_entry, .-gdcc_entry\n"
			   "\t.section .rodata\n\t.p2align 5\ntab:\n\t.long 1, 2, 3, 4, 5, 6, 7, 8, 9, 10\n"
			   "\t.long 0xfffffffe\n\t.section .note.GNU-stack,\"\",@progbits\n";
	int64_t out[3] = {0, 0, 0};
	void *bufs[] = {out};
	size_t sizes[] = {sizeof out};
	NpuSim *s = load_on(npu(), text);
	run_ok(s, 1, bufs, sizes);
	cr_assert_eq(out[0], 55);
	cr_assert_eq(out[1], -2);
	cr_assert_eq(out[2], 10);
	npusim_free(s);
}

Test(npusim, incbin)
{
	/* .incbin "FILE", OFFSET, BYTES: a table of 1..10 from bytes 8.. of a
	 * file (the name with an escape), summed as above; the padding of
	 * .p2align before it. */
	char dir[] = "/tmp/npusim-incbin-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char *path = xasprintf("%s/w\"1.bin", dir);
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	int32_t words[14] = {-1, -1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -1, -1};
	cr_assert_eq(fwrite(words, sizeof words, 1, f), 1);
	cr_assert_eq(fclose(f), 0);
	char *text = xasprintf("gdcc_entry:\n\tla a1, tab\n\tli a2, #0\n\tli a3, #0\n\tli a5, #10\n"
			       ".Lloop:\n\tshli a6, a2, #2\n\tadd a6, a1, a6\n\tldw a4, [a6]\n\tadd a3, a3, a4\n"
			       "\taddi a2, a2, #1\n\tblt a2, a5, .Lloop\n\tld a7, [a0+0]\n\tst a3, [a7]\n\tli a0, #0\n\tret\n"
			       "\t.section .rodata\n\t.p2align 5\nhead:\n\t.long 7\n\t.p2align 5\ntab:\n"
			       "\t.incbin \"%s/w\\\"1.bin\", 8, 40\n",
			       dir);
	int64_t out = 0;
	void *bufs[] = {&out};
	size_t sizes[] = {sizeof out};
	NpuSim *s = load_on(npu(), text);
	run_ok(s, 1, bufs, sizes);
	cr_assert_eq(out, 55);
	npusim_free(s);
	free(text);
	/* past the end of the file; a file that is not there */
	text = xasprintf("gdcc_entry:\n\tret\n\t.section .rodata\nd:\n\t.incbin \"%s/w\\\"1.bin\", 40, 40\n", dir);
	load_fails(npu(), text, "40 bytes from offset 40 are not in the file (56 bytes)", 5, 0);
	free(text);
	unlink(path);
	text = xasprintf("gdcc_entry:\n\tret\n\t.section .rodata\nd:\n\t.incbin \"%s/w\\\"1.bin\"\n", dir);
	load_fails(npu(), text, "No such file or directory", 5, 0);
	free(text);
	load_fails(npu(), "gdcc_entry:\n\tret\n\t.section .rodata\nd:\n\t.incbin w.bin\n", ".incbin needs a file name in double quotes", 5, 10);
	rmdir(dir);
	free(path);
}

Test(npusim, scoreboard_stalls)
{
	/* mul has latency 3: its user waits 2 cycles (dependency). */
	NpuSim *s = load_on(npu(), "gdcc_entry:\n\tli a1, #3\n\tmul a2, a1, a1\n\tadd a0, a2, a2\n\tsub a0, a0, a0\n\tret\n");
	run_ok(s, 0, NULL, NULL);
	cr_assert_float_eq(npusim_stall(s, "dependency"), 2, 0);
	/* li 0, mul 1 (ready 4), add 4 (ready 5), sub 5, ret 6: retires at 7 */
	cr_assert_float_eq(npusim_cycles(s), 7, 0);
	npusim_free(s);
	/* vredsum has throughput 2 on vec: back-to-back ones wait 1 (structural). */
	s = load_on(npu(), "gdcc_entry:\n\tvredsum s0, v0\n\tvredsum s1, v1\n\tli a0, #0\n\tret\n");
	run_ok(s, 0, NULL, NULL);
	cr_assert_float_eq(npusim_stall(s, "structural"), 1, 0);
	npusim_free(s);
}

Test(npusim, queue_full)
{
	/* 20 mma: the core stops with command_queue = 16 not started. */
	char *text = mma_chain(20, 1088, "");
	NpuSim *s = load_on(npu(), text);
	run_ok(s, 0, NULL, NULL);
	cr_assert(npusim_stall(s, "queue_full") > 0);
	cr_assert_float_eq(npusim_cycles(s), 2 + 16 + 16.0 * 20 + 31, 0);
	npusim_free(s);
	free(text);
}

/* ---- errors ----------------------------------------------------------------- */

Test(npusim, error_out_of_bounds)
{
	NpuSim *s = load_on(npu(), "gdcc_entry:\n\tld a1, [a0]\n\tvld v0, [a1+8]\n\tli a0, #0\n\tret\n");
	float buf[17];
	void *bufs[] = {buf};
	size_t sizes[] = {sizeof buf};
	run_fails(s, 1, bufs, sizes, "runs past the end of 'buffer 0'", 3, 2);
	s = (npusim_free(s), load_on(npu(), "gdcc_entry:\n\tli a1, #64\n\tld a2, [a1+-8]\n\tret\n"));
	run_fails(s, 0, NULL, NULL, "load of 8 bytes at 0x38 outside any buffer", 3, 2);
	npusim_free(s);
	/* a store into the program's data */
	s = load_on(npu(), "gdcc_entry:\n\tla a1, d\n\tst a1, [a1]\n\tret\n\t.section .rodata\nd:\n\t.zero 8\n");
	run_fails(s, 0, NULL, NULL, "read-only data 'd'", 3, 2);
	npusim_free(s);
	/* mvin of rows beyond the DRAM buffer */
	s = load_on(npu(), "gdcc_entry:\n\tld a1, [a0]\n\tli a2, #0\n\tli a3, #16\n\tmvin [a2], [a1], a3\n\tret\n");
	run_fails(s, 1, bufs, sizes, "runs past the end", 5, 2);
	npusim_free(s);
}

Test(npusim, error_scratchpad_address)
{
	NpuSim *s = load_on(npu(), "gdcc_entry:\n\tli a1, #32\n\ttload t0, [a1]\n\tret\n");
	run_fails(s, 0, NULL, NULL, "not a multiple of 64", 3, 2);
	npusim_free(s);
	s = load_on(npu(), "gdcc_entry:\n\tli a1, #262080\n\ttstore [a1], t0\n\tret\n");
	run_fails(s, 0, NULL, NULL, "outside the scratchpad", 3, 2);
	npusim_free(s);
}

Test(npusim, error_instruction_limit)
{
	NpuSim *s = load_on(npu(), "gdcc_entry:\n.L1:\n\tj .L1\n");
	npusim_set_max_instructions(s, 1000);
	run_fails(s, 0, NULL, NULL, "stopped after 1000 instructions", 3, 2);
	npusim_free(s);
}

Test(npusim, load_errors)
{
	load_fails(npu(), "gdcc_entry:\n\tli a0, #0\n\tfrob a1, a2\n", "unknown mnemonic 'frob'", 3, 2);
	load_fails(npu(), "gdcc_entry:\n\tadd a1, a2\n", "takes 3 operands", 2, 2);
	load_fails(npu(), "gdcc_entry:\n\tadd a1, a2, s3\n", "operand 3 of 'add' must be an a register", 2, 14);
	load_fails(npu(), "gdcc_entry:\n\tj .Lnowhere\n", "unknown label '.Lnowhere'", 2, 4);
	load_fails(npu(), "gdcc_entry:\n\tla a1, gdcc_entry\n", "is a code label", 2, 9);
	load_fails(npu(), "gdcc_entry:\n\t.bogus 1\n", "unknown directive", 2, 2);
	load_fails(npu(), "gdcc_entry:\n\tld a1, [s1]\n", "expected an a register", 2, 10);
	load_fails(npu(), "x:\nx:\n", "defined twice", 2, 1);
}

Test(npusim, bad_configuration)
{
	Diag d;
	diag_init(&d);
	const char *set[] = {"array_cols=8"};
	Target *t = target_with_params(npu(), 1, set, &d);
	cr_assert_not_null(t);
	cr_assert_null(npusim_new(t, &d));
	cr_assert_not_null(diag_find(&d, "array_rows (16) and array_cols (8) differ"));
	target_copy_free(t);
	const char *bad[] = {"no_such_param=1"};
	cr_assert_null(target_with_params(npu(), 1, bad, &d));
	cr_assert_not_null(diag_find(&d, "has no param 'no_such_param'"));
	const char *bad2[] = {"array_rows=lots"};
	cr_assert_null(target_with_params(npu(), 1, bad2, &d));
	cr_assert_not_null(diag_find(&d, "bad value 'lots'"));
	const char *bad3[] = {"dataflow=diagonal"};
	t = target_with_params(npu(), 1, bad3, &d);
	cr_assert_not_null(t);
	cr_assert_null(npusim_new(t, &d));
	cr_assert_not_null(diag_find(&d, "need \"weight_stationary\""));
	target_copy_free(t);
	const char *bad4[] = {"os_output_buffers=3"};
	t = target_with_params(npu(), 1, bad4, &d);
	cr_assert_not_null(t);
	cr_assert_null(npusim_new(t, &d));
	cr_assert_not_null(diag_find(&d, "param os_output_buffers = 3: need an integer in 1..2"));
	target_copy_free(t);
	diag_free(&d);
}

/* ---- a 512 x 512 x 512 GEMM ------------------------------------------------ */

typedef struct {
	char *buf;
	size_t len, cap;
} Str;

static void put(Str *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(Str *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *t = xvasprintf(fmt, ap);
	va_end(ap);
	size_t n = strlen(t);
	if (s->len + n + 1 > s->cap) {
		s->cap = (s->len + n + 1) * 2;
		s->buf = xrealloc(s->buf, s->cap);
	}
	memcpy(s->buf + s->len, t, n + 1);
	s->len += n;
	free(t);
}

/* C[M][N] = A[M][K] x B[K][N], all row-major, M = N = K = 512, n = 16.
 * Blocks of h <= 7 tile rows: the A panel (h x 32 tiles) stays in the
 * scratchpad; for each column tile j, the 32 tiles B(kk, j) stream through
 * a ring of 3 buffers (offset one row: another bank), each used by h mma
 * into t0..t(h-1); the finished tiles go out through two staging sets. */
static void put_mvouts(Str *s, int i0, int h, int j)
{
	for (int ii = 0; ii < h; ii++)
		put(s, "\tli a12, #%d\n\tli a13, #%d\n\tadd a13, a3, a13\n\tmvout [a13], [a12], a4\n",
		    229 * 1024 + ((j % 2) * 7 + ii) * 1024, (i0 + ii) * 16 * 2048 + j * 64);
}

static char *gemm512(void)
{
	const int T = 32, ld = 2048, ring = 4, dist = 2;
	const int bbase = 224 * 1024 + 64;
	const int heights[] = {7, 7, 6, 6, 6};
	Str s = {0};
	put(&s, "gdcc_entry:\n\tld a1, [a0+0]\n\tld a2, [a0+8]\n\tld a3, [a0+16]\n\tli a4, #16\n"
		"\tli a5, #64\n\tli a6, #%d\n\tdmacfg a5, a6\n", ld);
	/* the steps (block, j, kk) in order; B of step q is fetched at step q - dist */
	int nsteps = 5 * T * T;
	for (int q = -dist; q < nsteps; q++) {
		int blk = q / (T * T), j = q / T % T, kk = q % T;
		int i0 = 0;
		for (int b = 0; b < blk; b++)
			i0 += heights[b];
		int h = q >= 0 ? heights[blk] : 0;
		if (q >= 0 && j == 0 && kk == 0) {
			if (blk > 0)
				put_mvouts(&s, i0 - heights[blk - 1], heights[blk - 1], T - 1);
			for (int ii = 0; ii < h; ii++)
				for (int k2 = 0; k2 < T; k2++)
					put(&s, "\tli a7, #%d\n\tli a8, #%d\n\tadd a8, a1, a8\n\tmvin [a7], [a8], a4\n",
					    (ii * T + k2) * 1024, (i0 + ii) * 16 * ld + k2 * 64);
		}
		int f = q + dist;
		if (f < nsteps)
			put(&s, "\tli a9, #%d\n\tli a10, #%d\n\tadd a10, a2, a10\n\tmvin [a9], [a10], a4\n",
			    bbase + (f % ring) * 1024, (f % T) * 16 * ld + (f / T % T) * 64);
		if (q < 0)
			continue;
		put(&s, "\tli a9, #%d\n", bbase + (q % ring) * 1024);
		for (int ii = 0; ii < h; ii++) {
			put(&s, "\tli a11, #%d\n\tmma t%d, [a11], [a9]\n", (ii * T + kk) * 1024, ii);
			if (kk == T - 1)
				put(&s, "\tli a12, #%d\n\ttstore [a12], t%d\n\ttzero t%d\n",
				    229 * 1024 + ((j % 2) * 7 + ii) * 1024, ii, ii);
		}
		/* the finished tiles of the previous j go out a few steps later,
		 * when their tstores are done (the DMA is in order) */
		if (kk == 4 && j > 0)
			put_mvouts(&s, i0, h, j - 1);
	}
	put_mvouts(&s, 32 - heights[4], heights[4], T - 1);
	put(&s, "\tfence\n\tli a0, #0\n\tret\n");
	return s.buf;
}

Test(npusim, gemm_512_utilization, .timeout = 120)
{
	const int M = 512;
	float *a = xmalloc((size_t)M * M * 4), *b = xmalloc((size_t)M * M * 4), *c = xcalloc((size_t)M * M, 4);
	for (int i = 0; i < M * M; i++) {
		a[i] = rnd();
		b[i] = rnd();
	}
	char *text = gemm512();
	void *bufs[] = {a, b, c};
	size_t sizes[] = {(size_t)M * M * 4, (size_t)M * M * 4, (size_t)M * M * 4};
	NpuSim *s = load_on(npu(), text);
	run_ok(s, 3, bufs, sizes);
	double u = npusim_utilization(s);
	cr_log_info("gemm 512: %.0f cycles, pe_utilization %.4f, array busy %.0f, dma stall %.0f, queue_full %.0f",
		    npusim_cycles(s), u, npusim_array_busy(s), npusim_stall(s, "dma"), npusim_stall(s, "queue_full"));
	fprintf(stderr, "gemm 512: %.0f cycles, pe_utilization %.4f\n", npusim_cycles(s), u);
	if (getenv("NPUSIM_TEST_STATS"))
		npusim_stats_json(s, stderr);
	cr_assert_float_eq(npusim_macs(s), (double)M * M * M, 0);
	cr_assert_float_eq(npusim_stall(s, "bank_conflict"), 0, 0);
	cr_assert(u > 0.8, "pe_utilization %.4f", u);
	/* bit-exact on a sample: tiles kk ascending, k ascending in each, fmaf */
	for (int t = 0; t < 200; t++) {
		int i = (t * 97) % M, j = (t * 389 + 7) % M;
		float acc = 0.0f;
		for (int k = 0; k < M; k++)
			acc = fmaf(a[i * M + k], b[k * M + j], acc);
		cr_assert_eq(memcmp(&acc, &c[i * M + j], 4), 0, "C[%d][%d] = %g, want %g", i, j, c[i * M + j], acc);
	}
	/* deterministic: the same run gives the same statistics */
	double cyc = npusim_cycles(s);
	char *j1 = NULL, *j2 = NULL;
	size_t l1, l2;
	FILE *f = open_memstream(&j1, &l1);
	npusim_stats_json(s, f);
	fclose(f);
	run_ok(s, 3, bufs, sizes);
	f = open_memstream(&j2, &l2);
	npusim_stats_json(s, f);
	fclose(f);
	cr_assert_float_eq(npusim_cycles(s), cyc, 0);
	cr_assert_str_eq(j1, j2);
	free(j1);
	free(j2);
	npusim_free(s);
	free(text);
	free(a);
	free(b);
	free(c);
}
