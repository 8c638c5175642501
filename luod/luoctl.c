/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * luoctl — command line for luod.
 *
 * Commands: status, vfs, update, report, retry, discard, abandon (see luoctl(8)).
 *
 * Exit codes: 0 success; 1 luod returned an error or could not be reached;
 * 2 usage error; 3 the update was not confirmed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

#include "config.h"
#include "macro.h"
#include "report-text.h"
#include "time-util.h"

#define EXIT_USAGE 2
#define EXIT_NOT_CONFIRMED 3

/* org.luod1.Manager.Update flags */
#define UPDATE_DRY_RUN     (UINT64_C(1) << 0)
#define UPDATE_VIA_SYSTEMD (UINT64_C(1) << 1)

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
        _cleanup_free_ char *version = NULL, *state = NULL, *update_id = NULL, *last_error = NULL;
        int r;

        r = bus_connect(&bus);
        if (r < 0)
                return 1;
        if (get_string_property(bus, "Version", &version) < 0 ||
            get_string_property(bus, "State", &state) < 0 ||
            get_string_property(bus, "UpdateId", &update_id) < 0 ||
            get_string_property(bus, "LastError", &last_error) < 0)
                return 1;
        printf("luod:    %s\nversion: %s\nstate:   %s\n", LUOD_BUS_NAME, version, state);
        if (*update_id)
                printf("update:  %s\n", update_id);
        if (*last_error)
                printf("error:   %s\n", last_error);
        return 0;
}


/* Calls a method of org.luod1.Manager that returns one string. */
static int call_string(sd_bus *bus, const char *method, char **ret) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *s;
        int r;

        r = sd_bus_call_method(bus, LUOD_BUS_NAME, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE, method,
                               &error, &reply, "");
        if (r >= 0)
                r = sd_bus_message_read(reply, "s", &s);
        if (r >= 0)
                *ret = strdup(s);
        if (r < 0)
                fprintf(stderr, "luoctl: %s failed: %s\n", method, error.message ?: strerror(-r));
        sd_bus_error_free(&error);
        sd_bus_message_unref(reply);
        return r;
}

static const char *jstr(json_object *o, const char *key) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
                return "-";
        return json_object_get_string(v);
}

