/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The report of an update: a typed Report (types.h) built from the
 * restore's results, changed through its fields (attempt, guests), and
 * turned into JSON and read back here only (luoctl(8) `report --json`,
 * docs/fleet-metrics.md: the field names and meanings fleet tools rely
 * on).  report-write.c writes it. */

#include <json-c/json.h>

#include "backend.h"
#include "events.h"
#include "inventory.h"
#include "types.h"
#include "kmsg.h"
#include "restore.h"

/* Builds the report of an update from its restore:
 *   update_id, old_kernel, new_kernel (this kernel's uname -r), backend,
 *   tsc_khz,
 *   phases in order: snapshot, kexec-load (old kernel, TSC),
 *     persist-and-kexec (state written, kexec -e, to the new kernel's
 *     start: TSC across both kernels minus CLOCK_BOOTTIME),
 *     kernel-boot-to-luod-start (CLOCK_BOOTTIME at luod start), restore
 *     (luod start to the last PF verified), total-blackout (persist-start
 *     to the last PF verified); and, inside kernel-boot-to-luod-start,
 *     kernel-pci-enumeration (kernel log time from the first to the last
 *     PCI device found; on a kernel that sleeps 1 s per PF found with VF
 *     Enable set, those sleeps are in it), left out when kboot found no
 *     device,
 *   inhibitors: each delay inhibitor's hold, prepare-start to its
 *     delay-released:NAME or delay-timeout:NAME timestamp,
 *   pci_devices_found: how many devices that enumeration found,
 *   pfs: one per record, from pfs[i] (want->n_pfs of them).
 * want: the preserved state with its timestamps (TSC ticks); luod_start_tsc
 * and boottime_us (µs): read when luod started in the new kernel;
 * restore_end_tsc: after the last PF; kboot: this kernel's log, read at
 * luod start (or NULL).  A phase whose timestamps are missing is left out;
 * the phases that span the kexec are left out when tsc_khz is 0.
 * approximate is true then, and with the initrd backend (its state was
 * written before the kexec load, so the blackout figures include the
 * load).  attempt, guests and events are left empty.  Returns 0 with a
 * new report in *ret (free with report_free()), or -ENOMEM. */
int report_build(const LuodState *want, const Backend *backend, const PfRestore *pfs,
                 uint64_t luod_start_tsc, uint64_t boottime_us, uint64_t restore_end_tsc,
                 const KernelBootLog *kboot, Report **ret);

/* Frees r and all it points to; NULL is fine.  Returns NULL. */
Report *report_free(Report *r);

static inline void report_freep(Report **r) {
        report_free(*r);
}

/* Replaces r's guests with a copy of the n at guests.  Returns 0 or
 * -ENOMEM (r unchanged). */
int report_set_guests(Report *r, const Guest *guests, size_t n);

/* Replaces r's device events' figures with *s, which is left empty.
 * Returns 0 or -ENOMEM (r and *s unchanged). */
int report_set_events(Report *r, EventsStats *s);

/* The phase of type t in r, or NULL when r has none. */
const ReportPhase *report_phase_find(const Report *r, ReportPhaseType t);

/* The names of the enums in the report's JSON, NULL for a value out of
 * range: "snapshot", "kexec-load", "persist-and-kexec",
 * "kernel-boot-to-luod-start", "kernel-pci-enumeration", "restore",
 * "total-blackout"; "ok", "failed"; "ok", "failed", "running";
 * "blackout-start", "persist-and-kexec", "kernel-start", "luod-start",
 * "pfs-enabled", "vfs-bound", "events-replayed", "running". */
const char *report_phase_to_string(ReportPhaseType t);
const char *pf_result_to_string(PfResult r);
const char *guest_result_to_string(GuestResult r);
const char *guest_phase_to_string(GuestPhaseType t);

