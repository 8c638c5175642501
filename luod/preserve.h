/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Three ways to carry one serialized state buffer (luod_state_serialize(),
 * state.h) across a kexec, tried by the caller in this order:
 *
 *   LUO     a memfd preserved in the LUO session "luod" (token 1) through
 *           /dev/liveupdate (liveupdate-uapi.h).  Needs kho=on liveupdate=on
 *           on both kernels and kexec_file_load (kexec.h).
 *   initrd  a newc cpio archive holding luod/state.luod-state, appended to
 *           the initrd the next kernel boots; the kernel unpacks it into the
 *           initramfs, and units/initramfs-tools/luod-init-top copies it to
 *           /run/luod/ before switch_root.
 *   file    <dir>/state.luod-state on a disk that survives the kexec.
 *
 * Buffers are bytes, not strings: 1..LUOD_STATE_SIZE_MAX bytes on the way
 * in (else -EINVAL or -EFBIG).  Buffers returned are malloc'd, *ret_size
 * bytes long plus a terminating NUL that *ret_size does not count; the
 * caller frees them.  Every function returns 0 on success or a negative
 * errno, and logs its failures naming the step and the object, except the
 * "not there" results the caller turns into a fall-through to the next
 * backend: -ENOENT, and -EBUSY from luo_preserve()/luo_retrieve(). */

#include <stdbool.h>
#include <stddef.h>

#define LUO_SESSION_NAME "luod"
#define LUO_STATE_TOKEN 1
#define LUO_STATE_MEMFD_NAME "luod-state"

#define STATE_FILE_NAME "state.luod-state"
/* Where the kernel unpacks the appended archive (the initramfs root). */
#define INITRD_STATE_PATH "/luod/" STATE_FILE_NAME
/* Where luod-init-top copies it, in the /run that survives switch_root. */
#define INITRD_STATE_RUN_PATH "/run/luod/" STATE_FILE_NAME
#define FILE_STATE_DIR "/var/lib/luod"

/* --- LUO ------------------------------------------------------------------ */

/* Preserves size bytes at buf for the next kernel: writes them into a new
 * memfd "luod-state" (memfd_create(MFD_CLOEXEC), at offset 0, file position
 * left at 0), opens /dev/liveupdate (O_RDWR|O_CLOEXEC), creates the session
 * "luod" (LIVEUPDATE_IOCTL_CREATE_SESSION), preserves the memfd under token
 * 1 (LIVEUPDATE_SESSION_PRESERVE_FD; the kernel pins its pages and freezes
 * its size), then closes the memfd and the device (the session lives on).
 * On success returns 0 and stores the session fd (O_CLOEXEC) in
 * *ret_session_fd.  The caller must keep that fd open in a process that
 * lives until the kexec (reboot(KEXEC) serializes the session): closing it
 * unpreserves the memfd.  Returns:
 *   -ENOENT   /dev/liveupdate does not exist: the kernel lacks
 *             CONFIG_LIVEUPDATE or was booted without kho=on liveupdate=on
 *             (not logged);
 *   -EBUSY    another process has /dev/liveupdate open, e.g. systemd (not
 *             logged);
 *   -EEXIST   a session "luod" already exists (an earlier luo_preserve()
 *             whose session fd is still open);
 *   -EIO      the kernel failed to deserialize the previous kernel's
 *             sessions (open() fails with EIO until reboot);
 *   -EINVAL, -EFBIG  a bad size; or the negative errno of memfd_create(),
 *             write(), lseek() or the ioctl that failed. */
int luo_preserve(const void *buf, size_t size, int *ret_session_fd);

/* Fetches what luo_preserve() preserved in the previous kernel: opens
 * /dev/liveupdate (the first open after boot deserializes the incoming
 * sessions), retrieves the session "luod" (LIVEUPDATE_IOCTL_RETRIEVE_SESSION),
 * then its memfd under token 1 (LIVEUPDATE_SESSION_RETRIEVE_FD), reads the
 * memfd whole and closes it and the device.  On success stores the buffer
 * in *ret_buf, *ret_size and the session fd in *ret_session_fd (O_CLOEXEC);
 * keep it open until the state is restored or discarded, then call
 * luo_finish() and close it.  Closing it without FINISH makes the kernel
 * finish the session itself; a session can be retrieved once per boot.
 * On failure nothing is returned, and a session already retrieved is
 * closed, which finishes it: its state is gone.  Returns:
 *   -ENOENT   no /dev/liveupdate (LUO off), or no session "luod" came from
 *             the previous kernel (not logged);
 *   -EBUSY    another process has /dev/liveupdate open (not logged);
 *   -EINVAL   the session was already retrieved in this boot;
 *   -EIO      the incoming LUO state could not be deserialized;
 *   -EFBIG    the memfd is larger than LUOD_STATE_SIZE_MAX;
 *   -EBADMSG  the session has no token 1 (not luod's state), or the memfd
 *             is empty;
 *   or the negative errno of the ioctl, fstat() or pread() that failed
 *   (a failed RETRIEVE_FD is permanent in LUO). */
