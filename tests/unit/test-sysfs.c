/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The sysfs/procfs access point reads and writes below a test root
 * (LUOD_TEST_SYSFS_ROOT, LUOD_TEST_PROCFS_ROOT), and so do the modules that
 * use it (kexec_loaded, kernel_cmdline_get_update_id). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kexec.h"
#include "macro.h"
#include "sysfs.h"
#include "tap.h"

static void put(const char *root, const char *rel, const char *text) {
        char path[PATH_MAX];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        f = fopen(path, "we");
        if (f) {
                fputs(text, f);
                fclose(f);
        }
}

int main(void) {
        char tmp[] = "/tmp/test-sysfs-XXXXXX", sys[64], proc[64], path[PATH_MAX], line[128];
        char id[LUOD_UUID_STRING_MAX];
        _cleanup_free_ char *v = NULL, *link = NULL, *none = NULL;

        if (!mkdtemp(tmp))
                return 1;
        snprintf(sys, sizeof(sys), "%s/sys", tmp);
        snprintf(proc, sizeof(proc), "%s/proc", tmp);
        snprintf(path, sizeof(path), "%s/kernel", sys);
        CHECK(mkdir(sys, 0755) == 0 && mkdir(proc, 0755) == 0 && mkdir(path, 0755) == 0);
        put(sys, "kernel/kexec_loaded", "1\n");
        put(sys, "kernel/attr", "value\n\n");
        put(proc, "cmdline", "console=ttyS0 luod.update_id=3f6c2a9e-8b1d-4e57-9a0c-5d2e7f14b6a8\n");
        snprintf(path, sizeof(path), "%s/kernel/driver", sys);
        CHECK(symlink("../bus/pci/drivers/igb", path) == 0);
        setenv("LUOD_TEST_SYSFS_ROOT", sys, 1);
        setenv("LUOD_TEST_PROCFS_ROOT", proc, 1);

        CHECK(strcmp(sysfs_root(), sys) == 0);
        CHECK(strcmp(procfs_root(), proc) == 0);
        CHECK(sysfs_path(path, sizeof(path), "bus/pci/devices/%s", "0000:01:00.0") == 0);
        CHECK(strncmp(path, sys, strlen(sys)) == 0 && strcmp(path + strlen(sys), "/bus/pci/devices/0000:01:00.0") == 0);
        CHECK(sysfs_path(path, 8, "bus/pci/devices") == -ENAMETOOLONG);

        CHECK(sysfs_read_line("kernel/kexec_loaded", line, sizeof(line)) >= 0 && strcmp(line, "1") == 0);
        snprintf(path, sizeof(path), "%s/kernel", sys);
        CHECK(sysfs_read(path, "attr", &v) == 0 && strcmp(v, "value") == 0);
        CHECK(sysfs_write(path, "attr", "other") == 0);
        CHECK(sysfs_read_line("kernel/attr", line, sizeof(line)) >= 0 && strcmp(line, "other") == 0);
        CHECK(sysfs_link_name("test", path, "driver", &link) == 0 && strcmp(link, "igb") == 0);
        CHECK(sysfs_link_name("test", path, "nothing", &none) == 0 && !none);
        CHECK(sysfs_read(path, "nothing", &v) == -ENOENT);

        /* Modules read through it. */
        CHECK(kexec_loaded() == 1);
        CHECK(kernel_cmdline_get_update_id(NULL, id) == 0 && strcmp(id, "3f6c2a9e-8b1d-4e57-9a0c-5d2e7f14b6a8") == 0);

        CHECK(system(NULL) != 0);
        snprintf(path, sizeof(path), "rm -rf '%s'", tmp);
        (void) system(path);
        return tap_failures;
}
