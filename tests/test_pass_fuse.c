/* test_pass_fuse: Criterion tests (to be written). */
#include "test_util.h"
