/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * org.luod1.Manager.Update as a step machine on luod's sd-event loop.
 *
 * Preflight (arguments, refusals, images, snapshot, drivers, record,
 * backend, command line) runs inside the method call and changes nothing.
 * A real update then goes on from event sources: PrepareForUpdate is sent,
 * each delay inhibitor's fd gets an io source and the wait a timer, so luod
 * keeps answering D-Bus calls (GetGuests, GetInventory, Abandon ...) while
 * consumers pause their guests.  After the wait the state is persisted and
 * the kernel loaded (in the order the backend needs), the call answered,
 * and kexec -e deferred to the next loop turn.
 *
 * The record (the SR-IOV snapshot and the VF assignments) is taken at
 * preflight; from then until the update ends AssignVF and UnassignVF are
 * refused (org.luod1.Error.UpdateInProgress), so what the kexec carries is
 * what the consumers saw when they were told to prepare.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "config.h"
#include "consumers.h"
#include "drivers.h"
#include "errors.h"
#include "inhibitors.h"
#include "io-util.h"
#include "kexec.h"
#include "log.h"
#include "sysfs.h"
#include "types.h"
#include "preserve.h"
#include "record.h"
#include "sriov.h"
#include "state.h"
#include "status.h"
#include "time-util.h"
#include "tsc.h"
#include "update.h"
#include "update-loaded.h"

/* One delay inhibitor PrepareForUpdate waits for. */
typedef struct DelayWait {
        Update *u;
        sd_event_source *io;            /* owns a dup of the inhibitor's read end */
        char *consumer;
        char *why;
        bool done;
} DelayWait;

struct Update {
        Manager *m;
        sd_bus_message *request;        /* the Update call, answered when the update ends or loads */
        UpdateStep step;
        LuodState s;
        const char *kernel, *initrd, *cmdline_arg;      /* in request */
        char *cmdline;
        char *out;                      /* initrd backend: the initrd with the state appended */
        KexecImage kernel_img, initrd_img;      /* opened by the preflight, loaded from these fds */
        KexecImage out_img;             /* out, once written */
        KexecLoader loader;
        const Backend *backend;
        char release[KERNEL_RELEASE_MAX];
        json_object *plan;
        uint64_t flags;
        bool prepared;                  /* PrepareForUpdate went out */
        bool loaded;                    /* a kernel is loaded for it */
        bool persisted;                 /* its state is in its backend */
        uint64_t prepare_start_us;
        sd_event_source *timer;         /* the --max-delay bound on the wait */
        DelayWait *waits;
        size_t n_waits, n_waiting;
};

static const char *const update_step_table[_UPDATE_STEP_MAX] = {
        [UPDATE_STEP_PREFLIGHT] = "preflight",
        [UPDATE_STEP_SNAPSHOT] = "snapshot",
        [UPDATE_STEP_PREPARE] = "prepare",
        [UPDATE_STEP_PERSIST] = "persist",
        [UPDATE_STEP_KEXEC_LOAD] = "kexec-load",
        [UPDATE_STEP_LOADED] = "loaded",
        [UPDATE_STEP_ENDED] = "ended",
};

const char *update_step_to_string(UpdateStep s) {
        if (s < 0 || s >= _UPDATE_STEP_MAX)
                return NULL;
        return update_step_table[s];
}

UpdateStep update_step_from_string(const char *s) {
        for (int i = 0; s && i < _UPDATE_STEP_MAX; i++)
                if (strcmp(update_step_table[i], s) == 0)
                        return (UpdateStep) i;
        return _UPDATE_STEP_INVALID;
}

#define STEP(x) (1U << UPDATE_STEP_##x)
/* Where each step may go.  The initrd backend persists before the load (the
 * state rides in the initrd); the others load first and persist last. */
