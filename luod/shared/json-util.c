/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "json-util.h"
#include "macro.h"

int json_fail(int r, char **error, const char *where, const char *key, const char *fmt, ...) {
        _cleanup_free_ char *reason = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&reason, fmt, ap) < 0)
                reason = NULL;
        va_end(ap);
        if (!reason || asprintf(error, "%s%s%s%s%s", where ?: "", where ? ": " : "",
                              key ?: "", key ? ": " : "", reason) < 0)
                *error = NULL;
        return r;
}
