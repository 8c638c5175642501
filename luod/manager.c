/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-journal.h>

#include "config.h"
#include "consumers.h"
#include "drivers.h"
#include "events.h"
#include "fs-util.h"
#include "io-util.h"
#include "kexec.h"
#include "kmsg.h"
#include "log.h"
#include "manager.h"
#include "metrics.h"
#include "preserve.h"
#include "report.h"
#include "restore.h"
#include "sriov.h"
#include "state.h"
#include "tsc.h"

/* Read at the top of main(): when luod started in this kernel. */
extern uint64_t luod_start_tsc, luod_start_boottime_us;

/* Where the initrd backend's state can be: <runtime_dir>/state.luod-state
 * (moved there by the initramfs-tools hook), /luod/state.luod-state (still
 * in the initramfs, no switch_root).  The second only with the default
 * runtime dir, so a luod with its own dirs never touches the host's. */
static size_t initrd_state_paths(const Manager *m, char paths[2][PATH_MAX]) {
        snprintf(paths[0], PATH_MAX, "%s/state.luod-state", m->runtime_dir);
        if (strcmp(m->runtime_dir, "/run/luod") != 0)
                return 1;
        snprintf(paths[1], PATH_MAX, "/luod/state.luod-state");
        return 2;
}

static void initrd_state_remove(const Manager *m) {
        char paths[2][PATH_MAX];
        size_t n = initrd_state_paths(m, paths);

        for (size_t i = 0; i < n; i++)
                (void) unlink(paths[i]);
}

static inline void json_object_putp(json_object **o) {
        json_object_put(*o);
}

static int stamp(LuodState *s, const char *name) {
        return luod_state_add_timestamp(s, name, tsc_read(), realtime_ns());
}

static int set_string(char **p, const char *v) {
        char *c = strdup(v ?: "");

        if (!c)
                return -ENOMEM;
        free(*p);
        *p = c;
        return 0;
}

static void set_state(Manager *m, const char *state, const char *error) {
        (void) set_string(&m->state, state);
        if (error)
                (void) set_string(&m->last_error, error);
        if (m->bus)
                (void) sd_bus_emit_properties_changed(m->bus, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE,
                                                      "State", "LastError", "UpdateId", NULL);
}

/* The step Update is in, for live progress (property Phase). */
static void set_phase(Manager *m, const char *phase) {
        (void) set_string(&m->phase, phase);
        if (m->bus) {
                (void) sd_bus_emit_properties_changed(m->bus, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE, "Phase", NULL);
                (void) sd_bus_flush(m->bus);
        }
}

static void phase_resetp(Manager **m) {
        if (*m)
                set_phase(*m, "");
}

/* update_id, kernel release, boot id and TSC rate of this kernel. */
static int state_fill_header(LuodState *s) {
        struct utsname u;
        int r;

        r = read_line("/proc/sys/kernel/random/uuid", s->update_id, sizeof(s->update_id));
        if (r >= 0)
                r = read_line("/proc/sys/kernel/random/boot_id", s->old_boot_id, sizeof(s->old_boot_id));
        if (r < 0)
                return log_error_errno(r, "Failed to read a UUID from /proc/sys/kernel/random: %m");
        if (uname(&u) < 0)
                return -errno;
        s->old_kernel_release = strdup(u.release);
        if (!s->old_kernel_release)
                return -ENOMEM;
        s->tsc_khz = tsc_calibrate_khz(20000);
        return 0;
}

static int state_buffer(const LuodState *s, char **ret, size_t *ret_size) {
        int r = luod_state_serialize(s, ret, ret_size);
        if (r < 0)
                return log_error_errno(r, "Failed to serialize the state of update %s: %m", s->update_id);
        return 0;
}

static const char *lockdown_mode(char *buf, size_t size) {
        char *a, *b;

        if (read_line("/sys/kernel/security/lockdown", buf, size) < 0)
                return "unknown";
        a = strchr(buf, '[');
        b = a ? strchr(a, ']') : NULL;
        if (!a || !b)
                return "unknown";
        *b = '\0';
        return a + 1;
}

int backends_from_string(const char *s, unsigned *ret) {
        unsigned b = 0;

        for (const char *p = s; *p;) {
                size_t n = strcspn(p, ",");
                if (n == 3 && strncmp(p, "luo", n) == 0)
                        b |= BACKEND_LUO;
                else if (n == 6 && strncmp(p, "initrd", n) == 0)
                        b |= BACKEND_INITRD;
                else if (n == 4 && strncmp(p, "file", n) == 0)
                        b |= BACKEND_FILE;
                else
                        return -EINVAL;
                p += n;
                if (*p == ',' && *++p == '\0')
                        return -EINVAL;
        }
        if (b == 0)
                return -EINVAL;
        *ret = b;
        return 0;
}

/* "luo" when /dev/liveupdate can be opened now; else why not is logged. */
static bool luo_available(void) {
        int fd = open("/dev/liveupdate", O_RDWR | O_CLOEXEC);

        if (fd >= 0) {
                close(fd);
                return true;
        }
        if (errno == EBUSY)
                log_info("/dev/liveupdate is held by another owner (EBUSY), e.g. systemd >= 261; "
                         "falling through to the next backend");
        else if (errno != ENOENT)
                log_warning_errno(-errno, "Cannot open /dev/liveupdate, falling through: %m");
        return false;
}

