/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Kernel drivers and their modules, with libkmod:
 * - preflight of an update: does the new kernel have the drivers the PFs
 *   and their VFs are bound to?  Answered from that kernel's module indexes
 *   (<modules_root>/<release>/modules.*.bin, as depmod writes them),
 *   built-in drivers included (modules.builtin.alias.bin);
 * - restore: loading the module of a VF driver before binding VFs to it,
 *   since the driver_override + drivers_probe bind loads nothing (after a
 *   kexec nothing may have loaded vfio-pci yet). */

#include <stddef.h>

#include "inventory.h"

#define KERNEL_RELEASE_MAX 128

/* Reads the release ("7.3.4-luod+") of an x86 bzImage from its setup
 * header: the "HdrS" magic at 0x202 and the kernel_version field at 0x20e,
 * an offset (from 0x200) of the version string.  Returns 0; -ENOEXEC when
 * the file is not a bzImage with a version string; -errno of open/read. */
int kernel_image_release(const char *path, char *ret, size_t size);
/* The same, from an open file (read with pread(): the offset stays). */
int kernel_image_release_fd(int fd, char *ret, size_t size);

/* Checks every PF of s (by the modalias in /sys/bus/pci/devices/<BDF>/
 * modalias, so any driver claiming the device counts) and every VF driver
 * recorded (by module name, '-' and '_' alike) against the module indexes
 * of <modules_root>/<release>.  Returns 1 when every driver is there; 0 when
 * that directory does not exist (nothing checked: the caller says so);
 * -ENOPKG with *ret_missing = "PF 0000:01:00.0 (nvme): no driver in
 * 7.3.4 for pci:v...; VF ... " (caller frees) when any is missing; other
 * negative errnos from libkmod or sysfs. */
int drivers_check(const LuodState *s, const char *modules_root, const char *release, char **ret_missing);

/* The module providing PCI driver `driver`, looked up in the module indexes
 * of modules_dir (one /lib/modules/<release> directory, as depmod writes
 * it) with kmod_module_new_from_lookup(): the driver name as a module name
 * or alias, '-' and '_' alike (driver vfio-pci is module vfio_pci).  A
 * driver whose module is named otherwise (QAT's c6xxvf is in qat_c62xvf)
 * is not found this way; drivers_load() finds such a driver only when it
 * is registered already.  Returns 1 with *ret_module (malloc'd) the name of
 * a loadable module, 0 with *ret_module the name of a built-in one
 * (modules.builtin), -ENOENT when neither exists, -ENOMEM, or libkmod's
 * error opening the indexes (all logged, naming the driver and
 * modules_dir). */
int drivers_lookup_module(const char *modules_dir, const char *driver, char **ret_module);

/* Makes PCI driver `driver` available for binding, as `modprobe DRIVER`
 * would: nothing to do when <drivers_dir>/<driver> exists (built in, or
 * loaded already); else looks up its module (drivers_lookup_module() in
 * modules_dir) and inserts it with its dependencies and the modprobe.d
 * options (kmod_module_probe_insert_module(): finit_module(2); blacklists
 * do not apply to a module asked for by name), then waits, polling every
 * 10 ms for at most 5 s, until <drivers_dir>/<driver> exists (the module's
 * init registers the driver; another loader, e.g. udevd, may be inserting
 * the same module at that moment).  Calls are serialized by a mutex.
 * Returns 0 when the driver was there, 1 when it was loaded now, or, logged
 * naming the driver, the module and the errno:
 *   -ENOENT  no module provides it and it is not built in;
 *   -ENXIO   its module is in the kernel (built in or loaded) but no PCI
 *            driver of that name is registered;
 *   -ENOMEM, or the errno of opening the indexes or of inserting a module
 *   (e.g. -EPERM without CAP_SYS_MODULE, -ENOEXEC: built for another
 *   kernel, -ENOKEY/-EKEYREJECTED: signature refused). */
int drivers_load_at(const char *drivers_dir, const char *modules_dir, const char *driver);

/* drivers_load_at("/sys/bus/pci/drivers", "/lib/modules/<uname -r>",
 * driver). */
int drivers_load(const char *driver);

/* drivers_load_at() for each distinct driver (by name, '-' and '_' alike)
 * the VFs of pf are recorded bound to (VfRecord.driver: the one restore
 * binds each VF to), in VF order; drivers_dir and modules_dir NULL mean
 * drivers_load()'s.  Stops at the first that fails and returns its
 * negative errno, with *ret_driver pointing at that driver's name in pf;
 * returns 0 when every driver is registered. */
int drivers_load_vf_drivers(const PfRecord *pf, const char *drivers_dir, const char *modules_dir,
                            const char **ret_driver);
