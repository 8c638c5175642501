/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "events.h"
#include "fs-util.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "report.h"

/* ---- names ----------------------------------------------------------- */

static const char *const report_phase_table[_REPORT_PHASE_MAX] = {
        [REPORT_PHASE_SNAPSHOT] = "snapshot",
        [REPORT_PHASE_KEXEC_LOAD] = "kexec-load",
        [REPORT_PHASE_PERSIST_AND_KEXEC] = "persist-and-kexec",
        [REPORT_PHASE_KERNEL_BOOT_TO_LUOD_START] = "kernel-boot-to-luod-start",
        [REPORT_PHASE_KERNEL_PCI_ENUMERATION] = "kernel-pci-enumeration",
        [REPORT_PHASE_RESTORE] = "restore",
        [REPORT_PHASE_TOTAL_BLACKOUT] = "total-blackout",
};

static const char *const pf_result_table[_PF_RESULT_MAX] = {
        [PF_RESULT_OK] = "ok",
        [PF_RESULT_FAILED] = "failed",
};

static const char *const guest_result_table[_GUEST_RESULT_MAX] = {
        [GUEST_RESULT_OK] = "ok",
        [GUEST_RESULT_FAILED] = "failed",
        [GUEST_RESULT_RUNNING] = "running",
};

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

const char *report_phase_to_string(ReportPhaseType t) {
        return t >= 0 && t < _REPORT_PHASE_MAX ? report_phase_table[t] : NULL;
}

const char *pf_result_to_string(PfResult r) {
        return r >= 0 && r < _PF_RESULT_MAX ? pf_result_table[r] : NULL;
}

const char *guest_result_to_string(GuestResult r) {
        return r >= 0 && r < _GUEST_RESULT_MAX ? guest_result_table[r] : NULL;
}

const char *guest_phase_to_string(GuestPhaseType t) {
        return t >= 0 && t < _GUEST_PHASE_MAX ? guest_phase_table[t] : NULL;
}

/* ---- the model --------------------------------------------------------- */

static void report_pf_done(ReportPf *p) {
        free(p->identity);
        free(p->error);
        for (size_t i = 0; i < p->n_differences; i++)
                free(p->differences[i]);
        free(p->differences);
}

static void report_guests_free(Guest *guests, size_t n) {
        for (size_t i = 0; i < n; i++)
                guest_done(&guests[i]);
        free(guests);
}

static void report_events_free(EventsStats *s) {
        if (s)
                events_stats_done(s);
        free(s);
}

Report *report_free(Report *r) {
        if (!r)
                return NULL;
        free(r->update_id);
        free(r->old_kernel);
        free(r->new_kernel);
        for (size_t i = 0; i < r->n_inhibitors; i++)
                free(r->inhibitors[i].consumer);
        free(r->inhibitors);
        for (size_t i = 0; i < r->n_pfs; i++)
                report_pf_done(&r->pfs[i]);
        free(r->pfs);
        report_guests_free(r->guests, r->n_guests);
        report_events_free(r->events);
        free(r);
        return NULL;
}

int report_set_guests(Report *r, const Guest *guests, size_t n) {
        Guest *g = calloc(n ?: 1, sizeof(Guest));

        if (!g)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                g[i] = guests[i];
                g[i].consumer = strdup(guests[i].consumer);
                g[i].name = strdup(guests[i].name);
                g[i].error = guests[i].error ? strdup(guests[i].error) : NULL;
                g[i].blackout_start = guests[i].blackout_start ? strdup(guests[i].blackout_start) : NULL;
                if (!g[i].consumer || !g[i].name || (guests[i].error && !g[i].error) ||
                    (guests[i].blackout_start && !g[i].blackout_start)) {
                        report_guests_free(g, i + 1);
                        return -ENOMEM;
                }
        }
        report_guests_free(r->guests, r->n_guests);
        r->guests = g;
        r->n_guests = n;
        return 0;
}

int report_set_events(Report *r, EventsStats *s) {
        EventsStats *e = malloc(sizeof(EventsStats));

        if (!e)
                return -ENOMEM;
        *e = *s;
        *s = (EventsStats) {};
        report_events_free(r->events);
        r->events = e;
        return 0;
}

const ReportPhase *report_phase_find(const Report *r, ReportPhaseType t) {
        for (size_t i = 0; i < r->n_phases; i++)
                if (r->phases[i].type == t)
                        return &r->phases[i];
        return NULL;
}

/* ---- built from a restore --------------------------------------------- */

static const StateTimestamp *ts_find(const LuodState *s, const char *name) {
        for (size_t i = 0; i < s->n_timestamps; i++)
                if (strcmp(s->timestamps[i].name, name) == 0)
                        return &s->timestamps[i];
        return NULL;
}

/* Milliseconds between two TSC readings; -1 when b is before a. */
static double tsc_ms(const LuodState *s, uint64_t a, uint64_t b) {
        return b >= a ? (double) (b - a) / (double) s->tsc_khz : -1;
}

static double us_ms(uint64_t a, uint64_t b) {
        return a && b >= a ? (double) (b - a) / 1000.0 : 0;
}

