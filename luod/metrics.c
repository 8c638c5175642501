/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "fs-util.h"
#include "macro.h"
#include "metrics.h"
#include "report.h"

/* A label value as the exposition format wants it: \ " and newline
 * escaped. */
static void put_label_value(FILE *f, const char *v) {
        for (; v && *v; v++)
                switch (*v) {
                case '\\': fputs("\\\\", f); break;
                case '"':  fputs("\\\"", f); break;
                case '\n': fputs("\\n", f); break;
                default:   fputc(*v, f);
                }
}

static void header(FILE *f, const char *name, const char *help) {
        fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/* name{k1="v1",k2="v2"} value, the labels from NULL-terminated pairs. */
static void sample(FILE *f, const char *name, double value, ...) {
        va_list ap;
        const char *k;
        bool first = true;

        fputs(name, f);
        va_start(ap, value);
        while ((k = va_arg(ap, const char *))) {
                const char *v = va_arg(ap, const char *);
                fputs(first ? "{" : ",", f);
                fprintf(f, "%s=\"", k);
                put_label_value(f, v ?: "");
                fputc('"', f);
                first = false;
        }
        va_end(ap);
        if (!first)
                fputc('}', f);
        /* %.17g: the value read back is the double written. */
        fprintf(f, " %.17g\n", value);
}

static void format_update(FILE *f, const Report *r) {
        header(f, "luod_update_info", "The last live update luod restored (1), its kernels and backend.");
        sample(f, "luod_update_info", 1, "update_id", r->update_id, "old_kernel", r->old_kernel,
               "new_kernel", r->new_kernel, "backend", r->backend ? r->backend->name : NULL, NULL);
        header(f, "luod_update_approximate",
               "1 when the blackout figures are approximate (no TSC rate, or the state written before the kexec load).");
        sample(f, "luod_update_approximate", r->approximate, NULL);
        if (r->attempt > 0) {
                header(f, "luod_update_attempt", "Which attempt at applying the state this restore was (1: the first).");
                sample(f, "luod_update_attempt", r->attempt, NULL);
                header(f, "luod_update_resumed", "1 when luod resumed the restore after a restart in the same boot.");
                sample(f, "luod_update_resumed", r->resumed, NULL);
        }
        header(f, "luod_update_phase_seconds", "Duration of each phase of the last update, in seconds.");
        for (size_t i = 0; i < r->n_phases; i++)
                sample(f, "luod_update_phase_seconds", r->phases[i].ms / 1000.0,
                       "phase", report_phase_to_string(r->phases[i].type), NULL);
}

static void format_pfs(FILE *f, const Report *r) {
        char bdf[PCI_BDF_STRING_MAX];
        size_t failed = 0;

        for (size_t i = 0; i < r->n_pfs; i++)
                failed += r->pfs[i].result != PF_RESULT_OK;
        header(f, "luod_update_pfs", "SR-IOV PFs in the record of the last update.");
        sample(f, "luod_update_pfs", (double) r->n_pfs, NULL);
        header(f, "luod_update_pfs_failed", "PFs of the last update whose restore failed.");
        sample(f, "luod_update_pfs_failed", (double) failed, NULL);
        header(f, "luod_update_pf_ok", "1 when the PF was restored as recorded, 0 when its restore failed.");
        for (size_t i = 0; i < r->n_pfs; i++)
                sample(f, "luod_update_pf_ok", r->pfs[i].result == PF_RESULT_OK,
                       "bdf", pci_bdf_format(&r->pfs[i].bdf, bdf), "identity", r->pfs[i].identity, NULL);
        header(f, "luod_update_pf_vfs", "VFs recorded on the PF.");
        for (size_t i = 0; i < r->n_pfs; i++)
                sample(f, "luod_update_pf_vfs", r->pfs[i].numvfs,
                       "bdf", pci_bdf_format(&r->pfs[i].bdf, bdf), "identity", r->pfs[i].identity, NULL);
        header(f, "luod_update_pf_restore_seconds", "How long the PF's restore took, driver wait to verify.");
        for (size_t i = 0; i < r->n_pfs; i++)
                sample(f, "luod_update_pf_restore_seconds", r->pfs[i].total_ms / 1000.0,
                       "bdf", pci_bdf_format(&r->pfs[i].bdf, bdf), "identity", r->pfs[i].identity, NULL);
}

static void format_guests(FILE *f, const Report *r) {
        header(f, "luod_update_guests", "Guests whose consumers had VFs assigned at the last update.");
        sample(f, "luod_update_guests", (double) r->n_guests, NULL);
        header(f, "luod_update_guest_ok", "1 when every VF of the guest was restored (result ok or running).");
        for (size_t i = 0; i < r->n_guests; i++)
                sample(f, "luod_update_guest_ok", r->guests[i].result != GUEST_RESULT_FAILED,
                       "consumer", r->guests[i].consumer, "guest", r->guests[i].name, NULL);
        header(f, "luod_update_guest_downtime_seconds",
               "The guest's downtime, blackout start to its consumer's GuestRunning, once reported.");
        for (size_t i = 0; i < r->n_guests; i++)
                if (r->guests[i].running)
                        sample(f, "luod_update_guest_downtime_seconds", r->guests[i].downtime_ms / 1000.0,
                               "consumer", r->guests[i].consumer, "guest", r->guests[i].name, NULL);
}

int metrics_format(const Report *r, char **ret_text, size_t *ret_len) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        FILE *f;

        if (!r || !r->update_id)
                return -EINVAL;
        f = open_memstream(&text, &len);
        if (!f)
                return -ENOMEM;
        format_update(f, r);
        format_pfs(f, r);
        format_guests(f, r);
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret_len = len;
        *ret_text = TAKE_PTR(text);
        return 0;
}

int metrics_write_file(const char *path, const Report *report) {
        _cleanup_free_ char *text = NULL, *dir = NULL;
        _cleanup_close_ int dir_fd = -EBADF;
        const char *slash, *name;
        size_t len;
        int r;

        r = metrics_format(report, &text, &len);
        if (r < 0)
                return r;
        slash = strrchr(path, '/');
        dir = slash ? strndup(path, slash == path ? 1 : (size_t) (slash - path)) : strdup(".");
        if (!dir)
                return -ENOMEM;
        name = slash ? slash + 1 : path;
        if (!*name)
                return -EISDIR;
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                return -errno;
        return write_file_atomic_at(dir_fd, name, text, len, 0644);
}
