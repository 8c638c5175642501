/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Who may do the consumer calls that bind other people: hold a block
 * inhibitor (every Update refused, dry runs included) and assign a VF (the
 * assignment is carried across the kexec and routes that PF's events).
 * Root may, and the members of luod's consumer group (--consumer-group,
 * default "luod", which the package creates: units/luod.sysusers).  The bus
 * policy (units/org.luod1.conf) lets only them send the consumer methods at
 * all; luod checks again, as it must not depend on a policy file.
 *
 * Group membership is what dbus-daemon recorded when the caller connected
 * (GetConnectionCredentials, UnixGroupIDs: SO_PEERGROUPS), not /proc. */

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "types.h"

#define CONSUMER_GROUP_DEFAULT "luod"

/* A group name or a decimal gid.  Returns 0 with *ret, -ENOENT when no
 * such group exists, -EINVAL for an empty name. */
int policy_group_resolve(const char *spec, gid_t *ret);

/* Whether the connection sender (a unique name) has uid 0 or gid among
 * the groups the bus recorded for it; have_gid false: root only.  Returns
 * 1 or 0, or a negative errno when the bus cannot say (logged). */
int policy_sender_privileged(sd_bus *bus, const char *sender, uid_t uid, bool have_gid, gid_t gid);

/* Refuses what consumer c may not do (what: "assign VFs") with
 * org.luod1.Error.NotPermitted, naming the group that may; returns the
 * negative errno of sd_bus_error_setf(). */
int policy_refuse(const Manager *m, const Consumer *c, const char *what, sd_bus_error *error);
