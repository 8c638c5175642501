/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <time.h>

#include "tap.h"
#include "tsc.h"

/* The TSC must advance while time passes: a constant or zero reading would
 * make every cross-kexec figure in the report wrong. */
int main(void) {
#if defined(__x86_64__) || defined(__i386__)
        struct timespec ts = { .tv_nsec = 20 * 1000 * 1000 };
        uint64_t a = tsc_read();
        nanosleep(&ts, NULL);
        uint64_t b = tsc_read();

        CHECK(a != 0);
        CHECK(b > a);
        /* 20 ms at any TSC rate above 10 MHz is more than 200000 ticks. */
        CHECK(b - a > 200000);

        /* Two calibrations agree within 2 %, and 20 ms of sleep measured
         * with the calibrated rate is 20 ms (+ scheduling slack). */
        uint64_t k1 = tsc_calibrate_khz(20000), k2 = tsc_calibrate_khz(20000);
        CHECK(k1 > 10000);      /* > 10 MHz */
        CHECK(k1 * 100 < k2 * 102 && k2 * 100 < k1 * 102);
        a = tsc_read();
        nanosleep(&ts, NULL);
        b = tsc_read();
        double ms = (double) (b - a) / (double) k1;
        CHECK(ms >= 19.9 && ms < 60.0);
        return tap_failures ? 1 : 0;
#else
        return 77; /* skip */
#endif
}
