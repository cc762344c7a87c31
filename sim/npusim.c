/* npusim: the assembler, the functional machine and the timing model of the
 * npu-systolic family.  docs/npusim.md states the semantics and the model;
 * every figure is read from the Target (params, rules). */
#include "npusim.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* ---- the instruction set ------------------------------------------------ */

enum {
	I_LI, I_LA, I_MV, I_ADD, I_SUB, I_MUL, I_SHL, I_MIN, I_MAX, I_ADDI, I_SHLI,
	I_LD, I_LDW, I_ST, I_SB, I_J, I_BLT, I_RET,
	I_FADD, I_FSUB, I_FMUL, I_FMAX, I_FMIN, I_FFMA, I_FNEG, I_FABS, I_FMV, I_FLD, I_FST,
	I_VADD, I_VSUB, I_VMUL, I_VMAX, I_VMIN, I_VFMA, I_VFMAS, I_VMULS, I_VNEG, I_VABS,
	I_VBCAST, I_VBCASTM, I_VMV, I_VLD, I_VLDM, I_VST, I_VSTM, I_VMASK, I_VCMPLT,
	I_VCMPLE, I_VSEL, I_VREDSUM, I_VREDMAX,
	I_DMACFG, I_DMAES, I_MVIN, I_MVOUT, I_TZERO, I_TLOAD, I_TSTORE, I_TSTORER, I_TSTORER6, I_TADD, I_TRELU, I_TRELU6,
	I_MMA, I_FENCE,
	NI_OPS
};

/* Engines the commands go to. */
enum { ENG_NONE, ENG_DMA, ENG_ARRAY, ENG_ACC };

/* Operand signature letters: a s v k t registers of those classes, m memory
 * [aB+OFF], i immediate #K, L code label, D data symbol. */
#define F_W0 1   /* operand 0 is a register written */
#define F_R0 2   /* ... and read as well (tied) */
#define F_MOVE 4 /* a register move: the regclass's move template */
#define F_BT 8   /* mma.t: the B tile is read transposed (rows n, columns k) */
#define F_KEEP 16 /* mvin.k: only the rows' bytes are written, the rest of the tile kept */

typedef struct {
	const char *mn;
	int op;
	const char *sig;
	int flags;
	int engine;
} IsaEntry;

static const IsaEntry isa[] = {
	{"li", I_LI, "ai", F_W0, 0},           {"la", I_LA, "aD", F_W0, 0},
	{"mv", I_MV, "aa", F_W0 | F_MOVE, 0},  {"add", I_ADD, "aaa", F_W0, 0},
	{"sub", I_SUB, "aaa", F_W0, 0},        {"mul", I_MUL, "aaa", F_W0, 0},
	{"shl", I_SHL, "aaa", F_W0, 0},        {"min", I_MIN, "aaa", F_W0, 0},
	{"max", I_MAX, "aaa", F_W0, 0},        {"addi", I_ADDI, "aai", F_W0, 0},
	{"shli", I_SHLI, "aai", F_W0, 0},      {"ld", I_LD, "am", F_W0, 0},
	{"ldw", I_LDW, "am", F_W0, 0},         {"st", I_ST, "am", 0, 0},
	{"sb", I_SB, "am", 0, 0},              {"j", I_J, "L", 0, 0},
	{"blt", I_BLT, "aaL", 0, 0},           {"ret", I_RET, "", 0, 0},
	{"fadd", I_FADD, "sss", F_W0, 0},      {"fsub", I_FSUB, "sss", F_W0, 0},
	{"fmul", I_FMUL, "sss", F_W0, 0},      {"fmax", I_FMAX, "sss", F_W0, 0},
	{"fmin", I_FMIN, "sss", F_W0, 0},      {"ffma", I_FFMA, "ssss", F_W0, 0},
	{"fneg", I_FNEG, "ss", F_W0, 0},       {"fabs", I_FABS, "ss", F_W0, 0},
	{"fmv", I_FMV, "ss", F_W0 | F_MOVE, 0}, {"fld", I_FLD, "sm", F_W0, 0},
	{"fst", I_FST, "sm", 0, 0},            {"vadd", I_VADD, "vvv", F_W0, 0},
	{"vsub", I_VSUB, "vvv", F_W0, 0},      {"vmul", I_VMUL, "vvv", F_W0, 0},
	{"vmax", I_VMAX, "vvv", F_W0, 0},      {"vmin", I_VMIN, "vvv", F_W0, 0},
	{"vfma", I_VFMA, "vvv", F_W0 | F_R0, 0}, {"vfma.s", I_VFMAS, "vvs", F_W0 | F_R0, 0},
	{"vmul.s", I_VMULS, "vvs", F_W0, 0},   {"vneg", I_VNEG, "vv", F_W0, 0},
	{"vabs", I_VABS, "vv", F_W0, 0},       {"vbcast", I_VBCAST, "vs", F_W0, 0},
	{"vbcast", I_VBCASTM, "vm", F_W0, 0},  {"vmv", I_VMV, "vv", F_W0 | F_MOVE, 0},
	{"vld", I_VLD, "vm", F_W0, 0},         {"vld", I_VLDM, "vmk", F_W0, 0},
	{"vst", I_VST, "vm", 0, 0},            {"vst", I_VSTM, "vmk", 0, 0},
	{"vmask", I_VMASK, "ka", F_W0, 0},     {"vcmplt", I_VCMPLT, "kvv", F_W0, 0},
	{"vcmple", I_VCMPLE, "kvv", F_W0, 0},  {"vsel", I_VSEL, "vkvv", F_W0, 0},
	{"vredsum", I_VREDSUM, "sv", F_W0, 0}, {"vredmax", I_VREDMAX, "sv", F_W0, 0},
	{"dmacfg", I_DMACFG, "aa", 0, 0},      {"dmacfg", I_DMACFG, "aaa", 0, 0},
	{"dmaes", I_DMAES, "a", 0, 0},
	{"mvin", I_MVIN, "mma", 0, ENG_DMA},   {"mvin.k", I_MVIN, "mma", F_KEEP, ENG_DMA},
	{"mvout", I_MVOUT, "mma", 0, ENG_DMA}, {"tzero", I_TZERO, "t", 0, ENG_ACC},
	{"tload", I_TLOAD, "tm", 0, ENG_ACC},  {"tstore", I_TSTORE, "mt", 0, ENG_ACC},
	{"tstore.relu", I_TSTORER, "mt", 0, ENG_ACC}, {"tadd", I_TADD, "tt", 0, ENG_ACC},
	{"trelu", I_TRELU, "t", 0, ENG_ACC},   {"tstore.relu6", I_TSTORER6, "mt", 0, ENG_ACC},
	{"trelu6", I_TRELU6, "t", 0, ENG_ACC},   {"mma", I_MMA, "tmm", 0, ENG_ARRAY},
	{"mma.t", I_MMA, "tmm", F_BT, ENG_ARRAY},
	{"fence", I_FENCE, "", 0, 0},
};
#define NISA ((int)(sizeof isa / sizeof isa[0]))

/* The register classes the ISA knows, by their names in the .md. */
static const char rc_kinds[] = "asvkt";
#define NRC 5
#define MAXREGS 64

/* How an ISA entry is timed on this target. */
typedef struct {
	bool avail;
	int rule;        /* index into t->rules, or -1 (a move) */
	int64_t lat, thr;
	int nunits;
	int *units;      /* unit ids, nunits of them (core units only for non-engine entries) */
} EntryTiming;

/* ---- program ---------------------------------------------------------------- */

enum { K_REG, K_MEM, K_IMM, K_NAME };

typedef struct {
	uint8_t kind;
	uint8_t rc;      /* K_REG: class index in rc_kinds; K_MEM: base is class a */
	uint8_t reg;
	int64_t imm;     /* K_IMM value; K_MEM offset; K_NAME resolved index */
	int col;
} Opnd;

typedef struct {
	int16_t entry;   /* isa[] index */
	uint8_t nops;
	Opnd o[4];
	int line, col;
} Insn;

typedef struct {
	char *name;
	bool code;
	int index;       /* code: instruction index; data: data symbol index */
	int line, col;
} Sym;

typedef struct {
	char *name;
	uint8_t *bytes;
	size_t len, cap;
} DataSym;

/* ---- memory ------------------------------------------------------------------- */

typedef struct {
	uint64_t base, size;
	uint8_t *data;
	bool readonly;
	char *name;
} Region;

/* ---- statistics -------------------------------------------------------------- */

typedef struct {
	double cycles, macs, array_busy;
	uint64_t instructions;
	double st_dependency, st_structural, st_queue_full, st_dma, st_fence, st_bank;
	double dram_rd, dram_wr, sp_rd, sp_wr, acc_rd, acc_wr;
	double *unit_busy;   /* [nunits] */
	double commands[4];  /* by engine */
	int64_t ret;
	bool valid;
} Stats;

struct NpuSim {
	const Target *t;
	/* configuration */
	int n;                       /* tile side: array_rows = array_cols */
	bool os;                     /* output stationary, else weight stationary */
	int64_t obufs;               /* OS: output registers per PE (1, or 2: double-buffered) */
	const char *dataflow;
	double clock_ghz;            /* for "seconds" only (default 1) */
	int64_t sp_bytes, banks, acc_bytes, dma_bw, dma_lat, lanes, queue;
	int64_t dma_tiles;           /* the tiles one mvin / mvout may span (dma_max_tiles; 1) */
	bool trace;                  /* NPUSIM_TRACE: each engine command's times on stderr */
	int rc_index[NRC];           /* t->regclasses index of each ISA class, or -1 */
	int nregs[NRC];
	EntryTiming timing[NISA];
	int nunits;
	const char **unit_names;
	int engine_unit[4];          /* the unit a command's busy time is counted on */
	uint64_t max_insns;
	/* program */
	char *file;
	Insn *code;
	int ncode, capcode;
	Sym *syms;
	int nsyms, capsyms;
	DataSym *data;
	int ndata, capdata;
	bool loaded;
	/* machine */
	Region *regions;
	int nregions, nro;           /* the first nro are the program's data */
	uint64_t next_base;
	uint8_t *sp;                 /* scratchpad */
	float *acc;                  /* nslots tiles */
	int nslots;
	Stats st;
};

/* ---- helpers ------------------------------------------------------------------- */

