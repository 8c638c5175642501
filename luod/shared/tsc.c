/* SPDX-License-Identifier: LGPL-2.1-or-later */
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
