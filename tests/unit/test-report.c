/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The report as luod writes it (report.c): a restore's results built into
 * a report, its attempt and guests added, written to report.json,
 * reports/<id>.json and the metrics file; each compared byte for byte
 * with the text luod wrote for the same results, so that fleet tools
 * reading these files see the same fields, values and order.  Then read
 * back (report_parse()): the same report, written again the same. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "events.h"
#include "macro.h"
#include "report.h"
#include "report-write.h"
#include "tap.h"

/* guests.c and restore-start.c read when luod started (luod.c defines them). */
uint64_t luod_start_tsc, luod_start_boottime_us;

#define UPDATE_ID "8f0c6d1e-4b7a-4c55-9a51-3e2b1f0d9c77"

/* Two PFs (one restored, one failed with differences and no identity),
 * every timestamp, two delay inhibitors (one released, one timed out),
 * attempt 2 by luoctl retry; guests: one running with phases, one failed.
 * "@NEW_KERNEL@" stands for this machine's uname -r. */
static const char full_json[] =
"{\n"
"  \"update_id\": \"" UPDATE_ID "\",\n"
"  \"old_kernel\": \"7.3.4-luod\",\n"
"  \"new_kernel\": \"@NEW_KERNEL@\",\n"
"  \"backend\": \"initrd\",\n"
"  \"tsc_khz\": 2000000,\n"
"  \"approximate\": false,\n"
"  \"phases\": [\n"
"    {\n"
"      \"name\": \"snapshot\",\n"
"      \"ms\": 1.0\n"
"    },\n"
"    {\n"
"      \"name\": \"kexec-load\",\n"
"      \"ms\": 2.8\n"
"    },\n"
"    {\n"
"      \"name\": \"persist-and-kexec\",\n"
"      \"ms\": 1500.0\n"
"    },\n"
"    {\n"
"      \"name\": \"kernel-boot-to-luod-start\",\n"
"      \"ms\": 1500.0\n"
"    },\n"
"    {\n"
"      \"name\": \"kernel-pci-enumeration\",\n"
"      \"ms\": 1050.0\n"
"    },\n"
"    {\n"
"      \"name\": \"restore\",\n"
"      \"ms\": 800.0\n"
"    },\n"
"    {\n"
"      \"name\": \"total-blackout\",\n"
"      \"ms\": 3800.0\n"
"    }\n"
"  ],\n"
"  \"inhibitors\": [\n"
"    {\n"
"      \"consumer\": \"hv1\",\n"
"      \"held_ms\": 2.0,\n"
"      \"timed_out\": false\n"
"    },\n"
"    {\n"
"      \"consumer\": \"hv2\",\n"
"      \"held_ms\": 10.0,\n"
"      \"timed_out\": true\n"
"    }\n"
"  ],\n"
"  \"pci_devices_found\": 12,\n"
"  \"pfs\": [\n"
"    {\n"
"      \"bdf\": \"0000:01:00.0\",\n"
"      \"recorded_bdf\": \"0000:01:00.0\",\n"
"      \"identity\": \"dsn:00-11-22-ff-fe-33-44-55\\/00.0\",\n"
"      \"numvfs\": 8,\n"
"      \"result\": \"ok\",\n"
"      \"error\": null,\n"
"      \"differences\": [\n"
"      ],\n"
"      \"driver_wait_ms\": 20.0,\n"
"      \"enable_ms\": 100.0,\n"
"      \"settings_ms\": 4.5,\n"
"      \"bind_ms\": 74.5,\n"
"      \"verify_ms\": 10.2,\n"
"      \"end_monotonic_us\": 210250,\n"
"      \"total_ms\": 209.25\n"
"    },\n"
"    {\n"
"      \"bdf\": \"0000:03:00.0\",\n"
"      \"recorded_bdf\": \"0000:02:00.0\",\n"
"      \"identity\": null,\n"
"      \"numvfs\": 3,\n"
"      \"result\": \"failed\",\n"
"      \"error\": \"PF 0000:03:00.0: binding VF 1: No such device\",\n"
"      \"differences\": [\n"
"        \"PF 0000:03:00.0: numvfs: want 3, have 0\",\n"
"        \"PF 0000:03:00.0 VF 1: driver: want vfio-pci, have none\"\n"
"      ],\n"
"      \"driver_wait_ms\": 4.0,\n"
"      \"enable_ms\": 0.0,\n"
"      \"settings_ms\": 0.0,\n"
"      \"bind_ms\": 0.0,\n"
"      \"verify_ms\": 0.0,\n"
"      \"end_monotonic_us\": 5000,\n"
"      \"total_ms\": 0.0\n"
"    }\n"
"  ],\n"
"  \"attempt\": 2,\n"
"  \"resumed\": false,\n"
"  \"retry\": true,\n"
"  \"guests\": [\n"
"    {\n"
"      \"consumer\": \"hv1\",\n"
"      \"guest\": \"vm-a\",\n"
"      \"vfs\": 2,\n"
"      \"result\": \"running\",\n"
"      \"error\": null,\n"
"      \"downtime_ms\": 4321.1,\n"
"      \"blackout_start\": \"delay-released:hv1\",\n"
"      \"approximate\": false,\n"
"      \"phases\": [\n"
"        {\n"
"          \"name\": \"blackout-start\",\n"
"          \"at_ms\": 0.0\n"
"        },\n"
"        {\n"
"          \"name\": \"running\",\n"
"          \"at_ms\": 4321.1\n"
"        }\n"
"      ]\n"
"    },\n"
"    {\n"
"      \"consumer\": \"hv2\",\n"
"      \"guest\": \"vm-b\",\n"
"      \"vfs\": 1,\n"
"      \"result\": \"failed\",\n"
"      \"error\": \"PF 0000:03:00.0: binding VF 1: No such device\",\n"
"      \"downtime_ms\": null\n"
"    }\n"
"  ]\n"
"}";

