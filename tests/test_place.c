/* Placement on a target and its host (core/place.c), with the test-only
 * targets: toy falls back to its host for grouped convolutions, toy-wide
 * runs them. Segments, the graphs they become, transfers and errors. */
#include <string.h>

#include "place.h"
#include "test_util.h"

static const char *model =
	"graph p {\n"
	"  input x : f32[1, 4, 5, 5]\n"
	"  const w : f32[4, 1, 3, 3] = fill(0.5)\n"
	"  a = relu(x)\n"
	"  c = conv(a, w, group=4)\n"
	"  y = relu(c)\n"
	"  output y\n"
	"}\n";

Test(place, segments_and_transfers)
{
	const Target *toy = target_lookup("toy"), *wide = target_lookup("toy-wide");
	cr_assert_not_null(toy);
	cr_assert_not_null(wide);
	Graph *g = t_model(model);
	Diag d;
	diag_init(&d);
	cr_assert_null(place_host(toy, NULL, &d), "the toy names no host");
	cr_assert_eq(place_host(toy, "toy-wide", &d), wide);
	Placement *p = place_graph(g, toy, wide, &d);
	cr_assert_not_null(p);
	cr_assert_eq(p->nsegs, 3);
	cr_assert_eq(p->segs[0].t, toy);
	cr_assert_eq(p->segs[1].t, wide);
	cr_assert(p->segs[1].host && !p->segs[0].host && !p->segs[2].host);
	/* the host's segment: the conv alone, its input a and its weights copied in */
	const Graph *h = p->segs[1].g;
	cr_assert_eq(h->ninputs, 1);
	cr_assert_str_eq(h->inputs[0]->name, "a");
	cr_assert_eq(h->noutputs, 1);
	cr_assert_str_eq(h->outputs[0]->name, "c");
	int convs = 0, consts = 0;
	for (int i = 0; i < h->nnodes; i++) {
		convs += h->nodes[i]->op == OP_CONV;
		consts += h->nodes[i]->op == OP_CONSTANT;
	}
	cr_assert_eq(convs, 1);
	cr_assert_eq(consts, 1);
	cr_assert_eq(attr_i(h->nodes[h->nnodes - 1], "group"), 4);
	for (int i = 0; i < g->nnodes; i++)
		if (g->nodes[i]->op == OP_CONV)
			cr_assert_str_eq(p->node_reason[i], "grouped convolution runs on the host");
	/* x in, a out to the host, c back, y out: each once, with its bytes */
	cr_assert_eq(p->nxfers, 4);
	const char *names[] = {"x", "a", "c", "y"};
	int64_t bytes[] = {400, 400, 144, 144};
	for (int k = 0; k < 4; k++) {
		cr_assert_str_eq(p->xfers[k].value, names[k]);
		cr_assert_eq(p->xfers[k].bytes, bytes[k], "%s: %lld bytes", names[k], (long long)p->xfers[k].bytes);
	}
	cr_assert_eq(p->xfers[0].from, -1);
	cr_assert_eq(p->xfers[1].to, 1);
	cr_assert_eq(p->xfers[3].to, -1);
	/* the segments compute what the model does */
	Tensor *in = tensor_new(DT_F32, &g->inputs[0]->type.shape);
	for (int64_t i = 0; i < 100; i++)
		((float *)in->data)[i] = (float)(i % 7) - 3.0f;
	Tensor **want = t_run(g, &in);
	Tensor *cur = in;
	Tensor *vals[3] = {NULL, NULL, NULL};
	for (int k = 0; k < 3; k++) {
		Tensor **o = t_run(p->segs[k].g, &cur);
		vals[k] = o[0];
		free(o);
		cur = vals[k];
	}
	t_assert_close(vals[2], 4, (int64_t[]){1, 4, 3, 3}, want[0]->data, 0, 0);
	for (int k = 0; k < 3; k++)
		tensor_free(vals[k]);
	t_free_outputs(g, want);
	tensor_free(in);
	FILE *m = tmpfile();
	placement_print(m, p);
	placement_json(m, p, "");
	fclose(m);
	placement_free(p);
	diag_free(&d);
	graph_free(g);
}

Test(place, fallback_needs_a_host)
{
	Graph *g = t_model(model);
	Diag d;
	diag_init(&d);
	cr_assert_null(place_graph(g, target_lookup("toy"), NULL, &d));
	t_assert_error_at(&d, "conv f32[1,4,5,5] is unsupported on toy (grouped convolution runs on the host) and toy names no host target", 5, 7);
	diag_free(&d);
	diag_init(&d);
	/* a host that cannot run it either */
	cr_assert_null(place_graph(g, target_lookup("toy"), target_lookup("toy"), &d));
	cr_assert(diag_has_errors(&d));
	diag_free(&d);
	graph_free(g);
}
