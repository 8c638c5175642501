/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libudev.h>
#include <limits.h>
#include <linux/if_ether.h>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/link/sriov.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "sriov.h"
#include "sysfs.h"

#define SYS_DEVICES_PREFIX "/sys/devices/"

/* PCI configuration space: the first 256 bytes are conventional, the
 * extended space (PCIe) reaches 4096; extended capabilities are at least 8
 * bytes apart, so a list longer than this many entries loops. */
#define PCI_CFG_SPACE_SIZE 0x100
#define PCI_CFG_SPACE_EXP_SIZE 0x1000
#define PCI_EXT_CAP_ID_DSN 0x0003
#define PCI_EXT_CAP_TTL ((PCI_CFG_SPACE_EXP_SIZE - PCI_CFG_SPACE_SIZE) / 8)


#define USEC_PER_MSEC UINT64_C(1000)
#define USEC_PER_SEC UINT64_C(1000000)
#define POLL_USEC (10 * USEC_PER_MSEC)

/* "PF <bdf>" / "VF <bdf>" and a little slack */
#define WHAT_MAX 32

static inline void udev_unrefp(struct udev **p) {
        udev_unref(*p);
}

static inline void udev_enumerate_unrefp(struct udev_enumerate **p) {
        udev_enumerate_unref(*p);
}

static inline void udev_device_unrefp(struct udev_device **p) {
        udev_device_unref(*p);
}

static inline void nl_socket_freep(struct nl_sock **p) {
        nl_socket_free(*p);
}

static inline void rtnl_link_putp(struct rtnl_link **p) {
        if (*p)
                rtnl_link_put(*p);
}

static inline void rtnl_link_vf_putp(struct rtnl_link_vf **p) {
        rtnl_link_vf_put(*p);
}

static inline void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

static uint64_t deadline_after(uint64_t timeout_usec) {
        uint64_t now = now_usec();

        return timeout_usec > UINT64_MAX - now ? UINT64_MAX : now + timeout_usec;
}

static void poll_sleep(void) {
        struct timespec ts = { .tv_nsec = (long) (POLL_USEC * 1000) };

        (void) nanosleep(&ts, NULL);
}

/* ---- sysfs ---------------------------------------------------------------- */

/* <sysfs root>/bus/pci/devices/<BDF> */
#define PCI_DIR_MAX PATH_MAX

static void pci_dir(const PciBdf *bdf, char buf[static PATH_MAX]) {
        char s[PCI_BDF_STRING_MAX];

        (void) sysfs_path(buf, PATH_MAX, "bus/pci/devices/%s", pci_bdf_format(bdf, s));
}

static int parse_u32(const char *s, uint32_t *ret) {
        unsigned long v;
        char *end;

        errno = 0;
        v = strtoul(s, &end, 0);
        if (errno != 0 || end == s || *end != '\0' || *s == '-' || v > UINT32_MAX)
                return -EINVAL;
        *ret = (uint32_t) v;
        return 0;
}

/* Reads a number (decimal or 0x-hex) of at most max from dir/name; logs
 * errors naming what. */
static int read_u32(const char *what, const char *dir, const char *name, uint32_t max, uint32_t *ret) {
        _cleanup_free_ char *s = NULL;
        int r;

        r = sysfs_read(dir, name, &s);
        if (r < 0)
                return log_error_errno(r, "%s: failed to read %s/%s: %m", what, dir, name);
        r = parse_u32(s, ret);
        if (r < 0 || *ret > max)
                return log_error_errno(-EBADMSG, "%s: %s/%s reads '%s', not a number up to %" PRIu32 ": %m",
                                       what, dir, name, s, max);
        return 0;
}

/* ---- configuration space ---------------------------------------------------- */

