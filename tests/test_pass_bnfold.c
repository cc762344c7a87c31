/* test_pass_bnfold: Criterion tests (to be written). */
#include "test_util.h"
