/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The restore at start (and luoctl retry): find the preserved state, check
 * it, mark it consumed by this boot durably, restore every PF (restore.c),
 * write the report, and drop or keep the state. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-journal.h>

#include "backend.h"
#include "config.h"
#include "consumers.h"
#include "drivers.h"
#include "events.h"
#include "guests.h"
#include "inhibitors.h"
#include "fs-util.h"
#include "io-util.h"
#include "json-util.h"
#include "kexec.h"
#include "kmsg.h"
#include "log.h"
#include "sysfs.h"
#include "restore-start.h"
#include "preserve.h"
#include "report.h"
#include "report-write.h"
#include "record.h"
#include "restore.h"
#include "sriov.h"
#include "state.h"
#include "status.h"
#include "tsc.h"
#include "time-util.h"

/* Read at the top of main(): when luod started in this kernel. */
extern uint64_t luod_start_tsc, luod_start_boottime_us;

/* Which attempt at a state a restore is. */
typedef enum RestoreHow {
        RESTORE_FIRST,          /* the first, in this boot */
        RESTORE_RESUMED,        /* again: luod was restarted during the restore */
        RESTORE_RETRY,          /* again: luoctl retry */
} RestoreHow;

/* ---- restore at start -------------------------------------------------- */

/* The state of the first backend of backends[] that carried one (all are
 * tried: --backends restricts Update only).  Returns 0 with the state and
 * *ret_backend, or the last backend's error (-ENOENT: no state anywhere). */
static int retrieve(Manager *m, char **buf, size_t *size, const Backend **ret_backend) {
        int r = -ENOENT;

        for (size_t i = 0; backends[i]; i++) {
                r = backends[i]->retrieve(m, buf, size);
                if (r >= 0) {
                        *ret_backend = backends[i];
                        return 0;
                }
                if (r != -ENOENT && backends[i + 1])
                        log_warning_errno(r, "Retrieving the state from the %s backend failed, trying the next backend: %m",
                                          backends[i]->name);
        }
        return r;
}

/* Keeps a refused or failed state: a LUO-held state also goes to the file
 * backend, since the kernel finishes a session whose fd closes. */
static void keep_state(Manager *m, const Backend *backend, const char *buf, size_t size) {
        char path[PATH_MAX];
        int r;

        m->state_kept = true;
        snprintf(path, sizeof(path), "%s/state.luod-state", m->state_dir);
        if (backend == &backend_file || access(path, F_OK) == 0)
                return;
        r = file_preserve(m->state_dir, buf, size);
        if (r < 0)
                log_error_errno(r, "Failed to keep a copy of the preserved state in %s: %m", path);
        else
                log_info("Kept a copy of the preserved state in %s", path);
}

/* One structured journal entry per restore (catalog: units/luod.catalog). */
static void journal_restore_done(Manager *m, const LuodState *s, const Backend *backend, size_t failed) {
        _cleanup_(json_object_putp) json_object *phases = m->report ? report_phases_to_json(m->report) : NULL;
        const ReportPhase *p = m->report ? report_phase_find(m->report, REPORT_PHASE_TOTAL_BLACKOUT) : NULL;
        char blackout[32] = "";

        /* As the report prints it: 0.1 ms resolution. */
        if (p)
                snprintf(blackout, sizeof(blackout), "%.1f", p->ms);
        (void) sd_journal_send("MESSAGE=Live update %s restored %zu of %zu PFs from %s; blackout %s ms",
                               s->update_id, s->n_pfs - failed, s->n_pfs, backend->name, *blackout ? blackout : "unknown",
                               "MESSAGE_ID=" LUOD_MESSAGE_RESTORE_DONE_STR,
                               "PRIORITY=%d", failed ? 3 : 6,
                               "LUOD_UPDATE_ID=%s", s->update_id,
                               "LUOD_BACKEND=%s", backend->name,
                               "LUOD_PFS=%zu", s->n_pfs,
                               "LUOD_PFS_FAILED=%zu", failed,
                               "LUOD_BLACKOUT_MS=%s", blackout,
                               "LUOD_PHASES=%s", phases ? json_object_to_json_string_ext(phases, JSON_C_TO_STRING_PLAIN) : "[]",
                               NULL);
}

