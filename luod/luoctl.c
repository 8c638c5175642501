/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * luoctl — command line for luod.
 *
 * Commands: status, vfs, update, report, retry, discard, abandon (see
 * luoctl(8)).
 * Each failure exits with the status of its class (ExitStatus below,
 * luoctl(8) EXIT STATUS), so that a script can tell "try again later" from
 * "not possible on this host" from "luod is gone".
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

#include "config.h"
#include "errors.h"
#include "json-util.h"
#include "macro.h"
#include "report-text.h"
#include "time-util.h"

typedef enum ExitStatus {
        EXIT_OK = 0,
        EXIT_FAIL = 1,          /* any failure not in a class below */
        EXIT_USAGE = 2,         /* bad command line, or arguments luod refused (InvalidArgs) */
        EXIT_NOT_PERMITTED = 3, /* the caller may not do this (AccessDenied, NotPermitted) */
        EXIT_REFUSED = 4,       /* not now: blocked, in progress, loaded, a kept state to decide on */
        EXIT_UNSUPPORTED = 5,   /* preflight refused: drivers missing, no backend, an unusable image */
        EXIT_UPDATE_FAILED = 6, /* the update began (State preparing) and failed: still on this kernel */
        EXIT_UNREACHABLE = 7,   /* luod is not running, or went away during the call */
        EXIT_TIMEOUT = 8,       /* luod did not answer, or the kexec did not follow, in time */
        EXIT_NOT_CONFIRMED = 9, /* update not confirmed (no --yes, and no or a negative answer) */
} ExitStatus;

/* The class of each error luod (or the bus) can return.  Names not listed
 * fall back on their errno (exit_status_of_errno()). */
static const struct {
        const char *name;
        ExitStatus status;
} error_status[] = {
        { LUOD_ERROR_UPDATE_BLOCKED,         EXIT_REFUSED },
        { LUOD_ERROR_UPDATE_IN_PROGRESS,     EXIT_REFUSED },
        { LUOD_ERROR_UPDATE_LOADED,          EXIT_REFUSED },
        { LUOD_ERROR_STATE_KEPT,             EXIT_REFUSED },
        { LUOD_ERROR_TOO_MANY_INHIBITORS,    EXIT_REFUSED },
        { LUOD_ERROR_TOO_MANY,               EXIT_REFUSED },
        { LUOD_ERROR_NAME_TAKEN,             EXIT_REFUSED },
        { LUOD_ERROR_VF_BUSY,                EXIT_REFUSED },
        { LUOD_ERROR_DRIVERS_MISSING,        EXIT_UNSUPPORTED },
        { LUOD_ERROR_NO_BACKEND,             EXIT_UNSUPPORTED },
        { LUOD_ERROR_INVALID_RECORD,         EXIT_UNSUPPORTED },
        { LUOD_ERROR_STATE_CORRUPT,          EXIT_UNSUPPORTED },
        { LUOD_ERROR_NOT_PERMITTED,          EXIT_NOT_PERMITTED },
        { LUOD_ERROR_NOT_CONSUMER,           EXIT_NOT_PERMITTED },
        { LUOD_ERROR_ABANDONED,              EXIT_UPDATE_FAILED },
        { LUOD_ERROR_NO_UPDATE,              EXIT_FAIL },
        { LUOD_ERROR_NO_REPORT,              EXIT_FAIL },
        { LUOD_ERROR_NOTHING_KEPT,           EXIT_FAIL },
        { LUOD_ERROR_NO_SUCH_PF,             EXIT_FAIL },
        { LUOD_ERROR_NO_SUCH_VF,             EXIT_FAIL },
        { LUOD_ERROR_NO_SUCH_GUEST,          EXIT_FAIL },
        { LUOD_ERROR_CURSOR_FROM_OTHER_BOOT, EXIT_FAIL },
        { LUOD_ERROR_NO_EVENTS,              EXIT_FAIL },
        { LUOD_ERROR_NO_CLOCK,               EXIT_FAIL },
        { SD_BUS_ERROR_ACCESS_DENIED,            EXIT_NOT_PERMITTED },
        { SD_BUS_ERROR_INVALID_ARGS,             EXIT_USAGE },
        { SD_BUS_ERROR_SERVICE_UNKNOWN,          EXIT_UNREACHABLE },
        { SD_BUS_ERROR_NAME_HAS_NO_OWNER,        EXIT_UNREACHABLE },
        { SD_BUS_ERROR_DISCONNECTED,             EXIT_UNREACHABLE },
        /* dbus-daemon's answer when luod exits without replying; a local
         * timeout of an asynchronous call is told apart by its caller. */
        { SD_BUS_ERROR_NO_REPLY,                 EXIT_UNREACHABLE },
        { SD_BUS_ERROR_TIMEOUT,                  EXIT_TIMEOUT },
        { "org.freedesktop.DBus.Error.TimedOut", EXIT_TIMEOUT },
};