/* The report as a JSON object, its members in this order (docs/fleet-
 * metrics.md, luoctl(8)):
 *   update_id, old_kernel, new_kernel, backend (its name; null if
 *   unknown), tsc_khz, approximate,
 *   phases: [ { name, ms } ],
 *   inhibitors: [ { consumer, held_ms (null without a TSC rate),
 *                   timed_out } ],
 *   pci_devices_found,
 *   pfs: [ { bdf, recorded_bdf, identity (or null), numvfs,
 *            result "ok"|"failed", error (or null), differences: [ ],
 *            driver_wait_ms, enable_ms, settings_ms, bind_ms, verify_ms,
 *            end_monotonic_us, total_ms } ],
 *   attempt, resumed, retry (left out when attempt is 0),
 *   guests (report_guests()),
 *   events: { source, buffer, received, delivered, held, unattributed,
 *             dropped, dropped_by_pf: { identity: count }, late, overrun,
 *             replayed_uevents } (left out when r->events is NULL).
 * ms figures print with 0.1 ms resolution, but total_ms with every digit.
 * Returns a new object, or NULL when out of memory. */
json_object *report_to_json(const Report *r);

/* report_to_json() as text, pretty-printed as report.json has it: sets
 * *ret_text (NUL-terminated, to free) and, when ret_len is not NULL,
 * *ret_len.  Returns 0 or -ENOMEM. */
int report_format(const Report *r, char **ret_text, size_t *ret_len);

/* Reads a report back from the JSON report_to_json() makes: the inverse
 * of report_to_json() for every report luod wrote (what it reads is
 * written again byte for byte).  Members may be missing or null (a report
 * of an older luod, a hand-made one): a number is 0 then, a string NULL,
 * a list empty, a guest without downtime_ms not running; members it does
 * not know are ignored.  update_id, a PF's or guest's result, a guest's
 * consumer and name, an inhibitor's consumer, a phase's name and duration
 * are required.  Returns 0 with a new report in *ret, -EBADMSG when o is
 * not an object, a required member is missing, a member is of another
 * type, a number out of range or not finite, a BDF, backend, result or phase name
 * unknown (with ret_error not NULL, *ret_error says which: "pfs[1]:
 * result: unknown \"lost\""; to free), or -ENOMEM. */
int report_from_json(json_object *o, Report **ret, char **ret_error);

/* report_from_json() of JSON text, which must be what report_format()
 * makes: strict JSON in UTF-8, every number finite, nothing but whitespace
 * after it (else -EBADMSG: "not JSON: ...", "a number is not finite"). */
int report_parse(const char *text, Report **ret, char **ret_error);

/* The largest report.json report_read_file() reads, and the largest text
 * it returns (a D-Bus message may have at most 128 MiB). */
#define REPORT_SIZE_MAX (UINT64_C(16) * 1024 * 1024)
#define REPORT_TEXT_MAX (UINT64_C(64) * 1024 * 1024)

/* The report a luod wrote to path (report.json) as JSON text, pretty-
 * printed as report_format() prints: the file's members as they are, also
 * those of another luod's version, which report_from_json() would drop or
 * refuse.  The file is read without blocking (a FIFO) and must be strict
 * JSON in UTF-8 with finite numbers, so that the text is JSON and can go
 * on the bus.  Returns 0 with *ret_text (to free), the negative errno of
 * opening or reading it (-ENOENT: no report), -EBADFD when path is not a
 * regular file, -EFBIG when it (or its text) is too large, -EBADMSG when it
 * is not such JSON, or -ENOMEM.  For -EFBIG and -EBADMSG, *ret_error (when
 * ret_error is not NULL; to free) says why: "not JSON: unexpected character
 * at byte 12". */
int report_read_file(const char *path, char **ret_text, char **ret_error);

/* The report's "phases" alone (for the journal), or NULL when out of
 * memory. */
json_object *report_phases_to_json(const Report *r);

/* The report's "guests": one object per guest, {consumer, guest, vfs,
 * result "ok"|"failed"|"running", error, downtime_ms (null until
 * GuestRunning), and once running blackout_start, approximate, phases}. */
json_object *report_guests(const Guest *guests, size_t n);

/* A guest's phases: [ {name, at_ms} ], ms since its blackout start. */
json_object *report_guest_phases(const Guest *g);
