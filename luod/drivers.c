/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <libkmod.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "drivers.h"
#include "io-util.h"
#include "log.h"
#include "sysfs.h"
#include "macro.h"
#include "pci-util.h"

int kernel_image_release(const char *path, char *ret, size_t size) {
        _cleanup_close_ int fd = -EBADF;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        return kernel_image_release_fd(fd, ret, size);
}

int kernel_image_release_fd(int fd, char *ret, size_t size) {
        uint8_t hdr[0x210];
        char buf[KERNEL_RELEASE_MAX];
        ssize_t n;

        n = pread(fd, hdr, sizeof(hdr), 0);
        if (n < 0)
                return -errno;
        if ((size_t) n < sizeof(hdr) || memcmp(hdr + 0x202, "HdrS", 4) != 0)
                return -ENOEXEC;
        uint16_t off = (uint16_t) (hdr[0x20e] | hdr[0x20f] << 8);
        if (off == 0)
                return -ENOEXEC;
        n = pread(fd, buf, sizeof(buf) - 1, 0x200 + (off_t) off);
        if (n <= 0)
                return n < 0 ? -errno : -ENOEXEC;
        buf[n] = '\0';
        size_t len = strcspn(buf, " ");
        if (len == 0 || len >= size || len == (size_t) n)
                return -ENOEXEC;
        for (size_t i = 0; i < len; i++)
                if ((unsigned char) buf[i] < 0x21 || (unsigned char) buf[i] > 0x7e)
                        return -ENOEXEC;
        memcpy(ret, buf, len);
        ret[len] = '\0';
        return 0;
}

static bool same_driver(const char *a, const char *b) {
        if (!a || !b)
                return false;
        for (; *a && *b; a++, b++)
                if (*a != *b && !((*a == '-' || *a == '_') && (*b == '-' || *b == '_')))
                        return false;
        return *a == *b;
}

static void kmod_unrefp(struct kmod_ctx **ctx) {
        if (*ctx)
                kmod_unref(*ctx);
}

static void kmod_list_unrefp(struct kmod_list **l) {
        if (*l)
                kmod_module_unref_list(*l);
}

