/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The driver preflight against module indexes made by the real depmod from
 * a modules.builtin.modinfo written here, for a real PCI device of this
 * machine (its modalias from sysfs).  Skips (exit 77) without PCI devices
 * in sysfs or without depmod. */
#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drivers.h"
#include "macro.h"
#include "pci-util.h"
#include "tap.h"

static char root[] = "/tmp/test-drivers.XXXXXX";

/* Writes root/lib/modules/REL with built-in modules NAME -> ALIAS (pairs,
 * NULL-terminated) and runs depmod on it. */
static int mkmods(const char *rel, ...) {
        char dir[512], path[600], cmd[1200];
        va_list ap;
        FILE *modinfo, *builtin;

        snprintf(dir, sizeof(dir), "%s/lib/modules/%s", root, rel);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", dir, dir);
        if (system(cmd) != 0)
                return -1;
        snprintf(path, sizeof(path), "%s/modules.builtin.modinfo", dir);
        modinfo = fopen(path, "we");
        snprintf(path, sizeof(path), "%s/modules.builtin", dir);
        builtin = fopen(path, "we");
        if (!modinfo || !builtin)
                return -1;
        va_start(ap, rel);
        for (const char *name; (name = va_arg(ap, const char *));) {
                const char *alias = va_arg(ap, const char *);
                fprintf(modinfo, "%s.alias=%s%c", name, alias, 0);
                fprintf(builtin, "kernel/drivers/test/%s.ko\n", name);
        }
        va_end(ap);
        fclose(modinfo);
        fclose(builtin);
        snprintf(path, sizeof(path), "%s/modules.order", dir);
        fclose(fopen(path, "we"));
        snprintf(cmd, sizeof(cmd), "depmod -b '%s' '%s'", root, rel);
        return system(cmd) == 0 ? 0 : -1;
}

static void test_release(void) {
        char path[600], rel[KERNEL_RELEASE_MAX];
        unsigned char img[0x400] = {};
        FILE *f;

        memcpy(img + 0x202, "HdrS", 4);
        img[0x20e] = 0x00;      /* version string at 0x200 + 0x100 */
        img[0x20f] = 0x01;
        strcpy((char *) img + 0x300, "7.3.4-luod+ (luod@testbed) #1 SMP");
        snprintf(path, sizeof(path), "%s/bzImage", root);
        f = fopen(path, "we");
        fwrite(img, 1, sizeof(img), f);
        fclose(f);
        CHECK(kernel_image_release(path, rel, sizeof(rel)) == 0);
        CHECK(strcmp(rel, "7.3.4-luod+") == 0);
        /* Too small a buffer, a missing magic, no file. */
        CHECK(kernel_image_release(path, rel, 5) == -ENOEXEC);
        img[0x202] = 'X';
        f = fopen(path, "we");
        fwrite(img, 1, sizeof(img), f);
        fclose(f);
        CHECK(kernel_image_release(path, rel, sizeof(rel)) == -ENOEXEC);
        CHECK(kernel_image_release("/nonexistent", rel, sizeof(rel)) == -ENOENT);
}

/* Adds a loadable module NAME.ko (an object with only a .modinfo section,
 * as much as depmod reads) to root/lib/modules/REL and runs depmod again.
 * Never inserted: the tests below stop before any insert. */
static int add_ko(const char *rel, const char *file, const char *modname, const char *alias) {
        char src[600], cmd[2000];
        FILE *f;

        snprintf(src, sizeof(src), "%s/ko.c", root);
        f = fopen(src, "we");
        if (!f)
                return -1;
        fprintf(f, "static const char modinfo[] __attribute__((used, section(\".modinfo\"), aligned(1))) =\n"
                   "        \"license=GPL\\0name=%s\\0alias=%s\\0depends=\";\n", modname, alias);
        fclose(f);
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s/lib/modules/%s/kernel/drivers/test' && "
                 "cc -c -o '%s/lib/modules/%s/kernel/drivers/test/%s.ko' '%s' && depmod -b '%s' '%s' 2>/dev/null",
                 root, rel, root, rel, file, src, root, rel);
        return system(cmd) == 0 ? 0 : -1;
}

