/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A test hypervisor for luod's consumer API (sd-bus), first part: it
 * registers, assigns VFs of its guests, lists the assignments, and may stay
 * connected for a while.  Each action runs in order on one connection:
 *
 *   tb-hypervisor [--bus-address=ADDR] NAME ACTION...      (NAME "-": do not register)
 *     assign GUEST PF-IDENTITY VF-INDEX
 *     unassign GUEST PF-IDENTITY VF-INDEX
 *     list                      GetAssignments, one "assignment consumer guest identity index" a line
 *     guests                    GetGuests, one "guest consumer guest result downtime_ms" a line
 *     running GUEST             GuestRunning, prints "running GUEST downtime_ms"
 *     restored                  print the GuestRestored signals received (1 s)
 *     events SECONDS            print the DeviceEvent signals received for SECONDS
 *                               (they are printed during any action that waits, too)
 *     fetch AFTER-SEQNUM        GetEvents: "lost N", then one "fetched ..." line an event
 *     hold SECONDS              stay connected (the consumer stays registered)
 *     inhibit block WHY SECONDS hold a block inhibitor for SECONDS
 *     inhibit delay WHY SECONDS hold a delay inhibitor; on PrepareForUpdate
 *                               "pause the guests" for SECONDS, then release
 *     inhibit MODE WHY keep     take an inhibitor and keep it until exit
 *     poke                      write a byte into the last kept inhibitor's fd
 *                               (luod must not take that for a release)
 *     dry-run KERNEL INITRD     Update(KERNEL, INITRD, "", DRY_RUN): prints "plan ok", or
 *                               fails with luod's error name (as every action does)
 *     abandoned SECONDS         wait at most SECONDS for UpdateAbandoned (fails
 *                               without it); prints "abandoned UPDATE-ID REASON"
 *
 * With TB_HOSTMARK set, the moments a delay inhibitor is released and a
 * GuestRunning call starts are written to /dev/console as "LUOD-TB:
 * HOSTMARK NAME-released" / "LUOD-TB: HOSTMARK GUEST-running" (the VM test
 * bed's runner stamps them with the host's clock).
 *
 * An EventsLost signal prints "eventslost COUNT".
 * A DeviceEvent signal prints "event PF-IDENTITY SEQNUM ACTION SUBSYSTEM
 * DEVPATH held=USEC at=MONOTONIC-USEC[ synth=UUID]" (at: when it arrived).
 *
 * Exit 0 when every action succeeded; 1 at the first failure, printing
 * luod's error ("tb-hypervisor: assign ...: <message> [<error name>]") on
 * stderr. */
#include <errno.h>
#include <inttypes.h>
#include <time.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

#define BUS_NAME "org.luod1"
#define OBJECT_PATH "/org/luod1"
#define IFACE "org.luod1.Manager"

static int prepared;
static int kept_fd = -1;        /* the last inhibitor kept until exit */

static void hostmark(const char *a, const char *b) {
        FILE *f;

        if (!getenv("TB_HOSTMARK") || !(f = fopen("/dev/console", "we")))
                return;
        fprintf(f, "LUOD-TB: HOSTMARK %s-%s\n", a, b);
        fclose(f);
}

static int on_prepare(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const char *id = NULL;

        (void) sd_bus_message_read(m, "s", &id);
        printf("prepare %s\n", id ?: "?");
        fflush(stdout);
        prepared = 1;
        return 0;
}

static int abandoned;

static int on_abandoned(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const char *id = NULL, *why = NULL;

        (void) sd_bus_message_read(m, "ss", &id, &why);
        printf("abandoned %s %s\n", id ?: "?", why ?: "?");
        fflush(stdout);
        abandoned = 1;
        return 0;
}

static int on_restored(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const char *c, *g, *e;
        int ok;

        if (sd_bus_message_read(m, "sssb", &c, &g, &e, &ok) >= 0)
                printf("restored %s %s %s%s%s\n", c, g, ok ? "ok" : "failed", *e ? " " : "", e);
        return 0;
}

