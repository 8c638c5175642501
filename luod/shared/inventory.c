/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
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

bool luod_state_find_duplicate_identity(const LuodState *s, size_t *ret_a, size_t *ret_b) {
        for (size_t a = 0; a < s->n_pfs; a++) {
                if (!s->pfs[a].identity)
                        continue;
                for (size_t b = a + 1; b < s->n_pfs; b++)
                        if (s->pfs[b].identity && strcmp(s->pfs[a].identity, s->pfs[b].identity) == 0) {
                                *ret_a = a;
                                *ret_b = b;
                                return true;
                        }
        }
        return false;
}

/* "DD.F": two lowercase hex digits, a dot, a function digit 0-7. */
static bool is_function_part(const char *p, size_t len) {
        return len == 4 && strchr("0123456789abcdef", p[0]) && strchr("0123456789abcdef", p[1]) &&
                p[0] && p[1] && p[2] == '.' && p[3] >= '0' && p[3] <= '7';
}

char *pf_identity_without_function(const char *identity) {
        const char *last = strrchr(identity, '/'), *prev;
        char *r;

        errno = 0;
        if (!last)
                return NULL;
        if (strncmp(identity, "dsn:", 4) == 0)
                return is_function_part(last + 1, strlen(last + 1)) ? strndup(identity, last - identity) : NULL;
        if (strncmp(identity, "path:", 5) != 0)
                return NULL;
        for (prev = last; prev > identity && prev[-1] != '/'; prev--)
                ;
        if (prev == identity || !is_function_part(prev, last - prev))
                return NULL;
        /* path:<parent>/ + <ids> */
        if (asprintf(&r, "%.*s%s", (int) (prev - identity), identity, last + 1) < 0)
                return NULL;
        return r;
}

/* Pass 2 of luod_state_match_pfs(): an old-form identity (no function part)
 * against the devices' identities without theirs. */
static ssize_t match_old_form(const PfRecord *want, const LuodState *now, char **stripped, const bool *taken) {
        ssize_t found = -ENODEV;

        for (size_t j = 0; j < now->n_pfs; j++) {
                if (taken[j] || !stripped[j] || strcmp(stripped[j], want->identity) != 0)
                        continue;
                if (pci_bdf_compare(&now->pfs[j].bdf, &want->bdf) == 0)
                        return (ssize_t) j;
                found = found == -ENODEV ? (ssize_t) j : -ENOTUNIQ;
        }
        return found;
}

int luod_state_match_pfs(const LuodState *want, const LuodState *now, ssize_t *ret) {
        _cleanup_free_ bool *taken = calloc(now->n_pfs ?: 1, sizeof(bool));
        _cleanup_free_ char **stripped = calloc(now->n_pfs ?: 1, sizeof(char *));
        int r = 0;

        if (!taken || !stripped)
                return -ENOMEM;
        for (size_t j = 0; j < now->n_pfs; j++)
                if (now->pfs[j].identity) {
                        stripped[j] = pf_identity_without_function(now->pfs[j].identity);
                        if (!stripped[j] && errno == ENOMEM)
                                r = -ENOMEM;
                }
        for (size_t i = 0; i < want->n_pfs; i++)
                ret[i] = -ENODEV;

        for (size_t i = 0; r >= 0 && i < want->n_pfs; i++)
                for (size_t j = 0; want->pfs[i].identity && j < now->n_pfs; j++)
                        if (!taken[j] && now->pfs[j].identity &&
                            strcmp(now->pfs[j].identity, want->pfs[i].identity) == 0) {
                                ret[i] = (ssize_t) j;
                                taken[j] = true;
                                break;
                        }
        for (size_t i = 0; r >= 0 && i < want->n_pfs; i++) {
                const PfRecord *w = &want->pfs[i];
                _cleanup_free_ char *own = NULL;

                if (ret[i] >= 0 || !w->identity)
                        continue;
                own = pf_identity_without_function(w->identity);
                if (own || errno == ENOMEM) {
                        if (!own)
                                r = -ENOMEM;
                        continue;       /* a new-form identity matches exactly or not at all */
                }
                ret[i] = match_old_form(w, now, stripped, taken);
                if (ret[i] >= 0)
                        taken[ret[i]] = true;
        }
        /* The BDF is only a hint: it must also be the same kind of device,
         * and a serial number that is not there any more is not a hint. */
        for (size_t i = 0; r >= 0 && i < want->n_pfs; i++) {
                const PfRecord *w = &want->pfs[i];

                if (ret[i] != -ENODEV || (w->identity && strncmp(w->identity, "dsn:", 4) == 0))
                        continue;
                for (size_t j = 0; j < now->n_pfs; j++)
                        if (!taken[j] && pci_bdf_compare(&now->pfs[j].bdf, &w->bdf) == 0 &&
                            now->pfs[j].vendor == w->vendor && now->pfs[j].device == w->device) {
                                ret[i] = (ssize_t) j;
                                taken[j] = true;
                        }
        }
        for (size_t j = 0; j < now->n_pfs; j++)
                free(stripped[j]);
        return r;
}

static bool names_a_pf(const LuodState *s, const char *identity) {
        for (size_t j = 0; j < s->n_pfs; j++)
                if (s->pfs[j].identity && strcmp(s->pfs[j].identity, identity) == 0)
                        return true;
        return false;
}

int luod_state_upgrade_assignments(LuodState *s) {
        int n = 0;

        for (size_t i = 0; i < s->n_assignments; i++) {
                VfAssignment *a = &s->assignments[i];
                const PfRecord *fit = NULL;
                size_t fits = 0;

                if (names_a_pf(s, a->pf_identity))
                        continue;
                for (size_t j = 0; j < s->n_pfs; j++) {
                        _cleanup_free_ char *old = s->pfs[j].identity ?
                                pf_identity_without_function(s->pfs[j].identity) : NULL;

                        if (!old && errno == ENOMEM)
                                return -ENOMEM;
                        if (old && strcmp(old, a->pf_identity) == 0) {
                                fit = &s->pfs[j];
                                fits++;
                        }
                }
                if (fits != 1)
                        continue;
                char *id = strdup(fit->identity);
                if (!id)
                        return -ENOMEM;
                free(a->pf_identity);
                a->pf_identity = id;
                n++;
        }
        return n;
}
