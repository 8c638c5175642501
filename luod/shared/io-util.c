/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
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