/* For an error without a name of its own (an older luod's errno names,
 * System.Error.E*, or a local failure): dflt unless the errno has a class. */
static ExitStatus exit_status_of_errno(int err, ExitStatus dflt) {
        switch (abs(err)) {
        case EACCES:
        case EPERM:
                return EXIT_NOT_PERMITTED;
        case EBUSY:
        case EALREADY:
                return EXIT_REFUSED;
        case ENOPKG:
        case EOPNOTSUPP:
                return EXIT_UNSUPPORTED;
        case ETIMEDOUT:
                return EXIT_TIMEOUT;
        case ECONNREFUSED:
        case ECONNRESET:
        case ENOTCONN:
                return EXIT_UNREACHABLE;
        default:
                return dflt;
        }
}

/* The exit status for a failed call: the class of the error's name, else
 * of its errno (r when the error has no name), else dflt. */
static ExitStatus exit_status_of_error(const sd_bus_error *e, int r, ExitStatus dflt) {
        if (e && sd_bus_error_is_set(e)) {
                for (size_t i = 0; i < ELEMENTSOF(error_status); i++)
                        if (sd_bus_error_has_name(e, error_status[i].name))
                                return error_status[i].status;
                return exit_status_of_errno(sd_bus_error_get_errno(e), dflt);
        }
        return exit_status_of_errno(r, dflt);
}

/* Update flags of org.luod1.Manager.Update */
#define UPDATE_DRY_RUN     (UINT64_C(1) << 0)
#define UPDATE_VIA_SYSTEMD (UINT64_C(1) << 1)

static const char *arg_bus_address;
static uint64_t arg_timeout_usec;       /* 0: each call's default */
static bool arg_json;
/* update's options */
static const char *arg_kernel, *arg_initrd, *arg_append;
static bool arg_reuse, arg_dry_run, arg_yes, arg_via_systemd;

static void bus_unrefp(sd_bus **b) {
        sd_bus_flush_close_unref(*b);
}

/* Connects to the bus; returns 0 or an exit status (logged). */
static int bus_connect(sd_bus **ret) {
        _cleanup_(bus_unrefp) sd_bus *bus = NULL;
        int r;

        if (!arg_bus_address) {
                r = sd_bus_open_system(&bus);
                if (r < 0) {
                        fprintf(stderr, "luoctl: cannot connect to the system bus: %s\n", strerror(-r));
                        return EXIT_UNREACHABLE;
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
                        return EXIT_UNREACHABLE;
                }
        }
        if (arg_timeout_usec > 0) {
                r = sd_bus_set_method_call_timeout(bus, arg_timeout_usec);
                if (r < 0) {
                        fprintf(stderr, "luoctl: cannot set the call timeout: %s\n", strerror(-r));
                        return EXIT_FAIL;
                }
        }
        *ret = TAKE_PTR(bus);
        return EXIT_OK;
}

