/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* org.luod1.Manager's D-Bus face: the vtable, its properties and the thin
 * handlers of the methods that are not a module's own (Update and Abandon
 * are update.c's, the consumer methods consumers.c's, GetEvents
 * events.c's). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "config.h"
#include "consumers.h"
#include "errors.h"
#include "inhibitors.h"
#include "events.h"
#include "guests.h"
#include "json-util.h"
#include "kexec.h"
#include "log.h"
#include "manager-dbus.h"
#include "restore-start.h"
#include "preserve.h"
#include "record.h"
#include "report.h"
#include "sriov.h"
#include "status.h"
#include "update.h"
#include "update-loaded.h"


static int method_get_inventory(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        const char *text;
        int r;

        r = inventory_cache_get(userdata, &text);
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "Reading the SR-IOV inventory: %m");
        return sd_bus_reply_method_return(msg, "s", text);
}

static int method_get_report(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_free_ char *text = NULL, *why = NULL;
        char path[PATH_MAX];
        int r;

        /* The last update's report, else what an earlier luod wrote. */
        if (m->report) {
                r = report_format(m->report, &text, NULL);
                if (r < 0)
                        return r;
                return sd_bus_reply_method_return(msg, "s", text);
        }
        snprintf(path, sizeof(path), "%s/report.json", m->state_dir);
        r = report_read_file(path, &text, &why);
        if (r == -ENOENT)
                return sd_bus_error_setf(error, LUOD_ERROR_NO_REPORT, "No update report in %s: %s", path, strerror(-r));
        if (r == -EBADFD)
                return sd_bus_error_setf(error, LUOD_ERROR_STATE_CORRUPT, "The update report %s is not a regular file", path);
        if (r == -EBADMSG || r == -EFBIG)
                return sd_bus_error_setf(error, LUOD_ERROR_STATE_CORRUPT,
                                         "The update report %s is unreadable or not JSON: %s", path,
                                         why ?: strerror(-r));
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "No update report in %s: %m", path);
        return sd_bus_reply_method_return(msg, "s", text);
}

static int method_discard(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        int r;

        if (m->update)
                return sd_bus_error_setf(error, LUOD_ERROR_UPDATE_IN_PROGRESS,
                                         "Update %s is in progress; luoctl abandon it first", manager_update_busy(m));
        if (m->pending.update_id[0]) {
                log_info("Discarding loaded update %s", m->pending.update_id);
                update_unload(m);
                update_pending_drop(m);
        }
        if (m->luo_in_fd >= 0) {
                r = luo_finish(m->luo_in_fd);
                if (r < 0)
                        return sd_bus_error_set_errnof(error, -r, "FINISH on the retrieved LUO session: %m");
                close(m->luo_in_fd);
                m->luo_in_fd = -EBADF;
        }
        r = file_remove(m->state_dir);
        if (r < 0 && r != -ENOENT)
                return sd_bus_error_set_errnof(error, -r, "Removing %s/state.luod-state: %m", m->state_dir);
        backend_initrd_remove_state(m);
        if (m->update_id && *m->update_id && !m->pending.update_id[0])
                restore_finished_mark(m, m->update_id);
        m->state_kept = false;
        status_set_state(m, "idle", "");
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_retry(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_free_ char *why = NULL;
        int r;

        if (manager_update_busy(m))
                return sd_bus_error_setf(error, LUOD_ERROR_UPDATE_IN_PROGRESS,
                                         "Update %s is in progress; luoctl abandon it first", manager_update_busy(m));
        if (!m->state_kept)
                return sd_bus_error_setf(error, LUOD_ERROR_NOTHING_KEPT, "No preserved state is kept: nothing to retry");
        r = restore_retry(m, &why);
        if (r == -EBADMSG || r == -EPROTONOSUPPORT)
                return sd_bus_error_setf(error, LUOD_ERROR_STATE_CORRUPT, "%s", why ?: "Retry failed");
        if (r == -ENOENT)
                return sd_bus_error_setf(error, LUOD_ERROR_NOTHING_KEPT, "%s", why ?: "Retry failed");
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "%s", why ?: "Retry failed");
        return sd_bus_reply_method_return(msg, "s", m->update_id);
}