static const unsigned update_step_next[_UPDATE_STEP_MAX] = {
        [UPDATE_STEP_PREFLIGHT] = STEP(SNAPSHOT) | STEP(PREPARE) | STEP(KEXEC_LOAD) | STEP(ENDED),
        [UPDATE_STEP_SNAPSHOT] = STEP(PREFLIGHT) | STEP(ENDED),
        [UPDATE_STEP_PREPARE] = STEP(PERSIST) | STEP(ENDED),
        [UPDATE_STEP_PERSIST] = STEP(KEXEC_LOAD) | STEP(LOADED) | STEP(ENDED),
        [UPDATE_STEP_KEXEC_LOAD] = STEP(PREPARE) | STEP(LOADED) | STEP(ENDED),
        [UPDATE_STEP_LOADED] = STEP(ENDED),
        [UPDATE_STEP_ENDED] = 0,
};

bool update_step_transition_ok(UpdateStep from, UpdateStep to) {
        if (from < 0 || from >= _UPDATE_STEP_MAX || to < 0 || to >= _UPDATE_STEP_MAX)
                return false;
        return update_step_next[from] & (1U << to);
}

static int update_step(Update *u, UpdateStep to) {
        if (!update_step_transition_ok(u->step, to)) {
                log_error("Update %s: no step from %s to %s", u->s.update_id, update_step_to_string(u->step),
                          update_step_to_string(to));
                return -EINVAL;
        }
        u->step = to;
        status_set_phase(u->m, to <= UPDATE_STEP_KEXEC_LOAD ? update_step_to_string(to) : "");
        return 0;
}

static int stamp(LuodState *s, const char *name) {
        return luod_state_add_timestamp(s, name, tsc_read(), realtime_ns());
}

static void delay_waits_free(Update *u) {
        for (size_t i = 0; i < u->n_waits; i++) {
                sd_event_source_disable_unref(u->waits[i].io);
                free(u->waits[i].consumer);
                free(u->waits[i].why);
        }
        free(u->waits);
        u->waits = NULL;
        u->n_waits = u->n_waiting = 0;
        u->timer = sd_event_source_disable_unref(u->timer);
}

static Update *update_free(Update *u) {
        if (!u)
                return NULL;
        delay_waits_free(u);
        if (u->m->update == u)
                u->m->update = NULL;
        sd_bus_message_unref(u->request);
        luod_state_free(&u->s);
        free(u->cmdline);
        free(u->out);
        kexec_image_close(&u->kernel_img);
        kexec_image_close(&u->initrd_img);
        kexec_image_close(&u->out_img);
        json_object_put(u->plan);
        status_set_phase(u->m, "");
        free(u);
        return NULL;
}

static void update_freep(Update **u) {
        update_free(*u);
}

static void emit_abandoned(Manager *m, const char *update_id, const char *why) {
        int r = sd_bus_emit_signal(m->bus, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE, "UpdateAbandoned", "ss",
                                   update_id, why);
        if (r < 0)
                log_warning_errno(r, "Cannot send UpdateAbandoned(%s): %m", update_id);
        (void) sd_bus_flush(m->bus);
}

/* Ends an update that did not load: undoes what it did, tells prepared
 * consumers, State "failed" with LastError, and answers the call with
 * error_name (or the errno's name when NULL). */
static void update_end(Update *u, int r, const char *error_name, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void update_end(Update *u, int r, const char *error_name, const char *fmt, ...) {
        _cleanup_free_ char *msg = NULL;
        va_list ap;

        va_start(ap, fmt);
        errno = r < 0 ? -r : EIO;       /* for %m */
        if (vasprintf(&msg, fmt, ap) < 0)
                msg = NULL;
        va_end(ap);
        log_error("Update %s ended: %s", u->s.update_id, msg ?: "out of memory");
        if (u->loaded)
                update_unload(u->m);
        if (u->persisted || u->out)
                u->backend->unpersist(u->m, u->out);
        if (u->prepared)
                emit_abandoned(u->m, u->s.update_id, msg ?: "");
        status_set_state(u->m, "failed", msg ?: "out of memory");
        if (u->request) {
                if (error_name)
                        (void) sd_bus_reply_method_errorf(u->request, error_name, "%s", msg ?: "");
                else
                        (void) sd_bus_reply_method_errnof(u->request, r < 0 ? -r : EIO, "%s", msg ?: "");
        }
        (void) update_step(u, UPDATE_STEP_ENDED);
        update_free(u);
}

/* ---- preflight ---------------------------------------------------------- */

/* Opens path, a regular file, once: every later step (release, drivers,
 * the initrd copy, the load) reads this fd, never the path again. */
static int open_image(sd_bus_error *error, const char *what, const char *path, KexecImage *ret) {
        int r = kexec_image_open(path, ret);

        if (r == -EINVAL)
                return sd_bus_error_set_errnof(error, EINVAL, "%s %s is not a regular file", what, path);
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "%s %s: %m", what, path);
        return 0;
}