/* This boot's id, /proc/sys/kernel/random/boot_id. */
static int read_boot_id(char ret[static LUOD_UUID_STRING_MAX]) {
        int r = procfs_read_line("sys/kernel/random/boot_id", ret, LUOD_UUID_STRING_MAX);
        if (r < 0)
                return log_error_errno(r, "Failed to read /proc/sys/kernel/random/boot_id: %m");
        return 0;
}

/* <runtime_dir>/finished names the update this boot restored or discarded:
 * /run does not outlive the boot, so a luod restarted later in it knows
 * the command line's luod.update_id is dealt with, not lost. */
void restore_finished_mark(Manager *m, const char *update_id) {
        char path[PATH_MAX];
        _cleanup_fclose_ FILE *f = NULL;

        (void) mkdir(m->runtime_dir, 0700);
        snprintf(path, sizeof(path), "%s/finished", m->runtime_dir);
        f = fopen(path, "we");
        if (!f || fprintf(f, "%s\n", update_id) < 0 || fflush(f) != 0)
                log_warning_errno(-errno, "Failed to write %s: %m", path);
}

static bool finished_is(Manager *m, const char *update_id) {
        char path[PATH_MAX], id[LUOD_UUID_STRING_MAX];

        snprintf(path, sizeof(path), "%s/finished", m->runtime_dir);
        return read_line(path, id, sizeof(id)) >= 0 && strcmp(id, update_id) == 0;
}

/* The update id on this boot's command line, "" if none. */
static void cmdline_update_id(char id[static LUOD_UUID_STRING_MAX]) {
        char cmdline[4096];

        if (procfs_read_line("cmdline", cmdline, sizeof(cmdline)) < 0 || kernel_cmdline_get_update_id(cmdline, id) < 0)
                id[0] = '\0';
}

/* A boot meant to land update id (its command line says so) found no
 * state of it: a failure, not "nothing to restore". */
static int state_missing(Manager *m, const char *id) {
        char msg[768];

        snprintf(msg, sizeof(msg), "State of update %s not found: no LUO session \"" LUO_SESSION_NAME "\", no %s/"
                 STATE_FILE_NAME "%s, no %s/" STATE_FILE_NAME " (this boot's command line has luod.update_id=%s); "
                 "nothing restored", id, m->runtime_dir,
                 strcmp(m->runtime_dir, "/run/luod") == 0 ? ", no " INITRD_STATE_PATH : "", m->state_dir, id);
        log_error("%s", msg);
        (void) sd_journal_send("MESSAGE=%s", msg,
                               "MESSAGE_ID=" LUOD_MESSAGE_STATE_MISSING_STR,
                               "PRIORITY=3",
                               "LUOD_UPDATE_ID=%s", id,
                               "LUOD_STATE_DIR=%s", m->state_dir,
                               NULL);
        (void) status_set_string(&m->update_id, id);
        status_set_state(m, "failed", msg);
        return -ENOENT;
}

/* Marks s consumed by this boot (one more attempt) and writes it to the
 * state file before any restore step: from here a luod that dies or is
 * killed finds it again (a retrieved LUO session ends when its fd closes;
 * the initramfs copy goes with /run at the next boot). */
static int state_consume(Manager *m, LuodState *s, const char *boot_id, const Backend *backend) {
        _cleanup_free_ char *buf = NULL;
        size_t size;
        int r;

        snprintf(s->consumed_boot_id, sizeof(s->consumed_boot_id), "%s", boot_id);
        s->consumed_attempt++;
        (void) mkdir(m->state_dir, 0700);
        r = record_serialize(s, &buf, &size);
        if (r >= 0)
                r = file_preserve(m->state_dir, buf, size);
        if (r < 0)
                return log_error_errno(r, "Update %s: no durable copy of the state in %s/" STATE_FILE_NAME
                                       " (restoring anyway; a luod stopped now cannot resume): %m",
                                       s->update_id, m->state_dir);
        /* The copy supersedes the backend's (the initramfs one): only one
         * of them may be found by a restarted luod. */
        if (backend->superseded)
                backend->superseded(m);
        return 0;
}

