/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Device-event attribution (luod/event-attr.c): which PF an event belongs
 * to.  Each input describes a machine and a run of events, one a line:
 *
 *     pf BDF IDENTITY          a PF luod knows (its scan at attach)
 *     vf BDF PF# [GROUP]       a VF it knows, of the PF-th pf line, with its IOMMU group
 *     physfn BDF TARGET        sysfs: /sys/bus/pci/devices/BDF/physfn -> TARGET
 *     iommu BDF TARGET         sysfs: /sys/bus/pci/devices/BDF/iommu_group -> TARGET
 *     sriov BDF IDENTITY       sysfs: BDF is an SR-IOV PF (sriov_totalvfs) with that identity
 *     group N NAME...          sysfs: the entries of /sys/kernel/iommu_groups/N/devices
 *     event SUBSYSTEM DEVPATH  an event (sysname: the last part of DEVPATH, '!' read as '/')
 *
 * Other lines are ignored.  Each event is attributed twice: the answer
 * is -1 or a PF of the table, the same both times (what was learnt agrees
 * with sysfs, which does not change here), and every entry the table maps
 * names one of its PFs. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "event-attr.h"
#include "fuzz.h"

#define WORDS_MAX 16

typedef struct Line {
        char *word[WORDS_MAX];
        size_t n;
} Line;

typedef struct World {
        Line *lines;
        size_t n;
} World;

static bool line_bdf(const Line *l, const char *kind, const PciBdf *bdf) {
        PciBdf b;

        return l->n >= 3 && strcmp(l->word[0], kind) == 0 && pci_bdf_parse(l->word[1], &b) == 0 &&
               pci_bdf_compare(&b, bdf) == 0;
}

static ssize_t world_device_link(void *userdata, const PciBdf *bdf, const char *attr, char *buf, size_t size) {
        const World *w = userdata;
        const char *kind = strcmp(attr, "physfn") == 0 ? "physfn" : strcmp(attr, "iommu_group") == 0 ? "iommu" : NULL;

        FUZZ_ASSERT(kind, "unexpected device link %s", attr);
        FUZZ_ASSERT(size > 0, "no room for a link");
        for (size_t i = 0; i < w->n; i++)
                if (line_bdf(&w->lines[i], kind, bdf)) {
                        size_t n = strnlen(w->lines[i].word[2], size - 1);

                        memcpy(buf, w->lines[i].word[2], n);
                        buf[n] = '\0';
                        return (ssize_t) n;
                }
        return -ENOENT;
}

static int world_pf_identity(void *userdata, const PciBdf *bdf, char **ret) {
        const World *w = userdata;

        for (size_t i = 0; i < w->n; i++)
                if (line_bdf(&w->lines[i], "sriov", bdf)) {
                        *ret = strdup(w->lines[i].word[2]);
                        return *ret ? 0 : -ENOMEM;
                }
        return -ENOENT;
}

static int world_group_devices(void *userdata, long group, int (*fn)(const char *name, void *arg), void *arg) {
        const World *w = userdata;
        char g[32];

        snprintf(g, sizeof(g), "%ld", group);
        for (size_t i = 0; i < w->n; i++) {
                const Line *l = &w->lines[i];
                int r = 0;

                if (l->n < 2 || strcmp(l->word[0], "group") != 0 || strcmp(l->word[1], g) != 0)
                        continue;
                for (size_t j = 2; r == 0 && j < l->n; j++)
                        r = fn(l->word[j], arg);
                return r;
        }
        return -ENOENT;
}

static const EventSysfs world_sysfs = {
        .device_link = world_device_link,
        .pf_identity = world_pf_identity,
        .group_devices = world_group_devices,
};

static void check_table(const EventAttr *a) {
        for (size_t i = 0; i < a->n_map; i++)
                FUZZ_ASSERT(a->map[i].pf < a->n_pfs, "map entry %zu names PF %zu of %zu", i, a->map[i].pf, a->n_pfs);
        for (size_t i = 0; i < a->n_pfs; i++)
                FUZZ_ASSERT(a->pfs[i].identity, "PF %zu without identity", i);
}

static void attribute(EventAttr *a, const char *subsystem, const char *devpath) {
        const char *slash = strrchr(devpath, '/');
        char *sysname = strdup(slash ? slash + 1 : devpath);
        size_t before = a->n_pfs;
        int k, k2;

        if (!sysname)
                abort();
        for (char *p = sysname; (p = strchr(p, '!')); )
                *p = '/';
        k = event_attr_pf(a, devpath, subsystem, sysname);
        FUZZ_ASSERT(k == -1 || (k >= 0 && (size_t) k < a->n_pfs), "PF %d of %zu for %s %s", k, a->n_pfs,
                    subsystem, devpath);
        FUZZ_ASSERT(a->n_pfs >= before, "PFs forgotten");
        check_table(a);
        k2 = event_attr_pf(a, devpath, subsystem, sysname);
        FUZZ_ASSERT(k2 == k, "%s %s: PF %d, then %d", subsystem, devpath, k, k2);
        free(sysname);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = fuzz_strndup(data, size), *save = NULL;
        World w = {};
        EventAttr a = { .sysfs = &world_sysfs, .userdata = &w };

        /* Words of each line. */
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                Line l = {};
                char *ws = NULL;

                for (char *t = strtok_r(line, " \t", &ws); t && l.n < WORDS_MAX; t = strtok_r(NULL, " \t", &ws))
                        l.word[l.n++] = t;
                if (l.n == 0)
                        continue;
                Line *n = reallocarray(w.lines, w.n + 1, sizeof(Line));
                if (!n)
                        abort();
                w.lines = n;
                w.lines[w.n++] = l;
        }

        /* What luod knew at attach, then the events in order. */
        for (size_t i = 0; i < w.n; i++) {
                const Line *l = &w.lines[i];
                PciBdf bdf;

                if (strcmp(l->word[0], "pf") == 0 && l->n >= 3 && pci_bdf_parse(l->word[1], &bdf) == 0)
                        FUZZ_ASSERT(event_attr_add_pf(&a, l->word[2], &bdf) >= 0, "add_pf");
        }
        for (size_t i = 0; i < w.n; i++) {
                const Line *l = &w.lines[i];
                unsigned long pf;
                PciBdf bdf;
                char *end;

                if (strcmp(l->word[0], "vf") != 0 || l->n < 3 || pci_bdf_parse(l->word[1], &bdf) < 0)
                        continue;
                pf = strtoul(l->word[2], &end, 10);
                if (*end || pf >= a.n_pfs)
                        continue;
                FUZZ_ASSERT(event_attr_add_map(&a, &bdf, -1, pf) == 0, "add_map");
                long g = l->n >= 4 ? strtol(l->word[3], &end, 10) : -1;
                if (l->n >= 4 && !*end && g >= 0 && g <= 0x7fffffff)
                        FUZZ_ASSERT(event_attr_add_map(&a, NULL, (int) g, pf) == 0, "add_map");
        }
        check_table(&a);
        for (size_t i = 0; i < w.n; i++) {
                const Line *l = &w.lines[i];

                if (strcmp(l->word[0], "event") == 0 && l->n >= 3)
                        attribute(&a, l->word[1], l->word[2]);
        }

        event_attr_done(&a);
        free(w.lines);
        free(text);
        return 0;
}
