/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tb-tsc: prints the TSC (decimal ticks) for the VM test bed's scenarios. */
#include <inttypes.h>
#include <stdio.h>

#include "tsc.h"

int main(void) {
        printf("%" PRIu64 "\n", tsc_read());
        return 0;
}