static const char full_prom[] =
"# HELP luod_update_info The last live update luod restored (1), its kernels and backend.\n"
"# TYPE luod_update_info gauge\n"
"luod_update_info{update_id=\"" UPDATE_ID "\",old_kernel=\"7.3.4-luod\",new_kernel=\"@NEW_KERNEL@\",backend=\"initrd\"} 1\n"
"# HELP luod_update_approximate 1 when the blackout figures are approximate (no TSC rate, or the state written before the kexec load).\n"
"# TYPE luod_update_approximate gauge\n"
"luod_update_approximate 0\n"
"# HELP luod_update_attempt Which attempt at applying the state this restore was (1: the first).\n"
"# TYPE luod_update_attempt gauge\n"
"luod_update_attempt 2\n"
"# HELP luod_update_resumed 1 when luod resumed the restore after a restart in the same boot.\n"
"# TYPE luod_update_resumed gauge\n"
"luod_update_resumed 0\n"
"# HELP luod_update_phase_seconds Duration of each phase of the last update, in seconds.\n"
"# TYPE luod_update_phase_seconds gauge\n"
"luod_update_phase_seconds{phase=\"snapshot\"} 0.001\n"
"luod_update_phase_seconds{phase=\"kexec-load\"} 0.0027499999999999998\n"
"luod_update_phase_seconds{phase=\"persist-and-kexec\"} 1.5\n"
"luod_update_phase_seconds{phase=\"kernel-boot-to-luod-start\"} 1.5\n"
"luod_update_phase_seconds{phase=\"kernel-pci-enumeration\"} 1.05\n"
"luod_update_phase_seconds{phase=\"restore\"} 0.80000000000000004\n"
"luod_update_phase_seconds{phase=\"total-blackout\"} 3.7999999999999998\n"
"# HELP luod_update_pfs SR-IOV PFs in the record of the last update.\n"
"# TYPE luod_update_pfs gauge\n"
"luod_update_pfs 2\n"
"# HELP luod_update_pfs_failed PFs of the last update whose restore failed.\n"
"# TYPE luod_update_pfs_failed gauge\n"
"luod_update_pfs_failed 1\n"
"# HELP luod_update_pf_ok 1 when the PF was restored as recorded, 0 when its restore failed.\n"
"# TYPE luod_update_pf_ok gauge\n"
"luod_update_pf_ok{bdf=\"0000:01:00.0\",identity=\"dsn:00-11-22-ff-fe-33-44-55/00.0\"} 1\n"
"luod_update_pf_ok{bdf=\"0000:03:00.0\",identity=\"\"} 0\n"
"# HELP luod_update_pf_vfs VFs recorded on the PF.\n"
"# TYPE luod_update_pf_vfs gauge\n"
"luod_update_pf_vfs{bdf=\"0000:01:00.0\",identity=\"dsn:00-11-22-ff-fe-33-44-55/00.0\"} 8\n"
"luod_update_pf_vfs{bdf=\"0000:03:00.0\",identity=\"\"} 3\n"
"# HELP luod_update_pf_restore_seconds How long the PF's restore took, driver wait to verify.\n"
"# TYPE luod_update_pf_restore_seconds gauge\n"
"luod_update_pf_restore_seconds{bdf=\"0000:01:00.0\",identity=\"dsn:00-11-22-ff-fe-33-44-55/00.0\"} 0.20924999999999999\n"
"luod_update_pf_restore_seconds{bdf=\"0000:03:00.0\",identity=\"\"} 0\n"
"# HELP luod_update_guests Guests whose consumers had VFs assigned at the last update.\n"
"# TYPE luod_update_guests gauge\n"
"luod_update_guests 2\n"
"# HELP luod_update_guest_ok 1 when every VF of the guest was restored (result ok or running).\n"
"# TYPE luod_update_guest_ok gauge\n"
"luod_update_guest_ok{consumer=\"hv1\",guest=\"vm-a\"} 1\n"
"luod_update_guest_ok{consumer=\"hv2\",guest=\"vm-b\"} 0\n"
"# HELP luod_update_guest_downtime_seconds The guest's downtime, blackout start to its consumer's GuestRunning, once reported.\n"
"# TYPE luod_update_guest_downtime_seconds gauge\n"
"luod_update_guest_downtime_seconds{consumer=\"hv1\",guest=\"vm-a\"} 4.3210600000000001\n";

