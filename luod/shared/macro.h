/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
/* A variable that exists only for its cleanup (clang warns it is unused). */
#define _unused_ __attribute__((unused))
#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* Hands a pointer on: returns it and leaves NULL behind. */
#define TAKE_PTR(p)                                                            \
        ({                                                                     \
                __typeof__(p) _p = (p);                                        \
                (p) = NULL;                                                    \
                _p;                                                            \
        })

/* Hands an fd on: returns it and leaves -EBADF behind. */
#define TAKE_FD(fd)                                                            \
        ({                                                                     \
                int _fd = (fd);                                                \
                (fd) = -EBADF;                                                 \
                _fd;                                                           \
        })

static inline void freep(void *p) {
        free(*(void **) p);
}

static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}
static inline void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_close_ _cleanup_(closep)

/* Two strings equal, or both NULL. */
static inline bool streq_ptr(const char *a, const char *b) {
        return a && b ? strcmp(a, b) == 0 : a == b;
}
