/* test_pass_fold: Criterion tests (to be written). */
#include "test_util.h"
