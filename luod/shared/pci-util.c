/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pci-util.h"

static int hexval(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* Reads min..max hex digits from *p, advancing it; the caller checks the
 * separator that must follow. */
static int read_hex(const char **p, unsigned min, unsigned max, uint32_t *ret) {
        uint32_t v = 0;
        unsigned n = 0;
        int d;

        while (n < max && (d = hexval((*p)[n])) >= 0) {
                v = (v << 4) | (uint32_t) d;
                n++;
        }
        if (n < min)
                return -EINVAL;
        *p += n;
        *ret = v;
        return 0;
}

int pci_bdf_parse(const char *s, PciBdf *ret) {
        uint32_t domain = 0, bus, device, function;
        const char *p = s;

        if (!s || !ret)
                return -EINVAL;

        /* Long form has two colons. */
        const char *c1 = strchr(s, ':');
        if (c1 && strchr(c1 + 1, ':')) {
                if (read_hex(&p, 4, 8, &domain) < 0 || *p++ != ':')
                        return -EINVAL;
        }
        if (read_hex(&p, 2, 2, &bus) < 0 || *p++ != ':')
                return -EINVAL;
        if (read_hex(&p, 2, 2, &device) < 0 || device > 0x1f || *p++ != '.')
                return -EINVAL;
        if (read_hex(&p, 1, 1, &function) < 0 || function > 7 || *p != '\0')
                return -EINVAL;

        *ret = (PciBdf) {
                .domain = domain,
                .bus = (uint8_t) bus,
                .device = (uint8_t) device,
                .function = (uint8_t) function,
        };
        return 0;
}

const char *pci_bdf_format(const PciBdf *bdf, char buf[static PCI_BDF_STRING_MAX]) {
        snprintf(buf, PCI_BDF_STRING_MAX, "%04x:%02x:%02x.%x",
                 bdf->domain, bdf->bus, bdf->device, bdf->function);
        return buf;
}

int pci_bdf_compare(const PciBdf *a, const PciBdf *b) {
        if (a->domain != b->domain)
                return a->domain < b->domain ? -1 : 1;
        if (a->bus != b->bus)
                return a->bus < b->bus ? -1 : 1;
        if (a->device != b->device)
                return a->device < b->device ? -1 : 1;
        if (a->function != b->function)
                return a->function < b->function ? -1 : 1;
        return 0;
}
