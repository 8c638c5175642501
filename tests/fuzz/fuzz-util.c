/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

static size_t page_size(void) {
        static size_t ps;

        if (!ps)
                ps = (size_t) sysconf(_SC_PAGESIZE);
        return ps;
}

/* Pages for size bytes plus the guard page. */
static size_t guarded_len(size_t size) {
        size_t ps = page_size();

        return (size + ps - 1) / ps * ps + ps;
}

char *fuzz_guarded_copy(const void *data, size_t size) {
        size_t len = guarded_len(size);
        char *base;

        base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED)
                return NULL;
        if (mprotect(base + len - page_size(), page_size(), PROT_NONE) < 0) {
                munmap(base, len);
                return NULL;
        }
        char *p = base + len - page_size() - size;
        if (size > 0)
                memcpy(p, data, size);
        return p;
}

void fuzz_guarded_free(char *p, size_t size) {
        size_t len = guarded_len(size);

        if (p)
                munmap(p + size + page_size() - len, len);
}

char *fuzz_strndup(const void *data, size_t size) {
        char *s = malloc(size + 1);

        if (!s)
                abort();
        if (size > 0)
                memcpy(s, data, size);
        s[size] = '\0';
        return s;
}

FILE *fuzz_devnull(void) {
        static FILE *f;

        if (!f)
                f = fopen("/dev/null", "we");
        if (!f)
                abort();
        return f;
}
