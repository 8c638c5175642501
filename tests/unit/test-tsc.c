/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdbool.h>
#include <time.h>

#include "tap.h"
#include "tsc.h"

/* The TSC must advance while time passes: a constant or zero reading would
 * make every cross-kexec figure in the report wrong. */
/* span_ms(): which clock a guest's downtime comes from. */
static void test_span(void) {
        const uint64_t khz = 2000000, s = 1000000000ULL * 1700000000ULL;        /* 2 GHz; a wall clock */
        double ms = -1;
        bool approx = true;

        /* TSC there and in step with the wall clock: the TSC's figure. */
        CHECK(span_ms(5000, 5000 + 3000 * khz + khz / 2, khz, s, s + 3000500000ULL, &ms, &approx) == 0);
        CHECK(!approx && ms > 3000.49 && ms < 3000.51);
        /* The wall clock off by 1 s (RTC steps): still the TSC. */
        CHECK(span_ms(5000, 5000 + 3000 * khz, khz, s, s + 4000000000ULL, &ms, &approx) == 0);
        CHECK(!approx && ms > 2999.9 && ms < 3000.1);
        /* No rate recorded: the wall clock, approximate. */
        CHECK(span_ms(5000, 9000, 0, s, s + 7250000000ULL, &ms, &approx) == 0);
        CHECK(approx && ms > 7249.9 && ms < 7250.1);
        /* The TSC went back (reset by the platform): the wall clock. */
        CHECK(span_ms(9000 * khz, 5000, khz, s, s + 6000000000ULL, &ms, &approx) == 0);
        CHECK(approx && ms > 5999.9 && ms < 6000.1);
        /* The TSC says 100 ms, the wall clock 60 s (stopped TSC): approximate. */
        CHECK(span_ms(5000, 5000 + 100 * khz, khz, s, s + 60000000000ULL, &ms, &approx) == 0);
        CHECK(approx && ms > 59999.9 && ms < 60000.1);
        /* Long spans: 5 % apart (within 10 %) keeps the TSC. */
        CHECK(span_ms(5000, 5000 + 100000 * khz, khz, s, s + 105000000000ULL, &ms, &approx) == 0);
        CHECK(!approx && ms > 99999.9 && ms < 100000.1);
        /* No TSC start and the wall clock went back: no figure. */
        CHECK(span_ms(0, 5000, khz, s, s - 1, &ms, &approx) == -ENODATA);
        /* TSC fine, wall clock unusable: the TSC. */
        CHECK(span_ms(5000, 5000 + 10 * khz, khz, 0, s, &ms, &approx) == 0);
        CHECK(!approx && ms > 9.9 && ms < 10.1);
}

/* Simulated clocks: a 2.5 GHz TSC and a ns clock on one time line, each
 * read taking 20 ns before the sleep and 10 us after it (a read's cost
 * differs from one end to the other: only the midpoint of a try's TSC
 * reads pairs them with its clock read at both ends); the reader loses
 * 1 ms (a descheduled vCPU) just before read number lose_after of one end
 * of the sample (the first end, before the sleep, or the second). */
typedef struct SimClocks {
        uint64_t now_ns;
        bool slept;
        bool lose_at_second_end;
        unsigned reads;                 /* of the end the loss is at */
        unsigned lose_after;            /* 0: never */
} SimClocks;

static void sim_read(SimClocks *s) {
        s->now_ns += s->slept ? 10000 : 20;
        if (s->slept != s->lose_at_second_end)
                return;
        if (++s->reads == s->lose_after)
                s->now_ns += 1000000;
}

static uint64_t sim_tsc(void *userdata) {
        SimClocks *s = userdata;

        sim_read(s);
        return 1000000000 + s->now_ns * 5 / 2;
}

static uint64_t sim_ns(void *userdata) {
        SimClocks *s = userdata;

        sim_read(s);
        return s->now_ns;
}

static void sim_sleep(void *userdata, uint64_t usec) {
        SimClocks *s = userdata;

        s->now_ns += usec * 1000;
        s->slept = true;
}

/* The rate comes out right (within 0.01 %) wherever a 1 ms preemption falls
 * among the 15 reads (5 tries of TSC, clock, TSC) of either end of the
 * sample (before read 1: none of them): the least interrupted try is kept, and its TSC is the midpoint
 * of its two reads.  With one unbracketed pair of reads (clock, then TSC)
 * a loss between them made it 5 % high. */
static void test_calibrate_preempted(void) {
        for (unsigned end = 0; end < 2; end++)
                for (unsigned k = 0; k <= 15; k++) {
                        SimClocks sim = { .now_ns = 777, .lose_at_second_end = end, .lose_after = k };
                        const TscClocks c = { .tsc = sim_tsc, .ns = sim_ns, .sleep_usec = sim_sleep, .userdata = &sim };
                        uint64_t khz = tsc_calibrate_khz_on(&c, 20000);
                        bool ok = khz > 2499750 && khz < 2500250;

                        CHECK(ok);
                        if (!ok)
                                fprintf(stderr, "# 1 ms lost before read %u (0: none) of end %u: %" PRIu64 " kHz, want 2500000\n",
                                        k, end + 1, khz);
                }
}

int main(void) {
        test_span();
        test_calibrate_preempted();
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
        return tap_failures ? 1 : 0;
#endif
}
