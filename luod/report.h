/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <json-c/json.h>

#include "inventory.h"
#include "types.h"
#include "kmsg.h"
#include "restore.h"

/* Builds the report of an update as JSON (see luoctl(8) `report --json`):
 *   update_id, old_kernel, new_kernel, backend, tsc_khz,
 *   phases: [ { name, ms } ... ] in order: snapshot, kexec-load (old kernel,
 *     TSC), persist-and-kexec (state written, kexec -e, to the new kernel's
 *     start: TSC across both kernels minus CLOCK_BOOTTIME),
 *     kernel-boot-to-luod-start (CLOCK_BOOTTIME at luod start), restore
 *     (luod start to the last PF verified), total-blackout (persist-start to
 *     the last PF verified); and, inside kernel-boot-to-luod-start,
 *     kernel-pci-enumeration (kernel log time from the first to the last PCI
 *     device found; on a kernel that sleeps 1 s per PF found with VF Enable
 *     set, those sleeps are in it), left out when kboot found no device,
 *   pci_devices_found: how many devices that enumeration found,
 *   pfs: [ { bdf, recorded_bdf, identity, numvfs, result "ok"|"failed",
 *            error, driver_wait_ms, enable_ms, settings_ms, bind_ms,
 *            verify_ms, total_ms } ]
 * want: the preserved state with its timestamps (TSC ticks); luod_start_tsc
 * and boottime_us: read when luod started in the new kernel; restore_end_tsc:
 * after the last PF; kboot: this kernel's log, read at luod start (or NULL).  A phase whose timestamps are missing is left out; the
 * phases that span the kexec are left out when tsc_khz is 0.  "approximate"
 * is true then, and with the initrd backend (its state was written before
 * the kexec load, so the blackout figures include the load).  Returns a new object, NULL on OOM. */
json_object *report_build(const LuodState *want, const char *backend, const PfRestore *pfs,
                          uint64_t luod_start_tsc, uint64_t boottime_us, uint64_t restore_end_tsc,
                          const KernelBootLog *kboot);

/* "ok", "failed", "running"; NULL for anything else. */
const char *guest_result_to_string(GuestResult r);

/* "blackout-start", "persist-and-kexec", "kernel-start", "luod-start",
 * "pfs-enabled", "vfs-bound", "events-replayed", "running"; NULL for
 * anything else. */
const char *guest_phase_to_string(GuestPhaseType t);

/* The report's "guests": one object per guest, {consumer, guest, vfs,
 * result "ok"|"failed"|"running", error, downtime_ms (null until
 * GuestRunning), and once running blackout_start, approximate, phases}. */
json_object *report_guests(const Guest *guests, size_t n);

/* A guest's phases: [ {name, at_ms} ], ms since its blackout start. */
json_object *report_guest_phases(const Guest *g);

/* The one place a finished report is written: m->report (with the guests
 * and the device events' figures added) to <state_dir>/reports/<update_id>.json and
 * <state_dir>/report.json, each replaced atomically and durably (temporary
 * file, fsync, rename, directory fsync).  Returns 0 or a negative errno
 * (logged). */
int report_write(Manager *m, const char *update_id);