static int property_get_version(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply,
                                void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", PACKAGE_VERSION);
}

static int property_get_state_kept(sd_bus *bus, const char *path, const char *interface,
                                   const char *property, sd_bus_message *reply,
                                   void *userdata, sd_bus_error *error) {
        Manager *m = userdata;

        return sd_bus_message_append(reply, "b", (int) m->state_kept);
}

/* Update, Discard and Retry lack SD_BUS_VTABLE_UNPRIVILEGED: sd-bus itself
 * refuses callers whose uid is not luod's (AccessDenied: dbus-daemon passes
 * no capabilities, so sd-bus compares uids); the bus policy
 * (units/org.luod1.conf) already lets only root send them. */
static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("State", "s", NULL, offsetof(Manager, state), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("UpdateId", "s", NULL, offsetof(Manager, update_id), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("LastError", "s", NULL, offsetof(Manager, last_error), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Phase", "s", NULL, offsetof(Manager, phase), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("StateKept", "b", property_get_state_kept, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Guests", "a(sssd)", property_get_guests, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_METHOD_WITH_ARGS("GetInventory", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", inventory),
                                method_get_inventory, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Update",
                                SD_BUS_ARGS("s", kernel, "s", initrd, "s", cmdline, "t", flags),
                                SD_BUS_RESULT("s", update_id, "s", plan),
                                method_update, 0),
        SD_BUS_METHOD_WITH_ARGS("GetReport", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", report),
                                method_get_report, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Discard", NULL, NULL, method_discard, 0),
        SD_BUS_METHOD_WITH_ARGS("Abandon", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", update_id), method_abandon, 0),
        SD_BUS_METHOD_WITH_ARGS("Retry", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", update_id), method_retry, 0),
        SD_BUS_METHOD_WITH_ARGS("RegisterConsumer", SD_BUS_ARGS("s", name), SD_BUS_NO_RESULT,
                                method_register_consumer, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("AssignVF", SD_BUS_ARGS("s", guest, "s", pf_identity, "u", vf_index),
                                SD_BUS_NO_RESULT, method_assign_vf, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("UnassignVF", SD_BUS_ARGS("s", guest, "s", pf_identity, "u", vf_index),
                                SD_BUS_NO_RESULT, method_unassign_vf, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetAssignments", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(sssu)", assignments),
                                method_get_assignments, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetGuests", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(sssd)", guests),
                                method_get_guests, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GuestRunning", SD_BUS_ARGS("s", guest), SD_BUS_RESULT("d", downtime_ms),
                                method_guest_running, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Inhibit", SD_BUS_ARGS("s", mode, "s", why), SD_BUS_RESULT("h", fd),
                                method_inhibit, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetEvents", SD_BUS_ARGS("t", after_seqnum),
                                SD_BUS_RESULT("t", lost, "a(stsssa{ss})", events), method_get_events,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL_WITH_ARGS("EventsLost", SD_BUS_ARGS("t", count), 0),
        SD_BUS_SIGNAL_WITH_ARGS("DeviceEvent",
                                SD_BUS_ARGS("s", pf_identity, "t", seqnum, "s", action, "s", subsystem,
                                            "s", devpath, "a{ss}", properties, "t", held_usec), 0),
        SD_BUS_SIGNAL_WITH_ARGS("PrepareForUpdate", SD_BUS_ARGS("s", update_id, "t", max_delay_usec), 0),
        SD_BUS_SIGNAL_WITH_ARGS("UpdateAbandoned", SD_BUS_ARGS("s", update_id, "s", reason), 0),
        SD_BUS_SIGNAL_WITH_ARGS("GuestRestored", SD_BUS_ARGS("s", consumer, "s", guest, "s", error, "b", ok), 0),
        SD_BUS_VTABLE_END
};

int manager_add_bus_object(Manager *m) {
        int r = sd_bus_add_object_vtable(m->bus, NULL, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE,
                                         manager_vtable, m);
        if (r < 0)
                return log_error_errno(r, "Failed to add object %s: %m", LUOD_OBJECT_PATH);
        return 0;
}