/* Prints why a call failed, naming luod's state when it is not there. */
static int call_failed(const char *what, const sd_bus_error *error, int r, ExitStatus dflt) {
        ExitStatus status = exit_status_of_error(error, r, dflt);

        fprintf(stderr, "luoctl: %s: %s%s\n", what,
                error && error->message ? error->message : strerror(abs(r)),
                status == EXIT_UNREACHABLE ? " (luod " LUOD_BUS_NAME " is not running or went away)" :
                status == EXIT_TIMEOUT ? " (luod " LUOD_BUS_NAME " did not answer in time)" : "");
        return status;
}

/* Reads a string property; returns 0 or an exit status (logged). */
static int get_string_property(sd_bus *bus, const char *name, char **ret) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r, status = EXIT_OK;

        r = sd_bus_get_property_string(bus, LUOD_BUS_NAME, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE,
                                       name, &error, ret);
        if (r < 0) {
                char what[128];

                snprintf(what, sizeof(what), "cannot read %s.%s from %s", LUOD_MANAGER_IFACE, name, LUOD_BUS_NAME);
                status = call_failed(what, &error, r, EXIT_FAIL);
        }
        sd_bus_error_free(&error);
        return status;
}

/* StateKept; false from a luod without that property. */
static bool get_state_kept(sd_bus *bus) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int kept = 0, r;

        r = sd_bus_get_property(bus, LUOD_BUS_NAME, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE, "StateKept",
                                &error, &reply, "b");
        if (r >= 0 && sd_bus_message_read(reply, "b", &kept) < 0)
                kept = 0;
        sd_bus_error_free(&error);
        sd_bus_message_unref(reply);
        return kept;
}

static int verb_status(void) {
        _cleanup_(bus_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ char *version = NULL, *state = NULL, *update_id = NULL, *last_error = NULL,
                *phase = NULL;
        int r;

        r = bus_connect(&bus);
        if (r != EXIT_OK)
                return r;
        if ((r = get_string_property(bus, "Version", &version)) != EXIT_OK ||
            (r = get_string_property(bus, "State", &state)) != EXIT_OK ||
            (r = get_string_property(bus, "UpdateId", &update_id)) != EXIT_OK ||
            (r = get_string_property(bus, "LastError", &last_error)) != EXIT_OK ||
            (r = get_string_property(bus, "Phase", &phase)) != EXIT_OK)
                return r;
        printf("luod:    %s\nversion: %s\nstate:   %s\n", LUOD_BUS_NAME, version, state);
        if (*phase)
                printf("phase:   %s\n", phase);
        if (*update_id)
                printf("update:  %s\n", update_id);
        if (*last_error)
                printf("error:   %s\n", last_error);
        /* A kept state is the only copy of an update that was not applied
         * (refused, applied by another boot, or not fully restored): no
         * new update until the operator decides. */
        if (get_state_kept(bus))
                printf("kept:    the preserved state%s%s is kept and was not applied; decide:\n"
                       "           luoctl retry     apply it in this boot\n"
                       "           luoctl discard   drop it (and allow a new update)\n",
                       *update_id ? " of update " : "", update_id);
        return EXIT_OK;
}


/* Calls a method of org.luod1.Manager that returns one string; returns 0
 * or an exit status (logged). */
static int call_string(sd_bus *bus, const char *method, char **ret) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *s;
        int r, status = EXIT_OK;

        r = sd_bus_call_method(bus, LUOD_BUS_NAME, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE, method,
                               &error, &reply, "");
        if (r >= 0)
                r = sd_bus_message_read(reply, "s", &s);
        if (r >= 0) {
                *ret = strdup(s);
                if (!*ret)
                        r = -ENOMEM;
        }
        if (r < 0) {
                char what[64];

                snprintf(what, sizeof(what), "%s failed", method);
                status = call_failed(what, &error, r, EXIT_FAIL);
        }
        sd_bus_error_free(&error);
        sd_bus_message_unref(reply);
        return status;
}

