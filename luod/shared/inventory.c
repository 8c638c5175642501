/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "inventory.h"

static void pf_record_done(PfRecord *pf) {
        for (size_t i = 0; i < pf->n_vfs; i++) {
                free(pf->vfs[i].driver);
                free(pf->vfs[i].driver_override);
        }
        free(pf->vfs);
        free(pf->identity);
        free(pf->driver);
        free(pf->netdev);
}

void luod_state_free(LuodState *s) {
        free(s->old_kernel_release);
        for (size_t i = 0; i < s->n_timestamps; i++)
                free(s->timestamps[i].name);
        free(s->timestamps);
        for (size_t i = 0; i < s->n_pfs; i++)
                pf_record_done(&s->pfs[i]);
        free(s->pfs);
        *s = (LuodState) {};
}

int luod_state_add_timestamp(LuodState *s, const char *name, uint64_t tsc, uint64_t realtime_ns) {
        StateTimestamp *t;
        char *n;

        if (!name || !*name)
                return -EINVAL;

        n = strdup(name);
        if (!n)
                return -ENOMEM;
        t = reallocarray(s->timestamps, s->n_timestamps + 1, sizeof(StateTimestamp));
        if (!t) {
                free(n);
                return -ENOMEM;
        }
        t[s->n_timestamps++] = (StateTimestamp) {
                .name = n,
                .tsc = tsc,
                .realtime_ns = realtime_ns,
        };
        s->timestamps = t;
        return 0;
}
