/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "liveupdate-uapi.h"
#include "log.h"
#include "macro.h"
#include "preserve.h"
#include "fs-util.h"
#include "io-util.h"
#include "state.h"

_Static_assert(sizeof(LUO_SESSION_NAME) <= LIVEUPDATE_SESSION_NAME_LENGTH, "session name too long");

#define COPY_BUFFER_SIZE (64 * 1024)

static int check_size(size_t size) {
        if (size == 0)
                return -EINVAL;
        if ((uint64_t) size > LUOD_STATE_SIZE_MAX)
                return -EFBIG;
        return 0;
}

/* Reads the regular file fd whole, from offset 0, into a NUL-terminated
 * buffer; what names it in messages. */
static int read_state_fd(int fd, const char *what, char **ret_buf, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t size = 0;

        if (fstat(fd, &st) < 0)
                return log_error_errno(-errno, "Failed to stat %s: %m", what);
        if (!S_ISREG(st.st_mode))
                return log_error_errno(-EBADFD, "%s is not a regular file", what);
        if ((uint64_t) st.st_size > LUOD_STATE_SIZE_MAX)
                return log_error_errno(-EFBIG, "%s has %jd bytes, a state has at most %" PRIu64,
                                       what, (intmax_t) st.st_size, LUOD_STATE_SIZE_MAX);
        if (st.st_size == 0)
                return log_error_errno(-EBADMSG, "%s is empty", what);

        buf = malloc((size_t) st.st_size + 1);
        if (!buf)
                return log_error_errno(-ENOMEM, "Failed to allocate %jd bytes for %s: %m",
                                       (intmax_t) st.st_size, what);
        while (size < (size_t) st.st_size) {
                ssize_t k = pread(fd, buf + size, (size_t) st.st_size - size, (off_t) size);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return log_error_errno(-errno, "Failed to read %s: %m", what);
                }
                if (k == 0)
                        return log_error_errno(-EBADMSG, "%s shrank to %zu bytes while being read",
                                               what, size);
                size += (size_t) k;
        }
        buf[size] = 0;

        *ret_buf = buf;
        buf = NULL;
        *ret_size = size;
        return 0;
}

static int read_state_file(const char *path, char **ret_buf, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);   /* a FIFO must not block */
        if (fd < 0) {
                if (errno == ENOENT)
                        return -ENOENT;
                return log_error_errno(-errno, "Failed to open %s: %m", path);
        }
        return read_state_fd(fd, path, ret_buf, ret_size);
}

/* --- LUO ------------------------------------------------------------------ */

static int luo_open(void) {
        int fd;

        fd = open(LIVEUPDATE_DEVICE, O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                if (errno == ENOENT || errno == EBUSY)
                        return -errno;
                return log_error_errno(-errno, "Failed to open %s: %m", LIVEUPDATE_DEVICE);
        }
        return fd;
}

int luo_preserve(const void *buf, size_t size, int *ret_session_fd) {
        struct liveupdate_ioctl_create_session create = { .size = sizeof(create) };
        struct liveupdate_session_preserve_fd preserve = {
                .size = sizeof(preserve),
                .token = LUO_STATE_TOKEN,
        };
        _cleanup_close_ int memfd = -EBADF, dev = -EBADF, session = -EBADF;
        int r;

        r = check_size(size);
        if (r < 0)
                return log_error_errno(r, "Refusing to preserve a state of %zu bytes in LUO: %m", size);

        memfd = memfd_create(LUO_STATE_MEMFD_NAME, MFD_CLOEXEC);
        if (memfd < 0)
                return log_error_errno(-errno, "Failed to create memfd %s: %m", LUO_STATE_MEMFD_NAME);
        r = write_full(memfd, buf, size, -1);
        if (r < 0)
                return log_error_errno(r, "Failed to write %zu bytes to memfd %s: %m",
                                       size, LUO_STATE_MEMFD_NAME);
        /* LUO preserves the file position too: leave it where a reader starts. */
        if (lseek(memfd, 0, SEEK_SET) < 0)
                return log_error_errno(-errno, "Failed to rewind memfd %s: %m", LUO_STATE_MEMFD_NAME);

        dev = luo_open();
        if (dev < 0)
                return dev;

        memcpy(create.name, LUO_SESSION_NAME, sizeof(LUO_SESSION_NAME));
        if (ioctl(dev, LIVEUPDATE_IOCTL_CREATE_SESSION, &create) < 0)
                return log_error_errno(-errno, "Failed to create LUO session \"%s\" on %s: %m",
                                       LUO_SESSION_NAME, LIVEUPDATE_DEVICE);
        session = create.fd;

        preserve.fd = memfd;
        if (ioctl(session, LIVEUPDATE_SESSION_PRESERVE_FD, &preserve) < 0)
                return log_error_errno(-errno,
                                       "Failed to preserve memfd %s as token %d of LUO session \"%s\": %m",
                                       LUO_STATE_MEMFD_NAME, LUO_STATE_TOKEN, LUO_SESSION_NAME);

        *ret_session_fd = session;
        session = -EBADF;
        return 0;
}