/* Each phase is added at most once: r->phases has room for all. */
static void add_phase(Report *r, ReportPhaseType t, double ms) {
        if (r->n_phases < _REPORT_PHASE_MAX)
                r->phases[r->n_phases++] = (ReportPhase) { .type = t, .ms = ms };
}

static void add_tsc_phase(Report *r, const LuodState *s, ReportPhaseType t, const char *from, const char *to) {
        const StateTimestamp *a = ts_find(s, from), *b = ts_find(s, to);

        if (a && b && s->tsc_khz)
                add_phase(r, t, tsc_ms(s, a->tsc, b->tsc));
}

static void build_phases(Report *r, const LuodState *want, uint64_t luod_start_tsc, uint64_t boottime_us,
                         uint64_t restore_end_tsc, const KernelBootLog *kboot) {
        const StateTimestamp *persist = ts_find(want, "persist-start");

        add_tsc_phase(r, want, REPORT_PHASE_SNAPSHOT, "snapshot-start", "snapshot-end");
        add_tsc_phase(r, want, REPORT_PHASE_KEXEC_LOAD, "kexec-load-start", "kexec-load-end");
        if (!want->tsc_khz || !persist)
                return;
        /* persist-start is the old kernel's last timestamp: the state is
         * written, then kexec -e; the new kernel started boottime_us before
         * luod did. */
        double to_luod = tsc_ms(want, persist->tsc, luod_start_tsc);
        double boot = (double) boottime_us / 1000.0;

        add_phase(r, REPORT_PHASE_PERSIST_AND_KEXEC, to_luod - boot);
        add_phase(r, REPORT_PHASE_KERNEL_BOOT_TO_LUOD_START, boot);
        if (kboot && kboot->pci_devices > 0)
                add_phase(r, REPORT_PHASE_KERNEL_PCI_ENUMERATION,
                          (double) (kboot->pci_last_us - kboot->pci_first_us) / 1000.0);
        add_phase(r, REPORT_PHASE_RESTORE, tsc_ms(want, luod_start_tsc, restore_end_tsc));
        add_phase(r, REPORT_PHASE_TOTAL_BLACKOUT, tsc_ms(want, persist->tsc, restore_end_tsc));
}

/* Delay inhibitors: how long each consumer held the update, from the
 * delay-released:NAME and delay-timeout:NAME timestamps (none without
 * prepare-start). */
static int build_inhibitors(Report *r, const LuodState *want) {
        const StateTimestamp *prep = ts_find(want, "prepare-start");

        if (!prep)
                return 0;
        r->inhibitors = calloc(want->n_timestamps ?: 1, sizeof(ReportInhibitor));
        if (!r->inhibitors)
                return -ENOMEM;
        for (size_t i = 0; i < want->n_timestamps; i++) {
                const StateTimestamp *t = &want->timestamps[i];
                bool released = strncmp(t->name, "delay-released:", 15) == 0;
                bool timeout = strncmp(t->name, "delay-timeout:", 14) == 0;
                ReportInhibitor *h = &r->inhibitors[r->n_inhibitors];

                if (!released && !timeout)
                        continue;
                h->consumer = strdup(t->name + (released ? 15 : 14));
                if (!h->consumer)
                        return -ENOMEM;
                h->has_held_ms = want->tsc_khz > 0;
                h->held_ms = want->tsc_khz ? tsc_ms(want, prep->tsc, t->tsc) : 0;
                h->timed_out = timeout;
                r->n_inhibitors++;
        }
        return 0;
}

/* What the read-back found unlike the record, one line per PF or VF field,
 * into p->differences (empty lines skipped). */
static int split_differences(ReportPf *p, const char *text) {
        for (const char *l = text; l && *l;) {
                size_t n = strcspn(l, "\n");

                if (n > 0) {
                        char **a = reallocarray(p->differences, p->n_differences + 1, sizeof(char *));
                        if (!a)
                                return -ENOMEM;
                        p->differences = a;
                        p->differences[p->n_differences] = strndup(l, n);
                        if (!p->differences[p->n_differences])
                                return -ENOMEM;
                        p->n_differences++;
                }
                l += n + (l[n] == '\n');
        }
        return 0;
}

static int build_pf(ReportPf *j, const PfRestore *p) {
        *j = (ReportPf) {
                .bdf = p->bdf,
                .recorded_bdf = p->recorded_bdf,
                .numvfs = p->numvfs,
                .result = p->error ? PF_RESULT_FAILED : PF_RESULT_OK,
                .driver_wait_ms = us_ms(p->start_us, p->driver_us),
                .enable_ms = us_ms(p->driver_us, p->enabled_us),
                .settings_ms = us_ms(p->enabled_us, p->settings_us),
                .bind_ms = us_ms(p->settings_us, p->bound_us),
                .verify_ms = us_ms(p->bound_us, p->verified_us),
                .total_ms = us_ms(p->start_us, p->verified_us ?: p->bound_us ?: p->start_us),
                /* When this PF's restore ended: its held device events go
                 * out after it. */
                .end_monotonic_us = MAX(MAX(p->verified_us, p->bound_us),
                                        MAX(p->settings_us, MAX(p->enabled_us, p->driver_us))),
        };
        if (p->identity && !(j->identity = strdup(p->identity)))
                return -ENOMEM;
        if (p->message && !(j->error = strdup(p->message)))
                return -ENOMEM;
        return split_differences(j, p->differences);
}