/* No TSC rate, no timestamps, no kernel log, no PF, no guest: the first
 * attempt, from the luo backend. */
static const char empty_json[] =
"{\n"
"  \"update_id\": \"" UPDATE_ID "\",\n"
"  \"old_kernel\": \"\",\n"
"  \"new_kernel\": \"@NEW_KERNEL@\",\n"
"  \"backend\": \"luo\",\n"
"  \"tsc_khz\": 0,\n"
"  \"approximate\": true,\n"
"  \"phases\": [\n"
"  ],\n"
"  \"inhibitors\": [\n"
"  ],\n"
"  \"pci_devices_found\": 0,\n"
"  \"pfs\": [\n"
"  ],\n"
"  \"attempt\": 1,\n"
"  \"resumed\": true,\n"
"  \"retry\": false,\n"
"  \"guests\": [\n"
"  ]\n"
"}";

/* text with every "@NEW_KERNEL@" replaced by this machine's uname -r. */
static char *with_kernel(const char *text) {
        struct utsname u;
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        const char *p;

        CHECK(uname(&u) == 0 && f);
        while ((p = strstr(text, "@NEW_KERNEL@"))) {
                fwrite(text, 1, p - text, f);
                fputs(u.release, f);
                text = p + strlen("@NEW_KERNEL@");
        }
        fputs(text, f);
        fclose(f);
        return out;
}

static char *read_all(const char *dir, const char *name) {
        char path[256], *buf = calloc(1, 65536);
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        n = fd >= 0 ? read(fd, buf, 65535) : -1;
        CHECK(n >= 0);
        if (fd >= 0)
                close(fd);
        return buf;
}

static bool same(const char *what, const char *have, const char *want_template) {
        _cleanup_free_ char *want = with_kernel(want_template);
        bool ok = strcmp(have, want) == 0;

        if (!ok)
                fprintf(stderr, "%s differs; have:\n%s\nwant:\n%s\n", what, have, want);
        return ok;
}