int luo_retrieve(char **ret_buf, size_t *ret_size, int *ret_session_fd) {
        struct liveupdate_ioctl_retrieve_session retrieve = { .size = sizeof(retrieve) };
        struct liveupdate_session_retrieve_fd retrieve_fd = {
                .size = sizeof(retrieve_fd),
                .token = LUO_STATE_TOKEN,
        };
        _cleanup_close_ int dev = -EBADF, session = -EBADF, memfd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t size;
        int r;

        dev = luo_open();
        if (dev < 0)
                return dev;

        memcpy(retrieve.name, LUO_SESSION_NAME, sizeof(LUO_SESSION_NAME));
        if (ioctl(dev, LIVEUPDATE_IOCTL_RETRIEVE_SESSION, &retrieve) < 0) {
                if (errno == ENOENT)
                        return -ENOENT;
                return log_error_errno(-errno, "Failed to retrieve LUO session \"%s\" from %s: %m",
                                       LUO_SESSION_NAME, LIVEUPDATE_DEVICE);
        }
        session = retrieve.fd;

        if (ioctl(session, LIVEUPDATE_SESSION_RETRIEVE_FD, &retrieve_fd) < 0) {
                if (errno == ENOENT)
                        return log_error_errno(-EBADMSG,
                                               "LUO session \"%s\" has no token %d: not a state luod preserved",
                                               LUO_SESSION_NAME, LUO_STATE_TOKEN);
                return log_error_errno(-errno, "Failed to retrieve token %d of LUO session \"%s\": %m",
                                       LUO_STATE_TOKEN, LUO_SESSION_NAME);
        }
        memfd = retrieve_fd.fd;

        r = read_state_fd(memfd, "the LUO memfd (session \"" LUO_SESSION_NAME "\")", &buf, &size);
        if (r < 0)
                return r;

        *ret_buf = buf;
        buf = NULL;
        *ret_size = size;
        *ret_session_fd = session;
        session = -EBADF;
        return 0;
}

int luo_finish(int session_fd) {
        struct liveupdate_session_finish finish = { .size = sizeof(finish), .reserved = 0 };

        if (ioctl(session_fd, LIVEUPDATE_SESSION_FINISH, &finish) < 0)
                return log_error_errno(-errno, "Failed to finish LUO session \"%s\" (fd %d): %m",
                                       LUO_SESSION_NAME, session_fd);
        return 0;
}

/* --- initrd --------------------------------------------------------------- */

/* Appends one newc ("070701") cpio member to b at *n: the 110-byte header
 * of 13 eight-digit hex fields, the NUL-terminated name, padding to 4 bytes,
 * the data, padding to 4 bytes.  b must be large enough. */
static void newc_member(char *b, size_t *n, unsigned ino, unsigned mode, unsigned nlink,
                        const char *name, const void *data, size_t size) {
        size_t namesize = strlen(name) + 1;

        *n += (size_t) sprintf(b + *n, "070701%08X%08X%08X%08X%08X%08X%08zX%08X%08X%08X%08X%08zX%08X",
                               ino, mode, 0u, 0u, nlink, 0u, size, 0u, 0u, 0u, 0u, namesize, 0u);
        memcpy(b + *n, name, namesize);
        *n += namesize;
        while (*n % 4)
                b[(*n)++] = '\0';
        if (size)
                memcpy(b + *n, data, size);
        *n += size;
        while (*n % 4)
                b[(*n)++] = '\0';
}

/* Writes the newc archive {luod/, luod/state.luod-state, TRAILER!!!} at fd's
 * position: what the kernel's initramfs unpacker reads (see
 * Documentation/driver-api/early-userspace/buffer-format.rst).  Owner 0:0,
 * mtime 0, so the same state gives the same bytes. */
static int write_state_archive(int fd, const char *out, const void *buf, size_t size) {
        _cleanup_free_ char *b = malloc(size + 3 * 128 + 64);
        size_t n = 0;
        int r;

        if (!b)
                return log_error_errno(-ENOMEM, "Failed to allocate the state archive for %s: %m", out);
        newc_member(b, &n, 1, 0040700, 2, "luod", NULL, 0);
        newc_member(b, &n, 2, 0100600, 1, "luod/" STATE_FILE_NAME, buf, size);
        newc_member(b, &n, 0, 0, 1, "TRAILER!!!", NULL, 0);
        r = write_full(fd, b, n, -1);
        if (r < 0)
                return log_error_errno(r, "Failed to write the state archive to %s: %m", out);
        return 0;
}

/* Copies the initrd in (may be -1: none) to out, then pads to 4 bytes and
 * appends the archive. */
