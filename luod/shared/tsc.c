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

static uint64_t raw_ns(void *userdata) {
        struct timespec ts;

        (void) userdata;
        clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
        return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

static uint64_t tsc_read_ud(void *userdata) {
        (void) userdata;
        return tsc_read();
}

static void sleep_usec(void *userdata, uint64_t usec) {
        struct timespec pause = {
                .tv_sec = (time_t) (usec / 1000000),
                .tv_nsec = (long) (usec % 1000000) * 1000,
        };

        (void) userdata;
        while (nanosleep(&pause, &pause) < 0 && errno == EINTR)
                ;
}

/* The clock read between two TSC reads, TSC_PAIR_TRIES times: the try whose
 * two TSC reads are closest (the least interrupted) gives the clock's
 * reading and the TSC at the midpoint of its two.  One unbracketed pair of
 * reads counts a preemption between them (a descheduled vCPU, an
 * interrupt) as time passing on one clock only: 1 ms of it is 5 % of a
 * 20 ms sample.  Returns 0, or -ENODATA when every try read a TSC of 0
 * (none) or one that went back. */
#define TSC_PAIR_TRIES 5

static int pair_read(const TscClocks *c, uint64_t *ret_tsc, uint64_t *ret_ns) {
        uint64_t best = UINT64_MAX;

        for (unsigned i = 0; i < TSC_PAIR_TRIES; i++) {
                uint64_t a = c->tsc(c->userdata);
                uint64_t t = c->ns(c->userdata);
                uint64_t b = c->tsc(c->userdata);

                if (a == 0 || b < a || b - a >= best)
                        continue;
                best = b - a;
                *ret_tsc = a + (b - a) / 2;
                *ret_ns = t;
        }
        return best == UINT64_MAX ? -ENODATA : 0;
}

uint64_t tsc_calibrate_khz_on(const TscClocks *c, uint64_t sample_usec) {
        uint64_t c0 = 0, t0 = 0, c1 = 0, t1 = 0;

        if (pair_read(c, &c0, &t0) < 0)
                return 0;
        c->sleep_usec(c->userdata, sample_usec);
        if (pair_read(c, &c1, &t1) < 0 || t1 <= t0 || c1 <= c0)
                return 0;
        /* ticks per ns * 1e6 = kHz */
        return (uint64_t) ((double) (c1 - c0) * 1e6 / (double) (t1 - t0));
}

uint64_t tsc_calibrate_khz(uint64_t sample_usec) {
        const TscClocks real = { .tsc = tsc_read_ud, .ns = raw_ns, .sleep_usec = sleep_usec };

        return tsc_calibrate_khz_on(&real, sample_usec);
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
