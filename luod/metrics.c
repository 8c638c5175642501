/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs-util.h"
#include "macro.h"
#include "metrics.h"

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

static const char *str_of(json_object *o, const char *key) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_get_string(v);
}

/* The number under key, or false when absent or null. */
static bool num_of(json_object *o, const char *key, double *ret) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v) || !v)
                return false;
        if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int) &&
            !json_object_is_type(v, json_type_boolean))
                return false;
        *ret = json_object_get_double(v);
        return true;
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

static json_object *array_of(json_object *o, const char *key) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_array))
                return NULL;
        return v;
}

int metrics_format(json_object *report, char **ret_text, size_t *ret_len) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        FILE *f;
        json_object *phases, *pfs, *guests;
        const char *update_id;
        double v;

        if (!json_object_is_type(report, json_type_object) || !(update_id = str_of(report, "update_id")))
                return -EINVAL;
        f = open_memstream(&text, &len);
        if (!f)
                return -ENOMEM;

        header(f, "luod_update_info", "The last live update luod restored (1), its kernels and backend.");
        sample(f, "luod_update_info", 1, "update_id", update_id, "old_kernel", str_of(report, "old_kernel"),
               "new_kernel", str_of(report, "new_kernel"), "backend", str_of(report, "backend"), NULL);
        header(f, "luod_update_approximate",
               "1 when the blackout figures are approximate (no TSC rate, or the state written before the kexec load).");
        sample(f, "luod_update_approximate", num_of(report, "approximate", &v) ? v : 0, NULL);
        if (num_of(report, "attempt", &v)) {
                header(f, "luod_update_attempt", "Which attempt at applying the state this restore was (1: the first).");
                sample(f, "luod_update_attempt", v, NULL);
        }
        if (num_of(report, "resumed", &v)) {
                header(f, "luod_update_resumed", "1 when luod resumed the restore after a restart in the same boot.");
                sample(f, "luod_update_resumed", v, NULL);
        }

        phases = array_of(report, "phases");
        header(f, "luod_update_phase_seconds", "Duration of each phase of the last update, in seconds.");
        for (size_t i = 0; phases && i < json_object_array_length(phases); i++) {
                json_object *p = json_object_array_get_idx(phases, i);
                const char *name = str_of(p, "name");

                if (name && num_of(p, "ms", &v))
                        sample(f, "luod_update_phase_seconds", v / 1000.0, "phase", name, NULL);
        }

        pfs = array_of(report, "pfs");
        size_t n_pfs = pfs ? json_object_array_length(pfs) : 0, n_failed = 0;
        for (size_t i = 0; i < n_pfs; i++) {
                const char *r = str_of(json_object_array_get_idx(pfs, i), "result");
                n_failed += !r || strcmp(r, "ok") != 0;
        }
        header(f, "luod_update_pfs", "SR-IOV PFs in the record of the last update.");
        sample(f, "luod_update_pfs", (double) n_pfs, NULL);
        header(f, "luod_update_pfs_failed", "PFs of the last update whose restore failed.");
        sample(f, "luod_update_pfs_failed", (double) n_failed, NULL);
        header(f, "luod_update_pf_ok", "1 when the PF was restored as recorded, 0 when its restore failed.");
        for (size_t i = 0; i < n_pfs; i++) {
                json_object *p = json_object_array_get_idx(pfs, i);
                const char *r = str_of(p, "result");
                sample(f, "luod_update_pf_ok", r && strcmp(r, "ok") == 0, "bdf", str_of(p, "bdf"),
                       "identity", str_of(p, "identity"), NULL);
        }
        header(f, "luod_update_pf_vfs", "VFs recorded on the PF.");
        for (size_t i = 0; i < n_pfs; i++) {
                json_object *p = json_object_array_get_idx(pfs, i);
                if (num_of(p, "numvfs", &v))
                        sample(f, "luod_update_pf_vfs", v, "bdf", str_of(p, "bdf"), "identity", str_of(p, "identity"), NULL);
        }
        header(f, "luod_update_pf_restore_seconds", "How long the PF's restore took, driver wait to verify.");
        for (size_t i = 0; i < n_pfs; i++) {
                json_object *p = json_object_array_get_idx(pfs, i);
                if (num_of(p, "total_ms", &v))
                        sample(f, "luod_update_pf_restore_seconds", v / 1000.0, "bdf", str_of(p, "bdf"),
                               "identity", str_of(p, "identity"), NULL);
        }

        guests = array_of(report, "guests");
        size_t n_guests = guests ? json_object_array_length(guests) : 0;
        header(f, "luod_update_guests", "Guests whose consumers had VFs assigned at the last update.");
        sample(f, "luod_update_guests", (double) n_guests, NULL);
        header(f, "luod_update_guest_ok", "1 when every VF of the guest was restored (result ok or running).");
        for (size_t i = 0; i < n_guests; i++) {
                json_object *g = json_object_array_get_idx(guests, i);
                const char *r = str_of(g, "result");
                sample(f, "luod_update_guest_ok", r && strcmp(r, "failed") != 0, "consumer", str_of(g, "consumer"),
                       "guest", str_of(g, "guest"), NULL);
        }
        header(f, "luod_update_guest_downtime_seconds",
               "The guest's downtime, blackout start to its consumer's GuestRunning, once reported.");
        for (size_t i = 0; i < n_guests; i++) {
                json_object *g = json_object_array_get_idx(guests, i);
                if (num_of(g, "downtime_ms", &v))
                        sample(f, "luod_update_guest_downtime_seconds", v / 1000.0,
                               "consumer", str_of(g, "consumer"), "guest", str_of(g, "guest"), NULL);
        }

        if (fclose(f) != 0)
                return -ENOMEM;
        *ret_len = len;
        *ret_text = TAKE_PTR(text);
        return 0;
}

int metrics_write_file(const char *path, json_object *report) {
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
