/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The data model of luod's preserved state: every SR-IOV PF with its VFs
 * and their settings, recorded before kexec and restored after it.  The
 * on-disk/memfd form is in state.h and proto/state-format.md. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "macro.h"
#include "pci-util.h"

/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (lowercase hex) + NUL */
#define LUOD_UUID_STRING_MAX 37

#define VF_VLAN_MAX 4095
#define VF_QOS_MAX 7

/* Per-VF settings as rtnetlink reports them in IFLA_VF_INFO of the PF's
 * netdev.  Only meaningful when valid is true (the PF has a netdev that
 * reports them). */
typedef struct VfSettings {
        bool valid;
        uint8_t mac[6];
        uint16_t vlan;          /* 0..VF_VLAN_MAX, 0 = no VLAN */
        uint8_t qos;            /* 0..VF_QOS_MAX, 802.1p priority */
        uint16_t vlan_proto;    /* ETH_P_8021Q (0x8100) or ETH_P_8021AD (0x88a8) */
        int spoofchk;           /* -1 unknown (not reported), 0, 1 */
        int trust;              /* -1 unknown, 0, 1 */
        int rss_query_en;       /* -1 unknown, 0, 1 */
        uint32_t link_state;    /* IFLA_VF_LINK_STATE_AUTO (0), _ENABLE (1), _DISABLE (2) */
        uint32_t min_tx_rate;   /* Mbit/s, 0 = unlimited */
        uint32_t max_tx_rate;   /* Mbit/s, 0 = unlimited */
} VfSettings;

typedef struct VfRecord {
        uint32_t index;         /* VF number on its PF: virtfnN */
        PciBdf bdf;
        char *driver;           /* bound driver, NULL = unbound */
        char *driver_override;  /* /sys/.../driver_override, NULL = none */
        int iommu_group;        /* >= 0, -1 = none */
        VfSettings settings;
} VfRecord;

typedef struct PfRecord {
        PciBdf bdf;
        uint16_t vendor, device, subsystem_vendor, subsystem_device;
        char *identity;         /* stable identity across boots, e.g. "dsn:00-11-22-33-44-55-66-77" */
        char *driver;
        uint32_t numvfs;        /* sriov_numvfs */
        uint32_t totalvfs;      /* sriov_totalvfs */
        bool drivers_autoprobe; /* sriov_drivers_autoprobe */
        char *netdev;           /* PF netdev name, NULL if none */
        bool netdev_up;
        int ifindex;            /* netdev's interface index in this boot, 0 if none or
                                 * unknown; never preserved (it means nothing after a kexec) */
        VfRecord *vfs;          /* n_vfs records, ascending index */
        size_t n_vfs;
} PfRecord;

/* A point in the update, for the downtime report. */
typedef struct StateTimestamp {
        char *name;             /* e.g. "snapshot-start" */
        uint64_t tsc;           /* TSC ticks (see tsc.h), continuous across kexec */
        uint64_t realtime_ns;   /* CLOCK_REALTIME, ns since the epoch */
} StateTimestamp;

/* A VF held by a guest: which consumer (RegisterConsumer name) assigned it
 * to which of its guests; the VF by its PF's stable identity and its index,
 * never by BDF (BDFs may change across the kexec). */
typedef struct VfAssignment {
        char *consumer;
        char *guest;
        char *pf_identity;      /* PfRecord.identity */
        uint32_t vf_index;      /* 0..65535 */
        uint32_t consumer_uid;  /* the uid owning the consumer name; VF_ASSIGNMENT_NO_UID: unknown */
} VfAssignment;

#define VF_ASSIGNMENT_NO_UID UINT32_MAX

typedef struct LuodState {
        char update_id[LUOD_UUID_STRING_MAX];   /* UUID of this update */
        char *old_kernel_release;               /* uname -r of the kernel that wrote the state */
        char old_boot_id[LUOD_UUID_STRING_MAX]; /* /proc/sys/kernel/random/boot_id of that kernel */
        uint64_t tsc_khz;                       /* TSC rate, kHz; 0 = unknown */
        StateTimestamp *timestamps;
        size_t n_timestamps;
        PfRecord *pfs;                          /* n_pfs records, ascending BDF */
        size_t n_pfs;
        VfAssignment *assignments;              /* state minor >= 1; unique (pf_identity, vf_index) */
        size_t n_assignments;
        /* State minor >= 3: the boot that applied this state after the
         * kexec ("" = not applied yet) and how many times luod started
         * applying it in that boot (>= 1 when consumed_boot_id is set). */
        char consumed_boot_id[LUOD_UUID_STRING_MAX];
        uint32_t consumed_attempt;
} LuodState;