static int64_t ceil_div(int64_t a, int64_t b)
{
	return a <= 0 ? 0 : (a + b - 1) / b;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static const char *first_word(const char *tmpl, size_t *len)
{
	while (*tmpl == ' ' || *tmpl == '\t')
		tmpl++;
	size_t k = 0;
	while (tmpl[k] && tmpl[k] != ' ' && tmpl[k] != '\t')
		k++;
	*len = k;
	return tmpl;
}

static int unit_id(NpuSim *s, const char *name)
{
	for (int i = 0; i < s->nunits; i++)
		if (strcmp(s->unit_names[i], name) == 0)
			return i;
	s->unit_names = xrealloc(s->unit_names, (size_t)(s->nunits + 1) * sizeof *s->unit_names);
	s->unit_names[s->nunits] = name;
	return s->nunits++;
}

static bool param_num(const Target *t, const char *name, double *out, Diag *d)
{
	const ParamInfo *p = target_param(t, name);
	if (!p || p->str || p->n != 1) {
		diag_error(d, loc_at("npusim", 0, 0), "target '%s' %s param '%s'", t->name,
			   p ? "needs a single number for" : "has no", name);
		return false;
	}
	*out = p->values[0];
	return true;
}

static bool param_int(const Target *t, const char *name, int64_t lo, int64_t hi, int64_t *out, Diag *d)
{
	double v;
	if (!param_num(t, name, &v, d))
		return false;
	if (v != floor(v) || v < (double)lo || v > (double)hi) {
		diag_error(d, loc_at("npusim", 0, 0), "target '%s': param %s = %g: need an integer in %" PRId64 "..%" PRId64,
			   t->name, name, v, lo, hi);
		return false;
	}
	*out = (int64_t)v;
	return true;
}

/* The kind letter of a rule operand, from its nonterminal: a register class
 * letter, 'i' for an immediate leaf, 'm' for a form (an address). */
static char nt_kind(const NpuSim *s, int nt)
{
	if (nt < 0)
		return 'i';
	const char *ntn = nt < s->t->grammar.nnts ? s->t->grammar.nt_names[nt] : "";
	for (int c = 0; c < NRC; c++)
		if (s->rc_index[c] >= 0 && strcmp(s->t->regclasses[s->rc_index[c]].name, ntn) == 0)
			return rc_kinds[c];
	return 'm';
}

static char rule_operand_kind(const NpuSim *s, const RuleInfo *r, const char *name, size_t len)
{
	if (r->result && strlen(r->result) == len && strncmp(r->result, name, len) == 0)
		return nt_kind(s, r->result_nt);
	for (int i = 0; i < r->nops; i++) {
		if (strlen(r->ops[i].name) != len || strncmp(r->ops[i].name, name, len) != 0)
			continue;
		return nt_kind(s, r->ops[i].nt);
	}
	return '?';
}
/* Does rule r time ISA entry e: same mnemonic, operand count and kinds? */
static bool rule_matches(const NpuSim *s, const RuleInfo *r, const IsaEntry *e)
{
	if (r->is_form || !r->asm_template)
		return false;
	size_t len;
	const char *w = first_word(r->asm_template, &len);
	if (len != strlen(e->mn) || strncmp(w, e->mn, len) != 0)
		return false;
	int nph = 0;
	bool kinds_ok = true;
	for (const char *p = w + len; *p; p++) {
		if (*p != '{')
			continue;
		const char *q = strchr(p, '}');
		if (!q)
			return false;
		char k = rule_operand_kind(s, r, p + 1, (size_t)(q - p - 1));
		char want = nph < (int)strlen(e->sig) ? e->sig[nph] : 0;
		bool want_reg = want && strchr(rc_kinds, want);
		bool is_reg = strchr(rc_kinds, k) != NULL;
		if (!want || (k != '?' && ((want_reg && k != want) || (!want_reg && is_reg))))
			kinds_ok = false;
		nph++;
		p = q;
	}
	int nsig = (int)strlen(e->sig);
	int nlab = strchr(e->sig, 'L') ? 1 : 0;
	return kinds_ok && nph + nlab == nsig;
}

static void setup_timing(NpuSim *s)
{
	const Target *t = s->t;
	for (int e = 0; e < NISA; e++) {
		EntryTiming *tm = &s->timing[e];
		memset(tm, 0, sizeof *tm);
		tm->rule = -1;
		for (int r = 0; r < t->nrules && !tm->avail; r++) {
			const RuleInfo *ri = &t->rules[r];
			if (!rule_matches(s, ri, &isa[e]))
				continue;
			tm->avail = true;
			tm->rule = r;
			tm->lat = (int64_t)ceil(ri->latency > 0 ? ri->latency : 1);
			tm->thr = (int64_t)ceil(ri->throughput > 0 ? ri->throughput : 1);
			tm->units = xmalloc(((size_t)ri->nunits + 1) * sizeof *tm->units);
			for (int u = 0; u < ri->nunits; u++)
				tm->units[tm->nunits++] = unit_id(s, ri->units[u]);
		}
		if (!tm->avail && (isa[e].flags & F_MOVE)) {
			/* A register move: the class's move template, latency 1, no unit. */
			int c = (int)(strchr(rc_kinds, isa[e].sig[0]) - rc_kinds);
			if (s->rc_index[c] >= 0) {
				const char *mv = t->regclasses[s->rc_index[c]].move;
				size_t len;
				const char *w = mv ? first_word(mv, &len) : NULL;
				if (w && len == strlen(isa[e].mn) && strncmp(w, isa[e].mn, len) == 0) {
					tm->avail = true;
					tm->lat = tm->thr = 1;
				}
			}
		}
		if (tm->avail && isa[e].engine && tm->nunits > 0 && s->engine_unit[isa[e].engine] < 0)
			s->engine_unit[isa[e].engine] = tm->units[0];
	}
	for (int g = 1; g < 4; g++)
		if (s->engine_unit[g] < 0)
			s->engine_unit[g] = unit_id(s, g == ENG_DMA ? "dma" : g == ENG_ARRAY ? "array" : "acc");
}

NpuSim *npusim_new(const Target *t, Diag *d)
{
	if (!t) {
		diag_error(d, loc_at("npusim", 0, 0), "no target");
		return NULL;
	}
	NpuSim *s = xcalloc(1, sizeof *s);
	s->t = t;
	s->max_insns = 20000000000ull;
	s->next_base = 1ull << 30;
	for (int g = 0; g < 4; g++)
		s->engine_unit[g] = -1;
	int64_t rows = 0, cols = 0;
	bool ok = param_int(t, "array_rows", 1, 1024, &rows, d);
	ok = param_int(t, "array_cols", 1, 1024, &cols, d) && ok;
	ok = param_int(t, "scratchpad_bytes", 1, (int64_t)1 << 34, &s->sp_bytes, d) && ok;
	ok = param_int(t, "scratchpad_banks", 1, 1 << 20, &s->banks, d) && ok;
	ok = param_int(t, "accumulator_bytes", 1, (int64_t)1 << 34, &s->acc_bytes, d) && ok;
	ok = param_int(t, "dma_bytes_per_cycle", 1, (int64_t)1 << 30, &s->dma_bw, d) && ok;
	ok = param_int(t, "dma_latency_cycles", 0, (int64_t)1 << 30, &s->dma_lat, d) && ok;
	ok = param_int(t, "vector_lanes", 1, 64, &s->lanes, d) && ok;
	ok = param_int(t, "command_queue", 1, 1 << 20, &s->queue, d) && ok;
	s->dma_tiles = 1;
	if (target_param(t, "dma_max_tiles"))
		ok = param_int(t, "dma_max_tiles", 1, 1 << 20, &s->dma_tiles, d) && ok;
	s->obufs = 1;
	if (target_param(t, "os_output_buffers"))
		ok = param_int(t, "os_output_buffers", 1, 2, &s->obufs, d) && ok;
	s->trace = getenv("NPUSIM_TRACE") && *getenv("NPUSIM_TRACE");
	const ParamInfo *ck = target_param(t, "clock_ghz");
	s->clock_ghz = ck && !ck->str && ck->n == 1 && ck->values[0] > 0 ? ck->values[0] : 1.0;
	const ParamInfo *df = target_param(t, "dataflow");
	if (!df || !df->str) {
		diag_error(d, loc_at("npusim", 0, 0), "target '%s' has no string param 'dataflow'", t->name);
		ok = false;
	} else if (strcmp(df->str, "weight_stationary") == 0 || strcmp(df->str, "output_stationary") == 0) {
		s->dataflow = df->str;
		s->os = strcmp(df->str, "output_stationary") == 0;
	} else {
		diag_error(d, loc_at("npusim", 0, 0),
			   "target '%s': param dataflow = \"%s\": need \"weight_stationary\" or \"output_stationary\"",
			   t->name, df->str);
		ok = false;
	}
	if (ok && rows != cols) {
		diag_error(d, loc_at("npusim", 0, 0),
			   "target '%s': params array_rows (%" PRId64 ") and array_cols (%" PRId64 ") differ: the simulator needs a square array",
			   t->name, rows, cols);
		ok = false;
	}
	if (ok && (s->lanes & (s->lanes - 1)) != 0) {
		diag_error(d, loc_at("npusim", 0, 0), "target '%s': param vector_lanes = %" PRId64 " is not a power of two",
			   t->name, s->lanes);
		ok = false;
	}
	s->n = (int)rows;
	for (int c = 0; c < NRC; c++) {
		s->rc_index[c] = -1;
		for (int i = 0; i < t->nregclasses; i++)
			if (t->regclasses[i].name[0] == rc_kinds[c] && t->regclasses[i].name[1] == 0)
				s->rc_index[c] = i;
		if (s->rc_index[c] >= 0) {
			s->nregs[c] = t->regclasses[s->rc_index[c]].nregs;
			if (s->nregs[c] > MAXREGS) {
				diag_error(d, loc_at("npusim", 0, 0), "target '%s': register class %s has more than %d registers",
					   t->name, t->regclasses[s->rc_index[c]].name, MAXREGS);
				ok = false;
			}
		}
	}
	s->nslots = s->nregs[4];
	if (ok && (double)s->nslots * rows * rows * 4 > (double)s->acc_bytes) {
		diag_error(d, loc_at("npusim", 0, 0),
			   "target '%s': %d tile slots of %" PRId64 " x %" PRId64 " f32 do not fit in accumulator_bytes = %" PRId64,
			   t->name, s->nslots, rows, rows, s->acc_bytes);
		ok = false;
	}
	if (ok && s->sp_bytes % (rows * 4) != 0) {
		diag_error(d, loc_at("npusim", 0, 0), "target '%s': scratchpad_bytes = %" PRId64 " is not a whole number of rows of %" PRId64 " bytes",
			   t->name, s->sp_bytes, rows * 4);
		ok = false;
	}
	if (!ok) {
		free(s);
		return NULL;
	}
	setup_timing(s);
	s->sp = xcalloc((size_t)s->sp_bytes, 1);
	s->acc = xcalloc((size_t)(s->nslots > 0 ? s->nslots : 1) * (size_t)(rows * rows), sizeof(float));
	s->st.unit_busy = xcalloc((size_t)s->nunits + 1, sizeof(double));
	return s;
}

void npusim_set_max_instructions(NpuSim *s, uint64_t n)
{
	s->max_insns = n;
}

static void free_program(NpuSim *s)
{
	for (int i = 0; i < s->nsyms; i++)
		free(s->syms[i].name);
	for (int i = 0; i < s->ndata; i++) {
		free(s->data[i].name);
		free(s->data[i].bytes);
	}
	for (int i = 0; i < s->nregions; i++)
		free(s->regions[i].name);
	free(s->regions);
	s->regions = NULL;
	s->nregions = s->nro = 0;
	s->next_base = 1ull << 30;
	free(s->syms);
	free(s->data);
	free(s->code);
	free(s->file);
	s->syms = NULL;
	s->data = NULL;
	s->code = NULL;
	s->file = NULL;
	s->nsyms = s->capsyms = s->ndata = s->capdata = s->ncode = s->capcode = 0;
	s->loaded = false;
}

void npusim_free(NpuSim *s)
{
	if (!s)
		return;
	free_program(s);
	for (int e = 0; e < NISA; e++)
		free(s->timing[e].units);
	free(s->unit_names);
	free(s->sp);
	free(s->acc);
	free(s->st.unit_busy);
	free(s);
}

/* ---- the assembler ------------------------------------------------------------ */

typedef struct {
	NpuSim *s;
	Diag *d;
	const char *file;
	int line;
	const char *lstart;  /* the line's first character */
	bool in_data;
	int cur_data;        /* the data symbol receiving bytes, or -1 */
	int pending_align;   /* bytes: pad the current symbol before more data */
	/* unresolved names: (insn, operand) */
	int *fix_insn, *fix_op, nfix, capfix;
	char **fix_name;
} Asm;

static bool is_ident_char(int c)
{
	return isalnum(c) || c == '_' || c == '.' || c == '$';
}

static int colof(const Asm *a, const char *p)
{
	return (int)(p - a->lstart) + 1;
}

static Sym *find_sym(NpuSim *s, const char *name, size_t len)
{
	for (int i = 0; i < s->nsyms; i++)
		if (strlen(s->syms[i].name) == len && strncmp(s->syms[i].name, name, len) == 0)
			return &s->syms[i];
	return NULL;
}

static void skip_ws(const char **p)
{
	while (**p == ' ' || **p == '\t' || **p == '\r')
		(*p)++;
}

/* A register name: its class (index in rc_kinds) and number, or false. */
static bool parse_reg(const NpuSim *s, const char *p, size_t len, int *rc, int *reg)
{
	for (int c = 0; c < NRC; c++) {
		if (s->rc_index[c] < 0)
			continue;
		const RegClassInfo *ri = &s->t->regclasses[s->rc_index[c]];
		for (int i = 0; i < ri->nregs; i++)
			if (strlen(ri->regs[i]) == len && strncmp(ri->regs[i], p, len) == 0) {
				*rc = c;
				*reg = i;
				return true;
			}
	}
	return false;
}

static bool parse_int(const char **p, int64_t *out)
{
	const char *q = *p;
	bool neg = false;
	if (*q == '+' || *q == '-')
		neg = *q++ == '-';
	if (!isdigit((unsigned char)*q))
		return false;
	errno = 0;
	char *end;
	uint64_t v = strtoull(q, &end, 0);
	if (errno || (!neg && v > (uint64_t)INT64_MAX) || (neg && v > (uint64_t)INT64_MAX + 1))
		return false;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	*p = end;
	return true;
}

static void data_put(DataSym *ds, const void *bytes, size_t n)
{
	if (ds->len + n > ds->cap) {
		ds->cap = (ds->len + n) * 2 + 64;
		ds->bytes = xrealloc(ds->bytes, ds->cap);
	}
	if (bytes)
		memcpy(ds->bytes + ds->len, bytes, n);
	else
		memset(ds->bytes + ds->len, 0, n);
	ds->len += n;
}

static bool add_label(Asm *a, const char *name, size_t len, int col)
{
	NpuSim *s = a->s;
	Sym *old = find_sym(s, name, len);
	if (old) {
		diag_error(a->d, loc_at(a->file, a->line, col), "label '%.*s' defined twice (first at line %d)", (int)len,
			   name, old->line);
		return false;
	}
	if (s->nsyms == s->capsyms) {
		s->capsyms = s->capsyms * 2 + 16;
		s->syms = xrealloc(s->syms, (size_t)s->capsyms * sizeof *s->syms);
	}
	Sym *sy = &s->syms[s->nsyms++];
	sy->name = xstrndup(name, len);
	sy->code = !a->in_data;
	sy->line = a->line;
	sy->col = col;
	if (sy->code) {
		sy->index = s->ncode;
	} else if (a->cur_data >= 0 && s->data[a->cur_data].len == 0) {
		sy->index = a->cur_data; /* two names for one (still empty) symbol */
	} else {
		if (s->ndata == s->capdata) {
			s->capdata = s->capdata * 2 + 16;
			s->data = xrealloc(s->data, (size_t)s->capdata * sizeof *s->data);
		}
		DataSym *ds = &s->data[s->ndata];
		memset(ds, 0, sizeof *ds);
		ds->name = xstrndup(name, len);
		sy->index = a->cur_data = s->ndata++;
		a->pending_align = 0;
	}
	return true;
}

/* .incbin "FILE"[, SKIP[, COUNT]]: FILE's bytes (as GNU as: the name as
 * written, relative to the working folder; escapes \\ \" \ooo \n \t). */
static void incbin(Asm *a, DataSym *ds, const char *p)
{
	skip_ws(&p);
	if (*p != '"') {
		diag_error(a->d, loc_at(a->file, a->line, colof(a, p)), ".incbin needs a file name in double quotes");
		return;
	}
	size_t cap = strlen(p) + 1, n = 0;
	char *name = xmalloc(cap);
	for (p++; *p && *p != '"'; p++) {
		if (*p != '\\') {
			name[n++] = *p;
			continue;
		}
		p++;
		if (*p >= '0' && *p <= '7') {
			int v = 0;
			for (int k = 0; k < 3 && *p >= '0' && *p <= '7'; k++, p++)
				v = v * 8 + (*p - '0');
			p--;
			name[n++] = (char)v;
		} else if (*p == 'n') {
			name[n++] = '\n';
		} else if (*p == 't') {
			name[n++] = '\t';
		} else if (*p) {
			name[n++] = *p;
		} else {
			break;
		}
	}
	name[n] = 0;
	if (*p != '"') {
		diag_error(a->d, loc_at(a->file, a->line, colof(a, p)), ".incbin: unterminated file name");
		free(name);
		return;
	}
	p++;
	int64_t skip = 0, count = -1;
	skip_ws(&p);
	if (*p == ',') {
		p++;
		skip_ws(&p);
		if (!parse_int(&p, &skip) || skip < 0) {
			diag_error(a->d, loc_at(a->file, a->line, colof(a, p)), ".incbin: expected a byte offset");
			free(name);
			return;
		}
		skip_ws(&p);
		if (*p == ',') {
			p++;
			skip_ws(&p);
			if (!parse_int(&p, &count) || count < 0) {
				diag_error(a->d, loc_at(a->file, a->line, colof(a, p)), ".incbin: expected a byte count");
				free(name);
				return;
			}
			skip_ws(&p);
		}
	}
	if (*p) {
		diag_error(a->d, loc_at(a->file, a->line, colof(a, p)), "unexpected '%c' after .incbin operands", *p);
		free(name);
		return;
	}
	FILE *f = fopen(name, "rb");
	if (!f) {
		diag_error(a->d, loc_at(a->file, a->line, 0), ".incbin \"%s\": %s", name, strerror(errno));
		free(name);
		return;
	}
	int64_t size = -1;
	if (fseeko(f, 0, SEEK_END) == 0)
		size = (int64_t)ftello(f);
	if (size < 0 || skip > size || (count >= 0 && count > size - skip) || fseeko(f, (off_t)skip, SEEK_SET) != 0) {
		diag_error(a->d, loc_at(a->file, a->line, 0), ".incbin \"%s\": %lld bytes from offset %lld are not in the file (%lld bytes)",
			   name, (long long)(count >= 0 ? count : 0), (long long)skip, (long long)size);
		fclose(f);
		free(name);
		return;
	}
	if (count < 0)
		count = size - skip;
	size_t at = ds->len;
	data_put(ds, NULL, (size_t)count);
	if (count && fread(ds->bytes + at, 1, (size_t)count, f) != (size_t)count)
		diag_error(a->d, loc_at(a->file, a->line, 0), ".incbin \"%s\": %s", name, ferror(f) ? strerror(errno) : "short read");
	fclose(f);
	free(name);
}

static bool data_directive(Asm *a, const char *dir, size_t dlen, const char *p, int dcol)
{
	int width = 0;
	bool isfloat = false;
	if (dlen == 5 && strncmp(dir, ".long", 5) == 0)
		width = 4;
	else if (dlen == 5 && strncmp(dir, ".word", 5) == 0)
		width = 4;
	else if (dlen == 5 && strncmp(dir, ".quad", 5) == 0)
		width = 8;
	else if (dlen == 5 && strncmp(dir, ".byte", 5) == 0)
		width = 1;
	else if (dlen == 6 && strncmp(dir, ".float", 6) == 0)
		width = 4, isfloat = true;
	else if (dlen == 7 && strncmp(dir, ".incbin", 7) == 0)
		width = -1;
	else if (!(dlen == 5 && strncmp(dir, ".zero", 5) == 0))
		return false;
	if (!a->in_data || a->cur_data < 0) {
		diag_error(a->d, loc_at(a->file, a->line, dcol), "%.*s %s", (int)dlen, dir,
			   a->in_data ? "before any label in the data section" : "in .text: data belongs in .section .rodata");
		return true;
	}
	DataSym *ds = &a->s->data[a->cur_data];
	if (a->pending_align > 1) {
		size_t pad = (size_t)a->pending_align - ds->len % (size_t)a->pending_align;
		if (pad != (size_t)a->pending_align)
			data_put(ds, NULL, pad);
		a->pending_align = 0;
	}
	if (width < 0)
		return incbin(a, ds, p), true;
	for (;;) {
		skip_ws(&p);
		const char *vstart = p;
		if (isfloat) {
			char *end;
			float f = strtof(p, &end);
			if (end == p) {
				diag_error(a->d, loc_at(a->file, a->line, colof(a, p)), "expected a number");
				return true;
			}
			data_put(ds, &f, 4);
			p = end;
		} else {
			int64_t v;
			if (!parse_int(&p, &v)) {
				diag_error(a->d, loc_at(a->file, a->line, colof(a, p)), "expected an integer");
				return true;
			}
			if (width == 0) {
				if (v < 0 || v > (1 << 30)) {
					diag_error(a->d, loc_at(a->file, a->line, colof(a, vstart)), ".zero %" PRId64 ": bad size", v);
					return true;
				}
				data_put(ds, NULL, (size_t)v);
			} else {
				if (width < 8 && (v < -((int64_t)1 << (width * 8 - 1)) || v >= ((int64_t)1 << (width * 8)))) {
					diag_error(a->d, loc_at(a->file, a->line, colof(a, vstart)), "value %" PRId64 " does not fit in %d bytes",
						   v, width);
					return true;
				}
				uint8_t b[8];
				uint64_t u = (uint64_t)v;
				for (int i = 0; i < width; i++)
					b[i] = (uint8_t)(u >> (8 * i));
				data_put(ds, b, (size_t)width);
			}
		}
		skip_ws(&p);
		if (*p == ',' && width) {
			p++;
			continue;
		}
		if (*p) {
			diag_error(a->d, loc_at(a->file, a->line, colof(a, p)), "unexpected '%c' after %.*s operand", *p, (int)dlen, dir);
		}
		return true;
	}
}

static void directive(Asm *a, const char *p)
{
	const char *dir = p;
	int dcol = colof(a, p);
	while (is_ident_char((unsigned char)*p) || *p == '-')
		p++;
	size_t dlen = (size_t)(p - dir);
	skip_ws(&p);
#define IS(str) (dlen == strlen(str) && strncmp(dir, str, dlen) == 0)
	if (IS(".text")) {
		a->in_data = false;
	} else if (IS(".rodata") || IS(".data")) {
		a->in_data = true;
		a->cur_data = -1;
	} else if (IS(".section")) {
		const char *nm = p;
		while (*p && *p != ',' && *p != ' ' && *p != '\t')
			p++;
		size_t nl = (size_t)(p - nm);
		if ((nl >= 7 && strncmp(nm, ".rodata", 7) == 0) || (nl >= 5 && strncmp(nm, ".data", 5) == 0)) {
			a->in_data = true;
			a->cur_data = -1;
		} else if (nl >= 5 && strncmp(nm, ".text", 5) == 0) {
			a->in_data = false;
		} else if (nl >= 5 && strncmp(nm, ".note", 5) == 0) {
			/* ignored (.note.GNU-stack) */
		} else {
			diag_error(a->d, loc_at(a->file, a->line, colof(a, nm)), "unsupported section '%.*s'", (int)nl, nm);
		}
	} else if (IS(".p2align") || IS(".balign") || IS(".align")) {
		int64_t v;
		const char *q = p;
		if (!parse_int(&q, &v) || v < 0 || (IS(".p2align") ? v > 30 : v > (1 << 30))) {
			diag_error(a->d, loc_at(a->file, a->line, colof(a, p)), "bad alignment");
			return;
		}
		if (a->in_data)
			a->pending_align = IS(".p2align") ? 1 << v : (int)v;
	} else if (IS(".globl") || IS(".global") || IS(".type") || IS(".size") || IS(".file") || IS(".ident") ||
		   IS(".local")) {
		/* no effect on the simulation */
	} else if (!data_directive(a, dir, dlen, p, dcol)) {
		diag_error(a->d, loc_at(a->file, a->line, dcol), "unknown directive '%.*s'", (int)dlen, dir);
	}
#undef IS
}

static void add_fix(Asm *a, int insn, int op, const char *name, size_t len)
{
	if (a->nfix == a->capfix) {
		a->capfix = a->capfix * 2 + 16;
		a->fix_insn = xrealloc(a->fix_insn, (size_t)a->capfix * sizeof *a->fix_insn);
		a->fix_op = xrealloc(a->fix_op, (size_t)a->capfix * sizeof *a->fix_op);
		a->fix_name = xrealloc(a->fix_name, (size_t)a->capfix * sizeof *a->fix_name);
	}
	a->fix_insn[a->nfix] = insn;
	a->fix_op[a->nfix] = op;
	a->fix_name[a->nfix++] = xstrndup(name, len);
}

static const char *kind_name(char k)
{
	switch (k) {
	case 'a': return "an a register";
	case 's': return "an s register";
	case 'v': return "a v register";
	case 'k': return "a k register";
	case 't': return "a t register";
	case 'm': return "a memory operand [aB+OFF]";
	case 'i': return "an immediate #K";
	case 'L': return "a label";
	case 'D': return "a data symbol";
	default: return "an operand";
	}
}

static void instruction(Asm *a, const char *p)
{
	NpuSim *s = a->s;
	const char *mn = p;
	int mcol = colof(a, p);
	while (*p && *p != ' ' && *p != '\t')
		p++;
	size_t mlen = (size_t)(p - mn);
	if (a->in_data) {
		diag_error(a->d, loc_at(a->file, a->line, mcol), "instruction '%.*s' in a data section", (int)mlen, mn);
		return;
	}
	Insn in;
	memset(&in, 0, sizeof in);
	in.line = a->line;
	in.col = mcol;
	char kinds[8];
	const char *names[4] = {0};
	size_t nlens[4] = {0};
	int nops = 0;
	skip_ws(&p);
	while (*p) {
		if (nops == 4) {
			diag_error(a->d, loc_at(a->file, a->line, colof(a, p)), "too many operands");
			return;
		}
		Opnd *o = &in.o[nops];
		o->col = colof(a, p);
		if (*p == '[') {
			p++;
			skip_ws(&p);
			const char *r = p;
			while (is_ident_char((unsigned char)*p))
				p++;
			int rc, reg;
			if (!parse_reg(s, r, (size_t)(p - r), &rc, &reg) || rc_kinds[rc] != 'a') {
				diag_error(a->d, loc_at(a->file, a->line, colof(a, r)), "expected an a register as the base of a memory operand");
				return;
			}
			o->kind = K_MEM;
			o->reg = (uint8_t)reg;
			skip_ws(&p);
			if (*p == '+' || *p == '-') {
				if (*p == '+')
					p++;
				skip_ws(&p);
				const char *q = p;
				if (!parse_int(&p, &o->imm)) {
					diag_error(a->d, loc_at(a->file, a->line, colof(a, q)), "expected an offset");
					return;
				}
				skip_ws(&p);
			}
			if (*p != ']') {
				diag_error(a->d, loc_at(a->file, a->line, colof(a, p)), "expected ']'");
				return;
			}
			p++;
			kinds[nops] = 'm';
		} else if (*p == '#') {
			p++;
			const char *q = p;
			if (!parse_int(&p, &o->imm)) {
				diag_error(a->d, loc_at(a->file, a->line, colof(a, q)), "expected an integer after '#'");
				return;
			}
			o->kind = K_IMM;
			kinds[nops] = 'i';
		} else if (is_ident_char((unsigned char)*p)) {
			const char *q = p;
			while (is_ident_char((unsigned char)*p))
				p++;
			int rc, reg;
			if (parse_reg(s, q, (size_t)(p - q), &rc, &reg)) {
				o->kind = K_REG;
				o->rc = (uint8_t)rc;
				o->reg = (uint8_t)reg;
				kinds[nops] = rc_kinds[rc];
			} else {
				o->kind = K_NAME;
				names[nops] = q;
				nlens[nops] = (size_t)(p - q);
				kinds[nops] = 'N';
			}
		} else {
			diag_error(a->d, loc_at(a->file, a->line, colof(a, p)), "unexpected '%c'", *p);
			return;
		}
		nops++;
		skip_ws(&p);
		if (*p == ',') {
			p++;
			skip_ws(&p);
			if (!*p) {
				diag_error(a->d, loc_at(a->file, a->line, colof(a, p)), "expected an operand after ','");
				return;
			}
		} else if (*p) {
			diag_error(a->d, loc_at(a->file, a->line, colof(a, p)), "expected ',' or the end of the line");
			return;
		}
	}
	kinds[nops] = 0;
	int known = -1, found = -1;
	for (int e = 0; e < NISA && found < 0; e++) {
		if (strlen(isa[e].mn) != mlen || strncmp(isa[e].mn, mn, mlen) != 0 || !s->timing[e].avail)
			continue;
		if (known < 0 || ((int)strlen(isa[known].sig) != nops && (int)strlen(isa[e].sig) == nops))
			known = e;
		if ((int)strlen(isa[e].sig) != nops)
			continue;
		bool ok = true;
		for (int i = 0; i < nops && ok; i++) {
			char w = isa[e].sig[i];
			ok = w == kinds[i] || ((w == 'L' || w == 'D') && kinds[i] == 'N');
		}
		if (ok)
			found = e;
	}
	if (known < 0) {
		diag_error(a->d, loc_at(a->file, a->line, mcol), "unknown mnemonic '%.*s' for target %s", (int)mlen, mn,
			   s->t->name);
		return;
	}
	if (found < 0) {
		const char *sig = isa[known].sig;
		if ((int)strlen(sig) != nops) {
			diag_error(a->d, loc_at(a->file, a->line, mcol), "'%.*s' takes %d operands, not %d", (int)mlen, mn,
				   (int)strlen(sig), nops);
			return;
		}
		for (int i = 0; i < nops; i++) {
			char w = sig[i];
			if (!(w == kinds[i] || ((w == 'L' || w == 'D') && kinds[i] == 'N'))) {
				diag_error(a->d, loc_at(a->file, a->line, in.o[i].col), "operand %d of '%.*s' must be %s", i + 1,
					   (int)mlen, mn, kind_name(w));
				return;
			}
		}
		return;
	}
	in.entry = (int16_t)found;
	in.nops = (uint8_t)nops;
	if (s->ncode == s->capcode) {
		s->capcode = s->capcode * 2 + 64;
		s->code = xrealloc(s->code, (size_t)s->capcode * sizeof *s->code);
	}
	for (int i = 0; i < nops; i++)
		if (in.o[i].kind == K_NAME)
			add_fix(a, s->ncode, i, names[i], nlens[i]);
	s->code[s->ncode++] = in;
}

static void line(Asm *a, const char *p)
{
	skip_ws(&p);
	while (*p) {
		/* a label? */
		const char *q = p;
		while (is_ident_char((unsigned char)*q))
			q++;
		if (q > p && *q == ':') {
			if (isdigit((unsigned char)*p))
				diag_error(a->d, loc_at(a->file, a->line, colof(a, p)), "a label cannot start with a digit");
			else
				add_label(a, p, (size_t)(q - p), colof(a, p));
			p = q + 1;
			skip_ws(&p);
			continue;
		}
		if (*p == '.')
			directive(a, p);
		else
			instruction(a, p);
		return;
	}
}

static void add_region(NpuSim *s, const char *name, uint64_t size, uint8_t *data, bool ro)
{
	s->regions = xrealloc(s->regions, (size_t)(s->nregions + 1) * sizeof *s->regions);
	Region *r = &s->regions[s->nregions++];
	r->base = s->next_base;
	r->size = size;
	r->data = data;
	r->readonly = ro;
	r->name = xstrdup(name);
	const uint64_t G = 1ull << 30;
	s->next_base = (r->base + size + G - 1) / G * G + G;
}

bool npusim_load(NpuSim *s, const char *text, const char *file, Diag *d)
{
	free_program(s);
	if (!file)
		file = "<program>";
	size_t tlen = strlen(text);
	file = diag_add_source(d, file, text, tlen);
	s->file = xstrdup(file);
	int before = d->nerrors;
	Asm a;
	memset(&a, 0, sizeof a);
	a.s = s;
	a.d = d;
	a.file = file;
	a.cur_data = -1;
	char *buf = NULL;
	size_t cap = 0;
	const char *p = text;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len + 1 > cap) {
			cap = len * 2 + 64;
			buf = xrealloc(buf, cap);
		}
		memcpy(buf, p, len);
		buf[len] = 0;
		/* comments: '#' not followed by a number (an immediate) */
		for (size_t i = 0; i < len; i++)
			if (buf[i] == '#' && !(buf[i + 1] == '-' || buf[i + 1] == '+' || isdigit((unsigned char)buf[i + 1]))) {
				buf[i] = 0;
				break;
			} else if (buf[i] == '"') { /* skip strings ("" in .section) */
				size_t j = i + 1;
				while (j < len && buf[j] != '"')
					j++;
				i = j;
			}
		for (size_t i = strlen(buf); i > 0 && (buf[i - 1] == ' ' || buf[i - 1] == '\t' || buf[i - 1] == '\r'); i--)
			buf[i - 1] = 0;
		a.line++;
		a.lstart = buf;
		line(&a, buf);
		p = e ? e + 1 : p + len;
	}
	free(buf);
	/* resolve names */
	for (int i = 0; i < a.nfix; i++) {
		Insn *in = &s->code[a.fix_insn[i]];
		Opnd *o = &in->o[a.fix_op[i]];
		char want = isa[in->entry].sig[a.fix_op[i]];
		Sym *sy = find_sym(s, a.fix_name[i], strlen(a.fix_name[i]));
		if (!sy)
			diag_error(d, loc_at(file, in->line, o->col), "unknown %s '%s'", want == 'L' ? "label" : "symbol",
				   a.fix_name[i]);
		else if (want == 'L' && !sy->code)
			diag_error(d, loc_at(file, in->line, o->col), "'%s' is a data symbol, not a code label", a.fix_name[i]);
		else if (want == 'D' && sy->code)
			diag_error(d, loc_at(file, in->line, o->col), "'%s' is a code label, not a data symbol", a.fix_name[i]);
		else
			o->imm = sy->index;
		free(a.fix_name[i]);
	}
	free(a.fix_insn);
	free(a.fix_op);
	free(a.fix_name);
	if (d->nerrors > before) {
		free_program(s);
		return false;
	}
	/* the read-only data regions, one per symbol, in symbol order */
	for (int i = 0; i < s->ndata; i++)
		add_region(s, s->data[i].name, s->data[i].len, s->data[i].bytes, true);
	s->nro = s->nregions;
	s->loaded = true;
	return true;
}