static json_object *plan_build(const LuodState *s, const char *kernel, const char *initrd,
                               const char *cmdline, const char *backend, const char *lockdown) {
        json_object *o = json_object_new_object(), *pfs = json_object_new_array();
        char bdf[PCI_BDF_STRING_MAX];

        json_object_object_add(o, "update_id", json_object_new_string(s->update_id));
        json_object_object_add(o, "kernel", json_object_new_string(kernel));
        json_object_object_add(o, "initrd", *initrd ? json_object_new_string(initrd) : NULL);
        json_object_object_add(o, "cmdline", json_object_new_string(cmdline));
        json_object_object_add(o, "backend", json_object_new_string(backend));
        json_object_object_add(o, "lockdown", json_object_new_string(lockdown));
        /* Measured (bench/kexec-settle, docs/testbed.md): disabling SR-IOV
         * first costs ~1 s per PF, serialized by the kernel even from one
         * writer per PF; left enabled, a kernel with the series settles all
         * PFs once at kexec, and one without it pays the same 1 s per PF at
         * the next boot.  Leaving them is never dearer. */
        json_object_object_add(o, "sriov_at_kexec", json_object_new_string("left enabled"));
        for (size_t i = 0; i < s->n_pfs; i++) {
                const PfRecord *pf = &s->pfs[i];
                json_object *p = json_object_new_object();
                size_t bound = 0;

                for (size_t j = 0; j < pf->n_vfs; j++)
                        bound += pf->vfs[j].driver != NULL;
                json_object_object_add(p, "bdf", json_object_new_string(pci_bdf_format(&pf->bdf, bdf)));
                json_object_object_add(p, "identity", json_object_new_string(pf->identity ?: ""));
                json_object_object_add(p, "driver", pf->driver ? json_object_new_string(pf->driver) : NULL);
                json_object_object_add(p, "numvfs", json_object_new_int64(pf->numvfs));
                json_object_object_add(p, "totalvfs", json_object_new_int64(pf->totalvfs));
                json_object_object_add(p, "bound_vfs", json_object_new_int64((int64_t) bound));
                json_object_array_add(pfs, p);
        }
        json_object_object_add(o, "pfs", pfs);
        return o;
}

static void pending_drop(Manager *m) {
        if (m->luo_out_fd >= 0) {
                close(m->luo_out_fd);   /* unpreserves the memfd */
                m->luo_out_fd = -EBADF;
        }
        if (m->pending_backend && strcmp(m->pending_backend, "file") == 0)
                (void) file_remove(m->state_dir);
        if (m->pending_initrd)
                (void) unlink(m->pending_initrd);
        free(m->pending_initrd);
        m->pending_initrd = NULL;
        free(m->pending_backend);
        m->pending_backend = NULL;
        luod_state_free(&m->pending);
}

static int on_execute(sd_event_source *s, void *userdata) {
        Manager *m = userdata;
        char msg[256];
        int r;

        sd_event_source_unref(s);
        (void) sd_bus_flush(m->bus);
        log_info("Update %s: kexec%s", m->pending.update_id, m->pending_via_systemd ? " via systemctl" : " -e");
        r = kexec_execute(m->pending_via_systemd);
        if (r >= 0 && m->pending_via_systemd) {
                set_state(m, "executing", NULL);
                return 0;
        }
        /* kexec -e returned: still on the old kernel, VFs untouched. */
        snprintf(msg, sizeof(msg), "kexec of update %s failed: %s; still on the old kernel, "
                 "nothing changed", m->pending.update_id, strerror(r < 0 ? -r : EIO));
        log_error("%s", msg);
        (void) kexec_unload();
        pending_drop(m);
        set_state(m, "failed", msg);
        return 0;
}

/* An update failed after it started changing things: State "failed",
 * LastError and the D-Bus error say why; still on this kernel. */