/* The timestamps of s, kept for GuestRunning's downtimes; a retry
 * replaces those of the attempt before (m->restored.assignments were just
 * adopted: kept). */
static void keep_timestamps(Manager *m, const LuodState *s) {
        for (size_t i = 0; i < m->restored.n_timestamps; i++)
                free(m->restored.timestamps[i].name);
        free(m->restored.timestamps);
        m->restored.timestamps = NULL;
        m->restored.n_timestamps = 0;
        for (size_t i = 0; i < s->n_timestamps; i++) {
                if (strcmp(s->timestamps[i].name, "persist-start") == 0)
                        m->blackout_start_tsc = s->timestamps[i].tsc;
                (void) luod_state_add_timestamp(&m->restored, s->timestamps[i].name,
                                                s->timestamps[i].tsc, s->timestamps[i].realtime_ns);
        }
        m->tsc_khz = s->tsc_khz;
}

/* The restore's report: built from the results with its attempt, the
 * guests made, the timestamps kept for GuestRunning, and written. */
static void restore_report(Manager *m, const LuodState *s, const Backend *backend, RestoreHow how,
                           const PfRestore *pfs, uint64_t end_tsc) {
        KernelBootLog kboot = {};
        int r;

        /* After the restore, so as not to add to the blackout; only what
         * this kernel logged before luod started counts. */
        r = kmsg_read_boot("/dev/kmsg", luod_start_boottime_us, &kboot);
        if (r < 0)
                log_warning_errno(r, "Cannot read /dev/kmsg, the report has no kernel-pci-enumeration: %m");
        m->report = report_free(m->report);
        r = report_build(s, backend, pfs, luod_start_tsc, luod_start_boottime_us, end_tsc, &kboot, &m->report);
        if (r < 0) {
                log_error_errno(r, "Failed to build the report of update %s: %m", s->update_id);
                return;
        }
        m->report->attempt = s->consumed_attempt;
        m->report->resumed = how == RESTORE_RESUMED;
        m->report->retry = how == RESTORE_RETRY;
        /* Per guest: its VFs back or not; downtime once its consumer says
         * it runs (GuestRunning), from the blackout start. */
        (void) guests_from_record(m, s, pfs);
        keep_timestamps(m, s);
        (void) report_write(m);
}

/* Every PF restored: the preserved state goes (FINISH on the LUO session,
 * the initrd and file copies removed), the update is marked finished. */
static void restore_complete(Manager *m, const LuodState *s) {
        int r;

        if (m->luo_in_fd >= 0) {
                r = luo_finish(m->luo_in_fd);
                if (r < 0)
                        log_warning_errno(r, "FINISH on the LUO session failed: %m");
                close(m->luo_in_fd);
                m->luo_in_fd = -EBADF;
        }
        backend_initrd_remove_state(m);
        r = file_remove(m->state_dir);
        if (r < 0 && r != -ENOENT)
                log_warning_errno(r, "Failed to remove %s/state.luod-state: %m", m->state_dir);
        restore_finished_mark(m, s->update_id);
        m->state_kept = false;
        log_info("Restored update %s: %zu PFs", s->update_id, s->n_pfs);
        status_set_state(m, "restored", "");
}

/* Some PF failed: the state is kept (a copy in the state file) for luoctl
 * retry or discard. */
