/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * luod — the live-update daemon.
 *
 * At start it restores a preserved state (restore_at_start()), then
 * owns org.luod1 on the system bus (or on --bus-address) with
 * org.luod1.Manager at /org/luod1 (proto/org.luod1.Manager.xml), tells
 * systemd READY=1 (so units ordered after luod.service see the VFs back) and
 * serves Update, GetInventory, GetReport and Discard until SIGTERM/SIGINT.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/signalfd.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "backend.h"
#include "consumers.h"
#include "errors.h"
#include "events.h"
#include "log.h"
#include "macro.h"
#include "manager.h"
#include "policy.h"
#include "manager-dbus.h"
#include "restore-start.h"
#include "report-write.h"
#include "update.h"
#include "update-loaded.h"
#include "time-util.h"
#include "tsc.h"

uint64_t luod_start_tsc, luod_start_boottime_us;

static const char *arg_bus_address;
static const char *arg_state_dir = "/var/lib/luod";
static const char *arg_runtime_dir = "/run/luod";
static uint64_t arg_driver_wait_usec = 30 * 1000 * 1000;
static unsigned arg_backends = BACKEND_ALL;
static const char *arg_modules_root = "/lib/modules";
static uint64_t arg_max_delay_usec = 10 * 1000 * 1000;
static unsigned arg_event_buffer = EVENTS_BUFFER_DEFAULT;
static bool arg_replay_uevents;
static bool arg_events = true;
static const char *arg_consumer_group = CONSUMER_GROUP_DEFAULT;
static const char *arg_metrics_file;
static int bus_open(Manager *m) {
        (void) luod_errors_register();
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

        r = manager_add_bus_object(m);
        if (r < 0)
                return r;

        r = sd_bus_request_name(m->bus, LUOD_BUS_NAME, 0);
        if (r < 0)
                return log_error_errno(r, "Failed to acquire bus name %s: %m", LUOD_BUS_NAME);

        r = sd_bus_attach_event(m->bus, m->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return log_error_errno(r, "Failed to attach bus to event loop: %m");
        /* Without the bus luod is of no use: exit (non-zero), so that
         * Restart=on-failure brings it back. */
        r = sd_bus_set_exit_on_disconnect(m->bus, true);
        if (r < 0)
                return log_error_errno(r, "Failed to set exit-on-disconnect on the bus: %m");
        return 0;
}

static void help(void) {
        printf("luod [OPTIONS]\n\n"
               "Live-update daemon: preserves SR-IOV state across kexec.\n\n"
               "  -h --help               Show this help\n"
               "     --version            Show the version\n"
               "     --bus-address=ADDR   Serve on this D-Bus address instead of the system bus\n"
               "     --state-dir=DIR      State file and reports (default /var/lib/luod)\n"
               "     --runtime-dir=DIR    Initrd copies and the initrd backend's state (default /run/luod)\n"
               "     --driver-wait=SEC    Bound on waiting for each PF driver at restore (default 30)\n"
               "     --backends=LIST      Preservation backends Update may use, of luo,initrd,file\n"
               "                          (default all; tried in that order; restore looks in all)\n"
               "     --modules-root=DIR   Where the new kernel's module indexes are (default /lib/modules)\n"
               "     --max-delay=SEC      Bound on waiting for delay inhibitors before kexec (default 10)\n"
               "     --event-buffer=N     Device events kept for GetEvents (default 4096, 16..65536)\n"
               "     --no-events          Do not watch, hold or replay device events\n"
               "     --replay-uevents     After restoring a PF, write \"add <uuid>\" to each VF's uevent\n"
               "     --consumer-group=GRP Group (name or gid) whose consumers may, with root, take block\n"
               "                          inhibitors and assign VFs (default luod; \"\" for root only)\n"
               "     --metrics-file=PATH  Also write each report as node_exporter textfile metrics\n"
               "                          (e.g. /var/lib/prometheus/node-exporter/luod.prom; default none)\n");
}

enum {
        ARG_VERSION = 0x100,
        ARG_BUS_ADDRESS,
        ARG_STATE_DIR,
        ARG_RUNTIME_DIR,
        ARG_DRIVER_WAIT,
        ARG_BACKENDS,
        ARG_MODULES_ROOT,
        ARG_MAX_DELAY,
        ARG_EVENT_BUFFER,
        ARG_NO_EVENTS,
        ARG_REPLAY_UEVENTS,
        ARG_CONSUMER_GROUP,
        ARG_METRICS_FILE,
};

/* Parses s, a decimal number, into *ret: min..max, nothing after it.
 * Returns 0 or -EINVAL. */
static int parse_unsigned(const char *s, unsigned long min, unsigned long max, unsigned long *ret) {
        char *end;
        unsigned long v = strtoul(s, &end, 10);

        if (!*s || *end || v < min || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* The options whose value is checked: a bad one stops luod before it
 * touches anything.  Returns 0, or -EINVAL (logged). */
static int parse_checked_option(int c, const char *value) {
        unsigned long v;

        switch (c) {
        case ARG_DRIVER_WAIT:
                if (parse_unsigned(value, 0, 3600, &v) < 0)
                        return log_error_errno(-EINVAL, "Invalid --driver-wait '%s' (seconds, 0..3600).", value);
                arg_driver_wait_usec = (uint64_t) v * 1000 * 1000;
                break;
        case ARG_MAX_DELAY:
                if (parse_sec(value, 3600, false, &arg_max_delay_usec) < 0)
                        return log_error_errno(-EINVAL, "Invalid --max-delay '%s' (seconds, 0..3600).", value);
                break;
        case ARG_EVENT_BUFFER:
                if (parse_unsigned(value, 16, EVENTS_BUFFER_MAX, &v) < 0)
                        return log_error_errno(-EINVAL, "Invalid --event-buffer '%s' (events, 16..%d).", value,
                                               EVENTS_BUFFER_MAX);
                arg_event_buffer = (unsigned) v;
                break;
        case ARG_METRICS_FILE:
                if (!*value || value[strlen(value) - 1] == '/')
                        return log_error_errno(-EINVAL, "Invalid --metrics-file '%s' (a file name).", value);
                arg_metrics_file = value;
                break;
        case ARG_BACKENDS:
                if (backends_from_string(value, &arg_backends) < 0)
                        return log_error_errno(-EINVAL, "Invalid --backends '%s' (comma-separated luo, initrd, file).",
                                               value);
                break;
        }
        return 0;
}

static int parse_argv(int argc, char *argv[]) {
        static const struct option options[] = {
                { "help",        no_argument,       NULL, 'h'             },
                { "version",     no_argument,       NULL, ARG_VERSION     },
                { "bus-address", required_argument, NULL, ARG_BUS_ADDRESS },
                { "state-dir",   required_argument, NULL, ARG_STATE_DIR   },
                { "runtime-dir", required_argument, NULL, ARG_RUNTIME_DIR },
                { "driver-wait", required_argument, NULL, ARG_DRIVER_WAIT },
                { "backends",    required_argument, NULL, ARG_BACKENDS    },
                { "modules-root", required_argument, NULL, ARG_MODULES_ROOT },
                { "max-delay",   required_argument, NULL, ARG_MAX_DELAY   },
                { "event-buffer", required_argument, NULL, ARG_EVENT_BUFFER },
                { "no-events",   no_argument,       NULL, ARG_NO_EVENTS   },
                { "replay-uevents", no_argument,    NULL, ARG_REPLAY_UEVENTS },
                { "consumer-group", required_argument, NULL, ARG_CONSUMER_GROUP },
                { "metrics-file", required_argument, NULL, ARG_METRICS_FILE },
                {}
        };
        int c, r;

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
                case ARG_STATE_DIR:
                        arg_state_dir = optarg;
                        break;
                case ARG_RUNTIME_DIR:
                        arg_runtime_dir = optarg;
                        break;
                case ARG_MODULES_ROOT:
                        arg_modules_root = optarg;
                        break;
                case ARG_NO_EVENTS:
                        arg_events = false;
                        break;
                case ARG_CONSUMER_GROUP:
                        arg_consumer_group = optarg;
                        break;
                case ARG_REPLAY_UEVENTS:
                        arg_replay_uevents = true;
                        break;
                case ARG_DRIVER_WAIT:
                case ARG_MAX_DELAY:
                case ARG_EVENT_BUFFER:
                case ARG_METRICS_FILE:
                case ARG_BACKENDS:
                        r = parse_checked_option(c, optarg);
                        if (r < 0)
                                return r;
                        break;
                default:
                        return -EINVAL;
                }
        if (optind < argc)
                return log_error_errno(-EINVAL, "Unexpected argument '%s'.", argv[optind]);
        return 1;
}

/* SIGTERM, SIGINT (systemctl stop luod): an update in progress or loaded
 * is abandoned before luod exits, so it never goes on to kexec -e.  A
 * kexec already handed to systemctl kexec is not touched: that stop is the
 * kexec's own. */
static int on_stop_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;
        char why[64];

        snprintf(why, sizeof(why), "luod stopped (%s)", si->ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
        if (update_abandon(m, why) > 0)
                (void) sd_bus_flush(m->bus);
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

/* The report of the restore again, with the device events' figures once
 * the held ones went out. */
static void write_report(Manager *m) {
        if (m->report)
                (void) report_write(m);
}

/* The Manager as the options set it: idle, nothing loaded. */
static int manager_init_from_args(Manager *m) {
        m->state_dir = arg_state_dir;
        m->runtime_dir = arg_runtime_dir;
        m->driver_wait_usec = arg_driver_wait_usec;
        m->backends = arg_backends;
        m->modules_root = arg_modules_root;
        m->max_delay_usec = arg_max_delay_usec;
        m->metrics_file = arg_metrics_file;
        if (*arg_consumer_group) {
                int r = policy_group_resolve(arg_consumer_group, &m->consumer_gid);

                m->have_consumer_gid = r >= 0;
                if (r < 0)
                        log_info("No group '%s' (%s): only root may take block inhibitors and assign VFs",
                                 arg_consumer_group, strerror(-r));
        }
        return manager_init(m);
}

/* When this kernel started luod, for the report: read first thing. */
static void record_start_time(void) {
        struct timespec boot;

        luod_start_tsc = tsc_read();
        clock_gettime(CLOCK_BOOTTIME, &boot);
        luod_start_boottime_us = (uint64_t) boot.tv_sec * 1000000 + (uint64_t) boot.tv_nsec / 1000;
}

/* Restore before anything else: a failed restore is logged, its state
 * kept, and luod serves the bus all the same (report, retry, discard).
 * SIGTERM still has its default action here: the state is written to the
 * state file, marked consumed by this boot, before the first PF is touched,
 * and a luod started again in this boot resumes from it. */
static int restore_first(Manager *m) {
        int r;

        (void) sd_notify(0, "STATUS=restoring");
        r = sd_event_default(&m->event);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate event loop: %m");
        /* Device events from before the restore on: the loop reads and
         * holds them while the restore runs (events.h). */
        if (arg_events)
                (void) events_start(m, arg_event_buffer);
        (void) consumers_load(m);
        /* An update a killed luod of this boot left loaded: never kexec'd. */
        (void) update_loaded_recover(m);
        (void) restore_at_start(m);
        return 0;
}

/* Serves the bus until a stop signal ends the loop, or the bus goes away.
 * Returns 0 or a negative errno (logged). */
static int serve(Manager *m) {
        int r;

        (void) sd_notifyf(0, "READY=1\nSTATUS=%s", m->state);
        log_info("luod %s ready on %s (%s)", PACKAGE_VERSION, arg_bus_address ?: "the system bus", m->state);

        r = sd_event_loop(m->event);
        if (r < 0)
                log_error_errno(r, "Event loop failed: %m");
        else if (r > 0) {
                /* sd-bus's exit-on-disconnect: the bus went away. */
                log_error("Disconnected from the bus; exiting so that luod is restarted");
                r = -ECONNRESET;
        }
        (void) sd_notify(0, "STOPPING=1");
        /* The bus went away or the loop failed mid-update: nothing of the
         * update may stay loaded or persisted. */
        (void) update_abandon(m, "luod is exiting");
        return r;
}

int main(int argc, char *argv[]) {
        Manager m = { .luo_out_fd = -EBADF, .luo_in_fd = -EBADF };
        sigset_t mask;
        int r;

        record_start_time();

        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? 1 : 0;

        if (manager_init_from_args(&m) < 0) {
                manager_done(&m);
                return 1;
        }

        r = restore_first(&m);
        if (r < 0)
                goto finish;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0) {
                r = log_error_errno(-errno, "Failed to block signals: %m");
                goto finish;
        }
        /* Before the bus: a stop abandons an update first (unloaded, its
         * state removed, consumers told), then the loop ends. */
        (void) sd_event_add_signal(m.event, NULL, SIGTERM, on_stop_signal, &m);
        (void) sd_event_add_signal(m.event, NULL, SIGINT, on_stop_signal, &m);

        r = bus_open(&m);
        if (r < 0)
                goto finish;
        if (m.events)
                (void) events_attach(&m, m.restore_pfs, m.n_restore_pfs, arg_replay_uevents, write_report);

        r = serve(&m);

finish:
        update_done(&m);
        sd_bus_flush_close_unref(m.bus);
        sd_event_unref(m.event);
        manager_done(&m);
        return r < 0 ? 1 : 0;
}
