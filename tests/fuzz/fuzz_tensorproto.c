/* Fuzz target: TensorProto bytes (the ONNX test data's input_N.pb, what
 * `gdcc run --input x=F.pb` reads) -> onnx_tensor_from_buffer.  A failure
 * has a message; a tensor that reads is within the limits, and its bytes
 * are all read (ASan sees any read past the data). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "gdcc_limits.h"
#include "onnx.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *err = NULL;
	Tensor *t = onnx_tensor_from_buffer(data, size, &err);
	if (!t) {
		if (!err && fuzz_oracles)
			fuzz_fail("onnx_tensor_from_buffer failed without a message");
		if (fuzz_verbose)
			fprintf(stderr, "tensorproto: %s\n", err ? err : "(no message)");
		free(err);
		return 0;
	}
	if (fuzz_oracles) {
		char ty[160];
		uint64_t bytes;
		if (!type_bytes_checked(t->type.dtype, &t->type.shape, &bytes) || bytes > limits()->max_tensor_bytes)
			fuzz_fail("accepted %s, above the tensor limit", type_str(&t->type, ty, sizeof ty));
		if (bytes != tensor_bytes(t))
			fuzz_fail("%s holds %zu bytes, not %llu", type_str(&t->type, ty, sizeof ty), tensor_bytes(t),
				  (unsigned long long)bytes);
		/* every element readable, and a bool is 0 or 1 */
		volatile double sum = 0;
		for (int64_t i = 0; i < tensor_numel(t); i++) {
			if (t->type.dtype == DT_BOOL && ((const uint8_t *)t->data)[i] > 1)
				fuzz_fail("bool element %lld is %u", (long long)i, ((const uint8_t *)t->data)[i]);
			sum += tensor_get_f(t, i);
		}
		(void)sum;
	}
	tensor_free(t);
	return 0;
}
