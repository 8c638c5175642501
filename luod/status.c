/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* luod's status properties (State, LastError, UpdateId, Phase): set here,
 * and their change announced on the bus. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "status.h"

int status_set_string(char **p, const char *v) {
        char *c = strdup(v ?: "");

        if (!c)
                return -ENOMEM;
        free(*p);
        *p = c;
        return 0;
}

void status_set_state(Manager *m, const char *state, const char *error) {
        (void) status_set_string(&m->state, state);
        if (error)
                (void) status_set_string(&m->last_error, error);
        if (m->bus)
                (void) sd_bus_emit_properties_changed(m->bus, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE,
                                                      "State", "LastError", "UpdateId", "StateKept", NULL);
}

/* The step Update is in, for live progress (property Phase). */
void status_set_phase(Manager *m, const char *phase) {
        (void) status_set_string(&m->phase, phase);
        if (m->bus) {
                (void) sd_bus_emit_properties_changed(m->bus, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE, "Phase", NULL);
                (void) sd_bus_flush(m->bus);
        }
}
