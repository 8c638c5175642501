/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tb-inventory: the SR-IOV layer (luod/sriov.h) from the test bed's shell.
 *   tb-inventory                  the scanned state as JSON: the body of a
 *                                 luod-state (proto/state-format.md)
 *   tb-inventory flat             the same, one key=value line per field:
 *                                   pfs=<bdf> ...       pf.count=N
 *                                   pf.<bdf>.<field>=...
 *                                   pf.<bdf>.vf.<index>.<field>=...
 *                                 an empty value means none (JSON null);
 *                                 VF settings fields only with settings=1
 *   tb-inventory apply PF N       sriov_pf_set_numvfs() + sriov_pf_wait_vfs()
 *   tb-inventory set-vf PF IDX KEY=VALUE...
 *                                 changes the VF's scanned settings and
 *                                 applies them (sriov_vf_apply_settings());
 *                                 keys: mac vlan qos proto (802.1Q|802.1ad)
 *                                 spoofchk trust rss_query_en (0|1)
 *                                 link_state (auto|enable|disable)
 *                                 min_tx_rate max_tx_rate (Mbit/s).
 *                                 PF may also be a netdev name (a netdevsim
 *                                 port: no PCI device to scan); then the
 *                                 settings start from the defaults: zero
 *                                 MAC, no VLAN, 802.1Q, tri-states unknown,
 *                                 link state auto, no rate limits
 *   tb-inventory bind VF DRIVER   sriov_vf_bind(VF, DRIVER, DRIVER)
 * Exit status: 0 ok, 1 failure (the library's error on stderr, then a last
 * line "tb-inventory: COMMAND: <error> (<ERRNO NAME>)"), 2 usage. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "log.h"
#include "macro.h"
#include "sriov.h"
#include "state.h"

#define WAIT_VFS_USEC (UINT64_C(120) * 1000000)

static int usage(void) {
        fprintf(stderr, "usage: tb-inventory [flat]\n"
                        "       tb-inventory apply PFBDF N\n"
                        "       tb-inventory set-vf PFBDF|NETDEV IDX KEY=VALUE...\n"
                        "       tb-inventory bind VFBDF DRIVER\n");
        return 2;
}

static int parse_u32_arg(const char *s, uint32_t max, uint32_t *ret) {
        unsigned long v;
        char *end;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno != 0 || end == s || *end != '\0' || *s == '-' || v > max)
                return -EINVAL;
        *ret = (uint32_t) v;
        return 0;
}

static int parse_bdf_arg(const char *s, PciBdf *ret) {
        if (pci_bdf_parse(s, ret) < 0)
                return log_error_errno(-EINVAL, "'%s' is not a PCI address (DDDD:BB:DD.F): %m", s);
        return 0;
}

static int read_line(const char *path, char *buf, size_t size) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");

        if (!f)
                return log_error_errno(-errno, "Failed to open %s: %m", path);
        if (!fgets(buf, (int) size, f))
                return log_error_errno(-EIO, "Failed to read %s: %m", path);
        buf[strcspn(buf, "\n")] = '\0';
        return 0;
}

static int cmd_json(void) {
        _cleanup_luod_state_ LuodState s = {};
        _cleanup_free_ char *buf = NULL;
        struct utsname u;
        const char *body;
        size_t size;
        int r;

        /* The state format wants these; this is a snapshot of now. */
        r = read_line("/proc/sys/kernel/random/uuid", s.update_id, sizeof(s.update_id));
        if (r < 0)
                return r;
        r = read_line("/proc/sys/kernel/random/boot_id", s.old_boot_id, sizeof(s.old_boot_id));
        if (r < 0)
                return r;
        if (uname(&u) < 0)
                return log_error_errno(-errno, "uname() failed: %m");
        s.old_kernel_release = strdup(u.release);
        if (!s.old_kernel_release)
                return -ENOMEM;
        r = sriov_scan(&s);
        if (r < 0)
                return r;
        r = luod_state_serialize(&s, &buf, &size);
        if (r < 0)
                return r;
        body = memchr(buf, '\n', size);
        if (!body)
                return -EBADMSG;
        body++;
        if (fwrite(body, 1, size - (size_t) (body - buf), stdout) != size - (size_t) (body - buf))
                return -EIO;
        return 0;
}

static const char *str_or_empty(const char *s) {
        return s ?: "";
}

static const char *tristate(int v) {
        return v < 0 ? "" : v ? "1" : "0";
}

