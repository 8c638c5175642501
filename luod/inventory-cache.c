/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "inventory-cache.h"
#include "log.h"
#include "macro.h"
#include "types.h"
#include "record.h"
#include "sriov.h"
#include "state.h"
#include "time-util.h"

/* A fresh record (its header calibrates the TSC: 20 ms) serialized, and
 * its body. */
static int inventory_scan(char **ret) {
        _cleanup_luod_state_ LuodState s = {};
        _cleanup_free_ char *buf = NULL;
        size_t size;
        int r;

        r = record_fill_header(&s);
        if (r >= 0)
                r = sriov_scan(&s);
        if (r < 0)
                return r;
        record_drop_unused(&s);
        r = luod_state_serialize(&s, &buf, &size);
        if (r < 0)
                return r;
        /* The body: everything after the header line. */
        const char *body = memchr(buf, '\n', size);
        if (!body)
                return -EBADMSG;
        *ret = strndup(body + 1, size - (size_t) (body + 1 - buf));
        return *ret ? 0 : -ENOMEM;
}

int inventory_cache_get(Manager *m, const char **ret) {
        InventoryCache *c = &m->inventory;
        uint64_t now = now_usec();
        char *text;
        int r;

        if (c->text && now - c->taken_usec < INVENTORY_CACHE_MAX_AGE_USEC) {
                *ret = c->text;
                return 0;
        }
        r = inventory_scan(&text);
        if (r < 0)
                return r;
        free(c->text);
        c->text = text;
        c->taken_usec = now;
        *ret = c->text;
        return 0;
}

void inventory_cache_invalidate(Manager *m) {
        free(m->inventory.text);
        m->inventory.text = NULL;
}

void inventory_cache_done(Manager *m) {
        inventory_cache_invalidate(m);
}
