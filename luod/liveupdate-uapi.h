/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The Live Update Orchestrator (LUO) uAPI on /dev/liveupdate, as luod uses
 * it.  No system header carries it yet (linux-libc-dev 6.1/6.12), so luod
 * keeps its own definitions, written from the ABI description (Linux 6.19+,
 * include/uapi/linux/liveupdate.h; docs.kernel.org/userspace-api/liveupdate.html).
 * Do not include <linux/liveupdate.h> next to this header.
 *
 * Every ioctl is a plain _IO(0xBA, nr) without size or direction bits: the
 * argument is a struct whose first __u32 `size` says how many bytes the
 * caller passes (always sizeof the struct here).  The kernel refuses a size
 * below the struct it knows (EINVAL) and accepts a larger one only when the
 * extra bytes are zero (E2BIG otherwise).
 *
 * Device commands (on the fd of open("/dev/liveupdate", O_RDWR); only one
 * open file at a time, a second open() fails with EBUSY):
 *   CREATE_SESSION    a new outgoing session named `name` -> `fd`
 *                     (EEXIST: the name is taken, EINVAL: empty or
 *                     unterminated name)
 *   RETRIEVE_SESSION  the incoming session of that name, preserved by the
 *                     previous kernel -> `fd` (ENOENT: none, EINVAL: already
 *                     retrieved)
 * Session commands (on a session fd):
 *   SESSION_PRESERVE_FD  outgoing: preserve `fd` (a memfd) under `token`
 *                        (EEXIST: token used, EBUSY: file already preserved,
 *                        ENOENT: no handler for this file type)
 *   SESSION_RETRIEVE_FD  incoming: the file preserved under `token` -> `fd`
 *                        (ENOENT: no such token; a failure is permanent)
 *   SESSION_FINISH       incoming: LUO drops the session's objects; objects
 *                        never retrieved are freed.  `reserved` must be 0.
 * Closing an outgoing session fd unpreserves everything in it; closing an
 * incoming one makes the kernel finish it. */

#include <linux/ioctl.h>
#include <linux/types.h>
#include <stddef.h>

#define LIVEUPDATE_DEVICE "/dev/liveupdate"
#define LIVEUPDATE_IOCTL_TYPE 0xBA
/* Longest session name, terminating NUL included. */
#define LIVEUPDATE_SESSION_NAME_LENGTH 64

#define LIVEUPDATE_CMD_CREATE_SESSION 0x00
#define LIVEUPDATE_CMD_RETRIEVE_SESSION 0x01
#define LIVEUPDATE_CMD_SESSION_PRESERVE_FD 0x40
#define LIVEUPDATE_CMD_SESSION_RETRIEVE_FD 0x41
#define LIVEUPDATE_CMD_SESSION_FINISH 0x42

/* CREATE_SESSION: in size, name; out fd (O_CLOEXEC). */
struct liveupdate_ioctl_create_session {
        __u32 size;
        __s32 fd;
        __u8 name[LIVEUPDATE_SESSION_NAME_LENGTH];
};

/* RETRIEVE_SESSION: in size, name (as created in the previous kernel); out
 * fd (O_CLOEXEC). */
struct liveupdate_ioctl_retrieve_session {
        __u32 size;
        __s32 fd;
        __u8 name[LIVEUPDATE_SESSION_NAME_LENGTH];
};

/* SESSION_PRESERVE_FD: in size, fd, token (chosen by the caller, unique in
 * the session). */
struct liveupdate_session_preserve_fd {
        __u32 size;
        __s32 fd;
        __aligned_u64 token;
};

/* SESSION_RETRIEVE_FD: in size, token; out fd (O_CLOEXEC). */
struct liveupdate_session_retrieve_fd {
        __u32 size;
        __s32 fd;
        __aligned_u64 token;
};

/* SESSION_FINISH: in size, reserved (0). */
struct liveupdate_session_finish {
        __u32 size;
        __u32 reserved;
};

#define LIVEUPDATE_IOCTL_CREATE_SESSION _IO(LIVEUPDATE_IOCTL_TYPE, LIVEUPDATE_CMD_CREATE_SESSION)
#define LIVEUPDATE_IOCTL_RETRIEVE_SESSION _IO(LIVEUPDATE_IOCTL_TYPE, LIVEUPDATE_CMD_RETRIEVE_SESSION)
#define LIVEUPDATE_SESSION_PRESERVE_FD _IO(LIVEUPDATE_IOCTL_TYPE, LIVEUPDATE_CMD_SESSION_PRESERVE_FD)
#define LIVEUPDATE_SESSION_RETRIEVE_FD _IO(LIVEUPDATE_IOCTL_TYPE, LIVEUPDATE_CMD_SESSION_RETRIEVE_FD)
#define LIVEUPDATE_SESSION_FINISH _IO(LIVEUPDATE_IOCTL_TYPE, LIVEUPDATE_CMD_SESSION_FINISH)

/* The ABI: sizes and offsets on every architecture. */
_Static_assert(sizeof(struct liveupdate_ioctl_create_session) == 72, "create_session size");
_Static_assert(offsetof(struct liveupdate_ioctl_create_session, fd) == 4, "create_session.fd");
_Static_assert(offsetof(struct liveupdate_ioctl_create_session, name) == 8, "create_session.name");
_Static_assert(sizeof(struct liveupdate_ioctl_retrieve_session) == 72, "retrieve_session size");
_Static_assert(offsetof(struct liveupdate_ioctl_retrieve_session, fd) == 4, "retrieve_session.fd");
_Static_assert(offsetof(struct liveupdate_ioctl_retrieve_session, name) == 8, "retrieve_session.name");
_Static_assert(sizeof(struct liveupdate_session_preserve_fd) == 16, "preserve_fd size");
_Static_assert(offsetof(struct liveupdate_session_preserve_fd, fd) == 4, "preserve_fd.fd");
_Static_assert(offsetof(struct liveupdate_session_preserve_fd, token) == 8, "preserve_fd.token");
_Static_assert(sizeof(struct liveupdate_session_retrieve_fd) == 16, "retrieve_fd size");
_Static_assert(offsetof(struct liveupdate_session_retrieve_fd, fd) == 4, "retrieve_fd.fd");
_Static_assert(offsetof(struct liveupdate_session_retrieve_fd, token) == 8, "retrieve_fd.token");
_Static_assert(sizeof(struct liveupdate_session_finish) == 8, "finish size");
_Static_assert(offsetof(struct liveupdate_session_finish, reserved) == 4, "finish.reserved");
_Static_assert(LIVEUPDATE_IOCTL_CREATE_SESSION == 0xBA00, "CREATE_SESSION value");
_Static_assert(LIVEUPDATE_IOCTL_RETRIEVE_SESSION == 0xBA01, "RETRIEVE_SESSION value");
_Static_assert(LIVEUPDATE_SESSION_PRESERVE_FD == 0xBA40, "PRESERVE_FD value");
_Static_assert(LIVEUPDATE_SESSION_RETRIEVE_FD == 0xBA41, "RETRIEVE_FD value");
_Static_assert(LIVEUPDATE_SESSION_FINISH == 0xBA42, "FINISH value");
