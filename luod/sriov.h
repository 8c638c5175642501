/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The SR-IOV layer: reads every PF's VFs and settings from sysfs and
 * rtnetlink into the data model of inventory.h, and applies a recorded
 * state again, one step at a time, for restore.
 *
 * Everything works on the real /sys (PCI devices under
 * /sys/bus/pci/devices/<BDF>) and the real rtnetlink of the caller's network
 * namespace; most calls need root.  Each function logs its own error (see
 * log.h), naming the PF or VF by BDF or netdev, the file or attribute, and
 * the errno, and returns a negative errno. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inventory.h"
#include "pci-util.h"

/* "dsn:" + 8 bytes as "xx-" ... "xx" + NUL */
#define SRIOV_DSN_STRING_MAX 28

/* Finds the PCIe Device Serial Number extended capability (ID 0x0003) in
 * size bytes of a device's configuration space, as its sysfs `config` file
 * reads (little-endian; the extended space starts at offset 0x100).  Walks
 * the extended capability list from 0x100 through at most 480 entries, as
 * the kernel does.  A pure function of the buffer.  Returns 0 and stores the
 * serial number in *ret_dsn (the capability's dword at +4 is the low half,
 * the one at +8 the high half), or:
 *   -ENOENT   no extended configuration space in the buffer (size < 0x104),
 *             an empty list (header 0 or all ones at 0x100), or the list
 *             ends without a DSN capability;
 *   -EBADMSG  a next pointer below 0x100 (other than 0, which ends the list)
 *             or beyond the buffer, or a DSN capability cut off by its end;
 *   -ELOOP    the list does not end within 480 entries (a cycle). */
int sriov_config_find_dsn(const uint8_t *config, size_t size, uint64_t *ret_dsn);

/* Formats dsn as the identity "dsn:xx-xx-xx-xx-xx-xx-xx-xx", most
 * significant byte first (lowercase hex, the order lspci prints).  Returns
 * buf. */
const char *sriov_dsn_format(uint64_t dsn, char buf[static SRIOV_DSN_STRING_MAX]);

/* Fills state->pfs with every SR-IOV PF (a PCI device that has
 * sriov_totalvfs, enumerated with libudev), in ascending BDF order, each
 * with its VFs virtfn0 .. virtfn<numvfs-1> in index order:
 *   PF: bdf; vendor, device, subsystem_vendor, subsystem_device; identity
 *   ("dsn:..." from the Device Serial Number capability in `config`, else
 *   "path:<parent bridge's path below /sys/devices>/<vendor>:<device>:
 *   <subsystem vendor>:<subsystem device>", 4 lowercase hex digits each);
 *   driver (NULL if unbound); numvfs, totalvfs, drivers_autoprobe
 *   (sriov_numvfs, sriov_totalvfs, sriov_drivers_autoprobe); netdev (the
 *   first name under net/ in sort order, NULL if none), netdev_up (IFF_UP
 *   in its `flags`) and ifindex (its `ifindex`).
 *   VF: index, bdf, driver, driver_override (NULL when the file reads
 *   "(null)" or is empty), iommu_group (-1 without an iommu_group link) and,
 *   for a PF with a netdev, settings from the VF's IFLA_VF_INFO in an
 *   RTM_GETLINK reply for the PF netdev (requested with RTEXT_FILTER_VF);
 *   settings.valid is false when the PF has no netdev or its netdev does not
 *   report that VF.  A tri-state the driver does not report is -1.
 * state->pfs must be empty (NULL, n_pfs 0); nothing else in state is
 * touched.  Returns 0, or -EINVAL when state->pfs is not empty, -ENOMEM, or
 * the negative errno of a failed libudev call, sysfs read (e.g. -ENOENT
 * when a PF lost its VFs during the scan) or rtnetlink request; state is
 * unchanged on failure. */
int sriov_scan(LuodState *state);

/* The stable identity of the PF at bdf, as sriov_scan() gives it ("dsn:..."
 * or "path:..."), in *ret (free it).  Reads vendor, device, subsystem IDs
 * and config under /sys/bus/pci/devices/<bdf>.  Returns 0 or a negative
 * errno (logged, naming the PF). */
int sriov_pf_identity(const PciBdf *bdf, char **ret);

/* Scans the PF at bdf again, now, into *ret (all-zero before; free with
 * pf_record_done()): every field sriov_scan() fills, read as it is at this
 * moment.  For restore after sriov_pf_wait_driver(): a scan made before the
 * PF's driver bound (its module loaded by udev later) has no driver and no
 * netdev, and a netdev name read before udev renamed it is stale (the
 * ifindex stays valid).  The PCI core makes the `driver` link before the
 * driver's probe runs, and a NIC driver registers its netdev in that
 * probe: with netdev_wait_usec > 0 and no netdev under net/ yet, polls
 * every 10 ms for at most that long for one (then reads its VF settings);
 * no netdev by then is no error (ret->netdev NULL).  Reads
 * /sys/bus/pci/devices/<bdf>/{vendor,device,subsystem_*,config,driver,
 * sriov_*,net/<netdev>/{flags,ifindex},virtfnN/...} and RTM_GETLINK of the
 * netdev by ifindex.  Returns 0 or the negative errno of the failed read
 * (logged, naming the PF and the file), -ENOMEM; *ret untouched then. */
int sriov_pf_refresh(const PciBdf *bdf, uint64_t netdev_wait_usec, PfRecord *ret);

/* Waits until the PF's directory /sys/bus/pci/devices/<pf> exists and its
 * `driver` link names a driver, checking every 10 ms for at most
 * timeout_usec microseconds (0: check once).  Returns 0, -ENODEV when the PF
 * did not appear in time, -ETIMEDOUT when it appeared but got no driver in
 * time. */