int report_build(const LuodState *want, const Backend *backend, const PfRestore *pfs,
                 uint64_t luod_start_tsc, uint64_t boottime_us, uint64_t restore_end_tsc,
                 const KernelBootLog *kboot, Report **ret) {
        _cleanup_(report_freep) Report *r = NULL;
        struct utsname u = {};
        int k;

        r = calloc(1, sizeof(Report));
        if (!r)
                return -ENOMEM;
        (void) uname(&u);
        r->update_id = strdup(want->update_id);
        r->old_kernel = strdup(want->old_kernel_release ?: "");
        r->new_kernel = strdup(u.release);
        r->pfs = calloc(want->n_pfs ?: 1, sizeof(ReportPf));
        if (!r->update_id || !r->old_kernel || !r->new_kernel || !r->pfs)
                return -ENOMEM;
        r->backend = backend;
        r->tsc_khz = want->tsc_khz;
        /* Without a TSC rate nothing spans the kexec; with the initrd
         * backend the state was written before the kexec load, so the
         * blackout figures include the load. */
        r->approximate = want->tsc_khz == 0 || !ts_find(want, "kexec-load-end");
        build_phases(r, want, luod_start_tsc, boottime_us, restore_end_tsc, kboot);
        k = build_inhibitors(r, want);
        if (k < 0)
                return k;
        r->pci_devices_found = kboot ? kboot->pci_devices : 0;
        for (; r->n_pfs < want->n_pfs; r->n_pfs++) {
                k = build_pf(&r->pfs[r->n_pfs], &pfs[r->n_pfs]);
                if (k < 0) {
                        r->n_pfs++;     /* freed with the rest */
                        return k;
                }
        }
        *ret = TAKE_PTR(r);
        return 0;
}

/* ---- JSON ------------------------------------------------------------- */

/* A duration in ms, printed with 0.1 ms resolution (json-c would print
 * every digit of the double). */
static json_object *ms_new(double ms) {
        char buf[DBL_MAX_10_EXP + 8];   /* "%.1f" of any finite double: never cut short */

        snprintf(buf, sizeof(buf), "%.1f", ms);
        return json_object_new_double_s(ms, buf);
}

static json_object *string_or_null(const char *s) {
        return s ? json_object_new_string(s) : NULL;
}

json_object *report_phases_to_json(const Report *r) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < r->n_phases; i++) {
                json_object *p = json_object_new_object();

                if (!p)
                        break;
                json_object_object_add(p, "name", json_object_new_string(report_phase_to_string(r->phases[i].type)));
                json_object_object_add(p, "ms", ms_new(r->phases[i].ms));
                json_object_array_add(a, p);
        }
        return a;
}

static json_object *inhibitors_to_json(const Report *r) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < r->n_inhibitors; i++) {
                const ReportInhibitor *h = &r->inhibitors[i];
                json_object *e = json_object_new_object();

                if (!e)
                        break;
                json_object_object_add(e, "consumer", json_object_new_string(h->consumer));
                json_object_object_add(e, "held_ms", h->has_held_ms ? ms_new(h->held_ms) : NULL);
                json_object_object_add(e, "timed_out", json_object_new_boolean(h->timed_out));
                json_object_array_add(a, e);
        }
        return a;
}

static json_object *pf_to_json(const ReportPf *p) {
        json_object *j = json_object_new_object(), *diffs = json_object_new_array();
        char bdf[PCI_BDF_STRING_MAX];

        if (!j || !diffs) {
                json_object_put(j);
                json_object_put(diffs);
                return NULL;
        }
        json_object_object_add(j, "bdf", json_object_new_string(pci_bdf_format(&p->bdf, bdf)));
        json_object_object_add(j, "recorded_bdf", json_object_new_string(pci_bdf_format(&p->recorded_bdf, bdf)));
        json_object_object_add(j, "identity", string_or_null(p->identity));
        json_object_object_add(j, "numvfs", json_object_new_int64(p->numvfs));
        json_object_object_add(j, "result", json_object_new_string(pf_result_to_string(p->result)));
        json_object_object_add(j, "error", string_or_null(p->error));
        for (size_t i = 0; i < p->n_differences; i++)
                json_object_array_add(diffs, json_object_new_string(p->differences[i]));
        json_object_object_add(j, "differences", diffs);
        json_object_object_add(j, "driver_wait_ms", ms_new(p->driver_wait_ms));
        json_object_object_add(j, "enable_ms", ms_new(p->enable_ms));
        json_object_object_add(j, "settings_ms", ms_new(p->settings_ms));
        json_object_object_add(j, "bind_ms", ms_new(p->bind_ms));
        json_object_object_add(j, "verify_ms", ms_new(p->verify_ms));
        json_object_object_add(j, "end_monotonic_us", json_object_new_uint64(p->end_monotonic_us));
        json_object_object_add(j, "total_ms", json_object_new_double(p->total_ms));
        return j;
}

