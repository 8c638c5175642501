/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdio.h>

/* Logging to stderr (the journal under systemd), systemd style: the
 * *_errno() forms set errno from the negative error r so that %m prints it,
 * and return r, so callers can write `return log_error_errno(r, ...)`. */
#define log_full_errno(prefix, r, fmt, ...)                                    \
        ({                                                                     \
                int _r = (r);                                                  \
                errno = _r < 0 ? -_r : _r;                                     \
                fprintf(stderr, prefix fmt "\n", ##__VA_ARGS__);               \
                _r < 0 ? _r : -_r;                                             \
        })
#define log_error_errno(r, fmt, ...) log_full_errno("<3>", r, fmt, ##__VA_ARGS__)
#define log_warning_errno(r, fmt, ...) log_full_errno("<4>", r, fmt, ##__VA_ARGS__)
#define log_error(fmt, ...) (void) fprintf(stderr, "<3>" fmt "\n", ##__VA_ARGS__)
#define log_notice(fmt, ...) (void) fprintf(stderr, "<5>" fmt "\n", ##__VA_ARGS__)
#define log_info(fmt, ...) (void) fprintf(stderr, "<6>" fmt "\n", ##__VA_ARGS__)
#define log_debug(fmt, ...) (void) fprintf(stderr, "<7>" fmt "\n", ##__VA_ARGS__)
#define log_warning(fmt, ...) (void) fprintf(stderr, "<4>" fmt "\n", ##__VA_ARGS__)