static int verb_vfs(bool json) {
        _cleanup_(bus_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ char *text = NULL;
        json_object *root, *pfs;
        int r;

        if ((r = bus_connect(&bus)) != EXIT_OK || (r = call_string(bus, "GetInventory", &text)) != EXIT_OK)
                return r;
        if (json) {
                fputs(text, stdout);
                return EXIT_OK;
        }
        root = json_tokener_parse(text);
        if (!root || !json_object_object_get_ex(root, "pfs", &pfs) || !json_object_is_type(pfs, json_type_array)) {
                fprintf(stderr, "luoctl: GetInventory returned malformed JSON\n");
                json_object_put(root);
                return EXIT_FAIL;
        }
        for (size_t i = 0; i < json_object_array_length(pfs); i++) {
                json_object *pf = json_object_array_get_idx(pfs, i), *vfs;

                printf("PF %s  %s:%s  driver %s  netdev %s  VFs %s/%s  autoprobe %s  %s\n",
                       json_text(pf, "bdf"), json_text(pf, "vendor"), json_text(pf, "device"),
                       json_text(pf, "driver"), json_text(pf, "netdev"), json_text(pf, "numvfs"),
                       json_text(pf, "totalvfs"), json_text(pf, "drivers_autoprobe"), json_text(pf, "identity"));
                if (!json_object_object_get_ex(pf, "vfs", &vfs) || json_object_array_length(vfs) == 0)
                        continue;
                printf("  %-4s %-13s %-10s %-10s %-6s %-17s %s\n", "VF", "BDF", "DRIVER", "OVERRIDE",
                       "GROUP", "MAC", "VLAN");
                for (size_t j = 0; j < json_object_array_length(vfs); j++) {
                        json_object *vf = json_object_array_get_idx(vfs, j), *st;
                        bool has = json_object_object_get_ex(vf, "settings", &st) &&
                                   !json_object_is_type(st, json_type_null);

                        printf("  %-4s %-13s %-10s %-10s %-6s %-17s %s\n", json_text(vf, "index"),
                               json_text(vf, "bdf"), json_text(vf, "driver"), json_text(vf, "driver_override"),
                               json_text(vf, "iommu_group"), has ? json_text(st, "mac") : "-",
                               has ? json_text(st, "vlan") : "-");
                }
        }
        json_object_put(root);
        return EXIT_OK;
}

static int verb_report(bool json) {
        _cleanup_(bus_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ char *text = NULL;
        int r;

        if ((r = bus_connect(&bus)) != EXIT_OK || (r = call_string(bus, "GetReport", &text)) != EXIT_OK)
                return r;
        if (json) {
                fputs(text, stdout);
                putchar('\n');
                return EXIT_OK;
        }
        if (report_text_print(stdout, text) < 0) {
                fprintf(stderr, "luoctl: GetReport returned malformed JSON\n");
                return EXIT_FAIL;
        }
        return EXIT_OK;
}

static int verb_discard(void) {
        _cleanup_(bus_unrefp) sd_bus *bus = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r, status = EXIT_OK;

        if ((r = bus_connect(&bus)) != EXIT_OK)
                return r;
        r = sd_bus_call_method(bus, LUOD_BUS_NAME, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE, "Discard",
                               &error, NULL, "");
        if (r < 0)
                status = call_failed("Discard failed", &error, r, EXIT_FAIL);
        else
                printf("Discarded the preserved state and any loaded update.\n");
        sd_bus_error_free(&error);
        return status;
}

/* Abandon: ends the update in progress or loaded, before kexec -e. */
static int verb_abandon(void) {
        _cleanup_(bus_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ char *id = NULL;
        int r;

        if ((r = bus_connect(&bus)) != EXIT_OK || (r = call_string(bus, "Abandon", &id)) != EXIT_OK)
                return r;
        printf("Abandoned update %s: kernel unloaded, its state removed.\n", id);
        return EXIT_OK;
}

/* Retry restores synchronously: as long as the restore may take. */
#define RETRY_TIMEOUT_USEC (UINT64_C(30) * 60 * 1000000)

static int verb_retry(void) {
        _cleanup_(bus_unrefp) sd_bus *bus = NULL;
        sd_bus_message *call = NULL, *reply = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *id = NULL;
        int r, status = EXIT_OK;

        if ((r = bus_connect(&bus)) != EXIT_OK)
                return r;
        r = sd_bus_message_new_method_call(bus, &call, LUOD_BUS_NAME, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE, "Retry");
        if (r >= 0)
                r = sd_bus_call(bus, call, arg_timeout_usec ?: RETRY_TIMEOUT_USEC, &error, &reply);
        if (r >= 0)
                r = sd_bus_message_read(reply, "s", &id);
        if (r < 0)
                status = call_failed("Retry failed", &error, r, EXIT_FAIL);
        else
                printf("Restored update %s in this boot (luoctl report).\n", id);
        sd_bus_error_free(&error);
        sd_bus_message_unref(reply);
        sd_bus_message_unref(call);
        return status;
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
/* After "loaded": kexec -e follows at once, or State says why not. */
#define KEXEC_WAIT_USEC (UINT64_C(60) * 1000 * 1000)

typedef struct UpdateCall {
        uint64_t start_us;
        sd_bus_message *reply;  /* owned */
        bool began;             /* State went to "preparing": the update started changing things */
        bool vanished;          /* org.luod1 lost its owner: luod exited or crashed */
        char *state;            /* the last State signalled */
        char *last_error;       /* the last LastError signalled */
} UpdateCall;

static void update_call_done(UpdateCall *c) {
        sd_bus_message_unref(c->reply);
        free(c->state);
        free(c->last_error);
}

static int on_update_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        UpdateCall *c = userdata;

        c->reply = sd_bus_message_ref(m);
        return 0;
}

static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        UpdateCall *c = userdata;
        const char *name, *old_owner, *new_owner;

        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) >= 0 &&
            strcmp(name, LUOD_BUS_NAME) == 0 && !*new_owner)
                c->vanished = true;
        return 0;
}