static uint64_t mono_us(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

/* Reads "stsssa{ss}" and prints it after prefix; the caller reads the rest. */
static int print_event(sd_bus_message *m, const char *prefix, char *synth, size_t synth_size) {
        const char *pf, *action, *subsystem, *devpath, *k, *v;
        uint64_t seqnum;
        int r;

        r = sd_bus_message_read(m, "stsss", &pf, &seqnum, &action, &subsystem, &devpath);
        if (r < 0)
                return r;
        *synth = 0;
        r = sd_bus_message_enter_container(m, 'a', "{ss}");
        while (r > 0 && (r = sd_bus_message_read(m, "{ss}", &k, &v)) > 0)
                if (strcmp(k, "SYNTH_UUID") == 0)
                        snprintf(synth, synth_size, " synth=%s", v);
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        if (r < 0)
                return r;
        printf("%s %s %" PRIu64 " %s %s %s", prefix, pf, seqnum, action, subsystem, devpath);
        return 0;
}

static int on_event(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        uint64_t at = mono_us(), held = 0;
        char synth[80];

        if (print_event(m, "event", synth, sizeof(synth)) < 0)
                return 0;
        (void) sd_bus_message_read(m, "t", &held);
        printf(" held=%" PRIu64 " at=%" PRIu64 "%s\n", held, at, synth);
        fflush(stdout);
        return 0;
}

static int on_lost(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        uint64_t n = 0;

        (void) sd_bus_message_read(m, "t", &n);
        printf("eventslost %" PRIu64 "\n", n);
        fflush(stdout);
        return 0;
}

static int pump(sd_bus *bus, uint64_t usec) {
        uint64_t end = mono_us() + usec;
        int r;

        for (uint64_t now; (now = mono_us()) < end;) {
                r = sd_bus_process(bus, NULL);
                if (r < 0) {
                        fprintf(stderr, "tb-hypervisor: processing the bus: %s\n", strerror(-r));
                        return r;
                }
                if (r == 0)
                        (void) sd_bus_wait(bus, end - now);
        }
        return 0;
}

static int call(sd_bus *bus, const char *what, const char *method, sd_bus_message **reply, const char *types, ...) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *m = NULL;
        va_list ap;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, BUS_NAME, OBJECT_PATH, IFACE, method);
        if (r >= 0 && types) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r >= 0)
                r = sd_bus_call(bus, m, 0, &error, reply);
        sd_bus_message_unref(m);
        if (r < 0) {
                fprintf(stderr, "tb-hypervisor: %s: %s [%s]\n", what, error.message ?: strerror(-r),
                        error.name ?: "-");
                sd_bus_error_free(&error);
                return -1;
        }
        return 0;
}

