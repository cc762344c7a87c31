/* pass_cse: not written yet (does nothing). */
#include "passes.h"

bool pass_cse(Graph *g, PassContext *cx, Diag *d)
{
	(void)g;
	(void)cx;
	(void)d;
	return true;
}
