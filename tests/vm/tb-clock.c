/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tb-clock: clocks for the VM test bed's scenarios (busybox has no
 * sub-second date).
 *   tb-clock tsc   the TSC, decimal ticks (keeps counting across kexec)
 *   tb-clock us    CLOCK_MONOTONIC in microseconds (restarts at kexec) */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tsc.h"

int main(int argc, char *argv[]) {
        struct timespec ts;

        if (argc == 2 && strcmp(argv[1], "tsc") == 0) {
                printf("%" PRIu64 "\n", tsc_read());
                return 0;
        }
        if (argc == 2 && strcmp(argv[1], "us") == 0 && clock_gettime(CLOCK_MONOTONIC, &ts) == 0) {
                printf("%" PRIu64 "\n", (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000);
                return 0;
        }
        fprintf(stderr, "usage: tb-clock tsc|us\n");
        return 2;
}
