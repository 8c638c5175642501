/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "types.h"

/* Drops inhibitors whose holder closed its fd.  Then, when a block
 * inhibitor is held, returns -EBUSY with *ret_why = "consumer: why". */
int inhibitors_check_block(Manager *m, char **ret_why);

/* D-Bus Inhibit(mode, why) -> fd. */
int method_inhibit(sd_bus_message *msg, void *userdata, sd_bus_error *error);

/* Closes and frees every inhibitor. */
void inhibitors_done(Manager *m);