/* ---- the machine ---------------------------------------------------------------- */

typedef struct {
	NpuSim *s;
	Diag *d;
	const Insn *in;
	bool failed;
	/* registers */
	int64_t a[MAXREGS];
	float f[MAXREGS];
	float v[MAXREGS][64];
	uint64_t k[MAXREGS];
	/* timing */
	int64_t ready[NRC][MAXREGS];
	int64_t *unit_free;
	int64_t now;                 /* the earliest next issue */
	int64_t dma_free, array_free, acc_free, engines_done;
	int64_t *row_ready, *row_read; /* per scratchpad row */
	int64_t *slot_ready;
	bool *slot_by_mma;           /* the slot's last writer was an mma */
	int resident;                /* OS: the slot held in the array, or -1 */
	int64_t res_end, res_skew;   /* OS: its last streaming's end, the skew still to come */
	int64_t drain_free;          /* OS, double-buffered: the second register set free at */
	bool had_mma;
	int64_t *heap;               /* start times of commands not yet started */
	int nheap;
	int64_t row_bytes, stride;   /* dmacfg */
	int64_t estride;             /* dmaes: DRAM bytes between a row's elements (4: contiguous) */
	int64_t skip;                /* dmacfg: zero bytes before each scratchpad row's data */
} Run;

