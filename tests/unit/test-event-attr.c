/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* event_attr_pf() (luod/event-attr.c) on part of the VM test bed's machine
 * after the update scenario's restore: two nvme PFs and an igb PF, their
 * VFs' physfn and iommu_group links and IOMMU groups as its sysfs had them,
 * and devpaths of events its consumers got. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "event-attr.h"
#include "tap.h"

#define NVME0 "path:pci0000:00/0000:00:01.0/00.0/1b36:0010:1af4:1100"
#define NVME1 "path:pci0000:00/0000:00:02.0/00.0/1b36:0010:1af4:1100"
#define IGB "path:pci0000:00/0000:00:03.0/00.0/8086:10c9:1af4:1100"

static const struct { const char *bdf, *attr, *target; } links[] = {
        { "0000:01:00.1", "physfn", "../0000:01:00.0" },
        { "0000:01:00.1", "iommu_group", "../../../../kernel/iommu_groups/8" },
        { "0000:02:00.1", "physfn", "../0000:02:00.0" },
        { "0000:02:00.1", "iommu_group", "../../../../kernel/iommu_groups/31" },
        { "0000:02:00.2", "physfn", "../0000:02:00.0" },
        { "0000:02:00.2", "iommu_group", "../../../../kernel/iommu_groups/32" },
        { "0000:03:10.0", "physfn", "../0000:03:00.0" },
        { "0000:03:10.0", "iommu_group", "../../../../kernel/iommu_groups/24" },
        { "0000:00:01.0", "iommu_group", "../../../kernel/iommu_groups/1" },
};
static const struct { const char *bdf, *identity; } sriov_pfs[] = {
        { "0000:01:00.0", NVME0 }, { "0000:02:00.0", NVME1 }, { "0000:03:00.0", IGB },
};
static const struct { long group; const char *devices[3]; } groups[] = {
        { 0, { "0000:00:00.0" } }, { 1, { "0000:00:01.0" } }, { 8, { "0000:01:00.1" } },
        { 24, { "0000:03:10.0" } }, { 32, { "0000:02:00.2" } },
};
static unsigned lookups;

static ssize_t device_link(void *userdata, const PciBdf *bdf, const char *attr, char *buf, size_t size) {
        char b[PCI_BDF_STRING_MAX];

        lookups++;
        pci_bdf_format(bdf, b);
        for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
                if (strcmp(links[i].bdf, b) == 0 && strcmp(links[i].attr, attr) == 0) {
                        snprintf(buf, size, "%s", links[i].target);
                        return (ssize_t) strlen(buf);
                }
        return -ENOENT;
}

static int pf_identity(void *userdata, const PciBdf *bdf, char **ret) {
        char b[PCI_BDF_STRING_MAX];

        lookups++;
        pci_bdf_format(bdf, b);
        for (size_t i = 0; i < sizeof(sriov_pfs) / sizeof(sriov_pfs[0]); i++)
                if (strcmp(sriov_pfs[i].bdf, b) == 0)
                        return (*ret = strdup(sriov_pfs[i].identity)) ? 0 : -ENOMEM;
        return -ENOENT;
}

static int group_devices(void *userdata, long group, int (*fn)(const char *name, void *arg), void *arg) {
        lookups++;
        for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
                if (groups[i].group == group) {
                        int r = fn(".", arg);
                        for (size_t j = 0; r == 0 && j < 3 && groups[i].devices[j]; j++)
                                r = fn(groups[i].devices[j], arg);
                        return r;
                }
        return -ENOENT;
}

static const EventSysfs sysfs = {
        .device_link = device_link,
        .pf_identity = pf_identity,
        .group_devices = group_devices,
};

/* The identity of the PF the event is attributed to, or "-". */
static const char *pf_of(EventAttr *a, const char *subsystem, const char *devpath, const char *sysname) {
        int k = event_attr_pf(a, devpath, subsystem, sysname);

        return k < 0 ? "-" : (size_t) k < a->n_pfs ? a->pfs[k].identity : "out of range";
}

