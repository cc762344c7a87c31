/* test_rewrite: Criterion tests (to be written). */
#include "test_util.h"