/* drivers_lookup_module() against indexes depmod made (a loadable
 * vfio-pci.ko, a built-in igb); drivers_load_at() and
 * drivers_load_vf_drivers() only against indexes without a loadable module,
 * so that nothing can be inserted into this machine's kernel: the driver
 * registered already (a directory in a drivers dir made here), built in
 * but not registered, or missing. */
static void test_load(void) {
        char moddir[600], builtin[600], drvdir[600], absent[600], path[700];
        _cleanup_free_ char *mod = NULL;
        const char *bad = NULL;

        if (system("command -v cc >/dev/null") != 0) {
                printf("# skip test_load: no cc to make a module file\n");
                return;
        }
        CHECK(mkmods("9.9.9-load", "igb", "pci:v00008086d000010C9sv*sd*bc*sc*i*", NULL) == 0);
        CHECK(add_ko("9.9.9-load", "vfio-pci", "vfio_pci", "vfio_pci:v*d*sv*sd*bc*sc*i*") == 0);
        CHECK(mkmods("9.9.9-builtin", "igb", "pci:v00008086d000010C9sv*sd*bc*sc*i*", NULL) == 0);
        snprintf(moddir, sizeof(moddir), "%s/lib/modules/9.9.9-load", root);
        snprintf(builtin, sizeof(builtin), "%s/lib/modules/9.9.9-builtin", root);
        snprintf(absent, sizeof(absent), "%s/lib/modules/9.9.9-absent", root);
        snprintf(drvdir, sizeof(drvdir), "%s/drivers", root);
        snprintf(path, sizeof(path), "%s/vfio-pci", drvdir);
        CHECK(mkdir(drvdir, 0755) == 0);

        /* The driver name as module name, '-' as '_': a loadable module. */
        CHECK(drivers_lookup_module(moddir, "vfio-pci", &mod) == 1);
        CHECK(mod && strcmp(mod, "vfio_pci") == 0);
        free(mod);
        mod = NULL;
        CHECK(drivers_lookup_module(moddir, "vfio_pci", &mod) == 1);
        free(mod);
        mod = NULL;
        /* Built in (modules.builtin). */
        CHECK(drivers_lookup_module(moddir, "igb", &mod) == 0);
        CHECK(mod && strcmp(mod, "igb") == 0);
        free(mod);
        mod = NULL;
        CHECK(drivers_lookup_module(moddir, "nosuchdrv", &mod) == -ENOENT);
        CHECK(!mod);
        CHECK(drivers_lookup_module(absent, "vfio-pci", &mod) < 0);
        CHECK(!mod);

        /* Registered already: nothing to load, no index needed. */
        CHECK(mkdir(path, 0755) == 0);
        CHECK(drivers_load_at(drvdir, absent, "vfio-pci") == 0);
        /* Built in but no such PCI driver registered: ENXIO, not a load. */
        CHECK(drivers_load_at(drvdir, builtin, "igb") == -ENXIO);
        /* Neither registered nor a module. */
        CHECK(drivers_load_at(drvdir, builtin, "vfio_pci") == -ENOENT);
        CHECK(drivers_load_at(drvdir, absent, "nosuchdrv") < 0);
        CHECK(drivers_load_at(drvdir, builtin, "../vfio-pci") == -EINVAL);
        CHECK(drivers_load_at(drvdir, builtin, "") == -EINVAL);

        /* Each distinct VF driver once ('-' and '_' alike), unbound VFs
         * skipped; the first failing one named. */
        VfRecord vfs[4] = { { .index = 0, .driver = (char *) "vfio-pci" },
                            { .index = 1, .driver = (char *) "vfio_pci" },
                            { .index = 2 },
                            { .index = 3, .driver = (char *) "nosuchdrv" } };
        PfRecord pf = { .vfs = vfs, .n_vfs = 4 };
        CHECK(drivers_load_vf_drivers(&pf, drvdir, builtin, &bad) == -ENOENT);
        CHECK(bad == vfs[3].driver);
        pf.n_vfs = 3;
        bad = NULL;
        CHECK(drivers_load_vf_drivers(&pf, drvdir, builtin, &bad) == 0);
        CHECK(!bad);
        CHECK(rmdir(path) == 0);
}

