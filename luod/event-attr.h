/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Which SR-IOV PF a device event concerns (events.h): a vfio group
 * (/devices/virtual/vfio/N) by the devices of IOMMU group N, any other
 * device by the innermost BDF of its devpath, a PF itself or a VF through
 * its physfn link.  What it learns (PFs, VFs' BDFs and IOMMU groups) it
 * keeps in its table.  It reads sysfs only through the EventSysfs it is
 * given, so that it runs without a Manager, a bus or sysfs
 * (tests/fuzz/fuzz-event-attr.c). */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pci-util.h"

typedef struct EventPf {
        char *identity;
        PciBdf bdf;
        uint64_t dropped;               /* its events dropped from the buffer (events.c) */
        uint64_t dropped_max_seqnum;    /* the newest of them */
} EventPf;

typedef struct DevMap {         /* a VF's BDF, or an IOMMU group, to its PF */
        PciBdf bdf;
        int group;              /* -1 for a BDF entry */
        size_t pf;
} DevMap;

/* What attribution reads from sysfs (events.c passes the real files). */
typedef struct EventSysfs {
        /* readlink() of /sys/bus/pci/devices/<bdf>/<attr> into buf (size
         * bytes; at most size - 1 of the target, NUL-terminated): its
         * length, or a negative errno. */
        ssize_t (*device_link)(void *userdata, const PciBdf *bdf, const char *attr, char *buf, size_t size);
        /* When bdf is an SR-IOV PF (it has sriov_totalvfs): 0 and its
         * identity (malloc'd) in *ret; else a negative errno. */
        int (*pf_identity)(void *userdata, const PciBdf *bdf, char **ret);
        /* Calls fn(name, arg) for each entry of
         * /sys/kernel/iommu_groups/<group>/devices in directory order until
         * fn returns nonzero.  Returns what fn returned last (0 after the
         * last entry), or a negative errno when the directory cannot be
         * read. */
        int (*group_devices)(void *userdata, long group, int (*fn)(const char *name, void *arg), void *arg);
} EventSysfs;

typedef struct EventAttr {
        EventPf *pfs;           /* index: what event_attr_pf() returns */
        size_t n_pfs;
        DevMap *map;
        size_t n_map;
        const EventSysfs *sysfs;
        void *userdata;         /* for sysfs */
} EventAttr;

/* The PF of identity at bdf (its BDF updated when it is known): its index
 * in a->pfs, or -ENOMEM. */
int event_attr_add_pf(EventAttr *a, const char *identity, const PciBdf *bdf);

/* Maps the BDF bdf (group ignored) or, when bdf is NULL, the IOMMU group
 * group to the PF of index pf, replacing what it was mapped to.  Returns 0
 * or -ENOMEM. */
int event_attr_add_map(EventAttr *a, const PciBdf *bdf, int group, size_t pf);

/* The PF an event concerns, from the device's devpath, subsystem and
 * sysname (udev_device_get_*(); any may be NULL): its index in a->pfs, or
 * -1 when it concerns no PF known or learnt now. */
int event_attr_pf(EventAttr *a, const char *devpath, const char *subsystem, const char *sysname);

/* Frees the table (not sysfs or userdata) and zeroes it. */
void event_attr_done(EventAttr *a);
