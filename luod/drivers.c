/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <libkmod.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drivers.h"
#include "io-util.h"
#include "log.h"
#include "macro.h"
#include "pci-util.h"

int kernel_image_release(const char *path, char *ret, size_t size) {
        _cleanup_close_ int fd = -EBADF;
        uint8_t hdr[0x210];
        char buf[KERNEL_RELEASE_MAX];
        ssize_t n;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
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

        snprintf(path, sizeof(path), "/sys/bus/pci/drivers/%s/module", driver);
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
                snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/modalias", bdf);
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
