/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Writes all size bytes of buf to fd at its file offset (offset < 0) or at
 * offset with pwrite(), retrying on EINTR and short writes.  Returns 0, the
 * negative errno of write()/pwrite(), or -EIO when it wrote nothing. */
int write_full(int fd, const void *buf, size_t size, off_t offset);

/* Reads up to size bytes from fd at its file offset (offset < 0) or at
 * offset with pread(), retrying on EINTR and short reads until size bytes
 * or end of file.  Returns the number of bytes read (< size only at end of
 * file), or the negative errno of read()/pread(). */
ssize_t read_full(int fd, void *buf, size_t size, off_t offset);

/* Reads the first line of a small text file (procfs, sysfs) into buf,
 * without its newline.  Returns 0, the negative errno of fopen(), -EIO on
 * a read error, or -ENODATA for an empty file. */
int read_line(const char *path, char *buf, size_t size);
