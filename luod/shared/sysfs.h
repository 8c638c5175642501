/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* "/sys", or $LUOD_TEST_SYSFS_ROOT (tests only). */
const char *sysfs_root(void);

/* "/proc", or $LUOD_TEST_PROCFS_ROOT (tests only). */
const char *procfs_root(void);

/* buf = the /proc (proc) or /sys root, "/", fmt...  Returns 0 or
 * -ENAMETOOLONG. */
__attribute__((format(printf, 4, 5)))
int rooted_path(char *buf, size_t size, bool proc, const char *fmt, ...);
#define sysfs_path(buf, size, ...) rooted_path(buf, size, false, __VA_ARGS__)
#define procfs_path(buf, size, ...) rooted_path(buf, size, true, __VA_ARGS__)

/* read_line() of the file rel below the root. */
int sysfs_read_line(const char *rel, char *buf, size_t size);
int procfs_read_line(const char *rel, char *buf, size_t size);

/* Reads the sysfs attribute dir/name (dir a full path, e.g. from
 * sysfs_path()) into a malloc'd string without its trailing newlines.
 * Returns 0 or a negative errno. */
int sysfs_read(const char *dir, const char *name, char **ret);

/* Writes value to the attribute dir/name in one write().  Returns 0 or a
 * negative errno (the kernel's refusal comes back from write()). */
int sysfs_write(const char *dir, const char *name, const char *value);

/* Reads the symlink dir/name and returns the last component of its target
 * (a driver, a BDF, an IOMMU group number) in *ret, or NULL when there is no
 * such link.  Logs other errors, naming what. */
int sysfs_link_name(const char *what, const char *dir, const char *name, char **ret);

/* buf = dir "/" name.  Returns 0 or -ENAMETOOLONG. */
int path_join(char buf[static PATH_MAX], const char *dir, const char *name);
