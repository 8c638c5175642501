/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* luod_state_parse() (luod/shared/state.c) on arbitrary bytes, and the
 * round trip: whatever parses must serialize, and parsing what was
 * serialized must give a state that serializes to the same bytes again.
 *
 * The header's length and sha256 would stop almost every mutation of a
 * body, so each input is parsed twice: as it is (the header line and its
 * checks), and with everything after its first newline (the whole input
 * when there is none) as the body under a header made to match it. */
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "state.h"

static void check_error(int r, const char *error) {
        FUZZ_ASSERT(r == -EBADMSG || r == -EPROTONOSUPPORT || r == -EFBIG, "unexpected error %d", r);
        /* Refusals say why (malloc does not fail here). */
        FUZZ_ASSERT(r == -EFBIG || (error && *error), "error %d without a message", r);
}

static void round_trip(const LuodState *s) {
        _cleanup_free_ char *buf = NULL, *buf2 = NULL, *error = NULL;
        _cleanup_luod_state_ LuodState s2 = {};
        size_t n, n2;
        int r;

        r = luod_state_serialize(s, &buf, &n);
        FUZZ_ASSERT(r == 0, "a parsed state does not serialize: %d", r);
        r = luod_state_parse(buf, n, &s2, &error);
        FUZZ_ASSERT(r == 0, "a serialized state does not parse: %d %s\n%.*s", r, error ?: "", (int) n, buf);
        r = luod_state_serialize(&s2, &buf2, &n2);
        FUZZ_ASSERT(r == 0, "a re-parsed state does not serialize: %d", r);
        FUZZ_ASSERT(n == n2 && memcmp(buf, buf2, n) == 0,
                    "serialize -> parse -> serialize changed the bytes:\n%.*s\n---\n%.*s",
                    (int) n, buf, (int) n2, buf2);
}

static void parse_one(const char *p, size_t size) {
        _cleanup_luod_state_ LuodState s = {};
        _cleanup_free_ char *error = NULL;
        int r;

        r = luod_state_parse(p, size, &s, &error);
        if (r < 0) {
                check_error(r, error);
                return;
        }
        FUZZ_ASSERT(!error, "success with an error message: %s", error);
        round_trip(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *nl = memchr(data, '\n', size);
        const uint8_t *body = nl ? (const uint8_t *) nl + 1 : data;
        size_t body_size = size - (size_t) (body - data), header_len;
        uint8_t md[EVP_MAX_MD_SIZE];
        char header[160], hex[65];
        unsigned md_len;
        char *p;

        p = fuzz_guarded_copy(data, size);
        if (!p)
                return 0;
        parse_one(p, size);
        fuzz_guarded_free(p, size);

        if (EVP_Digest(body, body_size, md, &md_len, EVP_sha256(), NULL) != 1 || md_len != 32)
                abort();
        for (unsigned i = 0; i < 32; i++)
                snprintf(hex + 2 * i, 3, "%02x", md[i]);
        header_len = (size_t) snprintf(header, sizeof(header),
                                       "{\"format\":\"" LUOD_STATE_FORMAT "\",\"major\":%d,\"minor\":%d,"
                                       "\"length\":%zu,\"sha256\":\"%s\"}\n",
                                       LUOD_STATE_MAJOR, LUOD_STATE_MINOR, body_size, hex);
        char *whole = malloc(header_len + body_size);
        if (!whole)
                return 0;
        memcpy(whole, header, header_len);
        if (body_size > 0)
                memcpy(whole + header_len, body, body_size);
        p = fuzz_guarded_copy(whole, header_len + body_size);
        free(whole);
        if (!p)
                return 0;
        parse_one(p, header_len + body_size);
        fuzz_guarded_free(p, header_len + body_size);
        return 0;
}
