/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "inventory.h"

void pf_record_done(PfRecord *pf) {
        for (size_t i = 0; i < pf->n_vfs; i++) {
                free(pf->vfs[i].driver);
                free(pf->vfs[i].driver_override);
        }
        free(pf->vfs);
        free(pf->identity);
        free(pf->driver);
        free(pf->netdev);
        *pf = (PfRecord) {};
}

void luod_state_free(LuodState *s) {
        free(s->old_kernel_release);
        for (size_t i = 0; i < s->n_timestamps; i++)
                free(s->timestamps[i].name);
        free(s->timestamps);
        for (size_t i = 0; i < s->n_pfs; i++)
                pf_record_done(&s->pfs[i]);
        free(s->pfs);
        for (size_t i = 0; i < s->n_assignments; i++)
                vf_assignment_done(&s->assignments[i]);
        free(s->assignments);
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

void vf_assignment_done(VfAssignment *a) {
        free(a->consumer);
        free(a->guest);
        free(a->pf_identity);
        *a = (VfAssignment) {};
}

int luod_state_add_assignment(LuodState *s, const char *consumer, const char *guest,
                              const char *pf_identity, uint32_t vf_index) {
        VfAssignment a = {}, *n;

        if (!consumer || !*consumer || !guest || !*guest || !pf_identity || !*pf_identity || vf_index > 65535)
                return -EINVAL;
        for (size_t i = 0; i < s->n_assignments; i++)
                if (s->assignments[i].vf_index == vf_index && strcmp(s->assignments[i].pf_identity, pf_identity) == 0)
                        return -EEXIST;
        a.consumer = strdup(consumer);
        a.guest = strdup(guest);
        a.pf_identity = strdup(pf_identity);
        a.vf_index = vf_index;
        a.consumer_uid = VF_ASSIGNMENT_NO_UID;
        n = a.consumer && a.guest && a.pf_identity ?
                reallocarray(s->assignments, s->n_assignments + 1, sizeof(VfAssignment)) : NULL;
        if (!n) {
                vf_assignment_done(&a);
                return -ENOMEM;
        }
        n[s->n_assignments++] = a;
        s->assignments = n;
        return 0;
}

int luod_state_remove_assignment(LuodState *s, const char *guest, const char *pf_identity, uint32_t vf_index) {
        for (size_t i = 0; i < s->n_assignments; i++) {
                VfAssignment *a = &s->assignments[i];

                if (a->vf_index != vf_index || strcmp(a->pf_identity, pf_identity) != 0 ||
                    (guest && strcmp(a->guest, guest) != 0))
                        continue;
                vf_assignment_done(a);
                memmove(a, a + 1, (s->n_assignments - i - 1) * sizeof(*a));
                s->n_assignments--;
                return 0;
        }
        return -ENOENT;
}
