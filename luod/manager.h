/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "types.h"

/* The Manager's own state: State "idle", no update, no fds.  Returns 0 or
 * -ENOMEM (logged). */
int manager_init(Manager *m);

/* Frees everything the Manager holds (after update_done()). */
void manager_done(Manager *m);
