/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the fuzz targets (tests/fuzz/fuzz-*.c).  Each target defines
 * LLVMFuzzerTestOneInput(); it is linked either with libFuzzer
 * (-fsanitize=fuzzer, clang) or with fuzz-main.c, which replays files
 * through it (the corpus as a unit test, any compiler). */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* /dev/null opened once for writing: for output the target only exercises
 * (abort()s when it cannot be opened). */
FILE *fuzz_devnull(void);

/* A property of the code under test does not hold: print why and abort(),
 * which libFuzzer and the replay runner both report as a crash (libFuzzer
 * saves the input). */
#define FUZZ_ASSERT(expr, ...)                                                  \
        do {                                                                    \
                if (!(expr)) {                                                  \
                        fprintf(stderr, "%s:%d: property failed: %s: ",         \
                                __FILE__, __LINE__, #expr);                     \
                        fprintf(stderr, __VA_ARGS__);                           \
                        fputc('\n', stderr);                                    \
                        abort();                                                \
                }                                                               \
        } while (0)

/* A copy of size bytes of data that ends exactly where an inaccessible page
 * starts, so that any read past the end faults, also one by code that the
 * sanitizers do not instrument (glibc's sscanf() or strlen(), json-c).
 * NULL when out of memory; release with fuzz_guarded_free(). */
char *fuzz_guarded_copy(const void *data, size_t size);
void fuzz_guarded_free(char *p, size_t size);

/* A NUL-terminated malloc'd copy (data may contain NULs; the string ends at
 * the first).  Aborts when out of memory. */
char *fuzz_strndup(const void *data, size_t size);
