/* pass_fold: not written yet (does nothing). */
#include "passes.h"

bool pass_fold(Graph *g, PassContext *cx, Diag *d)
{
	(void)g;
	(void)cx;
	(void)d;
	return true;
}