int sriov_pf_wait_driver(const PciBdf *pf, uint64_t timeout_usec);

/* Writes "1" (on) or "0" to the PF's sriov_drivers_autoprobe: whether the
 * kernel probes drivers for VFs as they are created.  Returns 0 or the
 * negative errno of the write (-ENOENT: no such PF or not SR-IOV capable). */
int sriov_pf_set_autoprobe(const PciBdf *pf, bool on);

/* Makes the PF's sriov_numvfs read n: nothing is written when it already
 * does; when a different non-zero count is enabled, "0" is written first
 * (the kernel refuses to change one non-zero count into another); then n.
 * The write returns after the kernel added every VF (see sriov_pf_wait_vfs()
 * for the links).  Returns 0, -ERANGE when n exceeds sriov_totalvfs (checked
 * before anything is written), or the negative errno of a read or write of
 * those files (e.g. -ENOENT when no driver is bound to the PF). */
int sriov_pf_set_numvfs(const PciBdf *pf, uint32_t n);

/* Waits until the PF's links virtfn0 .. virtfn<n-1> all exist, checking
 * every 10 ms for at most timeout_usec microseconds (0: check once).
 * Returns 0, -ENODEV when the PF's directory is gone, or -ETIMEDOUT. */
int sriov_pf_wait_vfs(const PciBdf *pf, uint32_t n, uint64_t timeout_usec);

/* Applies vf->settings (must be valid) to VF vf->index of the PF netdev
 * with interface index pf_ifindex when > 0 (a udev rename does not change
 * it), else of the one named pf_netdev (the name is also what errors say),
 * over rtnetlink (libnl-route-3): reads the VF's current settings
 * with RTM_GETLINK and sends one RTM_NEWLINK per setting that differs, in
 * this order: IFLA_VF_MAC, IFLA_VF_VLAN or IFLA_VF_VLAN_LIST (vlan, qos,
 * vlan_proto together), IFLA_VF_RATE (min_tx_rate and max_tx_rate together,
 * Mbit/s), IFLA_VF_SPOOFCHK, IFLA_VF_TRUST, IFLA_VF_LINK_STATE,
 * IFLA_VF_RSS_QUERY_EN.  Tri-states that are -1 are left alone.  Works with
 * or without a driver on the VF: the MAC set here is the administrative MAC
 * the VF's driver picks up when it binds.  Stops at the first setting the
 * kernel refuses.  Returns 0, or:
 *   -EINVAL   vf->settings is not valid (or the kernel refused a value);
 *   -ENODEV   no such netdev;
 *   -ENOENT   pf_netdev does not report VF vf->index;
 *   -ENOMEM;
 *   the kernel's error for the refused setting, e.g. -EOPNOTSUPP (the
 *   driver cannot set it) or -EPROTONOSUPPORT (igb and 802.1ad). */
int sriov_vf_apply_settings(const char *pf_netdev, int pf_ifindex, const VfRecord *vf);

/* Sets the PF netdev pf_netdev (by interface index pf_ifindex when > 0: a
 * udev rename does not change it) administratively up (IFF_UP) or down over
 * rtnetlink (RTM_GETLINK, then RTM_NEWLINK with the IFF_UP change when it
 * differs), then reads the flags back.  VFs of a down PF carry no traffic,
 * and some drivers refuse VF settings while the PF is down.  Returns 0 (also
 * when nothing needed changing), -EIO when the flag read back is not the one
 * set, or the negative errno of the rtnetlink request (-ENODEV: no such
 * netdev). */
int sriov_pf_set_link_up(const char *pf_netdev, int pf_ifindex, bool up);

/* Binds the VF to driver (NULL: leaves it unbound) through its
 * driver_override (never new_id): writes driver_override (the string, or
 * "\n" to clear it when NULL); when the VF is bound to another driver than
 * driver, writes its BDF to driver/unbind; then, if driver is not NULL and
 * the VF is not bound to it yet, writes the BDF to /sys/bus/pci/drivers_probe
 * and checks that the VF's `driver` link names driver.  Returns 0, -ENXIO
 * when the probe left the VF unbound or on another driver, or the negative
 * errno of a write (e.g. -ENOENT: no such VF). */
int sriov_vf_bind(const PciBdf *vf, const char *driver_override, const char *driver);

/* The BDF of VF index of the PF now: the target of its virtfn<index> link.
 * Returns 0, -ENOENT when there is no such VF, or the errno of readlink(). */
int sriov_vf_bdf(const PciBdf *pf, uint32_t index, PciBdf *ret);

/* Writes "\n" to the VF's driver_override (clears it; does not unbind).
 * Returns 0 or the negative errno of the write. */
int sriov_vf_clear_override(const PciBdf *vf);

/* Compares what restore must reproduce of the PF want (a record) on the PF
 * have (as scanned now): numvfs, drivers_autoprobe, the PF driver (when
 * want has one), that a recorded netdev is there (its name may differ) and
 * its admin state (netdev_up) and, for every VF of
 * want, by index: that have lists it, its driver, driver_override and, when
 * want's settings are valid, every setting (tri-states only when want's is
 * not -1, the MAC only when want's is not all-zero: no administrative MAC).  BDFs and IOMMU group numbers are not compared: they may change
 * across a kexec.  Returns 0 when equal (*ret_diff = NULL), -EUCLEAN when
 * not, with *ret_diff a malloc'd text of one line per difference, e.g.
 * "PF 0000:01:00.0 VF 1: mac: want 02:11:22:33:44:55, have
 * 00:00:00:00:00:00" (PF named by have's BDF), or -ENOMEM.  ret_diff may be
 * NULL. */
int sriov_pf_compare(const PfRecord *want, const PfRecord *have, char **ret_diff);
