/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "events.h"
#include "fs-util.h"
#include "log.h"
#include "macro.h"
#include "metrics.h"
#include "report.h"

static const StateTimestamp *ts_find(const LuodState *s, const char *name) {
        for (size_t i = 0; i < s->n_timestamps; i++)
                if (strcmp(s->timestamps[i].name, name) == 0)
                        return &s->timestamps[i];
        return NULL;
}

/* A duration in ms, printed with 0.1 ms resolution (json-c would print
 * every digit of the double). */
static json_object *ms_new(double ms) {
        char buf[32];

        snprintf(buf, sizeof(buf), "%.1f", ms);
        return json_object_new_double_s(ms, buf);
}

static void add_phase(json_object *phases, const char *name, double ms) {
        json_object *p = json_object_new_object();

        json_object_object_add(p, "name", json_object_new_string(name));
        json_object_object_add(p, "ms", ms_new(ms));
        json_object_array_add(phases, p);
}

/* Milliseconds between two TSC readings. */
static double tsc_ms(const LuodState *s, uint64_t a, uint64_t b) {
        return b >= a ? (double) (b - a) / (double) s->tsc_khz : -1;
}

static void add_tsc_phase(json_object *phases, const LuodState *s, const char *name,
                          const char *from, const char *to) {
        const StateTimestamp *a = ts_find(s, from), *b = ts_find(s, to);

        if (a && b && s->tsc_khz)
                add_phase(phases, name, tsc_ms(s, a->tsc, b->tsc));
}

static double us_ms(uint64_t a, uint64_t b) {
        return a && b >= a ? (double) (b - a) / 1000.0 : 0;
}

json_object *report_build(const LuodState *want, const char *backend, const PfRestore *pfs,
                          uint64_t luod_start_tsc, uint64_t boottime_us, uint64_t restore_end_tsc,
                          const KernelBootLog *kboot) {
        json_object *o = json_object_new_object(), *phases = json_object_new_array(),
                    *jpfs = json_object_new_array();
        const StateTimestamp *persist = ts_find(want, "persist-start");
        struct utsname u;
        char bdf[PCI_BDF_STRING_MAX];

        if (!o || !phases || !jpfs) {
                json_object_put(o);
                json_object_put(phases);
                json_object_put(jpfs);
                return NULL;
        }
        (void) uname(&u);
        json_object_object_add(o, "update_id", json_object_new_string(want->update_id));
        json_object_object_add(o, "old_kernel", json_object_new_string(want->old_kernel_release ?: ""));
        json_object_object_add(o, "new_kernel", json_object_new_string(u.release));
        json_object_object_add(o, "backend", json_object_new_string(backend));
        json_object_object_add(o, "tsc_khz", json_object_new_uint64(want->tsc_khz));
        /* Without a TSC rate nothing spans the kexec; with the initrd
         * backend the state was written before the kexec load, so the
         * blackout figures include the load. */
        json_object_object_add(o, "approximate", json_object_new_boolean(
                want->tsc_khz == 0 || !ts_find(want, "kexec-load-end")));

        add_tsc_phase(phases, want, "snapshot", "snapshot-start", "snapshot-end");
        add_tsc_phase(phases, want, "kexec-load", "kexec-load-start", "kexec-load-end");
        if (want->tsc_khz && persist) {
                /* persist-start is the old kernel's last timestamp: the
                 * state is written, then kexec -e; the new kernel started
                 * boottime_us before luod did. */
                double to_luod = tsc_ms(want, persist->tsc, luod_start_tsc);
                double boot = (double) boottime_us / 1000.0;

                add_phase(phases, "persist-and-kexec", to_luod - boot);
                add_phase(phases, "kernel-boot-to-luod-start", boot);
                if (kboot && kboot->pci_devices > 0)
                        add_phase(phases, "kernel-pci-enumeration",
                                  (double) (kboot->pci_last_us - kboot->pci_first_us) / 1000.0);
                add_phase(phases, "restore", tsc_ms(want, luod_start_tsc, restore_end_tsc));
                add_phase(phases, "total-blackout", tsc_ms(want, persist->tsc, restore_end_tsc));
        }
        json_object_object_add(o, "phases", phases);

        /* Delay inhibitors: how long each consumer held the update. */
        const StateTimestamp *prep = ts_find(want, "prepare-start");
        json_object *inh = json_object_new_array();
        for (size_t i = 0; prep && inh && i < want->n_timestamps; i++) {
                const StateTimestamp *t = &want->timestamps[i];
                bool released = strncmp(t->name, "delay-released:", 15) == 0;
                bool timeout = strncmp(t->name, "delay-timeout:", 14) == 0;

                if (!released && !timeout)
                        continue;
                json_object *e = json_object_new_object();
                json_object_object_add(e, "consumer", json_object_new_string(t->name + (released ? 15 : 14)));
                json_object_object_add(e, "held_ms", want->tsc_khz ? ms_new(tsc_ms(want, prep->tsc, t->tsc)) : NULL);
                json_object_object_add(e, "timed_out", json_object_new_boolean(timeout));
                json_object_array_add(inh, e);
        }
        json_object_object_add(o, "inhibitors", inh);
        json_object_object_add(o, "pci_devices_found", json_object_new_int64(kboot ? kboot->pci_devices : 0));

        for (size_t i = 0; i < want->n_pfs; i++) {
                const PfRestore *p = &pfs[i];
                json_object *j = json_object_new_object();

                json_object_object_add(j, "bdf", json_object_new_string(pci_bdf_format(&p->bdf, bdf)));
                json_object_object_add(j, "recorded_bdf",
                                       json_object_new_string(pci_bdf_format(&p->recorded_bdf, bdf)));
                json_object_object_add(j, "identity", p->identity ? json_object_new_string(p->identity) : NULL);
                json_object_object_add(j, "numvfs", json_object_new_int64(p->numvfs));
                json_object_object_add(j, "result", json_object_new_string(p->error ? "failed" : "ok"));
                json_object_object_add(j, "error", p->message ? json_object_new_string(p->message) : NULL);
                /* What the read-back found unlike the record, one entry per
                 * PF or VF field. */
                json_object *diffs = json_object_new_array();
                for (const char *l = p->differences; l && *l;) {
                        size_t n = strcspn(l, "\n");
                        if (n > 0)
                                json_object_array_add(diffs, json_object_new_string_len(l, (int) n));
                        l += n + (l[n] == '\n');
                }
                json_object_object_add(j, "differences", diffs);
                json_object_object_add(j, "driver_wait_ms", ms_new(us_ms(p->start_us, p->driver_us)));
                json_object_object_add(j, "enable_ms", ms_new(us_ms(p->driver_us, p->enabled_us)));
                json_object_object_add(j, "settings_ms", ms_new(us_ms(p->enabled_us, p->settings_us)));
                json_object_object_add(j, "bind_ms", ms_new(us_ms(p->settings_us, p->bound_us)));
                json_object_object_add(j, "verify_ms", ms_new(us_ms(p->bound_us, p->verified_us)));
                /* When this PF's restore ended (CLOCK_MONOTONIC µs of this
                 * kernel): its held device events go out after it. */
                json_object_object_add(j, "end_monotonic_us", json_object_new_uint64(
                        MAX(MAX(p->verified_us, p->bound_us), MAX(p->settings_us, MAX(p->enabled_us, p->driver_us)))));
                json_object_object_add(j, "total_ms", json_object_new_double(
                        us_ms(p->start_us, p->verified_us ?: p->bound_us ?: p->start_us)));
                json_object_array_add(jpfs, j);
        }
        json_object_object_add(o, "pfs", jpfs);
        return o;
}