static int update_failed(Manager *m, sd_bus_error *error, int r, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static int update_failed(Manager *m, sd_bus_error *error, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        r = sd_bus_error_set_errnofv(error, -r, fmt, ap);
        va_end(ap);
        log_error("Update failed: %s", error->message);
        set_state(m, "failed", error->message);
        return r;
}

/* Preflight: path must be a readable regular file. */
static int check_image(sd_bus_error *error, const char *what, const char *path) {
        struct stat st;

        if (stat(path, &st) < 0 || access(path, R_OK) < 0)
                return sd_bus_error_set_errnof(error, errno, "%s %s: %m", what, path);
        if (!S_ISREG(st.st_mode))
                return sd_bus_error_set_errnof(error, EINVAL, "%s %s is not a regular file", what, path);
        return 0;
}

/* Leaves out of the record the PFs with no driver and no VFs: nothing of
 * them needs restoring, and the format names every PF's driver.  A PF with
 * VFs and no driver stays, and fails the preflight by name. */
static void record_drop_unused(LuodState *s) {
        char bdf[PCI_BDF_STRING_MAX];
        size_t k = 0;

        for (size_t i = 0; i < s->n_pfs; i++) {
                if (!s->pfs[i].driver && s->pfs[i].numvfs == 0) {
                        log_info("PF %s (%s) has no driver and no VFs: not recorded",
                                 pci_bdf_format(&s->pfs[i].bdf, bdf), s->pfs[i].identity ?: "?");
                        pf_record_done(&s->pfs[i]);
                        continue;
                }
                s->pfs[k++] = s->pfs[i];
        }
        s->n_pfs = k;
}

static int method_update(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_luod_state_ LuodState s = {};
        _cleanup_free_ char *buf = NULL, *cmdline = NULL, *kerror = NULL, *out = NULL;
        const char *kernel, *initrd, *cmdline_arg, *backend;
        char proc_cmdline[4096], lockbuf[128];
        size_t size;
        uint64_t flags;
        int r;

        r = sd_bus_message_read(msg, "ssst", &kernel, &initrd, &cmdline_arg, &flags);
        if (r < 0)
                return r;
        if (flags & ~UPDATE_FLAGS_ALL)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Unknown flags 0x%" PRIx64,
                                         flags & ~UPDATE_FLAGS_ALL);
        if (!*kernel || kernel[0] != '/')
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Kernel image must be an absolute path, got '%s'", kernel);
        if (*initrd && initrd[0] != '/')
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Initrd must be an absolute path, got '%s'", initrd);
        if (m->pending.update_id[0])
                return sd_bus_error_setf(error, SD_BUS_ERROR_FAILED,
                                         "Update %s is already loaded", m->pending.update_id);
        _cleanup_free_ char *blocked = NULL;
        if (inhibitors_check_block(m, &blocked) == -EBUSY)
                return sd_bus_error_set_errnof(error, EBUSY, "Update blocked by consumer %s", blocked);
        /* A preserved state refused or not fully restored at start is the
         * only copy of the last update: a new Update would overwrite it. */
        if (m->state_kept)
                return sd_bus_error_set_errnof(error, EBUSY,
                                               "The preserved state of update %s is kept (%s); "
                                               "luoctl report, then luoctl discard, before a new update",
                                               m->update_id, *m->last_error ? m->last_error : "not restored");

        /* Preflight: everything that can fail fails before the blackout. */
        _cleanup_(phase_resetp) __attribute__((unused)) Manager *phase_owner = m;
        set_phase(m, "preflight");
        r = check_image(error, "Kernel image", kernel);
        if (r >= 0 && *initrd)
                r = check_image(error, "Initrd", initrd);
        if (r < 0)
                return r;
        const char *lockdown = lockdown_mode(lockbuf, sizeof(lockbuf));

        r = state_fill_header(&s);
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "Preparing the update state: %m");
        set_phase(m, "snapshot");
        stamp(&s, "snapshot-start");
        r = sriov_scan(&s);
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "Scanning the SR-IOV PFs: %m");
        record_drop_unused(&s);
        stamp(&s, "snapshot-end");
        r = consumers_copy_assignments(m, &s);
        if (r >= 0)
                r = luod_state_upgrade_assignments(&s);
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "Copying the VF assignments into the state: %m");
        if (r > 0)
                log_info("%d VF assignments named their PF by an identity without its function: "
                         "recorded with the PF's identity now", r);
        set_phase(m, "preflight");
        for (size_t i = 0; i < s.n_pfs; i++)
                if (s.pfs[i].numvfs > s.pfs[i].totalvfs)
                        return sd_bus_error_set_errnof(error, ERANGE, "PF %s: sriov_numvfs %u > sriov_totalvfs %u",
                                                       s.pfs[i].identity, s.pfs[i].numvfs, s.pfs[i].totalvfs);

        /* The new kernel must have the drivers of the PFs and VFs, where its
         * modules are visible here. */
        char release[KERNEL_RELEASE_MAX];
        _cleanup_free_ char *drivers_note = NULL, *missing = NULL;
        r = kernel_image_release(kernel, release, sizeof(release));
        if (r < 0) {
                if (asprintf(&drivers_note, "not checked: release of %s unknown (%s)", kernel, strerror(-r)) < 0)
                        return -ENOMEM;
                strcpy(release, "");
        } else {
                r = drivers_check(&s, m->modules_root, release, &missing);
                if (r == -ENOPKG)
                        return sd_bus_error_set_errnof(error, ENOPKG, "The new kernel %s lacks drivers: %s",
                                                       release, missing);
                if (r < 0)
                        return sd_bus_error_set_errnof(error, -r, "Checking the drivers of kernel %s in %s/%s: %m",
                                                       release, m->modules_root, release);
                if (asprintf(&drivers_note, r > 0 ? "present in %s/%s" : "not checked: no %s/%s",
                             m->modules_root, release) < 0)
                        return -ENOMEM;
        }

        /* The record must be one the next kernel's luod can read (UTF-8
         * names, one identity per PF, ...): checked here, before any
         * consumer is told to pause its guests, dry runs included. */
        _cleanup_free_ char *verr = NULL;
        r = luod_state_verify(&s, &verr);
        if (r < 0)
                return sd_bus_error_set_errnof(error, EINVAL, "The SR-IOV record of this host cannot be preserved: %s",
                                               verr ?: "out of memory");

        /* systemctl kexec stops luod before the kexec: its outgoing LUO
         * session fd closes then, and that unpreserves the state. */
        const char *backend_why = NULL;
        bool luo_ok = (m->backends & BACKEND_LUO) && !(flags & UPDATE_VIA_SYSTEMD);
        if ((m->backends & BACKEND_LUO) && (flags & UPDATE_VIA_SYSTEMD))
                backend_why = "luo not used with VIA_SYSTEMD: systemd stops luod before the kexec, "
                              "and closing its LUO session unpreserves the state";
        /* A kernel without LUO (a distribution's: no CONFIG_LIVEUPDATE)
         * or booted without liveupdate=on: the plan says so. */
        if (luo_ok && !luo_available())
                backend_why = "luo not available: no /dev/liveupdate (a kernel without CONFIG_LIVEUPDATE, "
                              "or booted without liveupdate=on)";
        if (luo_ok && luo_available())
                backend = "luo";
        else if ((m->backends & BACKEND_INITRD) && *initrd)
                backend = "initrd";
        else if (m->backends & BACKEND_FILE)
                backend = "file";
        else
                return sd_bus_error_set_errnof(error, ENOTSUP,
                                               "No preservation backend usable: %s%s%s (luod --backends)",
                                               m->backends & BACKEND_LUO ?
                                               (backend_why ?: "/dev/liveupdate not available") : "",
                                               (m->backends & BACKEND_LUO) && (m->backends & BACKEND_INITRD) ? ", " : "",
                                               m->backends & BACKEND_INITRD ? "no initrd given" : "");

        if (strcmp(backend, "file") == 0 && access(m->state_dir, W_OK) < 0)
                return sd_bus_error_set_errnof(error, errno, "The state file backend needs %s: %m", m->state_dir);

        if (*cmdline_arg)
                r = kernel_cmdline_with_update_id(cmdline_arg, s.update_id, &cmdline);
        else {
                r = read_line("/proc/cmdline", proc_cmdline, sizeof(proc_cmdline));
                if (r >= 0)
                        r = kernel_cmdline_with_update_id(proc_cmdline, s.update_id, &cmdline);
        }
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "Building the kernel command line: %m");

        _cleanup_(json_object_putp) json_object *plan =
                plan_build(&s, kernel, initrd, cmdline, backend, lockdown);
        if (!plan)
                return -ENOMEM;
        json_object_object_add(plan, "kernel_release", *release ? json_object_new_string(release) : NULL);
        json_object_object_add(plan, "drivers", json_object_new_string(drivers_note));
        if (backend_why)
                json_object_object_add(plan, "backend_note", json_object_new_string(backend_why));
        if (flags & UPDATE_DRY_RUN)
                return sd_bus_reply_method_return(msg, "ss", s.update_id,
                                                  json_object_to_json_string_ext(plan, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED));

        /* From here UpdateId names this update and LastError is its own:
         * a consumer paused for PrepareForUpdate(update_id) sees State
         * "failed" with this UpdateId if it does not happen. */
        (void) set_string(&m->update_id, s.update_id);
        set_state(m, "preparing", "");
        if (strcmp(backend, "initrd") == 0) {
                /* The state rides in the initrd: persist before the load. */
                set_phase(m, "prepare");
                (void) inhibitors_prepare(m, &s);
                set_phase(m, "persist");
                stamp(&s, "persist-start");
                if (asprintf(&out, "%s/initrd-%s", m->runtime_dir, s.update_id) < 0)
                        return -ENOMEM;
                (void) mkdir(m->runtime_dir, 0700);
                r = state_buffer(&s, &buf, &size);
                if (r >= 0)
                        r = initrd_append_state(initrd, out, buf, size);
                if (r < 0)
                        return update_failed(m, error, r, "Appending the state to %s as %s: %m", initrd, out);
        }

        set_phase(m, "kexec-load");
        stamp(&s, "kexec-load-start");
        r = kexec_load_kernel(kernel, out ?: (*initrd ? initrd : NULL), cmdline, &kerror);
        if (r < 0) {
                if (out)
                        (void) unlink(out);
                return update_failed(m, error, r, "kexec_file_load refused %s: %s", kernel,
                                     kerror ?: strerror(-r));
        }
        stamp(&s, "kexec-load-end");

        if (strcmp(backend, "initrd") != 0) {
                /* Last step before kexec -e: the state carries every
                 * timestamp up to here.  Consumers pause their guests
                 * now: the blackout starts. */
                set_phase(m, "prepare");
                (void) inhibitors_prepare(m, &s);
                set_phase(m, "persist");
                stamp(&s, "persist-start");
                free(buf);
                buf = NULL;
                r = state_buffer(&s, &buf, &size);
                if (r >= 0 && strcmp(backend, "luo") == 0) {
                        r = luo_preserve(buf, size, &m->luo_out_fd);
                        if (r < 0 && (m->backends & BACKEND_FILE)) {
                                log_warning_errno(r, "Preserving the state in LUO failed, using %s/state.luod-state: %m",
                                                  m->state_dir);
                                backend = "file";
                                r = 0;
                        }
                }
                if (r >= 0 && strcmp(backend, "file") == 0)
                        r = file_preserve(m->state_dir, buf, size);
                if (r < 0) {
                        (void) kexec_unload();
                        return update_failed(m, error, r, "Persisting the state (%s): %m", backend);
                }
        }

        m->pending = s;
        s = (LuodState) {};
        m->pending_backend = strdup(backend);
        m->pending_initrd = out;
        out = NULL;
        m->pending_via_systemd = flags & UPDATE_VIA_SYSTEMD;
        (void) set_string(&m->update_id, m->pending.update_id);
        json_object_object_add(plan, "backend", json_object_new_string(backend));
        set_state(m, "loaded", "");

        r = sd_bus_reply_method_return(msg, "ss", m->pending.update_id,
                                       json_object_to_json_string_ext(plan, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED));
        if (r < 0)
                return r;
        return sd_event_add_defer(m->event, NULL, on_execute, m);
}