static json_object *events_to_json(const EventsStats *s) {
        json_object *o = json_object_new_object(), *by_pf, *rel;

        if (!o)
                return NULL;
        json_object_object_add(o, "source", string_or_null(s->source));
        json_object_object_add(o, "buffer", json_object_new_uint64(s->buffer));
        json_object_object_add(o, "received", json_object_new_uint64(s->received));
        json_object_object_add(o, "delivered", json_object_new_uint64(s->delivered));
        json_object_object_add(o, "held", json_object_new_uint64(s->held));
        json_object_object_add(o, "unattributed", json_object_new_uint64(s->unattributed));
        json_object_object_add(o, "dropped", json_object_new_uint64(s->dropped));
        by_pf = json_object_new_object();
        for (size_t i = 0; by_pf && i < s->n_dropped_by_pf; i++)
                json_object_object_add(by_pf, s->dropped_by_pf[i].identity,
                                       json_object_new_uint64(s->dropped_by_pf[i].dropped));
        json_object_object_add(o, "dropped_by_pf", by_pf);
        json_object_object_add(o, "late", json_object_new_uint64(s->late));
        json_object_object_add(o, "overrun", json_object_new_boolean(s->overrun));
        json_object_object_add(o, "replayed_uevents", json_object_new_uint64(s->replayed_uevents));
        json_object_object_add(o, "waited_out", json_object_new_uint64(s->waited_out));
        rel = json_object_new_object();
        if (rel && s->released) {
                json_object_object_add(rel, "after_restore_ms", json_object_new_double(s->release.after_restore_ms));
                json_object_object_add(rel, "until_attach_ms", json_object_new_double(s->release.until_attach_ms));
                json_object_object_add(rel, "scan_ms", json_object_new_double(s->release.scan_ms));
                json_object_object_add(rel, "attribute_ms", json_object_new_double(s->release.attribute_ms));
                json_object_object_add(rel, "udev_queue_ms", json_object_new_double(s->release.udev_queue_ms));
        }
        json_object_object_add(o, "release", rel);
        return o;
}

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

static json_object *guest_json(const Guest *g) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "consumer", json_object_new_string(g->consumer));
        json_object_object_add(o, "guest", json_object_new_string(g->name));
        json_object_object_add(o, "vfs", json_object_new_int64(g->vfs));
        json_object_object_add(o, "result", json_object_new_string(guest_result_to_string(g->result)));
        json_object_object_add(o, "error", string_or_null(g->error));
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

json_object *report_to_json(const Report *r) {
        json_object *o = json_object_new_object(), *pfs = json_object_new_array();

        if (!o || !pfs) {
                json_object_put(o);
                json_object_put(pfs);
                return NULL;
        }
        json_object_object_add(o, "update_id", json_object_new_string(r->update_id));
        json_object_object_add(o, "old_kernel", json_object_new_string(r->old_kernel ?: ""));
        json_object_object_add(o, "new_kernel", json_object_new_string(r->new_kernel ?: ""));
        json_object_object_add(o, "backend", r->backend ? json_object_new_string(r->backend->name) : NULL);
        json_object_object_add(o, "tsc_khz", json_object_new_uint64(r->tsc_khz));
        json_object_object_add(o, "approximate", json_object_new_boolean(r->approximate));
        json_object_object_add(o, "phases", report_phases_to_json(r));
        json_object_object_add(o, "inhibitors", inhibitors_to_json(r));
        json_object_object_add(o, "pci_devices_found", json_object_new_int64(r->pci_devices_found));
        for (size_t i = 0; i < r->n_pfs; i++)
                json_object_array_add(pfs, pf_to_json(&r->pfs[i]));
        json_object_object_add(o, "pfs", pfs);
        if (r->attempt > 0) {
                json_object_object_add(o, "attempt", json_object_new_int64(r->attempt));
                json_object_object_add(o, "resumed", json_object_new_boolean(r->resumed));
                json_object_object_add(o, "retry", json_object_new_boolean(r->retry));
        }
        json_object_object_add(o, "guests", report_guests(r->guests, r->n_guests));
        if (r->events)
                json_object_object_add(o, "events", events_to_json(r->events));
        return o;
}

int report_format(const Report *r, char **ret_text, size_t *ret_len) {
        _cleanup_(json_object_putp) json_object *o = report_to_json(r);
        const char *text;
        size_t len;
        char *copy;

        if (!o)
                return -ENOMEM;
        text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED, &len);
        if (!text)
                return -ENOMEM;
        copy = strndup(text, len);
        if (!copy)
                return -ENOMEM;
        *ret_text = copy;
        if (ret_len)
                *ret_len = len;
        return 0;
}

/* ---- read back ---------------------------------------------------------- */

/* Each reader sets *error ("where: key: reason", json_fail()) when it
 * refuses; where names the object ("pfs[1]"), NULL for the report. */

