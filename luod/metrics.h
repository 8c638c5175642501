/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The last update's report (luoctl report --json) as node_exporter
 * textfile-collector metrics, in the Prometheus text exposition format
 * (docs/fleet-metrics.md). */
#pragma once

#include <stddef.h>

#include "types.h"

/* Formats report (report.c's typed report) as metric families:
 *   luod_update_info{update_id,old_kernel,new_kernel,backend} 1
 *   luod_update_approximate, luod_update_attempt, luod_update_resumed
 *     (those two when the attempt is known)
 *   luod_update_phase_seconds{phase}
 *   luod_update_pfs, luod_update_pfs_failed
 *   luod_update_pf_ok{bdf,identity}, luod_update_pf_vfs{bdf,identity},
 *   luod_update_pf_restore_seconds{bdf,identity}
 *   luod_update_guests, luod_update_guest_ok{consumer,guest},
 *   luod_update_guest_downtime_seconds{consumer,guest} (once measured)
 * Durations in seconds (the report's ms / 1000).  Label values escaped as
 * the format wants (\\, \", \n); a missing one is empty.  Sets *ret_text
 * (NUL-terminated, to free) and *ret_len.  Returns 0, -EINVAL if report is
 * NULL or has no update_id, or -ENOMEM. */
int metrics_format(const Report *report, char **ret_text, size_t *ret_len);

/* Writes metrics_format(report) to path, replaced atomically and durably
 * (write_file_atomic_at(): node_exporter never reads half a file).  path
 * must name a file in an existing directory.  Returns 0, or the negative
 * errno of metrics_format(), of opening path's directory, or of the write;
 * nothing is logged. */
int metrics_write_file(const char *path, const Report *report);
