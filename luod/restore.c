/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static void *worker_run(void *userdata) {
        Worker *w = userdata;
        const PfRecord *want = w->want;
        PfRestore *res = w->result;
        char vfbdf[PCI_BDF_STRING_MAX];
        int r;

        res->start_us = now_usec();
        if (w->match == -ENOTUNIQ) {
                fail_pf(res, -ENOTUNIQ, "its identity fits several PFs and none is at its recorded BDF");
                return NULL;
        }
        if (!w->now) {
                fail_pf(res, -ENODEV, "not found by its identity");
                return NULL;
        }
        res->bdf = w->now->bdf;
        /* An unused PF (no driver, no VFs when recorded): nothing to bring
         * back, and no driver to wait for. */
        if (!want->driver && want->numvfs == 0) {
                res->driver_us = res->enabled_us = res->settings_us = res->bound_us = res->verified_us = now_usec();
                return NULL;
        }

        r = sriov_pf_wait_driver(&res->bdf, w->opt->driver_wait_usec);
        if (r < 0) {
                fail_pf(res, r, "waiting for its driver (%s)", want->driver ?: "any");
                return NULL;
        }
        res->driver_us = now_usec();
        /* The scan at start may predate the PF's driver (its module loaded
         * by udev since) and so its netdev, or a udev rename: read it again. */
        r = sriov_pf_refresh(&res->bdf, want->netdev ? w->opt->driver_wait_usec : 0, &w->fresh);
        if (r < 0) {
                fail_pf(res, r, "reading it again after its driver bound");
                return NULL;
        }
        w->now = &w->fresh;

        /* VFs appear unbound: a driver probe at VF creation would be thrown
         * away by the binds below (docs/testbed.md: 127 VFs take 0.5 s
         * unprobed vs 6.6 s probed under the vIOMMU). */
        r = sriov_pf_set_autoprobe(&res->bdf, false);
        if (r < 0) {
                fail_pf(res, r, "writing sriov_drivers_autoprobe 0");
                return NULL;
        }
        r = sriov_pf_set_numvfs(&res->bdf, want->numvfs);
        if (r < 0) {
                /* A PF driver other than the recorded one is the usual why
                 * (e.g. vfio-pci without enable_sriov refuses: ENOENT). */
                bool other = want->driver && w->now->driver && strcmp(want->driver, w->now->driver) != 0;
                fail_pf(res, r, "writing sriov_numvfs %u%s%s%s%s%s", want->numvfs,
                        other ? " (driven by " : "", other ? w->now->driver : "",
                        other ? " now, by " : "", other ? want->driver : "", other ? " when recorded)" : "");
                return NULL;
        }
        r = sriov_pf_wait_vfs(&res->bdf, want->numvfs, w->opt->vf_wait_usec);
        if (r < 0) {
                fail_pf(res, r, "waiting for %u VFs", want->numvfs);
                return NULL;
        }
        res->enabled_us = now_usec();

        /* The PF's admin state before the VF settings: VFs of a down PF
         * carry no traffic, and some drivers refuse VF settings while the PF
         * is down.  Nothing in the new kernel brings it up otherwise. */
        if (want->netdev && w->now->netdev) {
                r = sriov_pf_set_link_up(w->now->netdev, w->now->ifindex, want->netdev_up);
                if (r < 0) {
                        fail_pf(res, r, "setting netdev %s %s", w->now->netdev, want->netdev_up ? "up" : "down");
                        return NULL;
                }
        }

        for (size_t i = 0; i < want->n_vfs; i++) {
                const VfRecord *vf = &want->vfs[i];

                if (!vf->settings.valid)
                        continue;
                if (!w->now->netdev) {
                        fail_pf(res, -ENODEV, "VF %u has settings but the PF has no netdev", vf->index);
                        return NULL;
                }
                r = sriov_vf_apply_settings(w->now->netdev, w->now->ifindex, vf);
                if (r < 0) {
                        fail_pf(res, r, "applying VF %u settings through %s", vf->index, w->now->netdev);
                        return NULL;
                }
        }
        res->settings_us = now_usec();

        /* Binding through driver_override loads no module. */
        const char *vf_driver = NULL;
        r = drivers_load_vf_drivers(want, NULL, NULL, &vf_driver);
        if (r < 0) {
                fail_pf(res, r, "loading VF driver %s", vf_driver ?: "?");
                return NULL;
        }

        /* sriov_drivers_autoprobe stays 0 until every VF is bound as
         * recorded: a VF's driver attach may run asynchronously (nvme
         * probes asynchronously) and checks autoprobe only when it runs,
         * so setting it back first let a VF recorded unbound get a
         * driver.  Each VF with a recorded driver is bound explicitly. */
        for (size_t i = 0; i < want->n_vfs; i++) {
                const VfRecord *vf = &want->vfs[i];
                PciBdf now;

                if (past_deadline(w)) {
                        fail_pf(res, -ETIMEDOUT, "deadline passed before binding VF %u", vf->index);
                        return NULL;
                }
                if (!vf->driver && !vf->driver_override)
                        continue;
                r = sriov_vf_bdf(&res->bdf, vf->index, &now);
                if (r < 0) {
                        fail_pf(res, r, "reading virtfn%u", vf->index);
                        return NULL;
                }
                /* Without autoprobe the PCI core probes a VF only through
                 * driver_override: use the driver as a temporary override. */
                bool temporary = !vf->driver_override && vf->driver;
                r = sriov_vf_bind(&now, temporary ? vf->driver : vf->driver_override, vf->driver);
                if (r >= 0 && temporary)
                        r = sriov_vf_clear_override(&now);
                if (r < 0) {
                        fail_pf(res, r, "binding VF %u (%s) to %s", vf->index,
                                pci_bdf_format(&now, vfbdf), vf->driver ?: "(none)");
                        return NULL;
                }
        }
        r = sriov_pf_set_autoprobe(&res->bdf, want->drivers_autoprobe);
        if (r < 0) {
                fail_pf(res, r, "writing sriov_drivers_autoprobe %d", want->drivers_autoprobe);
                return NULL;
        }
        res->bound_us = now_usec();
        return NULL;
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
        _cleanup_luod_state_ LuodState now = {}, after = {};
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

        unsigned width = opt->max_parallel ?: (unsigned) want->n_pfs;
        for (size_t base = 0; base < want->n_pfs; base += width) {
                size_t end = base + width < want->n_pfs ? base + width : want->n_pfs;

                for (size_t i = base; i < end; i++) {
                        int k = pthread_create(&workers[i].thread, NULL, worker_run, &workers[i]);
                        if (k != 0)
                                worker_run(&workers[i]);        /* run it here instead */
                        else
                                workers[i].started = true;
                }
                for (size_t i = base; i < end; i++)
                        if (workers[i].started)
                                pthread_join(workers[i].thread, NULL);
        }

        /* Read everything back once and compare PF by PF. */
        r = sriov_scan(&after);
        if (r >= 0)
                r = luod_state_match_pfs(want, &after, match);
        for (size_t i = 0; i < want->n_pfs; i++) {
                _cleanup_free_ char *diff = NULL;
                const PfRecord *have;

                if (res[i].error == 0) {
                        have = r >= 0 && match[i] >= 0 ? &after.pfs[match[i]] : NULL;
                        if (!have)
                                fail_pf(&res[i], r < 0 ? r : -ENODEV, "gone when read back");
                        else if (sriov_pf_compare(&want->pfs[i], have, &diff) < 0) {
                                fail_pf(&res[i], -EUCLEAN, "differs when read back: %s", diff ?: "?");
                                res[i].differences = TAKE_PTR(diff);
                        }
                        else
                                res[i].verified_us = now_usec();
                }
                if (res[i].error != 0)
                        failed++;
                pf_record_done(&workers[i].fresh);
        }
        *ret_pfs = res;
        return failed ? -EUCLEAN : 0;
}
