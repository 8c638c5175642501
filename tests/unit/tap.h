/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Minimal assertion helpers for the unit tests: each failed CHECK prints the
 * expression and location; main returns the number of failures (0 = pass). */
#pragma once

#include <stdio.h>

static int tap_failures;

#define CHECK(expr)                                                            \
        do {                                                                   \
                if (!(expr)) {                                                 \
                        fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, \
                                __LINE__, #expr);                              \
                        tap_failures++;                                        \
                }                                                              \
        } while (0)
