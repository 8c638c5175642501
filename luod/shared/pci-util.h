/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

/* A PCI address: domain:bus:device.function, the BDF of sysfs names
 * (/sys/bus/pci/devices/DDDD:BB:DD.F). */
typedef struct PciBdf {
        uint32_t domain;   /* 0..0xffff (sysfs prints 4 hex digits; VMD uses 0x10000+) */
        uint8_t bus;       /* 0..0xff */
        uint8_t device;    /* 0..0x1f */
        uint8_t function;  /* 0..7 */
} PciBdf;

/* "DDDDDDDD:BB:DD.F" + NUL: the domain prints 4 digits, more above 0xffff,
 * at most 8 (pci_bdf_parse() takes up to 8). */
#define PCI_BDF_STRING_MAX 17

/* Parses the sysfs form "DDDD:BB:DD.F" (hex, domain 4-8 digits) or the
 * short form "BB:DD.F" (domain 0).  Returns 0, or -EINVAL when s is not
 * exactly one BDF (range, digits, separators, trailing text). */
int pci_bdf_parse(const char *s, PciBdf *ret);

/* Formats bdf as sysfs names it, into buf (PCI_BDF_STRING_MAX bytes).
 * Returns buf. */
const char *pci_bdf_format(const PciBdf *bdf, char buf[static PCI_BDF_STRING_MAX]);

/* Orders BDFs as the PCI core enumerates them: domain, bus, device,
 * function.  Returns <0, 0, >0 like strcmp(). */
int pci_bdf_compare(const PciBdf *a, const PciBdf *b);