static int restore_incomplete(Manager *m, const LuodState *s, const Backend *backend, size_t failed, int rr) {
        _cleanup_free_ char *buf = NULL;
        char msg[512];
        size_t size;

        snprintf(msg, sizeof(msg), "Restore of update %s: %zu of %zu PFs failed; state kept "
                 "(luoctl report, then luoctl retry or luoctl discard)", s->update_id, failed, s->n_pfs);
        log_error("%s", msg);
        if (record_serialize(s, &buf, &size) >= 0)
                keep_state(m, backend, buf, size);
        m->state_kept = true;
        status_set_state(m, "failed", msg);
        return rr;
}

/* Restores s (consumed by this boot, attempt s->consumed_attempt) and
 * reports; drops the state only when every PF came back. */
static int restore_state(Manager *m, LuodState *s, const Backend *backend, RestoreHow how) {
        RestoreOptions opt = RESTORE_OPTIONS_DEFAULT;
        PfRestore *pfs = NULL;
        size_t failed = 0;
        char msg[512];
        int r, rr;

        (void) status_set_string(&m->update_id, s->update_id);
        log_info("Restoring update %s from %s: %zu PFs%s (attempt %u)", s->update_id, backend->name, s->n_pfs,
                 how == RESTORE_RESUMED ? ", resumed" : how == RESTORE_RETRY ? ", retry" : "", s->consumed_attempt);
        status_set_state(m, "restoring", NULL);
        opt.driver_wait_usec = m->driver_wait_usec;
        opt.event = m->event;   /* device events are read while the PFs are restored */
        rr = restore_all(s, &opt, &pfs);
        if (rr == -ENOMEM) {
                m->state_kept = true;
                snprintf(msg, sizeof(msg), "Restore of update %s: out of memory; state kept", s->update_id);
                status_set_state(m, "failed", msg);
                return log_error_errno(rr, "%s", msg);
        }
        uint64_t end_tsc = tsc_read();
        m->restore_end_tsc = end_tsc;
        m->restore_end_us = now_usec();
        if (s->n_assignments > 0) {
                r = consumers_adopt_assignments(m, s);
                if (r < 0)
                        log_warning_errno(r, "The %zu VF assignments of update %s were not saved: %m",
                                          s->n_assignments, s->update_id);
        }
        restore_report(m, s, backend, how, pfs, end_tsc);
        for (size_t i = 0; i < s->n_pfs; i++)
                failed += pfs[i].error != 0;
        restore_results_free(m->restore_pfs, m->n_restore_pfs);
        m->restore_pfs = pfs;
        m->n_restore_pfs = s->n_pfs;
        journal_restore_done(m, s, backend, failed);
        if (rr < 0)
                return restore_incomplete(m, s, backend, failed, rr);
        restore_complete(m, s);
        return 0;
}

/* Refuses a state found at start: kept (and copied to the state file when
 * it came from elsewhere), State "failed" with msg. */
static int refuse_state(Manager *m, const Backend *backend, const char *buf, size_t size, int r, const char *msg) {
        log_error("%s", msg);
        keep_state(m, backend, buf, size);
        status_set_state(m, "failed", msg);
        return r;
}