static void add_timestamps(LuodState *s) {
        static const struct {
                const char *name;
                uint64_t tsc;
        } t[] = {
                { "snapshot-start",     1000000 },
                { "snapshot-end",       3000000 },
                { "kexec-load-start",   3500000 },
                { "kexec-load-end",     9000000 },
                { "prepare-start",     10000000 },
                { "delay-released:hv1", 14000000 },
                { "delay-timeout:hv2", 30000000 },
                { "persist-start",     32000000 },
        };

        for (size_t i = 0; i < ELEMENTSOF(t); i++)
                CHECK(luod_state_add_timestamp(s, t[i].name, t[i].tsc, 1700000000000000000ULL + i) == 0);
}

static void test_full(const char *dir) {
        Manager m = { .state_dir = dir };
        LuodState s = { .update_id = UPDATE_ID, .tsc_khz = 2000000, .n_pfs = 2 };
        char metrics[256];
        PfRestore pfs[2] = {
                {
                        .recorded_bdf = { 0, 1, 0, 0 }, .bdf = { 0, 1, 0, 0 },
                        .identity = (char *) "dsn:00-11-22-ff-fe-33-44-55/00.0", .numvfs = 8,
                        .start_us = 1000, .driver_us = 21000, .enabled_us = 121000, .settings_us = 125500,
                        .bound_us = 200000, .verified_us = 210250,
                },
                {
                        .recorded_bdf = { 0, 2, 0, 0 }, .bdf = { 0, 3, 0, 0 }, .numvfs = 3, .error = -ENXIO,
                        .message = (char *) "PF 0000:03:00.0: binding VF 1: No such device",
                        .differences = (char *) "PF 0000:03:00.0: numvfs: want 3, have 0\n"
                                                "PF 0000:03:00.0 VF 1: driver: want vfio-pci, have none\n",
                        .start_us = 1000, .driver_us = 5000,
                },
        };
        KernelBootLog kboot = { .pci_first_us = 200000, .pci_last_us = 1250000, .pci_devices = 12 };
        Guest guests[2] = {
                {
                        .consumer = strdup("hv1"), .name = strdup("vm-a"), .vfs = 2, .result = GUEST_RESULT_RUNNING,
                        .running = true, .downtime_ms = 4321.06, .blackout_start = strdup("delay-released:hv1"),
                        .phases = { { .type = GUEST_PHASE_BLACKOUT_START, .at_ms = 0 }, { .type = GUEST_PHASE_RUNNING, .at_ms = 4321.06 } },
                        .n_phases = 2,
                },
                {
                        .consumer = strdup("hv2"), .name = strdup("vm-b"), .vfs = 1, .result = GUEST_RESULT_FAILED,
                        .error = strdup("PF 0000:03:00.0: binding VF 1: No such device"),
                },
        };
        /* luod started 1.5 s after the kernel, 3 s after persist-start;
         * its restore took 0.8 s (TSC at 2 GHz). */
        uint64_t start = 32000000 + 2000000ULL * 3000, end = start + 2000000ULL * 800;

        s.old_kernel_release = strdup("7.3.4-luod");
        add_timestamps(&s);
        snprintf(metrics, sizeof(metrics), "%s/luod.prom", dir);
        m.metrics_file = metrics;
        CHECK(report_build(&s, &backend_initrd, pfs, start, 1500000, end, &kboot, &m.report) == 0);
        m.report->attempt = 2;
        m.report->retry = true;
        m.guests = guests;
        m.n_guests = 2;
        CHECK(report_write(&m) == 0);

        _cleanup_free_ char *json = read_all(dir, "report.json"), *kept = read_all(dir, "reports/" UPDATE_ID ".json"),
                            *prom = read_all(dir, "luod.prom");
        CHECK(same("report.json", json, full_json));
        CHECK(strcmp(json, kept) == 0);
        CHECK(same("luod.prom", prom, full_prom));

        report_free(m.report);
        for (size_t i = 0; i < 2; i++)
                guest_done(&guests[i]);
        s.n_pfs = 0;    /* the records themselves were never there: report_build() reads only pfs */
        luod_state_free(&s);
}

static void test_empty(const char *dir) {
        Manager m = { .state_dir = dir };
        LuodState s = { .update_id = UPDATE_ID };

        CHECK(report_build(&s, &backend_luo, NULL, 0, 0, 0, NULL, &m.report) == 0);
        m.report->attempt = 1;
        m.report->resumed = true;
        CHECK(report_write(&m) == 0);

        _cleanup_free_ char *json = read_all(dir, "report.json");
        CHECK(same("report.json", json, empty_json));
        report_free(m.report);
}

