/* test_pass_dce: Criterion tests (to be written). */
#include "test_util.h"
