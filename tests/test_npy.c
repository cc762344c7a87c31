/* placeholder */
#include "test_util.h"