static void print_vf(const char *pf, const VfRecord *vf) {
        static const char *const link_states[] = { "auto", "enable", "disable" };
        const VfSettings *s = &vf->settings;
        char bdf[PCI_BDF_STRING_MAX], p[64];

        snprintf(p, sizeof(p), "pf.%s.vf.%" PRIu32, pf, vf->index);
        printf("%s.bdf=%s\n", p, pci_bdf_format(&vf->bdf, bdf));
        printf("%s.driver=%s\n", p, str_or_empty(vf->driver));
        printf("%s.driver_override=%s\n", p, str_or_empty(vf->driver_override));
        if (vf->iommu_group >= 0)
                printf("%s.iommu_group=%d\n", p, vf->iommu_group);
        else
                printf("%s.iommu_group=\n", p);
        printf("%s.settings=%d\n", p, s->valid);
        if (!s->valid)
                return;
        printf("%s.mac=%02x:%02x:%02x:%02x:%02x:%02x\n", p,
               s->mac[0], s->mac[1], s->mac[2], s->mac[3], s->mac[4], s->mac[5]);
        printf("%s.vlan=%u\n", p, s->vlan);
        printf("%s.qos=%u\n", p, s->qos);
        printf("%s.vlan_proto=%s\n", p, s->vlan_proto == 0x88a8 ? "802.1ad" : "802.1Q");
        printf("%s.spoofchk=%s\n", p, tristate(s->spoofchk));
        printf("%s.trust=%s\n", p, tristate(s->trust));
        printf("%s.link_state=%s\n", p, s->link_state < ELEMENTSOF(link_states) ? link_states[s->link_state] : "");
        printf("%s.min_tx_rate=%" PRIu32 "\n", p, s->min_tx_rate);
        printf("%s.max_tx_rate=%" PRIu32 "\n", p, s->max_tx_rate);
        printf("%s.rss_query_en=%s\n", p, tristate(s->rss_query_en));
}

static int cmd_flat(void) {
        _cleanup_luod_state_ LuodState s = {};
        char bdf[PCI_BDF_STRING_MAX];
        int r;

        r = sriov_scan(&s);
        if (r < 0)
                return r;

        printf("pfs=");
        for (size_t i = 0; i < s.n_pfs; i++)
                printf("%s%s", i > 0 ? " " : "", pci_bdf_format(&s.pfs[i].bdf, bdf));
        printf("\npf.count=%zu\n", s.n_pfs);
        for (size_t i = 0; i < s.n_pfs; i++) {
                const PfRecord *pf = &s.pfs[i];

                pci_bdf_format(&pf->bdf, bdf);
                printf("pf.%s.vendor=0x%04x\n", bdf, pf->vendor);
                printf("pf.%s.device=0x%04x\n", bdf, pf->device);
                printf("pf.%s.subsystem_vendor=0x%04x\n", bdf, pf->subsystem_vendor);
                printf("pf.%s.subsystem_device=0x%04x\n", bdf, pf->subsystem_device);
                printf("pf.%s.identity=%s\n", bdf, pf->identity);
                printf("pf.%s.driver=%s\n", bdf, str_or_empty(pf->driver));
                printf("pf.%s.numvfs=%" PRIu32 "\n", bdf, pf->numvfs);
                printf("pf.%s.totalvfs=%" PRIu32 "\n", bdf, pf->totalvfs);
                printf("pf.%s.drivers_autoprobe=%d\n", bdf, pf->drivers_autoprobe);
                printf("pf.%s.netdev=%s\n", bdf, str_or_empty(pf->netdev));
                printf("pf.%s.netdev_up=%d\n", bdf, pf->netdev_up);
                printf("pf.%s.vf.count=%zu\n", bdf, pf->n_vfs);
                for (size_t j = 0; j < pf->n_vfs; j++)
                        print_vf(bdf, &pf->vfs[j]);
        }
        return fflush(stdout) == 0 ? 0 : -EIO;
}

static int cmd_apply(char **args) {
        PciBdf pf;
        uint32_t n;
        int r;

        r = parse_bdf_arg(args[0], &pf);
        if (r < 0)
                return r;
        if (parse_u32_arg(args[1], UINT32_MAX, &n) < 0)
                return log_error_errno(-EINVAL, "'%s' is not a VF count: %m", args[1]);
        r = sriov_pf_set_numvfs(&pf, n);
        if (r < 0)
                return r;
        return sriov_pf_wait_vfs(&pf, n, WAIT_VFS_USEC);
}

static int parse_bool_arg(const char *s, int *ret) {
        if (strcmp(s, "0") == 0 || strcmp(s, "1") == 0) {
                *ret = s[0] == '1';
                return 0;
        }
        return -EINVAL;
}

