/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-journal.h>

#include "config.h"
#include "consumers.h"
#include "errors.h"
#include "events.h"
#include "guests.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "report.h"
#include "report-write.h"
#include "restore.h"
#include "tsc.h"

/* Read at the top of main(): when luod started in this kernel. */
extern uint64_t luod_start_tsc, luod_start_boottime_us;

void guests_done(Manager *m) {
        for (size_t i = 0; i < m->n_guests; i++)
                guest_done(&m->guests[i]);
        free(m->guests);
        m->guests = NULL;
        m->n_guests = 0;
}

/* The first error of the PFs holding a's guest's VFs, and how many VFs. */
static const char *guest_error(const LuodState *s, const PfRestore *pfs, size_t from, unsigned *ret_vfs) {
        const VfAssignment *a = &s->assignments[from];
        const char *error = NULL;
        unsigned vfs = 0;

        for (size_t j = from; j < s->n_assignments; j++) {
                const VfAssignment *b = &s->assignments[j];

                if (strcmp(b->consumer, a->consumer) != 0 || strcmp(b->guest, a->guest) != 0)
                        continue;
                vfs++;
                for (size_t k = 0; k < s->n_pfs; k++)
                        if (s->pfs[k].identity && strcmp(s->pfs[k].identity, b->pf_identity) == 0 &&
                            pfs[k].error && !error)
                                error = pfs[k].message ?: "restore failed";
        }
        *ret_vfs = vfs;
        return error;
}

int guests_from_record(Manager *m, const LuodState *s, const PfRestore *pfs) {
        guests_done(m);
        m->guests = calloc(s->n_assignments ?: 1, sizeof(Guest));
        if (!m->guests)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_assignments; i++) {
                const VfAssignment *a = &s->assignments[i];
                Guest *g = &m->guests[m->n_guests];
                bool seen = false;

                for (size_t j = 0; j < i && !seen; j++)
                        seen = strcmp(s->assignments[j].consumer, a->consumer) == 0 &&
                               strcmp(s->assignments[j].guest, a->guest) == 0;
                if (seen)
                        continue;
                const char *error = guest_error(s, pfs, i, &g->vfs);
                g->consumer = strdup(a->consumer);
                g->name = strdup(a->guest);
                g->error = error ? strdup(error) : NULL;
                g->result = error ? GUEST_RESULT_FAILED : GUEST_RESULT_OK;
                m->n_guests++;
                if (!g->consumer || !g->name || (error && !g->error))
                        return -ENOMEM;
        }
        return 0;
}

static Guest *guest_find(Manager *m, const char *consumer, const char *name) {
        for (size_t i = 0; i < m->n_guests; i++)
                if (strcmp(m->guests[i].consumer, consumer) == 0 && strcmp(m->guests[i].name, name) == 0)
                        return &m->guests[i];
        return NULL;
}

/* CLOCK_MONOTONIC µs of this kernel to TSC ticks, through the pair read at
 * the end of the restore. */
static uint64_t mono_to_tsc(const Manager *m, uint64_t us) {
        if (!us || !m->restore_end_us || !m->tsc_khz)
                return 0;
        if (us >= m->restore_end_us)
                return m->restore_end_tsc + (us - m->restore_end_us) * m->tsc_khz / 1000;
        return m->restore_end_tsc - (m->restore_end_us - us) * m->tsc_khz / 1000;
}

static void add_guest_phase(Guest *g, const Manager *m, GuestPhaseType type, uint64_t start, uint64_t tsc) {
        if (!tsc || g->n_phases >= GUEST_PHASES_MAX)
                return;
        g->phases[g->n_phases++] = (GuestPhase) {
                .type = type, .at_ms = ((double) tsc - (double) start) / (double) m->tsc_khz,
        };
}

