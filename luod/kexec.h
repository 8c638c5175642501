/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Loading and starting the next kernel, and the update id luod hands to
 * that kernel on its command line.
 *
 * The kernel and initrd are opened once (kexec_image_open(), by the
 * preflight) and loaded from those fds with kexec_file_load(2): what the
 * preflight checked is what the kernel reads, never a file found at the
 * path later, and a file that changed since (written to, renamed over,
 * removed) is refused.  Where
 * the running kernel lacks kexec_file_load(2) (ENOSYS), kexec-tools loads
 * the same open files with kexec_load(2) (kexec -c), as /proc/self/fd/N.
 *
 * The programs (kexec, systemctl) are looked up in PATH and then in
 * /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin, and run with
 * posix_spawn(): stdin from /dev/null, stdout inherited, stderr captured,
 * default signal dispositions and an empty signal mask.  kexec-tools exits
 * with the same status for every failure and names the cause in its last
 * message line, so the error returned for a kexec-tools run is the errno
 * whose strerror() text ends that line; -ENOEXEC also when kexec-tools itself
 * does not recognize the file ("Cannot determine the file type of ..."); else
 * -EIO. */

#include <stdbool.h>
#include <sys/stat.h>

#include "inventory.h"

/* The kernel command line word that carries the update id. */
#define UPDATE_ID_PARAM "luod.update_id"

typedef enum KexecLoader {
        KEXEC_LOADER_FILE_LOAD,         /* kexec_file_load(2) on the preflighted fds */
        KEXEC_LOADER_KEXEC_TOOLS,       /* kexec -c -l /proc/self/fd/N: the syscall is missing */
        _KEXEC_LOADER_MAX,
        _KEXEC_LOADER_INVALID = -EINVAL,
} KexecLoader;

/* "kexec_file_load", "kexec-tools"; NULL for others. */
const char *kexec_loader_to_string(KexecLoader l);

/* The loader this kernel offers: KEXEC_LOADER_KEXEC_TOOLS when
 * kexec_file_load(2) fails with ENOSYS, else KEXEC_LOADER_FILE_LOAD.  Asks
 * the syscall with no fd, which loads and unloads nothing. */
KexecLoader kexec_loader_detect(void);

/* A kernel image or initrd as the preflight opened it. */
typedef struct KexecImage {
        int fd;                 /* -EBADF when none */
        struct stat st;         /* at open */
} KexecImage;
#define KEXEC_IMAGE_NULL ((KexecImage) { .fd = -EBADF })

/* Opens path read-only (O_NONBLOCK, so a FIFO cannot block) and fstat()s
 * it.  Returns 0, the negative errno of open()/fstat(), or -EINVAL when it
 * is not a regular file.  Does not log. */
int kexec_image_open(const char *path, KexecImage *ret);
void kexec_image_close(KexecImage *img);

/* 0 when the open file is as it was at kexec_image_open() (inode, size,
 * mtime, ctime), -ESTALE when it changed since (written to, or a link to it
 * added or removed: renamed over, unlinked), or fstat()'s errno. */
int kexec_image_unchanged(const KexecImage *img);

/* Loads the next kernel from kernel and initrd (NULL: none) with cmdline (a
 * whole command line: nothing is reused from the running kernel), through
 * loader.  Refuses with -ESTALE an image written to since it was opened,
 * checked before the load and again after it (then unloading).  A kernel
 * already loaded is replaced; a failed load leaves it.  KHO and LUO hand
 * over only through kexec_file_load(2).  Returns 0 or a negative errno
 * (-EPERM: no CAP_SYS_BOOT, or lockdown wants a signed image; -ENOEXEC: an
 * image the running kernel cannot load; -EINVAL bad arguments).  If
 * ret_error is non-NULL it is always assigned: NULL on success, else a
 * malloc'd message (NULL if out of memory).  Does not log. */
int kexec_load_images(const KexecImage *kernel, const KexecImage *initrd, const char *cmdline,
                      KexecLoader loader, char **ret_error);

/* kexec_load_images() of the files at kernel and initrd (NULL: none),
 * opened here, through the loader kexec_loader_detect() finds.  For tools
 * and tests: luod itself loads what its preflight opened. */
int kexec_load_kernel(const char *kernel, const char *initrd, const char *cmdline, char **ret_error);

/* Unloads the loaded kernel: kexec_file_load(2) with KEXEC_FILE_UNLOAD (any
 * loaded image, however it was loaded), kexec -u where the syscall is
 * missing.  Unloading when nothing is loaded succeeds.  Returns 0 or a
 * negative errno; failures are logged. */
int kexec_unload(void);

/* Boots the loaded kernel.  via_systemd false runs `kexec -e`, which calls
 * reboot(LINUX_REBOOT_CMD_KEXEC) at once without stopping services; it does
 * not return on success.  When it does return, the reboot syscall failed,
 * e.g. LUO could not freeze a preserved file (the running kernel carries
 * on, its sessions intact): returns that errno.  via_systemd true runs
 * `systemctl kexec` and returns 0 once systemd accepted the job; systemd
 * then stops every service (closing the session fds of processes it kills,
 * which unpreserves their files) and kexecs.  Failures are logged. */
int kexec_execute(bool via_systemd);

/* Reads /sys/kernel/kexec_loaded: returns 1 when a kernel is loaded, 0 when
 * not, -EBADMSG for other content, or the negative errno of open()/read()
 * (logged). */
int kexec_loaded(void);

/* Builds the next kernel's command line: the words of base (split at
 * whitespace outside double quotes, as the kernel does, and joined by single
 * spaces; a trailing newline as read from /proc/cmdline goes away) without
 * any "luod.update_id=" word, then "luod.update_id=<update_id>" — before a
 * "--" word when there is one (what follows "--" goes to init).  update_id
 * must be a lowercase UUID.  Returns 0 with a malloc'd *ret, or -EINVAL (bad
 * update_id, or an unbalanced double quote in base), -E2BIG (the result
 * would not fit x86's 2048-byte COMMAND_LINE_SIZE), -ENOMEM. */
int kernel_cmdline_with_update_id(const char *base, const char *update_id, char **ret);

/* x86's COMMAND_LINE_SIZE: the longest command line, NUL included, the next
 * kernel takes. */
#define KERNEL_CMDLINE_MAX 2048

/* Finds the update id on a kernel command line: proc_cmdline is the text
 * (NULL reads /proc/cmdline).  The last "luod.update_id=" word counts, as
 * for kernel parameters.  Returns 0 with the UUID in ret (NUL-terminated),
 * or -ENOENT when there is none, -EINVAL when its value is not a lowercase
 * UUID, or the negative errno of reading /proc/cmdline (logged). */
int kernel_cmdline_get_update_id(const char *proc_cmdline, char ret[static LUOD_UUID_STRING_MAX]);
