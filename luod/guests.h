/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The guests of the last live update, typed (Guest in types.h): one per
 * (consumer, guest) of the restored state's VF assignments, ok or failed
 * with its PF's error, and running with its downtime once its consumer calls
 * GuestRunning.  report.c turns them into the report's "guests". */

#include "types.h"

/* m->guests from the restored state s and its per-PF results pfs.
 * Returns 0 or -ENOMEM. */
int guests_from_record(Manager *m, const LuodState *s, const PfRestore *pfs);

void guests_done(Manager *m);

/* D-Bus GuestRunning(guest) -> downtime_ms, GetGuests, property Guests. */
int method_guest_running(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int method_get_guests(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int property_get_guests(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error);