static int method_get_inventory(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_luod_state_ LuodState s = {};
        _cleanup_free_ char *buf = NULL;
        size_t size;
        int r;

        r = state_fill_header(&s);
        if (r >= 0)
                r = sriov_scan(&s);
        if (r >= 0) {
                record_drop_unused(&s);
                r = luod_state_serialize(&s, &buf, &size);
        }
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "Reading the SR-IOV inventory: %m");
        /* The body: everything after the header line. */
        const char *body = memchr(buf, '\n', size);
        _cleanup_free_ char *text = strndup(body + 1, size - (size_t) (body + 1 - buf));
        if (!text)
                return -ENOMEM;
        return sd_bus_reply_method_return(msg, "s", text);
}

static int method_get_report(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_(json_object_putp) json_object *loaded = NULL;
        char path[PATH_MAX];

        if (!m->report) {
                snprintf(path, sizeof(path), "%s/report.json", m->state_dir);
                struct stat st;

                if (stat(path, &st) < 0)
                        return sd_bus_error_set_errnof(error, errno, "No update report in %s: %m", path);
                if (!S_ISREG(st.st_mode))
                        return sd_bus_error_set_errnof(error, EBADMSG, "The update report %s is not a regular file", path);
                loaded = json_object_from_file(path);
                if (!loaded)
                        return sd_bus_error_set_errnof(error, EBADMSG, "The update report %s is unreadable or not JSON (%s)",
                                                       path, json_util_get_last_err() ?: "?");
        }
        return sd_bus_reply_method_return(msg, "s", json_object_to_json_string_ext(
                                                  m->report ?: loaded, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED));
}

static void finished_mark(Manager *m, const char *update_id);

static int method_discard(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        int r;

        if (m->pending.update_id[0]) {
                log_info("Discarding loaded update %s", m->pending.update_id);
                (void) kexec_unload();
                pending_drop(m);
        }
        if (m->luo_in_fd >= 0) {
                r = luo_finish(m->luo_in_fd);
                if (r < 0)
                        return sd_bus_error_set_errnof(error, -r, "FINISH on the retrieved LUO session: %m");
                close(m->luo_in_fd);
                m->luo_in_fd = -EBADF;
        }
        r = file_remove(m->state_dir);
        if (r < 0 && r != -ENOENT)
                return sd_bus_error_set_errnof(error, -r, "Removing %s/state.luod-state: %m", m->state_dir);
        initrd_state_remove(m);
        if (m->update_id && *m->update_id && !m->pending.update_id[0])
                finished_mark(m, m->update_id);
        m->state_kept = false;
        set_state(m, "idle", "");
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_retry(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_free_ char *why = NULL;
        int r;

        if (m->pending.update_id[0])
                return sd_bus_error_set_errnof(error, EBUSY, "Update %s is loaded; luoctl discard it first",
                                               m->pending.update_id);
        if (!m->state_kept)
                return sd_bus_error_set_errnof(error, ENOENT, "No preserved state is kept: nothing to retry");
        r = manager_retry(m, &why);
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "%s", why ?: "Retry failed");
        return sd_bus_reply_method_return(msg, "s", m->update_id);
}

