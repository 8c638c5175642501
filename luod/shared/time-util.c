/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <time.h>

#include "time-util.h"

uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}