static void set_str(char **p, const char *v) {
        char *c = strdup(v);

        if (c) {
                free(*p);
                *p = c;
        }
}

/* Prints Phase changes of org.luod1.Manager ("[  123 ms] snapshot") and
 * remembers State and LastError. */
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
                if (r >= 0 && (strcmp(name, "Phase") == 0 || strcmp(name, "State") == 0 ||
                               strcmp(name, "LastError") == 0)) {
                        r = sd_bus_message_read(m, "v", "s", &value);
                        if (r < 0)
                                break;
                        if (name[0] == 'P' && *value) {
                                printf("[%6" PRIu64 " ms] %s\n", (now_usec() - c->start_us) / 1000, value);
                                fflush(stdout);
                        } else if (name[0] == 'S') {
                                set_str(&c->state, value);
                                c->began = c->began || strcmp(value, "preparing") == 0;
                        } else if (name[0] == 'L')
                                set_str(&c->last_error, value);
                } else if (r >= 0)
                        r = sd_bus_message_skip(m, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        return 0;
}

/* Processes the bus until done(c) or the deadline (CLOCK_MONOTONIC µs):
 * 0, -ETIMEDOUT, or the bus error. */
static int update_wait(sd_bus *bus, UpdateCall *c, uint64_t deadline, bool (*done)(const UpdateCall *c)) {
        int r;

        while (!done(c)) {
                uint64_t now;

                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                now = now_usec();
                if (now >= deadline)
                        return -ETIMEDOUT;
                r = sd_bus_wait(bus, deadline - now);
                if (r < 0)
                        return r;
        }
        return 0;
}

static bool replied(const UpdateCall *c) {
        return c->reply;
}

