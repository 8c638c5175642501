/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-util.h"
#include "macro.h"

int json_fail(int r, char **error, const char *where, const char *key, const char *fmt, ...) {
        _cleanup_free_ char *reason = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&reason, fmt, ap) < 0)
                reason = NULL;
        va_end(ap);
        if (!reason || asprintf(error, "%s%s%s%s%s", where ?: "", where ? ": " : "",
                              key ?: "", key ? ": " : "", reason) < 0)
                *error = NULL;
        return r;
}

int json_pass_error(int r, char **error, char **ret_error) {
        if (ret_error)
                *ret_error = *error;
        else
                free(*error);
        *error = NULL;
        return r;
}

int json_parse_strict(const char *buf, size_t size, json_object **ret,
                      enum json_tokener_error *ret_tokener_error, size_t *ret_end) {
        _cleanup_(json_tokener_freep) json_tokener *tok = NULL;

        tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        *ret = json_tokener_parse_ex(tok, buf, (int) size);
        *ret_tokener_error = json_tokener_get_error(tok);
        *ret_end = json_tokener_get_parse_end(tok);
        return 0;
}

const char *json_tokener_error_reason(enum json_tokener_error e) {
        return e == json_tokener_continue ? "incomplete" : json_tokener_error_desc(e);
}

int json_parse_whole(const char *buf, size_t size, json_type type, const char *where, json_object **ret,
                     char **error) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        enum json_tokener_error e;
        size_t end;
        int r;

        r = json_parse_strict(buf, size, &o, &e, &end);
        if (r < 0)
                return r;
        if (size == 0)
                return json_fail(-EBADMSG, error, where, NULL, "empty");
        if (e != json_tokener_success || !o)
                return json_fail(-EBADMSG, error, where, NULL, "not JSON: %s at byte %zu",
                                 json_tokener_error_reason(e), end);
        for (size_t i = end; i < size; i++)
                if (!strchr(" \t\r\n", buf[i]) || buf[i] == '\0')
                        return json_fail(-EBADMSG, error, where, NULL, "data after the JSON value at byte %zu", end);
        if (type != json_type_null && !json_object_is_type(o, type))
                return json_fail(-EBADMSG, error, where, NULL, "expected %s, got %s", json_type_to_name(type),
                                 json_type_to_name(json_object_get_type(o)));
        *ret = TAKE_PTR(o);
        return 0;
}

int json_get_bdf(char **error, const char *where, json_object *o, const char *key, PciBdf *ret) {
        const char *s;
        int r;

        r = json_get_str(error, where, o, key, false, &s);
        if (r < 0)
                return r;
        if (pci_bdf_parse(s, ret) < 0)
                return json_fail(-EBADMSG, error, where, key, "\"%s\" is not a PCI address", s);
        return 1;
}

int json_add(json_object *o, const char *key, json_object *v) {
        if (!v || json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int json_get_member(char **error, const char *where, json_object *o, const char *key,
                    json_type type, bool nullable, json_object **ret) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v))
                return json_fail(-EBADMSG, error, where, key, "missing");
        if (!v && nullable) {
                *ret = NULL;
                return 0;
        }
        if (!json_object_is_type(v, type))
                return json_fail(-EBADMSG, error, where, key, "expected %s%s, got %s",
                            json_type_to_name(type), nullable ? " or null" : "",
                            json_type_to_name(json_object_get_type(v)));
        *ret = v;
        return 1;
}

int json_get_uint(char **error, const char *where, json_object *o, const char *key,
                  uint64_t max, bool nullable, uint64_t *ret) {
        json_object *v;
        uint64_t u;
        int r;

        r = json_get_member(error, where, o, key, json_type_int, nullable, &v);
        if (r <= 0)
                return r;
        if (json_object_get_int64(v) < 0)
                return json_fail(-EBADMSG, error, where, key, "%" PRId64 " is negative",
                            json_object_get_int64(v));
        u = json_object_get_uint64(v);
        if (u > max)
                return json_fail(-EBADMSG, error, where, key, "%" PRIu64 " is out of range 0..%" PRIu64,
                            u, max);
        *ret = u;
        return 1;
}

int json_get_str(char **error, const char *where, json_object *o, const char *key,
                 bool nullable, const char **ret) {
        json_object *v;
        int r;

        r = json_get_member(error, where, o, key, json_type_string, nullable, &v);
        if (r == 0)
                *ret = NULL;
        if (r <= 0)
                return r;
        if (strlen(json_object_get_string(v)) != (size_t) json_object_get_string_len(v))
                return json_fail(-EBADMSG, error, where, key, "contains a NUL character");
        *ret = json_object_get_string(v);
        return 1;
}

int json_get_strdup(char **error, const char *where, json_object *o, const char *key,
                    bool nullable, char **ret) {
        const char *s;
        int r;

        r = json_get_str(error, where, o, key, nullable, &s);
        if (r < 0)
                return r;
        if (!s) {
                *ret = NULL;
                return 0;
        }
        *ret = strdup(s);
        return *ret ? 1 : -ENOMEM;
}

const char *json_text(json_object *o, const char *key) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
                return "-";
        return json_object_get_string(v);
}
