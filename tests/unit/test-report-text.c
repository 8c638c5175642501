/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report_text_print() (luod/shared/report-text.c), what `luoctl report`
 * prints, on the report.json the VM test bed's update scenario wrote
 * (tests/fuzz/corpus/report/bed-update.json; argv[1] is the source root)
 * and on odd ones. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report-text.h"
#include "tap.h"

static char *print(const char *text, int *ret) {
        char *out = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&out, &n);

        if (!f)
                abort();
        *ret = report_text_print(f, text);
        fclose(f);
        return out;
}

static char *slurp(const char *path) {
        FILE *f = fopen(path, "re");
        char *buf = NULL;
        size_t n = 0;

        if (!f || getdelim(&buf, &n, '\0', f) < 0)
                abort();
        fclose(f);
        return buf;
}

#define CHECK_LINE(out, line)                                                           \
        do {                                                                            \
                if (!strstr(out, line "\n"))                                            \
                        fprintf(stderr, "no line \"%s\" in:\n%s", line, (out) ?: "(null)"); \
                CHECK(strstr(out, line "\n"));                                          \
        } while (0)

int main(int argc, char **argv) {
        char *path, *text, *out;
        int r;

        if (argc < 2 || asprintf(&path, "%s/tests/fuzz/corpus/report/bed-update.json", argv[1]) < 0)
                return 2;
        text = slurp(path);
        out = print(text, &r);
        CHECK(r == 0);
        static const char first[] = "update a9a9be8c-d8c6-4a29-87df-f49a3f686eba: 7.3.4-luod+ -> 7.3.4-luod+ (state via luo)\n"
                                     "  attempt 1\n";
        CHECK(strncmp(out, first, sizeof(first) - 1) == 0);
        /* A retried restore says so. */
        free(out);
        out = print("{\"attempt\": 2, \"retry\": true}", &r);
        CHECK(r == 0);
        CHECK_LINE(out, "  attempt 2: luoctl retry");
        free(out);
        out = print(text, &r);
        CHECK_LINE(out, "  total-blackout                  18474.3 ms");
        CHECK_LINE(out, "  0000:02:00.0  8      ok           15.0    2833.6       0.0      31.1    3109.6  ");
        CHECK_LINE(out, "  hv1/vm-b                       1    ok                  -  ");
        CHECK_LINE(out, "  hv3/vm-d, ms since its blackout start: blackout-start 0.0, persist-and-kexec 1.3, "
                        "kernel-start 3104.0, luod-start 14779.0, pfs-enabled 18214.2, vfs-bound 18475.1, "
                        "events-replayed 25411.5, running 37344.8");
        CHECK_LINE(out, "  device events: source udev, 122 held and released in order, 0 of other devices, "
                        "0 dropped, 0 late");
        free(out);
        free(text);
        free(path);

        /* Missing, null and mistyped members print as "-" or 0. */
        out = print("{\"phases\": 5, \"pfs\": [ {\"bdf\": null, \"result\": \"failed\", \"error\": \"PF gone\"}, 7 ],"
                    " \"guests\": [ {\"consumer\": \"hv1\", \"phases\": [ {\"name\": null, \"at_ms\": 1.5},"
                    " {\"name\": \"running\", \"at_ms\": \"x\"} ] } ] }", &r);
        CHECK(r == 0);
        CHECK_LINE(out, "update -: - -> - (state via -)");
        CHECK_LINE(out, "  -             -      failed        0.0       0.0       0.0       0.0       0.0  PF gone");
        CHECK_LINE(out, "  hv1/-, ms since its blackout start: - 1.5, running 0.0");
        free(out);

        /* Not a JSON object: nothing printed. */
        static const char *bad[] = { "", "[]", "5", "{\"truncated\":", "null" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                out = print(bad[i], &r);
                CHECK(r == -EBADMSG);
                CHECK(out && *out == '\0');
                free(out);
        }
        return tap_failures ? 1 : 0;
}