static void rt_error(Run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rt_error(Run *r, const char *fmt, ...)
{
	if (r->failed)
		return;
	r->failed = true;
	va_list ap;
	va_start(ap, fmt);
	char *m = xvasprintf(fmt, ap);
	va_end(ap);
	diag_error(r->d, loc_at(r->s->file, r->in->line, r->in->col), "%s", m);
	free(m);
}

/* The host pointer of n bytes at addr, or NULL after an error. */
static uint8_t *mem(Run *r, uint64_t addr, uint64_t n, bool write)
{
	NpuSim *s = r->s;
	const char *what = write ? "store" : "load";
	int lo = 0, hi = s->nregions - 1, found = -1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (s->regions[mid].base <= addr) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	if (found < 0 || addr - s->regions[found].base >= s->regions[found].size) {
		rt_error(r, "%s of %" PRIu64 " bytes at 0x%" PRIx64 " outside any buffer", what, n, addr);
		return NULL;
	}
	Region *g = &s->regions[found];
	uint64_t off = addr - g->base;
	if (n > g->size - off) {
		rt_error(r, "%s of %" PRIu64 " bytes at 0x%" PRIx64 " runs past the end of '%s' (%" PRIu64 " bytes at 0x%" PRIx64 ")",
			 what, n, addr, g->name, g->size, g->base);
		return NULL;
	}
	if (write && g->readonly) {
		rt_error(r, "store of %" PRIu64 " bytes at 0x%" PRIx64 " into read-only data '%s'", n, addr, g->name);
		return NULL;
	}
	return g->data + off;
}

static uint64_t eaddr(const Run *r, const Opnd *o)
{
	return (uint64_t)r->a[o->reg] + (uint64_t)o->imm;
}

/* The first scratchpad row of the tile at byte address addr, or -1. */
static int64_t sp_tile(Run *r, uint64_t addr)
{
	NpuSim *s = r->s;
	uint64_t rb = (uint64_t)s->n * 4;
	if (addr % rb != 0) {
		rt_error(r, "scratchpad address 0x%" PRIx64 " is not a multiple of %" PRIu64 " bytes (a tile row)", addr, rb);
		return -1;
	}
	if (addr >= (uint64_t)s->sp_bytes || (uint64_t)s->sp_bytes - addr < rb * (uint64_t)s->n) {
		rt_error(r, "tile at scratchpad address 0x%" PRIx64 " is outside the scratchpad (%" PRId64 " bytes)", addr,
			 s->sp_bytes);
		return -1;
	}
	return (int64_t)(addr / rb);
}

static int64_t rows_max(const int64_t *v, int64_t row, int n)
{
	int64_t m = 0;
	for (int i = 0; i < n; i++)
		m = max64(m, v[row + i]);
	return m;
}

static void rows_set(int64_t *v, int64_t row, int n, int64_t t)
{
	for (int i = 0; i < n; i++)
		v[row + i] = t;
}

static void rows_max_set(int64_t *v, int64_t row, int n, int64_t t)
{
	for (int i = 0; i < n; i++)
		v[row + i] = max64(v[row + i], t);
}

static void heap_push(Run *r, int64_t t)
{
	int i = r->nheap++;
	r->heap[i] = t;
	while (i > 0 && r->heap[(i - 1) / 2] > r->heap[i]) {
		int64_t x = r->heap[i];
		r->heap[i] = r->heap[(i - 1) / 2];
		r->heap[(i - 1) / 2] = x;
		i = (i - 1) / 2;
	}
}

static void heap_pop(Run *r)
{
	r->heap[0] = r->heap[--r->nheap];
	int i = 0;
	for (;;) {
		int l = 2 * i + 1, m = i;
		if (l < r->nheap && r->heap[l] < r->heap[m])
			m = l;
		if (l + 1 < r->nheap && r->heap[l + 1] < r->heap[m])
			m = l + 1;
		if (m == i)
			break;
		int64_t x = r->heap[i];
		r->heap[i] = r->heap[m];
		r->heap[m] = x;
		i = m;
	}
}

static void done(Run *r, int64_t t)
{
	r->engines_done = max64(r->engines_done, t);
}

/* OS: drain the resident slot out of the array (a tile op needs it).  One
 * set of output registers: the array stops to shift them out (n cycles);
 * two: the slot's results move to the second set (when it is free and the
 * skew of its last stream has passed) and drain from there while the array
 * goes on. */
static void os_drain(Run *r, int slot)
{
	NpuSim *s = r->s;
	if (!s->os || r->resident != slot)
		return;
	if (s->obufs > 1) {
		int64_t d0 = max64(r->res_end + r->res_skew, r->drain_free);
		r->slot_ready[slot] = r->drain_free = d0 + s->n;
		r->resident = -1;
		done(r, r->drain_free);
		return;
	}
	int64_t st = r->array_free;
	r->array_free = st + s->n;
	s->st.array_busy += s->n;
	s->st.unit_busy[s->engine_unit[ENG_ARRAY]] += s->n;
	r->slot_ready[slot] = r->array_free;
	r->resident = -1;
	done(r, r->array_free);
}

/* The base row of a DMA of `rows` rows at scratchpad address addr: rows
 * past a tile continue into the tiles after it (up to dma_max_tiles of
 * them), every one inside the scratchpad; -1 after the error.  *span: the
 * rows of the whole tiles it covers. */
static int64_t dma_rows(Run *r, uint64_t addr, int64_t rows, bool into, int64_t *span)
{
	NpuSim *s = r->s;
	int n = s->n;
	if (rows < 0 || rows > (int64_t)n * s->dma_tiles) {
		rt_error(r, "%s of %" PRId64 " rows: need 0..%" PRId64 " (%" PRId64 " tile%s of %d rows: dma_max_tiles)",
			 into ? "mvin" : "mvout", rows, (int64_t)n * s->dma_tiles, s->dma_tiles, s->dma_tiles == 1 ? "" : "s", n);
		return -1;
	}
	int64_t row = sp_tile(r, addr);
	if (row < 0)
		return -1;
	int64_t tiles = rows > n ? (rows + n - 1) / n : 1;
	if (row + tiles * n > s->sp_bytes / ((int64_t)n * 4)) {
		rt_error(r, "%s of %" PRId64 " rows at scratchpad address 0x%" PRIx64 " runs past the scratchpad (%" PRId64 " bytes)",
			 into ? "mvin" : "mvout", rows, addr, s->sp_bytes);
		return -1;
	}
	*span = tiles * n;
	return row;
}

/* The engine side of a command issued at `issue`; returns its start. */
static int64_t engine(Run *r, int op, int64_t issue)
{
	NpuSim *s = r->s;
	Stats *st = &s->st;
	const Insn *in = r->in;
	int n = s->n;
	double tile = (double)n * n * 4;
	switch (op) {
	case I_MVIN:
	case I_MVOUT: {
		int64_t rows = r->a[in->o[2].reg], span = n;
		int64_t row = dma_rows(r, eaddr(r, &in->o[op == I_MVIN ? 0 : 1]), rows, op == I_MVIN, &span);
		if (row < 0)
			return issue;
		/* (the bytes the rows span: a strided row moves its gaps too) */
		int64_t bytes = rows * ((r->row_bytes / 4 - 1) * r->estride + 4), xfer = ceil_div(bytes, s->dma_bw);
		int64_t start = max64(issue, r->dma_free);
		if (op == I_MVOUT)
			start = max64(start, rows_max(r->row_ready, row, (int)rows));
		r->dma_free = start + xfer;
		int64_t land = start + s->dma_lat + xfer;
		if (op == I_MVIN && (isa[in->entry].flags & F_KEEP)) {
			/* mvin.k: its rows only (the rest keep their data and times) */
			land = max64(land, rows_max(r->row_read, row, (int)rows));
			rows_max_set(r->row_ready, row, (int)rows, land);
			st->dram_rd += (double)bytes;
			st->sp_wr += (double)(rows * r->row_bytes);
		} else if (op == I_MVIN) {
			land = max64(land, rows_max(r->row_read, row, (int)span)); /* WAR: readers first */
			rows_set(r->row_ready, row, (int)span, land);
			st->dram_rd += (double)bytes;
			st->sp_wr += tile * (double)(span / n);
		} else {
			rows_max_set(r->row_read, row, (int)rows, start + xfer);
			st->dram_wr += (double)bytes;
			st->sp_rd += (double)bytes;
		}
		st->unit_busy[s->engine_unit[ENG_DMA]] += (double)xfer;
		done(r, land);
		return start;
	}
	case I_MMA: {
		int td = in->o[0].reg;
		int64_t ra = sp_tile(r, eaddr(r, &in->o[1]));
		int64_t rb = ra < 0 ? -1 : sp_tile(r, eaddr(r, &in->o[2]));
		if (rb < 0)
			return issue;
		int64_t base = max64(issue, r->array_free);
		int64_t start = max64(base, max64(rows_max(r->row_ready, ra, n), rows_max(r->row_ready, rb, n)));
		st->st_dma += (double)(start - base);
		bool other_slot = s->os ? r->resident != td : true;
		if (!r->slot_by_mma[td] || (s->os && other_slot))
			start = max64(start, r->slot_ready[td]);
		bool conflict = ((ra - rb) % s->banks + s->banks) % s->banks == 0;
		int64_t stream = conflict ? 2 * n : n, end;
		if (conflict)
			st->st_bank += n;
		if (!s->os) {
			bool hidden = r->had_mma && start == r->array_free;
			int64_t sstart = start + (hidden ? 0 : n);
			end = sstart + stream;
			r->slot_ready[td] = max64(r->slot_ready[td], end + 2 * n - 1);
		} else if (s->obufs > 1) {
			/* double-buffered output registers: the resident slot's
			 * results move to the second set (free once its last
			 * results drained) and drain from there; the new slot's
			 * wavefront follows the old one's directly (its fill hidden)
			 * when the array was busy up to this start */
			int64_t sw = 0;
			if (r->resident != td) {
				if (r->resident >= 0) {
					start = max64(start, r->drain_free);
					int64_t d0 = max64(r->res_end + r->res_skew, r->drain_free);
					r->slot_ready[r->resident] = r->drain_free = d0 + n;
					done(r, r->drain_free);
				}
				bool hidden = r->had_mma && start == r->array_free;
				sw = hidden ? 0 : 2 * n - 2;
				r->res_skew = hidden ? 2 * n - 2 : 0;
				r->resident = td;
			}
			end = start + sw + stream;
			r->res_end = end;
			r->slot_ready[td] = end + r->res_skew + n;
		} else {
			int64_t sw = 0;
			if (r->resident != td) {
				if (r->resident >= 0) {
					r->slot_ready[r->resident] = start + n;
					sw += n;
				}
				sw += 2 * n - 2;
				r->resident = td;
			}
			end = start + sw + stream;
			r->res_end = end;
			r->res_skew = 0;
			r->slot_ready[td] = end + n;
		}
		r->had_mma = true;
		r->slot_by_mma[td] = true;
		r->array_free = end;
		rows_max_set(r->row_read, ra, n, end);
		rows_max_set(r->row_read, rb, n, end);
		st->array_busy += (double)(end - start);
		st->unit_busy[s->engine_unit[ENG_ARRAY]] += (double)(end - start);
		st->macs += (double)n * n * n;
		st->sp_rd += 2 * tile;
		st->acc_rd += tile;
		st->acc_wr += tile;
		done(r, s->os ? end + r->res_skew : r->slot_ready[td]);
		return start;
	}
	default: { /* the accumulator unit */
		int slots[2], ns = 0;
		int64_t row = -1;
		int dst = -1;
		switch (op) {
		case I_TZERO: dst = slots[ns++] = in->o[0].reg; break;
		case I_TLOAD: dst = slots[ns++] = in->o[0].reg; row = sp_tile(r, eaddr(r, &in->o[1])); break;
		case I_TSTORE:
		case I_TSTORER:
		case I_TSTORER6: slots[ns++] = in->o[1].reg; row = sp_tile(r, eaddr(r, &in->o[0])); break;
		case I_TADD: dst = slots[ns++] = in->o[0].reg; slots[ns++] = in->o[1].reg; break;
		case I_TRELU:
		case I_TRELU6: dst = slots[ns++] = in->o[0].reg; break;
		}
		if (r->failed)
			return issue;
		for (int i = 0; i < ns; i++)
			os_drain(r, slots[i]);
		if (s->os && dst >= 0 && r->resident == dst)
			r->resident = -1;
		int64_t start = max64(issue, r->acc_free);
		for (int i = 0; i < ns; i++)
			start = max64(start, r->slot_ready[slots[i]]);
		if (op == I_TLOAD)
			start = max64(start, rows_max(r->row_ready, row, n));
		if (op == I_TSTORE || op == I_TSTORER || op == I_TSTORER6)
			start = max64(start, rows_max(r->row_read, row, n));
		int64_t end = start + (op == I_TZERO ? 1 : n);
		r->acc_free = end;
		for (int i = 0; i < ns; i++) {
			r->slot_ready[slots[i]] = end;
			r->slot_by_mma[slots[i]] = false;
		}
		if (op == I_TLOAD) {
			rows_max_set(r->row_read, row, n, end);
			st->sp_rd += tile;
		}
		if (op == I_TSTORE || op == I_TSTORER || op == I_TSTORER6) {
			rows_set(r->row_ready, row, n, end);
			st->sp_wr += tile;
		}
		st->acc_rd += (op == I_TZERO || op == I_TLOAD) ? 0 : tile * (op == I_TADD ? 2 : 1);
		st->acc_wr += (op == I_TSTORE || op == I_TSTORER || op == I_TSTORER6) ? 0 : tile;
		st->unit_busy[s->engine_unit[ENG_ACC]] += (double)(end - start);
		done(r, end);
		return start;
	}
	}
}

static float relu(float x)
{
	return x > 0.0f ? x : 0.0f;
}

/* min(max(x, 0), 6) (NaN stays NaN, as in the reference's Clip) */
static float relu6(float x)
{
	return x < 0.0f ? 0.0f : x > 6.0f ? 6.0f : x;
}

/* The functional effect of one instruction; returns the next pc, or -1. */
static int execute(Run *r, int pc)
{
	NpuSim *s = r->s;
	const Insn *in = r->in;
	const Opnd *o = in->o;
	int L = (int)s->lanes, n = s->n;
	int64_t *A = r->a;
	float *F = r->f;
	int d0 = o[0].reg, x = o[1].reg, y = o[2].reg;
	uint8_t *m;
	switch (isa[in->entry].op) {
	case I_LI: A[d0] = o[1].imm; break;
	case I_LA: A[d0] = (int64_t)s->regions[o[1].imm].base; break;
	case I_MV: A[d0] = A[x]; break;
	case I_ADD: A[d0] = (int64_t)((uint64_t)A[x] + (uint64_t)A[y]); break;
	case I_SUB: A[d0] = (int64_t)((uint64_t)A[x] - (uint64_t)A[y]); break;
	case I_MUL: A[d0] = (int64_t)((uint64_t)A[x] * (uint64_t)A[y]); break;
	case I_SHL: A[d0] = (int64_t)((uint64_t)A[x] << (A[y] & 63)); break;
	case I_MIN: A[d0] = A[x] < A[y] ? A[x] : A[y]; break;
	case I_MAX: A[d0] = A[x] > A[y] ? A[x] : A[y]; break;
	case I_ADDI: A[d0] = (int64_t)((uint64_t)A[x] + (uint64_t)o[2].imm); break;
	case I_SHLI: A[d0] = (int64_t)((uint64_t)A[x] << (o[2].imm & 63)); break;
	case I_LD:
		if ((m = mem(r, eaddr(r, &o[1]), 8, false)))
			memcpy(&A[d0], m, 8);
		break;
	case I_LDW:
		if ((m = mem(r, eaddr(r, &o[1]), 4, false))) {
			int32_t w;
			memcpy(&w, m, 4);
			A[d0] = w;
		}
		break;
	case I_ST:
		if ((m = mem(r, eaddr(r, &o[1]), 8, true)))
			memcpy(m, &A[d0], 8);
		break;
	case I_SB:
		if ((m = mem(r, eaddr(r, &o[1]), 1, true)))
			*m = (uint8_t)A[d0];
		break;
	case I_J: return (int)o[0].imm;
	case I_BLT: return A[d0] < A[x] ? (int)o[2].imm : pc + 1;
	case I_RET: return -1;
	case I_FADD: F[d0] = F[x] + F[y]; break;
	case I_FSUB: F[d0] = F[x] - F[y]; break;
	case I_FMUL: F[d0] = F[x] * F[y]; break;
	case I_FMAX: F[d0] = fmaxf(F[x], F[y]); break;
	case I_FMIN: F[d0] = fminf(F[x], F[y]); break;
	case I_FFMA: F[d0] = fmaf(F[x], F[y], F[o[3].reg]); break;
	case I_FNEG: F[d0] = -F[x]; break;
	case I_FABS: F[d0] = fabsf(F[x]); break;
	case I_FMV: F[d0] = F[x]; break;
	case I_FLD:
		if ((m = mem(r, eaddr(r, &o[1]), 4, false)))
			memcpy(&F[d0], m, 4);
		break;
	case I_FST:
		if ((m = mem(r, eaddr(r, &o[1]), 4, true)))
			memcpy(m, &F[d0], 4);
		break;
	case I_VADD: case I_VSUB: case I_VMUL: case I_VMAX: case I_VMIN: {
		float t[64];
		for (int i = 0; i < L; i++) {
			float p = r->v[x][i], q = r->v[y][i];
			switch (isa[in->entry].op) {
			case I_VADD: t[i] = p + q; break;
			case I_VSUB: t[i] = p - q; break;
			case I_VMUL: t[i] = p * q; break;
			case I_VMAX: t[i] = fmaxf(p, q); break;
			default: t[i] = fminf(p, q); break;
			}
		}
		memcpy(r->v[d0], t, (size_t)L * sizeof(float));
		break;
	}
	case I_VFMA:
		for (int i = 0; i < L; i++)
			r->v[d0][i] = fmaf(r->v[x][i], r->v[y][i], r->v[d0][i]);
		break;
	case I_VFMAS: {
		float c = F[y];
		for (int i = 0; i < L; i++)
			r->v[d0][i] = fmaf(r->v[x][i], c, r->v[d0][i]);
		break;
	}
	case I_VMULS: {
		float c = F[y];
		for (int i = 0; i < L; i++)
			r->v[d0][i] = r->v[x][i] * c;
		break;
	}
	case I_VNEG:
		for (int i = 0; i < L; i++)
			r->v[d0][i] = -r->v[x][i];
		break;
	case I_VABS:
		for (int i = 0; i < L; i++)
			r->v[d0][i] = fabsf(r->v[x][i]);
		break;
	case I_VBCAST:
		for (int i = 0; i < L; i++)
			r->v[d0][i] = F[x];
		break;
	case I_VBCASTM:
		if ((m = mem(r, eaddr(r, &o[1]), 4, false))) {
			float c;
			memcpy(&c, m, 4);
			for (int i = 0; i < L; i++)
				r->v[d0][i] = c;
		}
		break;
	case I_VMV: memmove(r->v[d0], r->v[x], (size_t)L * sizeof(float)); break;
	case I_VLD:
		if ((m = mem(r, eaddr(r, &o[1]), (uint64_t)L * 4, false)))
			memcpy(r->v[d0], m, (size_t)L * 4);
		break;
	case I_VST:
		if ((m = mem(r, eaddr(r, &o[1]), (uint64_t)L * 4, true)))
			memcpy(m, r->v[d0], (size_t)L * 4);
		break;
	case I_VLDM: {
		float t[64];
		uint64_t q = r->k[o[2].reg];
		for (int i = 0; i < L && !r->failed; i++) {
			t[i] = 0.0f;
			if ((q >> i) & 1) {
				if ((m = mem(r, eaddr(r, &o[1]) + 4 * (uint64_t)i, 4, false)))
					memcpy(&t[i], m, 4);
			}
		}
		if (!r->failed)
			memcpy(r->v[d0], t, (size_t)L * sizeof(float));
		break;
	}
	case I_VSTM: {
		uint64_t q = r->k[o[2].reg];
		for (int i = 0; i < L && !r->failed; i++)
			if ((q >> i) & 1) {
				if ((m = mem(r, eaddr(r, &o[1]) + 4 * (uint64_t)i, 4, true)))
					memcpy(m, &r->v[d0][i], 4);
			}
		break;
	}
	case I_VMASK: {
		int64_t c = A[x];
		r->k[d0] = c <= 0 ? 0 : c >= L ? (L == 64 ? ~0ull : (1ull << L) - 1) : (1ull << c) - 1;
		break;
	}
	case I_VCMPLT: case I_VCMPLE: {
		uint64_t q = 0;
		bool le = isa[in->entry].op == I_VCMPLE;
		for (int i = 0; i < L; i++) {
			float p = r->v[x][i], w = r->v[y][i];
			if (le ? p <= w : p < w)
				q |= 1ull << i;
		}
		r->k[d0] = q;
		break;
	}
	case I_VSEL: {
		uint64_t q = r->k[x];
		float t[64];
		for (int i = 0; i < L; i++)
			t[i] = (q >> i) & 1 ? r->v[y][i] : r->v[o[3].reg][i];
		memcpy(r->v[d0], t, (size_t)L * sizeof(float));
		break;
	}
	case I_VREDSUM: case I_VREDMAX: {
		float t[64];
		memcpy(t, r->v[x], (size_t)L * sizeof(float));
		bool mx = isa[in->entry].op == I_VREDMAX;
		for (int h = L / 2; h >= 1; h /= 2)
			for (int i = 0; i < h; i++)
				t[i] = mx ? fmaxf(t[i], t[i + h]) : t[i] + t[i + h];
		F[d0] = t[0];
		break;
	}
	case I_DMACFG: {
		int64_t rb = A[d0], str = A[x], sk = in->nops > 2 ? A[o[2].reg] : 0;
		if (rb < 1 || rb > (int64_t)n * 4 || rb % 4 != 0) {
			rt_error(r, "dmacfg: row length %" PRId64 " bytes: need a multiple of 4 in 4..%d", rb, n * 4);
			break;
		}
		if (sk < 0 || sk % 4 != 0 || sk + rb > (int64_t)n * 4) {
			rt_error(r, "dmacfg: %" PRId64 " bytes skipped before rows of %" PRId64 ": need a multiple of 4, and at most %d in all",
				 sk, rb, n * 4);
			break;
		}
		r->skip = sk;
		if (str < 0) {
			rt_error(r, "dmacfg: negative row stride %" PRId64, str);
			break;
		}
		r->row_bytes = rb;
		r->stride = str;
		r->estride = 4;
		break;
	}
	case I_DMAES: {
		int64_t es = A[d0];
		if (es < 4 || es % 4 != 0 || es > (int64_t)1 << 30) {
			rt_error(r, "dmaes: element stride %" PRId64 " bytes: need a multiple of 4 in 4..%" PRId64, es, (int64_t)1 << 30);
			break;
		}
		r->estride = es;
		break;
	}
	case I_MVIN: case I_MVOUT: {
		bool into = isa[in->entry].op == I_MVIN;
		int64_t rows = A[o[2].reg], tspan = n;
		int64_t row = dma_rows(r, eaddr(r, &o[into ? 0 : 1]), rows, into, &tspan);
		if (row < 0)
			break;
		uint64_t dram = eaddr(r, &o[into ? 1 : 0]);
		uint8_t *t = s->sp + row * n * 4;
		bool keep = (isa[in->entry].flags & F_KEEP) != 0;
		for (int64_t i = 0; i < (into && !keep ? tspan : rows) && !r->failed; i++) {
			uint8_t *rowp = t + i * n * 4;
			if (into && i >= rows) {
				memset(rowp, 0, (size_t)n * 4);
				continue;
			}
			/* (a strided row spans (elements - 1) strides and an element) */
			int64_t ne = r->row_bytes / 4, span = (ne - 1) * r->estride + 4;
			if (!(m = mem(r, dram + (uint64_t)i * (uint64_t)r->stride, (uint64_t)span, !into)))
				break;
			if (into) {
				if (!keep)
					memset(rowp, 0, (size_t)r->skip);
				for (int64_t e = 0; e < ne; e++)
					memcpy(rowp + r->skip + e * 4, m + e * r->estride, 4);
				if (!keep)
					memset(rowp + r->skip + r->row_bytes, 0, (size_t)(n * 4 - r->skip - r->row_bytes));
			} else {
				for (int64_t e = 0; e < ne; e++)
					memcpy(m + e * r->estride, rowp + r->skip + e * 4, 4);
			}
		}
		break;
	}
	case I_TZERO:
		memset(s->acc + (size_t)d0 * n * n, 0, (size_t)n * n * sizeof(float));
		break;
	case I_TLOAD: {
		int64_t row = sp_tile(r, eaddr(r, &o[1]));
		if (row >= 0)
			memcpy(s->acc + (size_t)d0 * n * n, s->sp + row * n * 4, (size_t)n * n * 4);
		break;
	}
	case I_TSTORE: case I_TSTORER: case I_TSTORER6: {
		int64_t row = sp_tile(r, eaddr(r, &o[0]));
		if (row < 0)
			break;
		float *src = s->acc + (size_t)x * n * n;
		if (isa[in->entry].op == I_TSTORE) {
			memcpy(s->sp + row * n * 4, src, (size_t)n * n * 4);
		} else {
			bool six = isa[in->entry].op == I_TSTORER6;
			for (int i = 0; i < n * n; i++) {
				float v = six ? relu6(src[i]) : relu(src[i]);
				memcpy(s->sp + row * n * 4 + i * 4, &v, 4);
			}
		}
		break;
	}
	case I_TADD: {
		float *dst = s->acc + (size_t)d0 * n * n, *src = s->acc + (size_t)x * n * n;
		for (int i = 0; i < n * n; i++)
			dst[i] += src[i];
		break;
	}
	case I_TRELU: case I_TRELU6: {
		float *dst = s->acc + (size_t)d0 * n * n;
		bool six = isa[in->entry].op == I_TRELU6;
		for (int i = 0; i < n * n; i++)
			dst[i] = six ? relu6(dst[i]) : relu(dst[i]);
		break;
	}
	case I_MMA: {
		int64_t ra = sp_tile(r, eaddr(r, &o[1]));
		int64_t rb = ra < 0 ? -1 : sp_tile(r, eaddr(r, &o[2]));
		if (rb < 0)
			break;
		float *c = s->acc + (size_t)d0 * n * n;
		const uint8_t *pa = s->sp + ra * n * 4, *pb = s->sp + rb * n * 4;
		bool bt = (isa[in->entry].flags & F_BT) != 0;
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++) {
				float acc = c[i * n + j];
				for (int kk = 0; kk < n; kk++) {
					float av, bv;
					memcpy(&av, pa + ((size_t)i * n + kk) * 4, 4);
					memcpy(&bv, pb + (bt ? (size_t)j * n + kk : (size_t)kk * n + j) * 4, 4);
					acc = fmaf(av, bv, acc);
				}
				c[i * n + j] = acc;
			}
		break;
	}
	case I_FENCE: break;
	}
	return pc + 1;
}

