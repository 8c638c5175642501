/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The LUO backend: the state in a memfd of the session "luod" on
 * /dev/liveupdate, held by luod until kexec -e (closing the session's fd
 * unpreserves it). */
#include <errno.h>
#include <unistd.h>

#include "backend.h"
#include "preserve.h"

static const char *luo_unusable(const Manager *m, const char *initrd, uint64_t flags) {
        (void) m;
        (void) initrd;
        /* systemctl kexec stops luod before the kexec: its outgoing LUO
         * session fd closes then, and that unpreserves the state. */
        if (flags & UPDATE_VIA_SYSTEMD)
                return "luo not used with VIA_SYSTEMD: systemd stops luod before the kexec, "
                       "and closing its LUO session unpreserves the state";
        /* A kernel without LUO (a distribution's: no CONFIG_LIVEUPDATE) or
         * booted without liveupdate=on. */
        if (!luo_available())
                return "luo not available: no /dev/liveupdate (a kernel without CONFIG_LIVEUPDATE, "
                       "or booted without liveupdate=on)";
        return NULL;
}

static int luo_persist(Manager *m, const char *update_id, const char *initrd, const void *buf, size_t size,
                       char **ret_load_initrd) {
        (void) update_id;
        (void) initrd;
        *ret_load_initrd = NULL;
        return luo_preserve(buf, size, &m->luo_out_fd);
}

static void luo_unpersist(Manager *m, const char *load_initrd) {
        (void) load_initrd;
        if (m->luo_out_fd >= 0) {
                close(m->luo_out_fd);   /* unpreserves the memfd */
                m->luo_out_fd = -EBADF;
        }
}

/* The session "luod", kept open in m->luo_in_fd: FINISHed after a complete
 * restore (closing it unFINISHed ends it too, with luod). */
static int luo_retrieve_state(Manager *m, char **ret_buf, size_t *ret_size) {
        return luo_retrieve(ret_buf, ret_size, &m->luo_in_fd);
}

const Backend backend_luo = {
        .name = "luo",
        .bit = BACKEND_LUO,
        .unusable = luo_unusable,
        .persist = luo_persist,
        .unpersist = luo_unpersist,
        .retrieve = luo_retrieve_state,
};
