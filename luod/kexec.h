/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Loading and starting the next kernel with kexec-tools, and the update id
 * luod hands to that kernel on its command line.
 *
 * The programs (kexec, systemctl) are looked up in PATH and then in
 * /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin, and run with
 * posix_spawn(): stdin from /dev/null, stdout inherited, stderr captured,
 * default signal dispositions and an empty signal mask.  kexec-tools exits
 * with the same status for every failure and names the cause in its last
 * message line ("kexec_file_load failed: Operation not permitted"), so the
 * error returned is the errno whose strerror() text ends that line (e.g.
 * -EPERM: lockdown or a missing signature; -ENOEXEC: a kernel image the
 * running kernel cannot load; -ENOENT: no such kernel or initrd file);
 * -ENOEXEC also when kexec-tools itself does not recognize the file
 * ("Cannot determine the file type of ..."); else -EIO. */

#include <stdbool.h>

#include "inventory.h"

/* The kernel command line word that carries the update id. */
#define UPDATE_ID_PARAM "luod.update_id"

/* Loads the next kernel with kexec_file_load(2):
 *     kexec -s -l KERNEL [--initrd=INITRD] --command-line=CMDLINE
 * kernel and cmdline are required (a whole command line: nothing is reused
 * from the running kernel); initrd NULL loads none.  A kernel already loaded
 * is replaced.  KHO and LUO hand over only through this loader.  Returns 0,
 * or a negative errno as described above (-EINVAL for a NULL kernel or
 * cmdline).  If ret_error is non-NULL it is always assigned: NULL on
 * success, else a malloc'd message (kexec's stderr, trimmed, or what failed
 * before it ran; NULL if out of memory).  Does not log. */
int kexec_load_kernel(const char *kernel, const char *initrd, const char *cmdline, char **ret_error);

/* Unloads the loaded kernel (kexec -s -u).  Unloading when nothing is
 * loaded succeeds.  Returns 0 or a negative errno; failures are logged
 * with kexec's message. */
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

/* Finds the update id on a kernel command line: proc_cmdline is the text
 * (NULL reads /proc/cmdline).  The last "luod.update_id=" word counts, as
 * for kernel parameters.  Returns 0 with the UUID in ret (NUL-terminated),
 * or -ENOENT when there is none, -EINVAL when its value is not a lowercase
 * UUID, or the negative errno of reading /proc/cmdline (logged). */
int kernel_cmdline_get_update_id(const char *proc_cmdline, char ret[static LUOD_UUID_STRING_MAX]);
