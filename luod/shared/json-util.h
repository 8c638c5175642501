/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <json-c/json.h>

/* Cleanup helpers for json-c objects, and the error text of the parsers. */
static inline void json_object_putp(json_object **o) {
        json_object_put(*o);
}

static inline void json_tokener_freep(json_tokener **t) {
        if (*t)
                json_tokener_free(*t);
}

/* Sets *error to "where: key: reason" (where and key optional), or to NULL
 * when out of memory, and returns r. */
__attribute__((format(printf, 5, 6)))
int json_fail(int r, char **error, const char *where, const char *key, const char *fmt, ...);