static int from_table(const char *const *table, size_t n, const char *s) {
        for (size_t i = 0; s && i < n; i++)
                if (table[i] && strcmp(table[i], s) == 0)
                        return (int) i;
        return -EINVAL;
}

/* Whether o has key with a value: a member may be missing or null. */
static bool present(json_object *o, const char *key) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && v;
}

/* A copy of the string under key in *ret; left NULL when missing or null
 * (refused when required). */
static int get_string(char **error, const char *where, json_object *o, const char *key, bool required,
                      char **ret) {
        if (!present(o, key))
                return required ? json_fail(-EBADMSG, error, where, key, "missing") : 0;
        return json_get_strdup(error, where, o, key, false, ret);
}

static int get_uint(char **error, const char *where, json_object *o, const char *key, uint64_t max,
                    uint64_t *ret) {
        return present(o, key) ? json_get_uint(error, where, o, key, max, false, ret) : 0;
}

/* A number (json-c reads 12.0 as a double, 12 as an integer). */
static int get_double(char **error, const char *where, json_object *o, const char *key, double *ret) {
        json_object *v;

        if (!present(o, key))
                return 0;
        v = json_object_object_get(o, key);
        if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
                return json_fail(-EBADMSG, error, where, key, "expected a number, got %s",
                                 json_type_to_name(json_object_get_type(v)));
        if (!isfinite(json_object_get_double(v)))
                return json_fail(-EBADMSG, error, where, key, "not a finite number");
        *ret = json_object_get_double(v);
        return 1;
}

static int get_bool(char **error, const char *where, json_object *o, const char *key, bool *ret) {
        json_object *v;
        int r;

        if (!present(o, key))
                return 0;
        r = json_get_member(error, where, o, key, json_type_boolean, false, &v);
        if (r > 0)
                *ret = json_object_get_boolean(v);
        return r;
}

/* The value of the enum named by table whose name is under key (required). */
static int get_enum(char **error, const char *where, json_object *o, const char *key,
                    const char *const *table, size_t n, int *ret) {
        const char *s;
        int r;

        r = json_get_str(error, where, o, key, false, &s);
        if (r < 0)
                return r;
        r = from_table(table, n, s);
        if (r < 0)
                return json_fail(-EBADMSG, error, where, key, "unknown \"%s\"", s);
        *ret = r;
        return 1;
}

static int get_bdf(char **error, const char *where, json_object *o, const char *key, PciBdf *ret) {
        return present(o, key) ? json_get_bdf(error, where, o, key, ret) : 0;
}

/* The array under key and its length (0 when missing or null); each
 * element must be of type element. */
static int get_array(char **error, const char *where, json_object *o, const char *key, json_type element,
                     json_object **ret, size_t *ret_n) {
        json_object *a;
        int r;

        *ret_n = 0;
        if (!present(o, key))
                return 0;
        r = json_get_member(error, where, o, key, json_type_array, false, &a);
        if (r < 0)
                return r;
        for (size_t i = 0; i < json_object_array_length(a); i++)
                if (!json_object_is_type(json_object_array_get_idx(a, i), element))
                        return json_fail(-EBADMSG, error, where, key, "element %zu is not %s", i,
                                         json_type_to_name(element));
        *ret = a;
        *ret_n = json_object_array_length(a);
        return 1;
}

static int parse_backend(char **error, json_object *o, Report *r) {
        _cleanup_free_ char *name = NULL;
        int k;

        k = get_string(error, NULL, o, "backend", false, &name);
        if (k <= 0)
                return k;
        for (size_t i = 0; backends[i]; i++)
                if (strcmp(backends[i]->name, name) == 0) {
                        r->backend = backends[i];
                        return 1;
                }
        return json_fail(-EBADMSG, error, NULL, "backend", "unknown \"%s\"", name);
}

static int parse_header(char **error, json_object *o, Report *r) {
        uint64_t u = 0;
        int k;

        k = get_string(error, NULL, o, "update_id", true, &r->update_id);
        if (k >= 0)
                k = get_string(error, NULL, o, "old_kernel", false, &r->old_kernel);
        if (k >= 0)
                k = get_string(error, NULL, o, "new_kernel", false, &r->new_kernel);
        if (k >= 0)
                k = parse_backend(error, o, r);
        if (k >= 0)
                k = get_uint(error, NULL, o, "tsc_khz", UINT64_MAX, &r->tsc_khz);
        if (k >= 0)
                k = get_bool(error, NULL, o, "approximate", &r->approximate);
        if (k >= 0 && (k = get_uint(error, NULL, o, "pci_devices_found", UINT_MAX, &u)) > 0)
                r->pci_devices_found = (unsigned) u;
        if (k >= 0 && (k = get_uint(error, NULL, o, "attempt", UINT_MAX, &u)) > 0)
                r->attempt = (unsigned) u;
        if (k >= 0)
                k = get_bool(error, NULL, o, "resumed", &r->resumed);
        if (k >= 0)
                k = get_bool(error, NULL, o, "retry", &r->retry);
        return k;
}

