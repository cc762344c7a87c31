/* BURS labeller tests: see the helper brief. */
#include "burs.h"
#include "sel.h"
#include "test_util.h"
