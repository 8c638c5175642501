/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <string.h>

#include "json-util.h"
#include "report-text.h"

int report_text_print(FILE *f, const char *text) {
        json_object *root, *phases, *pfs;

        root = json_tokener_parse(text);
        if (!root || !json_object_is_type(root, json_type_object)) {
                json_object_put(root);
                return -EBADMSG;
        }
        fprintf(f, "update %s: %s -> %s (state via %s)%s\n", json_text(root, "update_id"), json_text(root, "old_kernel"),
                json_text(root, "new_kernel"), json_text(root, "backend"),
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
                        fprintf(f, "  %-28s %10.1f ms\n", json_text(p, "name"),
                                json_object_get_double(json_object_object_get(p, "ms")));
                }
        if (json_object_object_get_ex(root, "pfs", &pfs) && json_object_is_type(pfs, json_type_array)) {
                fprintf(f, "  %-13s %-6s %-7s %9s %9s %9s %9s %9s  %s\n", "PF", "VFs", "result", "driver",
                        "enable", "settings", "bind", "total", "error");
                for (size_t i = 0; i < json_object_array_length(pfs); i++) {
                        json_object *p = json_object_array_get_idx(pfs, i);
#define MS(k) json_object_get_double(json_object_object_get(p, k))
                        fprintf(f, "  %-13s %-6s %-7s %9.1f %9.1f %9.1f %9.1f %9.1f  %s\n", json_text(p, "bdf"),
                                json_text(p, "numvfs"), json_text(p, "result"), MS("driver_wait_ms"), MS("enable_ms"),
                                MS("settings_ms"), MS("bind_ms"), MS("total_ms"),
                                strcmp(json_text(p, "result"), "ok") ? json_text(p, "error") : "");
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

                        snprintf(who, sizeof(who), "%s/%s", json_text(g, "consumer"), json_text(g, "guest"));
                        if (json_object_object_get_ex(g, "downtime_ms", &d) && d)
                                snprintf(down, sizeof(down), "%.1f ms", json_object_get_double(d));
                        fprintf(f, "  %-30s %-4s %-8s %12s  %s\n", who, json_text(g, "vfs"), json_text(g, "result"), down,
                                strcmp(json_text(g, "result"), "failed") == 0 ? json_text(g, "error") : "");
                }
                /* Per guest, where its downtime went (ms since its blackout start). */
                for (size_t i = 0; i < json_object_array_length(guests); i++) {
                        json_object *g = json_object_array_get_idx(guests, i), *ph, *at;

                        if (!json_object_object_get_ex(g, "phases", &ph) || !json_object_is_type(ph, json_type_array))
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
        json_object *ev;
        if (json_object_object_get_ex(root, "events", &ev) && json_object_is_type(ev, json_type_object))
                fprintf(f, "  device events: source %s, %s held and released in order, %s of other devices, "
                        "%s dropped, %s late%s\n",
                        json_text(ev, "source"), json_text(ev, "held"), json_text(ev, "unattributed"), json_text(ev, "dropped"),
                        json_text(ev, "late"), json_object_get_boolean(json_object_object_get(ev, "overrun")) ?
                        ", the monitor overran (events lost)" : "");
        json_object_put(root);
        return 0;
}
