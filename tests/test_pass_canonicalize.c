/* test_pass_canonicalize: Criterion tests (to be written). */
#include "test_util.h"