/* Frees everything s points to (not s itself) and resets *s to all-zero, so
 * it may be called again or reused.  s must be all-zero or filled by this
 * API / by hand with malloc'd strings and arrays. */
void luod_state_free(LuodState *s);

/* Frees what pf points to (its strings and VFs, not pf itself) and resets
 * *pf to all-zero. */
void pf_record_done(PfRecord *pf);

/* For a LuodState on the stack: _cleanup_luod_state_ LuodState s = {}; */
#define _cleanup_luod_state_ _cleanup_(luod_state_free)

/* Appends the timestamp (name copied; tsc in TSC ticks, realtime_ns in
 * CLOCK_REALTIME nanoseconds) to s->timestamps.  Returns 0, -EINVAL when
 * name is NULL or empty, or -ENOMEM (s unchanged). */
int luod_state_add_timestamp(LuodState *s, const char *name, uint64_t tsc, uint64_t realtime_ns);

/* Appends a copy of the assignment to s->assignments.  Returns 0, -EINVAL
 * for an empty or NULL string or vf_index > 65535, -EEXIST when that VF
 * (pf_identity, vf_index) is already assigned, or -ENOMEM (s unchanged). */
int luod_state_add_assignment(LuodState *s, const char *consumer, const char *guest,
                              const char *pf_identity, uint32_t vf_index);

/* Removes the assignment of VF (pf_identity, vf_index); with guest non-NULL
 * only when that guest holds it.  Returns 0, or -ENOENT when no such
 * assignment exists. */
int luod_state_remove_assignment(LuodState *s, const char *guest, const char *pf_identity, uint32_t vf_index);

void vf_assignment_done(VfAssignment *a);

/* Looks for two PFs of s with the same identity (compared as strings; PFs
 * without one are skipped).  Returns true and the indexes (*ret_a < *ret_b)
 * of the first such pair in s->pfs order, else false.  O(n^2) in n_pfs. */
bool luod_state_find_duplicate_identity(const LuodState *s, size_t *ret_a, size_t *ret_b);

/* The identity without its function part, as luod before state minor 3
 * wrote it: "dsn:<serial>/DD.F" -> "dsn:<serial>", "path:<parent>/DD.F/<ids>"
 * -> "path:<parent>/<ids>".  Returns a malloc'd string, or NULL when
 * identity has no function part (it is already of the old form) or when
 * out of memory (errno ENOMEM). */
char *pf_identity_without_function(const char *identity);

/* Which PF of now (a scan of this boot) each record of want is, one to
 * one: ret[i] is the index in now->pfs of want->pfs[i]'s device, or a
 * negative errno: -ENODEV when no device is that PF, -ENOTUNIQ when an
 * identity of the old form (pf_identity_without_function() gives NULL for
 * it) fits several devices and none of them has the record's BDF.  Tried in
 * this order, a device taken at most once: the identity exactly; an
 * old-form identity against each device's identity without its function,
 * the record's BDF preferred among several; the BDF alone for a record that
 * has no DSN identity, when the device there has the recorded vendor and
 * device IDs and nothing else took it.  ret has want->n_pfs entries.
 * Returns 0 or -ENOMEM. */
int luod_state_match_pfs(const LuodState *want, const LuodState *now, ssize_t *ret);

/* Rewrites each assignment of s whose pf_identity is of the old form (no
 * function part) and names none of s's PFs to the identity of the one PF
 * of s whose identity without its function equals it (VF assignments saved
 * by a luod before state minor 3, copied into a new record).  An old-form
 * identity that fits several PFs (the ports of one card) is left as it is:
 * which port was meant cannot be known.  Returns how many were rewritten,
 * or -ENOMEM. */
int luod_state_upgrade_assignments(LuodState *s);