static uint32_t le32(const uint8_t *p) {
        return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

int sriov_config_find_dsn(const uint8_t *config, size_t size, uint64_t *ret_dsn) {
        size_t pos = PCI_CFG_SPACE_SIZE;
        uint32_t header;

        if (size < PCI_CFG_SPACE_SIZE + 4)
                return -ENOENT;
        header = le32(config + pos);
        if (header == 0 || header == UINT32_MAX)
                return -ENOENT;

        for (unsigned ttl = PCI_EXT_CAP_TTL; ttl > 0; ttl--) {
                if ((header & 0xffff) == PCI_EXT_CAP_ID_DSN) {
                        if (pos + 12 > size)
                                return -EBADMSG;
                        *ret_dsn = (uint64_t) le32(config + pos + 8) << 32 | le32(config + pos + 4);
                        return 0;
                }
                pos = (header >> 20) & 0xffc;
                if (pos == 0)
                        return -ENOENT;
                if (pos < PCI_CFG_SPACE_SIZE || pos + 4 > size)
                        return -EBADMSG;
                header = le32(config + pos);
        }
        return -ELOOP;
}

const char *sriov_dsn_format(uint64_t dsn, char buf[static SRIOV_DSN_STRING_MAX]) {
        snprintf(buf, SRIOV_DSN_STRING_MAX, "dsn:%02x-%02x-%02x-%02x-%02x-%02x-%02x-%02x",
                 (unsigned) (dsn >> 56) & 0xff, (unsigned) (dsn >> 48) & 0xff,
                 (unsigned) (dsn >> 40) & 0xff, (unsigned) (dsn >> 32) & 0xff,
                 (unsigned) (dsn >> 24) & 0xff, (unsigned) (dsn >> 16) & 0xff,
                 (unsigned) (dsn >> 8) & 0xff, (unsigned) dsn & 0xff);
        return buf;
}

/* Reads up to PCI_CFG_SPACE_EXP_SIZE bytes of dir/config. */
static int config_read(const char *dir, uint8_t buf[static PCI_CFG_SPACE_EXP_SIZE], size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;
        char path[PATH_MAX];
        size_t len = 0;
        ssize_t n;
        int r;

        r = path_join(path, dir, "config");
        if (r < 0)
                return r;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        while (len < PCI_CFG_SPACE_EXP_SIZE &&
               (n = pread(fd, buf + len, PCI_CFG_SPACE_EXP_SIZE - len, (off_t) len)) != 0) {
                if (n < 0)
                        return -errno;
                len += (size_t) n;
        }
        *ret_size = len;
        return 0;
}

/* ---- rtnetlink -------------------------------------------------------------- */

/* libnl reports NLE_* codes; the kernel's errno before libnl translated it
 * (nl_syserr2nlerr()), EIO for libnl's own failures. */
static int errno_from_nl(int nlerr) {
        static const struct {
                int nle, err;
        } map[] = {
                { NLE_BAD_SOCK, EBADF },       { NLE_EXIST, EEXIST },
                { NLE_NOADDR, EADDRNOTAVAIL }, { NLE_OBJ_NOTFOUND, ENOENT },
                { NLE_INTR, EINTR },           { NLE_AGAIN, EAGAIN },
                { NLE_NOACCESS, EACCES },      { NLE_INVAL, EINVAL },
                { NLE_NOMEM, ENOMEM },         { NLE_AF_NOSUPPORT, EAFNOSUPPORT },
                { NLE_PROTO_MISMATCH, EPROTONOSUPPORT }, { NLE_OPNOTSUPP, EOPNOTSUPP },
                { NLE_PERM, EPERM },           { NLE_BUSY, EBUSY },
                { NLE_RANGE, ERANGE },         { NLE_NODEV, ENODEV },
        };

        for (size_t i = 0; i < ELEMENTSOF(map); i++)
                if (map[i].nle == abs(nlerr))
                        return -map[i].err;
        return -EIO;
}

static int netlink_open(struct nl_sock **ret) {
        _cleanup_(nl_socket_freep) struct nl_sock *sk = NULL;
        int r;

        sk = nl_socket_alloc();
        if (!sk)
                return log_error_errno(-ENOMEM, "Failed to allocate an rtnetlink socket: %m");
        r = nl_connect(sk, NETLINK_ROUTE);
        if (r < 0)
                return log_error_errno(errno_from_nl(r), "Failed to connect an rtnetlink socket: %m");
        *ret = sk;
        sk = NULL;
        return 0;
}

/* RTM_GETLINK for the netdev with ifindex (> 0), else for the one named
 * netdev; libnl asks for VF information (RTEXT_FILTER_VF).  An ifindex
 * stays with its netdev when udev renames it, a name does not. */
static int pf_link_get(struct nl_sock *sk, const char *netdev, int ifindex, struct rtnl_link **ret) {
        int r;

        r = rtnl_link_get_kernel(sk, ifindex > 0 ? ifindex : 0, ifindex > 0 ? NULL : netdev, ret);
        if (r < 0) {
                if (ifindex > 0)
                        return log_error_errno(errno_from_nl(r), "PF netdev %s (ifindex %d): RTM_GETLINK failed: %m",
                                               netdev ?: "?", ifindex);
                return log_error_errno(errno_from_nl(r), "PF netdev %s: RTM_GETLINK failed: %m", netdev);
        }
        return 0;
}

/* A new rtnetlink socket and the PF netdev's link read through it. */
static int pf_link_open(const char *netdev, int ifindex, struct nl_sock **ret_sk, struct rtnl_link **ret_link) {
        _cleanup_(nl_socket_freep) struct nl_sock *sk = NULL;
        int r;

        r = netlink_open(&sk);
        if (r < 0)
                return r;
        r = pf_link_get(sk, netdev, ifindex, ret_link);
        if (r < 0)
                return r;
        *ret_sk = TAKE_PTR(sk);
        return 0;
}

/* Reads VF index's settings from the IFLA_VFINFO_LIST of link into *ret.
 * Returns false (and leaves *ret alone) when link does not report that VF. */
static bool vf_settings_read(struct rtnl_link *link, uint32_t index, VfSettings *ret) {
        _cleanup_(rtnl_link_vf_putp) struct rtnl_link_vf *vf = NULL;
        VfSettings s = {
                .valid = true,
                .vlan_proto = ETH_P_8021Q,
                .spoofchk = -1,
                .trust = -1,
                .rss_query_en = -1,
        };
        struct nl_vf_rate rate;
        struct nl_addr *addr;
        nl_vf_vlans_t *vlans;
        uint32_t v;

        if (!rtnl_link_has_vf_list(link))
                return false;
        vf = rtnl_link_vf_get(link, index);
        if (!vf)
                return false;

        if (rtnl_link_vf_get_addr(vf, &addr) == 0 && nl_addr_get_len(addr) == sizeof(s.mac))
                memcpy(s.mac, nl_addr_get_binary_addr(addr), sizeof(s.mac));
        if (rtnl_link_vf_get_vlans(vf, &vlans) == 0) {
                if (vlans->size > 0) {
                        s.vlan = (uint16_t) vlans->vlans[0].vf_vlan;
                        s.qos = (uint8_t) vlans->vlans[0].vf_vlan_qos;
                        s.vlan_proto = vlans->vlans[0].vf_vlan_proto;
                }
                rtnl_link_vf_vlan_put(vlans);
        }
        if (rtnl_link_vf_get_rate(vf, &rate) == 0) {
                if (rate.api == RTNL_LINK_VF_RATE_API_NEW) {
                        s.min_tx_rate = rate.min_tx_rate;
                        s.max_tx_rate = rate.max_tx_rate;
                } else
                        s.max_tx_rate = rate.rate;
        }
        if (rtnl_link_vf_get_spoofchk(vf, &v) == 0)
                s.spoofchk = !!v;
        if (rtnl_link_vf_get_trust(vf, &v) == 0)
                s.trust = !!v;
        if (rtnl_link_vf_get_rss_query_en(vf, &v) == 0)
                s.rss_query_en = !!v;
        if (rtnl_link_vf_get_linkstate(vf, &v) == 0)
                s.link_state = v;

        *ret = s;
        return true;
}

/* The settings as restore applies them: one RTM_NEWLINK each, in this
 * order (the administrative MAC first). */
typedef enum VfField {
        VF_FIELD_MAC,
        VF_FIELD_VLAN,          /* vlan, qos, vlan_proto */
        VF_FIELD_TX_RATE,       /* min_tx_rate, max_tx_rate */
        VF_FIELD_SPOOFCHK,
        VF_FIELD_TRUST,
        VF_FIELD_LINK_STATE,
        VF_FIELD_RSS_QUERY_EN,
        _VF_FIELD_MAX,
} VfField;

static const char *const vf_field_names[_VF_FIELD_MAX] = {
        [VF_FIELD_MAC] = "mac",
        [VF_FIELD_VLAN] = "vlan",
        [VF_FIELD_TX_RATE] = "tx_rate",
        [VF_FIELD_SPOOFCHK] = "spoofchk",
        [VF_FIELD_TRUST] = "trust",
        [VF_FIELD_LINK_STATE] = "link_state",
        [VF_FIELD_RSS_QUERY_EN] = "rss_query_en",
};

/* Longest: "4095 qos 7 proto 0xffff" / "min 4294967295 max 4294967295 Mbit/s" */
#define VF_FIELD_STRING_MAX 48

/* Whether want asks for a field that have lacks; a tri-state of -1 asks
 * for nothing. */
static bool vf_field_differs(VfField f, const VfSettings *want, const VfSettings *have) {
        switch (f) {
        case VF_FIELD_MAC: {
                /* An all-zero MAC is no administrative MAC: the VF's driver
                 * picks its own (igb a random one at each VF reset), which
                 * restore cannot reproduce nor needs to. */
                static const uint8_t zero[6] = {};
                return memcmp(want->mac, zero, sizeof(zero)) != 0 &&
                       memcmp(want->mac, have->mac, sizeof(want->mac)) != 0;
        }
        case VF_FIELD_VLAN:
                return want->vlan != have->vlan || want->qos != have->qos ||
                       want->vlan_proto != have->vlan_proto;
        case VF_FIELD_TX_RATE:
                return want->min_tx_rate != have->min_tx_rate || want->max_tx_rate != have->max_tx_rate;
        case VF_FIELD_SPOOFCHK:
                return want->spoofchk >= 0 && want->spoofchk != have->spoofchk;
        case VF_FIELD_TRUST:
                return want->trust >= 0 && want->trust != have->trust;
        case VF_FIELD_LINK_STATE:
                return want->link_state != have->link_state;
        case VF_FIELD_RSS_QUERY_EN:
                return want->rss_query_en >= 0 && want->rss_query_en != have->rss_query_en;
        case _VF_FIELD_MAX:
                break;
        }
        abort();
}

static const char *tristate_name(int v) {
        return v < 0 ? "unknown" : v ? "on" : "off";
}

static const char *vf_field_format(VfField f, const VfSettings *s, char buf[static VF_FIELD_STRING_MAX]) {
        static const char *const link_states[] = { "auto", "enable", "disable" };

        switch (f) {
        case VF_FIELD_MAC:
                snprintf(buf, VF_FIELD_STRING_MAX, "%02x:%02x:%02x:%02x:%02x:%02x",
                         s->mac[0], s->mac[1], s->mac[2], s->mac[3], s->mac[4], s->mac[5]);
                return buf;
        case VF_FIELD_VLAN:
                snprintf(buf, VF_FIELD_STRING_MAX, "%u qos %u proto %s", s->vlan, s->qos,
                         s->vlan_proto == ETH_P_8021Q ? "802.1Q" :
                         s->vlan_proto == ETH_P_8021AD ? "802.1ad" : "other");
                return buf;
        case VF_FIELD_TX_RATE:
                snprintf(buf, VF_FIELD_STRING_MAX, "min %" PRIu32 " max %" PRIu32 " Mbit/s",
                         s->min_tx_rate, s->max_tx_rate);
                return buf;
        case VF_FIELD_SPOOFCHK:
                return tristate_name(s->spoofchk);
        case VF_FIELD_TRUST:
                return tristate_name(s->trust);
        case VF_FIELD_LINK_STATE:
                if (s->link_state < ELEMENTSOF(link_states))
                        return link_states[s->link_state];
                snprintf(buf, VF_FIELD_STRING_MAX, "%" PRIu32, s->link_state);
                return buf;
        case VF_FIELD_RSS_QUERY_EN:
                return tristate_name(s->rss_query_en);
        case _VF_FIELD_MAX:
                break;
        }
        abort();
}

/* Puts field f of want into the VF object vf. */
static int vf_field_put(struct rtnl_link_vf *vf, VfField f, const VfSettings *want) {
        struct nl_vf_rate rate;
        struct nl_addr *addr;
        nl_vf_vlans_t *vlans;

        switch (f) {
        case VF_FIELD_MAC:
                addr = nl_addr_build(AF_LLC, want->mac, sizeof(want->mac));
                if (!addr)
                        return -ENOMEM;
                rtnl_link_vf_set_addr(vf, addr);
                nl_addr_put(addr);
                return 0;
        case VF_FIELD_VLAN:
                if (rtnl_link_vf_vlan_alloc(&vlans, 1) < 0)
                        return -ENOMEM;
                /* libnl sends 802.1Q as IFLA_VF_VLAN, anything else as
                 * IFLA_VF_VLAN_LIST, copying vf_vlan_proto into the
                 * big-endian ifla_vf_vlan_info.vlan_proto without swapping
                 * (libnl 3.7, unchanged upstream), so that case needs
                 * network order here. */
                vlans->vlans[0] = (nl_vf_vlan_info_t) {
                        .vf_vlan = want->vlan,
                        .vf_vlan_qos = want->qos,
                        .vf_vlan_proto = want->vlan_proto == ETH_P_8021Q ? ETH_P_8021Q : htons(want->vlan_proto),
                };
                rtnl_link_vf_set_vlans(vf, vlans);
                rtnl_link_vf_vlan_put(vlans);
                return 0;
        case VF_FIELD_TX_RATE:
                rate = (struct nl_vf_rate) {
                        .api = RTNL_LINK_VF_RATE_API_NEW,
                        .min_tx_rate = want->min_tx_rate,
                        .max_tx_rate = want->max_tx_rate,
                };
                rtnl_link_vf_set_rate(vf, &rate);
                return 0;
        case VF_FIELD_SPOOFCHK:
                rtnl_link_vf_set_spoofchk(vf, (uint32_t) want->spoofchk);
                return 0;
        case VF_FIELD_TRUST:
                rtnl_link_vf_set_trust(vf, (uint32_t) want->trust);
                return 0;
        case VF_FIELD_LINK_STATE:
                rtnl_link_vf_set_linkstate(vf, want->link_state);
                return 0;
        case VF_FIELD_RSS_QUERY_EN:
                rtnl_link_vf_set_rss_query_en(vf, (uint32_t) want->rss_query_en);
                return 0;
        case _VF_FIELD_MAX:
                break;
        }
        abort();
}

/* One RTM_NEWLINK on the PF link pf with an IFLA_VFINFO_LIST holding field
 * f of want for VF index. */
static int vf_field_send(struct nl_sock *sk, struct rtnl_link *pf, const char *netdev, uint32_t index,
                         VfField f, const VfSettings *want) {
        _cleanup_(rtnl_link_putp) struct rtnl_link *changes = NULL;
        _cleanup_(rtnl_link_vf_putp) struct rtnl_link_vf *vf = NULL;
        char buf[VF_FIELD_STRING_MAX];
        int r;

        changes = rtnl_link_alloc();
        vf = rtnl_link_vf_alloc();
        if (!changes || !vf)
                return log_error_errno(-ENOMEM, "PF netdev %s VF %" PRIu32 ": failed to set %s: %m",
                                       netdev, index, vf_field_names[f]);
        rtnl_link_vf_set_index(vf, index);
        r = vf_field_put(vf, f, want);
        if (r < 0)
                return log_error_errno(r, "PF netdev %s VF %" PRIu32 ": failed to set %s: %m",
                                       netdev, index, vf_field_names[f]);
        r = rtnl_link_vf_add(changes, vf);
        if (r < 0)
                return log_error_errno(errno_from_nl(r), "PF netdev %s VF %" PRIu32 ": failed to set %s: %m",
                                       netdev, index, vf_field_names[f]);
        r = rtnl_link_change(sk, pf, changes, 0);
        if (r < 0)
                return log_error_errno(errno_from_nl(r), "PF netdev %s VF %" PRIu32 ": failed to set %s to %s: %m",
                                       netdev, index, vf_field_names[f], vf_field_format(f, want, buf));
        return 0;
}

int sriov_vf_apply_settings(const char *pf_netdev, int pf_ifindex, const VfRecord *vf) {
        _cleanup_(nl_socket_freep) struct nl_sock *sk = NULL;
        _cleanup_(rtnl_link_putp) struct rtnl_link *link = NULL;
        VfSettings have;
        int r;

        if (!vf->settings.valid)
                return log_error_errno(-EINVAL, "PF netdev %s VF %" PRIu32 ": no settings to apply: %m",
                                       pf_netdev, vf->index);
        r = pf_link_open(pf_netdev, pf_ifindex, &sk, &link);
        if (r < 0)
                return r;
        if (!vf_settings_read(link, vf->index, &have))
                return log_error_errno(-ENOENT, "PF netdev %s reports no VF %" PRIu32 ": %m",
                                       pf_netdev, vf->index);

        for (VfField f = 0; f < _VF_FIELD_MAX; f++) {
                if (!vf_field_differs(f, &vf->settings, &have))
                        continue;
                r = vf_field_send(sk, link, pf_netdev, vf->index, f, &vf->settings);
                if (r < 0)
                        return r;
        }
        return 0;
}

int sriov_pf_set_link_up(const char *pf_netdev, int pf_ifindex, bool up) {
        _cleanup_(nl_socket_freep) struct nl_sock *sk = NULL;
        _cleanup_(rtnl_link_putp) struct rtnl_link *link = NULL, *change = NULL, *after = NULL;
        int r;

        r = pf_link_open(pf_netdev, pf_ifindex, &sk, &link);
        if (r < 0)
                return r;
        if (!!(rtnl_link_get_flags(link) & IFF_UP) == up)
                return 0;
        change = rtnl_link_alloc();
        if (!change)
                return log_error_errno(-ENOMEM, "PF netdev %s: failed to allocate a link change: %m", pf_netdev);
        if (up)
                rtnl_link_set_flags(change, IFF_UP);
        else
                rtnl_link_unset_flags(change, IFF_UP);
        r = rtnl_link_change(sk, link, change, 0);
        if (r < 0)
                return log_error_errno(errno_from_nl(r), "PF netdev %s: RTM_NEWLINK setting it %s failed: %m",
                                       pf_netdev, up ? "up" : "down");
        /* Read back: a driver may refuse without an error (it logs only). */
        r = pf_link_get(sk, pf_netdev, pf_ifindex, &after);
        if (r < 0)
                return r;
        if (!!(rtnl_link_get_flags(after) & IFF_UP) != up)
                return log_error_errno(-EIO, "PF netdev %s is still %s after setting it %s: %m", pf_netdev,
                                       up ? "down" : "up", up ? "up" : "down");
        return 0;
}

/* ---- scan ------------------------------------------------------------------- */

static int vf_scan(const char *pf_what, const char *pf_dir, uint32_t index, VfRecord *vf) {
        _cleanup_free_ char *name = NULL, *override = NULL, *group = NULL;
        char link[32], dir[PATH_MAX], what[WHAT_MAX];
        uint32_t g;
        int r;

        snprintf(link, sizeof(link), "virtfn%" PRIu32, index);
        r = sysfs_link_name(pf_what, pf_dir, link, &name);
        if (r < 0)
                return r;
        if (!name)
                return log_error_errno(-ENOENT, "%s: %s/%s is gone (VFs changed during the scan?): %m",
                                       pf_what, pf_dir, link);
        if (pci_bdf_parse(name, &vf->bdf) < 0)
                return log_error_errno(-EBADMSG, "%s: %s/%s points to '%s', not a PCI device: %m",
                                       pf_what, pf_dir, link, name);
        r = path_join(dir, pf_dir, link);
        if (r < 0)
                return log_error_errno(r, "%s: path %s/%s too long: %m", pf_what, pf_dir, link);
        snprintf(what, sizeof(what), "VF %s", name);
        vf->index = index;

        r = sysfs_link_name(what, dir, "driver", &vf->driver);
        if (r < 0)
                return r;

        r = sysfs_read(dir, "driver_override", &override);
        if (r < 0)
                return log_error_errno(r, "%s: failed to read %s/driver_override: %m", what, dir);
        if (*override && strcmp(override, "(null)") != 0) {
                vf->driver_override = override;
                override = NULL;
        }

        r = sysfs_link_name(what, dir, "iommu_group", &group);
        if (r < 0)
                return r;
        vf->iommu_group = -1;
        if (group) {
                if (parse_u32(group, &g) < 0 || g > INT_MAX)
                        return log_error_errno(-EBADMSG, "%s: %s/iommu_group points to '%s', not a group number: %m",
                                               what, dir, group);
                vf->iommu_group = (int) g;
        }
        return 0;
}

static int pf_scan_identity(const char *what, struct udev_device *d, PfRecord *pf) {
        uint8_t config[PCI_CFG_SPACE_EXP_SIZE];
        char dsn_string[SRIOV_DSN_STRING_MAX];
        const char *dir = udev_device_get_syspath(d), *parent_path;
        struct udev_device *parent;
        uint64_t dsn;
        size_t size = 0;
        int r;

        r = config_read(dir, config, &size);
        if (r < 0)
                log_warning_errno(r, "%s: failed to read %s/config, identifying the PF by its path: %m", what, dir);
        else {
                r = sriov_config_find_dsn(config, size, &dsn);
                /* All zeros or all ones is no serial number (unprogrammed
                 * EEPROMs report them on many cards at once). */
                if (r == 0 && (dsn == 0 || dsn == UINT64_MAX))
                        r = -ENOENT;
                if (r == 0) {
                        /* Every function of a multi-function device reports
                         * function 0's serial number: the function is part
                         * of the identity. */
                        if (asprintf(&pf->identity, "%s/%02x.%x", sriov_dsn_format(dsn, dsn_string),
                                     pf->bdf.device, pf->bdf.function) < 0) {
                                pf->identity = NULL;
                                return log_error_errno(-ENOMEM, "%s: failed to record identity: %m", what);
                        }
                        return 0;
                }
                if (r != -ENOENT)
                        log_warning_errno(r, "%s: bad extended capability list in %s/config, identifying the PF by its path: %m",
                                          what, dir);
        }

        parent = udev_device_get_parent(d); /* owned by d */
        parent_path = parent ? udev_device_get_syspath(parent) : NULL;
        if (!parent_path || strncmp(parent_path, SYS_DEVICES_PREFIX, strlen(SYS_DEVICES_PREFIX)) != 0)
                return log_error_errno(-ENODEV, "%s: no parent device below " SYS_DEVICES_PREFIX ": %m", what);
        if (asprintf(&pf->identity, "path:%s/%02x.%x/%04x:%04x:%04x:%04x", parent_path + strlen(SYS_DEVICES_PREFIX),
                     pf->bdf.device, pf->bdf.function,
                     pf->vendor, pf->device, pf->subsystem_vendor, pf->subsystem_device) < 0) {
                pf->identity = NULL;
                return log_error_errno(-ENOMEM, "%s: failed to record identity: %m", what);
        }
        return 0;
}

/* The first name under dir/net in sort order into first (empty if none). */
static int netdev_first(const char *what, const char *dir, char first[static NAME_MAX + 1]) {
        _cleanup_(closedirp) DIR *d = NULL;
        char path[PATH_MAX];
        struct dirent *de;
        int r;

        *first = '\0';
        r = path_join(path, dir, "net");
        if (r < 0)
                return log_error_errno(r, "%s: path %s/net too long: %m", what, dir);
        d = opendir(path);
        if (!d) {
                if (errno == ENOENT)
                        return 0;
                return log_error_errno(-errno, "%s: failed to open %s: %m", what, path);
        }
        for (errno = 0; (de = readdir(d)); errno = 0)
                if (de->d_name[0] != '.' && (!*first || strcmp(de->d_name, first) < 0))
                        snprintf(first, NAME_MAX + 1, "%s", de->d_name);
        if (errno != 0)
                return log_error_errno(-errno, "%s: failed to read %s: %m", what, path);
        return 0;
}

/* Reads the number in dir/net/<netdev>/<name>; -ENOENT (not logged) when
 * the netdev is gone or renamed since its name was read. */
static int netdev_read_u32(const char *what, const char *dir, const char *netdev, const char *name,
                           uint32_t *ret) {
        _cleanup_free_ char *s = NULL;
        char rel[PATH_MAX];
        int r;

        if (snprintf(rel, sizeof(rel), "net/%s/%s", netdev, name) >= (int) sizeof(rel))
                return log_error_errno(-ENAMETOOLONG, "%s: path %s/net/%s/%s too long: %m", what, dir, netdev, name);
        r = sysfs_read(dir, rel, &s);
        if (r == -ENOENT)
                return r;
        if (r < 0)
                return log_error_errno(r, "%s: failed to read %s/%s: %m", what, dir, rel);
        if (parse_u32(s, ret) < 0)
                return log_error_errno(-EBADMSG, "%s: %s/%s reads '%s', not a number: %m", what, dir, rel, s);
        return 0;
}

/* pf->netdev: the first name under dir/net in sort order; netdev_up from
 * its flags, ifindex from its ifindex.  A netdev renamed (udev) between
 * reading its name and its files is read again, up to 10 times. */
static int pf_scan_netdev(const char *what, const char *dir, PfRecord *pf) {
        char first[NAME_MAX + 1];
        uint32_t flags = 0, ifindex = 0;
        int r;

        for (unsigned attempt = 0;; attempt++) {
                r = netdev_first(what, dir, first);
                if (r < 0)
                        return r;
                if (!*first)
                        return 0;
                r = netdev_read_u32(what, dir, first, "flags", &flags);
                if (r >= 0)
                        r = netdev_read_u32(what, dir, first, "ifindex", &ifindex);
                if (r >= 0)
                        break;
                if (r != -ENOENT)
                        return r;
                if (attempt >= 10)
                        return log_error_errno(r, "%s: netdev %s under %s/net keeps vanishing: %m", what, first, dir);
        }
        if (ifindex == 0 || ifindex > INT_MAX)
                return log_error_errno(-EBADMSG, "%s: %s/net/%s/ifindex reads %" PRIu32 ", not an interface index: %m",
                                       what, dir, first, ifindex);
        free(pf->netdev);
        pf->netdev = strdup(first);
        if (!pf->netdev)
                return log_error_errno(-ENOMEM, "%s: failed to record netdev %s: %m", what, first);
        pf->netdev_up = flags & IFF_UP;
        pf->ifindex = (int) ifindex;
        return 0;
}

/* Reads the VFs' settings from the PF netdev; *sk is opened on first use. */
static int pf_scan_settings(struct nl_sock **sk, PfRecord *pf) {
        _cleanup_(rtnl_link_putp) struct rtnl_link *link = NULL;
        int r;

        if (!pf->netdev)
                return 0;
        if (!*sk) {
                r = netlink_open(sk);
                if (r < 0)
                        return r;
        }
        r = pf_link_get(*sk, pf->netdev, pf->ifindex, &link);
        if (r < 0)
                return r;
        for (size_t i = 0; i < pf->n_vfs; i++)
                (void) vf_settings_read(link, pf->vfs[i].index, &pf->vfs[i].settings);
        return 0;
}

/* The PF's vendor, device and subsystem IDs from sysfs. */
static int pf_read_ids(const char *what, const char *dir, PfRecord *pf) {
        const struct {
                const char *name;
                uint16_t *field;
        } ids[] = {
                { "vendor", &pf->vendor },
                { "device", &pf->device },
                { "subsystem_vendor", &pf->subsystem_vendor },
                { "subsystem_device", &pf->subsystem_device },
        };
        uint32_t v;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(ids); i++) {
                r = read_u32(what, dir, ids[i].name, UINT16_MAX, &v);
                if (r < 0)
                        return r;
                *ids[i].field = (uint16_t) v;
        }
        return 0;
}

