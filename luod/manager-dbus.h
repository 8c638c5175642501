/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "types.h"

/* Adds org.luod1.Manager at /org/luod1 to m->bus. */
int manager_add_bus_object(Manager *m);
