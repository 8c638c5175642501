/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "consumers.h"
#include "events.h"
#include "guests.h"
#include "inhibitors.h"
#include "log.h"
#include "manager.h"
#include "report.h"
#include "restore.h"
#include "state.h"

int manager_init(Manager *m) {
        m->luo_out_fd = m->luo_in_fd = -EBADF;
        m->state = strdup("idle");
        m->update_id = strdup("");
        m->last_error = strdup("");
        m->phase = strdup("");
        if (!m->state || !m->update_id || !m->last_error || !m->phase)
                return log_error_errno(-ENOMEM, "Out of memory");
        return 0;
}

void manager_done(Manager *m) {
        m->execute_source = sd_event_source_disable_unref(m->execute_source);
        consumers_done(m);
        guests_done(m);
        inhibitors_done(m);
        events_done(m);
        inventory_cache_done(m);
        restore_results_free(m->restore_pfs, m->n_restore_pfs);
        luod_state_free(&m->restored);
        if (m->luo_out_fd >= 0)
                close(m->luo_out_fd);
        if (m->luo_in_fd >= 0)
                close(m->luo_in_fd);
        free(m->pending_initrd);
        luod_state_free(&m->pending);
        report_free(m->report);
        free(m->state);
        free(m->update_id);
        free(m->last_error);
        free(m->phase);
}
