/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "log.h"
#include "macro.h"
#include "policy.h"

int policy_group_resolve(const char *spec, gid_t *ret) {
        struct group *g;
        char *end;
        unsigned long v;

        if (!spec || !*spec)
                return -EINVAL;
        errno = 0;
        v = strtoul(spec, &end, 10);
        if (!*end && errno == 0 && v < (gid_t) -1) {
                *ret = (gid_t) v;
                return 0;
        }
        errno = 0;
        g = getgrnam(spec);
        if (!g)
                return errno > 0 ? -errno : -ENOENT;
        *ret = g->gr_gid;
        return 0;
}

/* Reads "UnixGroupIDs" (au) from a GetConnectionCredentials reply: 1 when
 * gid is among them, 0 when not or absent. */
static int reply_has_gid(sd_bus_message *reply, gid_t gid) {
        const char *key;
        int r, found = 0;

        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r > 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                r = sd_bus_message_read(reply, "s", &key);
                if (r >= 0 && strcmp(key, "UnixGroupIDs") == 0) {
                        const uint32_t *gids;
                        size_t size;

                        r = sd_bus_message_enter_container(reply, 'v', "au");
                        if (r >= 0)
                                r = sd_bus_message_read_array(reply, 'u', (const void **) &gids, &size);
                        for (size_t i = 0; r >= 0 && i < size / sizeof(uint32_t); i++)
                                found = found || gids[i] == gid;
                        if (r >= 0)
                                r = sd_bus_message_exit_container(reply);
                } else if (r >= 0)
                        r = sd_bus_message_skip(reply, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        return r < 0 ? r : found;
}

int policy_sender_privileged(sd_bus *bus, const char *sender, uid_t uid, bool have_gid, gid_t gid) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        if (uid == 0)
                return 1;
        if (!have_gid)
                return 0;
        r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "GetConnectionCredentials", &error, &reply, "s", sender);
        if (r >= 0)
                r = reply_has_gid(reply, gid);
        if (r < 0)
                log_warning_errno(r, "Cannot learn the groups of %s from the bus: %s", sender,
                                  error.message ?: strerror(-r));
        sd_bus_error_free(&error);
        return r;
}

int policy_refuse(const Manager *m, const Consumer *c, const char *what, sd_bus_error *error) {
        char group[32];

        if (m->have_consumer_gid)
                snprintf(group, sizeof(group), "group %u", (unsigned) m->consumer_gid);
        return sd_bus_error_setf(error, LUOD_ERROR_NOT_PERMITTED, "Consumer %s (uid %u) may not %s: only root and "
                                 "the members of luod's consumer group (%s) may", c->name, (unsigned) c->uid, what,
                                 m->have_consumer_gid ? group : "none configured");
}
