/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The initrd backend: the state appended as a cpio archive to a copy of the
 * initrd in the runtime directory, loaded with the next kernel. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "preserve.h"

static const char *initrd_unusable(const Manager *m, const char *initrd, uint64_t flags) {
        (void) m;
        (void) flags;
        return *initrd ? NULL : "no initrd given";
}

static int initrd_persist(Manager *m, const char *update_id, const char *initrd, const void *buf, size_t size,
                          char **ret_load_initrd) {
        char *out;
        int r;

        if (asprintf(&out, "%s/initrd-%s", m->runtime_dir, update_id) < 0)
                return -ENOMEM;
        (void) mkdir(m->runtime_dir, 0700);
        *ret_load_initrd = out;         /* also on failure: named in the error, removed by unpersist */
        r = initrd_append_state(initrd, out, buf, size);
        return r;
}

static void initrd_unpersist(Manager *m, const char *load_initrd) {
        (void) m;
        if (load_initrd)
                (void) unlink(load_initrd);
}

const Backend backend_initrd = {
        .name = "initrd",
        .bit = BACKEND_INITRD,
        .persist_before_load = true,
        .unusable = initrd_unusable,
        .persist = initrd_persist,
        .unpersist = initrd_unpersist,
};
