/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The initrd backend: the state appended as a cpio archive to a copy of the
 * initrd in the runtime directory, loaded with the next kernel. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
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

void backend_initrd_remove_state(const Manager *m) {
        char paths[2][PATH_MAX];
        size_t n = initrd_state_paths(m, paths);

        for (size_t i = 0; i < n; i++)
                (void) unlink(paths[i]);
}

static int initrd_retrieve(Manager *m, char **ret_buf, size_t *ret_size) {
        char paths[2][PATH_MAX];
        size_t n = initrd_state_paths(m, paths);

        /* A copy that cannot be read is passed over like a missing one: the
         * state file is tried next. */
        for (size_t i = 0; i < n; i++)
                if (initrd_find_state(paths[i], ret_buf, ret_size) >= 0)
                        return 0;
        return -ENOENT;
}

static void initrd_superseded(Manager *m) {
        backend_initrd_remove_state(m);
}

const Backend backend_initrd = {
        .name = "initrd",
        .bit = BACKEND_INITRD,
        .persist_before_load = true,
        .unusable = initrd_unusable,
        .persist = initrd_persist,
        .unpersist = initrd_unpersist,
        .retrieve = initrd_retrieve,
        .superseded = initrd_superseded,
};