static int pf_scan(struct udev *udev, const char *syspath, struct nl_sock **sk, PfRecord *pf) {
        _cleanup_(udev_device_unrefp) struct udev_device *d = NULL;
        char what[WHAT_MAX];
        const char *dir;
        uint32_t v;
        int r;

        d = udev_device_new_from_syspath(udev, syspath);
        if (!d)
                return log_error_errno(-errno, "Failed to open PCI device %s: %m", syspath);
        dir = udev_device_get_syspath(d);
        if (pci_bdf_parse(udev_device_get_sysname(d), &pf->bdf) < 0)
                return log_error_errno(-EBADMSG, "PCI device %s: name is not a BDF: %m", dir);
        snprintf(what, sizeof(what), "PF %s", udev_device_get_sysname(d));

        r = pf_read_ids(what, dir, pf);
        if (r < 0)
                return r;
        r = pf_scan_identity(what, d, pf);
        if (r < 0)
                return r;
        r = sysfs_link_name(what, dir, "driver", &pf->driver);
        if (r < 0)
                return r;
        r = read_u32(what, dir, "sriov_totalvfs", UINT32_MAX, &pf->totalvfs);
        if (r < 0)
                return r;
        r = read_u32(what, dir, "sriov_numvfs", pf->totalvfs, &pf->numvfs);
        if (r < 0)
                return r;
        r = read_u32(what, dir, "sriov_drivers_autoprobe", 1, &v);
        if (r < 0)
                return r;
        pf->drivers_autoprobe = v;
        r = pf_scan_netdev(what, dir, pf);
        if (r < 0)
                return r;

        if (pf->numvfs > 0) {
                pf->vfs = calloc(pf->numvfs, sizeof(VfRecord));
                if (!pf->vfs)
                        return log_error_errno(-ENOMEM, "%s: failed to record %" PRIu32 " VFs: %m", what, pf->numvfs);
                pf->n_vfs = pf->numvfs;
        }
        for (uint32_t i = 0; i < pf->numvfs; i++) {
                r = vf_scan(what, dir, i, &pf->vfs[i]);
                if (r < 0)
                        return r;
        }
        return pf_scan_settings(sk, pf);
}

