/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Hypervisor consumers of luod: registration by name,
 * dropped when their bus connection goes; and VF assignments (which guest
 * holds which VF, by PF identity and VF index), kept in
 * <state_dir>/assignments.json across luod restarts and carried in the
 * preserved state across the kexec.  D-Bus members: RegisterConsumer,
 * AssignVF, UnassignVF, GetAssignments (proto/org.luod1.Manager.xml). */

#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "inventory.h"
#include "restore.h"

#include "types.h"


/* Loads <state_dir>/assignments.json into m->held (missing: none).
 * Returns 0 or a negative errno (the file is kept and named in the log). */
int consumers_load(Manager *m);

/* Writes m->held's assignments to <state_dir>/assignments.json
 * atomically (temporary file, fsync, rename).  Returns 0 or -errno. */
int consumers_save(Manager *m);

/* Copies m->held's assignments into s (for the preserved state). */
int consumers_copy_assignments(const Manager *m, LuodState *s);

/* After a restore: the preserved state's assignments become the held
 * ones (they were true at the kexec) and are saved. */
int consumers_adopt_assignments(Manager *m, const LuodState *s);

void consumers_done(Manager *m);

/* The calling consumer, or NULL with *ret set to a NotConsumer error. */
Consumer *consumer_caller(Manager *m, sd_bus_message *msg, sd_bus_error *error, int *ret);

/* Whether s is 1..max bytes with no control characters. */
bool consumer_text_ok(const char *s, size_t max);



/* D-Bus method handlers (vtable in manager-dbus.c). */
int method_register_consumer(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int method_assign_vf(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int method_unassign_vf(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int method_get_assignments(sd_bus_message *msg, void *userdata, sd_bus_error *error);