static int parse_phases(char **error, json_object *o, Report *r) {
        json_object *a;
        char where[48];
        size_t n;
        int k, t;

        k = get_array(error, NULL, o, "phases", json_type_object, &a, &n);
        if (k < 0)
                return k;
        if (n > _REPORT_PHASE_MAX)
                return json_fail(-EBADMSG, error, NULL, "phases", "more than %d", _REPORT_PHASE_MAX);
        for (size_t i = 0; i < n; i++) {
                json_object *p = json_object_array_get_idx(a, i);

                snprintf(where, sizeof(where), "phases[%zu]", i);
                k = get_enum(error, where, p, "name", report_phase_table, _REPORT_PHASE_MAX, &t);
                if (k < 0)
                        return k;
                k = get_double(error, where, p, "ms", &r->phases[i].ms);
                if (k <= 0)
                        return k < 0 ? k : json_fail(-EBADMSG, error, where, "ms", "missing");
                r->phases[i].type = t;
                r->n_phases++;
        }
        return 0;
}

static int parse_inhibitors(char **error, json_object *o, Report *r) {
        json_object *a;
        char where[48];
        size_t n;
        int k;

        k = get_array(error, NULL, o, "inhibitors", json_type_object, &a, &n);
        if (k <= 0)
                return k;
        r->inhibitors = calloc(n ?: 1, sizeof(ReportInhibitor));
        if (!r->inhibitors)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(a, i);
                ReportInhibitor *h = &r->inhibitors[r->n_inhibitors++];

                snprintf(where, sizeof(where), "inhibitors[%zu]", i);
                k = get_string(error, where, e, "consumer", true, &h->consumer);
                if (k >= 0 && (k = get_double(error, where, e, "held_ms", &h->held_ms)) > 0)
                        h->has_held_ms = true;
                if (k >= 0)
                        k = get_bool(error, where, e, "timed_out", &h->timed_out);
                if (k < 0)
                        return k;
        }
        return 0;
}

static int parse_differences(char **error, const char *where, json_object *o, ReportPf *p) {
        json_object *a;
        size_t n;
        int k;

        k = get_array(error, where, o, "differences", json_type_string, &a, &n);
        if (k <= 0)
                return k;
        p->differences = calloc(n ?: 1, sizeof(char *));
        if (!p->differences)
                return -ENOMEM;
        for (; p->n_differences < n; p->n_differences++) {
                json_object *d = json_object_array_get_idx(a, p->n_differences);

                p->differences[p->n_differences] = strdup(json_object_get_string(d));
                if (!p->differences[p->n_differences])
                        return -ENOMEM;
        }
        return 0;
}

/* A PF's durations, each "<step>_ms". */
static int parse_pf_times(char **error, const char *where, json_object *o, ReportPf *p) {
        const struct {
                const char *key;
                double *value;
        } ms[] = {
                { "driver_wait_ms", &p->driver_wait_ms },
                { "enable_ms", &p->enable_ms },
                { "settings_ms", &p->settings_ms },
                { "bind_ms", &p->bind_ms },
                { "verify_ms", &p->verify_ms },
                { "total_ms", &p->total_ms },
        };
        int k = 0;

        for (size_t i = 0; k >= 0 && i < ELEMENTSOF(ms); i++)
                k = get_double(error, where, o, ms[i].key, ms[i].value);
        if (k >= 0)
                k = get_uint(error, where, o, "end_monotonic_us", UINT64_MAX, &p->end_monotonic_us);
        return k;
}

static int parse_pf(char **error, const char *where, json_object *o, ReportPf *p) {
        uint64_t numvfs = 0;
        int k, result;

        k = get_bdf(error, where, o, "bdf", &p->bdf);
        if (k >= 0)
                k = get_bdf(error, where, o, "recorded_bdf", &p->recorded_bdf);
        if (k >= 0)
                k = get_string(error, where, o, "identity", false, &p->identity);
        if (k >= 0 && (k = get_uint(error, where, o, "numvfs", UINT32_MAX, &numvfs)) > 0)
                p->numvfs = (uint32_t) numvfs;
        if (k >= 0 && (k = get_enum(error, where, o, "result", pf_result_table, _PF_RESULT_MAX, &result)) > 0)
                p->result = result;
        if (k >= 0)
                k = get_string(error, where, o, "error", false, &p->error);
        if (k >= 0)
                k = parse_differences(error, where, o, p);
        if (k >= 0)
                k = parse_pf_times(error, where, o, p);
        return k;
}

static int parse_pfs(char **error, json_object *o, Report *r) {
        json_object *a;
        char where[48];
        size_t n;
        int k;

        k = get_array(error, NULL, o, "pfs", json_type_object, &a, &n);
        if (k <= 0)
                return k;
        r->pfs = calloc(n ?: 1, sizeof(ReportPf));
        if (!r->pfs)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                snprintf(where, sizeof(where), "pfs[%zu]", i);
                k = parse_pf(error, where, json_object_array_get_idx(a, i), &r->pfs[r->n_pfs++]);
                if (k < 0)
                        return k;
        }
        return 0;
}

