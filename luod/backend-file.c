/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The file backend: <state_dir>/state.luod-state, written durably (fsync,
 * rename, directory fsync). */
#include "backend.h"
#include "preserve.h"

static const char *file_unusable(const Manager *m, const char *initrd, uint64_t flags) {
        (void) m;
        (void) initrd;
        (void) flags;
        return NULL;
}

static int file_persist(Manager *m, const char *update_id, const char *initrd, const void *buf, size_t size,
                        char **ret_load_initrd) {
        (void) update_id;
        (void) initrd;
        *ret_load_initrd = NULL;
        return file_preserve(m->state_dir, buf, size);
}

static void file_unpersist(Manager *m, const char *load_initrd) {
        (void) load_initrd;
        (void) file_remove(m->state_dir);
}

static int file_retrieve_state(Manager *m, char **ret_buf, size_t *ret_size) {
        return file_retrieve(m->state_dir, ret_buf, ret_size);
}

const Backend backend_file = {
        .name = "file",
        .bit = BACKEND_FILE,
        .unusable = file_unusable,
        .persist = file_persist,
        .unpersist = file_unpersist,
        .retrieve = file_retrieve_state,
};
