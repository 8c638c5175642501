/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "tap.h"
#include "time-util.h"

/* parse_sec(): luod's --max-delay (0..3600) and luoctl's --timeout
 * (0 < SEC <= 86400). */
static void test_parse_sec(void) {
        uint64_t usec = 42;

        CHECK(parse_sec("0", 3600, false, &usec) == 0 && usec == 0);
        CHECK(parse_sec("2", 3600, false, &usec) == 0 && usec == 2000000);
        CHECK(parse_sec("0.25", 3600, false, &usec) == 0 && usec == 250000);
        CHECK(parse_sec("1e3", 3600, false, &usec) == 0 && usec == 1000000000);
        CHECK(parse_sec("3600", 3600, false, &usec) == 0 && usec == UINT64_C(3600000000));

        /* Refused, *ret_usec untouched. */
        usec = 42;
        CHECK(parse_sec("", 3600, false, &usec) == -EINVAL);
        CHECK(parse_sec(" ", 3600, false, &usec) == -EINVAL);
        CHECK(parse_sec("5s", 3600, false, &usec) == -EINVAL);
        CHECK(parse_sec("-1", 3600, false, &usec) == -EINVAL);
        CHECK(parse_sec("3600.5", 3600, false, &usec) == -EINVAL);
        CHECK(parse_sec("nan", 3600, false, &usec) == -EINVAL);
        CHECK(parse_sec("inf", 3600, false, &usec) == -EINVAL);
        CHECK(parse_sec("0", 86400, true, &usec) == -EINVAL);
        CHECK(parse_sec("5 ", 3600, false, &usec) == -EINVAL);
        /* A decimal: no blanks, sign or hexadecimal before or in it. */
        CHECK(parse_sec(" 5", 3600, false, &usec) == -EINVAL);
        CHECK(parse_sec("\t5", 86400, true, &usec) == -EINVAL);
        CHECK(parse_sec("+5", 3600, false, &usec) == -EINVAL);
        CHECK(parse_sec("-0", 3600, false, &usec) == -EINVAL);
        CHECK(parse_sec("0x10", 3600, false, &usec) == -EINVAL);
        CHECK(parse_sec("0x1p4", 86400, true, &usec) == -EINVAL);
        CHECK(parse_sec("1e309", 86400, true, &usec) == -EINVAL);
        CHECK(parse_sec("3600.0000001", 3600, false, &usec) == -EINVAL);
        CHECK(usec == 42);
        CHECK(parse_sec(".5", 3600, false, &usec) == 0 && usec == 500000);

        /* Positive: never 0 µs. */
        CHECK(parse_sec("0.0000001", 86400, true, &usec) == 0 && usec == 1);
        CHECK(parse_sec("0.5", 86400, true, &usec) == 0 && usec == 500000);
}

int main(void) {
        test_parse_sec();
        return tap_failures ? 1 : 0;
}
