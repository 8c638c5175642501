/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pure parts of the SR-IOV layer: the PCIe extended capability walk that
 * finds the Device Serial Number in a config space, and sriov_pf_compare(). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sriov.h"
#include "tap.h"

#define CFG_SIZE 4096

/* An extended capability header at pos: id, version 1, next. */
static void put_cap(uint8_t *cfg, size_t pos, uint16_t id, uint16_t next) {
        uint32_t h = (uint32_t) id | UINT32_C(1) << 16 | (uint32_t) next << 20;

        for (int i = 0; i < 4; i++)
                cfg[pos + (size_t) i] = (uint8_t) (h >> (8 * i));
}

static void put_le32(uint8_t *cfg, size_t pos, uint32_t v) {
        for (int i = 0; i < 4; i++)
                cfg[pos + (size_t) i] = (uint8_t) (v >> (8 * i));
}

static void test_dsn_found(void) {
        static uint8_t cfg[CFG_SIZE];
        char buf[SRIOV_DSN_STRING_MAX];
        uint64_t dsn = 0;

        /* AER at 0x100 -> SR-IOV at 0x148 -> DSN at 0x160 (like QEMU's igb). */
        memset(cfg, 0, sizeof(cfg));
        put_cap(cfg, 0x100, 0x0001, 0x148);
        put_cap(cfg, 0x148, 0x0010, 0x160);
        put_cap(cfg, 0x160, 0x0003, 0);
        put_le32(cfg, 0x164, 0x44332211);       /* low dword */
        put_le32(cfg, 0x168, 0x88776655);       /* high dword */
        CHECK(sriov_config_find_dsn(cfg, sizeof(cfg), &dsn) == 0);
        CHECK(dsn == UINT64_C(0x8877665544332211));
        CHECK(strcmp(sriov_dsn_format(dsn, buf), "dsn:88-77-66-55-44-33-22-11") == 0);

        /* DSN first in the list. */
        memset(cfg, 0, sizeof(cfg));
        put_cap(cfg, 0x100, 0x0003, 0);
        put_le32(cfg, 0x104, 0xdeadbeef);
        CHECK(sriov_config_find_dsn(cfg, sizeof(cfg), &dsn) == 0);
        CHECK(dsn == UINT64_C(0xdeadbeef));
        CHECK(strcmp(sriov_dsn_format(dsn, buf), "dsn:00-00-00-00-de-ad-be-ef") == 0);
}

static void test_dsn_absent(void) {
        static uint8_t cfg[CFG_SIZE];
        uint64_t dsn = 42;

        /* No extended capabilities: header 0, or all ones. */
        memset(cfg, 0, sizeof(cfg));
        CHECK(sriov_config_find_dsn(cfg, sizeof(cfg), &dsn) == -ENOENT);
        memset(cfg + 0x100, 0xff, 4);
        CHECK(sriov_config_find_dsn(cfg, sizeof(cfg), &dsn) == -ENOENT);

        /* Only the conventional 256 bytes (not PCIe, or not root). */
        put_cap(cfg, 0x100, 0x0003, 0);
        CHECK(sriov_config_find_dsn(cfg, 256, &dsn) == -ENOENT);
        CHECK(sriov_config_find_dsn(cfg, 64, &dsn) == -ENOENT);

        /* A list without DSN, as QEMU's nvme has. */
        memset(cfg, 0, sizeof(cfg));
        put_cap(cfg, 0x100, 0x0001, 0x150);
        put_cap(cfg, 0x150, 0x0010, 0x200);
        put_cap(cfg, 0x200, 0x000e, 0);
        CHECK(sriov_config_find_dsn(cfg, sizeof(cfg), &dsn) == -ENOENT);
        CHECK(dsn == 42);
}

