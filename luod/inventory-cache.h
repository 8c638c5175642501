/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* GetInventory's answer, kept between calls: a scan reads sysfs and
 * rtnetlink for every PF and VF, and luod's loop is single-threaded, so
 * callers must not be able to make it scan at will.  The kept answer is
 * dropped on every device event luod receives (pci, net, vfio: VFs
 * enabled, drivers bound, PFs added), and is at most
 * INVENTORY_CACHE_MAX_AGE_USEC old, for what rtnetlink changes without a
 * uevent (a VF's MAC or VLAN). */

#include <stdint.h>

#define INVENTORY_CACHE_MAX_AGE_USEC (UINT64_C(2) * 1000 * 1000)

typedef struct Manager Manager;

typedef struct InventoryCache {
        char *text;             /* the JSON body, or NULL */
        uint64_t taken_usec;    /* CLOCK_MONOTONIC of the scan */
} InventoryCache;

/* The inventory text (owned by the cache, valid until the next call),
 * scanning only when nothing fresh is kept.  Returns 0 or a negative
 * errno of the scan. */
int inventory_cache_get(Manager *m, const char **ret);

/* Drops the kept answer: the next GetInventory scans. */
void inventory_cache_invalidate(Manager *m);

void inventory_cache_done(Manager *m);