int restore_at_start(Manager *m) {
        _cleanup_luod_state_ LuodState s = {};
        _cleanup_free_ char *buf = NULL, *perr = NULL;
        const Backend *backend = NULL;
        char id[LUOD_UUID_STRING_MAX], boot[LUOD_UUID_STRING_MAX], msg[768];
        size_t size;
        int r;

        cmdline_update_id(id);
        r = retrieve(m, &buf, &size, &backend);
        if (r == -ENOENT) {
                if (!*id || finished_is(m, id)) {
                        log_info("No preserved state: nothing to restore");
                        return 0;
                }
                return state_missing(m, id);
        }
        if (r < 0) {
                snprintf(msg, sizeof(msg), "Cannot read the preserved state (%s): %s; kept, see luoctl discard",
                         m->state_dir, strerror(-r));
                log_error("%s", msg);
                m->state_kept = true;
                status_set_state(m, "failed", msg);
                return r;
        }

        r = luod_state_parse(buf, size, &s, &perr);
        if (r < 0) {
                snprintf(msg, sizeof(msg), "Refusing the preserved state from %s: %s (%s); kept",
                         backend->name, perr ?: "?", strerror(-r));
                return refuse_state(m, backend, buf, size, r, msg);
        }
        (void) status_set_string(&m->update_id, s.update_id);
        r = read_boot_id(boot);
        if (r < 0) {
                snprintf(msg, sizeof(msg), "Refusing the preserved state of update %s from %s: this boot's id "
                         "is unknown (%s); kept, see luoctl retry or luoctl discard", s.update_id, backend->name,
                         strerror(-r));
                return refuse_state(m, backend, buf, size, r, msg);
        }
        /* One boot per state: another boot never applies a state a boot
         * before it applied (the command line of a kexec with
         * --reuse-cmdline still names it); the same boot resumes it. */
        if (s.consumed_boot_id[0] && strcmp(s.consumed_boot_id, boot) != 0) {
                snprintf(msg, sizeof(msg), "Refusing the preserved state of update %s from %s: it was consumed by "
                         "boot %s (attempt %u), this is boot %s; kept, see luoctl retry or luoctl discard",
                         s.update_id, backend->name, s.consumed_boot_id, s.consumed_attempt, boot);
                m->state_kept = true;
                return refuse_state(m, backend, buf, size, -ESTALE, msg);
        }
        if (!s.consumed_boot_id[0] && strcmp(id, s.update_id) != 0) {
                snprintf(msg, sizeof(msg), "Refusing the preserved state of update %s from %s: "
                         "this boot's command line has %s%s (a cold boot?); kept, see luoctl retry or luoctl discard",
                         s.update_id, backend->name, *id ? "luod.update_id=" : "no luod.update_id", id);
                return refuse_state(m, backend, buf, size, -ESTALE, msg);
        }
        bool resumed = s.consumed_boot_id[0];
        if (resumed)
                log_notice("Update %s was being restored by an earlier luod in this boot (attempt %u): resuming",
                           s.update_id, s.consumed_attempt);
        (void) state_consume(m, &s, boot, backend);
        return restore_state(m, &s, backend, resumed ? RESTORE_RESUMED : RESTORE_FIRST);
}

int restore_retry(Manager *m, char **ret_error) {
        _cleanup_luod_state_ LuodState s = {};
        _cleanup_free_ char *buf = NULL, *perr = NULL;
        char boot[LUOD_UUID_STRING_MAX];
        size_t size;
        int r;

        r = file_retrieve(m->state_dir, &buf, &size);
        if (r < 0)
                return asprintf(ret_error, "No kept state in %s/" STATE_FILE_NAME ": %s", m->state_dir,
                                strerror(-r)) < 0 ? -ENOMEM : r;
        r = luod_state_parse(buf, size, &s, &perr);
        if (r < 0)
                return asprintf(ret_error, "The kept state %s/" STATE_FILE_NAME " is unusable: %s (%s)",
                                m->state_dir, perr ?: "?", strerror(-r)) < 0 ? -ENOMEM : r;
        r = read_boot_id(boot);
        if (r < 0)
                return asprintf(ret_error, "This boot's id is unknown: %s", strerror(-r)) < 0 ? -ENOMEM : r;
        log_notice("Retrying update %s in boot %s (asked for; last applied by boot %s, attempt %u)", s.update_id,
                   boot, s.consumed_boot_id[0] ? s.consumed_boot_id : "none", s.consumed_attempt);
        r = state_consume(m, &s, boot, &backend_file);
        if (r < 0)
                return asprintf(ret_error, "Cannot record the retry in %s/" STATE_FILE_NAME " (%s): nothing done",
                                m->state_dir, strerror(-r)) < 0 ? -ENOMEM : r;
        r = restore_state(m, &s, &backend_file, RESTORE_RETRY);
        if (r < 0)
                return asprintf(ret_error, "%s", m->last_error) < 0 ? -ENOMEM : r;
        return 0;
}

