/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Which update's kernel luod has loaded, outside luod's memory: a luod that
 * dies between kexec_file_load(2) and kexec -e (SIGKILL, a crash, the
 * watchdog) leaves the next kernel loaded, with luod.update_id= on its
 * command line, and perhaps that update's state persisted; a later
 * `systemctl kexec` or `kexec -e` of anyone would boot it and apply a record
 * taken long before.  <runtime_dir>/loaded ("UPDATE-ID BACKEND BOOT-ID\n",
 * on /run by default) is written before the load and removed with the
 * unload; the luod started again in this boot finds it and abandons that
 * update.  A marker of another boot (a runtime dir that outlived the kexec)
 * is only removed: that update's kexec happened. */

#include "types.h"

/* Writes <runtime_dir>/loaded for update_id carried by backend (its name).
 * Returns 0 or a negative errno (logged: the load does not go on without
 * it). */
int update_loaded_mark(Manager *m, const char *update_id, const char *backend);

/* Removes <runtime_dir>/loaded (a failure is logged). */
void update_loaded_unmark(Manager *m);

/* kexec_file_load(2) with KEXEC_FILE_UNLOAD, then <runtime_dir>/loaded
 * removed.  Failures are logged. */
void update_unload(Manager *m);

/* At start, before the restore: when <runtime_dir>/loaded names an update
 * (a luod of this boot loaded its kernel and exited before kexec -e), the
 * kernel is unloaded and that update's state removed where it is this
 * boot's own (the initrd copy in the runtime dir; the state file when it
 * holds that update, not consumed); State "failed" names it.  A marker
 * that is not a regular file "UUID NAME\n" (at most 4 KiB; a FIFO does not
 * block) unloads the kernel all the same and removes no state.  Returns 1
 * when an update was abandoned so, 0 when none was loaded, or a negative
 * errno (logged). */
int update_loaded_recover(Manager *m);
