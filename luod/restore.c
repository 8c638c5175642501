/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "drivers.h"
#include "log.h"
#include "macro.h"
#include "restore.h"
#include "sriov.h"
#include "time-util.h"

typedef struct Worker {
        const PfRecord *want;
        const PfRecord *now;    /* the PF as found at start, NULL if missing; &fresh once read again */
        ssize_t match;          /* its index in the start scan, or why none (luod_state_match_pfs()) */
        PfRecord fresh;         /* the PF as read after its driver bound */
        const RestoreOptions *opt;
        PfRestore *result;
        pthread_t thread;
        bool started;
        int done_fd;            /* eventfd: written once when the thread ends */
} Worker;

static int fail_pf(PfRestore *res, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail_pf(PfRestore *res, int r, const char *fmt, ...) {
        char bdf[PCI_BDF_STRING_MAX];
        _cleanup_free_ char *what = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&what, fmt, ap) < 0)
                what = NULL;
        va_end(ap);
        res->error = r;
        if (asprintf(&res->message, "PF %s (%s): %s: %s", pci_bdf_format(&res->bdf, bdf),
                     res->identity ?: "?", what ?: "?", strerror(-r)) < 0)
                res->message = NULL;
        log_error("restore: %s", res->message ?: "out of memory");
        return r;
}

static bool past_deadline(const Worker *w) {
        return now_usec() - w->result->start_us > w->opt->pf_deadline_usec;
}

/* The PF by its identity; 1 when it is unused (nothing to restore). */
static int worker_find(Worker *w) {
        const PfRecord *want = w->want;
        PfRestore *res = w->result;

        if (w->match == -ENOTUNIQ)
                return fail_pf(res, -ENOTUNIQ, "its identity fits several PFs and none is at its recorded BDF");
        if (!w->now)
                return fail_pf(res, -ENODEV, "not found by its identity");
        res->bdf = w->now->bdf;
        /* An unused PF (no driver, no VFs when recorded): nothing to bring
         * back, and no driver to wait for. */
        if (!want->driver && want->numvfs == 0) {
                res->driver_us = res->enabled_us = res->settings_us = res->bound_us = now_usec();
                return 1;
        }
        return 0;
}

static int worker_driver(Worker *w) {
        const PfRecord *want = w->want;
        PfRestore *res = w->result;
        int r;

        r = sriov_pf_wait_driver(&res->bdf, w->opt->driver_wait_usec);
        if (r < 0)
                return fail_pf(res, r, "waiting for its driver (%s)", want->driver ?: "any");
        res->driver_us = now_usec();
        /* The scan at start may predate the PF's driver (its module loaded
         * by udev since) and so its netdev, or a udev rename: read it again. */
        r = sriov_pf_refresh(&res->bdf, want->netdev ? w->opt->driver_wait_usec : 0, &w->fresh);
        if (r < 0)
                return fail_pf(res, r, "reading it again after its driver bound");
        w->now = &w->fresh;
        return 0;
}

static int worker_enable(Worker *w) {
        const PfRecord *want = w->want;
        PfRestore *res = w->result;
        int r;

        /* VFs appear unbound: a driver probe at VF creation would be thrown
         * away by the binds below (docs/testbed.md: 127 VFs take 0.5 s
         * unprobed vs 6.6 s probed under the vIOMMU). */
        r = sriov_pf_set_autoprobe(&res->bdf, false);
        if (r < 0)
                return fail_pf(res, r, "writing sriov_drivers_autoprobe 0");
        r = sriov_pf_set_numvfs(&res->bdf, want->numvfs);
        if (r < 0) {
                /* A PF driver other than the recorded one is the usual why
                 * (e.g. vfio-pci without enable_sriov refuses: ENOENT). */
                bool other = want->driver && w->now->driver && strcmp(want->driver, w->now->driver) != 0;
                fail_pf(res, r, "writing sriov_numvfs %u%s%s%s%s%s", want->numvfs,
                        other ? " (driven by " : "", other ? w->now->driver : "",
                        other ? " now, by " : "", other ? want->driver : "", other ? " when recorded)" : "");
                return r;
        }
        r = sriov_pf_wait_vfs(&res->bdf, want->numvfs, w->opt->vf_wait_usec);
        if (r < 0)
                return fail_pf(res, r, "waiting for %u VFs", want->numvfs);
        res->enabled_us = now_usec();
        return 0;
}

