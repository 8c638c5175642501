/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one access point to /sys and /proc.  Their roots are "/sys" and
 * "/proc", or for tests only the directories in $LUOD_TEST_SYSFS_ROOT and
 * $LUOD_TEST_PROCFS_ROOT (read with secure_getenv, so never in a setuid
 * context; their use is logged at debug level).  libudev's enumeration and
 * monitor (sriov.c, events.c) always see the real /sys. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io-util.h"
#include "log.h"
#include "macro.h"
#include "sysfs.h"

/* A sysfs attribute is at most one page. */
#define SYSFS_ATTR_MAX 4096

static const char *root_of(const char *env, const char *dflt, const char **cache) {
        if (!*cache) {
                const char *e = secure_getenv(env);

                *cache = e && *e ? e : dflt;
                if (*cache != dflt)
                        log_debug("Using %s=%s instead of %s", env, *cache, dflt);
        }
        return *cache;
}

const char *sysfs_root(void) {
        static const char *root;

        return root_of("LUOD_TEST_SYSFS_ROOT", "/sys", &root);
}

const char *procfs_root(void) {
        static const char *root;

        return root_of("LUOD_TEST_PROCFS_ROOT", "/proc", &root);
}

int rooted_path(char *buf, size_t size, bool proc, const char *fmt, ...) {
        int n = snprintf(buf, size, "%s/", proc ? procfs_root() : sysfs_root()), k;
        va_list ap;

        if (n < 0 || (size_t) n >= size)
                return -ENAMETOOLONG;
        va_start(ap, fmt);
        k = vsnprintf(buf + n, size - (size_t) n, fmt, ap);
        va_end(ap);
        return k < 0 || (size_t) k >= size - (size_t) n ? -ENAMETOOLONG : 0;
}

int sysfs_read_line(const char *rel, char *buf, size_t size) {
        char path[PATH_MAX];
        int r = sysfs_path(path, sizeof(path), "%s", rel);

        return r < 0 ? r : read_line(path, buf, size);
}

int procfs_read_line(const char *rel, char *buf, size_t size) {
        char path[PATH_MAX];
        int r = procfs_path(path, sizeof(path), "%s", rel);

        return r < 0 ? r : read_line(path, buf, size);
}

int path_join(char buf[static PATH_MAX], const char *dir, const char *name) {
        int n = snprintf(buf, PATH_MAX, "%s/%s", dir, name);

        return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/* Reads the sysfs attribute dir/name into a malloc'd string without its
 * trailing newlines.  Returns 0 or a negative errno. */
/* Opens dir/name; returns the fd or a negative errno. */
static int attr_open(const char *dir, const char *name, int flags) {
        char path[PATH_MAX];
        int r, fd;

        r = path_join(path, dir, name);
        if (r < 0)
                return r;
        fd = open(path, flags | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

int sysfs_read(const char *dir, const char *name, char **ret) {
        _cleanup_close_ int fd = attr_open(dir, name, O_RDONLY);
        char buf[SYSFS_ATTR_MAX + 1];
        size_t len = 0;
        ssize_t n;

        if (fd < 0)
                return fd;
        while (len < SYSFS_ATTR_MAX && (n = read(fd, buf + len, SYSFS_ATTR_MAX - len)) != 0) {
                if (n < 0)
                        return -errno;
                len += (size_t) n;
        }
        while (len > 0 && buf[len - 1] == '\n')
                len--;
        buf[len] = '\0';

        *ret = strdup(buf);
        return *ret ? 0 : -ENOMEM;
}

/* Writes value to the sysfs attribute dir/name in one write().  Returns 0 or
 * a negative errno (the kernel's refusal comes back from write()). */
int sysfs_write(const char *dir, const char *name, const char *value) {
        _cleanup_close_ int fd = attr_open(dir, name, O_WRONLY);
        size_t len = strlen(value);
        ssize_t n;

        if (fd < 0)
                return fd;
        n = write(fd, value, len);
        if (n < 0)
                return -errno;
        return (size_t) n == len ? 0 : -EIO;
}

/* Reads the symlink dir/name and returns the last component of its target
 * (a driver, a BDF, an IOMMU group number) in *ret, or NULL when there is no
 * such link.  Logs other errors, naming what. */
int sysfs_link_name(const char *what, const char *dir, const char *name, char **ret) {
        char path[PATH_MAX], target[PATH_MAX];
        const char *base;
        ssize_t n;
        int r;

        r = path_join(path, dir, name);
        if (r < 0)
                return log_error_errno(r, "%s: path %s/%s too long: %m", what, dir, name);
        n = readlink(path, target, sizeof(target) - 1);
        if (n < 0) {
                if (errno == ENOENT) {
                        *ret = NULL;
                        return 0;
                }
                return log_error_errno(-errno, "%s: failed to read link %s: %m", what, path);
        }
        target[n] = '\0';
        base = strrchr(target, '/');
        *ret = strdup(base ? base + 1 : target);
        return *ret ? 0 : log_error_errno(-ENOMEM, "%s: failed to read link %s: %m", what, path);
}
