/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Durable replacement of small files: luod's files in its state directory
 * (state.luod-state, report.json, reports/<id>.json, assignments.json,
 * assignments.update_id) are each written with write_file_atomic_at(), so
 * that after a crash or a power cut each holds its old or its new content,
 * never a part or nothing. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* True when name is a plain file name: not NULL, not empty, no '/', not "."
 * or "..". */
bool filename_is_valid(const char *name);

/* Replaces the file name in the directory dir_fd with the len bytes (len 0:
 * an empty file) at buf, atomically and durably.  The system calls, in order:
 *
 *   openat(dir_fd, ".#<name>.<pid>-<n>", O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC|
 *          O_NOFOLLOW, mode)       the next <n> while the name exists
 *   fchmod(mode)                   mode exactly, whatever the umask
 *   write() until len bytes are written (EINTR and short writes retried)
 *   fsync() of the file
 *   renameat(dir_fd, temporary, dir_fd, name)
 *   fsync(dir_fd)                  so that the rename survives a power cut
 *
 * dir_fd is a directory opened for reading (O_RDONLY|O_DIRECTORY): not
 * AT_FDCWD and not O_PATH, as it is fsync()ed.  name is a plain file name
 * (filename_is_valid()); the temporary name, up to 21 bytes longer, must
 * fit NAME_MAX (255).  mode is the file's permission bits (e.g. 0600).
 *
 * A reader of name sees the old content or the new one, never a mix; a
 * crash may leave a ".#<name>.*" file behind, which may be deleted.
 *
 * Returns 0, or:
 *   -EBADF    dir_fd < 0;
 *   -EINVAL   name is not a plain file name, or mode has bits beyond 07777;
 *   -ENOMEM;
 *   the negative errno of the failing openat(), fchmod(), write(), fsync()
 *   or renameat() (e.g. -EACCES for a directory luod may not write, -EFBIG
 *   or -ENOSPC for a full file system, -EISDIR when name is a directory):
 *   name keeps its old content (or stays absent) and the temporary file is
 *   removed;
 *   the negative errno of the directory's fsync(): name has the new
 *   content, but the rename may be undone by a power cut.
 * Nothing is logged. */
int write_file_atomic_at(int dir_fd, const char *name, const void *buf, size_t len, mode_t mode);

/* Makes the creation, rename or removal of an entry in a directory durable:
 * openat(dir_fd, path, O_RDONLY|O_DIRECTORY|O_CLOEXEC), fsync(), close().
 * dir_fd is AT_FDCWD or a directory fd; path "." for dir_fd itself.
 * Returns 0, or the negative errno of openat() (-ENOTDIR when path is not a
 * directory) or fsync().  Nothing is logged. */
int fsync_directory_at(int dir_fd, const char *path);

/* Reads the regular file fd whole: fstat(), then pread() of its st_size
 * bytes from offset 0 (the file offset is not used or changed; a file that
 * shrinks meanwhile reads short).  On success *ret_buf is a malloc'd buffer
 * of *ret_size bytes plus a NUL (not counted).  Returns 0, or -EBADFD when
 * fd is not a regular file, -EFBIG when it is larger than max bytes,
 * -ENOMEM, or the negative errno of fstat() or pread().  Nothing is
 * logged. */
int read_regular_fd(int fd, size_t max, char **ret_buf, size_t *ret_size);

/* Reads the regular file path (relative to dir_fd: AT_FDCWD or a directory
 * fd) whole: openat(O_RDONLY|O_CLOEXEC|O_NOCTTY|O_NONBLOCK, so that a FIFO
 * does not block), then read_regular_fd().  Returns 0, or what
 * read_regular_fd() returns, or the negative errno of openat() (-ENOENT
 * when absent).  Nothing is logged. */
int read_regular_file_at(int dir_fd, const char *path, size_t max, char **ret_buf, size_t *ret_size);
