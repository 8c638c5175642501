/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <systemd/sd-bus.h>

#include "types.h"

/* The steps of one org.luod1.Manager.Update call, in order.  The first
 * five are also the Phase property's values; the others show Phase "". */
typedef enum UpdateStep {
        UPDATE_STEP_PREFLIGHT,          /* checks that change nothing */
        UPDATE_STEP_SNAPSHOT,           /* the SR-IOV record is read */
        UPDATE_STEP_PREPARE,            /* PrepareForUpdate sent, delay inhibitors awaited */
        UPDATE_STEP_PERSIST,            /* the record goes to its backend */
        UPDATE_STEP_KEXEC_LOAD,         /* the next kernel is loaded */
        UPDATE_STEP_LOADED,             /* answered; kexec -e is deferred to the next loop turn */
        UPDATE_STEP_ENDED,              /* dry run answered, refused, failed or abandoned */
        _UPDATE_STEP_MAX,
        _UPDATE_STEP_INVALID = -EINVAL,
} UpdateStep;

const char *update_step_to_string(UpdateStep s);
UpdateStep update_step_from_string(const char *s);

/* Whether the step machine allows going from `from` to `to`. */
bool update_step_transition_ok(UpdateStep from, UpdateStep to);

/* D-Bus Update: preflight inside the call; for a real update the rest runs
 * on the event loop (the inhibitor wait included), and the call is
 * answered once the kernel is loaded and the state persisted, or with the
 * error that ended it. */
int method_update(sd_bus_message *msg, void *userdata, sd_bus_error *error);

/* D-Bus Abandon: ends the update in progress or loaded, before kexec -e. */
int method_abandon(sd_bus_message *msg, void *userdata, sd_bus_error *error);

/* Abandons whatever update is in progress or loaded and not yet handed to
 * systemctl kexec: the kernel is unloaded, the persisted state removed (LUO
 * session closed, state file and initrd copy deleted), consumers that got
 * PrepareForUpdate receive UpdateAbandoned, a pending Update call gets
 * org.luod1.Error.Abandoned.  Returns 1 when something was abandoned, 0 if
 * there was nothing to abandon. */
int update_abandon(Manager *m, const char *why);

/* Drops the loaded update's persisted state and fds (no unload, no signal). */
void update_pending_drop(Manager *m);

/* Frees an update in progress on exit (after update_abandon). */
void update_done(Manager *m);
