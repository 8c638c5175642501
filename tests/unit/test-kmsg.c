/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kmsg_read_boot() on records in /dev/kmsg's format, and on the real
 * /dev/kmsg of this machine when it can be read. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kmsg.h"
#include "tap.h"

static const char records[] =
        "6,1,0,-;Linux version 7.3.4-luod+\n"
        "6,180,412000,-;pci 0000:00:00.0: [8086:29c0] type 00 class 0x060000 conventional PCI endpoint\n"
        " SUBSYSTEM=pci\n"
        " DEVICE=+pci:0000:00:00.0\n"
        "6,181,415500,-;pci 0000:00:01.0: [1b36:000c] type 01 class 0x060400 PCIe Root Port\n"
        "6,182,416000,-;pci 0000:00:01.0: PCI bridge to [bus 01]\n"
        "6,190,1420000,-;pci 0000:01:00.0: [1b36:0010] type 00 class 0x010802 PCIe Endpoint\n"
        "6,191,1421000,-;pci_bus 0000:01: resource 1 [mem 0xfe800000-0xfe9fffff]\n"
        "6,200,2430250,-;pci 0000:02:00.0: [8086:10c9] type 00 class 0x020000 PCIe Endpoint\n"
        "4,300,5000000,-;nvme nvme0: pci function 0000:01:00.0\n"
        /* after luod started: a VF the restore created */
        "6,400,9000000,-;pci 0000:01:00.1: [1b36:0010] type 00 class 0x010802 PCIe Endpoint\n";

int main(void) {
        char path[] = "/tmp/test-kmsg.XXXXXX";
        KernelBootLog b;
        int fd = mkstemp(path);

        if (fd < 0 || write(fd, records, sizeof(records) - 1) != (ssize_t) sizeof(records) - 1)
                return 1;
        close(fd);

        CHECK(kmsg_read_boot(path, 8000000, &b) == 0);
        CHECK(b.pci_devices == 4);
        CHECK(b.pci_first_us == 412000);
        CHECK(b.pci_last_us == 2430250);

        /* Without a bound the restore's VF counts too. */
        CHECK(kmsg_read_boot(path, 0, &b) == 0);
        CHECK(b.pci_devices == 5);
        CHECK(b.pci_last_us == 9000000);

        CHECK(kmsg_read_boot("/nonexistent/kmsg", 0, &b) == -ENOENT);

        /* A line longer than the read buffer is dropped whole: its tail is
         * not taken for a record of its own. */
        fd = open(path, O_WRONLY | O_TRUNC);
        CHECK(fd >= 0);
        static const char tail[] = "6,2,5,-;pci 0000:01:00.0: [1b36:0010] type 00 class 0x010802 PCIe Endpoint\n";
        static const char next[] = "6,3,7,-;pci 0000:02:00.0: [8086:10c9] type 00 class 0x020000 PCIe Endpoint\n";
        char *longline = malloc(KMSG_LINE_MAX + 1);
        CHECK(longline);
        memset(longline, 'x', KMSG_LINE_MAX + 1);
        memcpy(longline, "6,1,0,-;", 8);
        CHECK(write(fd, longline, KMSG_LINE_MAX + 1) == KMSG_LINE_MAX + 1);
        CHECK(write(fd, tail, sizeof(tail) - 1) == (ssize_t) sizeof(tail) - 1);
        CHECK(write(fd, next, sizeof(next) - 1) == (ssize_t) sizeof(next) - 1);
        close(fd);
        free(longline);
        CHECK(kmsg_read_boot(path, 0, &b) == 0);
        CHECK(b.pci_devices == 1);
        CHECK(b.pci_first_us == 7 && b.pci_last_us == 7);
        unlink(path);

        /* The real thing: one record per read(), EAGAIN at the end. */
        if (access("/dev/kmsg", R_OK) == 0) {
                int r = kmsg_read_boot("/dev/kmsg", 0, &b);
                CHECK(r == 0 || r == -EPERM || r == -EACCES);
                printf("/dev/kmsg: %d, %u PCI devices found between %llu and %llu us\n", r, b.pci_devices,
                       (unsigned long long) b.pci_first_us, (unsigned long long) b.pci_last_us);
        }
        return tap_failures ? 1 : 0;
}