static int property_get_version(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply,
                                void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", PACKAGE_VERSION);
}

/* Update, Discard and Retry lack SD_BUS_VTABLE_UNPRIVILEGED: sd-bus itself
 * refuses callers whose uid is not luod's (AccessDenied: dbus-daemon passes
 * no capabilities, so sd-bus compares uids); the bus policy
 * (units/org.luod1.conf) already lets only root send them. */
static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("State", "s", NULL, offsetof(Manager, state), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("UpdateId", "s", NULL, offsetof(Manager, update_id), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("LastError", "s", NULL, offsetof(Manager, last_error), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Phase", "s", NULL, offsetof(Manager, phase), SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Guests", "a(sssd)", property_get_guests, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_METHOD_WITH_ARGS("GetInventory", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", inventory),
                                method_get_inventory, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Update",
                                SD_BUS_ARGS("s", kernel, "s", initrd, "s", cmdline, "t", flags),
                                SD_BUS_RESULT("s", update_id, "s", plan),
                                method_update, 0),
        SD_BUS_METHOD_WITH_ARGS("GetReport", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", report),
                                method_get_report, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Discard", NULL, NULL, method_discard, 0),
        SD_BUS_METHOD_WITH_ARGS("Retry", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", update_id), method_retry, 0),
        SD_BUS_METHOD_WITH_ARGS("RegisterConsumer", SD_BUS_ARGS("s", name), SD_BUS_NO_RESULT,
                                method_register_consumer, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("AssignVF", SD_BUS_ARGS("s", guest, "s", pf_identity, "u", vf_index),
                                SD_BUS_NO_RESULT, method_assign_vf, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("UnassignVF", SD_BUS_ARGS("s", guest, "s", pf_identity, "u", vf_index),
                                SD_BUS_NO_RESULT, method_unassign_vf, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetAssignments", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(sssu)", assignments),
                                method_get_assignments, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetGuests", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(sssd)", guests),
                                method_get_guests, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GuestRunning", SD_BUS_ARGS("s", guest), SD_BUS_RESULT("d", downtime_ms),
                                method_guest_running, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Inhibit", SD_BUS_ARGS("s", mode, "s", why), SD_BUS_RESULT("h", fd),
                                method_inhibit, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetEvents", SD_BUS_ARGS("t", after_seqnum),
                                SD_BUS_RESULT("t", lost, "a(stsssa{ss})", events), method_get_events,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL_WITH_ARGS("EventsLost", SD_BUS_ARGS("t", count), 0),
        SD_BUS_SIGNAL_WITH_ARGS("DeviceEvent",
                                SD_BUS_ARGS("s", pf_identity, "t", seqnum, "s", action, "s", subsystem,
                                            "s", devpath, "a{ss}", properties, "t", held_usec), 0),
        SD_BUS_SIGNAL_WITH_ARGS("PrepareForUpdate", SD_BUS_ARGS("s", update_id, "t", max_delay_usec), 0),
        SD_BUS_SIGNAL_WITH_ARGS("GuestRestored", SD_BUS_ARGS("s", consumer, "s", guest, "s", error, "b", ok), 0),
        SD_BUS_VTABLE_END
};

int manager_add_bus_object(Manager *m) {
        int r = sd_bus_add_object_vtable(m->bus, NULL, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE,
                                         manager_vtable, m);
        if (r < 0)
                return log_error_errno(r, "Failed to add object %s: %m", LUOD_OBJECT_PATH);
        return 0;
}

/* ---- restore at start -------------------------------------------------- */

static int retrieve(Manager *m, char **buf, size_t *size, const char **backend) {
        int r;

        r = luo_retrieve(buf, size, &m->luo_in_fd);
        if (r >= 0) {
                *backend = "luo";
                return 0;
        }
        if (r != -ENOENT)
                log_warning_errno(r, "Retrieving the LUO session \"luod\" failed, trying the next backend: %m");
        char paths[2][PATH_MAX];
        size_t n = initrd_state_paths(m, paths);
        for (size_t i = 0; i < n; i++) {
                r = initrd_find_state(paths[i], buf, size);
                if (r >= 0) {
                        *backend = "initrd";
                        return 0;
                }
        }
        r = file_retrieve(m->state_dir, buf, size);
        if (r >= 0) {
                *backend = "file";
                return 0;
        }
        return r;
}

/* Keeps a refused or failed state: a LUO-held state also goes to the file
 * backend, since the kernel finishes a session whose fd closes. */
static void keep_state(Manager *m, const char *backend, const char *buf, size_t size) {
        char path[PATH_MAX];
        int r;

        m->state_kept = true;
        snprintf(path, sizeof(path), "%s/state.luod-state", m->state_dir);
        if (strcmp(backend, "file") == 0 || access(path, F_OK) == 0)
                return;
        r = file_preserve(m->state_dir, buf, size);
        if (r < 0)
                log_error_errno(r, "Failed to keep a copy of the preserved state in %s: %m", path);
        else
                log_info("Kept a copy of the preserved state in %s", path);
}

/* Writes the report to reports/<update_id>.json and report.json in the
 * state directory, each replaced atomically and durably. */
int manager_write_report(Manager *m, const char *update_id) {
        _cleanup_close_ int dir_fd = -EBADF, reports_fd = -EBADF;
        char name[LUOD_UUID_STRING_MAX + 8];
        const char *text;
        size_t len;
        int r;

        if (m->events) {
                json_object *ev = events_report(m);
                if (ev)
                        json_object_object_add(m->report, "events", ev);
        }
        text = json_object_to_json_string_length(m->report, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED, &len);
        if (!text)
                return log_error_errno(-ENOMEM, "Failed to format the report: %m");
        (void) mkdir(m->state_dir, 0700);
        dir_fd = open(m->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                return log_error_errno(-errno, "Failed to open %s: %m", m->state_dir);
        /* A new reports/ is made durable too, not only the files in it. */
        if (mkdirat(dir_fd, "reports", 0755) >= 0)
                (void) fsync_directory_at(dir_fd, ".");
        reports_fd = openat(dir_fd, "reports", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (reports_fd < 0)
                return log_error_errno(-errno, "Failed to open %s/reports: %m", m->state_dir);
        if (snprintf(name, sizeof(name), "%s.json", update_id) >= (int) sizeof(name))
                return log_error_errno(-ENAMETOOLONG, "Update id '%.40s...' is not a UUID: %m", update_id);
        r = write_file_atomic_at(reports_fd, name, text, len, 0644);
        if (r < 0)
                return log_error_errno(r, "Failed to write %s/reports/%s: %m", m->state_dir, name);
        r = write_file_atomic_at(dir_fd, "report.json", text, len, 0644);
        if (r < 0)
                return log_error_errno(r, "Failed to write %s/report.json: %m", m->state_dir);
        /* For fleet monitoring: the same report as node_exporter metrics.
         * A failure here leaves the report written. */
        if (m->metrics_file) {
                r = metrics_write_file(m->metrics_file, m->report);
                if (r < 0)
                        log_warning_errno(r, "Failed to write the metrics file %s: %m", m->metrics_file);
        }
        return 0;
}

/* One structured journal entry per restore (catalog: units/luod.catalog). */
static void journal_restore_done(Manager *m, const LuodState *s, const char *backend, size_t failed) {
        json_object *phases = NULL, *p, *name, *ms;
        const char *blackout = "";

        if (m->report && json_object_object_get_ex(m->report, "phases", &phases))
                for (size_t i = 0; i < json_object_array_length(phases); i++) {
                        p = json_object_array_get_idx(phases, i);
                        if (json_object_object_get_ex(p, "name", &name) && json_object_object_get_ex(p, "ms", &ms) &&
                            strcmp(json_object_get_string(name), "total-blackout") == 0)
                                blackout = json_object_get_string(ms);
                }
        (void) sd_journal_send("MESSAGE=Live update %s restored %zu of %zu PFs from %s; blackout %s ms",
                               s->update_id, s->n_pfs - failed, s->n_pfs, backend, *blackout ? blackout : "unknown",
                               "MESSAGE_ID=" LUOD_MESSAGE_RESTORE_DONE_STR,
                               "PRIORITY=%d", failed ? 3 : 6,
                               "LUOD_UPDATE_ID=%s", s->update_id,
                               "LUOD_BACKEND=%s", backend,
                               "LUOD_PFS=%zu", s->n_pfs,
                               "LUOD_PFS_FAILED=%zu", failed,
                               "LUOD_BLACKOUT_MS=%s", blackout,
                               "LUOD_PHASES=%s", phases ? json_object_to_json_string_ext(phases, JSON_C_TO_STRING_PLAIN) : "[]",
                               NULL);
}

/* This boot's id, /proc/sys/kernel/random/boot_id. */
static int read_boot_id(char ret[static LUOD_UUID_STRING_MAX]) {
        int r = read_line("/proc/sys/kernel/random/boot_id", ret, LUOD_UUID_STRING_MAX);
        if (r < 0)
                return log_error_errno(r, "Failed to read /proc/sys/kernel/random/boot_id: %m");
        return 0;
}

/* <runtime_dir>/finished names the update this boot restored or discarded:
 * /run does not outlive the boot, so a luod restarted later in it knows
 * the command line's luod.update_id is dealt with, not lost. */
static void finished_mark(Manager *m, const char *update_id) {
        char path[PATH_MAX];
        _cleanup_fclose_ FILE *f = NULL;

        (void) mkdir(m->runtime_dir, 0700);
        snprintf(path, sizeof(path), "%s/finished", m->runtime_dir);
        f = fopen(path, "we");
        if (!f || fprintf(f, "%s\n", update_id) < 0 || fflush(f) != 0)
                log_warning_errno(-errno, "Failed to write %s: %m", path);
}

static bool finished_is(Manager *m, const char *update_id) {
        char path[PATH_MAX], id[LUOD_UUID_STRING_MAX];

        snprintf(path, sizeof(path), "%s/finished", m->runtime_dir);
        return read_line(path, id, sizeof(id)) >= 0 && strcmp(id, update_id) == 0;
}

/* The update id on this boot's command line, "" if none. */
static void cmdline_update_id(char id[static LUOD_UUID_STRING_MAX]) {
        char cmdline[4096];

        if (read_line("/proc/cmdline", cmdline, sizeof(cmdline)) < 0 || kernel_cmdline_get_update_id(cmdline, id) < 0)
                id[0] = '\0';
}

/* A boot meant to land update id (its command line says so) found no
 * state of it: a failure, not "nothing to restore". */
static int state_missing(Manager *m, const char *id) {
        char msg[768];

        snprintf(msg, sizeof(msg), "State of update %s not found: no LUO session \"" LUO_SESSION_NAME "\", no %s/"
                 STATE_FILE_NAME "%s, no %s/" STATE_FILE_NAME " (this boot's command line has luod.update_id=%s); "
                 "nothing restored", id, m->runtime_dir,
                 strcmp(m->runtime_dir, "/run/luod") == 0 ? ", no " INITRD_STATE_PATH : "", m->state_dir, id);
        log_error("%s", msg);
        (void) sd_journal_send("MESSAGE=%s", msg,
                               "MESSAGE_ID=" LUOD_MESSAGE_STATE_MISSING_STR,
                               "PRIORITY=3",
                               "LUOD_UPDATE_ID=%s", id,
                               "LUOD_STATE_DIR=%s", m->state_dir,
                               NULL);
        (void) set_string(&m->update_id, id);
        set_state(m, "failed", msg);
        return -ENOENT;
}

/* Marks s consumed by this boot (one more attempt) and writes it to the
 * state file before any restore step: from here a luod that dies or is
 * killed finds it again (a retrieved LUO session ends when its fd closes;
 * the initramfs copy goes with /run at the next boot). */
static int state_consume(Manager *m, LuodState *s, const char *boot_id, const char *backend) {
        _cleanup_free_ char *buf = NULL;
        size_t size;
        int r;

        snprintf(s->consumed_boot_id, sizeof(s->consumed_boot_id), "%s", boot_id);
        s->consumed_attempt++;
        (void) mkdir(m->state_dir, 0700);
        r = state_buffer(s, &buf, &size);
        if (r >= 0)
                r = file_preserve(m->state_dir, buf, size);
        if (r < 0)
                return log_error_errno(r, "Update %s: no durable copy of the state in %s/" STATE_FILE_NAME
                                       " (restoring anyway; a luod stopped now cannot resume): %m",
                                       s->update_id, m->state_dir);
        /* The copy supersedes the initramfs one: only one of them may be
         * found by a restarted luod. */
        if (strcmp(backend, "initrd") == 0)
                initrd_state_remove(m);
        return 0;
}

/* Restores s (consumed by this boot, attempt s->consumed_attempt) and
 * reports; drops the state only when every PF came back.  how: "" for the
 * first attempt, "resumed" (luod restarted in the same boot) or "retry"
 * (luoctl retry). */
static int restore_state(Manager *m, LuodState *s, const char *backend, const char *how) {
        _cleanup_free_ char *buf = NULL;
        char msg[512];
        PfRestore *pfs = NULL;
        size_t size;
        int r;

        (void) set_string(&m->update_id, s->update_id);
        log_info("Restoring update %s from %s: %zu PFs%s%s (attempt %u)", s->update_id, backend, s->n_pfs,
                 *how ? ", " : "", how, s->consumed_attempt);
        set_state(m, "restoring", NULL);
        RestoreOptions opt = RESTORE_OPTIONS_DEFAULT;
        opt.driver_wait_usec = m->driver_wait_usec;
        int rr = restore_all(s, &opt, &pfs);
        if (rr == -ENOMEM) {
                m->state_kept = true;
                snprintf(msg, sizeof(msg), "Restore of update %s: out of memory; state kept", s->update_id);
                set_state(m, "failed", msg);
                return log_error_errno(rr, "%s", msg);
        }
        uint64_t end_tsc = tsc_read();
        m->restore_end_tsc = end_tsc;
        m->restore_end_us = now_us();
        if (s->n_assignments > 0) {
                r = consumers_adopt_assignments(m, s);
                if (r < 0)
                        log_warning_errno(r, "The %zu VF assignments of update %s were not saved: %m",
                                          s->n_assignments, s->update_id);
        }

        /* After the restore, so as not to add to the blackout; only what
         * this kernel logged before luod started counts. */
        KernelBootLog kboot = {};
        r = kmsg_read_boot("/dev/kmsg", luod_start_boottime_us, &kboot);
        if (r < 0)
                log_warning_errno(r, "Cannot read /dev/kmsg, the report has no kernel-pci-enumeration: %m");
        json_object_put(m->report);
        m->report = report_build(s, backend, pfs, luod_start_tsc, luod_start_boottime_us, end_tsc, &kboot);
        if (m->report) {
                json_object_object_add(m->report, "attempt", json_object_new_int64(s->consumed_attempt));
                json_object_object_add(m->report, "resumed", json_object_new_boolean(strcmp(how, "resumed") == 0));
                json_object_object_add(m->report, "retry", json_object_new_boolean(strcmp(how, "retry") == 0));
                /* Per guest: its VFs back or not; downtime once its consumer
                 * says it runs (GuestRunning), from the blackout start. */
                (void) consumers_report_guests(m, s, pfs);
                /* A retry replaces the timestamps of the attempt before
                 * (m->restored.assignments were just adopted: kept). */
                for (size_t i = 0; i < m->restored.n_timestamps; i++)
                        free(m->restored.timestamps[i].name);
                free(m->restored.timestamps);
                m->restored.timestamps = NULL;
                m->restored.n_timestamps = 0;
                for (size_t i = 0; i < s->n_timestamps; i++) {
                        if (strcmp(s->timestamps[i].name, "persist-start") == 0)
                                m->blackout_start_tsc = s->timestamps[i].tsc;
                        (void) luod_state_add_timestamp(&m->restored, s->timestamps[i].name,
                                                        s->timestamps[i].tsc, s->timestamps[i].realtime_ns);
                }
                m->tsc_khz = s->tsc_khz;
        }
        if (m->report)
                (void) manager_write_report(m, s->update_id);
        size_t failed = 0;
        for (size_t i = 0; i < s->n_pfs; i++)
                failed += pfs[i].error != 0;
        restore_results_free(m->restore_pfs, m->n_restore_pfs);
        m->restore_pfs = pfs;
        m->n_restore_pfs = s->n_pfs;
        journal_restore_done(m, s, backend, failed);

        if (rr < 0) {
                snprintf(msg, sizeof(msg), "Restore of update %s: %zu of %zu PFs failed; state kept "
                         "(luoctl report, then luoctl retry or luoctl discard)", s->update_id, failed, s->n_pfs);
                log_error("%s", msg);
                if (state_buffer(s, &buf, &size) >= 0)
                        keep_state(m, backend, buf, size);
                m->state_kept = true;
                set_state(m, "failed", msg);
                return rr;
        }

        /* Complete: drop the preserved state. */
        if (m->luo_in_fd >= 0) {
                r = luo_finish(m->luo_in_fd);
                if (r < 0)
                        log_warning_errno(r, "FINISH on the LUO session failed: %m");
                close(m->luo_in_fd);
                m->luo_in_fd = -EBADF;
        }
        initrd_state_remove(m);
        r = file_remove(m->state_dir);
        if (r < 0 && r != -ENOENT)
                log_warning_errno(r, "Failed to remove %s/state.luod-state: %m", m->state_dir);
        finished_mark(m, s->update_id);
        m->state_kept = false;
        log_info("Restored update %s: %zu PFs", s->update_id, s->n_pfs);
        set_state(m, "restored", "");
        return 0;
}

/* Refuses a state found at start: kept (and copied to the state file when
 * it came from elsewhere), State "failed" with msg. */
static int refuse_state(Manager *m, const char *backend, const char *buf, size_t size, int r, const char *msg) {
        log_error("%s", msg);
        keep_state(m, backend, buf, size);
        set_state(m, "failed", msg);
        return r;
}

int manager_restore_at_start(Manager *m) {
        _cleanup_luod_state_ LuodState s = {};
        _cleanup_free_ char *buf = NULL, *perr = NULL;
        const char *backend = NULL;
        char id[LUOD_UUID_STRING_MAX], boot[LUOD_UUID_STRING_MAX], msg[768];
        size_t size;
        int r;

        cmdline_update_id(id);
        r = retrieve(m, &buf, &size, &backend);
        if (r == -ENOENT) {
                if (!*id || finished_is(m, id)) {
                        log_info("No preserved state: nothing to restore");
                        return 0;
                }
                return state_missing(m, id);
        }
        if (r < 0) {
                snprintf(msg, sizeof(msg), "Cannot read the preserved state (%s): %s; kept, see luoctl discard",
                         m->state_dir, strerror(-r));
                log_error("%s", msg);
                m->state_kept = true;
                set_state(m, "failed", msg);
                return r;
        }

        r = luod_state_parse(buf, size, &s, &perr);
        if (r < 0) {
                snprintf(msg, sizeof(msg), "Refusing the preserved state from %s: %s (%s); kept",
                         backend, perr ?: "?", strerror(-r));
                return refuse_state(m, backend, buf, size, r, msg);
        }
        (void) set_string(&m->update_id, s.update_id);
        r = read_boot_id(boot);
        if (r < 0) {
                snprintf(msg, sizeof(msg), "Refusing the preserved state of update %s from %s: this boot's id "
                         "is unknown (%s); kept, see luoctl retry or luoctl discard", s.update_id, backend, strerror(-r));
                return refuse_state(m, backend, buf, size, r, msg);
        }
        /* One boot per state: another boot never applies a state a boot
         * before it applied (the command line of a kexec with
         * --reuse-cmdline still names it); the same boot resumes it. */
        if (s.consumed_boot_id[0] && strcmp(s.consumed_boot_id, boot) != 0) {
                snprintf(msg, sizeof(msg), "Refusing the preserved state of update %s from %s: it was consumed by "
                         "boot %s (attempt %u), this is boot %s; kept, see luoctl retry or luoctl discard",
                         s.update_id, backend, s.consumed_boot_id, s.consumed_attempt, boot);
                m->state_kept = true;
                return refuse_state(m, backend, buf, size, -ESTALE, msg);
        }
        if (!s.consumed_boot_id[0] && strcmp(id, s.update_id) != 0) {
                snprintf(msg, sizeof(msg), "Refusing the preserved state of update %s from %s: "
                         "this boot's command line has %s%s (a cold boot?); kept, see luoctl retry or luoctl discard",
                         s.update_id, backend, *id ? "luod.update_id=" : "no luod.update_id", id);
                return refuse_state(m, backend, buf, size, -ESTALE, msg);
        }
        bool resumed = s.consumed_boot_id[0];
        if (resumed)
                log_notice("Update %s was being restored by an earlier luod in this boot (attempt %u): resuming",
                           s.update_id, s.consumed_attempt);
        (void) state_consume(m, &s, boot, backend);
        return restore_state(m, &s, backend, resumed ? "resumed" : "");
}

int manager_retry(Manager *m, char **ret_error) {
        _cleanup_luod_state_ LuodState s = {};
        _cleanup_free_ char *buf = NULL, *perr = NULL;
        char boot[LUOD_UUID_STRING_MAX];
        size_t size;
        int r;

        r = file_retrieve(m->state_dir, &buf, &size);
        if (r < 0)
                return asprintf(ret_error, "No kept state in %s/" STATE_FILE_NAME ": %s", m->state_dir,
                                strerror(-r)) < 0 ? -ENOMEM : r;
        r = luod_state_parse(buf, size, &s, &perr);
        if (r < 0)
                return asprintf(ret_error, "The kept state %s/" STATE_FILE_NAME " is unusable: %s (%s)",
                                m->state_dir, perr ?: "?", strerror(-r)) < 0 ? -ENOMEM : r;
        r = read_boot_id(boot);
        if (r < 0)
                return asprintf(ret_error, "This boot's id is unknown: %s", strerror(-r)) < 0 ? -ENOMEM : r;
        log_notice("Retrying update %s in boot %s (asked for; last applied by boot %s, attempt %u)", s.update_id,
                   boot, s.consumed_boot_id[0] ? s.consumed_boot_id : "none", s.consumed_attempt);
        r = state_consume(m, &s, boot, "file");
        if (r < 0)
                return asprintf(ret_error, "Cannot record the retry in %s/" STATE_FILE_NAME " (%s): nothing done",
                                m->state_dir, strerror(-r)) < 0 ? -ENOMEM : r;
        r = restore_state(m, &s, "file", "retry");
        if (r < 0)
                return asprintf(ret_error, "%s", m->last_error) < 0 ? -ENOMEM : r;
        return 0;
}

void manager_done(Manager *m) {
        consumers_done(m);
        events_done(m);
        restore_results_free(m->restore_pfs, m->n_restore_pfs);
        luod_state_free(&m->restored);
        if (m->luo_out_fd >= 0)
                close(m->luo_out_fd);
        if (m->luo_in_fd >= 0)
                close(m->luo_in_fd);
        free(m->pending_initrd);
        free(m->pending_backend);
        luod_state_free(&m->pending);
        json_object_put(m->report);
        free(m->state);
        free(m->update_id);
        free(m->last_error);
        free(m->phase);
}
