/* pass_bnfold: not written yet (does nothing). */
#include "passes.h"

bool pass_bnfold(Graph *g, PassContext *cx, Diag *d)
{
	(void)g;
	(void)cx;
	(void)d;
	return true;
}