int sriov_pf_identity(const PciBdf *bdf, char **ret) {
        _cleanup_(udev_unrefp) struct udev *udev = NULL;
        _cleanup_(udev_device_unrefp) struct udev_device *d = NULL;
        char dir[PCI_DIR_MAX], b[PCI_BDF_STRING_MAX], what[WHAT_MAX];
        PfRecord pf = {};
        int r;

        (void) sysfs_path(dir, sizeof(dir), "bus/pci/devices/%s", pci_bdf_format(bdf, b));
        snprintf(what, sizeof(what), "PF %s", b);
        udev = udev_new();
        if (!udev)
                return log_error_errno(-ENOMEM, "%s: failed to create a udev context: %m", what);
        d = udev_device_new_from_syspath(udev, dir);
        if (!d)
                return log_error_errno(-errno, "Failed to open PCI device %s: %m", dir);
        pf.bdf = *bdf;
        r = pf_read_ids(what, dir, &pf);
        if (r < 0)
                return r;
        r = pf_scan_identity(what, d, &pf);
        if (r < 0)
                return r;
        *ret = pf.identity;
        return 0;
}

int sriov_pf_refresh(const PciBdf *bdf, uint64_t netdev_wait_usec, PfRecord *ret) {
        _cleanup_(udev_unrefp) struct udev *udev = NULL;
        _cleanup_(nl_socket_freep) struct nl_sock *sk = NULL;
        char dir[PCI_DIR_MAX], b[PCI_BDF_STRING_MAX], what[WHAT_MAX];
        uint64_t deadline = deadline_after(netdev_wait_usec);
        PfRecord pf = {};
        int r;

        pci_dir(bdf, dir);
        snprintf(what, sizeof(what), "PF %s", pci_bdf_format(bdf, b));
        udev = udev_new();
        if (!udev)
                return log_error_errno(-ENOMEM, "%s: failed to create a udev context: %m", what);
        r = pf_scan(udev, dir, &sk, &pf);
        /* A netdev PF's driver registers its netdev in its probe, which
         * runs after the PCI core made the `driver` link. */
        while (r >= 0 && !pf.netdev && netdev_wait_usec > 0 && now_usec() < deadline) {
                poll_sleep();
                r = pf_scan_netdev(what, dir, &pf);
                if (r >= 0 && pf.netdev)
                        r = pf_scan_settings(&sk, &pf);
        }
        if (r < 0) {
                pf_record_done(&pf);
                return r;
        }
        *ret = pf;
        return 0;
}

