/* Fuzz target: model.ir text -> the parser -> the verifier (shape and
 * dtype inference, constant evaluation).  A graph that verifies is
 * printed and the print parsed and verified again: it must verify too and
 * print the same (the printer writes model.ir that means the same). */
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "fuzz.h"
#include "printer.h"
#include "verify.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_init();
	return 0;
}

static char *print_to_string(const Graph *g, size_t *len)
{
	char *buf = NULL;
	FILE *m = open_memstream(&buf, len);
	if (!m)
		abort();
	print_graph(m, g);
	fclose(m);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_skip_model(data, size))
		return 0;
	Diag d;
	diag_init(&d);
	Graph *g = parse_model("fuzz.ir", NULL, (const char *)data, size, &d);
	fuzz_check_diags(&d, g != NULL, "parse");
	bool ok = g && graph_verify(g, &d);
	if (g)
		fuzz_check_diags(&d, ok, "verify");
	if (ok) {
		fuzz_check_graph(g);
		size_t len;
		char *text = print_to_string(g, &len);
		Diag d2;
		diag_init(&d2);
		Graph *g2 = parse_model("printed.ir", NULL, text, len, &d2);
		bool ok2 = g2 && graph_verify(g2, &d2);
		if (!ok2 && fuzz_oracles) {
			diag_print(&d2, stderr);
			fuzz_fail("the printed graph does not verify:\n%s", text);
		}
		if (ok2 && fuzz_oracles) {
			size_t len2;
			char *text2 = print_to_string(g2, &len2);
			if (len2 != len || memcmp(text, text2, len) != 0)
				fuzz_fail("printing is not stable:\n%s\n-- printed again:\n%s", text, text2);
			free(text2);
		}
		graph_free(g2);
		diag_free(&d2);
		free(text);
	}
	fuzz_done(&d);
	graph_free(g);
	diag_free(&d);
	return 0;
}
