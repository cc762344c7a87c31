/* .npy reading and writing: numpy's own header layout, every dtype we
 * support, and each way a file can be malformed. */
#include <stdio.h>
#include <string.h>

#include "npy.h"
#include "test_util.h"

static void write_bytes(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(p, 1, n, f), n);
	fclose(f);
}

/* A header exactly as numpy 1.24 writes it for np.save(f, np.float32 2x3). */
static size_t numpy_header(char *buf, const char *dict)
{
	size_t dl = strlen(dict);
	size_t total = 10 + dl + 1;
	size_t pad = (64 - total % 64) % 64;
	size_t hlen = dl + pad + 1;
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (char)(hlen & 0xff);
	buf[9] = (char)(hlen >> 8);
	memcpy(buf + 10, dict, dl);
	memset(buf + 10 + dl, ' ', pad);
	buf[10 + dl + pad] = '\n';
	return 10 + hlen;
}

Test(npy, reads_what_numpy_writes)
{
	char buf[256];
	size_t n = numpy_header(buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
	cr_assert_eq(n % 64, 0);
	float vals[6] = {1, 2, 3, 4, 5, 6.5f};
	memcpy(buf + n, vals, sizeof vals);
	write_bytes("np_f32.npy", buf, n + sizeof vals);
	Tensor *t;
	char *err = NULL;
	cr_assert(npy_read("np_f32.npy", &t, &err), "%s", err);
	t_assert_close(t, 2, DIMS(2, 3), vals, 0, 0);
	tensor_free(t);
	remove("np_f32.npy");
}

Test(npy, round_trip_every_dtype_and_rank)
{
	DType dts[] = {DT_F32, DT_I32, DT_I64, DT_BOOL, DT_I8};
	Shape shapes[] = {shape_make(0, NULL), shape_make(1, DIMS(5)), shape_make(3, DIMS(2, 1, 3)),
			  shape_make(2, DIMS(0, 4))};
	for (size_t i = 0; i < sizeof dts / sizeof *dts; i++)
		for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
			Tensor *t = tensor_new(dts[i], &shapes[k]);
			for (int64_t j = 0; j < tensor_numel(t); j++)
				tensor_set_f(t, j, (double)((j * 7) % 2));
			char *err = NULL;
			cr_assert(npy_write("rt.npy", t, &err), "%s", err);
			Tensor *u;
			cr_assert(npy_read("rt.npy", &u, &err), "%s", err);
			cr_assert_eq(u->type.dtype, dts[i]);
			cr_assert(shape_eq(&u->type.shape, &shapes[k]));
			if (tensor_bytes(t))
				cr_assert_eq(memcmp(u->data, t->data, tensor_bytes(t)), 0);
			tensor_free(t);
			tensor_free(u);
		}
	remove("rt.npy");
}

Test(npy, written_header_is_numpy_style)
{
	Tensor *t = t_f32(1, DIMS(3), F32S(1, 2, 3));
	char *err = NULL;
	cr_assert(npy_write("hdr.npy", t, &err));
	tensor_free(t);
	/* The dict is 58 characters: 10 + 58 + 1 = 69 bytes, padded to 128. */
	char buf[256] = {0};
	FILE *f = fopen("hdr.npy", "rb");
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	cr_assert_eq(n, 128 + 12);
	cr_assert_eq(memcmp(buf, "\x93NUMPY\x01\x00", 8), 0);
	cr_assert_eq(buf[8], 118); /* header length: 128 - 10 */
	cr_assert(strstr(buf + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"));
	cr_assert_eq(buf[127], '\n');
	remove("hdr.npy");
}

static void expect_error(const char *dict, const void *data, size_t dn, const char *msg)
{
	char buf[512];
	size_t n = numpy_header(buf, dict);
	memcpy(buf + n, data, dn);
	write_bytes("bad.npy", buf, n + dn);
	Tensor *t = NULL;
	char *err = NULL;
	cr_assert_not(npy_read("bad.npy", &t, &err));
	cr_assert(strstr(err, msg), "message '%s', expected '%s'", err, msg);
	free(err);
	remove("bad.npy");
}

Test(npy, errors)
{
	float four[4] = {0};
	expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", four, sizeof four,
		     "truncated data: the header's f32[2,3] needs 24 bytes, the file holds 16 after its header");
	/* regression cases from the 2026-12-01 fuzzing run (tests/bad-inputs) */
	expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", four, sizeof four,
		     "4 bytes after the data that the header's f32[3] describes (12 bytes)");
	expect_error("{'descr': '<f4', 'descr': '<i4', 'fortran_order': False, 'shape': (1,), }", four, 4,
		     "key 'descr' is given twice");
	expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }", four, 4,
		     "the header's f32[1099511627776] is 4398046511104 bytes (4 TiB), above the limit");
	expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }", four, 4,
		     "has more elements than fit in 64 bits");
	expect_error("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", four, sizeof four,
		     "unsupported dtype '<f8'");
	expect_error("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", four, 8, "unsupported dtype '>f4'");
	expect_error("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", four, sizeof four,
		     "Fortran-order arrays are not supported");
	expect_error("{'descr': '<f4', 'shape': (2,), }", four, 8, "needs 'descr', 'fortran_order' and 'shape'");
	expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", four, 8, "bad dimension");
	expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", four, 4,
		     "rank above the maximum of 8");
	expect_error("['descr']", four, 8, "malformed header");

	write_bytes("bad.npy", "PK\x03\x04 zip", 8);
	char *err = NULL;
	Tensor *t;
	cr_assert_not(npy_read("bad.npy", &t, &err));
	cr_assert_str_eq(err, "not a .npy file (bad magic)");
	free(err);
	write_bytes("bad.npy", "\x93NUMPY\x01\x00\x40", 9);
	cr_assert_not(npy_read("bad.npy", &t, &err));
	cr_assert_str_eq(err, "not a .npy file (bad magic)"); /* too short to hold a header */
	free(err);
	remove("bad.npy");
	cr_assert_not(npy_read("/nonexistent/x.npy", &t, &err));
	cr_assert_str_eq(err, "cannot open: No such file or directory");
	free(err);
}

Test(npy, write_failure_leaves_no_file)
{
	Tensor *t = t_f32(1, DIMS(1), F32S(1));
	char *err = NULL;
	cr_assert_not(npy_write("/nonexistent-dir/out.npy", t, &err));
	cr_assert(strstr(err, "cannot create"));
	free(err);
	tensor_free(t);
}