/* Writes the report to reports/<update_id>.json and report.json in the
 * state directory, each replaced atomically and durably. */
json_object *report_guest_phases(const Guest *g) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < g->n_phases; i++) {
                json_object *p = json_object_new_object();

                if (!p)
                        break;
                json_object_object_add(p, "name", json_object_new_string(guest_phase_to_string(g->phases[i].type)));
                json_object_object_add(p, "at_ms", ms_new(g->phases[i].at_ms));
                json_object_array_add(a, p);
        }
        return a;
}

static const char *const guest_result_table[_GUEST_RESULT_MAX] = {
        [GUEST_RESULT_OK] = "ok",
        [GUEST_RESULT_FAILED] = "failed",
        [GUEST_RESULT_RUNNING] = "running",
};

const char *guest_result_to_string(GuestResult r) {
        return r >= 0 && r < _GUEST_RESULT_MAX ? guest_result_table[r] : NULL;
}

static const char *const guest_phase_table[_GUEST_PHASE_MAX] = {
        [GUEST_PHASE_BLACKOUT_START] = "blackout-start",
        [GUEST_PHASE_PERSIST_AND_KEXEC] = "persist-and-kexec",
        [GUEST_PHASE_KERNEL_START] = "kernel-start",
        [GUEST_PHASE_LUOD_START] = "luod-start",
        [GUEST_PHASE_PFS_ENABLED] = "pfs-enabled",
        [GUEST_PHASE_VFS_BOUND] = "vfs-bound",
        [GUEST_PHASE_EVENTS_REPLAYED] = "events-replayed",
        [GUEST_PHASE_RUNNING] = "running",
};

const char *guest_phase_to_string(GuestPhaseType t) {
        return t >= 0 && t < _GUEST_PHASE_MAX ? guest_phase_table[t] : NULL;
}

