/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Replays inputs through a fuzz target without libFuzzer:
 *
 *     fuzz-TARGET-replay FILE|DIR...
 *
 * Runs LLVMFuzzerTestOneInput() on each FILE, and on each regular file in
 * each DIR (in name order), each in a malloc'd buffer of its exact size.  A
 * property that fails aborts (exit by SIGABRT); otherwise prints how many
 * inputs ran and exits 0, or 1 when an argument cannot be read or there were
 * no inputs at all (a missing corpus is an error, not a pass). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path) {
        FILE *f = fopen(path, "re");
        char *buf = NULL;
        size_t size = 0, cap = 0;
        int r = 0;

        if (!f) {
                fprintf(stderr, "fuzz-replay: %s: %s\n", path, strerror(errno));
                return -1;
        }
        for (;;) {
                if (size == cap) {
                        char *n = realloc(buf, cap ? cap * 2 : 4096);
                        if (!n)
                                abort();
                        buf = n;
                        cap = cap ? cap * 2 : 4096;
                }
                size_t k = fread(buf + size, 1, cap - size, f);
                size += k;
                if (k == 0)
                        break;
        }
        if (ferror(f)) {
                fprintf(stderr, "fuzz-replay: %s: read error\n", path);
                r = -1;
        }
        fclose(f);
        if (r == 0) {
                /* Exactly size bytes, so that ASan sees a read past the end. */
                char *exact = malloc(size ?: 1);
                if (!exact)
                        abort();
                if (size > 0)
                        memcpy(exact, buf, size);
                LLVMFuzzerTestOneInput((const uint8_t *) exact, size);
                free(exact);
        }
        free(buf);
        return r;
}

static int by_name(const struct dirent **a, const struct dirent **b) {
        return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv) {
        unsigned inputs = 0, errors = 0;

        for (int i = 1; i < argc; i++) {
                struct stat st;

                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "fuzz-replay: %s: %s\n", argv[i], strerror(errno));
                        errors++;
                        continue;
                }
                if (!S_ISDIR(st.st_mode)) {
                        errors += run_file(argv[i]) < 0;
                        inputs++;
                        continue;
                }
                struct dirent **names;
                int n = scandir(argv[i], &names, NULL, by_name);
                if (n < 0) {
                        fprintf(stderr, "fuzz-replay: %s: %s\n", argv[i], strerror(errno));
                        errors++;
                        continue;
                }
                for (int j = 0; j < n; j++) {
                        char *path;

                        if (names[j]->d_name[0] != '.' &&
                            asprintf(&path, "%s/%s", argv[i], names[j]->d_name) >= 0) {
                                if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                                        errors += run_file(path) < 0;
                                        inputs++;
                                }
                                free(path);
                        }
                        free(names[j]);
                }
                free(names);
        }
        printf("fuzz-replay: %u inputs, %u unreadable\n", inputs, errors);
        return errors || inputs == 0 ? 1 : 0;
}