static void test_dsn_corrupt(void) {
        static uint8_t cfg[CFG_SIZE];
        uint64_t dsn = 42;

        /* A cycle 0x100 -> 0x140 -> 0x100 ... ends. */
        memset(cfg, 0, sizeof(cfg));
        put_cap(cfg, 0x100, 0x0001, 0x140);
        put_cap(cfg, 0x140, 0x0002, 0x100);
        CHECK(sriov_config_find_dsn(cfg, sizeof(cfg), &dsn) == -ELOOP);

        /* A capability pointing at itself. */
        put_cap(cfg, 0x100, 0x0001, 0x100);
        CHECK(sriov_config_find_dsn(cfg, sizeof(cfg), &dsn) == -ELOOP);

        /* A next pointer into the conventional space. */
        put_cap(cfg, 0x100, 0x0001, 0x40);
        CHECK(sriov_config_find_dsn(cfg, sizeof(cfg), &dsn) == -EBADMSG);

        /* A next pointer beyond a short buffer. */
        put_cap(cfg, 0x100, 0x0001, 0x800);
        CHECK(sriov_config_find_dsn(cfg, 0x400, &dsn) == -EBADMSG);

        /* A DSN cut off by the end of the buffer. */
        memset(cfg, 0, sizeof(cfg));
        put_cap(cfg, 0x100, 0x0001, 0xffc);
        put_cap(cfg, 0xffc, 0x0003, 0);
        CHECK(sriov_config_find_dsn(cfg, sizeof(cfg), &dsn) == -EBADMSG);
        CHECK(dsn == 42);
}

static void make_vf(VfRecord *vf, uint32_t index, const char *driver, const char *override) {
        *vf = (VfRecord) {
                .index = index,
                .bdf = { .bus = 1, .device = 0x10, .function = (uint8_t) index },
                .driver = driver ? strdup(driver) : NULL,
                .driver_override = override ? strdup(override) : NULL,
                .iommu_group = 10 + (int) index,
                .settings = {
                        .valid = true,
                        .mac = { 0x02, 0x11, 0x22, 0x33, 0x44, (uint8_t) index },
                        .vlan = 7, .qos = 2, .vlan_proto = 0x8100,
                        .spoofchk = 0, .trust = 1, .rss_query_en = -1,
                },
        };
}

/* An igb-like PF with 3 VFs: vfio-pci, igbvf, unbound. */
static void make_pf(LuodState *s, uint8_t bus) {
        PfRecord *pf;

        s->pfs = calloc(1, sizeof(PfRecord));
        s->n_pfs = 1;
        pf = s->pfs;
        *pf = (PfRecord) {
                .bdf = { .bus = bus },
                .vendor = 0x8086, .device = 0x10c9,
                .identity = strdup("dsn:00-11-22-33-44-55-66-77"),
                .driver = strdup("igb"),
                .numvfs = 3, .totalvfs = 7,
                .drivers_autoprobe = false,
                .netdev = strdup("eth0"),
                .vfs = calloc(3, sizeof(VfRecord)),
                .n_vfs = 3,
        };
        make_vf(&pf->vfs[0], 0, "vfio-pci", "vfio-pci");
        make_vf(&pf->vfs[1], 1, "igbvf", NULL);
        make_vf(&pf->vfs[2], 2, NULL, NULL);
}

static bool contains(const char *s, const char *what) {
        return s && strstr(s, what);
}

