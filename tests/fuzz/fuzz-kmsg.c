/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel-log parser (luod/kmsg.c): kmsg_parse_lines() on arbitrary
 * records, and kmsg_read_boot() on the same bytes as a regular file (what
 * it does with a copy of /dev/kmsg), which must count the same records:
 * those on whole lines of at most KMSG_LINE_MAX bytes. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "kmsg.h"

/* 2 s: the bound luod passes is its own start, in kernel log time. */
#define UNTIL_US 2000000

static void check_log(const KernelBootLog *b, uint64_t until_us) {
        if (b->pci_devices == 0)
                FUZZ_ASSERT(b->pci_first_us == 0 && b->pci_last_us == 0, "times without devices");
        if (until_us)
                FUZZ_ASSERT(b->pci_first_us <= until_us && b->pci_last_us <= until_us,
                            "a record after the bound counted: %llu..%llu > %llu",
                            (unsigned long long) b->pci_first_us, (unsigned long long) b->pci_last_us,
                            (unsigned long long) until_us);
}

/* The input without its lines longer than KMSG_LINE_MAX (newline included). */
static char *drop_long_lines(const char *p, size_t size, size_t *ret_size) {
        char *out = malloc(size ?: 1);
        size_t n = 0;

        if (!out)
                abort();
        for (size_t i = 0; i < size;) {
                const char *nl = memchr(p + i, '\n', size - i);
                size_t len = nl ? (size_t) (nl - (p + i)) : size - i;

                if (len <= KMSG_LINE_MAX) {
                        memcpy(out + n, p + i, len + (nl ? 1 : 0));
                        n += len + (nl ? 1 : 0);
                }
                i += len + (nl ? 1 : 0);
        }
        *ret_size = n;
        return out;
}

static void read_as_file(const char *data, size_t size, const KernelBootLog *want) {
        static int fd = -1;
        static char path[64];
        KernelBootLog got = {};
        int r;

        if (fd < 0) {
                fd = memfd_create("fuzz-kmsg", MFD_CLOEXEC);
                if (fd < 0)
                        abort();
                snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        }
        if (ftruncate(fd, 0) < 0 || (size > 0 && pwrite(fd, data, size, 0) != (ssize_t) size))
                abort();
        r = kmsg_read_boot(path, 0, &got);
        FUZZ_ASSERT(r == 0, "kmsg_read_boot() on a regular file: %d", r);
        FUZZ_ASSERT(got.pci_devices == want->pci_devices && got.pci_first_us == want->pci_first_us &&
                    got.pci_last_us == want->pci_last_us,
                    "kmsg_read_boot() found %u devices %llu..%llu, the lines hold %u %llu..%llu",
                    got.pci_devices, (unsigned long long) got.pci_first_us, (unsigned long long) got.pci_last_us,
                    want->pci_devices, (unsigned long long) want->pci_first_us,
                    (unsigned long long) want->pci_last_us);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        KernelBootLog all = {}, bounded = {}, kept = {};
        size_t used, n;
        char *p, *q;

        p = fuzz_guarded_copy(data, size);
        if (!p)
                return 0;
        used = kmsg_parse_lines(p, size, 0, &all);
        FUZZ_ASSERT(used <= size && (used == 0 || p[used - 1] == '\n') && !memchr(p + used, '\n', size - used),
                    "%zu of %zu bytes taken as whole lines", used, size);
        check_log(&all, 0);
        FUZZ_ASSERT(kmsg_parse_lines(p, size, UNTIL_US, &bounded) == used, "the bound changed the lines");
        check_log(&bounded, UNTIL_US);
        FUZZ_ASSERT(bounded.pci_devices <= all.pci_devices, "a bound found more devices");
        fuzz_guarded_free(p, size);

        q = drop_long_lines((const char *) data, size, &n);
        p = fuzz_guarded_copy(q, n);
        free(q);
        if (!p)
                return 0;
        (void) kmsg_parse_lines(p, n, 0, &kept);
        fuzz_guarded_free(p, n);
        read_as_file((const char *) data, size, &kept);
        return 0;
}
