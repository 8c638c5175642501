/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Inhibitor locks of consumers (D-Bus Inhibit): "block" refuses every
 * Update while held, "delay" makes an Update wait (update.c) until its fd is
 * closed or --max-delay passed.  Bounded per uid. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "consumers.h"
#include "errors.h"
#include "inhibitors.h"
#include "log.h"
#include "policy.h"
#include "macro.h"

/* Per uid, not per name: names cost nothing to register. */
#define INHIBITORS_PER_UID_MAX 64
#define INHIBITORS_MAX 512

/* Released when every copy of the write end is closed (POLLHUP); bytes a
 * holder writes into it are read and ignored. */
static bool inhibitor_released(const Inhibitor *in) {
        struct pollfd p = { .fd = in->fd, .events = POLLIN };
        char buf[256];

        if (poll(&p, 1, 0) <= 0)
                return false;
        if (p.revents & (POLLHUP | POLLERR))
                return true;
        while (read(in->fd, buf, sizeof(buf)) > 0)
                ;
        return false;
}

static void inhibitor_drop(Manager *m, size_t i) {
        free(m->inhibitors[i].consumer);
        free(m->inhibitors[i].why);
        close(m->inhibitors[i].fd);
        memmove(&m->inhibitors[i], &m->inhibitors[i + 1], (m->n_inhibitors - i - 1) * sizeof(Inhibitor));
        m->n_inhibitors--;
}

int inhibitors_check_block(Manager *m, char **ret_why) {
        for (size_t i = 0; i < m->n_inhibitors;)
                if (inhibitor_released(&m->inhibitors[i]))
                        inhibitor_drop(m, i);
                else
                        i++;
        for (size_t i = 0; i < m->n_inhibitors; i++)
                if (m->inhibitors[i].block) {
                        if (asprintf(ret_why, "%s: %s", m->inhibitors[i].consumer, m->inhibitors[i].why) < 0)
                                return -ENOMEM;
                        return -EBUSY;
                }
        return 0;
}

int method_inhibit(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        const char *mode, *why;
        Inhibitor *n;
        Consumer *c;
        int r = 0, p[2];

        r = sd_bus_message_read(msg, "ss", &mode, &why);
        if (r < 0)
                return r;
        c = consumer_caller(m, msg, error, &r);
        if (!c)
                return r;
        if (strcmp(mode, "delay") != 0 && strcmp(mode, "block") != 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Inhibitor mode must be delay or block, got '%s'",
                                         mode);
        if (!consumer_text_ok(why, 1024))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Inhibitor reason must be 1..1024 bytes, no control characters");
        if (strcmp(mode, "block") == 0 && !c->privileged)
                return policy_refuse(m, c, "take a block inhibitor", error);
        /* Drop released ones first, so repeated Inhibit calls do not pile up fds. */
        _cleanup_free_ char *ignored = NULL;
        (void) inhibitors_check_block(m, &ignored);
        /* Per uid, not per name: names cost nothing to register. */
        size_t mine = 0;
        for (size_t i = 0; i < m->n_inhibitors; i++)
                mine += m->inhibitors[i].uid == c->uid;
        if (mine >= INHIBITORS_PER_UID_MAX || m->n_inhibitors >= INHIBITORS_MAX)
                return sd_bus_error_setf(error, LUOD_ERROR_TOO_MANY_INHIBITORS,
                                         "Consumer %s: uid %u holds %zu inhibitors of at most %d, "
                                         "all consumers %zu of at most %d", c->name, (unsigned) c->uid, mine,
                                         INHIBITORS_PER_UID_MAX, m->n_inhibitors, INHIBITORS_MAX);
        if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
                return sd_bus_error_set_errnof(error, errno, "pipe2: %m");
        n = reallocarray(m->inhibitors, m->n_inhibitors + 1, sizeof(Inhibitor));
        if (!n) {
                close(p[0]);
                close(p[1]);
                return -ENOMEM;
        }
        m->inhibitors = n;
        n[m->n_inhibitors] = (Inhibitor) {
                .consumer = strdup(c->name), .block = strcmp(mode, "block") == 0, .why = strdup(why),
                .uid = c->uid, .fd = p[0],
        };
        if (!n[m->n_inhibitors].consumer || !n[m->n_inhibitors].why) {
                m->n_inhibitors++;
                inhibitor_drop(m, m->n_inhibitors - 1);
                close(p[1]);
                return -ENOMEM;
        }
        m->n_inhibitors++;
        log_info("Consumer %s holds a %s inhibitor: %s", c->name, mode, why);
        r = sd_bus_reply_method_return(msg, "h", p[1]);
        close(p[1]);
        return r;
}

void inhibitors_done(Manager *m) {
        for (size_t i = 0; i < m->n_inhibitors; i++) {
                free(m->inhibitors[i].consumer);
                free(m->inhibitors[i].why);
                if (m->inhibitors[i].fd >= 0)
                        close(m->inhibitors[i].fd);
        }
        free(m->inhibitors);
        m->inhibitors = NULL;
        m->n_inhibitors = 0;
}
