/* test_pass_cse: Criterion tests (to be written). */
#include "test_util.h"