#define CHECK_PF(a, subsystem, devpath, sysname, want)                                          \
        do {                                                                                    \
                const char *_got = pf_of(a, subsystem, devpath, sysname) ?: "(none)";          \
                if (strcmp(_got, want) != 0)                                                    \
                        fprintf(stderr, "%s %s: %s, want %s\n", subsystem, devpath, _got, want);       \
                CHECK(strcmp(_got, want) == 0);                                                 \
        } while (0)

int main(void) {
        EventAttr a = { .sysfs = &sysfs };
        PciBdf b;

        /* Nothing known at attach (its scan failed): every PF learnt from
         * sysfs, each VF through its physfn link. */
        CHECK_PF(&a, "pci", "/devices/pci0000:00/0000:00:01.0/0000:01:00.1", "0000:01:00.1", NVME0);
        CHECK_PF(&a, "pci", "/devices/pci0000:00/0000:00:02.0/0000:02:00.2", "0000:02:00.2", NVME1);
        /* The innermost BDF: a VF's netdev belongs to the VF's PF. */
        CHECK_PF(&a, "net", "/devices/pci0000:00/0000:00:03.0/0000:03:10.0/net/eth1", "eth1", IGB);
        CHECK(a.n_pfs == 3);
        /* The PF itself. */
        CHECK_PF(&a, "pci", "/devices/pci0000:00/0000:00:02.0/0000:02:00.0", "0000:02:00.0", NVME1);
        /* A vfio group: by its IOMMU group, learnt with the VF (8, 32), or
         * from the group's devices (24 was learnt too; 0 and 1 are no PF's). */
        CHECK_PF(&a, "vfio", "/devices/virtual/vfio/8", "8", NVME0);
        CHECK_PF(&a, "vfio", "/devices/virtual/vfio/32", "32", NVME1);
        CHECK_PF(&a, "vfio", "/devices/virtual/vfio/24", "24", IGB);
        CHECK_PF(&a, "vfio", "/devices/virtual/vfio/0", "0", "-");
        CHECK_PF(&a, "vfio", "/devices/virtual/vfio/1", "1", "-");
        CHECK_PF(&a, "vfio", "/devices/virtual/vfio/99", "99", "-");
        CHECK_PF(&a, "vfio", "/devices/virtual/vfio/vfio", "vfio", "-");
        CHECK_PF(&a, "vfio", "/devices/virtual/vfio/-3", "-3", "-");
        /* Devices of no PF. */
        CHECK_PF(&a, "pci", "/devices/pci0000:00/0000:00:01.0", "0000:00:01.0", "-");
        CHECK_PF(&a, "net", "/devices/virtual/net/lo", "lo", "-");
        CHECK(event_attr_pf(&a, NULL, "pci", NULL) == -1);
        /* Learnt once: asking again reads no sysfs. */
        unsigned before = lookups;
        CHECK_PF(&a, "pci", "/devices/pci0000:00/0000:00:01.0/0000:01:00.1", "0000:01:00.1", NVME0);
        CHECK_PF(&a, "vfio", "/devices/virtual/vfio/24", "24", IGB);
        CHECK(lookups == before);
        event_attr_done(&a);
        CHECK(a.n_pfs == 0 && !a.pfs && a.n_map == 0 && !a.map);

        /* Known at attach (luod's scan): a VF of the table and its group
         * without any sysfs lookup; a PF that moved keeps its index. */
        a = (EventAttr) { .sysfs = &sysfs };
        CHECK(pci_bdf_parse("0000:02:00.0", &b) == 0 && event_attr_add_pf(&a, NVME1, &b) == 0);
        CHECK(pci_bdf_parse("0000:02:00.7", &b) == 0 && event_attr_add_map(&a, &b, -1, 0) == 0);
        CHECK(event_attr_add_map(&a, NULL, 37, 0) == 0);
        before = lookups;
        CHECK_PF(&a, "pci", "/devices/pci0000:00/0000:00:02.0/0000:02:00.7", "0000:02:00.7", NVME1);
        CHECK_PF(&a, "vfio", "/devices/virtual/vfio/37", "37", NVME1);
        CHECK(lookups == before);
        CHECK(pci_bdf_parse("0000:05:00.0", &b) == 0 && event_attr_add_pf(&a, NVME1, &b) == 0);
        CHECK(a.n_pfs == 1 && a.pfs[0].bdf.bus == 5);
        event_attr_done(&a);
        return tap_failures ? 1 : 0;
}
