/* gdcc-spmd: one device of a sharded model, over MPI (docs/ir.md,
 * "Sharding").  `gdcc run -t TARGET` of a sharded model writes each
 * device's plan and launches `mpirun -np N gdcc-spmd DIR`; rank r reads
 * DIR/rR.plan and runs its steps in order:
 *
 *   gdcc-spmd 1
 *   mesh NAXES SIZE...                  the device mesh (axis 0 outermost)
 *   run COMMAND                         a compute segment: a compiled program
 *                                       run on the value files (sh -c)
 *   send V TO BYTES                     a pipeline stage's value (file DIR/rR/vV.bin; V an
 *                                       id, or ID_mJ for micro-batch J) to device TO
 *   recv V FROM BYTES                   ... from device FROM into vV.bin
 *   coll OP IN OUT DTYPE MESHAXIS AXIS AXIS2 RANK DIM...
 *                                       a collective over MESHAXIS on the
 *                                       value file DIR/rR/vIN.bin (local shape
 *                                       DIM...), the result to vOUT.bin
 *
 * OP: all_reduce, all_gather (AXIS), reduce_scatter (AXIS), all_to_all
 * (split AXIS, concat AXIS2), shard_slice (AXIS), shard_partial.  The
 * devices of a mesh axis' group (those whose other coordinates are equal)
 * share a communicator (MPI_Comm_split).  At the end each device writes
 * DIR/rR.times: "run SECONDS coll SECONDS" (MPI_Wtime around its compute
 * segments, their programs' start and file I/O included, and around its
 * collectives and transfers, waiting included).  Exit status: 0, or 1
 * with a message naming the rank and the step. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

enum { MAX_AXES = 4, MAX_RANK = 8 };

static int rank;
static const char *dir;

static void die(int line, const char *fmt, const char *what)
{
	fprintf(stderr, "gdcc-spmd: rank %d: plan line %d: ", rank, line);
	fprintf(stderr, fmt, what);
	fputc('\n', stderr);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

static char *token_path(const char *tok)
{
	size_t n = strlen(dir) + strlen(tok) + 64;
	char *p = malloc(n);
	snprintf(p, n, "%s/r%d/v%s.bin", dir, rank, tok);
	return p;
}

static char *value_path(long id)
{
	char tok[32];
	snprintf(tok, sizeof tok, "%ld", id);
	return token_path(tok);
}

static void *load(long id, size_t bytes, int line)
{
	char *p = value_path(id);
	FILE *f = fopen(p, "rb");
	void *b = malloc(bytes ? bytes : 1);
	if (!f || !b || (bytes && fread(b, 1, bytes, f) != bytes))
		die(line, "cannot read %s", p);
	fclose(f);
	free(p);
	return b;
}

static void store(long id, const void *b, size_t bytes, int line)
{
	char *p = value_path(id);
	FILE *f = fopen(p, "wb");
	if (!f || (bytes && fwrite(b, 1, bytes, f) != bytes) || fclose(f) != 0)
		die(line, "cannot write %s", p);
	free(p);
}

/* Block `i` of n along axis k of a tensor (dims, element size es), packed
 * (!unpack) or the block written back into it (unpack). */
