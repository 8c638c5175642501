/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#define USEC_PER_MSEC UINT64_C(1000)

/* CLOCK_MONOTONIC in µs: the one "now" luod and luoctl measure spans with. */
uint64_t now_usec(void);