/* Refusals that depend on luod's state, not on the arguments. */
static int preflight_refusals(Manager *m, sd_bus_error *error) {
        _cleanup_free_ char *blocked = NULL;

        if (m->update)
                return sd_bus_error_setf(error, LUOD_ERROR_UPDATE_IN_PROGRESS, "Update %s is in progress",
                                         m->update->s.update_id);
        if (m->pending.update_id[0])
                return sd_bus_error_setf(error, LUOD_ERROR_UPDATE_LOADED, "Update %s is already loaded",
                                         m->pending.update_id);
        if (inhibitors_check_block(m, &blocked) == -EBUSY)
                return sd_bus_error_setf(error, LUOD_ERROR_UPDATE_BLOCKED, "Update blocked by consumer %s", blocked);
        /* A preserved state refused or not fully restored at start is the
         * only copy of the last update: a new Update would overwrite it. */
        if (m->state_kept)
                return sd_bus_error_setf(error, LUOD_ERROR_STATE_KEPT,
                                         "The preserved state of update %s is kept (%s); "
                                         "luoctl report, then luoctl discard, before a new update",
                                         m->update_id, *m->last_error ? m->last_error : "not restored");
        return 0;
}

static int preflight_args(Update *u, sd_bus_error *error) {
        if (u->flags & ~UPDATE_FLAGS_ALL)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Unknown flags 0x%" PRIx64,
                                         u->flags & ~UPDATE_FLAGS_ALL);
        if (!*u->kernel || u->kernel[0] != '/')
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Kernel image must be an absolute path, got '%s'", u->kernel);
        if (*u->initrd && u->initrd[0] != '/')
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Initrd must be an absolute path, got '%s'", u->initrd);
        return 0;
}

/* The SR-IOV record and the VF assignments, as the kexec will carry them. */
static int preflight_snapshot(Update *u, sd_bus_error *error) {
        LuodState *s = &u->s;
        int r;

        r = record_fill_header(s);
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "Preparing the update state: %m");
        (void) update_step(u, UPDATE_STEP_SNAPSHOT);
        stamp(s, "snapshot-start");
        r = sriov_scan(s);
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "Scanning the SR-IOV PFs: %m");
        record_drop_unused(s);
        stamp(s, "snapshot-end");
        r = consumers_copy_assignments(u->m, s);
        if (r >= 0)
                r = luod_state_upgrade_assignments(s);
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "Copying the VF assignments into the state: %m");
        if (r > 0)
                log_info("%d VF assignments named their PF by an identity without its function: "
                         "recorded with the PF's identity now", r);
        (void) update_step(u, UPDATE_STEP_PREFLIGHT);
        for (size_t i = 0; i < s->n_pfs; i++)
                if (s->pfs[i].numvfs > s->pfs[i].totalvfs)
                        return sd_bus_error_setf(error, LUOD_ERROR_INVALID_RECORD,
                                                 "PF %s: sriov_numvfs %u > sriov_totalvfs %u",
                                                 s->pfs[i].identity, s->pfs[i].numvfs, s->pfs[i].totalvfs);
        return 0;
}

/* The new kernel must have the drivers of the PFs and VFs, where its
 * modules are visible here.  *ret_note says what was checked. */