static int pf_compare_bdf(const void *a, const void *b) {
        return pci_bdf_compare(&((const PfRecord *) a)->bdf, &((const PfRecord *) b)->bdf);
}

int sriov_scan(LuodState *state) {
        _cleanup_(udev_unrefp) struct udev *udev = NULL;
        _cleanup_(udev_enumerate_unrefp) struct udev_enumerate *e = NULL;
        _cleanup_(nl_socket_freep) struct nl_sock *sk = NULL;
        _cleanup_luod_state_ LuodState scanned = {};
        struct udev_list_entry *entry;
        int r;

        if (state->pfs || state->n_pfs > 0)
                return -EINVAL;

        udev = udev_new();
        if (!udev)
                return log_error_errno(-ENOMEM, "Failed to create a udev context: %m");
        e = udev_enumerate_new(udev);
        if (!e)
                return log_error_errno(-ENOMEM, "Failed to enumerate PCI devices: %m");
        r = udev_enumerate_add_match_subsystem(e, "pci");
        if (r >= 0)
                r = udev_enumerate_add_match_sysattr(e, "sriov_totalvfs", NULL);
        if (r >= 0)
                r = udev_enumerate_scan_devices(e);
        if (r < 0)
                return log_error_errno(r, "Failed to enumerate SR-IOV PCI devices: %m");

        udev_list_entry_foreach(entry, udev_enumerate_get_list_entry(e)) {
                PfRecord *pfs = reallocarray(scanned.pfs, scanned.n_pfs + 1, sizeof(PfRecord));

                if (!pfs)
                        return log_error_errno(-ENOMEM, "Failed to record PF %s: %m",
                                               udev_list_entry_get_name(entry));
                scanned.pfs = pfs;
                pfs[scanned.n_pfs++] = (PfRecord) {};
                r = pf_scan(udev, udev_list_entry_get_name(entry), &sk, &pfs[scanned.n_pfs - 1]);
                if (r < 0)
                        return r;
        }
        if (scanned.n_pfs > 0)
                qsort(scanned.pfs, scanned.n_pfs, sizeof(PfRecord), pf_compare_bdf);

        /* Two PFs of one identity (two cards with one serial number) could
         * not be told apart after the kexec: the record refuses them
         * (luod_state_verify()); the scan still serves restore and
         * inventory. */
        size_t a, b;
        if (luod_state_find_duplicate_identity(&scanned, &a, &b)) {
                char ba[PCI_BDF_STRING_MAX], bb[PCI_BDF_STRING_MAX];

                log_warning("PFs %s and %s have the same identity %s", pci_bdf_format(&scanned.pfs[a].bdf, ba),
                            pci_bdf_format(&scanned.pfs[b].bdf, bb), scanned.pfs[a].identity);
        }

        state->pfs = scanned.pfs;
        state->n_pfs = scanned.n_pfs;
        scanned.pfs = NULL;
        scanned.n_pfs = 0;
        return 0;
}

