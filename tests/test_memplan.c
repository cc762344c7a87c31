/* test_memplan: Criterion tests (to be written). */
#include "test_util.h"