static const char events_json[] =
"  \"events\": {\n"
"    \"source\": \"udev\",\n"
"    \"buffer\": 4096,\n"
"    \"received\": 10,\n"
"    \"delivered\": 8,\n"
"    \"held\": 6,\n"
"    \"unattributed\": 2,\n"
"    \"dropped\": 1,\n"
"    \"dropped_by_pf\": {\n"
"      \"dsn:00-11-22-ff-fe-33-44-55\\/00.0\": 1\n"
"    },\n"
"    \"late\": 0,\n"
"    \"overrun\": true,\n"
"    \"replayed_uevents\": 3,\n"
"    \"waited_out\": 1,\n"
"    \"release\": {\n"
"      \"after_restore_ms\": 812.5,\n"
"      \"until_attach_ms\": 40.25,\n"
"      \"scan_ms\": 120.0,\n"
"      \"attribute_ms\": 2.25,\n"
"      \"udev_queue_ms\": 650.0\n"
"    }\n"
"  }\n"
"}";

/* What luod wrote reads back into the same report: formatted again, the
 * same bytes; the device events' figures too. */
static void test_read_back(void) {
        _cleanup_free_ char *full = with_kernel(full_json), *empty = with_kernel(empty_json), *text = NULL,
                            *again = NULL;
        _cleanup_(report_freep) Report *r = NULL, *e = NULL, *r2 = NULL;

        CHECK(report_parse(full, &r, NULL) == 0);
        if (!r)
                return;
        CHECK(strcmp(r->update_id, UPDATE_ID) == 0 && r->backend == &backend_initrd && r->tsc_khz == 2000000);
        CHECK(r->attempt == 2 && r->retry && !r->resumed && !r->approximate && r->pci_devices_found == 12);
        CHECK(r->n_phases == 7 && r->phases[6].type == REPORT_PHASE_TOTAL_BLACKOUT && r->phases[6].ms == 3800);
        CHECK(r->n_inhibitors == 2 && r->inhibitors[1].timed_out && r->inhibitors[1].has_held_ms);
        CHECK(r->n_pfs == 2 && r->pfs[0].result == PF_RESULT_OK && r->pfs[0].numvfs == 8);
        CHECK(r->pfs[1].result == PF_RESULT_FAILED && !r->pfs[1].identity && r->pfs[1].n_differences == 2);
        CHECK(r->pfs[1].recorded_bdf.bus == 2 && r->pfs[1].bdf.bus == 3 && r->pfs[0].end_monotonic_us == 210250);
        CHECK(r->n_guests == 2 && r->guests[0].running && r->guests[0].n_phases == 2);
        CHECK(r->guests[0].phases[1].type == GUEST_PHASE_RUNNING && !r->guests[1].running);
        CHECK(r->guests[1].result == GUEST_RESULT_FAILED && !r->events);
        CHECK(report_format(r, &text, NULL) == 0 && same("report.json read back", text, full_json));

        CHECK(report_parse(empty, &e, NULL) == 0);
        free(text);
        text = NULL;
        CHECK(e && report_format(e, &text, NULL) == 0 && same("empty report read back", text, empty_json));

        /* With the device events' figures. */
        r->events = calloc(1, sizeof(EventsStats));
        CHECK(r->events);
        if (!r->events)
                return;
        *r->events = (EventsStats) {
                .source = strdup("udev"), .buffer = 4096, .received = 10, .delivered = 8, .held = 6,
                .unattributed = 2, .dropped = 1, .overrun = true, .replayed_uevents = 3,
                .dropped_by_pf = calloc(1, sizeof(EventsPfDropped)), .n_dropped_by_pf = 1,
                .waited_out = 1, .released = true,
                .release = { .after_restore_ms = 812.5, .until_attach_ms = 40.25, .scan_ms = 120,
                             .attribute_ms = 2.25, .udev_queue_ms = 650 },
        };
        r->events->dropped_by_pf[0] = (EventsPfDropped) {
                .identity = strdup("dsn:00-11-22-ff-fe-33-44-55/00.0"), .dropped = 1,
        };
        free(text);
        text = NULL;
        CHECK(report_format(r, &text, NULL) == 0);
        CHECK(text && strlen(text) > strlen(events_json) &&
              strcmp(text + strlen(text) - strlen(events_json), events_json) == 0);
        CHECK(text && report_parse(text, &r2, NULL) == 0);
        CHECK(r2 && r2->events && r2->events->overrun && r2->events->n_dropped_by_pf == 1);
        CHECK(r2 && r2->events && r2->events->waited_out == 1 && r2->events->released &&
              r2->events->release.udev_queue_ms == 650 && r2->events->release.after_restore_ms == 812.5);
        CHECK(r2 && report_format(r2, &again, NULL) == 0 && text && strcmp(again, text) == 0);
        if (tap_failures)
                fprintf(stderr, "%s\n", text);
}