/* ---- restore steps ---------------------------------------------------------- */

int sriov_pf_wait_driver(const PciBdf *pf, uint64_t timeout_usec) {
        char dir[PCI_DIR_MAX], bdf[PCI_BDF_STRING_MAX], what[WHAT_MAX];
        uint64_t deadline = deadline_after(timeout_usec);
        bool present;
        int r;

        pci_dir(pf, dir);
        snprintf(what, sizeof(what), "PF %s", pci_bdf_format(pf, bdf));
        for (;;) {
                _cleanup_free_ char *driver = NULL;

                present = access(dir, F_OK) >= 0;
                if (present) {
                        r = sysfs_link_name(what, dir, "driver", &driver);
                        if (r < 0)
                                return r;
                        if (driver)
                                return 0;
                }
                if (now_usec() >= deadline)
                        break;
                poll_sleep();
        }
        if (!present)
                return log_error_errno(-ENODEV, "%s: %s did not appear within %" PRIu64 " ms: %m",
                                       what, dir, timeout_usec / USEC_PER_MSEC);
        return log_error_errno(-ETIMEDOUT, "%s: no driver bound within %" PRIu64 " ms: %m",
                               what, timeout_usec / USEC_PER_MSEC);
}

int sriov_pf_set_autoprobe(const PciBdf *pf, bool on) {
        char dir[PCI_DIR_MAX], bdf[PCI_BDF_STRING_MAX];
        int r;

        pci_dir(pf, dir);
        r = sysfs_write(dir, "sriov_drivers_autoprobe", on ? "1" : "0");
        if (r < 0)
                return log_error_errno(r, "PF %s: failed to write %d to %s/sriov_drivers_autoprobe: %m",
                                       pci_bdf_format(pf, bdf), on, dir);
        return 0;
}

