/*
 * testpoint.c -- see testpoint.h.
 */
#include "util/testpoint.h"

#include <stddef.h>

tides_test_point_fn tides_test_point_hook = NULL;