/* A guest's way back, each point in ms since its blackout start (TSC):
 * blackout-start, persist-and-kexec (the old kernel's last step), kernel-start,
 * luod-start, pfs-enabled and vfs-bound (the last of the PFs holding its
 * VFs: sriov_numvfs written and VFs present; VFs configured, bound and read
 * back), events-replayed (luod sent its consumer the held events of those
 * PFs) and running (GuestRunning). */
static void guest_phases(Manager *m, Guest *g, uint64_t start, uint64_t now) {
        const char *consumer = g->consumer, *guest = g->name;
        uint64_t enabled = 0, bound = 0, persist = 0;

        g->n_phases = 0;
        for (size_t i = 0; i < m->restored.n_timestamps; i++)
                if (strcmp(m->restored.timestamps[i].name, "persist-start") == 0)
                        persist = m->restored.timestamps[i].tsc;
        for (size_t i = 0; i < m->restored.n_assignments; i++) {
                const VfAssignment *x = &m->restored.assignments[i];

                if (strcmp(x->consumer, consumer) != 0 || strcmp(x->guest, guest) != 0)
                        continue;
                for (size_t k = 0; k < m->n_restore_pfs; k++) {
                        const PfRestore *p = &m->restore_pfs[k];

                        if (!p->identity || strcmp(p->identity, x->pf_identity) != 0)
                                continue;
                        enabled = MAX(enabled, p->enabled_us);
                        bound = MAX(bound, p->verified_us ?: p->bound_us);
                }
        }
        add_guest_phase(g, m, GUEST_PHASE_BLACKOUT_START, start, start);
        add_guest_phase(g, m, GUEST_PHASE_PERSIST_AND_KEXEC, start, persist);
        add_guest_phase(g, m, GUEST_PHASE_KERNEL_START, start,
                        luod_start_tsc - luod_start_boottime_us * m->tsc_khz / 1000);
        add_guest_phase(g, m, GUEST_PHASE_LUOD_START, start, luod_start_tsc);
        add_guest_phase(g, m, GUEST_PHASE_PFS_ENABLED, start, mono_to_tsc(m, enabled));
        add_guest_phase(g, m, GUEST_PHASE_VFS_BOUND, start, mono_to_tsc(m, bound));
        add_guest_phase(g, m, GUEST_PHASE_EVENTS_REPLAYED, start, mono_to_tsc(m, events_consumer_replayed_us(m, consumer)));
        add_guest_phase(g, m, GUEST_PHASE_RUNNING, start, now);
}

/* One structured journal entry per guest back (catalog: units/luod.catalog). */
static void journal_guest_running(Manager *m, const Guest *g) {
        _cleanup_(json_object_putp) json_object *phases = report_guest_phases(g);
        char dt[32];

        snprintf(dt, sizeof(dt), "%.1f", g->downtime_ms);
        (void) sd_journal_send("MESSAGE=Guest %s of consumer %s runs again after a %s ms downtime (update %s)",
                               g->name, g->consumer, dt, m->update_id,
                               "MESSAGE_ID=" LUOD_MESSAGE_GUEST_RUNNING_STR,
                               "PRIORITY=6",
                               "LUOD_UPDATE_ID=%s", m->update_id,
                               "LUOD_CONSUMER=%s", g->consumer,
                               "LUOD_GUEST=%s", g->name,
                               "LUOD_DOWNTIME_MS=%s", dt,
                               "LUOD_BLACKOUT_START=%s", g->blackout_start,
                               "LUOD_CLOCK=%s", g->approximate ? "realtime (approximate)" : "tsc",
                               "LUOD_PHASES=%s",
                               phases ? json_object_to_json_string_ext(phases, JSON_C_TO_STRING_PLAIN) : "[]",
                               NULL);
}

/* The guest's blackout started when its consumer released its delay
 * inhibitor (or the maximum passed); without one, at persist-start. */