int luo_retrieve(char **ret_buf, size_t *ret_size, int *ret_session_fd);

/* Ends an incoming session retrieved by luo_retrieve()
 * (LIVEUPDATE_SESSION_FINISH, reserved 0): LUO releases the preserved memfd.
 * Call it only after a complete restore or a deliberate discard.  Does not
 * close session_fd.  Returns 0, or -EBUSY (a file handler refused; retry
 * later), -EINVAL (not an incoming session), -EBADF or -ENOTTY (not a
 * session fd). */
int luo_finish(int session_fd);

/* --- initrd --------------------------------------------------------------- */

/* Writes the file out (created mode 0600, or truncated): the bytes of the
 * file initrd, zeros up to the next multiple of 4 bytes (the kernel loses an
 * archive appended after an odd-length compressed member otherwise), then a
 * newc cpio archive written with libarchive holding the directory "luod"
 * (0700) and the file "luod/state.luod-state" (0600, the size bytes at buf),
 * owned by 0:0 with mtime 0, so the same input gives the same bytes.  A NULL
 * or empty initrd path writes the archive alone.  out must not be the
 * initrd.  Returns 0, or -EINVAL (out is the initrd, or a bad size),
 * -EFBIG, the negative errno of the failing open()/read()/write(), or -EIO
 * when libarchive fails (its message is logged).  A failure after out was
 * truncated removes out. */
int initrd_append_state(const char *initrd, const char *out, const void *buf, size_t size);

/* Reads the state the initramfs carried: the regular file path, or, for a
 * NULL path, INITRD_STATE_RUN_PATH (a host whose initramfs-tools ran
 * luod-init-top) and then INITRD_STATE_PATH (an initramfs that is the root
 * file system).  Returns 0 with *ret_buf, *ret_size, or -ENOENT when absent
 * (not logged), -EFBIG (larger than LUOD_STATE_SIZE_MAX), -EBADMSG (empty,
 * or shrank while read), -EBADFD (not a regular file) or the negative errno
 * of open()/fstat()/pread().  The file stays where it is: after a restart
 * luod must tell a stale state from the current update by its update id
 * (kernel_cmdline_get_update_id()). */
int initrd_find_state(const char *path, char **ret_buf, size_t *ret_size);

/* --- file ----------------------------------------------------------------- */

/* Atomically and durably replaces <dir>/state.luod-state (dir NULL:
 * FILE_STATE_DIR, which must exist) with the size bytes at buf, mode 0600:
 * opens dir, then write_file_atomic_at() (fs-util.h: a temporary
 * "<dir>/.#state.luod-state.<pid>-<n>", fsync(), renameat() over the state
 * file, fsync() of dir).  A reader sees the old or the new state, never a
 * partial one.  Returns 0, or -EINVAL/-EFBIG for a bad size, or the
 * negative errno of the failing system call (logged; the temporary file is
 * removed; after a failed directory fsync the new file is in place but may
 * not be durable). */
int file_preserve(const char *dir, const void *buf, size_t size);

/* Reads <dir>/state.luod-state (dir NULL: FILE_STATE_DIR).  Returns 0 with
 * *ret_buf, *ret_size, or -ENOENT when absent (not logged), or as
 * initrd_find_state(). */
int file_retrieve(const char *dir, char **ret_buf, size_t *ret_size);

/* Removes <dir>/state.luod-state (dir NULL: FILE_STATE_DIR) and fsync()s
 * dir, so a restored or discarded state is not restored twice.  Returns 0,
 * -ENOENT when absent (not logged), or the negative errno of unlink(),
 * open() or fsync(). */
int file_remove(const char *dir);

/* Whether /dev/liveupdate can be opened now; why not is logged (EBUSY: held
 * by another owner such as systemd >= 261). */
bool luo_available(void);
