/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * luod — the live-update daemon.
 *
 * This is the skeleton of the foundation issue: it owns the D-Bus name
 * org.luod1 on the system bus (or on --bus-address), exports
 * org.luod1.Manager at /org/luod1 with the properties Version and State
 * (proto/org.luod1.Manager.xml), tells systemd READY=1 and stops on SIGTERM
 * or SIGINT.  Inventory, preservation and restore are not implemented yet.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "log.h"
#include "macro.h"

typedef struct Manager {
        sd_event *event;
        sd_bus *bus;
        const char *state;
} Manager;

static const char *arg_bus_address;

static int property_get_version(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply,
                                void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", PACKAGE_VERSION);
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("State", "s", NULL, offsetof(Manager, state), 0),
        SD_BUS_VTABLE_END
};

static int bus_open(Manager *m) {
        int r;

        if (arg_bus_address) {
                r = sd_bus_new(&m->bus);
                if (r < 0)
                        return log_error_errno(r, "Failed to allocate bus: %m");
                r = sd_bus_set_address(m->bus, arg_bus_address);
                if (r < 0)
                        return log_error_errno(r, "Failed to set bus address '%s': %m", arg_bus_address);
                r = sd_bus_set_bus_client(m->bus, 1);
                if (r >= 0)
                        r = sd_bus_start(m->bus);
                if (r < 0)
                        return log_error_errno(r, "Failed to connect to bus '%s': %m", arg_bus_address);
        } else {
                r = sd_bus_open_system(&m->bus);
                if (r < 0)
                        return log_error_errno(r, "Failed to connect to the system bus: %m");
        }

        r = sd_bus_add_object_vtable(m->bus, NULL, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE,
                                     manager_vtable, m);
        if (r < 0)
                return log_error_errno(r, "Failed to add object %s: %m", LUOD_OBJECT_PATH);

        r = sd_bus_request_name(m->bus, LUOD_BUS_NAME, 0);
        if (r < 0)
                return log_error_errno(r, "Failed to acquire bus name %s: %m", LUOD_BUS_NAME);

        r = sd_bus_attach_event(m->bus, m->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return log_error_errno(r, "Failed to attach bus to event loop: %m");
        return 0;
}

static void help(void) {
        printf("luod [OPTIONS]\n\n"
               "Live-update daemon: preserves SR-IOV state across kexec.\n\n"
               "  -h --help               Show this help\n"
               "     --version            Show the version\n"
               "     --bus-address=ADDR   Serve on this D-Bus address instead of the system bus\n");
}

static int parse_argv(int argc, char *argv[]) {
        enum { ARG_VERSION = 0x100, ARG_BUS_ADDRESS };
        static const struct option options[] = {
                { "help",        no_argument,       NULL, 'h'             },
                { "version",     no_argument,       NULL, ARG_VERSION     },
                { "bus-address", required_argument, NULL, ARG_BUS_ADDRESS },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("luod %s\n", PACKAGE_VERSION);
                        return 0;
                case ARG_BUS_ADDRESS:
                        arg_bus_address = optarg;
                        break;
                default:
                        return -EINVAL;
                }
        if (optind < argc)
                return log_error_errno(-EINVAL, "Unexpected argument '%s'.", argv[optind]);
        return 1;
}

int main(int argc, char *argv[]) {
        Manager m = { .state = "idle" };
        sigset_t mask;
        int r;

        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? 1 : 0;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(-errno, "Failed to block signals: %m"), 1;

        r = sd_event_default(&m.event);
        if (r < 0) {
                log_error_errno(r, "Failed to allocate event loop: %m");
                goto finish;
        }
        (void) sd_event_add_signal(m.event, NULL, SIGTERM, NULL, NULL);
        (void) sd_event_add_signal(m.event, NULL, SIGINT, NULL, NULL);

        r = bus_open(&m);
        if (r < 0)
                goto finish;

        (void) sd_notify(0, "READY=1\nSTATUS=idle");
        log_info("luod %s ready on %s", PACKAGE_VERSION, arg_bus_address ?: "the system bus");

        r = sd_event_loop(m.event);
        if (r < 0)
                log_error_errno(r, "Event loop failed: %m");
        (void) sd_notify(0, "STOPPING=1");

finish:
        sd_bus_flush_close_unref(m.bus);
        sd_event_unref(m.event);
        return r < 0 ? 1 : 0;
}