int main(void) {
        char alias[256], glob[300], modroot[600], bdfs[300] = "";
        _cleanup_free_ char *missing = NULL;
        struct dirent *de;
        DIR *d;
        FILE *f;

        if (!mkdtemp(root))
                return 1;
        test_release();
        if (system("command -v depmod >/dev/null") == 0)
                test_load();

        /* A real PCI device of this machine and its modalias. */
        d = opendir("/sys/bus/pci/devices");
        while (d && (de = readdir(d)))
                if (de->d_name[0] != '.') {
                        snprintf(bdfs, sizeof(bdfs), "%s", de->d_name);
                        break;
                }
        if (d)
                closedir(d);
        if (!*bdfs || system("command -v depmod >/dev/null") != 0) {
                printf("skip: no PCI device in sysfs or no depmod\n");
                return 77;
        }
        snprintf(glob, sizeof(glob), "/sys/bus/pci/devices/%s/modalias", bdfs);
        f = fopen(glob, "re");
        if (!f || !fgets(alias, sizeof(alias), f))
                return 1;
        fclose(f);
        alias[strcspn(alias, "\n")] = '\0';
        /* pci:v00008086d...: match this vendor and device, any rest. */
        char *sv = strstr(alias, "sv");
        if (!sv)
                return 1;
        snprintf(glob, sizeof(glob), "%.*s*", (int) (sv - alias), alias);

        VfRecord vfs[2] = { { .index = 0, .driver = (char *) "vfio-pci" },
                            { .index = 1, .driver_override = (char *) "vfio-pci", .driver = (char *) "vfio-pci" } };
        PfRecord pf = { .driver = (char *) "pfdrv", .vfs = vfs, .n_vfs = 2 };
        LuodState s = { .pfs = &pf, .n_pfs = 1 };
        CHECK(pci_bdf_parse(bdfs, &pf.bdf) == 0);
        snprintf(modroot, sizeof(modroot), "%s/lib/modules", root);

        /* Both drivers there (vfio_pci as vfio-pci: '-' and '_' alike). */
        CHECK(mkmods("9.9.9-all", "pfdrv", glob, "vfio_pci", "vfio_pci:v*d*sv*sd*bc*sc*i*", NULL) == 0);
        CHECK(drivers_check(&s, modroot, "9.9.9-all", &missing) == 1);

        /* No module matches the PF's modalias. */
        CHECK(mkmods("9.9.9-nopf", "otherdrv", "pci:v0000FFFFd*sv*sd*bc*sc*i*", "vfio_pci", "vfio_pci:v*", NULL) == 0);
        CHECK(drivers_check(&s, modroot, "9.9.9-nopf", &missing) == -ENOPKG);
        CHECK(missing && strstr(missing, "(pfdrv): no driver in 9.9.9-nopf matches pci:v"));
        CHECK(missing && !strstr(missing, "vfio-pci"));
        free(missing);
        missing = NULL;

        /* The VF driver is missing: named once, with the first VF. */
        CHECK(mkmods("9.9.9-novf", "pfdrv", glob, NULL) == 0);
        CHECK(drivers_check(&s, modroot, "9.9.9-novf", &missing) == -ENOPKG);
        CHECK(missing && strstr(missing, "VF 0's driver vfio-pci is not in 9.9.9-novf"));
        CHECK(missing && !strstr(missing, "VF 1"));
        free(missing);
        missing = NULL;

        /* An unused PF (no driver, no VFs) needs no driver in the new kernel. */
        {
                PfRecord unused = { .bdf = pf.bdf };
                LuodState u = { .pfs = &unused, .n_pfs = 1 };

                CHECK(drivers_check(&u, modroot, "9.9.9-nopf", &missing) == 1);
                unused.numvfs = 2;
                CHECK(drivers_check(&u, modroot, "9.9.9-nopf", &missing) == -ENOPKG);
                CHECK(missing && strstr(missing, "(no driver now): no driver in 9.9.9-nopf"));
                free(missing);
                missing = NULL;
        }

        /* Modules of that release not visible here: not checked. */
        CHECK(drivers_check(&s, modroot, "9.9.9-absent", &missing) == 0);
        CHECK(!missing);

        char cmd[600];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        (void) !system(cmd);
        return tap_failures ? 1 : 0;
}
