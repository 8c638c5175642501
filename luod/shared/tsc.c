/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <time.h>

#include "tsc.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>

uint64_t tsc_read(void) {
        return __rdtsc();
}
#else
uint64_t tsc_read(void) {
        return 0;
}
#endif

static uint64_t raw_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
        return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

uint64_t tsc_calibrate_khz(uint64_t sample_usec) {
        struct timespec pause = {
                .tv_sec = (time_t) (sample_usec / 1000000),
                .tv_nsec = (long) (sample_usec % 1000000) * 1000,
        };
        uint64_t t0 = raw_ns(), c0 = tsc_read();
        nanosleep(&pause, NULL);
        uint64_t t1 = raw_ns(), c1 = tsc_read();

        if (c0 == 0 || t1 <= t0 || c1 <= c0)
                return 0;
        /* ticks per ns * 1e6 = kHz */
        return (uint64_t) ((double) (c1 - c0) * 1e6 / (double) (t1 - t0));
}

uint64_t realtime_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

int span_ms(uint64_t start_tsc, uint64_t now_tsc, uint64_t khz, uint64_t start_rt_ns, uint64_t now_rt_ns,
            double *ret_ms, bool *ret_approximate) {
        bool rt_ok = start_rt_ns && now_rt_ns >= start_rt_ns;
        double rt_ms = rt_ok ? (double) (now_rt_ns - start_rt_ns) / 1e6 : 0;

        if (khz && start_tsc && now_tsc >= start_tsc) {
                double ms = (double) (now_tsc - start_tsc) / (double) khz;
                double diff = ms > rt_ms ? ms - rt_ms : rt_ms - ms;

                if (!rt_ok || diff <= 2000.0 || diff <= 0.1 * rt_ms) {
                        *ret_ms = ms;
                        *ret_approximate = false;
                        return 0;
                }
        }
        if (!rt_ok)
                return -ENODATA;
        *ret_ms = rt_ms;
        *ret_approximate = true;
        return 0;
}
