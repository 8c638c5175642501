/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* <state_dir>/assignments.json: the consumers' VF assignments
 * (LuodState.assignments, inventory.h) kept between luod runs.  A JSON array
 * of one object per assignment:
 *
 *     [ { "consumer": "hv1", "guest": "vm-a",
 *         "pf_identity": "dsn:00-11-22-33-44-55-66-77/00.0", "vf_index": 3,
 *         "consumer_uid": 0 } ]
 *
 * consumer, guest, pf_identity: non-empty UTF-8 strings without NUL (as
 * luod_state_utf8_valid() has it); vf_index: an
 * integer 0..65535; consumer_uid (optional; absent: the name's owner is
 * unknown): an integer 0..2^32-2.  Unknown keys are ignored.  One VF
 * (pf_identity, vf_index) is assigned at most once, and one consumer name
 * has at most one consumer_uid.  These are the rules of the "assignments" of
 * the preserved state (proto/state-format.md). */

#include <stddef.h>

#include "inventory.h"
#include "state.h"

#define ASSIGNMENTS_FILE_NAME "assignments.json"
/* Largest file accepted or written: the limit of the state that carries the
 * same assignments across a kexec. */
#define ASSIGNMENTS_SIZE_MAX LUOD_STATE_SIZE_MAX

/* Decodes size bytes at buf (need not be NUL-terminated; whitespace may
 * follow the array) strictly, all or nothing.  On success sets
 * ret->assignments and ret->n_assignments (overwritten, not freed first:
 * pass a LuodState without assignments) and touches nothing else of ret; on
 * failure ret is untouched.  Returns 0, or:
 *   -EBADMSG  not one JSON array (or not UTF-8), an element not an object,
 *             a key missing, of the wrong type or out of range (e.g. a
 *             vf_index of "5", -1 or 2^32+5), a VF assigned twice, or a
 *             consumer name with two uids;
 *   -EFBIG    size exceeds ASSIGNMENTS_SIZE_MAX;
 *   -ENOMEM.
 * If ret_error is non-NULL, *ret_error is always assigned: for -EBADMSG a
 * malloc'd message naming the entry ("assignments[2] (guest \"vm-c\"):
 * vf_index: expected int, got string"; entries count from 0), the key and
 * why it is wrong (NULL if out of memory); NULL otherwise. */
int assignments_parse(const char *buf, size_t size, LuodState *ret, char **ret_error);

/* Encodes s->assignments as the file's text (pretty-printed JSON and a
 * newline).  On success *ret_buf is a malloc'd NUL-terminated buffer of
 * *ret_size bytes (the NUL not counted).  Returns 0, or -EINVAL when an
 * assignment breaks a rule above (logged, naming it), -EFBIG beyond
 * ASSIGNMENTS_SIZE_MAX, -ENOMEM. */
int assignments_serialize(const LuodState *s, char **ret_buf, size_t *ret_size);

/* Reads the regular file name in dir_fd (a directory fd or AT_FDCWD) and
 * parses it as assignments_parse() does (same ret, ret_error, errors).
 * Also -ENOENT when it does not exist, -EBADFD when it is not a regular
 * file, -EFBIG when larger than ASSIGNMENTS_SIZE_MAX, or the negative errno
 * of openat()/fstat()/read(). */
int assignments_read_file(int dir_fd, const char *name, LuodState *ret, char **ret_error);

/* Serializes s->assignments and replaces name in dir_fd with them, mode
 * 0600, with write_file_atomic_at() (fs-util.h: dir_fd a directory fd,
 * name a plain file name).  Returns 0, an assignments_serialize() error, or
 * a write_file_atomic_at() error. */
int assignments_write_file(int dir_fd, const char *name, const LuodState *s);
