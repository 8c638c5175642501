/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io-util.h"

int write_full(int fd, const void *buf, size_t size, off_t offset) {
        const char *p = buf;

        while (size > 0) {
                ssize_t k = offset < 0 ? write(fd, p, size) : pwrite(fd, p, size, offset);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        return -EIO;
                p += k;
                size -= (size_t) k;
                if (offset >= 0)
                        offset += k;
        }
        return 0;
}

ssize_t read_full(int fd, void *buf, size_t size, off_t offset) {
        char *p = buf;
        size_t done = 0;

        while (done < size) {
                ssize_t k = offset < 0 ? read(fd, p + done, size - done)
                                       : pread(fd, p + done, size - done, offset + (off_t) done);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                done += (size_t) k;
        }
        return (ssize_t) done;
}

int read_line(const char *path, char *buf, size_t size) {
        FILE *f = fopen(path, "re");
        int r = 0;

        if (!f)
                return -errno;
        if (!fgets(buf, (int) size, f))
                r = ferror(f) ? -EIO : -ENODATA;
        fclose(f);
        if (r == 0)
                buf[strcspn(buf, "\n")] = '\0';
        return r;
}