static int reg_slot_kind(char k)
{
	const char *p = strchr(rc_kinds, k);
	return p ? (int)(p - rc_kinds) : -1;
}

/* The timing of one instruction (before its functional effect, which reads
 * the same registers). */
static void timing(Run *r)
{
	NpuSim *s = r->s;
	Stats *st = &s->st;
	const Insn *in = r->in;
	const IsaEntry *e = &isa[in->entry];
	const EntryTiming *tm = &s->timing[in->entry];
	int64_t t0 = r->now, t1 = t0;
	/* sources: registers read, memory bases */
	for (int i = 0; i < in->nops; i++) {
		const Opnd *o = &in->o[i];
		if (o->kind == K_MEM) {
			t1 = max64(t1, r->ready[0][o->reg]);
		} else if (o->kind == K_REG && o->rc != 4 && (i > 0 || !(e->flags & F_W0) || (e->flags & F_R0))) {
			t1 = max64(t1, r->ready[o->rc][o->reg]);
		}
	}
	st->st_dependency += (double)(t1 - t0);
	int64_t t2 = t1;
	if (!e->engine)
		for (int u = 0; u < tm->nunits; u++)
			t2 = max64(t2, r->unit_free[tm->units[u]]);
	st->st_structural += (double)(t2 - t1);
	int64_t issue = t2;
	if (e->engine) {
		int64_t q0 = issue;
		while (r->nheap > 0 && r->heap[0] <= issue)
			heap_pop(r);
		while (r->nheap >= s->queue) {
			issue = max64(issue, r->heap[0]);
			while (r->nheap > 0 && r->heap[0] <= issue)
				heap_pop(r);
		}
		st->st_queue_full += (double)(issue - q0);
		int64_t start = engine(r, e->op, issue);
		if (s->trace) /* NPUSIM_TRACE (docs/npusim.md) */
			fprintf(stderr, "npusim: %-11s issue %lld start %lld array-free %lld\n", e->mn, (long long)issue, (long long)start,
				(long long)r->array_free);
		if (start > issue)
			heap_push(r, start);
		st->commands[e->engine] += 1;
	} else {
		for (int u = 0; u < tm->nunits; u++) {
			r->unit_free[tm->units[u]] = issue + tm->thr;
			st->unit_busy[tm->units[u]] += (double)tm->thr;
		}
	}
	if (e->op == I_FENCE && r->engines_done > issue) {
		st->st_fence += (double)(r->engines_done - issue);
		issue = r->engines_done;
	}
	if ((e->flags & F_W0) && in->o[0].kind == K_REG) {
		int c = reg_slot_kind(e->sig[0]);
		if (c >= 0 && c != 4)
			r->ready[c][in->o[0].reg] = issue + tm->lat;
	}
	r->now = issue + 1;
	if (e->op == I_RET)
		st->cycles = (double)max64(issue + tm->lat, r->engines_done);
}