static int preflight_drivers(Update *u, sd_bus_error *error, char **ret_note) {
        _cleanup_free_ char *missing = NULL;
        const char *root = u->m->modules_root;
        int r;

        r = kernel_image_release_fd(u->kernel_img.fd, u->release, sizeof(u->release));
        if (r < 0) {
                u->release[0] = '\0';
                return asprintf(ret_note, "not checked: release of %s unknown (%s)", u->kernel, strerror(-r)) < 0 ?
                        -ENOMEM : 0;
        }
        r = drivers_check(&u->s, root, u->release, &missing);
        if (r == -ENOPKG)
                return sd_bus_error_setf(error, LUOD_ERROR_DRIVERS_MISSING, "The new kernel %s lacks drivers: %s",
                                         u->release, missing);
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "Checking the drivers of kernel %s in %s/%s: %m",
                                               u->release, root, u->release);
        return asprintf(ret_note, r > 0 ? "present in %s/%s" : "not checked: no %s/%s", root, u->release) < 0 ?
                -ENOMEM : 0;
}

/* Picks the first backend of backends[] that --backends allows and can
 * carry this update; *ret_note says why LUO was passed over when the
 * caller asked for VIA_SYSTEMD (the plan shows it). */
static int preflight_backend(Update *u, sd_bus_error *error, const char **ret_note) {
        const char *why[3] = {};
        size_t n_why = 0;

        *ret_note = NULL;
        for (size_t i = 0; backends[i] && !u->backend; i++) {
                const Backend *b = backends[i];
                const char *no;

                if (!(u->m->backends & b->bit))
                        continue;
                no = b->unusable(u->m, u->initrd, u->flags);
                if (!no)
                        u->backend = b;
                else if (n_why < ELEMENTSOF(why))
                        why[n_why++] = no;
                /* The plan says why LUO, the preferred backend, is not used. */
                if (no && b == &backend_luo)
                        *ret_note = no;
        }
        if (!u->backend)
                return sd_bus_error_setf(error, LUOD_ERROR_NO_BACKEND,
                                         "No preservation backend usable: %s%s%s%s%s (luod --backends)",
                                         why[0] ?: "", why[1] ? ", " : "", why[1] ?: "", why[2] ? ", " : "",
                                         why[2] ?: "");
        if (u->backend == &backend_file && access(u->m->state_dir, W_OK) < 0)
                return sd_bus_error_setf(error, LUOD_ERROR_NO_BACKEND, "The state file backend needs %s: %s",
                                         u->m->state_dir, strerror(errno));
        return 0;
}

static int preflight_cmdline(Update *u, sd_bus_error *error) {
        char proc_cmdline[4096];
        int r;

        if (*u->cmdline_arg)
                r = kernel_cmdline_with_update_id(u->cmdline_arg, u->s.update_id, &u->cmdline);
        else {
                r = procfs_read_line("cmdline", proc_cmdline, sizeof(proc_cmdline));
                if (r >= 0)
                        r = kernel_cmdline_with_update_id(proc_cmdline, u->s.update_id, &u->cmdline);
        }
        /* Too long is the caller's argument (or this kernel's command line
         * it asked to reuse), not a failure of luod's. */
        if (r == -E2BIG)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "The kernel command line with luod.update_id= would not fit the next "
                                         "kernel's %d bytes (COMMAND_LINE_SIZE, NUL included)",
                                         KERNEL_CMDLINE_MAX);
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "Building the kernel command line: %m");
        return 0;
}

/* Everything that can fail fails here, before any consumer is told to
 * pause its guests; nothing is changed.  Leaves the plan in u->plan. */