/* Applies one KEY=VALUE to s. */
static int set_setting(VfSettings *s, const char *arg) {
        static const char *const link_states[] = { "auto", "enable", "disable" };
        const char *v = strchr(arg, '=');
        size_t klen;
        uint32_t u;

        if (!v)
                return -EINVAL;
        klen = (size_t) (v - arg);
        v++;
#define KEY(k) (klen == strlen(k) && strncmp(arg, k, klen) == 0)
        if (KEY("mac")) {
                unsigned m[6];
                int n = -1;

                if (sscanf(v, "%2x:%2x:%2x:%2x:%2x:%2x%n", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5], &n) != 6 ||
                    n < 0 || v[n] != '\0')
                        return -EINVAL;
                for (size_t i = 0; i < 6; i++)
                        s->mac[i] = (uint8_t) m[i];
                return 0;
        }
        if (KEY("vlan") || KEY("qos") || KEY("min_tx_rate") || KEY("max_tx_rate")) {
                if (parse_u32_arg(v, KEY("vlan") ? VF_VLAN_MAX : KEY("qos") ? VF_QOS_MAX : UINT32_MAX, &u) < 0)
                        return -EINVAL;
                if (KEY("vlan"))
                        s->vlan = (uint16_t) u;
                else if (KEY("qos"))
                        s->qos = (uint8_t) u;
                else if (KEY("min_tx_rate"))
                        s->min_tx_rate = u;
                else
                        s->max_tx_rate = u;
                return 0;
        }
        if (KEY("proto")) {
                if (strcmp(v, "802.1Q") == 0)
                        s->vlan_proto = 0x8100;
                else if (strcmp(v, "802.1ad") == 0)
                        s->vlan_proto = 0x88a8;
                else
                        return -EINVAL;
                return 0;
        }
        if (KEY("spoofchk"))
                return parse_bool_arg(v, &s->spoofchk);
        if (KEY("trust"))
                return parse_bool_arg(v, &s->trust);
        if (KEY("rss_query_en"))
                return parse_bool_arg(v, &s->rss_query_en);
        if (KEY("link_state")) {
                for (uint32_t i = 0; i < ELEMENTSOF(link_states); i++)
                        if (strcmp(v, link_states[i]) == 0) {
                                s->link_state = i;
                                return 0;
                        }
                return -EINVAL;
        }
#undef KEY
        return -EINVAL;
}

/* The VF record for set-vf on a PCI PF: scanned, in *state. */
static int scanned_vf(LuodState *state, const PciBdf *pf_bdf, uint32_t index, const char **ret_netdev,
                      VfRecord *ret) {
        const PfRecord *pf = NULL;
        char bdf[PCI_BDF_STRING_MAX];
        int r;

        r = sriov_scan(state);
        if (r < 0)
                return r;
        for (size_t i = 0; i < state->n_pfs; i++)
                if (pci_bdf_compare(&state->pfs[i].bdf, pf_bdf) == 0)
                        pf = &state->pfs[i];
        pci_bdf_format(pf_bdf, bdf);
        if (!pf)
                return log_error_errno(-ENODEV, "PF %s: no such SR-IOV PF: %m", bdf);
        if (!pf->netdev)
                return log_error_errno(-ENODEV, "PF %s: has no netdev to set VF settings through: %m", bdf);
        if (index >= pf->n_vfs)
                return log_error_errno(-ENOENT, "PF %s: has no VF %" PRIu32 " (%zu VFs): %m", bdf, index, pf->n_vfs);
        if (!pf->vfs[index].settings.valid)
                return log_error_errno(-ENOENT, "PF %s VF %" PRIu32 ": %s reports no settings: %m",
                                       bdf, index, pf->netdev);
        *ret_netdev = pf->netdev;
        *ret = pf->vfs[index];
        return 0;
}

static int cmd_set_vf(char **args) {
        _cleanup_luod_state_ LuodState s = {};
        const char *netdev = args[0];
        VfRecord vf = {
                .settings = {
                        .valid = true,
                        .vlan_proto = 0x8100,
                        .spoofchk = -1,
                        .trust = -1,
                        .rss_query_en = -1,
                },
        };
        PciBdf pf_bdf;
        uint32_t index;
        int r;

        if (parse_u32_arg(args[1], UINT32_MAX, &index) < 0)
                return log_error_errno(-EINVAL, "'%s' is not a VF index: %m", args[1]);
        vf.index = index;
        if (pci_bdf_parse(args[0], &pf_bdf) == 0) {
                r = scanned_vf(&s, &pf_bdf, index, &netdev, &vf);
                if (r < 0)
                        return r;
        }
        for (char **a = args + 2; *a; a++)
                if (set_setting(&vf.settings, *a) < 0)
                        return log_error_errno(-EINVAL, "'%s' is not a VF setting (KEY=VALUE): %m", *a);
        return sriov_vf_apply_settings(netdev, 0, &vf);
}

static int cmd_bind(char **args) {
        PciBdf vf;
        int r;

        r = parse_bdf_arg(args[0], &vf);
        if (r < 0)
                return r;
        return sriov_vf_bind(&vf, args[1], args[1]);
}

int main(int argc, char *argv[]) {
        const char *cmd = argc > 1 ? argv[1] : "json";
        int r;

        if (argc == 1)
                r = cmd_json();
        else if (argc == 2 && strcmp(cmd, "flat") == 0)
                r = cmd_flat();
        else if (argc == 4 && strcmp(cmd, "apply") == 0)
                r = cmd_apply(argv + 2);
        else if (argc >= 5 && strcmp(cmd, "set-vf") == 0)
                r = cmd_set_vf(argv + 2);
        else if (argc == 4 && strcmp(cmd, "bind") == 0)
                r = cmd_bind(argv + 2);
        else
                return usage();

        if (r < 0) {
                fprintf(stderr, "tb-inventory: %s: %s (%s)\n", cmd, strerror(-r), strerrorname_np(-r) ?: "?");
                return 1;
        }
        return 0;
}
