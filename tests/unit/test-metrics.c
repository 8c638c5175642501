/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* metrics_format() and metrics_write_file() (luod/metrics.c): a report as
 * luod writes it, read into the typed report (report_parse()), formatted,
 * then parsed back as Prometheus text: each sample's value and labels, the
 * escaping, every sample under its TYPE line; the file written atomically
 * with that content. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "metrics.h"
#include "report.h"
#include "tap.h"

/* A report as report_build() and consumers.c write it: two PFs (one
 * failed, the other with an identity that needs escaping), two guests
 * (one with a downtime, one not measured yet), attempt 2, resumed. */
static const char report_json[] =
        "{ \"update_id\": \"8f0c6d1e-4b7a-4c55-9a51-3e2b1f0d9c77\", \"old_kernel\": \"7.3.4-luod\","
        "  \"new_kernel\": \"7.3.4+deb13-amd64\", \"backend\": \"initrd\", \"tsc_khz\": 2000000,"
        "  \"approximate\": true, \"attempt\": 2, \"resumed\": true,"
        "  \"phases\": [ { \"name\": \"persist-and-kexec\", \"ms\": 812.5 },"
        "                { \"name\": \"total-blackout\", \"ms\": 1234.5 } ],"
        "  \"pfs\": [ { \"bdf\": \"0000:01:00.0\", \"identity\": \"dsn:\\\"x\\\"\\\\y\", \"numvfs\": 8,"
        "               \"result\": \"ok\", \"error\": null, \"total_ms\": 420.25 },"
        "             { \"bdf\": \"0000:02:00.0\", \"identity\": \"path:pci0000:00/02.0\", \"numvfs\": 3,"
        "               \"result\": \"failed\", \"error\": \"waiting for its driver\", \"total_ms\": 3000 } ],"
        "  \"guests\": [ { \"consumer\": \"hv1\", \"guest\": \"vm-a\", \"vfs\": 2, \"result\": \"running\","
        "                  \"error\": null, \"downtime_ms\": 2500.0 },"
        "                { \"consumer\": \"hv1\", \"guest\": \"vm-b\", \"vfs\": 1, \"result\": \"failed\","
        "                  \"error\": \"PF 0000:02:00.0\", \"downtime_ms\": null } ] }";

/* The value of the sample whose line starts with "name{labels} " (or
 * "name "), or -1 when there is none; *count the number of such lines. */
