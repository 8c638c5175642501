/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define USEC_PER_MSEC UINT64_C(1000)

/* CLOCK_MONOTONIC in µs: the one "now" luod and luoctl measure spans with. */
uint64_t now_usec(void);

/* Parses s, a decimal number of seconds as strtod() reads it (fractions and
 * exponents allowed, nothing after it), into *ret_usec.  Accepts 0..max_sec,
 * or with positive only values above 0, of which one below 1 µs counts as
 * 1 µs, so that a positive value never reads as 0.  Returns 0, or -EINVAL
 * (*ret_usec untouched). */
int parse_sec(const char *s, double max_sec, bool positive, uint64_t *ret_usec);