/* Appends "; " + text to *acc. */
static int add_missing(char **acc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int add_missing(char **acc, const char *fmt, ...) {
        _cleanup_free_ char *what = NULL;
        char *joined;
        va_list ap;

        va_start(ap, fmt);
        int r = vasprintf(&what, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        if (asprintf(&joined, "%s%s%s", *acc ?: "", *acc ? "; " : "", what) < 0)
                return -ENOMEM;
        free(*acc);
        *acc = joined;
        return 0;
}

/* The module a driver of this kernel belongs to: the basename of
 * /sys/bus/pci/drivers/DRIVER/module (drivers and modules are often named
 * differently, e.g. QAT's c6xxvf in qat_c62xvf); the driver's own name
 * when there is no such link. */
static const char *module_of_driver(const char *driver, char *buf, size_t size) {
        char path[PATH_MAX];
        ssize_t n;

        (void) sysfs_path(path, sizeof(path), "bus/pci/drivers/%s/module", driver);
        n = readlink(path, buf, size - 1);
        if (n <= 0)
                return driver;
        buf[n] = '\0';
        const char *base = strrchr(buf, '/');
        return base ? base + 1 : buf;
}

/* 1 when a module (or built-in driver) of that name exists, 0 if not. */
static int have_module_named(struct kmod_ctx *ctx, const char *driver) {
        struct kmod_module *mod = NULL;
        char buf[PATH_MAX];
        const char *name = module_of_driver(driver, buf, sizeof(buf));
        int r = kmod_module_new_from_name_lookup(ctx, name, &mod);

        if (r < 0)
                return r;
        if (!mod)
                return 0;
        kmod_module_unref(mod);
        return 1;
}

int drivers_check(const LuodState *s, const char *modules_root, const char *release, char **ret_missing) {
        _cleanup_(kmod_unrefp) struct kmod_ctx *ctx = NULL;
        _cleanup_free_ char *missing = NULL;
        char dir[PATH_MAX];
        struct stat st;
        int r;

        if (snprintf(dir, sizeof(dir), "%s/%s", modules_root, release) >= (int) sizeof(dir))
                return -ENAMETOOLONG;
        if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
                return 0;

        const char *null_config = NULL;
        ctx = kmod_new(dir, &null_config);
        if (!ctx)
                return log_error_errno(-ENOMEM, "Cannot open the module indexes in %s: %m", dir);
        r = kmod_load_resources(ctx);
        if (r < 0)
                return log_error_errno(r, "Cannot load the module indexes in %s (run depmod %s?): %m",
                                       dir, release);

        for (size_t i = 0; i < s->n_pfs; i++) {
                const PfRecord *pf = &s->pfs[i];
                _cleanup_(kmod_list_unrefp) struct kmod_list *list = NULL;
                char bdf[PCI_BDF_STRING_MAX], path[PATH_MAX], alias[256];

                /* An unused PF (no driver, no VFs) needs nothing after the kexec. */
                if (!pf->driver && pf->numvfs == 0)
                        continue;
                pci_bdf_format(&pf->bdf, bdf);
                (void) sysfs_path(path, sizeof(path), "bus/pci/devices/%s/modalias", bdf);
                r = read_line(path, alias, sizeof(alias));
                if (r < 0)
                        return log_error_errno(r, "PF %s: cannot read %s: %m", bdf, path);
                r = kmod_module_new_from_lookup(ctx, alias, &list);
                if (r < 0)
                        return log_error_errno(r, "PF %s: looking up %s in %s: %m", bdf, alias, dir);
                if (!list) {
                        r = add_missing(&missing, "PF %s (%s): no driver in %s matches %s", bdf,
                                        pf->driver ?: "no driver now", release, alias);
                        if (r < 0)
                                return r;
                }
                for (size_t j = 0; j < pf->n_vfs; j++) {
                        const char *want = pf->vfs[j].driver_override ?: pf->vfs[j].driver;
                        bool seen = false;

                        if (!want)
                                continue;
                        /* Report each missing VF driver once per PF. */
                        for (size_t k = 0; k < j && !seen; k++)
                                seen = same_driver(pf->vfs[k].driver_override ?: pf->vfs[k].driver, want);
                        if (seen)
                                continue;
                        r = have_module_named(ctx, want);
                        if (r < 0)
                                return log_error_errno(r, "PF %s: looking up VF driver %s in %s: %m", bdf, want, dir);
                        if (r == 0) {
                                r = add_missing(&missing, "PF %s: VF %u's driver %s is not in %s", bdf,
                                                pf->vfs[j].index, want, release);
                                if (r < 0)
                                        return r;
                        }
                }
        }
        if (missing) {
                *ret_missing = missing;
                missing = NULL;
                return -ENOPKG;
        }
        return 1;
}

static void kmod_module_unrefp(struct kmod_module **m) {
        if (*m)
                kmod_module_unref(*m);
}

/* A context on the indexes of modules_dir, with the default modprobe.d
 * configuration (module options, softdeps). */
static int kmod_open(const char *modules_dir, const char *driver, struct kmod_ctx **ret) {
        struct kmod_ctx *ctx;
        int r;

        ctx = kmod_new(modules_dir, NULL);
        if (!ctx)
                return log_error_errno(-ENOMEM, "Driver %s: cannot open the module indexes in %s: %m",
                                       driver, modules_dir);
        r = kmod_load_resources(ctx);
        if (r < 0) {
                kmod_unref(ctx);
                return log_error_errno(r, "Driver %s: cannot load the module indexes in %s (run depmod?): %m",
                                       driver, modules_dir);
        }
        *ret = ctx;
        return 0;
}

/* The first module of kmod_module_new_from_lookup(driver) in *ret (a
 * reference), NULL when none. */
static int lookup_first(struct kmod_ctx *ctx, const char *modules_dir, const char *driver,
                        struct kmod_module **ret) {
        _cleanup_(kmod_list_unrefp) struct kmod_list *list = NULL;
        int r;

        r = kmod_module_new_from_lookup(ctx, driver, &list);
        if (r < 0)
                return log_error_errno(r, "Driver %s: looking up its module in %s: %m", driver, modules_dir);
        *ret = list ? kmod_module_get_module(list) : NULL;
        return 0;
}

/* A libkmod context on modules_dir and the first module driver names (NULL
 * when none). */
static int open_lookup(const char *modules_dir, const char *driver, struct kmod_ctx **ret_ctx,
                       struct kmod_module **ret_mod) {
        int r = kmod_open(modules_dir, driver, ret_ctx);

        return r < 0 ? r : lookup_first(*ret_ctx, modules_dir, driver, ret_mod);
}

int drivers_lookup_module(const char *modules_dir, const char *driver, char **ret_module) {
        _cleanup_(kmod_unrefp) struct kmod_ctx *ctx = NULL;
        _cleanup_(kmod_module_unrefp) struct kmod_module *mod = NULL;
        int r;

        r = open_lookup(modules_dir, driver, &ctx, &mod);
        if (r < 0)
                return r;
        if (!mod)
                return log_error_errno(-ENOENT, "Driver %s: no module of that name in %s, and not built in: %m",
                                       driver, modules_dir);
        *ret_module = strdup(kmod_module_get_name(mod));
        if (!*ret_module)
                return log_error_errno(-ENOMEM, "Driver %s: %m", driver);
        return kmod_module_get_initstate(mod) == KMOD_MODULE_BUILTIN ? 0 : 1;
}

static bool driver_registered(const char *drivers_dir, const char *driver) {
        char path[PATH_MAX];

        if (snprintf(path, sizeof(path), "%s/%s", drivers_dir, driver) >= (int) sizeof(path))
                return false;
        return access(path, F_OK) >= 0;
}

#define DRIVER_REGISTER_WAIT_MS 5000

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static void unlockp(pthread_mutex_t **m) {
        if (*m)
                pthread_mutex_unlock(*m);
}

int drivers_load_at(const char *drivers_dir, const char *modules_dir, const char *driver) {
        _cleanup_(unlockp) pthread_mutex_t *locked = NULL;
        _cleanup_(kmod_unrefp) struct kmod_ctx *ctx = NULL;
        _cleanup_(kmod_module_unrefp) struct kmod_module *mod = NULL;
        int r;

        if (!driver || !*driver || strchr(driver, '/'))
                return log_error_errno(-EINVAL, "Driver '%s': not a driver name: %m", driver ?: "");
        pthread_mutex_lock(&load_lock);
        locked = &load_lock;
        if (driver_registered(drivers_dir, driver))
                return 0;

        r = open_lookup(modules_dir, driver, &ctx, &mod);
        if (r < 0)
                return r;
        if (!mod)
                return log_error_errno(-ENOENT, "Driver %s: not registered (%s/%s), and no module of that name in %s: %m",
                                       driver, drivers_dir, driver, modules_dir);
        const char *name = kmod_module_get_name(mod);
        bool builtin = kmod_module_get_initstate(mod) == KMOD_MODULE_BUILTIN;
        if (!builtin) {
                /* 0 also when it is in the kernel already or a concurrent
                 * insert of it won (-EEXIST); a positive value is a
                 * KMOD_PROBE_APPLY_BLACKLIST* flag, which is not asked. */
                r = kmod_module_probe_insert_module(mod, 0, NULL, NULL, NULL, NULL);
                if (r < 0)
                        return log_error_errno(r, "Driver %s: loading module %s (%s) failed: %m", driver, name,
                                               kmod_module_get_path(mod) ?: modules_dir);
        }
        for (unsigned ms = 0; !driver_registered(drivers_dir, driver); ms += 10) {
                if (builtin || ms >= DRIVER_REGISTER_WAIT_MS)
                        return log_error_errno(-ENXIO, "Driver %s: module %s is %s, but no PCI driver %s is registered (%s/%s): %m",
                                               driver, name, builtin ? "built in" : "loaded", driver, drivers_dir, driver);
                nanosleep(&(struct timespec) { .tv_nsec = 10 * 1000 * 1000 }, NULL);
        }
        log_info("Driver %s: loaded module %s", driver, name);
        return 1;
}

/* /lib/modules/<uname -r> */
static int running_modules_dir(const char *driver, char dir[static PATH_MAX]) {
        struct utsname u;

        if (uname(&u) < 0)
                return log_error_errno(-errno, "Driver %s: uname() failed: %m", driver);
        if (snprintf(dir, PATH_MAX, "/lib/modules/%s", u.release) >= PATH_MAX)
                return log_error_errno(-ENAMETOOLONG, "Driver %s: /lib/modules/%s: %m", driver, u.release);
        return 0;
}

int drivers_load(const char *driver) {
        char dir[PATH_MAX];
        int r;

        char drivers[PATH_MAX];

        r = running_modules_dir(driver, dir);
        if (r >= 0)
                r = sysfs_path(drivers, sizeof(drivers), "bus/pci/drivers");
        if (r < 0)
                return r;
        return drivers_load_at(drivers, dir, driver);
}

int drivers_load_vf_drivers(const PfRecord *pf, const char *drivers_dir, const char *modules_dir,
                            const char **ret_driver) {
        char dir[PATH_MAX], drivers[PATH_MAX];

        if (!drivers_dir) {
                int r = sysfs_path(drivers, sizeof(drivers), "bus/pci/drivers");
                if (r < 0)
                        return r;
                drivers_dir = drivers;
        }

        for (size_t i = 0; i < pf->n_vfs; i++) {
                const char *want = pf->vfs[i].driver;
                bool seen = false;
                int r;

                if (!want)
                        continue;
                for (size_t k = 0; k < i && !seen; k++)
                        seen = same_driver(pf->vfs[k].driver, want);
                if (seen)
                        continue;
                r = modules_dir ? 0 : running_modules_dir(want, dir);
                if (r >= 0)
                        r = drivers_load_at(drivers_dir, modules_dir ?: dir, want);
                if (r < 0) {
                        *ret_driver = want;
                        return r;
                }
        }
        return 0;
}