static int parse_guest_phases(char **error, const char *guest, json_object *o, Guest *g) {
        json_object *a;
        char where[96];
        size_t n;
        int k, t;

        k = get_array(error, guest, o, "phases", json_type_object, &a, &n);
        if (k < 0)
                return k;
        if (n > GUEST_PHASES_MAX)
                return json_fail(-EBADMSG, error, guest, "phases", "more than %d", GUEST_PHASES_MAX);
        for (size_t i = 0; i < n; i++) {
                json_object *p = json_object_array_get_idx(a, i);

                snprintf(where, sizeof(where), "%s.phases[%zu]", guest, i);
                k = get_enum(error, where, p, "name", guest_phase_table, _GUEST_PHASE_MAX, &t);
                if (k < 0)
                        return k;
                k = get_double(error, where, p, "at_ms", &g->phases[i].at_ms);
                if (k <= 0)
                        return k < 0 ? k : json_fail(-EBADMSG, error, where, "at_ms", "missing");
                g->phases[i].type = t;
                g->n_phases++;
        }
        return 0;
}

/* A guest as guest_json() writes it: running when it has a downtime. */
static int parse_guest(char **error, const char *where, json_object *o, Guest *g) {
        uint64_t vfs = 0;
        int k, result;

        k = get_string(error, where, o, "consumer", true, &g->consumer);
        if (k >= 0)
                k = get_string(error, where, o, "guest", true, &g->name);
        if (k >= 0 && (k = get_uint(error, where, o, "vfs", UINT_MAX, &vfs)) > 0)
                g->vfs = (unsigned) vfs;
        if (k >= 0 && (k = get_enum(error, where, o, "result", guest_result_table, _GUEST_RESULT_MAX, &result)) > 0)
                g->result = result;
        if (k >= 0)
                k = get_string(error, where, o, "error", false, &g->error);
        if (k >= 0 && (k = get_double(error, where, o, "downtime_ms", &g->downtime_ms)) > 0)
                g->running = true;
        if (k >= 0)
                k = get_string(error, where, o, "blackout_start", false, &g->blackout_start);
        if (k >= 0)
                k = get_bool(error, where, o, "approximate", &g->approximate);
        if (k >= 0)
                k = parse_guest_phases(error, where, o, g);
        return k;
}

static int parse_guests(char **error, json_object *o, Report *r) {
        json_object *a;
        char where[48];
        size_t n;
        int k;

        k = get_array(error, NULL, o, "guests", json_type_object, &a, &n);
        if (k <= 0)
                return k;
        r->guests = calloc(n ?: 1, sizeof(Guest));
        if (!r->guests)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                snprintf(where, sizeof(where), "guests[%zu]", i);
                k = parse_guest(error, where, json_object_array_get_idx(a, i), &r->guests[r->n_guests++]);
                if (k < 0)
                        return k;
        }
        return 0;
}

static int parse_dropped_by_pf(char **error, json_object *o, EventsStats *s) {
        json_object *d;
        int k;

        if (!present(o, "dropped_by_pf"))
                return 0;
        k = json_get_member(error, "events", o, "dropped_by_pf", json_type_object, false, &d);
        if (k < 0)
                return k;
        s->dropped_by_pf = calloc(json_object_object_length(d) ?: 1, sizeof(EventsPfDropped));
        if (!s->dropped_by_pf)
                return -ENOMEM;
        json_object_object_foreach(d, key, value) {
                EventsPfDropped *e = &s->dropped_by_pf[s->n_dropped_by_pf];

                (void) value;
                k = json_get_uint(error, "events.dropped_by_pf", d, key, UINT64_MAX, false, &e->dropped);
                if (k < 0)
                        return k;
                e->identity = strdup(key);
                if (!e->identity)
                        return -ENOMEM;
                s->n_dropped_by_pf++;
        }
        return 0;
}

/* events.release: {} until the held events went out (or from a luod
 * without it: missing). */
static int parse_release(char **error, json_object *e, EventsStats *s) {
        json_object *rel;
        int k;

        if (!present(e, "release"))
                return 0;
        k = json_get_member(error, "events", e, "release", json_type_object, false, &rel);
        if (k < 0)
                return k;
        const struct {
                const char *key;
                double *value;
        } ms[] = {
                { "after_restore_ms", &s->release.after_restore_ms }, { "until_attach_ms", &s->release.until_attach_ms },
                { "scan_ms", &s->release.scan_ms }, { "attribute_ms", &s->release.attribute_ms },
                { "udev_queue_ms", &s->release.udev_queue_ms },
        };
        for (size_t i = 0; k >= 0 && i < ELEMENTSOF(ms); i++) {
                k = get_double(error, "events.release", rel, ms[i].key, ms[i].value);
                if (k > 0)
                        s->released = true;
        }
        return k < 0 ? k : 0;
}