static int update_preflight(Update *u, sd_bus_error *error) {
        _cleanup_free_ char *drivers_note = NULL, *verr = NULL;
        const char *backend_why = NULL;
        char lockbuf[128];
        int r;

        r = open_image(error, "Kernel image", u->kernel, &u->kernel_img);
        if (r >= 0 && *u->initrd)
                r = open_image(error, "Initrd", u->initrd, &u->initrd_img);
        if (r >= 0)
                r = preflight_snapshot(u, error);
        if (r >= 0)
                r = preflight_drivers(u, error, &drivers_note);
        if (r < 0)
                return r;
        /* The record must be one the next kernel's luod can read (UTF-8
         * names, one identity per PF, ...), dry runs included. */
        if (luod_state_verify(&u->s, &verr) < 0)
                return sd_bus_error_setf(error, LUOD_ERROR_INVALID_RECORD,
                                         "The SR-IOV record of this host cannot be preserved: %s",
                                         verr ?: "out of memory");
        r = preflight_backend(u, error, &backend_why);
        if (r >= 0)
                r = preflight_cmdline(u, error);
        if (r < 0)
                return r;
        u->plan = record_plan(&u->s, u->kernel, u->initrd, u->cmdline, u->backend->name,
                              record_lockdown_mode(lockbuf, sizeof(lockbuf)));
        if (!u->plan)
                return -ENOMEM;
        json_object_object_add(u->plan, "kernel_release", *u->release ? json_object_new_string(u->release) : NULL);
        json_object_object_add(u->plan, "drivers", json_object_new_string(drivers_note));
        u->loader = kexec_loader_detect();
        json_object_object_add(u->plan, "loader", json_object_new_string(kexec_loader_to_string(u->loader)));
        if (backend_why)
                json_object_object_add(u->plan, "backend_note", json_object_new_string(backend_why));
        return 0;
}

/* ---- prepare: PrepareForUpdate and the delay inhibitors ----------------- */

static void update_prepared(Update *u);

static void delay_wait_finish(DelayWait *w, const char *what) {
        char name[128];

        w->done = true;
        w->io = sd_event_source_disable_unref(w->io);
        w->u->n_waiting--;
        snprintf(name, sizeof(name), "%s:%s", what, w->consumer);
        (void) stamp(&w->u->s, name);
}

/* Released when every copy of the write end is closed (EPOLLHUP); bytes a
 * holder writes into it are read and ignored. */
static int on_delay_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        DelayWait *w = userdata;
        Update *u = w->u;
        char buf[256];

        (void) s;
        if (!(revents & (EPOLLHUP | EPOLLERR))) {
                while (read(fd, buf, sizeof(buf)) > 0)
                        ;
                return 0;
        }
        delay_wait_finish(w, "delay-released");
        log_info("Delay inhibitor of %s (%s) released after %.1f ms", w->consumer, w->why,
                 (double) (now_usec() - u->prepare_start_us) / 1000.0);
        if (u->n_waiting == 0)
                update_prepared(u);
        return 0;
}

static int on_delay_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Update *u = userdata;

        (void) s;
        (void) usec;
        for (size_t i = 0; i < u->n_waits; i++) {
                DelayWait *w = &u->waits[i];

                if (w->done)
                        continue;
                delay_wait_finish(w, "delay-timeout");
                log_warning("Delay inhibitor of %s (%s) still held after the maximum %.1f s "
                            "(%.1f ms since PrepareForUpdate); going on", w->consumer, w->why,
                            (double) u->m->max_delay_usec / 1e6, (double) (now_usec() - u->prepare_start_us) / 1000.0);
        }
        update_prepared(u);
        return 0;
}

/* An io source on a dup of each delay inhibitor's fd, and the timer. */
static int delay_waits_start(Update *u) {
        Manager *m = u->m;
        int r;

        u->waits = calloc(m->n_inhibitors ?: 1, sizeof(DelayWait));
        if (!u->waits)
                return -ENOMEM;
        for (size_t i = 0; i < m->n_inhibitors; i++) {
                const Inhibitor *in = &m->inhibitors[i];
                DelayWait *w = &u->waits[u->n_waits];
                int fd;

                if (in->block)
                        continue;
                fd = fcntl(in->fd, F_DUPFD_CLOEXEC, 3);
                if (fd < 0)
                        return -errno;
                *w = (DelayWait) { .u = u, .consumer = strdup(in->consumer), .why = strdup(in->why) };
                u->n_waits++;
                r = sd_event_add_io(m->event, &w->io, fd, EPOLLIN, on_delay_io, w);
                if (r < 0) {
                        close(fd);
                        return r;
                }
                (void) sd_event_source_set_io_fd_own(w->io, true);
                if (!w->consumer || !w->why)
                        return -ENOMEM;
                u->n_waiting++;
        }
        if (u->n_waiting == 0)
                return 0;
        /* From PrepareForUpdate, not from when this loop turn began (the
         * preflight and a kexec load ran since): sd_event's "now" is that.
         * 1 ms accuracy: sd-event's default (250 ms) would add to every
         * guest's downtime. */
        return sd_event_add_time(m->event, &u->timer, CLOCK_MONOTONIC, u->prepare_start_us + m->max_delay_usec,
                                 USEC_PER_MSEC, on_delay_timeout, u);
}

