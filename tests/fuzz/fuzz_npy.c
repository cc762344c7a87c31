/* Fuzz target: .npy bytes -> the reader (core/npy.h: header, then the
 * whole file).  The reader takes a path, so each input is written to a
 * private temporary folder (in /dev/shm when there is one).  A file that
 * reads is written back and read again: the same dtype, shape and bytes. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "gdcc_limits.h"
#include "npy.h"

static char dir[64], in_path[96], out_path[96];

static void cleanup(void)
{
	unlink(in_path);
	unlink(out_path);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_init();
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/gdcc-fuzz-npy-XXXXXX", base && *base && strlen(base) < 32 ? base : "/tmp");
	if (!mkdtemp(dir)) {
		perror("fuzz_npy: mkdtemp");
		exit(2);
	}
	snprintf(in_path, sizeof in_path, "%s/in.npy", dir);
	snprintf(out_path, sizeof out_path, "%s/out.npy", dir);
	atexit(cleanup);
	return 0;
}

static void write_all(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
		perror(path);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	write_all(in_path, data, size);
	TensorType ht;
	char *err = NULL;
	bool hok = npy_read_header(in_path, &ht, &err);
	if (!hok && !err && fuzz_oracles)
		fuzz_fail("npy_read_header failed without a message");
	free(err);
	err = NULL;
	Tensor *t = NULL;
	bool ok = npy_read(in_path, &t, &err);
	if (!ok) {
		if (!err && fuzz_oracles)
			fuzz_fail("npy_read failed without a message");
		if (fuzz_verbose)
			fprintf(stderr, "npy_read: %s\n", err ? err : "(no message)");
		free(err);
		return 0;
	}
	if (fuzz_oracles) {
		char a[128], b[128];
		if (!hok)
			fuzz_fail("npy_read read %s where npy_read_header failed", type_str(&t->type, a, sizeof a));
		if (ht.dtype != t->type.dtype || !shape_eq(&ht.shape, &t->type.shape))
			fuzz_fail("npy_read_header says %s, npy_read %s", type_str(&ht, a, sizeof a),
				  type_str(&t->type, b, sizeof b));
		uint64_t bytes;
		if (!type_bytes_checked(t->type.dtype, &t->type.shape, &bytes) || bytes > limits()->max_tensor_bytes)
			fuzz_fail("npy_read accepted %s, above the tensor limit", type_str(&t->type, a, sizeof a));
		if (!npy_write(out_path, t, &err))
			fuzz_fail("npy_write of what npy_read read (%s) failed: %s", type_str(&t->type, a, sizeof a),
				  err ? err : "(no message)");
		Tensor *u = NULL;
		if (!npy_read(out_path, &u, &err))
			fuzz_fail("what npy_write wrote does not read back: %s", err ? err : "(no message)");
		if (u->type.dtype != t->type.dtype || !shape_eq(&u->type.shape, &t->type.shape) ||
		    (tensor_bytes(t) && memcmp(u->data, t->data, tensor_bytes(t)) != 0))
			fuzz_fail("%s read back as %s or with other data", type_str(&t->type, a, sizeof a),
				  type_str(&u->type, b, sizeof b));
		tensor_free(u);
		unlink(out_path);
	}
	tensor_free(t);
	return 0;
}
