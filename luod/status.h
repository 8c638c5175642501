/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "types.h"

/* Replaces *p by a copy of v ("" for NULL).  Returns 0 or -ENOMEM. */
int status_set_string(char **p, const char *v);

/* Sets State (and LastError when error is not NULL) and emits their change
 * (with UpdateId's). */
void status_set_state(Manager *m, const char *state, const char *error);

/* Sets Phase, the step Update is in, and emits its change at once. */
void status_set_phase(Manager *m, const char *phase);