static bool kexec_settled(const UpdateCall *c) {
        return c->vanished || (c->state && (strcmp(c->state, "failed") == 0 || strcmp(c->state, "executing") == 0));
}

/* Sends Update and waits for its reply: 0 with c->reply a method return,
 * or an exit status (logged). */
static int update_call(sd_bus *bus, UpdateCall *c, const char *kpath, const char *ipath,
                       const char *cmdline, uint64_t flags) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        uint64_t timeout = arg_timeout_usec ?: UPDATE_CALL_TIMEOUT_USEC;
        int r, status;

        r = sd_bus_add_match(bus, NULL, "type='signal',sender='org.freedesktop.DBus',"
                             "path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',"
                             "member='NameOwnerChanged',arg0='" LUOD_BUS_NAME "'",
                             on_name_owner_changed, c);
        if (r >= 0)
                r = sd_bus_match_signal(bus, NULL, NULL, LUOD_OBJECT_PATH, "org.freedesktop.DBus.Properties",
                                        "PropertiesChanged", on_properties_changed, c);
        if (r >= 0)
                r = sd_bus_message_new_method_call(bus, &msg, LUOD_BUS_NAME, LUOD_OBJECT_PATH,
                                                   LUOD_MANAGER_IFACE, "Update");
        if (r >= 0)
                r = sd_bus_message_append(msg, "ssst", kpath, ipath, cmdline, flags);
        /* Snapshot, copies and the kexec load can take long on a big host:
         * no 25 s default, or luoctl would say "refused" while luod goes on. */
        if (r >= 0)
                r = sd_bus_call_async(bus, NULL, msg, on_update_reply, c, timeout);
        /* sd-bus answers a call it timed out itself with NoReply, as
         * dbus-daemon does when luod exits: our clock tells them apart. */
        if (r >= 0)
                r = update_wait(bus, c, c->start_us + timeout + 5 * 1000 * 1000, replied);
        if (r < 0)
                return call_failed("update", NULL, r, EXIT_FAIL);
        if (!sd_bus_message_is_method_error(c->reply, NULL))
                return EXIT_OK;

        sd_bus_error_copy(&error, sd_bus_message_get_error(c->reply));
        if (sd_bus_error_has_name(&error, SD_BUS_ERROR_NO_REPLY) && now_usec() - c->start_us >= timeout)
                status = EXIT_TIMEOUT;
        else
                /* Any failure before "preparing" is a preflight refusal. */
                status = exit_status_of_error(&error, 0, c->began ? EXIT_UPDATE_FAILED : EXIT_UNSUPPORTED);
        fprintf(stderr, "luoctl: update %s: %s%s\n", c->began ? "failed" : "refused", error.message ?: error.name,
                status == EXIT_UNREACHABLE ? " (luod went away during the call)" :
                status == EXIT_TIMEOUT ? " (no answer in time)" : "");
        sd_bus_error_free(&error);
        return status;
}

/* The absolute paths of the kernel and initrd (an image that is not there
 * cannot be updated to), and the command line: /proc/cmdline and append,
 * or empty (luod's choice) without append.  Returns EXIT_OK or the status
 * to exit with (said on stderr). */
static int update_inputs(const char *kernel, const char *initrd, const char *append,
                         char kpath[static PATH_MAX], char ipath[static PATH_MAX],
                         char *cmdline, size_t cmdline_size) {
        if (!realpath(kernel, kpath)) {
                fprintf(stderr, "luoctl: kernel image %s: %s\n", kernel, strerror(errno));
                return EXIT_UNSUPPORTED;
        }
        if (initrd && !realpath(initrd, ipath)) {
                fprintf(stderr, "luoctl: initrd %s: %s\n", initrd, strerror(errno));
                return EXIT_UNSUPPORTED;
        }
        if (!append)
                return EXIT_OK;
        if (read_proc_cmdline(cmdline, cmdline_size) < 0) {
                fprintf(stderr, "luoctl: cannot read /proc/cmdline\n");
                return EXIT_FAIL;
        }
        if (strlen(cmdline) + 1 + strlen(append) >= cmdline_size) {
                fprintf(stderr, "luoctl: --append: the command line would exceed %zu bytes\n", cmdline_size - 1);
                return EXIT_USAGE;
        }
        strcat(cmdline, " ");
        strcat(cmdline, append);
        return EXIT_OK;
}

