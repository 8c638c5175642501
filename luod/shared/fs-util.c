/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs-util.h"
#include "io-util.h"
#include "macro.h"

bool filename_is_valid(const char *name) {
        return name && *name && !strchr(name, '/') && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

/* Creates ".#<name>.<pid>-<n>" in dir_fd exclusively, with mode exactly. */
static int open_tmpfile(int dir_fd, const char *name, mode_t mode, char **ret_name) {
        static unsigned counter;

        for (unsigned attempt = 0;; attempt++) {
                _cleanup_free_ char *tmp = NULL;
                int fd;

                if (asprintf(&tmp, ".#%s.%jd-%u", name, (intmax_t) getpid(),
                             __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED)) < 0)
                        return -ENOMEM;
                fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
                if (fd < 0) {
                        /* A stale file of a crashed process with the same pid: take the next number. */
                        if (errno != EEXIST || attempt >= 64)
                                return -errno;
                        continue;
                }
                /* The umask applied at creation; the caller asked for mode. */
                if (fchmod(fd, mode) < 0) {
                        int r = -errno;

                        (void) unlinkat(dir_fd, tmp, 0);
                        (void) close(fd);
                        return r;
                }
                *ret_name = tmp;
                tmp = NULL;
                return fd;
        }
}

int write_file_atomic_at(int dir_fd, const char *name, const void *buf, size_t len, mode_t mode) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (dir_fd < 0)
                return -EBADF;
        if (!filename_is_valid(name) || (mode & ~(mode_t) 07777))
                return -EINVAL;

        fd = open_tmpfile(dir_fd, name, mode, &tmp);
        if (fd < 0)
                return fd;
        r = write_full(fd, buf, len, -1);
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        if (r >= 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlinkat(dir_fd, tmp, 0);
                return r;
        }
        return fsync(dir_fd) < 0 ? -errno : 0;
}

int fsync_directory_at(int dir_fd, const char *path) {
        _cleanup_close_ int fd = -EBADF;

        fd = openat(dir_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return fsync(fd) < 0 ? -errno : 0;
}

int read_regular_fd(int fd, size_t max, char **ret_buf, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        ssize_t k;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if ((uint64_t) st.st_size > max)
                return -EFBIG;
        buf = malloc((size_t) st.st_size + 1);
        if (!buf)
                return -ENOMEM;
        /* A file that shrinks meanwhile reads short. */
        k = read_full(fd, buf, (size_t) st.st_size, 0);
        if (k < 0)
                return (int) k;
        buf[k] = 0;
        *ret_buf = TAKE_PTR(buf);
        *ret_size = (size_t) k;
        return 0;
}

int read_regular_file_at(int dir_fd, const char *path, size_t max, char **ret_buf, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;

        fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        return read_regular_fd(fd, max, ret_buf, ret_size);
}