static int write_initrd(int in, const char *initrd, int fd, const char *out, const void *buf, size_t size) {
        static const char zeros[4] = {};
        _cleanup_free_ char *copy = NULL;
        uint64_t copied = 0;
        int r;

        if (in >= 0) {
                copy = malloc(COPY_BUFFER_SIZE);
                if (!copy)
                        return log_error_errno(-ENOMEM, "Failed to allocate a copy buffer for %s: %m", out);
                for (;;) {
                        ssize_t k = read(in, copy, COPY_BUFFER_SIZE);
                        if (k < 0) {
                                if (errno == EINTR)
                                        continue;
                                return log_error_errno(-errno, "Failed to read initrd %s: %m", initrd);
                        }
                        if (k == 0)
                                break;
                        r = write_full(fd, copy, (size_t) k, -1);
                        if (r < 0)
                                return log_error_errno(r, "Failed to write %s: %m", out);
                        copied += (uint64_t) k;
                }
        }

        r = write_full(fd, zeros, (4 - copied % 4) % 4, -1);
        if (r < 0)
                return log_error_errno(r, "Failed to write %s: %m", out);
        return write_state_archive(fd, out, buf, size);
}

int initrd_append_state(const char *initrd, const char *out, const void *buf, size_t size) {
        _cleanup_close_ int in = -EBADF, fd = -EBADF;
        struct stat st_in, st_out;
        int r;

        r = check_size(size);
        if (r < 0)
                return log_error_errno(r, "Refusing to append a state of %zu bytes to %s: %m", size, out);

        if (initrd && *initrd) {
                in = open(initrd, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (in < 0)
                        return log_error_errno(-errno, "Failed to open initrd %s: %m", initrd);
                if (fstat(in, &st_in) < 0)
                        return log_error_errno(-errno, "Failed to stat initrd %s: %m", initrd);
        }

        /* Not O_TRUNC: out might be the initrd itself, which must survive. */
        fd = open(out, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
        if (fd < 0)
                return log_error_errno(-errno, "Failed to open %s: %m", out);
        if (in >= 0) {
                if (fstat(fd, &st_out) < 0)
                        return log_error_errno(-errno, "Failed to stat %s: %m", out);
                if (st_in.st_dev == st_out.st_dev && st_in.st_ino == st_out.st_ino)
                        return log_error_errno(-EINVAL, "Output %s is the initrd %s itself", out, initrd);
        }
        if (ftruncate(fd, 0) < 0)
                return log_error_errno(-errno, "Failed to truncate %s: %m", out);

        r = write_initrd(in, initrd, fd, out, buf, size);
        if (r < 0) {
                (void) unlink(out);
                return r;
        }
        return 0;
}

int initrd_find_state(const char *path, char **ret_buf, size_t *ret_size) {
        int r;

        if (path)
                return read_state_file(path, ret_buf, ret_size);
        r = read_state_file(INITRD_STATE_RUN_PATH, ret_buf, ret_size);
        if (r != -ENOENT)
                return r;
        return read_state_file(INITRD_STATE_PATH, ret_buf, ret_size);
}

/* --- file ----------------------------------------------------------------- */

int file_preserve(const char *dir, const void *buf, size_t size) {
        _cleanup_close_ int dir_fd = -EBADF;
        int r;

        dir = dir ?: FILE_STATE_DIR;
        r = check_size(size);
        if (r < 0)
                return log_error_errno(r, "Refusing to write a state of %zu bytes to %s: %m", size, dir);
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                return log_error_errno(-errno, "Failed to open directory %s: %m", dir);
        r = write_file_atomic_at(dir_fd, STATE_FILE_NAME, buf, size, 0600);
        if (r < 0)
                return log_error_errno(r, "Failed to write %s/%s: %m", dir, STATE_FILE_NAME);
        return 0;
}

int file_retrieve(const char *dir, char **ret_buf, size_t *ret_size) {
        _cleanup_free_ char *path = NULL;

        dir = dir ?: FILE_STATE_DIR;
        if (asprintf(&path, "%s/%s", dir, STATE_FILE_NAME) < 0)
                return log_error_errno(-ENOMEM, "Failed to build the state file name in %s: %m", dir);
        return read_state_file(path, ret_buf, ret_size);
}

int file_remove(const char *dir) {
        _cleanup_free_ char *path = NULL;
        int r;

        dir = dir ?: FILE_STATE_DIR;
        if (asprintf(&path, "%s/%s", dir, STATE_FILE_NAME) < 0)
                return log_error_errno(-ENOMEM, "Failed to build the state file name in %s: %m", dir);
        if (unlink(path) < 0) {
                if (errno == ENOENT)
                        return -ENOENT;
                return log_error_errno(-errno, "Failed to remove %s: %m", path);
        }
        r = fsync_directory_at(AT_FDCWD, dir);
        if (r < 0)
                return log_error_errno(r, "Failed to fsync directory %s: %m", dir);
        return 0;
}

/* True when /dev/liveupdate can be opened now; else why not is logged. */
bool luo_available(void) {
        int fd = open("/dev/liveupdate", O_RDWR | O_CLOEXEC);

        if (fd >= 0) {
                close(fd);
                return true;
        }
        if (errno == EBUSY)
                log_info("/dev/liveupdate is held by another owner (EBUSY), e.g. systemd >= 261; "
                         "falling through to the next backend");
        else if (errno != ENOENT)
                log_warning_errno(-errno, "Cannot open /dev/liveupdate, falling through: %m");
        return false;
}
