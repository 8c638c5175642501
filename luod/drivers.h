/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Preflight of an update: does the new kernel have the drivers the PFs and
 * their VFs are bound to?  Answered from that kernel's module indexes
 * (<modules_root>/<release>/modules.*.bin, as depmod writes them) with
 * libkmod, built-in drivers included (modules.builtin.alias.bin). */

#include <stddef.h>

#include "inventory.h"

#define KERNEL_RELEASE_MAX 128

/* Reads the release ("7.3.4-luod+") of an x86 bzImage from its setup
 * header: the "HdrS" magic at 0x202 and the kernel_version field at 0x20e,
 * an offset (from 0x200) of the version string.  Returns 0; -ENOEXEC when
 * the file is not a bzImage with a version string; -errno of open/read. */
int kernel_image_release(const char *path, char *ret, size_t size);

/* Checks every PF of s (by the modalias in /sys/bus/pci/devices/<BDF>/
 * modalias, so any driver claiming the device counts) and every VF driver
 * recorded (by module name, '-' and '_' alike) against the module indexes
 * of <modules_root>/<release>.  Returns 1 when every driver is there; 0 when
 * that directory does not exist (nothing checked: the caller says so);
 * -ENOPKG with *ret_missing = "PF 0000:01:00.0 (nvme): no driver in
 * 7.3.4 for pci:v...; VF ... " (caller frees) when any is missing; other
 * negative errnos from libkmod or sysfs. */
int drivers_check(const LuodState *s, const char *modules_root, const char *release, char **ret_missing);
