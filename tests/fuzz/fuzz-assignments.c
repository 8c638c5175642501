/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* <state_dir>/assignments.json: assignments_parse()
 * (luod/shared/assignments.c) on arbitrary bytes, and the round trip:
 * whatever parses must serialize, parse back to the same assignments, and
 * serialize to the same bytes again; and what the file accepts, a
 * preserved state (luod_state_serialize()) carries unchanged. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "assignments.h"
#include "fuzz.h"

static void same_assignments(const LuodState *a, const LuodState *b) {
        FUZZ_ASSERT(a->n_assignments == b->n_assignments, "%zu assignments, then %zu", a->n_assignments,
                    b->n_assignments);
        for (size_t i = 0; i < a->n_assignments; i++) {
                const VfAssignment *x = &a->assignments[i], *y = &b->assignments[i];

                FUZZ_ASSERT(strcmp(x->consumer, y->consumer) == 0 && strcmp(x->guest, y->guest) == 0 &&
                            strcmp(x->pf_identity, y->pf_identity) == 0 && x->vf_index == y->vf_index &&
                            x->consumer_uid == y->consumer_uid,
                            "assignments[%zu] changed in the round trip", i);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_luod_state_ LuodState s = {}, s2 = {}, s3 = {};
        _cleanup_free_ char *error = NULL, *error2 = NULL, *buf = NULL, *buf2 = NULL;
        size_t n, n2;
        char *p;
        int r;

        p = fuzz_guarded_copy(data, size);
        if (!p)
                return 0;
        r = assignments_parse(p, size, &s, &error);
        fuzz_guarded_free(p, size);
        if (r < 0) {
                FUZZ_ASSERT(r == -EBADMSG || r == -EFBIG, "unexpected error %d", r);
                FUZZ_ASSERT(r != -EBADMSG || (error && *error), "-EBADMSG without a message");
                FUZZ_ASSERT(s.n_assignments == 0 && !s.assignments, "a failed parse touched ret");
                return 0;
        }
        FUZZ_ASSERT(!error, "success with an error message: %s", error);

        r = assignments_serialize(&s, &buf, &n);
        FUZZ_ASSERT(r == 0, "parsed assignments do not serialize: %d", r);
        FUZZ_ASSERT(strlen(buf) == n, "serialized size %zu, string %zu", n, strlen(buf));
        r = assignments_parse(buf, n, &s2, &error2);
        FUZZ_ASSERT(r == 0, "serialized assignments do not parse: %d %s\n%s", r, error2 ?: "", buf);
        same_assignments(&s, &s2);
        r = assignments_serialize(&s2, &buf2, &n2);
        FUZZ_ASSERT(r == 0 && n == n2 && memcmp(buf, buf2, n) == 0,
                    "serialize -> parse -> serialize changed the bytes:\n%s\n---\n%s", buf, buf2 ?: "");

        /* The file keeps the rules of the preserved state's assignments:
         * what it accepts a state carries across a kexec, unchanged. */
        _cleanup_free_ char *sbuf = NULL, *serror = NULL;
        char release[] = "fuzz";
        LuodState st = {
                .update_id = "00000000-0000-4000-8000-000000000000",
                .old_kernel_release = release,
                .old_boot_id = "00000000-0000-4000-8000-000000000001",
                .assignments = s.assignments,
                .n_assignments = s.n_assignments,
        };
        r = luod_state_serialize(&st, &sbuf, &n);
        FUZZ_ASSERT(r == 0, "assignments the file accepts do not go into a state: %d", r);
        r = luod_state_parse(sbuf, n, &s3, &serror);
        FUZZ_ASSERT(r == 0, "a state with the file's assignments does not parse: %d %s", r, serror ?: "");
        same_assignments(&s, &s3);
        return 0;
}