static int worker_settings(Worker *w) {
        const PfRecord *want = w->want;
        PfRestore *res = w->result;
        int r;

        /* The PF's admin state before the VF settings: VFs of a down PF
         * carry no traffic, and some drivers refuse VF settings while the PF
         * is down.  Nothing in the new kernel brings it up otherwise. */
        if (want->netdev && w->now->netdev) {
                r = sriov_pf_set_link_up(w->now->netdev, w->now->ifindex, want->netdev_up);
                if (r < 0)
                        return fail_pf(res, r, "setting netdev %s %s", w->now->netdev,
                                       want->netdev_up ? "up" : "down");
        }
        for (size_t i = 0; i < want->n_vfs; i++) {
                const VfRecord *vf = &want->vfs[i];

                if (!vf->settings.valid)
                        continue;
                if (!w->now->netdev)
                        return fail_pf(res, -ENODEV, "VF %u has settings but the PF has no netdev", vf->index);
                r = sriov_vf_apply_settings(w->now->netdev, w->now->ifindex, vf);
                if (r < 0)
                        return fail_pf(res, r, "applying VF %u settings through %s", vf->index, w->now->netdev);
        }
        res->settings_us = now_usec();
        return 0;
}

/* Binds VF vf as recorded.  Without autoprobe the PCI core probes a VF only
 * through driver_override: a driver without one is a temporary override. */
static int worker_bind_vf(Worker *w, const VfRecord *vf) {
        PfRestore *res = w->result;
        char vfbdf[PCI_BDF_STRING_MAX];
        PciBdf now;
        int r;

        r = sriov_vf_bdf(&res->bdf, vf->index, &now);
        if (r < 0)
                return fail_pf(res, r, "reading virtfn%u", vf->index);
        bool temporary = !vf->driver_override && vf->driver;
        r = sriov_vf_bind(&now, temporary ? vf->driver : vf->driver_override, vf->driver);
        if (r >= 0 && temporary)
                r = sriov_vf_clear_override(&now);
        if (r < 0)
                return fail_pf(res, r, "binding VF %u (%s) to %s", vf->index, pci_bdf_format(&now, vfbdf),
                               vf->driver ?: "(none)");
        return 0;
}

static int worker_bind(Worker *w) {
        const PfRecord *want = w->want;
        PfRestore *res = w->result;
        const char *vf_driver = NULL;
        int r;

        /* Binding through driver_override loads no module. */
        r = drivers_load_vf_drivers(want, NULL, NULL, &vf_driver);
        if (r < 0)
                return fail_pf(res, r, "loading VF driver %s", vf_driver ?: "?");
        /* sriov_drivers_autoprobe stays 0 until every VF is bound as
         * recorded: a VF's driver attach may run asynchronously (nvme
         * probes asynchronously) and checks autoprobe only when it runs,
         * so setting it back first let a VF recorded unbound get a
         * driver.  Each VF with a recorded driver is bound explicitly. */
        for (size_t i = 0; i < want->n_vfs; i++) {
                const VfRecord *vf = &want->vfs[i];

                if (past_deadline(w))
                        return fail_pf(res, -ETIMEDOUT, "deadline passed before binding VF %u", vf->index);
                if (!vf->driver && !vf->driver_override)
                        continue;
                r = worker_bind_vf(w, vf);
                if (r < 0)
                        return r;
        }
        r = sriov_pf_set_autoprobe(&res->bdf, want->drivers_autoprobe);
        if (r < 0)
                return fail_pf(res, r, "writing sriov_drivers_autoprobe %d", want->drivers_autoprobe);
        res->bound_us = now_usec();
        return 0;
}

/* The PF read back once (this PF only, at its BDF: no enumeration of the
 * bus) and compared with the record; on this worker, so that each PF's
 * read-back overlaps the other PFs' restore.  The PF must still be the one
 * found at start (same identity): otherwise it is "gone". */
static int worker_verify(Worker *w) {
        _cleanup_(pf_record_done) PfRecord have = {};
        _cleanup_free_ char *diff = NULL;
        PfRestore *res = w->result;
        int r;

        r = sriov_pf_refresh(&res->bdf, 0, &have);
        if (r < 0)
                return fail_pf(res, r, "gone when read back");
        if (!streq_ptr(have.identity, w->now->identity))
                return fail_pf(res, -ENODEV, "gone when read back: its identity is now %s", have.identity ?: "(none)");
        r = sriov_pf_compare(w->want, &have, &diff);
        if (r < 0) {
                fail_pf(res, r, "differs when read back: %s", diff ?: "?");
                res->differences = TAKE_PTR(diff);
                return r;
        }
        res->verified_us = now_usec();
        return 0;
}

/* One PF's restore, step by step; the first failing step names the PF's
 * error (fail_pf) and ends it. */
static void *worker_run(void *userdata) {
        Worker *w = userdata;
        int r;

        w->result->start_us = now_usec();
        r = worker_find(w);
        if (r < 0)
                return NULL;
        if (r == 0 && (worker_driver(w) < 0 || worker_enable(w) < 0 || worker_settings(w) < 0 ||
                       worker_bind(w) < 0))
                return NULL;
        (void) worker_verify(w);
        return NULL;
}