static int parse_events(char **error, json_object *o, Report *r) {
        json_object *e;
        EventsStats *s;
        int k;

        if (!present(o, "events"))
                return 0;
        k = json_get_member(error, NULL, o, "events", json_type_object, false, &e);
        if (k < 0)
                return k;
        s = r->events = calloc(1, sizeof(EventsStats));
        if (!s)
                return -ENOMEM;
        const struct {
                const char *key;
                uint64_t *value;
        } counts[] = {
                { "buffer", &s->buffer }, { "received", &s->received }, { "delivered", &s->delivered },
                { "held", &s->held }, { "unattributed", &s->unattributed }, { "dropped", &s->dropped },
                { "late", &s->late }, { "replayed_uevents", &s->replayed_uevents },
                { "waited_out", &s->waited_out },
        };
        k = get_string(error, "events", e, "source", false, &s->source);
        for (size_t i = 0; k >= 0 && i < ELEMENTSOF(counts); i++)
                k = get_uint(error, "events", e, counts[i].key, UINT64_MAX, counts[i].value);
        if (k >= 0)
                k = parse_dropped_by_pf(error, e, s);
        if (k >= 0)
                k = get_bool(error, "events", e, "overrun", &s->overrun);
        if (k >= 0)
                k = parse_release(error, e, s);
        return k;
}

int report_from_json(json_object *o, Report **ret, char **ret_error) {
        _cleanup_(report_freep) Report *r = NULL;
        _cleanup_free_ char *error = NULL;
        int k;

        if (!json_object_is_type(o, json_type_object))
                return json_pass_error(json_fail(-EBADMSG, &error, NULL, NULL, "not an object"), &error, ret_error);
        r = calloc(1, sizeof(Report));
        if (!r)
                return -ENOMEM;
        k = parse_header(&error, o, r);
        if (k >= 0)
                k = parse_phases(&error, o, r);
        if (k >= 0)
                k = parse_inhibitors(&error, o, r);
        if (k >= 0)
                k = parse_pfs(&error, o, r);
        if (k >= 0)
                k = parse_guests(&error, o, r);
        if (k >= 0)
                k = parse_events(&error, o, r);
        if (k < 0)
                return json_pass_error(k, &error, ret_error);
        *ret = TAKE_PTR(r);
        return 0;
}

/* Whether every number in o is finite: json-c reads NaN, Infinity and
 * 1e999 into doubles (also with JSON_TOKENER_STRICT), and prints them back
 * as they were written, NaN as text that is not JSON.  json-c's depth limit
 * bounds the recursion. */
static bool json_numbers_finite(json_object *o) {
        switch (json_object_get_type(o)) {
        case json_type_double:
                return isfinite(json_object_get_double(o));
        case json_type_array:
                for (size_t i = 0; i < json_object_array_length(o); i++)
                        if (!json_numbers_finite(json_object_array_get_idx(o, i)))
                                return false;
                return true;
        case json_type_object: {
                json_object_object_foreach(o, key, value) {
                        (void) key;
                        if (!json_numbers_finite(value))
                                return false;
                }
                return true;
        }
        default:
                return true;
        }
}

/* The JSON of buf: strict, UTF-8, one value, nothing but whitespace after
 * it, every number finite (what report_to_json() makes, and the bus
 * carries). */
static int report_json_strict(const char *buf, size_t size, json_object **ret, char **error) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        int r;

        r = json_parse_whole(buf, size, json_type_null, NULL, &o, error);
        if (r < 0)
                return r;
        if (!json_numbers_finite(o))
                return json_fail(-EBADMSG, error, NULL, NULL, "a number is not finite (NaN, Infinity, overflow)");
        *ret = TAKE_PTR(o);
        return 0;
}

int report_parse(const char *text, Report **ret, char **ret_error) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_free_ char *error = NULL;
        int r;

        r = report_json_strict(text, strlen(text), &o, &error);
        if (r < 0)
                return json_pass_error(r, &error, ret_error);
        return report_from_json(o, ret, ret_error);
}

int report_read_file(const char *path, char **ret_text, char **ret_error) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_free_ char *buf = NULL, *error = NULL;
        const char *text;
        size_t size, len;
        int r;

        if (ret_error)
                *ret_error = NULL;
        r = read_regular_file_at(AT_FDCWD, path, REPORT_SIZE_MAX, &buf, &size);
        if (r == -EFBIG)
                return json_pass_error(json_fail(r, &error, NULL, NULL, "larger than %" PRIu64 " bytes",
                                                 REPORT_SIZE_MAX), &error, ret_error);
        if (r < 0)
                return r;
        r = report_json_strict(buf, size, &o, &error);
        if (r < 0)
                return json_pass_error(r, &error, ret_error);
        text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED, &len);
        if (!text)
                return -ENOMEM;
        /* Pretty-printed, deep nesting grows: keep the reply far below the
         * bus's message size limit (dbus-daemon drops a sender that goes
         * over it). */
        if (len > REPORT_TEXT_MAX)
                return json_pass_error(json_fail(-EFBIG, &error, NULL, NULL, "%zu bytes as JSON text, more than %"
                                                 PRIu64, len, REPORT_TEXT_MAX), &error, ret_error);
        *ret_text = strndup(text, len);
        return *ret_text ? 0 : -ENOMEM;
}
