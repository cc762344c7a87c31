/* pass_canonicalize: not written yet (does nothing). */
#include "passes.h"

bool pass_canonicalize(Graph *g, PassContext *cx, Diag *d)
{
	(void)g;
	(void)cx;
	(void)d;
	return true;
}
