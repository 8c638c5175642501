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
        return tap_failures ? 1 : 0;
#else
        return 77; /* skip */
#endif
}
