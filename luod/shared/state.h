/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The preserved-state format: a LuodState (inventory.h) as a checksummed
 * JSON document, carried across kexec in a file or a LUO-preserved memfd.
 * The format is specified in proto/state-format.md: one header line
 *
 *     {"format":"luod-state","major":1,"minor":0,"length":N,"sha256":"<hex>"}\n
 *
 * followed by exactly N bytes of body, a JSON object whose SHA-256 is
 * <hex>.  Readers refuse a different format or major version
 * (-EPROTONOSUPPORT) and accept any minor of their major, ignoring keys they
 * do not know. */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "inventory.h"

#define LUOD_STATE_FORMAT "luod-state"
#define LUOD_STATE_MAJOR 1
#define LUOD_STATE_MINOR 3
/* Largest state accepted or produced, header included: 64 MiB. */
#define LUOD_STATE_SIZE_MAX (UINT64_C(64) * 1024 * 1024)

/* Checks s against every rule of the format that serialize checks (below),
 * without encoding it: what passes can be written and read back.  Returns 0
 * (*ret_error = NULL), or -EINVAL with *ret_error a malloc'd message naming
 * the PF (by BDF), the VF (by index) and the key, and why (NULL if out of
 * memory).  ret_error may be NULL.  Logs nothing. */
int luod_state_verify(const LuodState *s, char **ret_error);

/* Encodes s into a new buffer: header line + body.  On success *ret_buf is
 * a malloc'd buffer of *ret_size bytes (not NUL-terminated; the body ends
 * in '\n').  Returns 0, or:
 *   -EINVAL   s breaks a rule of the format (logged): a UUID that is not
 *             36-char lowercase, an empty name, a BDF with device > 0x1f or
 *             function > 7, PFs not in strictly ascending BDF order, VFs not
 *             in strictly ascending index order or index >= numvfs,
 *             numvfs > totalvfs, vlan > VF_VLAN_MAX, qos > VF_QOS_MAX,
 *             unknown vlan_proto/link_state, a tri-state not -1/0/1,
 *             iommu_group < -1, a 64-bit value of UINT64_MAX (reserved),
 *             a string that is not valid UTF-8, two PFs with one identity,
 *             or a consumed_boot_id that is not a UUID or has attempt 0;
 *   -EFBIG    the result would exceed LUOD_STATE_SIZE_MAX;
 *   -ENOMEM;
 *   -EIO      OpenSSL failed to compute the digest. */
int luod_state_serialize(const LuodState *s, char **ret_buf, size_t *ret_size);

/* Decodes size bytes at buf (need not be NUL-terminated) strictly.  On
 * success fills *ret (overwritten, not freed first; release it with
 * luod_state_free()).  On failure *ret is untouched.  Returns 0, or:
 *   -EBADMSG          no header line, a header key missing or mistyped,
 *                     length not equal to the bytes that follow the header
 *                     (truncated or trailing data), sha256 mismatch, body
 *                     not a JSON object, or a body key missing, mistyped or
 *                     out of range, or any rule listed under serialize;
 *   -EPROTONOSUPPORT  format is not "luod-state" or major is not 1;
 *   -EFBIG            size exceeds LUOD_STATE_SIZE_MAX;
 *   -ENOMEM, -EIO     as for serialize.
 * If ret_error is non-NULL, *ret_error is always assigned: for -EBADMSG and
 * -EPROTONOSUPPORT a malloc'd message naming the key, and the PF (by BDF)
 * and VF (by index) it belongs to, and why it is wrong (NULL if out of
 * memory); NULL otherwise. */
int luod_state_parse(const char *buf, size_t size, LuodState *ret, char **ret_error);

/* Whether the NUL-terminated s is well-formed UTF-8, as every string of a
 * state must be: no overlong forms, surrogates or code points above
 * U+10FFFF.  (json-c's check of the text lets overlong forms through.) */
bool luod_state_utf8_valid(const char *s);

/* Whether s is a UUID as the state has them: 36 characters, hex digits and
 * dashes at 8, 13, 18 and 23. */
bool luod_uuid_valid(const char *s);

/* The JSON of the VF assignments, one form for the state's "assignments"
 * and for assignments.json (assignments.h). */

/* Checks s->assignments against the rules typing alone does not enforce:
 * consumer, guest and pf_identity non-empty and valid UTF-8, vf_index at
 * most 65535, no VF (pf_identity, vf_index) assigned twice, no consumer name
 * with two uids.  Returns 0, or -EBADMSG with *error set as json_fail()
 * (json-util.h) sets it, naming the entry ("assignments[2]"). */
int luod_state_assignments_verify(const LuodState *s, char **error);

/* Reads the JSON object e, entry i of an assignments array, into a (its
 * strings malloc'd, left for the caller to free on failure too): consumer,
 * guest and pf_identity non-empty UTF-8 strings, vf_index 0..65535,
 * consumer_uid 0..2^32-2 or absent (VF_ASSIGNMENT_NO_UID).  Returns 0, -ENOMEM, or -EBADMSG with
 * *error naming the entry, from the guest on with it ("assignments[2]
 * (guest \"vm-c\"): vf_index: expected int, got string"). */
int luod_state_assignment_from_json(json_object *e, size_t i, VfAssignment *a, char **error);

/* Appends a to the JSON array as an object: consumer, guest, pf_identity,
 * vf_index, and consumer_uid unless it is VF_ASSIGNMENT_NO_UID.  Returns 0
 * or -ENOMEM. */
int luod_state_assignment_to_json(json_object *array, const VfAssignment *a);

/* Serializes s into fd (a memfd or regular file opened for writing) at
 * offset 0 with pwrite(), then truncates fd to the serialized size.  The file
 * offset is not used or changed.  Returns 0, a serialize error, or the
 * negative errno of pwrite()/ftruncate(). */
int luod_state_write_fd(int fd, const LuodState *s);

/* Reads the whole regular file fd from offset 0 with pread() and parses it
 * as luod_state_parse() does (same ret, ret_error and errors).  Also:
 * -EBADFD when fd is not a regular file, -EFBIG when it is larger than
 * LUOD_STATE_SIZE_MAX, or the negative errno of fstat()/pread(). */
int luod_state_read_fd(int fd, LuodState *ret, char **ret_error);

/* Atomically and durably replaces the file name (a plain file name, no '/')
 * in the directory dir_fd (opened O_RDONLY|O_DIRECTORY; not AT_FDCWD, not
 * O_PATH: it is fsync()ed) with the serialized s, mode 0644, by
 * write_file_atomic_at() (fs-util.h: a temporary ".#<name>.<pid>-<n>",
 * fsync(), renameat(), fsync() of the directory).  name never refers to a
 * partial file: a reader sees the old or the new state.  A crash may leave
 * a ".#<name>.*" file behind.  Returns 0, -EBADF when dir_fd < 0, -EINVAL
 * for a bad name, a serialize error, or a write_file_atomic_at() error (the
 * temporary file is removed; after a failed directory fsync the new state
 * is in place but may not be durable). */
int luod_state_write_file(int dir_fd, const char *name, const LuodState *s);

/* Reads and parses name in dir_fd (a directory fd or AT_FDCWD) as
 * luod_state_read_fd() does.  Returns -ENOENT when the file does not exist,
 * else as luod_state_read_fd(). */
int luod_state_read_file(int dir_fd, const char *name, LuodState *ret, char **ret_error);
