/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "types.h"

/* Runs at start, before the bus name is taken: finds a preserved state
 * (LUO session "luod", then <runtime_dir> or /luod from the initramfs, then
 * <state_dir>/state.luod-state).  Refuses it (kept, logged, State
 * "failed") when it is corrupt or its major version is unknown, when
 * another boot consumed it (its "consumed" boot id is not this boot's), or,
 * not consumed yet, when the kernel command line lacks its luod.update_id
 * (a cold boot).  Otherwise marks it consumed by this boot and writes it to
 * <state_dir>/state.luod-state (fsync, rename, directory fsync) before any
 * restore step, so a luod killed mid-restore resumes it when started again
 * in the same boot (report: resumed true, attempt N); then restores every PF
 * in parallel, writes <state_dir>/reports/<update-id>.json and report.json,
 * and drops the state only when every PF was restored (and notes the update
 * in <runtime_dir>/finished).  A command line with luod.update_id=X and no
 * state, X not finished in this boot, is a failure (-ENOENT, State
 * "failed", LastError "State of update X not found: ...", a journal entry
 * with a catalog ID).  Returns 0 (also when nothing was preserved), or a
 * negative errno (the state is kept). */
int restore_at_start(Manager *m);

/* Applies the state kept in <state_dir>/state.luod-state in this boot, as
 * `luoctl retry` asks (D-Bus Retry): whatever boot consumed it before and
 * whatever this boot's command line says.  Marks it consumed by this boot
 * (attempt + 1) and writes that durably first, then restores as at start
 * and writes the report (resumed false, retry true).  Blocks until every PF
 * is done.  Returns 0 when every PF was restored (the state is dropped), or
 * a negative errno with *ret_error a malloc'd message naming the file, the
 * PFs or the errno: -ENOENT no kept state, -EBADMSG (or another parse
 * error) it is unusable, -EUCLEAN some PF failed (state kept), the errno
 * of the state file write, -ENOMEM. */
int restore_retry(Manager *m, char **ret_error);

/* Marks update_id finished in this boot (<runtime_dir>/finished): a command
 * line that still names it is no lost state. */
void restore_finished_mark(Manager *m, const char *update_id);