/* Asks on the terminal before a live update; none to ask on is a no. */
static bool update_confirmed(const char *kpath) {
        char answer[16] = "";

        if (!isatty(STDIN_FILENO)) {
                fprintf(stderr, "luoctl: not a terminal; pass --yes to live-update to %s\n", kpath);
                return false;
        }
        printf("Live-update this host to %s now? Guests on VFs see a blackout. [y/N] ", kpath);
        fflush(stdout);
        return fgets(answer, sizeof(answer), stdin) && (answer[0] == 'y' || answer[0] == 'Y');
}

/* After the update was loaded: luod either goes into the new kernel (and
 * luoctl with it), or says why the kexec failed; if luod itself goes away
 * while this kernel runs on, the update did not happen. */
static int update_wait_kexec(sd_bus *bus, UpdateCall *call, const char *id) {
        int r;

        r = update_wait(bus, call, now_usec() + KEXEC_WAIT_USEC, kexec_settled);
        if (r == -ETIMEDOUT) {
                fprintf(stderr, "luoctl: update %s loaded, but the kexec has not happened after %" PRIu64 " s\n",
                        id, KEXEC_WAIT_USEC / 1000000);
                return EXIT_TIMEOUT;
        }
        if (r < 0 || call->vanished) {
                fprintf(stderr, "luoctl: luod went away after loading update %s, and this kernel still runs: "
                        "the update did not happen (luoctl status once luod is back)%s%s\n",
                        id, r < 0 ? ": " : "", r < 0 ? strerror(-r) : "");
                return EXIT_UNREACHABLE;
        }
        if (strcmp(call->state, "executing") == 0) {
                printf("update %s: systemd stops the services, then kexecs\n", id);
                return EXIT_OK;
        }
        fprintf(stderr, "luoctl: %s\n", call->last_error && *call->last_error ? call->last_error : "update failed");
        return EXIT_UPDATE_FAILED;
}

static int verb_update(const char *kernel, const char *initrd, const char *append, bool dry_run,
                       bool yes, bool via_systemd) {
        _cleanup_(bus_unrefp) sd_bus *bus = NULL;
        char cmdline[8192] = "", kpath[PATH_MAX], ipath[PATH_MAX] = "";
        const char *id, *plan;
        int r;

        r = update_inputs(kernel, initrd, append, kpath, ipath, cmdline, sizeof(cmdline));
        if (r != EXIT_OK)
                return r;
        if (!dry_run && !yes && !update_confirmed(kpath))
                return EXIT_NOT_CONFIRMED;
        if ((r = bus_connect(&bus)) != EXIT_OK)
                return r;
        /* Preflight, snapshot, persist and the kexec load run before the
         * reply; kexec -e right after it.  Meanwhile luod signals each step
         * (property Phase), printed as it comes. */
        _cleanup_(update_call_done) UpdateCall call = { .start_us = now_usec() };
        r = update_call(bus, &call, kpath, ipath, cmdline,
                        (dry_run ? UPDATE_DRY_RUN : 0) | (via_systemd ? UPDATE_VIA_SYSTEMD : 0));
        if (r != EXIT_OK)
                return r;
        r = sd_bus_message_read(call.reply, "ss", &id, &plan);
        if (r < 0) {
                fprintf(stderr, "luoctl: Update returned a malformed reply: %s\n", strerror(-r));
                return EXIT_FAIL;
        }
        printf("%s\n", plan);
        if (dry_run) {
                printf("dry run: update %s stops after preflight; nothing was changed\n", id);
                return EXIT_OK;
        }
        printf("update %s: loaded, kexec now\n", id);
        fflush(stdout);
        return update_wait_kexec(bus, &call, id);
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
               "     --timeout=SEC        Wait at most SEC seconds for each call to luod\n"
               "     --json               Print JSON (vfs, report)\n");
}

