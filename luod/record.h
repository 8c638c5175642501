/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <json-c/json.h>

#include "state.h"

/* A fresh update_id, this kernel's release and boot id, and the TSC rate
 * (a 20 ms calibration).  Returns 0 or a negative errno (logged). */
int record_fill_header(LuodState *s);

/* Leaves out of the record the PFs with no driver and no VFs. */
void record_drop_unused(LuodState *s);

/* The lockdown mode from securityfs, "unknown" when unreadable; buf holds it. */
const char *record_lockdown_mode(char *buf, size_t size);

/* The plan Update answers with (and a dry run shows); NULL on ENOMEM. */
json_object *record_plan(const LuodState *s, const char *kernel, const char *initrd,
                         const char *cmdline, const char *backend, const char *lockdown);

/* luod_state_serialize(), logging a failure with the update id. */
int record_serialize(const LuodState *s, char **ret, size_t *ret_size);