static void block(char *t, const long *dims, int rank_, int k, long n, long i, char *blk, size_t es, int unpack)
{
	long outer = 1, inner = 1;
	for (int j = 0; j < k; j++)
		outer *= dims[j];
	for (int j = k + 1; j < rank_; j++)
		inner *= dims[j];
	long part = dims[k] / n;
	size_t row = (size_t)(part * inner) * es;
	for (long o = 0; o < outer; o++) {
		char *src = t + ((size_t)(o * dims[k] + i * part) * (size_t)inner) * es;
		if (unpack)
			memcpy(src, blk + (size_t)o * row, row);
		else
			memcpy(blk + (size_t)o * row, src, row);
	}
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc != 2) {
		fprintf(stderr, "usage: mpirun -np N gdcc-spmd DIR\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	dir = argv[1];
	size_t pl = strlen(dir) + 32;
	char *plan = malloc(pl);
	snprintf(plan, pl, "%s/r%d.plan", dir, rank);
	FILE *f = fopen(plan, "r");
	if (!f)
		die(0, "cannot open %s", plan);
	static char buf[1 << 16];
	int line = 0, naxes = 0;
	double run_s = 0, coll_s = 0;
	long msize[MAX_AXES], coord[MAX_AXES];
	MPI_Comm comm[MAX_AXES];
	while (fgets(buf, sizeof buf, f)) {
		line++;
		size_t len = strlen(buf);
		if (len && buf[len - 1] == '\n')
			buf[--len] = 0;
		if (line == 1) {
			if (strcmp(buf, "gdcc-spmd 1") != 0)
				die(line, "not a plan: %s", buf);
			continue;
		}
		if (strncmp(buf, "mesh ", 5) == 0) {
			char *p = buf + 5;
			naxes = (int)strtol(p, &p, 10);
			if (naxes < 1 || naxes > MAX_AXES)
				die(line, "bad mesh: %s", buf);
			long devices = 1;
			for (int a = 0; a < naxes; a++)
				devices *= msize[a] = strtol(p, &p, 10);
			if (devices != size)
				die(line, "the mesh does not have mpirun's number of processes: %s", buf);
			long q = rank;
			for (int a = naxes - 1; a >= 0; a--) {
				coord[a] = q % msize[a];
				q /= msize[a];
			}
			for (int a = 0; a < naxes; a++) {
				long color = 0;
				for (int b = 0; b < naxes; b++)
					color = color * msize[b] + (b == a ? 0 : coord[b]);
				MPI_Comm_split(MPI_COMM_WORLD, (int)color, (int)coord[a], &comm[a]);
			}
			continue;
		}
		double t0 = MPI_Wtime();
		if (strncmp(buf, "run ", 4) == 0) {
			int st = system(buf + 4);
			run_s += MPI_Wtime() - t0;
			if (st != 0) {
				char msg[64];
				snprintf(msg, sizeof msg, "%d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
				die(line, "a compute segment failed (status %s)", msg);
			}
			continue;
		}
		if (strncmp(buf, "send ", 5) == 0 || strncmp(buf, "recv ", 5) == 0) {
			char tok[64];
			long peer, bytes;
			if (sscanf(buf + 5, "%63s %ld %ld", tok, &peer, &bytes) != 3 || peer < 0 || peer >= size || bytes < 0 ||
			    bytes > 0x7fffffffL)
				die(line, "bad transfer: %s", buf);
			char *path = token_path(tok);
			if (buf[0] == 's') {
				FILE *vf = fopen(path, "rb");
				char *x = malloc((size_t)bytes + 1);
				if (!vf || !x || (bytes && fread(x, 1, (size_t)bytes, vf) != (size_t)bytes))
					die(line, "cannot read %s", path);
				fclose(vf);
				MPI_Send(x, (int)bytes, MPI_BYTE, (int)peer, 0, MPI_COMM_WORLD);
				free(x);
			} else {
				char *x = malloc((size_t)bytes + 1);
				MPI_Recv(x, (int)bytes, MPI_BYTE, (int)peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				FILE *vf = fopen(path, "wb");
				if (!vf || (bytes && fwrite(x, 1, (size_t)bytes, vf) != (size_t)bytes) || fclose(vf) != 0)
					die(line, "cannot write %s", path);
				free(x);
			}
			free(path);
			coll_s += MPI_Wtime() - t0;
			continue;
		}
		if (strncmp(buf, "coll ", 5) != 0)
			die(line, "unknown step: %s", buf);
		char op[32], dt[8];
		long in, out, axis, axis2, r;
		int a, used;
		if (sscanf(buf + 5, "%31s %ld %ld %7s %d %ld %ld %ld%n", op, &in, &out, dt, &a, &axis, &axis2, &r, &used) != 8 ||
		    a < 0 || a >= naxes || r < 0 || r > MAX_RANK)
			die(line, "bad collective: %s", buf);
		long dims[MAX_RANK], numel = 1;
		char *p = buf + 5 + used;
		for (int k = 0; k < r; k++)
			numel *= dims[k] = strtol(p, &p, 10);
		MPI_Datatype mt;
		size_t es;
		if (strcmp(dt, "f32") == 0)
			mt = MPI_FLOAT, es = 4;
		else if (strcmp(dt, "i32") == 0)
			mt = MPI_INT32_T, es = 4;
		else if (strcmp(dt, "i64") == 0)
			mt = MPI_INT64_T, es = 8;
		else if (strcmp(dt, "bool") == 0)
			mt = MPI_UNSIGNED_CHAR, es = 1;
		else
			die(line, "unknown dtype %s", dt);
		if ((axis < 0 || axis >= r) && strcmp(op, "all_reduce") != 0 && strcmp(op, "shard_partial") != 0)
			die(line, "bad axis: %s", buf);
		long n = msize[a], me = coord[a];
		size_t bytes = (size_t)numel * es;
		char *x = load(in, bytes, line);
		if (strcmp(op, "all_reduce") == 0) {
			if (mt == MPI_UNSIGNED_CHAR)
				die(line, "%s", "a partial sum of booleans");
			MPI_Allreduce(MPI_IN_PLACE, x, (int)numel, mt, MPI_SUM, comm[a]);
			store(out, x, bytes, line);
		} else if (strcmp(op, "all_gather") == 0) {
			char *all = malloc(bytes * (size_t)n + 1), *y = malloc(bytes * (size_t)n + 1);
			MPI_Allgather(x, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, comm[a]);
			dims[axis] *= n;
			for (long i = 0; i < n; i++)
				block(y, dims, (int)r, (int)axis, n, i, all + (size_t)i * bytes, es, 1);
			store(out, y, bytes * (size_t)n, line);
			free(all);
			free(y);
		} else if (strcmp(op, "reduce_scatter") == 0) {
			if (mt == MPI_UNSIGNED_CHAR)
				die(line, "%s", "a partial sum of booleans");
			char *packed = malloc(bytes + 1), *y = malloc(bytes / (size_t)n + 1);
			for (long i = 0; i < n; i++)
				block(x, dims, (int)r, (int)axis, n, i, packed + (size_t)i * (bytes / (size_t)n), es, 0);
			MPI_Reduce_scatter_block(packed, y, (int)(numel / n), mt, MPI_SUM, comm[a]);
			store(out, y, bytes / (size_t)n, line);
			free(packed);
			free(y);
		} else if (strcmp(op, "all_to_all") == 0) {
			/* split AXIS (whole here) into n blocks, one to each device;
			 * the blocks received join along AXIS2 */
			size_t bb = bytes / (size_t)n;
			char *packed = malloc(bytes + 1), *recv = malloc(bytes + 1), *y = malloc(bytes + 1);
			for (long i = 0; i < n; i++)
				block(x, dims, (int)r, (int)axis, n, i, packed + (size_t)i * bb, es, 0);
			MPI_Alltoall(packed, (int)bb, MPI_BYTE, recv, (int)bb, MPI_BYTE, comm[a]);
			dims[axis] /= n;
			dims[axis2] *= n;
			for (long i = 0; i < n; i++)
				block(y, dims, (int)r, (int)axis2, n, i, recv + (size_t)i * bb, es, 1);
			store(out, y, bytes, line);
			free(packed);
			free(recv);
			free(y);
		} else if (strcmp(op, "shard_slice") == 0) {
			char *y = malloc(bytes / (size_t)n + 1);
			block(x, dims, (int)r, (int)axis, n, me, y, es, 0);
			store(out, y, bytes / (size_t)n, line);
			free(y);
		} else if (strcmp(op, "shard_partial") == 0) {
			if (me != 0)
				memset(x, 0, bytes);
			store(out, x, bytes, line);
		} else {
			die(line, "unknown collective %s", op);
		}
		free(x);
		coll_s += MPI_Wtime() - t0;
	}
	fclose(f);
	snprintf(plan, pl, "%s/r%d.times", dir, rank);
	FILE *tf = fopen(plan, "w");
	if (!tf || fprintf(tf, "run %.9f coll %.9f\n", run_s, coll_s) < 0 || fclose(tf) != 0)
		die(line, "cannot write %s", plan);
	free(plan);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
