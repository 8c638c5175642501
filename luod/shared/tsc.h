/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

/* Reads the x86 time-stamp counter (RDTSC).  Unlike CLOCK_MONOTONIC and
 * CLOCK_BOOTTIME, which restart at 0 in the kernel that kexec starts, the
 * TSC keeps counting across kexec, so luod uses it for timestamps that span
 * the blackout.  Unit: TSC ticks (rate: the kernel's tsc_khz).  Returns 0 on
 * architectures without a TSC. */
uint64_t tsc_read(void);

/* Measures the TSC rate against CLOCK_MONOTONIC_RAW over sample_usec
 * microseconds (20000 gives ~0.1 %).  Returns the rate in kHz, 0 when there
 * is no TSC. */
uint64_t tsc_calibrate_khz(uint64_t sample_usec);

/* CLOCK_REALTIME in ns since the epoch (the wall clock stored next to each
 * TSC timestamp; the fallback when no TSC spans the kexec). */
uint64_t realtime_ns(void);
