/* The selection-tree vocabulary (sel.def) as C: sorts, operations and
 * their signatures.  Shared by core/, isel/ and gen/mdgen. */
#ifndef GDCC_SEL_H
#define GDCC_SEL_H

#include <stddef.h>

typedef enum { SORT_NONE, SORT_I, SORT_F, SORT_V, SORT_W, SORT_M, SORT_T, SORT_X, SORT_COUNT } Sort;

typedef enum {
#define SEL(id, name, res, n, a, b, c) SEL_##id,
#include "sel.def"
#undef SEL
	SEL_COUNT
} SelOp;

typedef struct {
	const char *name;
	Sort result;
	int nkids;
	Sort kid[3];
} SelInfo;

extern const SelInfo sel_info[SEL_COUNT];
/* SEL_COUNT when unknown. */
SelOp sel_lookup(const char *name, size_t len);
const char *sort_name(Sort s);          /* "i", "f", "v", ... */
Sort sort_lookup(const char *name, size_t len);
/* The leaf op that stands for a register of this sort (reg.i ...), or
 * SEL_COUNT for X. */
SelOp sel_reg_leaf(Sort s);

#endif
