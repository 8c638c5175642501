/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "backend.h"

const Backend *const backends[] = { &backend_luo, &backend_initrd, &backend_file, NULL };

int backends_from_string(const char *s, unsigned *ret) {
        unsigned b = 0;

        for (const char *p = s; *p;) {
                size_t n = strcspn(p, ",");
                size_t i;

                for (i = 0; backends[i]; i++)
                        if (strlen(backends[i]->name) == n && strncmp(p, backends[i]->name, n) == 0)
                                break;
                if (!backends[i])
                        return -EINVAL;
                b |= backends[i]->bit;
                p += n;
                if (*p == ',' && *++p == '\0')
                        return -EINVAL;
        }
        if (b == 0)
                return -EINVAL;
        *ret = b;
        return 0;
}
