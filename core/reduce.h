/* gdcc reduce: delta debugging over a model.ir graph.  Given a model and a
 * failing condition (a target's mismatch against the reference, a crash, a
 * hang, an error message or an exit status of any command), it removes
 * nodes, outputs and inputs, shrinks shapes, drops attributes and
 * simplifies constant data for as long as the condition still holds, and
 * writes the smallest failing model.ir with the command that reproduces
 * it (docs/gdcc.1, docs/testing.md). */
#ifndef GDCC_REDUCE_H
#define GDCC_REDUCE_H

/* `gdcc reduce MODEL.ir CONDITION [OPTIONS] [-- COMMAND...]`: argv[0] is
 * "reduce"; argv0 is the program's own name, used in the reproduce
 * command it writes.  Returns the exit status: 0 reduced, 1 invalid model
 * or a model that does not fail, 2 bad command line, 3 a failure while
 * running (temporary files, the output file). */
int cmd_reduce(const char *argv0, int argc, char **argv);

#endif
