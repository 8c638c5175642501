/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Where an update's state is carried across the kexec: one Backend per
 * way, one file each (backend-luo.c, backend-initrd.c, backend-file.c), tried
 * in the order of backends[] (luod --backends picks which may be used). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

typedef struct Backend {
        const char *name;               /* "luo", "initrd", "file": in the plan, the report, --backends */
        unsigned bit;                   /* BACKEND_* */
        bool persist_before_load;       /* the state rides in what is loaded (the initrd) */
        /* NULL when it can carry this update now, else why not. */
        const char *(*unusable)(const Manager *m, const char *initrd, uint64_t flags);
        /* Persists the serialized state of update_id; the initrd backend sets
         * *ret_load_initrd to the initrd to load instead of initrd.
         * Returns 0 or a negative errno (not logged). */
        int (*persist)(Manager *m, const char *update_id, const char *initrd, const void *buf, size_t size,
                       char **ret_load_initrd);
        /* Removes what persist left, so that no later boot can apply it;
         * load_initrd is what persist returned (NULL if nothing). */
        void (*unpersist)(Manager *m, const char *load_initrd);
        /* In the new kernel: finds the state this backend carried across
         * the kexec.  Returns 0 with it in *ret_buf (to free) and
         * *ret_size, -ENOENT when it carried none, or a negative errno of
         * reading it (not logged). */
        int (*retrieve)(Manager *m, char **ret_buf, size_t *ret_size);
        /* The state retrieve() found is now in the state file: removes this
         * backend's own copy, so that a luod restarted in this boot finds
         * that one only.  NULL when nothing is to be removed. */
        void (*superseded)(Manager *m);
} Backend;

extern const Backend backend_luo;
extern const Backend backend_initrd;
extern const Backend backend_file;

/* In the order Update tries them; NULL-terminated. */
extern const Backend *const backends[];

/* Removes the initrd backend's state where this boot's initramfs left it:
 * <runtime_dir>/state.luod-state, and with the default runtime dir
 * /luod/state.luod-state. */
void backend_initrd_remove_state(const Manager *m);

/* Parses a comma-separated list of backend names into BACKEND_* bits.
 * Returns 0, or -EINVAL for an empty list or an unknown name. */
int backends_from_string(const char *s, unsigned *ret);
