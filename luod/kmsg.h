/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* What this kernel's log says about its own boot, for the report. */
typedef struct KernelBootLog {
        uint64_t pci_first_us;  /* kernel log time (local_clock(), us since boot), first PCI device found; 0 = none */
        uint64_t pci_last_us;   /* the last device found before luod started */
        unsigned pci_devices;   /* "pci BDF: [vvvv:dddd] type 0N class 0x..." records seen */
} KernelBootLog;

/* The longest line kmsg_read_boot() takes from a regular file, bytes
 * without its newline (a /dev/kmsg record is at most ~1 KiB). */
#define KMSG_LINE_MAX 16382

/* Reads the kernel log records present now from path (/dev/kmsg, opened
 * non-blocking, one record per read(); a regular file of records works too)
 * and finds the span of PCI enumeration: the records the PCI core writes
 * for each device it finds (pci_setup_device(): "pci 0000:01:00.0:
 * [1b36:0010] type 00 class 0x010802 ...").  On a kernel that sleeps in
 * sriov_init() for a PF found with VF Enable set, that sleep is inside the
 * span.  Records stamped after until_us (kernel log time, us since boot,
 * compared with luod's CLOCK_BOOTTIME at start; 0 = no bound)
 * are not counted: luod reads the log after its restore, whose new VFs log
 * the same lines.  Returns 0 (fields 0 when nothing matched), or a negative
 * errno of open/read. */
int kmsg_read_boot(const char *path, uint64_t until_us, KernelBootLog *ret);

/* The parser kmsg_read_boot() runs on what it read: adds to *b the PCI
 * enumeration records among the whole lines (each ending in '\n') of the
 * size bytes at buf, which need not be NUL-terminated; lines that start with
 * a space (a record's dictionary) are skipped.  Returns how many bytes the
 * whole lines take; the rest is a partial last line. */
size_t kmsg_parse_lines(const char *buf, size_t size, uint64_t until_us, KernelBootLog *b);