static void *worker_thread(void *userdata) {
        Worker *w = userdata;
        uint64_t one = 1;

        worker_run(w);
        if (w->done_fd >= 0 && write(w->done_fd, &one, sizeof(one)) < 0)
                log_error_errno(-errno, "restore: cannot signal the end of a PF's worker: %m");
        return NULL;
}

static int on_worker_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        size_t *left = userdata;
        uint64_t n;

        (void) s;
        (void) revents;
        if (read(fd, &n, sizeof(n)) == (ssize_t) sizeof(n))
                *left -= MIN((size_t) n, *left);
        return 0;
}

/* Until `started` workers wrote done_fd.  Meanwhile event runs, when it is
 * not dispatching already (a restore asked for over D-Bus waits plainly):
 * its sources (device events) are served while the PFs are restored. */
static void wait_workers(sd_event *event, int done_fd, size_t started) {
        _cleanup_(sd_event_source_unrefp) sd_event_source *s = NULL;
        size_t left = started;
        uint64_t n;

        if (done_fd < 0)
                return;         /* pthread_join() waits */
        if (event && sd_event_get_state(event) == SD_EVENT_INITIAL &&
            sd_event_add_io(event, &s, done_fd, EPOLLIN, on_worker_done, &left) >= 0)
                while (left > 0)
                        if (sd_event_run(event, UINT64_MAX) < 0)
                                break;
        while (left > 0) {
                if (read(done_fd, &n, sizeof(n)) == (ssize_t) sizeof(n))
                        left -= MIN((size_t) n, left);
                else if (errno != EINTR)
                        break;
        }
}

/* Runs the n workers, opt->max_parallel at a time (0: all at once), each
 * on a thread of its own (here when no thread can be had). */
static void run_workers(Worker *workers, size_t n, const RestoreOptions *opt) {
        _cleanup_close_ int done_fd = eventfd(0, EFD_CLOEXEC);
        unsigned width = opt->max_parallel ?: (unsigned) n;

        if (done_fd < 0)
                log_warning_errno(-errno, "restore: eventfd: %m; the event loop waits until every PF is restored");
        for (size_t base = 0; base < n; base += width) {
                size_t end = base + width < n ? base + width : n, started = 0;

                for (size_t i = base; i < end; i++) {
                        workers[i].done_fd = done_fd;
                        int k = pthread_create(&workers[i].thread, NULL, worker_thread, &workers[i]);
                        if (k != 0)
                                worker_run(&workers[i]);        /* run it here instead */
                        else {
                                workers[i].started = true;
                                started++;
                        }
                }
                wait_workers(opt->event, done_fd, started);
                for (size_t i = base; i < end; i++)
                        if (workers[i].started)
                                pthread_join(workers[i].thread, NULL);
        }
}

void restore_results_free(PfRestore *pfs, size_t n) {
        for (size_t i = 0; pfs && i < n; i++) {
                free(pfs[i].identity);
                free(pfs[i].message);
                free(pfs[i].differences);
        }
        free(pfs);
}

int restore_all(const LuodState *want, const RestoreOptions *opt, PfRestore **ret_pfs) {
        _cleanup_luod_state_ LuodState now = {};
        _cleanup_free_ Worker *workers = NULL;
        _cleanup_free_ ssize_t *match = NULL;
        PfRestore *res = NULL;
        int r, failed = 0;

        res = calloc(want->n_pfs ?: 1, sizeof(PfRestore));
        workers = calloc(want->n_pfs ?: 1, sizeof(Worker));
        if (!res || !workers) {
                free(res);
                return -ENOMEM;
        }
        match = calloc(want->n_pfs ?: 1, sizeof(ssize_t));
        if (!match) {
                free(res);
                return -ENOMEM;
        }
        r = sriov_scan(&now);
        if (r < 0)
                log_warning_errno(r, "restore: scanning the PFs failed, every PF will be missing: %m");
        else
                r = luod_state_match_pfs(want, &now, match);
        for (size_t i = 0; i < want->n_pfs; i++) {
                res[i].recorded_bdf = res[i].bdf = want->pfs[i].bdf;
                res[i].numvfs = want->pfs[i].numvfs;
                res[i].identity = want->pfs[i].identity ? strdup(want->pfs[i].identity) : NULL;
                workers[i] = (Worker) {
                        .want = &want->pfs[i],
                        .match = r >= 0 ? match[i] : -ENODEV,
                        .now = r >= 0 && match[i] >= 0 ? &now.pfs[match[i]] : NULL,
                        .opt = opt,
                        .result = &res[i],
                };
        }

        run_workers(workers, want->n_pfs, opt);

        for (size_t i = 0; i < want->n_pfs; i++) {
                if (res[i].error != 0)
                        failed++;
                pf_record_done(&workers[i].fresh);
        }
        *ret_pfs = res;
        return failed ? -EUCLEAN : 0;
}