bool npusim_has_function(const NpuSim *s, const char *entry)
{
	const Sym *sy = s->loaded ? find_sym((NpuSim *)s, entry, strlen(entry)) : NULL;
	return sy && sy->code;
}

bool npusim_run(NpuSim *s, const char *entry, int nbufs, void *const *bufs, const size_t *sizes, int64_t *ret,
		Diag *d)
{
	if (!s->loaded) {
		diag_error(d, loc_at("npusim", 0, 0), "no program loaded");
		return false;
	}
	Sym *sy = find_sym(s, entry, strlen(entry));
	if (!sy || !sy->code) {
		diag_error(d, loc_at(s->file, 0, 0), "no function '%s' in the program", entry);
		return false;
	}
	double *ub = s->st.unit_busy;
	memset(&s->st, 0, sizeof s->st);
	memset(ub, 0, ((size_t)s->nunits + 1) * sizeof *ub);
	s->st.unit_busy = ub;
	memset(s->sp, 0, (size_t)s->sp_bytes);
	memset(s->acc, 0, (size_t)(s->nslots > 0 ? s->nslots : 1) * (size_t)s->n * s->n * sizeof(float));
	/* the run's regions: the args array, the buffers, the stack */
	if (nbufs < 0)
		nbufs = 0;
	uint64_t abytes = (uint64_t)(nbufs > 0 ? nbufs : 1) * 8;
	add_region(s, "args", abytes, xcalloc(abytes, 1), true);
	int args_region = s->nregions - 1;
	for (int i = 0; i < nbufs; i++) {
		uint64_t sz = sizes[i];
		uint8_t *b = xcalloc(sz ? sz : 1, 1);
		if (bufs[i] && sz)
			memcpy(b, bufs[i], sz);
		char *nm = xasprintf("buffer %d", i);
		add_region(s, nm, sz, b, false);
		free(nm);
		uint64_t base = s->regions[s->nregions - 1].base;
		memcpy(s->regions[args_region].data + 8 * i, &base, 8);
	}
	const uint64_t stack_bytes = 1 << 20;
	add_region(s, "stack", stack_bytes, xcalloc(stack_bytes, 1), false);
	uint64_t stack_top = s->regions[s->nregions - 1].base + stack_bytes;

	Run *r = xcalloc(1, sizeof *r);
	r->s = s;
	r->d = d;
	r->unit_free = xcalloc((size_t)s->nunits + 1, sizeof *r->unit_free);
	int64_t nrows = s->sp_bytes / (s->n * 4);
	r->row_ready = xcalloc((size_t)nrows, sizeof *r->row_ready);
	r->row_read = xcalloc((size_t)nrows, sizeof *r->row_read);
	r->slot_ready = xcalloc((size_t)s->nslots + 1, sizeof *r->slot_ready);
	r->slot_by_mma = xcalloc((size_t)s->nslots + 1, sizeof *r->slot_by_mma);
	r->heap = xcalloc((size_t)s->queue + 1, sizeof *r->heap);
	r->resident = -1;
	r->row_bytes = r->stride = (int64_t)s->n * 4;
	r->estride = 4;
	r->skip = 0;
	r->a[0] = (int64_t)s->regions[args_region].base;
	/* the stack and frame pointers: the abi's names */
	const char *spn = s->t->abi.stack_pointer, *fpn = s->t->abi.frame_pointer;
	int rc, reg;
	if (spn && parse_reg(s, spn, strlen(spn), &rc, &reg) && rc == 0)
		r->a[reg] = (int64_t)stack_top;
	if (fpn && parse_reg(s, fpn, strlen(fpn), &rc, &reg) && rc == 0)
		r->a[reg] = (int64_t)stack_top;

	int pc = sy->index;
	bool ok = true;
	for (;;) {
		if (pc < 0 || pc >= s->ncode) {
			diag_error(d, loc_at(s->file, 0, 0), "execution ran past the end of the program (no ret)");
			ok = false;
			break;
		}
		if (s->st.instructions >= s->max_insns) {
			r->in = &s->code[pc];
			rt_error(r, "stopped after %" PRIu64 " instructions (the limit)", s->max_insns);
			ok = false;
			break;
		}
		r->in = &s->code[pc];
		s->st.instructions++;
		timing(r);
		if (r->failed) {
			ok = false;
			break;
		}
		int next = execute(r, pc);
		if (r->failed) {
			ok = false;
			break;
		}
		if (next < 0)
			break;
		pc = next;
	}
	if (ok) {
		s->st.ret = r->a[0];
		s->st.valid = true;
		if (ret)
			*ret = r->a[0];
		for (int i = 0; i < nbufs; i++)
			if (bufs[i] && sizes[i])
				memcpy(bufs[i], s->regions[args_region + 1 + i].data, sizes[i]);
	}
	for (int i = s->nro; i < s->nregions; i++) {
		free(s->regions[i].data);
		free(s->regions[i].name);
	}
	s->nregions = s->nro;
	if (s->nro > 0) {
		const uint64_t G = 1ull << 30;
		Region *g = &s->regions[s->nro - 1];
		s->next_base = (g->base + g->size + G - 1) / G * G + G;
	} else {
		s->next_base = 1ull << 30;
	}
	free(r->unit_free);
	free(r->row_ready);
	free(r->row_read);
	free(r->slot_ready);
	free(r->slot_by_mma);
	free(r->heap);
	free(r);
	return ok;
}