static json_object *guest_json(const Guest *g) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "consumer", json_object_new_string(g->consumer));
        json_object_object_add(o, "guest", json_object_new_string(g->name));
        json_object_object_add(o, "vfs", json_object_new_int64(g->vfs));
        json_object_object_add(o, "result", json_object_new_string(guest_result_to_string(g->result)));
        json_object_object_add(o, "error", g->error ? json_object_new_string(g->error) : NULL);
        json_object_object_add(o, "downtime_ms", g->running ? ms_new(g->downtime_ms) : NULL);
        if (!g->running)
                return o;
        json_object_object_add(o, "blackout_start", json_object_new_string(g->blackout_start ?: ""));
        json_object_object_add(o, "approximate", json_object_new_boolean(g->approximate));
        if (g->n_phases > 0)
                json_object_object_add(o, "phases", report_guest_phases(g));
        return o;
}

json_object *report_guests(const Guest *guests, size_t n) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < n; i++) {
                json_object *g = guest_json(&guests[i]);

                if (g)
                        json_object_array_add(a, g);
        }
        return a;
}

/* The report's "events": the device events' figures (events_stats()), or
 * NULL when out of memory. */
static json_object *events_json(Manager *m) {
        _cleanup_(events_stats_done) EventsStats s = {};
        json_object *o, *by_pf;

        if (events_stats(m, &s) < 0)
                return NULL;
        o = json_object_new_object();
        if (!o)
                return NULL;
        json_object_object_add(o, "source", json_object_new_string(s.source));
        json_object_object_add(o, "buffer", json_object_new_int64((int64_t) s.buffer));
        json_object_object_add(o, "received", json_object_new_int64((int64_t) s.received));
        json_object_object_add(o, "delivered", json_object_new_int64((int64_t) s.delivered));
        json_object_object_add(o, "held", json_object_new_int64((int64_t) s.held));
        json_object_object_add(o, "unattributed", json_object_new_int64((int64_t) s.unattributed));
        json_object_object_add(o, "dropped", json_object_new_int64((int64_t) s.dropped));
        by_pf = json_object_new_object();
        for (size_t i = 0; by_pf && i < s.n_dropped_by_pf; i++)
                json_object_object_add(by_pf, s.dropped_by_pf[i].identity,
                                       json_object_new_int64((int64_t) s.dropped_by_pf[i].dropped));
        json_object_object_add(o, "dropped_by_pf", by_pf);
        json_object_object_add(o, "late", json_object_new_int64((int64_t) s.late));
        json_object_object_add(o, "overrun", json_object_new_boolean(s.overrun));
        json_object_object_add(o, "replayed_uevents", json_object_new_int64((int64_t) s.replayed_uevents));
        return o;
}

int report_write(Manager *m, const char *update_id) {
        _cleanup_close_ int dir_fd = -EBADF, reports_fd = -EBADF;
        char name[LUOD_UUID_STRING_MAX + 8];
        const char *text;
        size_t len;
        int r;

        json_object_object_add(m->report, "guests", report_guests(m->guests, m->n_guests));
        if (m->events) {
                json_object *ev = events_json(m);
                if (ev)
                        json_object_object_add(m->report, "events", ev);
        }
        text = json_object_to_json_string_length(m->report, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED, &len);
        if (!text)
                return log_error_errno(-ENOMEM, "Failed to format the report: %m");
        (void) mkdir(m->state_dir, 0700);
        dir_fd = open(m->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                return log_error_errno(-errno, "Failed to open %s: %m", m->state_dir);
        /* A new reports/ is made durable too, not only the files in it. */
        if (mkdirat(dir_fd, "reports", 0755) >= 0)
                (void) fsync_directory_at(dir_fd, ".");
        reports_fd = openat(dir_fd, "reports", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (reports_fd < 0)
                return log_error_errno(-errno, "Failed to open %s/reports: %m", m->state_dir);
        if (snprintf(name, sizeof(name), "%s.json", update_id) >= (int) sizeof(name))
                return log_error_errno(-ENAMETOOLONG, "Update id '%.40s...' is not a UUID: %m", update_id);
        r = write_file_atomic_at(reports_fd, name, text, len, 0644);
        if (r < 0)
                return log_error_errno(r, "Failed to write %s/reports/%s: %m", m->state_dir, name);
        r = write_file_atomic_at(dir_fd, "report.json", text, len, 0644);
        if (r < 0)
                return log_error_errno(r, "Failed to write %s/report.json: %m", m->state_dir);
        /* For fleet monitoring: the same report as node_exporter metrics.
         * A failure here leaves the report written. */
        if (m->metrics_file) {
                r = metrics_write_file(m->metrics_file, m->report);
                if (r < 0)
                        log_warning_errno(r, "Failed to write the metrics file %s: %m", m->metrics_file);
        }
        return 0;
}