int main(int argc, char *argv[]) {
        const char *address = NULL;
        sd_bus *bus = NULL;
        int i = 1, r;

        if (argc > 1 && strncmp(argv[1], "--bus-address=", 14) == 0) {
                address = argv[1] + 14;
                i++;
        }
        if (argc - i < 1) {
                fprintf(stderr, "usage: tb-hypervisor [--bus-address=ADDR] NAME ACTION...\n");
                return 2;
        }
        if (address) {
                r = sd_bus_new(&bus);
                if (r >= 0)
                        r = sd_bus_set_address(bus, address);
                if (r >= 0)
                        r = sd_bus_set_bus_client(bus, 1);
                if (r >= 0)
                        r = sd_bus_start(bus);
        } else
                r = sd_bus_open_system(&bus);
        if (r < 0) {
                fprintf(stderr, "tb-hypervisor: cannot connect to the bus: %s\n", strerror(-r));
                return 1;
        }
        const char *name = argv[i++];
        /* Before registering: luod sends GuestRestored right after. */
        if (sd_bus_match_signal(bus, NULL, NULL, OBJECT_PATH, IFACE, "GuestRestored", on_restored, NULL) < 0 ||
            sd_bus_match_signal(bus, NULL, NULL, OBJECT_PATH, IFACE, "DeviceEvent", on_event, NULL) < 0 ||
            sd_bus_match_signal(bus, NULL, NULL, OBJECT_PATH, IFACE, "EventsLost", on_lost, NULL) < 0 ||
            sd_bus_match_signal(bus, NULL, NULL, OBJECT_PATH, IFACE, "UpdateAbandoned", on_abandoned, NULL) < 0)
                return 1;
        /* NAME "-": an observer that does not register (GetEvents: every PF). */
        if (strcmp(name, "-") != 0) {
                if (call(bus, "RegisterConsumer", "RegisterConsumer", NULL, "s", name) < 0)
                        return 1;
                printf("registered %s\n", name);
        }

        while (i < argc) {
                const char *a = argv[i++];

                if ((strcmp(a, "assign") == 0 || strcmp(a, "unassign") == 0) && argc - i >= 3) {
                        char what[512];
                        unsigned long idx = strtoul(argv[i + 2], NULL, 10);

                        snprintf(what, sizeof(what), "%s %s %s %s", a, argv[i], argv[i + 1], argv[i + 2]);
                        if (call(bus, what, strcmp(a, "assign") == 0 ? "AssignVF" : "UnassignVF", NULL, "ssu",
                                 argv[i], argv[i + 1], (uint32_t) idx) < 0)
                                return 1;
                        printf("%s\n", what);
                        i += 3;
                } else if (strcmp(a, "list") == 0) {
                        sd_bus_message *reply = NULL;
                        const char *c, *g, *p;
                        uint32_t x;

                        if (call(bus, "list", "GetAssignments", &reply, NULL) < 0)
                                return 1;
                        r = sd_bus_message_enter_container(reply, 'a', "(sssu)");
                        while (r > 0 && (r = sd_bus_message_read(reply, "(sssu)", &c, &g, &p, &x)) > 0)
                                printf("assignment %s %s %s %u\n", c, g, p, x);
                        sd_bus_message_unref(reply);
                        if (r < 0) {
                                fprintf(stderr, "tb-hypervisor: list: %s\n", strerror(-r));
                                return 1;
                        }
                } else if (strcmp(a, "guests") == 0) {
                        sd_bus_message *reply = NULL;
                        const char *c, *g, *res;
                        double d;

                        if (call(bus, "guests", "GetGuests", &reply, NULL) < 0)
                                return 1;
                        r = sd_bus_message_enter_container(reply, 'a', "(sssd)");
                        while (r > 0 && (r = sd_bus_message_read(reply, "(sssd)", &c, &g, &res, &d)) > 0)
                                printf("guest %s %s %s %.1f\n", c, g, res, d);
                        sd_bus_message_unref(reply);
                        if (r < 0) {
                                fprintf(stderr, "tb-hypervisor: guests: %s\n", strerror(-r));
                                return 1;
                        }
                } else if (strcmp(a, "running") == 0 && argc - i >= 1) {
                        sd_bus_message *reply = NULL;
                        char what[300];
                        double d = -1;

                        snprintf(what, sizeof(what), "running %s", argv[i]);
                        hostmark(argv[i], "running");
                        if (call(bus, what, "GuestRunning", &reply, "s", argv[i]) < 0)
                                return 1;
                        (void) sd_bus_message_read(reply, "d", &d);
                        sd_bus_message_unref(reply);
                        printf("running %s %.1f\n", argv[i], d);
                        i++;
                } else if (strcmp(a, "inhibit") == 0 && argc - i >= 3) {
                        sd_bus_message *reply = NULL;
                        unsigned secs = (unsigned) strtoul(argv[i + 2], NULL, 10);
                        bool delay = strcmp(argv[i], "delay") == 0;
                        int fd;

                        if (delay && sd_bus_match_signal(bus, NULL, NULL, OBJECT_PATH, IFACE, "PrepareForUpdate",
                                                         on_prepare, NULL) < 0)
                                return 1;
                        if (call(bus, "inhibit", "Inhibit", &reply, "ss", argv[i], argv[i + 1]) < 0)
                                return 1;
                        if (sd_bus_message_read(reply, "h", &fd) < 0 || (fd = dup(fd)) < 0)
                                return 1;
                        sd_bus_message_unref(reply);
                        printf("inhibit %s held\n", argv[i]);
                        fflush(stdout);
                        while (delay && !prepared) {
                                r = sd_bus_process(bus, NULL);
                                if (r < 0)
                                        return 1;
                                if (r == 0 && sd_bus_wait(bus, UINT64_MAX) < 0)
                                        return 1;
                        }
                        if (strcmp(argv[i + 2], "keep") == 0) {         /* held until exit */
                                kept_fd = fd;
                                i += 3;
                                continue;
                        }
                        sleep(secs);
                        close(fd);
                        hostmark(name, "released");
                        printf("inhibit %s released\n", argv[i]);
                        i += 3;
                } else if (strcmp(a, "abandoned") == 0 && argc - i >= 1) {
                        uint64_t end = mono_us() + strtoull(argv[i++], NULL, 10) * 1000000;

                        while (!abandoned && mono_us() < end) {
                                r = sd_bus_process(bus, NULL);
                                if (r < 0)
                                        return 1;
                                if (r == 0 && sd_bus_wait(bus, end - mono_us()) < 0)
                                        return 1;
                        }
                        if (!abandoned) {
                                fprintf(stderr, "tb-hypervisor: no UpdateAbandoned\n");
                                return 1;
                        }
                } else if (strcmp(a, "restored") == 0) {
                        if (pump(bus, 1000 * 1000) < 0)
                                return 1;
                } else if (strcmp(a, "events") == 0 && argc - i >= 1) {
                        if (pump(bus, (uint64_t) (strtod(argv[i++], NULL) * 1e6)) < 0)
                                return 1;
                } else if (strcmp(a, "dry-run") == 0 && argc - i >= 2) {
                        sd_bus_message *reply = NULL;

                        /* Update's flag 1: UPDATE_DRY_RUN (proto/org.luod1.Manager.xml). */
                        if (call(bus, "dry-run", "Update", &reply, "ssst", argv[i], argv[i + 1], "",
                                 (uint64_t) 1) < 0)
                                return 1;
                        sd_bus_message_unref(reply);
                        printf("plan ok\n");
                        i += 2;
                } else if (strcmp(a, "fetch") == 0 && argc - i >= 1) {
                        sd_bus_message *reply = NULL;
                        uint64_t lost = 0;
                        char synth[80];

                        if (call(bus, "fetch", "GetEvents", &reply, "t", (uint64_t) strtoull(argv[i++], NULL, 10)) < 0)
                                return 1;
                        r = sd_bus_message_read(reply, "t", &lost);
                        if (r >= 0)
                                printf("lost %" PRIu64 "\n", lost);
                        if (r >= 0)
                                r = sd_bus_message_enter_container(reply, 'a', "(stsssa{ss})");
                        while (r > 0 && (r = sd_bus_message_enter_container(reply, 'r', "stsssa{ss}")) > 0) {
                                r = print_event(reply, "fetched", synth, sizeof(synth));
                                if (r >= 0)
                                        r = sd_bus_message_exit_container(reply);
                                printf("%s\n", synth);
                                r = r >= 0 ? 1 : r;
                        }
                        sd_bus_message_unref(reply);
                        if (r < 0) {
                                fprintf(stderr, "tb-hypervisor: fetch: %s\n", strerror(-r));
                                return 1;
                        }
                } else if (strcmp(a, "poke") == 0) {
                        if (kept_fd < 0 || write(kept_fd, "x", 1) != 1) {
                                fprintf(stderr, "tb-hypervisor: poke: %s\n", kept_fd < 0 ? "no kept inhibitor" : strerror(errno));
                                return 1;
                        }
                        printf("poked\n");
                } else if (strcmp(a, "hold") == 0 && argc - i >= 1) {
                        fflush(stdout);
                        sleep((unsigned) strtoul(argv[i++], NULL, 10));
                } else {
                        fprintf(stderr, "tb-hypervisor: bad action '%s'\n", a);
                        return 2;
                }
                fflush(stdout);
        }
        sd_bus_flush_close_unref(bus);
        return 0;
}
