/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tb-fail-nth: one write(2) to a sysfs attribute with the kernel's
 * per-task fault injection armed, for the VM test bed's failure-path
 * scenarios.
 *
 *   tb-fail-nth N PATH VALUE
 *
 * Opens PATH for writing first (so open(2)'s own allocations are not
 * counted), then writes N to /proc/thread-self/fail-nth: the Nth call of
 * this thread into a fault-injection point (with CONFIG_FAILSLAB, a slab
 * allocation; failslab/ignore-gfp-wait must be N for GFP_KERNEL ones) fails.
 * Then writes VALUE to PATH, reads fail-nth back and disarms it.
 *
 * Prints one line: "<errno of the write, 0 if it succeeded> <injected>",
 * injected 1 when the Nth call happened during the write (fail-nth read
 * back 0), 0 when the write made fewer than N calls (the sweep is past its
 * last injection point).  Exit status 0 when that line was printed, 2 on a
 * usage or setup error (named on stderr with its errno). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAIL_NTH "/proc/thread-self/fail-nth"

int main(int argc, char *argv[]) {
        char buf[32];
        int fd, nth, n, r, write_errno = 0;
        unsigned long v;
        char *end;

        if (argc != 4) {
                fprintf(stderr, "usage: tb-fail-nth N PATH VALUE\n");
                return 2;
        }
        v = strtoul(argv[1], &end, 10);
        if (*argv[1] == '\0' || *end != '\0' || v == 0 || v > 1000000) {
                fprintf(stderr, "tb-fail-nth: N must be 1..1000000, not '%s'\n", argv[1]);
                return 2;
        }
        fd = open(argv[2], O_WRONLY | O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "tb-fail-nth: open %s: %s\n", argv[2], strerror(errno));
                return 2;
        }
        nth = open(FAIL_NTH, O_RDWR | O_CLOEXEC);
        if (nth < 0) {
                fprintf(stderr, "tb-fail-nth: open " FAIL_NTH ": %s (CONFIG_FAULT_INJECTION?)\n", strerror(errno));
                return 2;
        }
        n = snprintf(buf, sizeof(buf), "%lu", v);
        if (write(nth, buf, n) != n) {
                fprintf(stderr, "tb-fail-nth: arming " FAIL_NTH " with %lu: %s\n", v, strerror(errno));
                return 2;
        }
        /* The measured call: nothing between arming and it may allocate. */
        if (write(fd, argv[3], strlen(argv[3])) < 0)
                write_errno = errno;
        r = pread(nth, buf, sizeof(buf) - 1, 0);
        if (r <= 0) {
                fprintf(stderr, "tb-fail-nth: reading " FAIL_NTH ": %s\n", r < 0 ? strerror(errno) : "empty");
                return 2;
        }
        buf[r] = '\0';
        v = strtoul(buf, NULL, 10);
        /* Disarm: a count left over would fail a later call of this thread. */
        if (v != 0 && pwrite(nth, "0", 1, 0) != 1) {
                fprintf(stderr, "tb-fail-nth: disarming " FAIL_NTH ": %s\n", strerror(errno));
                return 2;
        }
        printf("%d %d\n", write_errno, v == 0);
        return 0;
}
