/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kmsg.h"
#include "macro.h"

/* One record line "PRIO,SEQ,USEC,FLAGS;TEXT" of len bytes at line, not
 * NUL-terminated: nothing past line + len is read. */
static void parse_record(const char *line, size_t len, uint64_t until_us, KernelBootLog *b) {
        unsigned long long usec;
        const char *text = memchr(line, ';', len);
        char head[96], rest[64];

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
        /* sscanf() wants a string: the line from the bracket on, 63 bytes
         * at most (the kernel prints the 29 the pattern needs). */
        size_t blen = tlen - (size_t) (bracket - text);
        memcpy(rest, bracket, MIN(blen, sizeof(rest) - 1));
        rest[MIN(blen, sizeof(rest) - 1)] = '\0';
        unsigned v, d, type;
        if (sscanf(rest, "[%4x:%4x] type %2u class 0x", &v, &d, &type) != 3)
                return;
        if (!memmem(bracket, blen, " class 0x", 9))
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
        bool skipping = false;

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
                size_t used = 0;
                if (skipping) {
                        /* The rest of an absurd line dropped before. */
                        const char *nl = memchr(buf, '\n', have);
                        if (!nl) {
                                have = 0;
                                continue;
                        }
                        used = (size_t) (nl + 1 - buf);
                        skipping = false;
                }
                /* Whole lines only; keep a partial one for the next read. */
                used += kmsg_parse_lines(buf + used, have - used, until_us, &b);
                have -= used;
                memmove(buf, buf + used, have);
                if (have == sizeof(buf) - 1) {
                        have = 0;       /* an absurd line: drop all of it */
                        skipping = true;
                }
        }
        *ret = b;
        return 0;
}