static const char *blackout_start(const Manager *m, const char *consumer, uint64_t *ret_tsc, uint64_t *ret_rt) {
        const char *from = "persist-start";
        char n1[128], n2[128];

        *ret_tsc = *ret_rt = 0;
        snprintf(n1, sizeof(n1), "delay-released:%s", consumer);
        snprintf(n2, sizeof(n2), "delay-timeout:%s", consumer);
        for (size_t i = 0; i < m->restored.n_timestamps; i++)
                if (strcmp(m->restored.timestamps[i].name, "persist-start") == 0 && !*ret_tsc) {
                        *ret_tsc = m->restored.timestamps[i].tsc;
                        *ret_rt = m->restored.timestamps[i].realtime_ns;
                }
        for (size_t i = 0; i < m->restored.n_timestamps; i++) {
                const char *n = m->restored.timestamps[i].name;

                if (strcmp(n, n1) == 0 || strcmp(n, n2) == 0) {
                        *ret_tsc = m->restored.timestamps[i].tsc;
                        *ret_rt = m->restored.timestamps[i].realtime_ns;
                        from = n;
                }
        }
        return from;
}

int method_guest_running(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        uint64_t now = tsc_read(), start, start_rt;
        const char *name;
        Consumer *c;
        Guest *g;
        double ms;
        bool approximate;
        int r = 0;

        r = sd_bus_message_read(msg, "s", &name);
        if (r < 0)
                return r;
        c = consumer_caller(m, msg, error, &r);
        if (!c)
                return r;
        g = guest_find(m, c->name, name);
        if (!g)
                return sd_bus_error_setf(error, LUOD_ERROR_NO_SUCH_GUEST,
                                         "Consumer %s has no guest %s in the last live update", c->name, name);
        const char *from = blackout_start(m, c->name, &start, &start_rt);
        /* The TSC, continuous across the kexec, with the rate recorded
         * before it; without it (or when it disagrees with the wall clock)
         * the wall clock, which the new kernel set again from the RTC:
         * approximate. */
        if (span_ms(start, now, m->tsc_khz, start_rt, realtime_ns(), &ms, &approximate) < 0)
                return sd_bus_error_setf(error, LUOD_ERROR_NO_CLOCK,
                                         "Neither the TSC nor the wall clock spans the kexec: "
                                         "guest %s's downtime unknown", name);
        char *f = strdup(from);
        if (!f)
                return -ENOMEM;
        free(g->blackout_start);
        g->blackout_start = f;
        g->running = true;
        g->downtime_ms = ms;
        g->approximate = approximate;
        /* A guest whose PF failed to restore stays "failed" (with its
         * error) for those who poll; its downtime is recorded all the same. */
        if (g->result != GUEST_RESULT_FAILED)
                g->result = GUEST_RESULT_RUNNING;
        g->n_phases = 0;
        if (!approximate)
                guest_phases(m, g, start, now);
        (void) sd_bus_emit_properties_changed(m->bus, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE, "Guests", NULL);
        journal_guest_running(m, g);
        if (m->report)
                (void) report_write(m);
        log_info("Guest %s of consumer %s runs again: downtime %.1f ms (%s to GuestRunning, %s)",
                 name, c->name, ms, from, approximate ? "wall clock, approximate" : "TSC");
        return sd_bus_reply_method_return(msg, "d", ms);
}

/* Appends a(sssd) of the last update's guests to msg. */
static int append_guests(Manager *m, sd_bus_message *msg) {
        int r;

        r = sd_bus_message_open_container(msg, 'a', "(sssd)");
        for (size_t i = 0; r >= 0 && i < m->n_guests; i++) {
                const Guest *g = &m->guests[i];

                r = sd_bus_message_append(msg, "(sssd)", g->consumer, g->name, guest_result_to_string(g->result),
                                          g->running ? g->downtime_ms : -1.0);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(msg);
        return r;
}

int method_get_guests(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        (void) error;
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r >= 0)
                r = append_guests(m, reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

int property_get_guests(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        (void) bus;
        (void) path;
        (void) interface;
        (void) property;
        (void) error;
        return append_guests(userdata, reply);
}
