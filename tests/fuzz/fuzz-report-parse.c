/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report.json read back by luod (luod/report.c): each input is the file's
 * bytes.
 *  - report_parse(), the typed report: a refusal is -EBADMSG with a
 *    message; what it accepts formats (report_format()) as strict JSON in
 *    UTF-8, which reads back into a report that formats to the same bytes.
 *  - report_read_file(), what GetReport serves of an earlier luod's file: a
 *    refusal is -EBADMSG or -EFBIG with a message; what it serves is
 *    strict JSON (what the bus carries and `luoctl report --json` prints),
 *    and prints with report_text_print() when it is an object. */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "json-util.h"
#include "macro.h"
#include "report.h"
#include "report-text.h"

static bool finite_numbers(json_object *o) {
        switch (json_object_get_type(o)) {
        case json_type_double:
                return isfinite(json_object_get_double(o));
        case json_type_array:
                for (size_t i = 0; i < json_object_array_length(o); i++)
                        if (!finite_numbers(json_object_array_get_idx(o, i)))
                                return false;
                return true;
        case json_type_object: {
                json_object_object_foreach(o, key, value) {
                        (void) key;
                        if (!finite_numbers(value))
                                return false;
                }
                return true;
        }
        default:
                return true;
        }
}

/* Whether text is one strict JSON value (UTF-8, finite numbers) and
 * nothing else; *ret_object: an object. */
static bool strict_json(const char *text, size_t len, bool *ret_object) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_free_ char *line = NULL;
        enum json_tokener_error e;
        size_t end;

        /* With a newline after it, as a file has: json-c cannot tell
         * that a number at the very end of its input is complete. */
        if (asprintf(&line, "%.*s\n", (int) len, text) < 0 || json_parse_strict(line, len + 1, &o, &e, &end) < 0)
                abort();
        if (!o || e != json_tokener_success || strspn(line + end, " \t\r\n") != len + 1 - end ||
            !finite_numbers(o))
                return false;
        *ret_object = json_object_is_type(o, json_type_object);
        return true;
}

static void check_parse(const char *input) {
        _cleanup_(report_freep) Report *r = NULL, *again = NULL;
        _cleanup_free_ char *error = NULL, *text = NULL, *text2 = NULL;
        size_t len = 0;
        bool object;
        int k;

        k = report_parse(input, &r, &error);
        FUZZ_ASSERT(k == 0 || (k == -EBADMSG && error && !r), "report_parse() = %d (%s)", k, error ?: "no message");
        if (k < 0)
                return;
        FUZZ_ASSERT(report_format(r, &text, &len) == 0, "a report read back does not format");
        FUZZ_ASSERT(strict_json(text, len, &object) && object, "a report read back formats as no strict JSON: %s",
                    text);
        free(error);
        error = NULL;
        k = report_parse(text, &again, &error);
        FUZZ_ASSERT(k == 0, "the report as formatted is refused (%s): %s", error ?: "no message", text);
        FUZZ_ASSERT(report_format(again, &text2, NULL) == 0 && strcmp(text, text2) == 0,
                    "formatted, read back and formatted again, a report changes:\n%s\n---\n%s", text, text2);
}

static void check_read_file(const uint8_t *data, size_t size) {
        static int fd = -1;
        static char path[64];
        _cleanup_free_ char *text = NULL, *error = NULL;
        bool object = false;
        int k;

        if (fd < 0) {
                fd = memfd_create("report.json", MFD_CLOEXEC);
                if (fd < 0)
                        abort();
                snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        }
        if (ftruncate(fd, 0) < 0 || (size > 0 && pwrite(fd, data, size, 0) != (ssize_t) size))
                abort();
        k = report_read_file(path, &text, &error);
        FUZZ_ASSERT(k == 0 || ((k == -EBADMSG || k == -EFBIG) && error), "report_read_file() = %d (%s)", k,
                    error ?: "no message");
        if (k < 0)
                return;
        FUZZ_ASSERT(strict_json(text, strlen(text), &object), "GetReport's text is no strict JSON: %s", text);
        k = report_text_print(fuzz_devnull(), text);
        FUZZ_ASSERT(k == (object ? 0 : -EBADMSG), "GetReport's text printed with %d", k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = fuzz_strndup(data, size);

        check_parse(text);
        free(text);
        check_read_file(data, size);
        return 0;
}