static int parse_argv(int argc, char *argv[]) {
        enum { ARG_VERSION = 0x100, ARG_BUS_ADDRESS, ARG_TIMEOUT, ARG_JSON, ARG_KERNEL, ARG_INITRD, ARG_APPEND,
               ARG_REUSE, ARG_DRY_RUN, ARG_YES, ARG_VIA_SYSTEMD };
        static const struct option options[] = {
                { "help",          no_argument,       NULL, 'h'             },
                { "version",       no_argument,       NULL, ARG_VERSION     },
                { "bus-address",   required_argument, NULL, ARG_BUS_ADDRESS },
                { "timeout",       required_argument, NULL, ARG_TIMEOUT     },
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
                case ARG_TIMEOUT:
                        /* Positive: 0 would mean each call's default. */
                        if (parse_sec(optarg, 86400, true, &arg_timeout_usec) < 0) {
                                fprintf(stderr, "luoctl: --timeout '%s' must be seconds, 0 < SEC <= 86400\n",
                                        optarg);
                                return -EINVAL;
                        }
                        break;
                case ARG_JSON: arg_json = true; break;
                case ARG_KERNEL: arg_kernel = optarg; break;
                case ARG_INITRD: arg_initrd = optarg; break;
                case ARG_APPEND: arg_append = optarg; break;
                case ARG_REUSE: arg_reuse = true; break;
                case ARG_DRY_RUN: arg_dry_run = true; break;
                case 'y':
                case ARG_YES: arg_yes = true; break;
                case ARG_VIA_SYSTEMD: arg_via_systemd = true; break;
                default:
                        return -EINVAL;
                }

        if (optind + 1 != argc) {
                fprintf(stderr, "luoctl: expected one command; see luoctl --help\n");
                return -EINVAL;
        }
        return 1;
}

static int run_verb(const char *verb) {
        bool update = strcmp(verb, "update") == 0;

        if (!update && (arg_kernel || arg_initrd || arg_append || arg_reuse || arg_dry_run || arg_yes ||
                        arg_via_systemd)) {
                fprintf(stderr, "luoctl: update options given to '%s'\n", verb);
                return EXIT_USAGE;
        }
        if (arg_json && strcmp(verb, "vfs") != 0 && strcmp(verb, "report") != 0) {
                fprintf(stderr, "luoctl: --json is for vfs and report\n");
                return EXIT_USAGE;
        }
        if (strcmp(verb, "status") == 0)
                return verb_status();
        if (strcmp(verb, "vfs") == 0)
                return verb_vfs(arg_json);
        if (strcmp(verb, "report") == 0)
                return verb_report(arg_json);
        if (strcmp(verb, "discard") == 0)
                return verb_discard();
        if (strcmp(verb, "abandon") == 0)
                return verb_abandon();
        if (strcmp(verb, "retry") == 0)
                return verb_retry();
        if (update) {
                if (!arg_kernel) {
                        fprintf(stderr, "luoctl: update needs --kernel\n");
                        return EXIT_USAGE;
                }
                if (arg_append && arg_reuse) {
                        fprintf(stderr, "luoctl: --append and --reuse-cmdline exclude each other\n");
                        return EXIT_USAGE;
                }
                return verb_update(arg_kernel, arg_initrd, arg_append, arg_dry_run, arg_yes, arg_via_systemd);
        }
        fprintf(stderr, "luoctl: unknown command '%s'; see luoctl --help\n", verb);
        return EXIT_USAGE;
}

int main(int argc, char *argv[]) {
        int r;

        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : EXIT_OK;
        return run_verb(argv[optind]);
}