/* ---- statistics ------------------------------------------------------------------- */

double npusim_cycles(const NpuSim *s)
{
	return s->st.cycles;
}

double npusim_macs(const NpuSim *s)
{
	return s->st.macs;
}

double npusim_utilization(const NpuSim *s)
{
	return s->st.cycles > 0 ? s->st.macs / (s->st.cycles * s->n * s->n) : 0;
}

double npusim_array_busy(const NpuSim *s)
{
	return s->st.array_busy;
}

uint64_t npusim_instructions(const NpuSim *s)
{
	return s->st.instructions;
}

double npusim_stall(const NpuSim *s, const char *name)
{
	const Stats *t = &s->st;
	const struct { const char *n; double v; } tab[] = {
		{"dependency", t->st_dependency}, {"structural", t->st_structural}, {"queue_full", t->st_queue_full},
		{"dma", t->st_dma}, {"fence", t->st_fence}, {"bank_conflict", t->st_bank},
	};
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (strcmp(tab[i].n, name) == 0)
			return tab[i].v;
	return -1;
}

double npusim_traffic(const NpuSim *s, const char *name)
{
	const Stats *t = &s->st;
	const struct { const char *n; double v; } tab[] = {
		{"dram_read_bytes", t->dram_rd}, {"dram_write_bytes", t->dram_wr}, {"scratchpad_read_bytes", t->sp_rd},
		{"scratchpad_write_bytes", t->sp_wr}, {"accumulator_read_bytes", t->acc_rd},
		{"accumulator_write_bytes", t->acc_wr},
	};
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (strcmp(tab[i].n, name) == 0)
			return tab[i].v;
	return -1;
}

