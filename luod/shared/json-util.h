/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pci-util.h"

/* Cleanup helpers for json-c objects, and the error text of the parsers. */
static inline void json_object_putp(json_object **o) {
        json_object_put(*o);
}

static inline void json_tokener_freep(json_tokener **t) {
        if (*t)
                json_tokener_free(*t);
}

/* Sets *error to "where: key: reason" (where and key optional), or to NULL
 * when out of memory, and returns r. */
__attribute__((format(printf, 5, 6)))
int json_fail(int r, char **error, const char *where, const char *key, const char *fmt, ...);

/* Hands the message a parser left in *error (NULL or malloc'd) to the
 * caller of a public parse function: to *ret_error when it asked for one,
 * freed when ret_error is NULL.  Returns r. */
int json_pass_error(int r, char **error, char **ret_error);

/* Parses the size bytes at buf (need not be NUL-terminated) strictly
 * (JSON_TOKENER_STRICT, UTF-8 validated) as one JSON value.  Returns
 * -ENOMEM, or 0 with *ret the value (owned by the caller; NULL when the
 * text is not JSON), *ret_tokener_error json-c's verdict and *ret_end the
 * number of bytes consumed: the callers judge the rest themselves. */
int json_parse_strict(const char *buf, size_t size, json_object **ret,
                      enum json_tokener_error *ret_tokener_error, size_t *ret_end);
/* Why a json_parse_strict() failed: "incomplete" for text that ends inside
 * a value, else json-c's description of e. */
const char *json_tokener_error_reason(enum json_tokener_error e);

/* The PCI address (DDDD:BB:DD.F) under key of o in *ret.  Returns 1, or
 * json_fail()'s -EBADMSG naming where and key when it is missing, not a
 * string or not an address. */
int json_get_bdf(char **error, const char *where, json_object *o, const char *key, PciBdf *ret);

/* Exactly size bytes at buf (whitespace may follow) as one strict UTF-8
 * JSON value of the given type (json_type_null: any type).  Returns 0 with
 * it in *ret; -EBADMSG with why in *error, prefixed with where (may be
 * NULL): "empty", "not JSON: REASON at byte N", "data after the JSON value
 * at byte N", "expected TYPE, got TYPE"; -ENOMEM. */
int json_parse_whole(const char *buf, size_t size, json_type type, const char *where, json_object **ret,
                     char **error);

/* Adds v under key to the object o, taking ownership of v; a NULL v means
 * its constructor ran out of memory.  Returns 0 or -ENOMEM (v freed). */
int json_add(json_object *o, const char *key, json_object *v);

/* The getters of the parsers: member key of object o, where names o in
 * the error ("pfs[2]").  Each returns 1 with the value in *ret, 0 when the
 * member is null and nullable is true (*ret untouched, or NULL for the
 * strings), or json_fail()'s -EBADMSG when it is missing or of another
 * type. */
int json_get_member(char **error, const char *where, json_object *o, const char *key,
                    json_type type, bool nullable, json_object **ret);
/* An integer 0..max; json-c keeps integers above INT64_MAX as uint64,
 * saturated, so nothing out of range wraps. */
int json_get_uint(char **error, const char *where, json_object *o, const char *key,
                  uint64_t max, bool nullable, uint64_t *ret);
/* A string without NUL characters, borrowed from o. */
int json_get_str(char **error, const char *where, json_object *o, const char *key,
                 bool nullable, const char **ret);
/* The same, copied (-ENOMEM). */
int json_get_strdup(char **error, const char *where, json_object *o, const char *key,
                    bool nullable, char **ret);

/* The member key of o as text to print: a string as it is, another type as
 * its JSON, "-" when o is not an object or key is missing or null.  The
 * text is o's, valid while o lives. */
const char *json_text(json_object *o, const char *key);