int sriov_pf_set_numvfs(const PciBdf *pf, uint32_t n) {
        char dir[PCI_DIR_MAX], bdf[PCI_BDF_STRING_MAX], what[WHAT_MAX], value[16];
        uint32_t total, cur;
        int r;

        pci_dir(pf, dir);
        snprintf(what, sizeof(what), "PF %s", pci_bdf_format(pf, bdf));
        r = read_u32(what, dir, "sriov_totalvfs", UINT32_MAX, &total);
        if (r < 0)
                return r;
        if (n > total)
                return log_error_errno(-ERANGE, "%s: cannot enable %" PRIu32 " VFs, sriov_totalvfs is %" PRIu32 ": %m",
                                       what, n, total);
        r = read_u32(what, dir, "sriov_numvfs", UINT32_MAX, &cur);
        if (r < 0)
                return r;
        if (cur == n)
                return 0;

        if (cur != 0 && n != 0) {
                r = sysfs_write(dir, "sriov_numvfs", "0");
                if (r < 0)
                        return log_error_errno(r, "%s: failed to write 0 to %s/sriov_numvfs (to change %" PRIu32 " VFs into %" PRIu32 "): %m",
                                               what, dir, cur, n);
        }
        snprintf(value, sizeof(value), "%" PRIu32, n);
        r = sysfs_write(dir, "sriov_numvfs", value);
        if (r < 0)
                return log_error_errno(r, "%s: failed to write %s to %s/sriov_numvfs: %m", what, value, dir);
        return 0;
}

int sriov_pf_wait_vfs(const PciBdf *pf, uint32_t n, uint64_t timeout_usec) {
        char dir[PCI_DIR_MAX], path[PATH_MAX], bdf[PCI_BDF_STRING_MAX];
        uint64_t deadline = deadline_after(timeout_usec);
        uint32_t i = 0;

        pci_dir(pf, dir);
        pci_bdf_format(pf, bdf);
        for (;;) {
                for (; i < n; i++) {
                        int k = snprintf(path, sizeof(path), "%s/virtfn%" PRIu32, dir, i);
                        if (k < 0 || (size_t) k >= sizeof(path) || access(path, F_OK) < 0)
                                break;
                }
                if (i == n)
                        return 0;
                if (access(dir, F_OK) < 0)
                        return log_error_errno(-ENODEV, "PF %s: %s is gone while waiting for its VFs: %m", bdf, dir);
                if (now_usec() >= deadline)
                        return log_error_errno(-ETIMEDOUT, "PF %s: only %" PRIu32 " of %" PRIu32 " VFs appeared within %" PRIu64 " ms: %m",
                                               bdf, i, n, timeout_usec / USEC_PER_MSEC);
                poll_sleep();
        }
}