/* Sends PrepareForUpdate; update_prepared() runs once every delay inhibitor
 * is released or the maximum delay has passed. */
static void update_prepare(Update *u) {
        int r;

        if (update_step(u, UPDATE_STEP_PREPARE) < 0)
                return update_end(u, -EINVAL, NULL, "Internal error: cannot prepare from this step");
        u->prepare_start_us = now_usec();
        (void) stamp(&u->s, "prepare-start");
        r = sd_bus_emit_signal(u->m->bus, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE, "PrepareForUpdate", "st",
                               u->s.update_id, u->m->max_delay_usec);
        if (r < 0)
                log_warning_errno(r, "Cannot send PrepareForUpdate: %m");
        (void) sd_bus_flush(u->m->bus);
        u->prepared = true;
        r = delay_waits_start(u);
        if (r < 0)
                return update_end(u, r, NULL, "Waiting for the delay inhibitors: %m");
        if (u->n_waiting == 0)
                update_prepared(u);
}

/* ---- persist, load, loaded ---------------------------------------------- */

static int update_persist(Update *u) {
        Manager *m = u->m;
        _cleanup_free_ char *buf = NULL;
        size_t size;
        int r;

        r = update_step(u, UPDATE_STEP_PERSIST);
        if (r < 0)
                return r;
        (void) stamp(&u->s, "persist-start");
        /* The initrd backend copies the preflighted initrd through its fd,
         * and not if it changed since. */
        char initrd[64] = "";
        if (u->initrd_img.fd >= 0) {
                r = kexec_image_unchanged(&u->initrd_img);
                if (r < 0) {
                        update_end(u, r, NULL, "Initrd %s changed (written to, renamed over or removed) "
                                   "after the preflight opened it; not used", u->initrd);
                        return r;
                }
                snprintf(initrd, sizeof(initrd), "/proc/self/fd/%d", u->initrd_img.fd);
        }
        r = record_serialize(&u->s, &buf, &size);
        if (r >= 0)
                r = u->backend->persist(m, u->s.update_id, initrd, buf, size, &u->out);
        if (r < 0 && u->backend == &backend_luo && (m->backends & BACKEND_FILE)) {
                log_warning_errno(r, "Preserving the state in LUO failed, using %s/state.luod-state: %m",
                                  m->state_dir);
                u->backend = &backend_file;
                r = u->backend->persist(m, u->s.update_id, initrd, buf, size, &u->out);
        }
        /* luod's own copy, in its runtime dir: loaded from this fd. */
        if (r >= 0 && u->out)
                r = kexec_image_open(u->out, &u->out_img);
        u->persisted = r >= 0;
        if (r < 0) {
                if (u->out)
                        update_end(u, r, NULL, "Appending the state to %s as %s: %m", u->initrd, u->out);
                else
                        update_end(u, r, NULL, "Persisting the state (%s): %m", u->backend->name);
        }
        return r;
}

static int update_load(Update *u) {
        _cleanup_free_ char *kerror = NULL;
        int r;

        r = update_step(u, UPDATE_STEP_KEXEC_LOAD);
        if (r < 0)
                return r;
        (void) stamp(&u->s, "kexec-load-start");
        const KexecImage *initrd = u->out_img.fd >= 0 ? &u->out_img : u->initrd_img.fd >= 0 ? &u->initrd_img : NULL;
        /* Named outside luod before it is loaded: a luod killed from here
         * to kexec -e is followed by one that unloads it. */
        r = update_loaded_mark(u->m, u->s.update_id, u->backend->name);
        if (r < 0) {
                update_end(u, r, NULL, "Cannot record the load of update %s in %s: %m", u->s.update_id,
                           u->m->runtime_dir);
                return r;
        }
        r = kexec_load_images(&u->kernel_img, initrd, u->cmdline, u->loader, &kerror);
        if (r < 0) {
                update_loaded_unmark(u->m);
                update_end(u, r, NULL, "%s refused %s: %s", kexec_loader_to_string(u->loader), u->kernel,
                           kerror ?: strerror(-r));
                return r;
        }
        u->loaded = true;
        (void) stamp(&u->s, "kexec-load-end");
        return 0;
}

