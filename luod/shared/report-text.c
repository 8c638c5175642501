/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <string.h>

#include "report-text.h"

/* The member key of o as text: a string as it is, another type as its
 * JSON, "-" when o is not an object or key is missing or null.  (luoctl's
 * inventory printing has the same.) */
static const char *jstr(json_object *o, const char *key) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
                return "-";
        return json_object_get_string(v);
}

int report_text_print(FILE *f, const char *text) {
        json_object *root, *phases, *pfs;

        root = json_tokener_parse(text);
        if (!root || !json_object_is_type(root, json_type_object)) {
                json_object_put(root);
                return -EBADMSG;
        }
        fprintf(f, "update %s: %s -> %s (state via %s)%s\n", jstr(root, "update_id"), jstr(root, "old_kernel"),
                jstr(root, "new_kernel"), jstr(root, "backend"),
                json_object_get_boolean(json_object_object_get(root, "approximate")) ? ", approximate" : "");
        json_object *attempt;
        if (json_object_object_get_ex(root, "attempt", &attempt) && json_object_get_int64(attempt) > 0) {
                bool resumed = json_object_get_boolean(json_object_object_get(root, "resumed"));
                bool retry = json_object_get_boolean(json_object_object_get(root, "retry"));

                fprintf(f, "  attempt %" PRId64 "%s\n", json_object_get_int64(attempt),
                        resumed ? ": resumed (luod was restarted during the restore)" :
                        retry ? ": luoctl retry" : "");
        }
        if (json_object_object_get_ex(root, "phases", &phases) && json_object_is_type(phases, json_type_array))
                for (size_t i = 0; i < json_object_array_length(phases); i++) {
                        json_object *p = json_object_array_get_idx(phases, i);
                        fprintf(f, "  %-28s %10.1f ms\n", jstr(p, "name"),
                                json_object_get_double(json_object_object_get(p, "ms")));
                }
        if (json_object_object_get_ex(root, "pfs", &pfs) && json_object_is_type(pfs, json_type_array)) {
                fprintf(f, "  %-13s %-6s %-7s %9s %9s %9s %9s %9s  %s\n", "PF", "VFs", "result", "driver",
                        "enable", "settings", "bind", "total", "error");
                for (size_t i = 0; i < json_object_array_length(pfs); i++) {
                        json_object *p = json_object_array_get_idx(pfs, i);
#define MS(k) json_object_get_double(json_object_object_get(p, k))
                        fprintf(f, "  %-13s %-6s %-7s %9.1f %9.1f %9.1f %9.1f %9.1f  %s\n", jstr(p, "bdf"),
                                jstr(p, "numvfs"), jstr(p, "result"), MS("driver_wait_ms"), MS("enable_ms"),
                                MS("settings_ms"), MS("bind_ms"), MS("total_ms"),
                                strcmp(jstr(p, "result"), "ok") ? jstr(p, "error") : "");
#undef MS
                }
        }
        json_object *guests;
        if (json_object_object_get_ex(root, "guests", &guests) && json_object_is_type(guests, json_type_array) &&
            json_object_array_length(guests) > 0) {
                fprintf(f, "  %-30s %-4s %-8s %12s  %s\n", "guest (consumer/guest)", "VFs", "result", "downtime",
                        "error");
                for (size_t i = 0; i < json_object_array_length(guests); i++) {
                        json_object *g = json_object_array_get_idx(guests, i), *d;
                        char who[256], down[32] = "-";

                        snprintf(who, sizeof(who), "%s/%s", jstr(g, "consumer"), jstr(g, "guest"));
                        if (json_object_object_get_ex(g, "downtime_ms", &d) && d)
                                snprintf(down, sizeof(down), "%.1f ms", json_object_get_double(d));
                        fprintf(f, "  %-30s %-4s %-8s %12s  %s\n", who, jstr(g, "vfs"), jstr(g, "result"), down,
                                strcmp(jstr(g, "result"), "failed") == 0 ? jstr(g, "error") : "");
                }
                /* Per guest, where its downtime went (ms since its blackout start). */
                for (size_t i = 0; i < json_object_array_length(guests); i++) {
                        json_object *g = json_object_array_get_idx(guests, i), *ph, *at;

                        if (!json_object_object_get_ex(g, "phases", &ph) || !json_object_is_type(ph, json_type_array))
                                continue;
                        fprintf(f, "  %s/%s, ms since its blackout start:", jstr(g, "consumer"), jstr(g, "guest"));
                        for (size_t k = 0; k < json_object_array_length(ph); k++) {
                                json_object *p = json_object_array_get_idx(ph, k);

                                if (json_object_object_get_ex(p, "name", NULL) && json_object_object_get_ex(p, "at_ms", &at))
                                        fprintf(f, "%s %s %.1f", k ? "," : "", jstr(p, "name"),
                                                json_object_get_double(at));
                        }
                        fprintf(f, "\n");
                }
        }
        json_object *ev;
        if (json_object_object_get_ex(root, "events", &ev) && json_object_is_type(ev, json_type_object))
                fprintf(f, "  device events: source %s, %s held and released in order, %s of other devices, "
                        "%s dropped, %s late%s\n",
                        jstr(ev, "source"), jstr(ev, "held"), jstr(ev, "unattributed"), jstr(ev, "dropped"),
                        jstr(ev, "late"), json_object_get_boolean(json_object_object_get(ev, "overrun")) ?
                        ", the monitor overran (events lost)" : "");
        json_object_put(root);
        return 0;
}
