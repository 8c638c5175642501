/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "types.h"

/* The one place a finished report is written: m->report, with a copy of
 * m->guests and of the device events' figures now (events_stats()) taken
 * into it, as JSON to <state_dir>/reports/<update_id>.json and
 * <state_dir>/report.json, each replaced atomically and durably (temporary
 * file, fsync, rename, directory fsync), and as metrics to m->metrics_file
 * when set (a failure there is logged and ignored).  Returns 0, -ENODATA
 * when m->report is NULL, or a negative errno (logged). */
int report_write(Manager *m);