static int on_execute(sd_event_source *s, void *userdata);

/* Loaded and persisted: the update moves to m->pending, the call is
 * answered with the plan, and kexec -e runs on the next loop turn. */
static void update_loaded(Update *u) {
        _cleanup_(update_freep) _unused_ Update *owned = u;
        Manager *m = u->m;
        int r;

        if (update_step(u, UPDATE_STEP_LOADED) < 0)
                return;
        m->pending = u->s;
        u->s = (LuodState) {};
        m->pending_backend = u->backend;
        m->pending_initrd = TAKE_PTR(u->out);
        m->pending_via_systemd = u->flags & UPDATE_VIA_SYSTEMD;
        m->pending_prepared = u->prepared;
        (void) status_set_string(&m->update_id, m->pending.update_id);
        json_object_object_add(u->plan, "backend", json_object_new_string(u->backend->name));
        status_set_state(m, "loaded", "");
        r = sd_bus_reply_method_return(u->request, "ss", m->pending.update_id,
                                       json_object_to_json_string_ext(u->plan, JSON_C_TO_STRING_PRETTY |
                                                                      JSON_C_TO_STRING_SPACED));
        if (r < 0)
                log_warning_errno(r, "Cannot answer Update %s: %m", m->pending.update_id);
        r = sd_event_add_defer(m->event, &m->execute_source, on_execute, m);
        if (r < 0) {
                log_error_errno(r, "Cannot schedule the kexec of update %s: %m", m->pending.update_id);
                (void) update_abandon(m, "cannot schedule the kexec");
        }
}

/* After the delay wait: persist (and for the initrd backend then load). */
static void update_prepared(Update *u) {
        delay_waits_free(u);
        if (update_persist(u) < 0)
                return;
        if (u->backend->persist_before_load && update_load(u) < 0)
                return;
        update_loaded(u);
}

/* Starts a real update after its preflight: the initrd backend persists
 * before the load (the state rides in the initrd), the others load first
 * and persist last, so the blackout is as short as it can be. */
static void update_start(Update *u) {
        Manager *m = u->m;

        m->update = u;
        /* From here UpdateId names this update and LastError is its own:
         * a consumer paused for PrepareForUpdate(update_id) sees State
         * "failed" with this UpdateId, and UpdateAbandoned, if it does not
         * happen. */
        (void) status_set_string(&m->update_id, u->s.update_id);
        status_set_state(m, "preparing", "");
        if (!u->backend->persist_before_load && update_load(u) < 0)
                return;
        update_prepare(u);
}

/* ---- execute, abandon --------------------------------------------------- */

/* Ends the loaded update: kernel unloaded, state removed, prepared
 * consumers told; State "failed" with msg. */
static void pending_end(Manager *m, const char *msg) {
        update_unload(m);
        if (m->pending_prepared)
                emit_abandoned(m, m->pending.update_id, msg);
        update_pending_drop(m);
        status_set_state(m, "failed", msg);
}

static bool stop_signal_pending(void) {
        sigset_t p;

        if (sigpending(&p) < 0)
                return false;
        return sigismember(&p, SIGTERM) == 1 || sigismember(&p, SIGINT) == 1;
}

