/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * luoctl — command line for luod.
 *
 * Implemented: `status` (reads org.luod1.Manager.Version and .State).
 * Not implemented yet (later issues): vfs, update, report, discard.
 *
 * Exit codes: 0 success; 1 luod returned an error or could not be reached;
 * 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "config.h"
#include "macro.h"

#define EXIT_USAGE 2

static const char *arg_bus_address;

static void bus_unrefp(sd_bus **b) {
        sd_bus_flush_close_unref(*b);
}

static int bus_connect(sd_bus **ret) {
        _cleanup_(bus_unrefp) sd_bus *bus = NULL;
        int r;

        if (!arg_bus_address) {
                r = sd_bus_open_system(&bus);
                if (r < 0) {
                        fprintf(stderr, "luoctl: cannot connect to the system bus: %s\n", strerror(-r));
                        return r;
                }
        } else {
                r = sd_bus_new(&bus);
                if (r >= 0)
                        r = sd_bus_set_address(bus, arg_bus_address);
                if (r >= 0)
                        r = sd_bus_set_bus_client(bus, 1);
                if (r >= 0)
                        r = sd_bus_start(bus);
                if (r < 0) {
                        fprintf(stderr, "luoctl: cannot connect to bus %s: %s\n", arg_bus_address, strerror(-r));
                        return r;
                }
        }
        *ret = bus;
        bus = NULL;
        return 0;
}

static int get_string_property(sd_bus *bus, const char *name, char **ret) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_get_property_string(bus, LUOD_BUS_NAME, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE,
                                       name, &error, ret);
        if (r < 0)
                fprintf(stderr, "luoctl: cannot read %s.%s from %s: %s\n", LUOD_MANAGER_IFACE, name,
                        LUOD_BUS_NAME, error.message ?: strerror(-r));
        sd_bus_error_free(&error);
        return r;
}

static int verb_status(void) {
        _cleanup_(bus_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ char *version = NULL, *state = NULL;
        int r;

        r = bus_connect(&bus);
        if (r < 0)
                return 1;
        if (get_string_property(bus, "Version", &version) < 0 ||
            get_string_property(bus, "State", &state) < 0)
                return 1;
        printf("luod:    %s\nversion: %s\nstate:   %s\n", LUOD_BUS_NAME, version, state);
        return 0;
}

static void help(void) {
        printf("luoctl [OPTIONS] COMMAND\n\n"
               "Control luod, the live-update daemon.\n\n"
               "Commands:\n"
               "  status                  Show luod's version and state\n\n"
               "Options:\n"
               "  -h --help               Show this help\n"
               "     --version            Show the version\n"
               "     --bus-address=ADDR   Talk to luod on this D-Bus address\n");
}

int main(int argc, char *argv[]) {
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
                        printf("luoctl %s\n", PACKAGE_VERSION);
                        return 0;
                case ARG_BUS_ADDRESS:
                        arg_bus_address = optarg;
                        break;
                default:
                        return EXIT_USAGE;
                }

        if (optind >= argc) {
                fprintf(stderr, "luoctl: missing command; see luoctl --help\n");
                return EXIT_USAGE;
        }
        if (strcmp(argv[optind], "status") == 0 && optind + 1 == argc)
                return verb_status();

        fprintf(stderr, "luoctl: unknown command or arguments '%s'; see luoctl --help\n", argv[optind]);
        return EXIT_USAGE;
}
