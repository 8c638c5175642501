/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The typed guests of a restored update and their JSON (report.c): one per
 * (consumer, guest), failed with its first failed PF's error, downtime null
 * until GuestRunning. */
#include <stdlib.h>
#include <string.h>

#include "guests.h"
#include "macro.h"
#include "report.h"
#include "tap.h"

/* guests.c reads when luod started (luod.c defines them). */
uint64_t luod_start_tsc, luod_start_boottime_us;

int main(void) {
        Manager m = {};
        LuodState s = {};
        PfRecord pfs[2] = { { .identity = (char *) "dsn:a" }, { .identity = (char *) "dsn:b" } };
        PfRestore res[2] = { {}, { .error = -ENXIO, .message = (char *) "PF b: binding VF 1: No such device" } };

        s.pfs = pfs;
        s.n_pfs = 2;
        CHECK(luod_state_add_assignment(&s, "hv1", "vm-a", "dsn:a", 0) == 0);
        CHECK(luod_state_add_assignment(&s, "hv1", "vm-a", "dsn:a", 1) == 0);
        CHECK(luod_state_add_assignment(&s, "hv1", "vm-b", "dsn:b", 1) == 0);
        CHECK(luod_state_add_assignment(&s, "hv2", "vm-a", "dsn:a", 2) == 0);
        CHECK(guests_from_record(&m, &s, res) == 0);
        CHECK(m.n_guests == 3);
        CHECK(strcmp(m.guests[0].name, "vm-a") == 0 && m.guests[0].vfs == 2 && m.guests[0].result == GUEST_RESULT_OK);
        CHECK(m.guests[1].result == GUEST_RESULT_FAILED && strcmp(m.guests[1].error, res[1].message) == 0);
        CHECK(strcmp(m.guests[2].consumer, "hv2") == 0);

        json_object *j = report_guests(m.guests, m.n_guests);
        const char *t = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
        CHECK(strstr(t, "{\"consumer\":\"hv1\",\"guest\":\"vm-a\",\"vfs\":2,\"result\":\"ok\",\"error\":null,"
                        "\"downtime_ms\":null}") != NULL);
        CHECK(strstr(t, "\"result\":\"failed\",\"error\":\"PF b: binding VF 1: No such device\"") != NULL);
        json_object_put(j);

        m.guests[0].running = true;
        m.guests[0].result = GUEST_RESULT_RUNNING;
        m.guests[0].downtime_ms = 123.45;
        m.guests[0].blackout_start = strdup("delay-released:hv1");
        m.guests[0].phases[m.guests[0].n_phases++] = (GuestPhase) { .type = GUEST_PHASE_RUNNING, .at_ms = 123.45 };
        j = report_guests(m.guests, 1);
        t = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
        CHECK(strstr(t, "\"result\":\"running\",\"error\":null,\"downtime_ms\":123.5,"
                        "\"blackout_start\":\"delay-released:hv1\",\"approximate\":false,"
                        "\"phases\":[{\"name\":\"running\",\"at_ms\":123.5}]") != NULL);
        if (tap_failures)
                fprintf(stderr, "%s\n", t);
        json_object_put(j);
        CHECK(strcmp(guest_result_to_string(GUEST_RESULT_FAILED), "failed") == 0 && !guest_result_to_string(7));

        guests_done(&m);
        s.pfs = NULL;
        s.n_pfs = 0;
        luod_state_free(&s);
        return tap_failures;
}
