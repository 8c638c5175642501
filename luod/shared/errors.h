/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The named D-Bus errors of org.luod1.Manager, in one place.
 *
 * luod returns one of these for every refusal that is part of its protocol;
 * malformed arguments stay org.freedesktop.DBus.Error.InvalidArgs and an
 * unexpected failure of a system call stays the errno-derived name sd-bus
 * gives it.  Each name maps to one errno (luod_error_map below), so a caller
 * that registered the map with sd_bus_error_add_map() gets that errno back
 * from sd_bus_error_get_errno(), and luod's own sd_bus_error_setf() returns
 * its negative.  proto/errors.md says where each one is returned.
 */

#include <systemd/sd-bus.h>

#define LUOD_ERROR_PREFIX                 "org.luod1.Error."

/* Update refusals */
#define LUOD_ERROR_UPDATE_BLOCKED         LUOD_ERROR_PREFIX "UpdateBlocked"       /* EBUSY: a block inhibitor is held */
#define LUOD_ERROR_UPDATE_IN_PROGRESS     LUOD_ERROR_PREFIX "UpdateInProgress"    /* EINPROGRESS: another update runs */
#define LUOD_ERROR_UPDATE_LOADED          LUOD_ERROR_PREFIX "UpdateLoaded"        /* EALREADY: an update is loaded, awaiting kexec */
#define LUOD_ERROR_STATE_KEPT             LUOD_ERROR_PREFIX "StateKept"           /* ESTALE: a kept state needs Retry or Discard */
#define LUOD_ERROR_DRIVERS_MISSING        LUOD_ERROR_PREFIX "DriversMissing"      /* ENOPKG: the new kernel lacks drivers */
#define LUOD_ERROR_NO_BACKEND             LUOD_ERROR_PREFIX "NoBackend"           /* EOPNOTSUPP: no way to carry the state */
#define LUOD_ERROR_INVALID_RECORD         LUOD_ERROR_PREFIX "InvalidRecord"       /* EINVAL: this host's record cannot be preserved */
#define LUOD_ERROR_ABANDONED              LUOD_ERROR_PREFIX "Abandoned"           /* ECANCELED: the update was abandoned */
#define LUOD_ERROR_NO_UPDATE              LUOD_ERROR_PREFIX "NoUpdate"            /* ENOENT: Abandon with no update to abandon */

/* Preserved state and reports */
#define LUOD_ERROR_STATE_CORRUPT          LUOD_ERROR_PREFIX "StateCorrupt"        /* EBADMSG: a state or report cannot be read */
#define LUOD_ERROR_NO_REPORT              LUOD_ERROR_PREFIX "NoReport"            /* ENODATA: no update report exists */
#define LUOD_ERROR_NOTHING_KEPT           LUOD_ERROR_PREFIX "NothingKept"         /* ENOENT: Retry with no kept state */

/* Consumers, inhibitors, assignments */
#define LUOD_ERROR_NOT_CONSUMER           LUOD_ERROR_PREFIX "NotConsumer"         /* ENOTCONN: RegisterConsumer first */
#define LUOD_ERROR_NAME_TAKEN             LUOD_ERROR_PREFIX "NameTaken"           /* EEXIST: consumer name owned elsewhere */
#define LUOD_ERROR_NOT_PERMITTED          LUOD_ERROR_PREFIX "NotPermitted"        /* EPERM: the object belongs to someone else */
#define LUOD_ERROR_VF_BUSY                LUOD_ERROR_PREFIX "VFBusy"              /* EADDRINUSE: VF held by another guest */
#define LUOD_ERROR_NO_SUCH_PF             LUOD_ERROR_PREFIX "NoSuchPF"            /* ENODEV */
#define LUOD_ERROR_NO_SUCH_VF             LUOD_ERROR_PREFIX "NoSuchVF"            /* ENXIO: index beyond the PF's VFs, or not held */
#define LUOD_ERROR_NO_SUCH_GUEST          LUOD_ERROR_PREFIX "NoSuchGuest"         /* ESRCH */
#define LUOD_ERROR_TOO_MANY_INHIBITORS    LUOD_ERROR_PREFIX "TooManyInhibitors"   /* ETOOMANYREFS */
#define LUOD_ERROR_TOO_MANY               LUOD_ERROR_PREFIX "TooMany"             /* EDQUOT: a per-uid bound */

/* Events and timing */
#define LUOD_ERROR_CURSOR_FROM_OTHER_BOOT LUOD_ERROR_PREFIX "CursorFromOtherBoot" /* EXDEV: seqnum not of this boot */
#define LUOD_ERROR_NO_EVENTS              LUOD_ERROR_PREFIX "NoEvents"            /* ENOMEDIUM: luod watches no device events */
#define LUOD_ERROR_NO_CLOCK               LUOD_ERROR_PREFIX "NoClock"             /* ENODATA: neither TSC nor wall clock spans the kexec */

/* Name → errno; terminated by SD_BUS_ERROR_MAP_END.  Register it with
 * sd_bus_error_add_map(luod_error_map) before the first call. */
extern const sd_bus_error_map luod_error_map[];

/* Registers luod_error_map once per process; returns 0 or a negative errno. */
int luod_errors_register(void);