double npusim_unit_busy(const NpuSim *s, const char *unit)
{
	for (int i = 0; i < s->nunits; i++)
		if (strcmp(s->unit_names[i], unit) == 0)
			return s->st.unit_busy[i];
	return -1;
}

static void json_str(FILE *out, const char *str)
{
	fputc('"', out);
	for (const char *p = str; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

void npusim_stats_json(const NpuSim *s, FILE *out)
{
	const Stats *t = &s->st;
	double nn = (double)s->n * s->n;
	fprintf(out, "{\n  \"schema\": \"gdcc.npusim\",\n  \"version\": 1,\n  \"target\": ");
	json_str(out, s->t->name);
	fprintf(out, ",\n  \"array\": {\"rows\": %d, \"cols\": %d, \"dataflow\": ", s->n, s->n);
	json_str(out, s->dataflow);
	fprintf(out, "},\n  \"completed\": %s,\n", t->valid ? "true" : "false");
	fprintf(out, "  \"cycles\": %.0f,\n  \"instructions\": %" PRIu64 ",\n  \"macs\": %.0f,\n", t->cycles,
		t->instructions, t->macs);
	fprintf(out, "  \"pe_utilization\": %.6f,\n", npusim_utilization(s));
	fprintf(out, "  \"array_busy_cycles\": %.0f,\n", t->array_busy);
	fprintf(out, "  \"array_utilization_busy\": %.6f,\n", t->array_busy > 0 ? t->macs / (t->array_busy * nn) : 0.0);
	fprintf(out, "  \"seconds\": %.9g,\n", t->cycles / (s->clock_ghz * 1e9));
	fprintf(out, "  \"stalls\": {\"dependency\": %.0f, \"structural\": %.0f, \"queue_full\": %.0f, \"dma\": %.0f, "
		     "\"fence\": %.0f, \"bank_conflict\": %.0f},\n",
		t->st_dependency, t->st_structural, t->st_queue_full, t->st_dma, t->st_fence, t->st_bank);
	fprintf(out, "  \"traffic\": {\"dram_read_bytes\": %.0f, \"dram_write_bytes\": %.0f, \"scratchpad_read_bytes\": %.0f, "
		     "\"scratchpad_write_bytes\": %.0f, \"accumulator_read_bytes\": %.0f, \"accumulator_write_bytes\": %.0f},\n",
		t->dram_rd, t->dram_wr, t->sp_rd, t->sp_wr, t->acc_rd, t->acc_wr);
	fprintf(out, "  \"commands\": {\"dma\": %.0f, \"array\": %.0f, \"acc\": %.0f},\n", t->commands[ENG_DMA],
		t->commands[ENG_ARRAY], t->commands[ENG_ACC]);
	fprintf(out, "  \"units\": {");
	for (int i = 0; i < s->nunits; i++) {
		fprintf(out, "%s", i ? ", " : "");
		json_str(out, s->unit_names[i]);
		fprintf(out, ": %.0f", t->unit_busy[i]);
	}
	fprintf(out, "},\n  \"ret\": %" PRId64 "\n}\n", t->ret);
}

/* ---- targets with overridden params ------------------------------------------- */

typedef struct {
	Target t;            /* first: the copy is handed out as a Target * */
	ParamInfo *params;
	char **strs;         /* owned strings and value arrays, per param (NULL: borrowed) */
	double **vals;
} TargetCopy;

Target *target_with_params(const Target *t, int n, const char *const *settings, Diag *d)
{
	TargetCopy *c = xcalloc(1, sizeof *c);
	c->t = *t;
	int np = t->nparams;
	c->params = xcalloc((size_t)(np > 0 ? np : 1), sizeof *c->params);
	c->strs = xcalloc((size_t)(np > 0 ? np : 1), sizeof *c->strs);
	c->vals = xcalloc((size_t)(np > 0 ? np : 1), sizeof *c->vals);
	if (np > 0)
		memcpy(c->params, t->params, (size_t)np * sizeof *c->params);
	c->t.params = c->params;
	bool ok = true;
	for (int i = 0; i < n; i++) {
		const char *eq = strchr(settings[i], '=');
		if (!eq || eq == settings[i]) {
			diag_error(d, loc_at("npusim", 0, 0), "--param '%s': expected NAME=VALUE", settings[i]);
			ok = false;
			continue;
		}
		size_t nl = (size_t)(eq - settings[i]);
		int k = -1;
		for (int j = 0; j < np; j++)
			if (strlen(c->params[j].name) == nl && strncmp(c->params[j].name, settings[i], nl) == 0)
				k = j;
		if (k < 0) {
			diag_error(d, loc_at("npusim", 0, 0), "--param: target '%s' has no param '%.*s'", t->name, (int)nl,
				   settings[i]);
			ok = false;
			continue;
		}
		const char *v = eq + 1;
		ParamInfo *p = &c->params[k];
		if (p->str) {
			size_t vl = strlen(v);
			char *sv = (vl >= 2 && v[0] == '"' && v[vl - 1] == '"') ? xstrndup(v + 1, vl - 2) : xstrdup(v);
			free(c->strs[k]);
			c->strs[k] = sv;
			p->str = sv;
			continue;
		}
		double *vals = xcalloc((size_t)(p->n > 0 ? p->n : 1), sizeof *vals);
		const char *q = v;
		int got = 0;
		bool bad = false;
		while (!bad) {
			char *end;
			errno = 0;
			double x = strtod(q, &end);
			if (end == q || errno || !isfinite(x) || got >= (p->n > 0 ? p->n : 1)) {
				bad = true;
				break;
			}
			vals[got++] = x;
			q = end;
			if (*q == ',') {
				q++;
				continue;
			}
			if (*q)
				bad = true;
			break;
		}
		if (bad || got != (p->n > 0 ? p->n : 1)) {
			diag_error(d, loc_at("npusim", 0, 0), "--param %s: bad value '%s' (need %d number%s)", p->name, v,
				   p->n > 0 ? p->n : 1, p->n > 1 ? "s" : "");
			free(vals);
			ok = false;
			continue;
		}
		free(c->vals[k]);
		c->vals[k] = vals;
		p->values = vals;
	}
	if (!ok) {
		target_copy_free(&c->t);
		return NULL;
	}
	return &c->t;
}

void target_copy_free(Target *t)
{
	if (!t)
		return;
	TargetCopy *c = (TargetCopy *)t;
	for (int i = 0; i < c->t.nparams; i++) {
		free(c->strs[i]);
		free(c->vals[i]);
	}
	free(c->strs);
	free(c->vals);
	free(c->params);
	free(c);
}