static int verb_vfs(bool json) {
        _cleanup_(bus_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ char *text = NULL;
        json_object *root, *pfs;

        if (bus_connect(&bus) < 0 || call_string(bus, "GetInventory", &text) < 0)
                return 1;
        if (json) {
                fputs(text, stdout);
                return 0;
        }
        root = json_tokener_parse(text);
        if (!root || !json_object_object_get_ex(root, "pfs", &pfs) || !json_object_is_type(pfs, json_type_array)) {
                fprintf(stderr, "luoctl: GetInventory returned malformed JSON\n");
                json_object_put(root);
                return 1;
        }
        for (size_t i = 0; i < json_object_array_length(pfs); i++) {
                json_object *pf = json_object_array_get_idx(pfs, i), *vfs;

                printf("PF %s  %s:%s  driver %s  netdev %s  VFs %s/%s  autoprobe %s  %s\n",
                       jstr(pf, "bdf"), jstr(pf, "vendor"), jstr(pf, "device"), jstr(pf, "driver"),
                       jstr(pf, "netdev"), jstr(pf, "numvfs"), jstr(pf, "totalvfs"),
                       jstr(pf, "drivers_autoprobe"), jstr(pf, "identity"));
                if (!json_object_object_get_ex(pf, "vfs", &vfs) || json_object_array_length(vfs) == 0)
                        continue;
                printf("  %-4s %-13s %-10s %-10s %-6s %-17s %s\n", "VF", "BDF", "DRIVER", "OVERRIDE",
                       "GROUP", "MAC", "VLAN");
                for (size_t j = 0; j < json_object_array_length(vfs); j++) {
                        json_object *vf = json_object_array_get_idx(vfs, j), *st;
                        bool has = json_object_object_get_ex(vf, "settings", &st) &&
                                   !json_object_is_type(st, json_type_null);

                        printf("  %-4s %-13s %-10s %-10s %-6s %-17s %s\n", jstr(vf, "index"), jstr(vf, "bdf"),
                               jstr(vf, "driver"), jstr(vf, "driver_override"), jstr(vf, "iommu_group"),
                               has ? jstr(st, "mac") : "-", has ? jstr(st, "vlan") : "-");
                }
        }
        json_object_put(root);
        return 0;
}

static int verb_report(bool json) {
        _cleanup_(bus_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ char *text = NULL;

        if (bus_connect(&bus) < 0 || call_string(bus, "GetReport", &text) < 0)
                return 1;
        if (json) {
                fputs(text, stdout);
                putchar('\n');
                return 0;
        }
        if (report_text_print(stdout, text) < 0) {
                fprintf(stderr, "luoctl: GetReport returned malformed JSON\n");
                return 1;
        }
        return 0;
}

static int verb_discard(void) {
        _cleanup_(bus_unrefp) sd_bus *bus = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        if (bus_connect(&bus) < 0)
                return 1;
        r = sd_bus_call_method(bus, LUOD_BUS_NAME, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE, "Discard",
                               &error, NULL, "");
        if (r < 0)
                fprintf(stderr, "luoctl: Discard failed: %s\n", error.message ?: strerror(-r));
        else
                printf("Discarded the preserved state and any loaded update.\n");
        sd_bus_error_free(&error);
        return r < 0 ? 1 : 0;
}

/* Abandon: ends the update in progress or loaded, before kexec -e. */
static int verb_abandon(void) {
        _cleanup_(bus_unrefp) sd_bus *bus = NULL;
        sd_bus_message *reply = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *id = NULL;
        int r;

        if (bus_connect(&bus) < 0)
                return 1;
        r = sd_bus_call_method(bus, LUOD_BUS_NAME, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE, "Abandon",
                               &error, &reply, "");
        if (r >= 0)
                r = sd_bus_message_read(reply, "s", &id);
        if (r < 0)
                fprintf(stderr, "luoctl: Abandon failed: %s\n", error.message ?: strerror(-r));
        else
                printf("Abandoned update %s: kernel unloaded, its state removed.\n", id);
        sd_bus_message_unref(reply);
        sd_bus_error_free(&error);
        return r < 0 ? 1 : 0;
}

/* Retry restores synchronously: as long as the restore may take. */
#define RETRY_TIMEOUT_USEC (UINT64_C(30) * 60 * 1000000)

static int verb_retry(void) {
        _cleanup_(bus_unrefp) sd_bus *bus = NULL;
        sd_bus_message *call = NULL, *reply = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *id = NULL;
        int r;

        if (bus_connect(&bus) < 0)
                return 1;
        r = sd_bus_message_new_method_call(bus, &call, LUOD_BUS_NAME, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE, "Retry");
        if (r >= 0)
                r = sd_bus_call(bus, call, RETRY_TIMEOUT_USEC, &error, &reply);
        if (r >= 0)
                r = sd_bus_message_read(reply, "s", &id);
        if (r < 0)
                fprintf(stderr, "luoctl: Retry failed: %s\n", error.message ?: strerror(-r));
        else
                printf("Restored update %s in this boot (luoctl report).\n", id);
        sd_bus_error_free(&error);
        sd_bus_message_unref(reply);
        sd_bus_message_unref(call);
        return r < 0 ? 1 : 0;
}

static int read_proc_cmdline(char *buf, size_t size) {
        FILE *f = fopen("/proc/cmdline", "re");
        int r = 0;

        if (!f)
                return -errno;
        if (!fgets(buf, (int) size, f))
                r = -EIO;
        fclose(f);
        buf[strcspn(buf, "\n")] = '\0';
        return r;
}


#define UPDATE_CALL_TIMEOUT_USEC (UINT64_C(30) * 60 * 1000 * 1000)

typedef struct UpdateCall {
        uint64_t start_us;
        sd_bus_message *reply;  /* owned */
} UpdateCall;

static int on_update_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        UpdateCall *c = userdata;

        c->reply = sd_bus_message_ref(m);
        return 0;
}

/* Prints Phase changes of org.luod1.Manager: "[  123 ms] snapshot". */
static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        UpdateCall *c = userdata;
        const char *iface, *name, *value;
        int r;

        r = sd_bus_message_read(m, "s", &iface);
        if (r < 0 || strcmp(iface, LUOD_MANAGER_IFACE) != 0)
                return 0;
        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        while (r > 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                r = sd_bus_message_read(m, "s", &name);
                if (r >= 0 && strcmp(name, "Phase") == 0) {
                        r = sd_bus_message_read(m, "v", "s", &value);
                        if (r >= 0 && *value)
                                printf("[%6" PRIu64 " ms] %s\n", (now_usec() - c->start_us) / 1000, value);
                        fflush(stdout);
                } else if (r >= 0)
                        r = sd_bus_message_skip(m, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        return 0;
}

static int verb_update(const char *kernel, const char *initrd, const char *append, bool dry_run,
                       bool yes, bool via_systemd) {
        _cleanup_(bus_unrefp) sd_bus *bus = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        char cmdline[8192] = "", kpath[4096], ipath[4096] = "";
        const char *id, *plan;
        int r;

        if (!realpath(kernel, kpath)) {
                fprintf(stderr, "luoctl: kernel image %s: %s\n", kernel, strerror(errno));
                return 1;
        }
        if (initrd && !realpath(initrd, ipath)) {
                fprintf(stderr, "luoctl: initrd %s: %s\n", initrd, strerror(errno));
                return 1;
        }
        if (append) {
                if (read_proc_cmdline(cmdline, sizeof(cmdline)) < 0) {
                        fprintf(stderr, "luoctl: cannot read /proc/cmdline\n");
                        return 1;
                }
                strncat(cmdline, " ", sizeof(cmdline) - strlen(cmdline) - 1);
                strncat(cmdline, append, sizeof(cmdline) - strlen(cmdline) - 1);
        }
        if (!dry_run && !yes) {
                char answer[16] = "";

                if (!isatty(STDIN_FILENO)) {
                        fprintf(stderr, "luoctl: not a terminal; pass --yes to live-update to %s\n", kpath);
                        return EXIT_NOT_CONFIRMED;
                }
                printf("Live-update this host to %s now? Guests on VFs see a blackout. [y/N] ", kpath);
                fflush(stdout);
                if (!fgets(answer, sizeof(answer), stdin) || (answer[0] != 'y' && answer[0] != 'Y'))
                        return EXIT_NOT_CONFIRMED;
        }
        if (bus_connect(&bus) < 0)
                return 1;
        /* Preflight, snapshot, persist and the kexec load run before the
         * reply; kexec -e right after it.  Meanwhile luod signals each step
         * (property Phase), printed as it comes. */
        UpdateCall call = { .start_us = now_usec() };
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call_msg = NULL;
        r = sd_bus_match_signal(bus, NULL, NULL, LUOD_OBJECT_PATH, "org.freedesktop.DBus.Properties",
                                "PropertiesChanged", on_properties_changed, &call);
        if (r >= 0)
                r = sd_bus_message_new_method_call(bus, &call_msg, LUOD_BUS_NAME, LUOD_OBJECT_PATH,
                                                   LUOD_MANAGER_IFACE, "Update");
        if (r >= 0)
                r = sd_bus_message_append(call_msg, "ssst", kpath, ipath, cmdline,
                                          (dry_run ? UPDATE_DRY_RUN : 0) | (via_systemd ? UPDATE_VIA_SYSTEMD : 0));
        /* Snapshot, copies and the kexec load can take long on a big host:
         * no 25 s default, or luoctl would say "refused" while luod goes on. */
        if (r >= 0)
                r = sd_bus_call_async(bus, NULL, call_msg, on_update_reply, &call, UPDATE_CALL_TIMEOUT_USEC);
        while (r >= 0 && !call.reply) {
                r = sd_bus_process(bus, NULL);
                if (r == 0)
                        r = sd_bus_wait(bus, UINT64_MAX);
        }
        if (r >= 0 && sd_bus_message_is_method_error(call.reply, NULL)) {
                sd_bus_error_copy(&error, sd_bus_message_get_error(call.reply));
                r = -sd_bus_error_get_errno(&error) ?: -EIO;
        }
        reply = call.reply;
        if (r >= 0)
                r = sd_bus_message_read(reply, "ss", &id, &plan);
        if (r < 0) {
                fprintf(stderr, "luoctl: update refused: %s\n", error.message ?: strerror(-r));
                sd_bus_error_free(&error);
                sd_bus_message_unref(reply);
                return 1;
        }
        printf("%s\n", plan);
        if (dry_run) {
                printf("dry run: update %s stops after preflight; nothing was changed\n", id);
                sd_bus_message_unref(reply);
                return 0;
        }
        printf("update %s: loaded, kexec now\n", id);
        fflush(stdout);
        sd_bus_message_unref(reply);

        /* Live progress: luod either disappears into the new kernel or
         * says why the kexec failed. */
        for (int i = 0; i < 600; i++) {
                _cleanup_free_ char *state = NULL, *err = NULL;
                struct timespec t = { .tv_nsec = 100 * 1000 * 1000 };

                if (sd_bus_get_property_string(bus, LUOD_BUS_NAME, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE,
                                               "State", NULL, &state) < 0)
                        return 0;
                if (strcmp(state, "failed") == 0) {
                        (void) sd_bus_get_property_string(bus, LUOD_BUS_NAME, LUOD_OBJECT_PATH,
                                                          LUOD_MANAGER_IFACE, "LastError", NULL, &err);
                        fprintf(stderr, "luoctl: %s\n", err ?: "update failed");
                        return 1;
                }
                nanosleep(&t, NULL);
        }
        fprintf(stderr, "luoctl: update %s loaded, but the kexec has not happened after 60 s\n", id);
        return 1;
}

static void help(void) {
        printf("luoctl [OPTIONS] COMMAND\n\n"
               "Control luod, the live-update daemon.\n\n"
               "Commands:\n"
               "  status                  Show luod's version and state\n"
               "  vfs [--json]            List the SR-IOV PFs and their VFs\n"
               "  update --kernel F [--initrd F] [--append S | --reuse-cmdline]\n"
               "         [--dry-run] [--yes] [--via-systemd]\n"
               "                          Live-update the host kernel with kexec\n"
               "  report [--json]         Show the phases of the last update\n"
               "  retry                   Apply the kept preserved state in this boot\n"
               "  discard                 Drop the preserved state and any loaded update\n"
               "  abandon                 End the update in progress before kexec -e\n\n"
               "Options:\n"
               "  -h --help               Show this help\n"
               "     --version            Show the version\n"
               "     --bus-address=ADDR   Talk to luod on this D-Bus address\n"
               "     --json               Print JSON (vfs, report)\n");
}

int main(int argc, char *argv[]) {
        enum { ARG_VERSION = 0x100, ARG_BUS_ADDRESS, ARG_JSON, ARG_KERNEL, ARG_INITRD, ARG_APPEND,
               ARG_REUSE, ARG_DRY_RUN, ARG_YES, ARG_VIA_SYSTEMD };
        static const struct option options[] = {
                { "help",          no_argument,       NULL, 'h'             },
                { "version",       no_argument,       NULL, ARG_VERSION     },
                { "bus-address",   required_argument, NULL, ARG_BUS_ADDRESS },
                { "json",          no_argument,       NULL, ARG_JSON        },
                { "kernel",        required_argument, NULL, ARG_KERNEL      },
                { "initrd",        required_argument, NULL, ARG_INITRD      },
                { "append",        required_argument, NULL, ARG_APPEND      },
                { "reuse-cmdline", no_argument,       NULL, ARG_REUSE       },
                { "dry-run",       no_argument,       NULL, ARG_DRY_RUN     },
                { "yes",           no_argument,       NULL, ARG_YES         },
                { "via-systemd",   no_argument,       NULL, ARG_VIA_SYSTEMD },
                {}
        };
        const char *kernel = NULL, *initrd = NULL, *append = NULL;
        bool json = false, reuse = false, dry_run = false, yes = false, via_systemd = false;
        int c;

        while ((c = getopt_long(argc, argv, "hy", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("luoctl %s\n", PACKAGE_VERSION);
                        return 0;
                case ARG_BUS_ADDRESS: arg_bus_address = optarg; break;
                case ARG_JSON: json = true; break;
                case ARG_KERNEL: kernel = optarg; break;
                case ARG_INITRD: initrd = optarg; break;
                case ARG_APPEND: append = optarg; break;
                case ARG_REUSE: reuse = true; break;
                case ARG_DRY_RUN: dry_run = true; break;
                case 'y':
                case ARG_YES: yes = true; break;
                case ARG_VIA_SYSTEMD: via_systemd = true; break;
                default:
                        return EXIT_USAGE;
                }

        if (optind + 1 != argc) {
                fprintf(stderr, "luoctl: expected one command; see luoctl --help\n");
                return EXIT_USAGE;
        }
        const char *verb = argv[optind];
        bool update = strcmp(verb, "update") == 0;
        if (!update && (kernel || initrd || append || reuse || dry_run || yes || via_systemd)) {
                fprintf(stderr, "luoctl: update options given to '%s'\n", verb);
                return EXIT_USAGE;
        }
        if (json && strcmp(verb, "vfs") != 0 && strcmp(verb, "report") != 0) {
                fprintf(stderr, "luoctl: --json is for vfs and report\n");
                return EXIT_USAGE;
        }
        if (strcmp(verb, "status") == 0)
                return verb_status();
        if (strcmp(verb, "vfs") == 0)
                return verb_vfs(json);
        if (strcmp(verb, "report") == 0)
                return verb_report(json);
        if (strcmp(verb, "discard") == 0)
                return verb_discard();
        if (strcmp(verb, "abandon") == 0)
                return verb_abandon();
        if (strcmp(verb, "retry") == 0)
                return verb_retry();
        if (update) {
                if (!kernel) {
                        fprintf(stderr, "luoctl: update needs --kernel\n");
                        return EXIT_USAGE;
                }
                if (append && reuse) {
                        fprintf(stderr, "luoctl: --append and --reuse-cmdline exclude each other\n");
                        return EXIT_USAGE;
                }
                return verb_update(kernel, initrd, append, dry_run, yes, via_systemd);
        }
        fprintf(stderr, "luoctl: unknown command '%s'; see luoctl --help\n", verb);
        return EXIT_USAGE;
}
