/* The options of one gdcc command, in one struct that travels through the
 * driver (core/main.c fills it from the command line), the pass manager
 * (core/pipeline.c), compilation (core/compile.c) and running
 * (core/run.c).  Nothing here is global. */
#ifndef GDCC_OPTIONS_H
#define GDCC_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "diag.h"
#include "target.h"

typedef struct {
	/* the pass manager */
	int opt_level;              /* -O0, -O1, -O2 (the default) */
	bool verify_each;           /* --verify-each (on by default in --enable-checking builds) */
	bool print_all;             /* --print-after=all */
	const char **print_after;   /* --print-after=PASS, each */
	int nprint_after;
	const char **disabled;      /* --disable-pass=NAME, each */
	int ndisabled;
	FILE *dump;                 /* where --print-after writes (stderr) */
	uint64_t fold_limit_bytes;  /* constant folding: the largest result it computes */
	/* compiling */
	const char *report_path;    /* --report=FILE */
	const char *host_name;      /* --host=TARGET */
	const char *entry;          /* the entry function's name (gdcc_entry; segments gdcc_segN) */
	const char *weights;        /* --weights=inline|FILE: NULL, beside -o (docs/backend.md, "Constant data") */
	const char *header_path;    /* --header=FILE: the C header of the entry point */
	const char **param_settings; /* --param NAME=VALUE, each: the target's params overridden */
	int nparam_settings;
	Target *param_target;       /* the target they were applied to (owned) */
	/* reading and running */
	const char *onnx_test;      /* run --onnx-test DIR: an ONNX model's integer inputs become constants */
	struct OnnxBinding *binds;  /* -S / -c --bind NAME=FILE.npy and run's integer --input: values an ONNX
				     * model's inputs are specialized to (frontend/onnx.h; owned) */
	int nbinds;
	const char *vlen;           /* run --vlen N: the vector length a scalable target runs at */
	bool profile;               /* run --profile[=FILE]: each kernel its own function, timed */
	const char *profile_path;   /* ... FILE: the profile as JSON (NULL: the table only; "-": stdout) */
	const char *profile_tmp;    /* the staged file written for it (output.c), NULL for stdout */
	int profile_runs;           /* --profile-runs=N: timed repetitions (default 5) */
	/* sharding over a device mesh (core/shard.h) */
	const char *mesh_text;      /* --mesh NAME=SIZE,... */
	const char **shard_texts;   /* --shard NAME=[AXIS,...], each */
	int nshard_texts;
	int parallel;               /* --parallel: a Parallel (shard.h), 0: none */
	int devices;                /* --devices N (0: not given) */
	int micro_batches;          /* --micro-batches M (a pipeline's; 0: not given) */
	double link_gbps;           /* --link-gbps (default 100) */
	double link_latency_us;     /* --link-latency-us (default 5) */
	char *auto_table;           /* --parallel=auto: each strategy's estimate (owned) */
	bool auto_tensor[8];        /* ... the chosen layer groups' modes (auto_ngroups > 0: mixed) */
	int auto_ngroups;
	/* what the driver measured and knows, for the report and messages */
	Loc model_loc;              /* the model's graph */
	double front_seconds[2];    /* parse+verify, legality */
} Options;

/* Defaults: -O2, dumps to stderr, verify-each as the build says. */
void options_init(Options *o);
void options_free(Options *o);
/* Is pass `name` asked for by --print-after? */
bool options_prints_after(const Options *o, const char *name);
bool options_disabled(const Options *o, const char *name);

#endif
