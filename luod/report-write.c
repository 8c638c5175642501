/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The report's files: report.json and reports/<update_id>.json (the JSON
 * of report.c), and the metrics file (metrics.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "events.h"
#include "fs-util.h"
#include "log.h"
#include "macro.h"
#include "metrics.h"
#include "report.h"
#include "report-write.h"

/* Takes the guests as they are now and the device events' figures into
 * m->report; the events' figures stay as they were when they cannot be
 * read. */
static int take_guests_and_events(Manager *m) {
        _cleanup_(events_stats_done) EventsStats s = {};
        int r;

        r = report_set_guests(m->report, m->guests, m->n_guests);
        if (r < 0)
                return r;
        if (m->events && events_stats(m, &s) >= 0)
                (void) report_set_events(m->report, &s);
        return 0;
}

/* text to <state_dir>/reports/<update_id>.json and <state_dir>/report.json. */
static int write_report_files(const char *state_dir, const char *update_id, const char *text, size_t len) {
        _cleanup_close_ int dir_fd = -EBADF, reports_fd = -EBADF;
        char name[LUOD_UUID_STRING_MAX + 8];
        int r;

        (void) mkdir(state_dir, 0700);
        dir_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                return log_error_errno(-errno, "Failed to open %s: %m", state_dir);
        /* A new reports/ is made durable too, not only the files in it. */
        if (mkdirat(dir_fd, "reports", 0755) >= 0)
                (void) fsync_directory_at(dir_fd, ".");
        reports_fd = openat(dir_fd, "reports", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (reports_fd < 0)
                return log_error_errno(-errno, "Failed to open %s/reports: %m", state_dir);
        if (snprintf(name, sizeof(name), "%s.json", update_id) >= (int) sizeof(name))
                return log_error_errno(-ENAMETOOLONG, "Update id '%.40s...' is not a UUID: %m", update_id);
        r = write_file_atomic_at(reports_fd, name, text, len, 0644);
        if (r < 0)
                return log_error_errno(r, "Failed to write %s/reports/%s: %m", state_dir, name);
        r = write_file_atomic_at(dir_fd, "report.json", text, len, 0644);
        if (r < 0)
                return log_error_errno(r, "Failed to write %s/report.json: %m", state_dir);
        return 0;
}

int report_write(Manager *m) {
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        if (!m->report)
                return -ENODATA;
        r = take_guests_and_events(m);
        if (r >= 0)
                r = report_format(m->report, &text, &len);
        if (r < 0)
                return log_error_errno(r, "Failed to format the report: %m");
        r = write_report_files(m->state_dir, m->report->update_id, text, len);
        if (r < 0)
                return r;
        /* For fleet monitoring: the same report as node_exporter metrics.
         * A failure here leaves the report written. */
        if (m->metrics_file) {
                r = metrics_write_file(m->metrics_file, m->report);
                if (r < 0)
                        log_warning_errno(r, "Failed to write the metrics file %s: %m", m->metrics_file);
        }
        return 0;
}