static int on_execute(sd_event_source *s, void *userdata) {
        Manager *m = userdata;
        char msg[256];
        int r;

        (void) s;
        m->execute_source = sd_event_source_unref(m->execute_source);
        /* Calls already queued (Abandon, Discard) and a stop signal already
         * sent are honoured before kexec -e: luod never kexecs after it was
         * asked not to. */
        for (int i = 0; i < 64 && sd_bus_process(m->bus, NULL) > 0; i++)
                ;
        if (!m->pending.update_id[0])
                return 0;
        if (stop_signal_pending()) {
                (void) update_abandon(m, "luod is stopping");
                return 0;
        }
        (void) sd_bus_flush(m->bus);
        log_info("Update %s: kexec%s", m->pending.update_id, m->pending_via_systemd ? " via systemctl" : " -e");
        r = kexec_execute(m->pending_via_systemd);
        if (r >= 0 && m->pending_via_systemd) {
                m->executing = true;
                status_set_state(m, "executing", NULL);
                return 0;
        }
        /* kexec -e returned: still on the old kernel, VFs untouched. */
        snprintf(msg, sizeof(msg), "kexec of update %s failed: %s; still on the old kernel, "
                 "nothing changed", m->pending.update_id, strerror(r < 0 ? -r : EIO));
        log_error("%s", msg);
        pending_end(m, msg);
        return 0;
}

void update_pending_drop(Manager *m) {
        m->execute_source = sd_event_source_disable_unref(m->execute_source);
        if (m->pending_backend)
                m->pending_backend->unpersist(m, m->pending_initrd);
        m->pending_backend = NULL;
        free(m->pending_initrd);
        m->pending_initrd = NULL;
        m->pending_prepared = false;
        luod_state_free(&m->pending);
}

int update_abandon(Manager *m, const char *why) {
        char msg[512];

        if (m->update) {
                update_end(m->update, -ECANCELED, LUOD_ERROR_ABANDONED, "Update %s abandoned: %s",
                           m->update->s.update_id, why);
                return 1;
        }
        if (!m->pending.update_id[0] || m->executing)
                return 0;
        snprintf(msg, sizeof(msg), "Update %s abandoned: %s", m->pending.update_id, why);
        log_warning("%s; unloading the kernel and removing its state", msg);
        pending_end(m, msg);
        return 1;
}

void update_done(Manager *m) {
        update_free(m->update);
}

/* ---- D-Bus -------------------------------------------------------------- */

int method_update(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_(update_freep) Update *u = NULL;
        int r;

        u = calloc(1, sizeof(*u));
        if (!u)
                return -ENOMEM;
        *u = (Update) { .m = m, .request = sd_bus_message_ref(msg), .step = UPDATE_STEP_PREFLIGHT,
                        .kernel_img = KEXEC_IMAGE_NULL, .initrd_img = KEXEC_IMAGE_NULL, .out_img = KEXEC_IMAGE_NULL };
        r = sd_bus_message_read(msg, "ssst", &u->kernel, &u->initrd, &u->cmdline_arg, &u->flags);
        if (r < 0)
                return r;
        r = preflight_args(u, error);
        if (r >= 0)
                r = preflight_refusals(m, error);
        if (r < 0)
                return r;
        status_set_phase(m, "preflight");
        r = update_preflight(u, error);
        if (r < 0)
                return r;
        if (u->flags & UPDATE_DRY_RUN)
                return sd_bus_reply_method_return(msg, "ss", u->s.update_id,
                                                  json_object_to_json_string_ext(u->plan, JSON_C_TO_STRING_PRETTY |
                                                                                 JSON_C_TO_STRING_SPACED));
        /* Answered when it loads or ends (update_loaded, update_end). */
        update_start(TAKE_PTR(u));
        return 1;
}

int method_abandon(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        char id[LUOD_UUID_STRING_MAX];

        if (m->executing)
                return sd_bus_error_setf(error, LUOD_ERROR_UPDATE_IN_PROGRESS,
                                         "Update %s is past the point of no return: systemctl kexec runs",
                                         m->pending.update_id);
        if (!manager_update_busy(m))
                return sd_bus_error_setf(error, LUOD_ERROR_NO_UPDATE, "No update is in progress or loaded");
        snprintf(id, sizeof(id), "%s", manager_update_busy(m));
        (void) update_abandon(m, "luoctl abandon (D-Bus Abandon)");
        return sd_bus_reply_method_return(msg, "s", id);
}
