/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "time-util.h"

uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

int parse_sec(const char *s, double max_sec, bool positive, uint64_t *ret_usec) {
        char *end;
        double sec;
        uint64_t usec;

        /* A decimal as the man pages say: strtod() would also take
         * leading blanks, a sign and hexadecimal ("0x10" is 16 s). */
        if (!strchr("0123456789.", s[0]) || !s[0] || strpbrk(s, "xX"))
                return -EINVAL;
        sec = strtod(s, &end);
        /* Written so that NaN fails every comparison and is refused. */
        if (end == s || *end || !(positive ? sec > 0 : sec >= 0) || !(sec <= max_sec))
                return -EINVAL;
        usec = (uint64_t) (sec * 1e6);
        *ret_usec = positive && usec == 0 ? 1 : usec;
        return 0;
}
