/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The SR-IOV record an update carries: its header, which PFs it holds, and
 * the plan Update answers with. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "io-util.h"
#include "log.h"
#include "sysfs.h"
#include "pci-util.h"
#include "record.h"
#include "tsc.h"

/* update_id, kernel release, boot id and TSC rate of this kernel. */
int record_fill_header(LuodState *s) {
        struct utsname u;
        int r;

        r = procfs_read_line("sys/kernel/random/uuid", s->update_id, sizeof(s->update_id));
        if (r >= 0)
                r = procfs_read_line("sys/kernel/random/boot_id", s->old_boot_id, sizeof(s->old_boot_id));
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

/* Leaves out of the record the PFs with no driver and no VFs: nothing of
 * them needs restoring, and the format names every PF's driver.  A PF with
 * VFs and no driver stays, and fails the preflight by name. */
void record_drop_unused(LuodState *s) {
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

const char *record_lockdown_mode(char *buf, size_t size) {
        char *a, *b;

        if (sysfs_read_line("kernel/security/lockdown", buf, size) < 0)
                return "unknown";
        a = strchr(buf, '[');
        b = a ? strchr(a, ']') : NULL;
        if (!a || !b)
                return "unknown";
        *b = '\0';
        return a + 1;
}

json_object *record_plan(const LuodState *s, const char *kernel, const char *initrd,
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

int record_serialize(const LuodState *s, char **ret, size_t *ret_size) {
        int r = luod_state_serialize(s, ret, ret_size);
        if (r < 0)
                return log_error_errno(r, "Failed to serialize the state of update %s: %m", s->update_id);
        return 0;
}
