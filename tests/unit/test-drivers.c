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

int main(void) {
        char alias[256], glob[300], modroot[600], bdfs[300] = "";
        _cleanup_free_ char *missing = NULL;
        struct dirent *de;
        DIR *d;
        FILE *f;

        if (!mkdtemp(root))
                return 1;
        test_release();

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