static void test_compare(void) {
        _cleanup_luod_state_ LuodState want = {}, have = {};
        char *diff = (char *) "untouched";
        PfRecord *h;

        make_pf(&want, 1);
        make_pf(&have, 2);
        h = have.pfs;

        /* Equal: a different PF BDF, VF BDFs and IOMMU groups do not count. */
        h->vfs[1].bdf.bus = 2;
        h->vfs[1].iommu_group = 99;
        h->vfs[2].iommu_group = -1;
        CHECK(sriov_pf_compare(want.pfs, h, &diff) == 0);
        CHECK(!diff);
        CHECK(sriov_pf_compare(want.pfs, h, NULL) == 0);

        /* A tri-state want does not know is not compared. */
        want.pfs->vfs[1].settings.trust = -1;
        h->vfs[1].settings.trust = 0;
        CHECK(sriov_pf_compare(want.pfs, h, NULL) == 0);
        /* Settings not recorded are not compared. */
        want.pfs->vfs[2].settings.valid = false;
        h->vfs[2].settings.vlan = 100;
        CHECK(sriov_pf_compare(want.pfs, h, NULL) == 0);

        /* numvfs */
        h->numvfs = 2;
        CHECK(sriov_pf_compare(want.pfs, h, &diff) == -EUCLEAN);
        CHECK(contains(diff, "PF 0000:02:00.0: numvfs: want 3, have 2"));
        free(diff);
        h->numvfs = 3;

        /* A VF's driver */
        free(h->vfs[1].driver);
        h->vfs[1].driver = NULL;
        CHECK(sriov_pf_compare(want.pfs, h, &diff) == -EUCLEAN);
        CHECK(contains(diff, "PF 0000:02:00.0 VF 1: driver: want igbvf, have (none)"));
        free(diff);
        h->vfs[1].driver = strdup("igbvf");

        /* A VF's MAC */
        h->vfs[0].settings.mac[5] = 0xee;
        CHECK(sriov_pf_compare(want.pfs, h, &diff) == -EUCLEAN);
        CHECK(contains(diff, "PF 0000:02:00.0 VF 0: mac: want 02:11:22:33:44:00, have 02:11:22:33:44:ee"));
        CHECK(!contains(diff, "VF 1"));
        free(diff);
        h->vfs[0].settings.mac[5] = 0;

        /* Several differences at once: one line each. */
        h->drivers_autoprobe = true;
        free(h->vfs[0].driver_override);
        h->vfs[0].driver_override = NULL;
        h->vfs[1].settings.spoofchk = 1;
        h->vfs[1].settings.qos = 0;
        h->n_vfs = 2;
        CHECK(sriov_pf_compare(want.pfs, h, &diff) == -EUCLEAN);
        CHECK(contains(diff, "PF 0000:02:00.0: drivers_autoprobe: want 0, have 1\n"));
        CHECK(contains(diff, "VF 0: driver_override: want vfio-pci, have (none)\n"));
        CHECK(contains(diff, "VF 1: spoofchk: want off, have on\n"));
        CHECK(contains(diff, "VF 1: vlan: want 7 qos 2 proto 802.1Q, have 7 qos 0 proto 802.1Q\n"));
        CHECK(contains(diff, "VF 2: vf: want present, have missing\n"));
        free(diff);
        h->n_vfs = 3;

        /* Recorded settings the PF no longer reports. */
        h->drivers_autoprobe = false;
        h->vfs[0].driver_override = strdup("vfio-pci");
        h->vfs[1].settings = (VfSettings) {};
        CHECK(sriov_pf_compare(want.pfs, h, &diff) == -EUCLEAN);
        CHECK(contains(diff, "VF 1: settings: want recorded settings, have none reported"));
        free(diff);
        h->vfs[1].settings = want.pfs->vfs[1].settings;
        CHECK(sriov_pf_compare(want.pfs, h, NULL) == 0);

        /* No administrative MAC recorded (all zero): whatever MAC the VF's
         * driver picked is no difference. */
        memset(want.pfs->vfs[0].settings.mac, 0, 6);
        h->vfs[0].settings.mac[0] = 0xae;
        CHECK(sriov_pf_compare(want.pfs, h, NULL) == 0);

        /* The PF itself: its admin state, its netdev, its driver; not the
         * netdev's name (udev may rename it). */
        want.pfs->netdev_up = true;
        CHECK(sriov_pf_compare(want.pfs, h, &diff) == -EUCLEAN);
        CHECK(contains(diff, "PF 0000:02:00.0: netdev_up: want 1, have 0"));
        free(diff);
        h->netdev_up = true;
        free(h->netdev);
        h->netdev = strdup("enp2s0");
        CHECK(sriov_pf_compare(want.pfs, h, NULL) == 0);
        free(h->netdev);
        h->netdev = NULL;
        CHECK(sriov_pf_compare(want.pfs, h, &diff) == -EUCLEAN);
        CHECK(contains(diff, "PF 0000:02:00.0: netdev: want eth0, have (none)"));
        free(diff);
        h->netdev = strdup("eth0");
        free(h->driver);
        h->driver = NULL;
        CHECK(sriov_pf_compare(want.pfs, h, &diff) == -EUCLEAN);
        CHECK(contains(diff, "PF 0000:02:00.0: driver: want igb, have (none)"));
        free(diff);
}

int main(void) {
        test_dsn_found();
        test_dsn_absent();
        test_dsn_corrupt();
        test_compare();
        return tap_failures ? 1 : 0;
}
