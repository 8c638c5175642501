/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <string.h>

#include "json-util.h"
#include "macro.h"
#include "report-text.h"

/* The member key of o when it is of type, else NULL. */
static json_object *member_of_type(json_object *o, const char *key, json_type type) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, type) ? v : NULL;
}

static bool member_true(json_object *o, const char *key) {
        return json_object_get_boolean(json_object_object_get(o, key));
}

static double member_double(json_object *o, const char *key) {
        return json_object_get_double(json_object_object_get(o, key));
}

/* The update, its kernels and backend, and which attempt this was. */
static void print_update(FILE *f, json_object *root) {
        json_object *attempt;

        fprintf(f, "update %s: %s -> %s (state via %s)%s\n", json_text(root, "update_id"),
                json_text(root, "old_kernel"), json_text(root, "new_kernel"), json_text(root, "backend"),
                member_true(root, "approximate") ? ", approximate" : "");
        if (json_object_object_get_ex(root, "attempt", &attempt) && json_object_get_int64(attempt) > 0)
                fprintf(f, "  attempt %" PRId64 "%s\n", json_object_get_int64(attempt),
                        member_true(root, "resumed") ? ": resumed (luod was restarted during the restore)" :
                        member_true(root, "retry") ? ": luoctl retry" : "");
}

static void print_phases(FILE *f, json_object *root) {
        json_object *phases = member_of_type(root, "phases", json_type_array);

        for (size_t i = 0; phases && i < json_object_array_length(phases); i++) {
                json_object *p = json_object_array_get_idx(phases, i);
                fprintf(f, "  %-28s %10.1f ms\n", json_text(p, "name"), member_double(p, "ms"));
        }
}

static void print_pfs(FILE *f, json_object *root) {
        json_object *pfs = member_of_type(root, "pfs", json_type_array);

        if (!pfs)
                return;
        fprintf(f, "  %-13s %-6s %-7s %9s %9s %9s %9s %9s  %s\n", "PF", "VFs", "result", "driver",
                "enable", "settings", "bind", "total", "error");
        for (size_t i = 0; i < json_object_array_length(pfs); i++) {
                json_object *p = json_object_array_get_idx(pfs, i);

                fprintf(f, "  %-13s %-6s %-7s %9.1f %9.1f %9.1f %9.1f %9.1f  %s\n", json_text(p, "bdf"),
                        json_text(p, "numvfs"), json_text(p, "result"), member_double(p, "driver_wait_ms"),
                        member_double(p, "enable_ms"), member_double(p, "settings_ms"),
                        member_double(p, "bind_ms"), member_double(p, "total_ms"),
                        strcmp(json_text(p, "result"), "ok") ? json_text(p, "error") : "");
        }
}

/* Per guest, where its downtime went (ms since its blackout start). */
static void print_guest_phases(FILE *f, json_object *guests) {
        for (size_t i = 0; i < json_object_array_length(guests); i++) {
                json_object *g = json_object_array_get_idx(guests, i), *ph, *at;

                ph = member_of_type(g, "phases", json_type_array);
                if (!ph)
                        continue;
                fprintf(f, "  %s/%s, ms since its blackout start:", json_text(g, "consumer"), json_text(g, "guest"));
                for (size_t k = 0; k < json_object_array_length(ph); k++) {
                        json_object *p = json_object_array_get_idx(ph, k);

                        if (json_object_object_get_ex(p, "name", NULL) && json_object_object_get_ex(p, "at_ms", &at))
                                fprintf(f, "%s %s %.1f", k ? "," : "", json_text(p, "name"),
                                        json_object_get_double(at));
                }
                fprintf(f, "\n");
        }
}

static void print_guests(FILE *f, json_object *root) {
        json_object *guests = member_of_type(root, "guests", json_type_array);

        if (!guests || json_object_array_length(guests) == 0)
                return;
        fprintf(f, "  %-30s %-4s %-8s %12s  %s\n", "guest (consumer/guest)", "VFs", "result", "downtime",
                "error");
        for (size_t i = 0; i < json_object_array_length(guests); i++) {
                json_object *g = json_object_array_get_idx(guests, i), *d;
                char who[256], down[32] = "-";

                snprintf(who, sizeof(who), "%s/%s", json_text(g, "consumer"), json_text(g, "guest"));
                if (json_object_object_get_ex(g, "downtime_ms", &d) && d)
                        snprintf(down, sizeof(down), "%.1f ms", json_object_get_double(d));
                fprintf(f, "  %-30s %-4s %-8s %12s  %s\n", who, json_text(g, "vfs"), json_text(g, "result"),
                        down, strcmp(json_text(g, "result"), "failed") == 0 ? json_text(g, "error") : "");
        }
        print_guest_phases(f, guests);
}

static void print_events(FILE *f, json_object *root) {
        json_object *ev = member_of_type(root, "events", json_type_object);

        if (ev)
                fprintf(f, "  device events: source %s, %s held and released in order, %s of other devices, "
                        "%s dropped, %s late%s\n",
                        json_text(ev, "source"), json_text(ev, "held"), json_text(ev, "unattributed"),
                        json_text(ev, "dropped"), json_text(ev, "late"),
                        member_true(ev, "overrun") ? ", the monitor overran (events lost)" : "");
}

int report_text_print(FILE *f, const char *text) {
        _cleanup_(json_object_putp) json_object *root = NULL;

        root = json_tokener_parse(text);
        if (!root || !json_object_is_type(root, json_type_object))
                return -EBADMSG;
        print_update(f, root);
        print_phases(f, root);
        print_pfs(f, root);
        print_guests(f, root);
        print_events(f, root);
        return 0;
}
