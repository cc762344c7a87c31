/* The backend's function representation, from selection trees to machine
 * instructions on virtual registers, then on physical registers.
 *
 *   codegen.c  graph -> loop nests (Loop IR, checked) -> selection trees
 *   isel.c     trees -> instructions (the target's BURS tables)
 *   linscan.c  virtual -> physical registers, spill code, frame
 *   emit.c     instructions -> assembly through the .md's templates
 *
 * Nothing here knows a target: register classes, instructions, templates
 * and costs all come from the generated Target. */
#ifndef GDCC_MIR_H
#define GDCC_MIR_H

#include <stdio.h>

#include "burs.h"
#include "target.h"

typedef struct {
	int cls;       /* register class (index into Target.regclasses) */
	int preg;      /* a fixed physical register (index in its class), or -1 */
	int phys;      /* after allocation: the physical register, or -1 */
	int slot;      /* spilled: its frame offset, or -1 */
	bool no_spill; /* a reload/spill temporary */
	int group;     /* vectors of a scalable target: registers per value (LMUL) */
} VReg;

typedef enum { OPND_NONE, OPND_REG, OPND_IMM, OPND_FIMM, OPND_SYM, OPND_FORM } OpndKind;

typedef struct {
	OpndKind kind;
	int vreg;
	int64_t imm;
	double fimm;
	const char *sym;
	int form;      /* index into MFunc.forms */
} Opnd;

enum { MI_MAXOPS = 6 };

/* A form instance (an addressing mode with its registers). */
typedef struct {
	int rule;
	Opnd ops[MI_MAXOPS];
} FormInst;

typedef enum { MI_RULE, MI_MOVE, MI_LABEL } MInstKind;

typedef struct {
	MInstKind kind;
	int rule;          /* MI_RULE: index into Target.rules */
	Opnd ops[MI_MAXOPS];/* in the rule's operand order */
	int def;           /* the result's virtual register, or -1 */
	int use;           /* MI_MOVE: the source */
	int label;         /* MI_LABEL: its number; a branch: its target; else -1 */
} MInst;

/* A statement before selection: `dest = tree`, an effect tree, a label, or
 * a branch to a label. */
typedef struct {
	BursNode *tree;    /* NULL for a label */
	int dest;          /* vreg, or -1 */
	int label;         /* the label defined (tree NULL) or branched to */
	int lmul;          /* the register group of its vectors */
} SelStmt;

typedef struct {
	const Target *t;
	const char *name;
	VReg *vregs;
	int nvregs, capvregs;
	SelStmt *stmts;
	int nstmts, capstmts;
	MInst *insts;
	int ninsts, capinsts;
	FormInst *forms;
	int nforms, capforms;
	int nlabels;
	int sp;            /* the stack pointer's vreg */
	int lmul;          /* register group given to new vector vregs (1) */
	int frame_bytes;   /* spill slots */
	/* the arena of tree nodes */
	BursNode **nodes;
	int nnodes, capnodes;
} MFunc;

MFunc *mfunc_new(const Target *t, const char *name);
void mfunc_free(MFunc *f);
/* The selection trees and their labels, once the instructions are selected
 * (a large model's trees were most of its compile's memory). */
void mfunc_free_trees(MFunc *f);
/* The instructions, once the assembly text is rendered (program_render). */
void mfunc_free_code(MFunc *f);
/* Append one instruction. */
void mfunc_push(MFunc *f, const MInst *mi);
int mfunc_vreg(MFunc *f, int cls);
/* The register class for values of a sort: the first class of that sort
 * that aliases none (-1: the target has none). */
int target_class_for(const Target *t, Sort s);
/* The physical register pool of a class (itself, or the class it aliases),
 * the pool index of a class's register (-1: none), and the name of a pool
 * index as the class writes it.  VReg.phys is a pool index. */
int target_root_class(const Target *t, int cls);
int target_root_index(const Target *t, int cls, int reg);
const char *target_reg_name(const Target *t, int cls, int phys);

/* Tree construction (nodes live as long as the function). */
BursNode *sel_reg(MFunc *f, int vreg);
BursNode *sel_consti(MFunc *f, int64_t v);
BursNode *sel_constf(MFunc *f, double v);
BursNode *sel_sym(MFunc *f, const char *sym);
BursNode *sel_op(MFunc *f, SelOp op, BursNode *a, BursNode *b, BursNode *c);
void sel_assign(MFunc *f, int dest, BursNode *tree);
void sel_effect(MFunc *f, BursNode *tree);
int sel_new_label(MFunc *f);
void sel_label(MFunc *f, int label);
void sel_branch(MFunc *f, BursNode *tree, int label); /* brlt.i / jump */

/* Instruction selection of every statement; false (an error into d) if a
 * tree cannot be covered by the target's patterns. */
bool isel_function(MFunc *f, Diag *d);
/* Select one more tree at position `at` of the instruction list (used by
 * the allocator for spill code); returns how many instructions it added. */
int isel_insert(MFunc *f, int at, BursNode *tree, int dest, Diag *d);
/* What selecting a tree would cost on t, in hundredths of a cycle (the
 * .md's figures), as a statement (cls < 0) or into register class cls;
 * BURS_INF: no pattern covers it.  The tree is only labelled, not used. */
int32_t isel_cost(const Target *t, BursNode *tree, int cls);

/* Register allocation (linear scan, spilling through the target's own
 * load and store patterns), then the frame: prologue and epilogue. */
bool regalloc_function(MFunc *f, Diag *d);
/* The registers of each pool the allocator may use: all, or GDCC_MAX_REGS
 * (a testing aid).  Tile slots do not spill: a schedule keeping k tiles
 * live needs k of them. */
int regalloc_max_regs(void);

/* The selection trees, and a check of the instructions (after selection,
 * or after allocation). */
void mfunc_dump_trees(FILE *out, const MFunc *f);
bool mfunc_verify(const MFunc *f, bool allocated, Diag *d);

/* Assembly text of one instruction list. */
void emit_function(FILE *out, const MFunc *f);
void mfunc_dump(FILE *out, const MFunc *f);

#endif
