/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Writes all size bytes of buf to fd at its file offset (offset < 0) or at
 * offset with pwrite(), retrying on EINTR and short writes.  Returns 0, the
 * negative errno of write()/pwrite(), or -EIO when it wrote nothing. */
int write_full(int fd, const void *buf, size_t size, off_t offset);
