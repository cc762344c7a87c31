/* The selection-tree vocabulary table. */
#include <string.h>

#include "sel.h"

#define _ SORT_NONE
#define I SORT_I
#define F SORT_F
#define V SORT_V
#define W SORT_W
#define M SORT_M
#define T SORT_T
#define X SORT_X
const SelInfo sel_info[SEL_COUNT] = {
#define SEL(id, name, res, n, a, b, c) [SEL_##id] = {name, res, n, {a, b, c}},
#include "sel.def"
#undef SEL
};
#undef _
#undef I
#undef F
#undef V
#undef W
#undef M
#undef T
#undef X

static const char *const sort_names[SORT_COUNT] = {"none", "i", "f", "v", "w", "m", "t", "x"};

SelOp sel_lookup(const char *name, size_t len)
{
	for (int i = 0; i < SEL_COUNT; i++)
		if (strlen(sel_info[i].name) == len && memcmp(sel_info[i].name, name, len) == 0)
			return (SelOp)i;
	return SEL_COUNT;
}

const char *sort_name(Sort s) { return s < SORT_COUNT ? sort_names[s] : "?"; }

Sort sort_lookup(const char *name, size_t len)
{
	for (int i = SORT_I; i < SORT_COUNT; i++)
		if (strlen(sort_names[i]) == len && memcmp(sort_names[i], name, len) == 0)
			return (Sort)i;
	return SORT_NONE;
}

SelOp sel_reg_leaf(Sort s)
{
	switch (s) {
	case SORT_I: return SEL_REG_I;
	case SORT_F: return SEL_REG_F;
	case SORT_V: return SEL_REG_V;
	case SORT_W: return SEL_REG_W;
	case SORT_M: return SEL_REG_M;
	case SORT_T: return SEL_REG_T;
	default: return SEL_COUNT;
	}
}
