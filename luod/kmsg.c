/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kmsg.h"
#include "macro.h"

/* One record line "PRIO,SEQ,USEC,FLAGS;TEXT" (dictionary lines start with
 * a space and are skipped by the caller). */
static void parse_record(const char *line, size_t len, uint64_t until_us, KernelBootLog *b) {
        unsigned long long usec;
        const char *text = memchr(line, ';', len);
        char head[96];

        if (!text || (size_t) (text - line) >= sizeof(head))
                return;
        memcpy(head, line, (size_t) (text - line));
        head[text - line] = '\0';
        if (sscanf(head, "%*u,%*u,%llu", &usec) != 1 || (until_us && usec > until_us))
                return;
        text++;
        size_t tlen = len - (size_t) (text - line);
        /* "pci 0000:01:00.0: [1b36:0010] type 00 class 0x010802 PCIe Endpoint" */
        if (tlen < 4 || strncmp(text, "pci ", 4) != 0)
                return;
        const char *bracket = memchr(text, '[', tlen);
        if (!bracket || (size_t) (bracket - text) + 20 > tlen)
                return;
        unsigned v, d, type;
        if (sscanf(bracket, "[%4x:%4x] type %2u class 0x", &v, &d, &type) != 3)
                return;
        if (!memmem(bracket, tlen - (size_t) (bracket - text), " class 0x", 9))
                return;
        if (b->pci_devices == 0)
                b->pci_first_us = usec;
        b->pci_last_us = usec;
        b->pci_devices++;
}

size_t kmsg_parse_lines(const char *buf, size_t size, uint64_t until_us, KernelBootLog *b) {
        const char *start = buf, *nl;

        while ((nl = memchr(start, '\n', size - (size_t) (start - buf)))) {
                if (*start != ' ')
                        parse_record(start, (size_t) (nl - start), until_us, b);
                start = nl + 1;
        }
        return (size_t) (start - buf);
}

int kmsg_read_boot(const char *path, uint64_t until_us, KernelBootLog *ret) {
        _cleanup_close_ int fd = -EBADF;
        KernelBootLog b = {};
        char buf[KMSG_LINE_MAX + 2];    /* a line, its newline, and one spare byte */
        size_t have = 0;

        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        for (;;) {
                ssize_t n = read(fd, buf + have, sizeof(buf) - have - 1);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EPIPE)     /* records overwritten: go on */
                                continue;
                        if (errno == EAGAIN)
                                break;
                        return -errno;
                }
                if (n == 0)
                        break;
                have += (size_t) n;
                /* Whole lines only; keep a partial one for the next read. */
                size_t used = kmsg_parse_lines(buf, have, until_us, &b);
                have -= used;
                memmove(buf, buf + used, have);
                if (have == sizeof(buf) - 1)
                        have = 0;       /* an absurd line: drop it */
        }
        *ret = b;
        return 0;
}
