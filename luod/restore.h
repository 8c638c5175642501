/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <systemd/sd-event.h>

#include "inventory.h"

/* Per-PF outcome of a restore.  Times are CLOCK_MONOTONIC microseconds
 * (this kernel; 0 = step not reached). */
typedef struct PfRestore {
        PciBdf recorded_bdf;    /* the PF's BDF in the old kernel */
        PciBdf bdf;             /* where it is now (found by identity) */
        char *identity;
        uint32_t numvfs;
        int error;              /* 0, or the negative errno of the failed step */
        char *message;          /* what failed, naming the object; NULL on success */
        char *differences;      /* read back unlike the record: one line per field
                                 * ("PF <bdf> [VF <n>]: <field>: want W, have H"); NULL if none */
        uint64_t start_us;
        uint64_t driver_us;     /* PF driver bound */
        uint64_t enabled_us;    /* sriov_numvfs written, all VFs present */
        uint64_t settings_us;   /* VF settings applied through the PF netdev */
        uint64_t bound_us;      /* VFs bound as recorded */
        uint64_t verified_us;   /* read back and compared */
} PfRestore;

typedef struct RestoreOptions {
        uint64_t driver_wait_usec;      /* bound on waiting for a PF driver */
        uint64_t vf_wait_usec;          /* bound on waiting for the VFs to appear */
        uint64_t pf_deadline_usec;      /* bound on one PF's whole restore */
        unsigned max_parallel;          /* workers at once; 0 = one per PF */
        sd_event *event;                /* run while the workers do (unless it is
                                         * dispatching already); NULL: none */
} RestoreOptions;

#define RESTORE_OPTIONS_DEFAULT                                                \
        (RestoreOptions) {                                                     \
                .driver_wait_usec = 30 * 1000 * 1000,                          \
                .vf_wait_usec = 60 * 1000 * 1000,                              \
                .pf_deadline_usec = 180 * 1000 * 1000,                         \
        }

/* Restores every PF of want in parallel, one worker thread per PF: finds the
 * PF now by its stable identity, each record a device of its own
 * (luod_state_match_pfs(); BDF only as a hint), waits (bounded) for its
 * driver, reads the PF again (sriov_pf_refresh(): its driver, netdev and
 * ifindex as they are once the driver is bound, waiting for a recorded
 * netdev to register), writes sriov_drivers_autoprobe 0, sriov_numvfs
 * (nothing when equal; 0 first when another non-zero count is there), waits
 * for every virtfnN, sets the PF netdev up or down as recorded (read back),
 * applies the VF settings through the PF netdev (by
 * ifindex) over rtnetlink (admin MAC before any VF driver binds), loads the
 * module of each recorded VF driver not registered yet
 * (drivers_load_vf_drivers()), binds each VF as recorded (driver_override +
 * drivers_probe), writes the recorded sriov_drivers_autoprobe, then reads the
 * PF back at its BDF (sriov_pf_refresh(), on the worker: no scan of the bus)
 * and compares: an identity changed since the start is -ENODEV ("gone"), a
 * field unlike the record -EUCLEAN with the differences.  A PF that fails
 * does not hold up the others.
 * While the workers run, opt->event runs in this thread (when set and not
 * dispatching already): its sources are served, no others are run.
 *
 * On return *ret_pfs holds want->n_pfs results (free with
 * restore_results_free()).  Returns 0 when every PF was restored and
 * verified, -EUCLEAN when some failed (see each result), -ENOMEM. */
int restore_all(const LuodState *want, const RestoreOptions *opt, PfRestore **ret_pfs);

void restore_results_free(PfRestore *pfs, size_t n);

