/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Reads the x86 time-stamp counter (RDTSC).  Unlike CLOCK_MONOTONIC and
 * CLOCK_BOOTTIME, which restart at 0 in the kernel that kexec starts, the
 * TSC keeps counting across kexec, so luod uses it for timestamps that span
 * the blackout.  Unit: TSC ticks (rate: the kernel's tsc_khz).  Returns 0 on
 * architectures without a TSC. */
uint64_t tsc_read(void);

/* Measures the TSC rate against CLOCK_MONOTONIC_RAW over sample_usec
 * microseconds (20000 gives ~0.1 %).  Each end of the sample reads the
 * clock between two TSC reads, five times, and keeps the least interrupted
 * try, so a preemption between two reads does not skew the rate.  Returns
 * the rate in kHz, 0 when there is no TSC. */
uint64_t tsc_calibrate_khz(uint64_t sample_usec);

/* The clocks tsc_calibrate_khz() reads: the TSC (ticks), a clock in ns and
 * a sleep of usec microseconds, each called with userdata.  For tests,
 * which give it simulated clocks. */
typedef struct TscClocks {
        uint64_t (*tsc)(void *userdata);
        uint64_t (*ns)(void *userdata);
        void (*sleep_usec)(void *userdata, uint64_t usec);
        void *userdata;
} TscClocks;

/* tsc_calibrate_khz() on the clocks c. */
uint64_t tsc_calibrate_khz_on(const TscClocks *c, uint64_t sample_usec);

/* CLOCK_REALTIME in ns since the epoch (the wall clock stored next to each
 * TSC timestamp; the fallback when no TSC spans the kexec). */
uint64_t realtime_ns(void);

/* A span across the kexec (a guest's downtime), in ms, from two TSC
 * readings (start_tsc, now_tsc; rate khz, recorded before the kexec) and the
 * wall clock read with each (start_rt_ns, now_rt_ns).  The TSC is used when
 * it is there (khz and start_tsc non-zero), did not go back (a TSC reset by
 * the platform) and agrees with the wall clock within the wall clock's own
 * error (the RTC the new kernel set it from has 1 s steps): max(2 s, 10 %).
 * Otherwise the wall clock, and *ret_approximate is true.
 * Returns 0, or -ENODATA when neither clock spans the two readings. */
int span_ms(uint64_t start_tsc, uint64_t now_tsc, uint64_t khz, uint64_t start_rt_ns, uint64_t now_rt_ns,
            double *ret_ms, bool *ret_approximate);