/* What is not a report is refused; what is missing is 0, NULL or empty. */
static void test_read_refused(void) {
        static const char *const bad[] = {
                "[ 1 ]",
                "not JSON",
                "{ }",
                "{ \"update_id\": 5 }",
                "{ \"update_id\": \"u\", \"tsc_khz\": \"2000000\" }",
                "{ \"update_id\": \"u\", \"tsc_khz\": -1 }",
                "{ \"update_id\": \"u\", \"backend\": \"floppy\" }",
                "{ \"update_id\": \"u\", \"phases\": [ { \"name\": \"nap\", \"ms\": 1 } ] }",
                "{ \"update_id\": \"u\", \"phases\": [ { \"name\": \"restore\" } ] }",
                "{ \"update_id\": \"u\", \"phases\": 5 }",
                "{ \"update_id\": \"u\", \"pfs\": [ { \"bdf\": \"zz\", \"result\": \"ok\" } ] }",
                "{ \"update_id\": \"u\", \"pfs\": [ { \"result\": \"ok\", \"numvfs\": 4294967296 } ] }",
                "{ \"update_id\": \"u\", \"pfs\": [ { \"numvfs\": 1 } ] }",
                "{ \"update_id\": \"u\", \"pfs\": [ \"x\" ] }",
                "{ \"update_id\": \"u\", \"guests\": [ { \"consumer\": \"c\", \"result\": \"ok\" } ] }",
                "{ \"update_id\": \"u\", \"events\": { \"dropped_by_pf\": { \"x\": \"1\" } } }",
        };
        _cleanup_(report_freep) Report *r = NULL;
        _cleanup_free_ char *text = NULL;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ char *error = NULL;
                Report *x = NULL;
                int k = report_parse(bad[i], &x, &error);

                if (k != -EBADMSG || !error)
                        fprintf(stderr, "report_parse(%s) = %d (%s)\n", bad[i], k, error ?: "no message");
                CHECK(k == -EBADMSG && !x && error);
                report_free(x);
        }
        /* The message names the member. */
        _cleanup_free_ char *error = NULL;
        CHECK(report_parse("{ \"update_id\": \"u\", \"pfs\": [ { \"result\": \"ok\" }, { \"result\": \"lost\" } ] }",
                           &r, &error) == -EBADMSG);
        CHECK(error && strcmp(error, "pfs[1]: result: unknown \"lost\"") == 0);
        CHECK(report_parse("{ \"update_id\": \"u\", \"backend\": null, \"pfs\": [ { \"result\": \"ok\" } ],"
                           "  \"x-new\": 1 }", &r, NULL) == 0);
        CHECK(r && !r->backend && !r->old_kernel && r->attempt == 0 && r->n_pfs == 1 && r->pfs[0].numvfs == 0);
        CHECK(r && !r->pfs[0].identity && r->n_guests == 0 && !r->events);
        CHECK(r && report_format(r, &text, NULL) == 0 && text && !strstr(text, "attempt") && !strstr(text, "x-new"));
}

int main(void) {
        char dir[] = "/tmp/test-report-XXXXXX", cmd[64];

        CHECK(mkdtemp(dir));
        test_full(dir);
        test_empty(dir);
        test_read_back();
        test_read_refused();
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        (void) system(cmd);
        return tap_failures;
}
