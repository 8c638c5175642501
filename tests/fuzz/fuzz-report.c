/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading report.json back: each input is the file's bytes.  As luod's
 * GetReport does, json-c loads it (json_object_from_fd(), what
 * json_object_from_file() runs) and turns it into the text of the reply,
 * which `luoctl report` prints with report_text_print()
 * (luod/shared/report-text.c); that text is JSON and must print when it is
 * an object.  The input also goes to report_text_print() directly (a reply
 * of any content). */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "report-text.h"

/* What GetReport replies for a report.json with these bytes, or NULL when
 * it refuses the file ("unreadable or not JSON"). */
static char *get_report(const uint8_t *data, size_t size, bool *ret_object) {
        static int fd = -1;
        json_object *o;
        char *text;

        if (fd < 0)
                fd = memfd_create("report.json", MFD_CLOEXEC);
        if (fd < 0 || ftruncate(fd, 0) < 0 || (size > 0 && pwrite(fd, data, size, 0) != (ssize_t) size) ||
            lseek(fd, 0, SEEK_SET) < 0)
                abort();
        o = json_object_from_fd(fd);
        if (!o)
                return NULL;
        text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED));
        if (!text)
                abort();
        *ret_object = json_object_is_type(o, json_type_object);
        json_object_put(o);
        return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        bool object = false;
        char *text;
        int r;

        text = get_report(data, size, &object);
        if (text) {
                r = report_text_print(fuzz_devnull(), text);
                FUZZ_ASSERT(r == (object ? 0 : -EBADMSG), "GetReport's text (an %s) printed with %d: %s",
                            object ? "object" : "other value", r, text);
                free(text);
        }

        /* D-Bus strings end at their first NUL. */
        text = fuzz_strndup(data, size);
        r = report_text_print(fuzz_devnull(), text);
        FUZZ_ASSERT(r == 0 || r == -EBADMSG, "report_text_print() returned %d", r);
        free(text);
        return 0;
}
