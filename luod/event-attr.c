/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event-attr.h"

int event_attr_add_pf(EventAttr *a, const char *identity, const PciBdf *bdf) {
        for (size_t i = 0; i < a->n_pfs; i++)
                if (strcmp(a->pfs[i].identity, identity) == 0) {
                        a->pfs[i].bdf = *bdf;
                        return (int) i;
                }
        EventPf *n = reallocarray(a->pfs, a->n_pfs + 1, sizeof(EventPf));
        if (!n)
                return -ENOMEM;
        a->pfs = n;
        a->pfs[a->n_pfs] = (EventPf) { .identity = strdup(identity), .bdf = *bdf };
        if (!a->pfs[a->n_pfs].identity)
                return -ENOMEM;
        return (int) a->n_pfs++;
}

int event_attr_add_map(EventAttr *a, const PciBdf *bdf, int group, size_t pf) {
        for (size_t i = 0; i < a->n_map; i++)
                if ((bdf && a->map[i].group < 0 && pci_bdf_compare(&a->map[i].bdf, bdf) == 0) ||
                    (!bdf && a->map[i].group == group)) {
                        a->map[i].pf = pf;
                        return 0;
                }
        DevMap *n = reallocarray(a->map, a->n_map + 1, sizeof(DevMap));
        if (!n)
                return -ENOMEM;
        a->map = n;
        a->map[a->n_map++] = (DevMap) { .bdf = bdf ? *bdf : (PciBdf) {}, .group = bdf ? -1 : group, .pf = pf };
        return 0;
}

void event_attr_done(EventAttr *a) {
        for (size_t i = 0; i < a->n_pfs; i++)
                free(a->pfs[i].identity);
        free(a->pfs);
        free(a->map);
        a->pfs = NULL;
        a->map = NULL;
        a->n_pfs = a->n_map = 0;
}

static int iommu_group_of(EventAttr *a, const PciBdf *bdf) {
        char link[PATH_MAX];

        if (a->sysfs->device_link(a->userdata, bdf, "iommu_group", link, sizeof(link)) < 0)
                return -1;
        const char *s = strrchr(link, '/');
        return s ? atoi(s + 1) : -1;
}

/* A PF not seen yet (hot-added, or the scan at attach failed): when bdf
 * is an SR-IOV PF (it has sriov_totalvfs), its identity now.  Returns its
 * index or -1. */
static int learn_pf(EventAttr *a, const PciBdf *bdf) {
        char *identity = NULL;
        int k;

        if (a->sysfs->pf_identity(a->userdata, bdf, &identity) < 0)
                return -1;
        k = event_attr_add_pf(a, identity, bdf);
        free(identity);
        return k;
}

/* The PF a PCI device (PF or VF) belongs to, by BDF; -1 if none known.
 * An unknown VF is learnt through its physfn link. */
static int pf_of_bdf(EventAttr *a, const PciBdf *bdf) {
        char link[PATH_MAX];
        PciBdf pf;

        for (size_t i = 0; i < a->n_pfs; i++)
                if (pci_bdf_compare(&a->pfs[i].bdf, bdf) == 0)
                        return (int) i;
        for (size_t i = 0; i < a->n_map; i++)
                if (a->map[i].group < 0 && pci_bdf_compare(&a->map[i].bdf, bdf) == 0)
                        return (int) a->map[i].pf;
        if (a->sysfs->device_link(a->userdata, bdf, "physfn", link, sizeof(link)) < 0)
                return learn_pf(a, bdf);
        const char *s = strrchr(link, '/');
        if (!s || pci_bdf_parse(s + 1, &pf) < 0)
                return -1;
        int k = -1;
        for (size_t i = 0; i < a->n_pfs && k < 0; i++)
                if (pci_bdf_compare(&a->pfs[i].bdf, &pf) == 0)
                        k = (int) i;
        if (k < 0)
                k = learn_pf(a, &pf);
        if (k >= 0) {
                int g = iommu_group_of(a, bdf);

                (void) event_attr_add_map(a, bdf, -1, (size_t) k);
                if (g >= 0)
                        (void) event_attr_add_map(a, NULL, g, (size_t) k);
        }
        return k;
}

typedef struct GroupWalk {
        EventAttr *a;
        int k;
} GroupWalk;

static int group_device(const char *name, void *arg) {
        GroupWalk *w = arg;
        PciBdf bdf;

        if (pci_bdf_parse(name, &bdf) < 0)
                return 0;
        w->k = pf_of_bdf(w->a, &bdf);
        return w->k >= 0;
}

int event_attr_pf(EventAttr *a, const char *devpath, const char *subsystem, const char *sysname) {
        char buf[PATH_MAX];
        PciBdf bdf;

        if (!devpath)
                return -1;
        /* A vfio group (/devices/virtual/vfio/N): by its IOMMU group. */
        if (subsystem && strcmp(subsystem, "vfio") == 0 && strncmp(devpath, "/devices/virtual/", 17) == 0) {
                char *end;
                long g = sysname ? strtol(sysname, &end, 10) : -1;

                if (!sysname || *end || g < 0)
                        return -1;
                for (size_t i = 0; i < a->n_map; i++)
                        if (a->map[i].group == g)
                                return (int) a->map[i].pf;
                /* A group not seen yet: its devices, now. */
                GroupWalk w = { .a = a, .k = -1 };
                if (a->sysfs->group_devices(a->userdata, g, group_device, &w) > 0) {
                        (void) event_attr_add_map(a, NULL, (int) g, (size_t) w.k);
                        return w.k;
                }
                return -1;
        }
        /* Otherwise the innermost BDF of its devpath. */
        snprintf(buf, sizeof(buf), "%s", devpath);
        for (char *s; (s = strrchr(buf, '/')); *s = 0)
                if (pci_bdf_parse(s + 1, &bdf) >= 0)
                        return pf_of_bdf(a, &bdf);
        return -1;
}