static double value_of(const char *text, const char *series, int *count) {
        double v = -1;
        size_t n = strlen(series);

        *count = 0;
        for (const char *l = text; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
                if (strncmp(l, series, n) == 0 && l[n] == ' ') {
                        v = strtod(l + n + 1, NULL);
                        (*count)++;
                }
        return v;
}

static bool is_one(const char *text, const char *series, double want) {
        int count;
        double v = value_of(text, series, &count);

        if (count != 1 || v != want)
                fprintf(stderr, "%s: %d lines, value %.17g (want 1 line, %.17g)\n", series, count, v, want);
        return count == 1 && v == want;
}

static int lines_starting(const char *text, const char *prefix) {
        int n = 0;

        for (const char *l = text; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
                n += strncmp(l, prefix, strlen(prefix)) == 0;
        return n;
}

/* Every sample's metric name was declared by a "# TYPE name gauge" line
 * before it, and the text ends with a newline. */
static bool every_sample_typed(const char *text) {
        char declared[64][64];
        size_t n_declared = 0;

        for (const char *l = text; *l;) {
                const char *end = strchr(l, '\n');
                size_t len;

                if (!end)
                        return false;
                if (strncmp(l, "# TYPE ", 7) == 0) {
                        len = strcspn(l + 7, " ");
                        if (n_declared < ELEMENTSOF(declared) && len < sizeof(declared[0]))
                                snprintf(declared[n_declared++], sizeof(declared[0]), "%.*s", (int) len, l + 7);
                } else if (l[0] != '#') {
                        bool found = false;
                        len = strcspn(l, "{ ");
                        for (size_t i = 0; i < n_declared; i++)
                                found |= strlen(declared[i]) == len && strncmp(declared[i], l, len) == 0;
                        if (!found) {
                                fprintf(stderr, "untyped sample: %.*s\n", (int) (end - l), l);
                                return false;
                        }
                }
                l = end + 1;
        }
        return true;
}

static void test_format(void) {
        Report *report = NULL, empty = {};
        char *text = NULL;
        size_t len = 0;

        CHECK(report_parse(report_json, &report, NULL) == 0);
        CHECK(metrics_format(report, &text, &len) == 0);
        CHECK(text && strlen(text) == len);
        if (!text)
                return;
        CHECK(is_one(text, "luod_update_info{update_id=\"8f0c6d1e-4b7a-4c55-9a51-3e2b1f0d9c77\",old_kernel=\"7.3.4-luod\","
                     "new_kernel=\"7.3.4+deb13-amd64\",backend=\"initrd\"}", 1));
        CHECK(is_one(text, "luod_update_approximate", 1));
        CHECK(is_one(text, "luod_update_attempt", 2));
        CHECK(is_one(text, "luod_update_resumed", 1));
        /* ms -> s */
        CHECK(is_one(text, "luod_update_phase_seconds{phase=\"total-blackout\"}", 1.2345));
        CHECK(is_one(text, "luod_update_phase_seconds{phase=\"persist-and-kexec\"}", 0.8125));
        CHECK(is_one(text, "luod_update_pfs", 2));
        CHECK(is_one(text, "luod_update_pfs_failed", 1));
        /* The identity dsn:"x"\y with its quotes and backslash escaped. */
        CHECK(is_one(text, "luod_update_pf_ok{bdf=\"0000:01:00.0\",identity=\"dsn:\\\"x\\\"\\\\y\"}", 1));
        CHECK(is_one(text, "luod_update_pf_ok{bdf=\"0000:02:00.0\",identity=\"path:pci0000:00/02.0\"}", 0));
        CHECK(is_one(text, "luod_update_pf_vfs{bdf=\"0000:01:00.0\",identity=\"dsn:\\\"x\\\"\\\\y\"}", 8));
        CHECK(is_one(text, "luod_update_pf_restore_seconds{bdf=\"0000:01:00.0\",identity=\"dsn:\\\"x\\\"\\\\y\"}", 0.42025));
        CHECK(is_one(text, "luod_update_pf_restore_seconds{bdf=\"0000:02:00.0\",identity=\"path:pci0000:00/02.0\"}", 3));
        CHECK(is_one(text, "luod_update_guests", 2));
        CHECK(is_one(text, "luod_update_guest_ok{consumer=\"hv1\",guest=\"vm-a\"}", 1));
        CHECK(is_one(text, "luod_update_guest_ok{consumer=\"hv1\",guest=\"vm-b\"}", 0));
        /* Only the guest whose downtime was measured has a sample. */
        CHECK(is_one(text, "luod_update_guest_downtime_seconds{consumer=\"hv1\",guest=\"vm-a\"}", 2.5));
        CHECK(lines_starting(text, "luod_update_guest_downtime_seconds") == 1);
        CHECK(lines_starting(text, "# TYPE ") == lines_starting(text, "# HELP "));
        CHECK(every_sample_typed(text));
        free(text);
        report = report_free(report);

        /* A report without an update id, or not an object, is refused. */
        CHECK(report_parse("{ \"backend\": \"luo\" }", &report, NULL) == -EBADMSG && !report);
        CHECK(report_parse("[ 1 ]", &report, NULL) == -EBADMSG && !report);
        text = NULL;
        CHECK(metrics_format(&empty, &text, &len) == -EINVAL && !text);
        CHECK(metrics_format(NULL, &text, &len) == -EINVAL && !text);

        /* A report of a restore that found no PF and no consumer: the
         * counts are 0, no per-PF or per-guest sample. */
        CHECK(report_parse("{ \"update_id\": \"u\", \"backend\": \"file\", \"pfs\": [], \"phases\": [] }",
                           &report, NULL) == 0);
        CHECK(metrics_format(report, &text, &len) == 0);
        if (text) {
                CHECK(is_one(text, "luod_update_pfs", 0));
                CHECK(is_one(text, "luod_update_guests", 0));
                CHECK(lines_starting(text, "luod_update_pf_ok") == 0);
                CHECK(every_sample_typed(text));
        }
        free(text);
        report_free(report);
}

static void test_write(void) {
        char dir[] = "/tmp/test-metrics-XXXXXX", path[64], missing[80];
        Report *report = NULL;
        char *want = NULL, buf[8192];
        size_t len = 0;
        struct stat st;
        ssize_t n;
        int fd;

        CHECK(report_parse(report_json, &report, NULL) == 0);
        CHECK(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/luod.prom", dir);
        CHECK(metrics_format(report, &want, &len) == 0);
        CHECK(metrics_write_file(path, report) == 0);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
        CHECK(n == (ssize_t) len && want && memcmp(buf, want, len) == 0);
        CHECK(fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & 07777) == 0644);
        if (fd >= 0)
                close(fd);
        /* Written again: replaced, and nothing else in the directory (no
         * temporary file left for the collector to read). */
        CHECK(metrics_write_file(path, report) == 0);
        DIR *d = opendir(dir);
        int entries = 0;
        for (struct dirent *e; d && (e = readdir(d));)
                entries += e->d_name[0] != '.';
        if (d)
                closedir(d);
        CHECK(entries == 1);
        snprintf(missing, sizeof(missing), "%s/nonexistent/luod.prom", dir);
        CHECK(metrics_write_file(missing, report) == -ENOENT);
        snprintf(missing, sizeof(missing), "%s/", dir);
        CHECK(metrics_write_file(missing, report) == -EISDIR);
        unlink(path);
        rmdir(dir);
        free(want);
        report_free(report);
}

int main(void) {
        test_format();
        test_write();
        return tap_failures;
}