int sriov_vf_bind(const PciBdf *vf, const char *driver_override, const char *driver) {
        _cleanup_free_ char *cur = NULL;
        char dir[PCI_DIR_MAX], bdf[PCI_BDF_STRING_MAX], what[WHAT_MAX];
        int r;

        pci_dir(vf, dir);
        pci_bdf_format(vf, bdf);
        snprintf(what, sizeof(what), "VF %s", bdf);

        r = sysfs_write(dir, "driver_override", driver_override ?: "\n");
        if (r < 0)
                return log_error_errno(r, "%s: failed to write '%s' to %s/driver_override: %m",
                                       what, driver_override ?: "\\n", dir);

        r = sysfs_link_name(what, dir, "driver", &cur);
        if (r < 0)
                return r;
        if (cur && !streq_ptr(cur, driver)) {
                r = sysfs_write(dir, "driver/unbind", bdf);
                if (r < 0)
                        return log_error_errno(r, "%s: failed to unbind from %s (%s/driver/unbind): %m", what, cur, dir);
                free(cur);
                cur = NULL;
        }
        if (!driver || cur)
                return 0;

        char bus[PATH_MAX];
        r = sysfs_path(bus, sizeof(bus), "bus/pci");
        if (r >= 0)
                r = sysfs_write(bus, "drivers_probe", bdf);
        if (r < 0)
                return log_error_errno(r, "%s: probing for driver %s failed (%s/drivers_probe): %m",
                                       what, driver, bus);
        r = sysfs_link_name(what, dir, "driver", &cur);
        if (r < 0)
                return r;
        if (!streq_ptr(cur, driver))
                return log_error_errno(-ENXIO, "%s: %s after probing, expected driver %s: %m",
                                       what, cur ? cur : "unbound", driver);
        return 0;
}

/* ---- compare ---------------------------------------------------------------- */

static void diff_line(FILE *f, unsigned *n, const char *bdf, const VfRecord *vf, const char *field,
                      const char *want, const char *have) {
        if (vf)
                fprintf(f, "PF %s VF %" PRIu32 ": %s: want %s, have %s\n", bdf, vf->index, field, want, have);
        else
                fprintf(f, "PF %s: %s: want %s, have %s\n", bdf, field, want, have);
        (*n)++;
}

static void vf_compare(FILE *f, unsigned *n, const char *bdf, const VfRecord *want, const VfRecord *have) {
        char a[VF_FIELD_STRING_MAX], b[VF_FIELD_STRING_MAX];

        if (!streq_ptr(want->driver, have->driver))
                diff_line(f, n, bdf, want, "driver", want->driver ?: "(none)", have->driver ?: "(none)");
        if (!streq_ptr(want->driver_override, have->driver_override))
                diff_line(f, n, bdf, want, "driver_override", want->driver_override ?: "(none)",
                          have->driver_override ?: "(none)");
        if (!want->settings.valid)
                return;
        if (!have->settings.valid) {
                diff_line(f, n, bdf, want, "settings", "recorded settings", "none reported");
                return;
        }
        for (VfField i = 0; i < _VF_FIELD_MAX; i++)
                if (vf_field_differs(i, &want->settings, &have->settings))
                        diff_line(f, n, bdf, want, vf_field_names[i], vf_field_format(i, &want->settings, a),
                                  vf_field_format(i, &have->settings, b));
}

int sriov_vf_bdf(const PciBdf *pf, uint32_t index, PciBdf *ret) {
        _cleanup_free_ char *name = NULL;
        char dir[PCI_DIR_MAX], link[32], what[64], bdf[PCI_BDF_STRING_MAX];
        int r;

        pci_dir(pf, dir);
        snprintf(link, sizeof(link), "virtfn%" PRIu32, index);
        snprintf(what, sizeof(what), "PF %s VF %" PRIu32, pci_bdf_format(pf, bdf), index);
        r = sysfs_link_name(what, dir, link, &name);
        if (r < 0)
                return r;
        if (!name)
                return log_error_errno(-ENOENT, "%s: no %s/%s: %m", what, dir, link);
        r = pci_bdf_parse(name, ret);
        if (r < 0)
                return log_error_errno(r, "%s: %s/%s points to '%s', not a BDF: %m", what, dir, link, name);
        return 0;
}

int sriov_vf_clear_override(const PciBdf *vf) {
        char dir[PCI_DIR_MAX];
        int r;

        pci_dir(vf, dir);
        r = sysfs_write(dir, "driver_override", "\n");
        if (r < 0)
                return log_error_errno(r, "VF %s: failed to clear driver_override: %m", strrchr(dir, '/') + 1);
        return 0;
}

int sriov_pf_compare(const PfRecord *want, const PfRecord *have, char **ret_diff) {
        _cleanup_free_ char *buf = NULL;
        char bdf[PCI_BDF_STRING_MAX], a[16], b[16];
        size_t size = 0, j = 0;
        unsigned n = 0;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        pci_bdf_format(&have->bdf, bdf);

        if (want->numvfs != have->numvfs) {
                snprintf(a, sizeof(a), "%" PRIu32, want->numvfs);
                snprintf(b, sizeof(b), "%" PRIu32, have->numvfs);
                diff_line(f, &n, bdf, NULL, "numvfs", a, b);
        }
        if (want->drivers_autoprobe != have->drivers_autoprobe)
                diff_line(f, &n, bdf, NULL, "drivers_autoprobe", want->drivers_autoprobe ? "1" : "0",
                          have->drivers_autoprobe ? "1" : "0");
        if (want->driver && !streq_ptr(want->driver, have->driver))
                diff_line(f, &n, bdf, NULL, "driver", want->driver, have->driver ?: "(none)");
        /* The netdev's name may change across the kexec (udev renames it);
         * that it is there and its admin state may not. */
        if (want->netdev && !have->netdev)
                diff_line(f, &n, bdf, NULL, "netdev", want->netdev, "(none)");
        else if (want->netdev && want->netdev_up != have->netdev_up)
                diff_line(f, &n, bdf, NULL, "netdev_up", want->netdev_up ? "1" : "0", have->netdev_up ? "1" : "0");

        /* Both lists ascend by index. */
        for (size_t i = 0; i < want->n_vfs; i++) {
                const VfRecord *w = &want->vfs[i];

                while (j < have->n_vfs && have->vfs[j].index < w->index)
                        j++;
                if (j < have->n_vfs && have->vfs[j].index == w->index)
                        vf_compare(f, &n, bdf, w, &have->vfs[j]);
                else
                        diff_line(f, &n, bdf, w, "vf", "present", "missing");
        }

        if (fclose(f) != 0 || !buf)
                return -ENOMEM;
        if (n == 0) {
                if (ret_diff)
                        *ret_diff = NULL;
                return 0;
        }
        if (ret_diff) {
                *ret_diff = buf;
                buf = NULL;
        }
        return -EUCLEAN;
}
