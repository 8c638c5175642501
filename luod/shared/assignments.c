/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assignments.h"
#include "fs-util.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"

static int parse(const char *buf, size_t size, LuodState *ret, char **error) {
        _cleanup_(json_object_putp) json_object *array = NULL;
        _cleanup_luod_state_ LuodState s = {};
        size_t n;
        int r;

        if (size > ASSIGNMENTS_SIZE_MAX)
                return -EFBIG;
        r = json_parse_whole(buf, size, json_type_array, "assignments", &array, error);
        if (r < 0)
                return r;
        n = json_object_array_length(array);
        if (n > 0) {
                s.assignments = calloc(n, sizeof(VfAssignment));
                if (!s.assignments)
                        return -ENOMEM;
                s.n_assignments = n;
        }
        for (size_t i = 0; i < n; i++) {
                r = luod_state_assignment_from_json(json_object_array_get_idx(array, i), i, &s.assignments[i], error);
                if (r < 0)
                        return r;
        }
        r = luod_state_assignments_verify(&s, error);
        if (r < 0)
                return r;

        ret->assignments = s.assignments;
        ret->n_assignments = s.n_assignments;
        s.assignments = NULL;
        s.n_assignments = 0;
        return 0;
}

int assignments_parse(const char *buf, size_t size, LuodState *ret, char **ret_error) {
        char *error = NULL;

        return json_pass_error(parse(buf, size, ret, &error), &error, ret_error);
}

int assignments_serialize(const LuodState *s, char **ret_buf, size_t *ret_size) {
        _cleanup_(json_object_putp) json_object *array = NULL;
        _cleanup_free_ char *error = NULL;
        const char *text;
        size_t len;
        char *buf;
        int r;

        r = luod_state_assignments_verify(s, &error);
        if (r < 0) {
                log_error("Refusing to write invalid VF assignments: %s", error ?: "out of memory");
                return -EINVAL;
        }
        array = json_object_new_array();
        if (!array)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_assignments; i++) {
                r = luod_state_assignment_to_json(array, &s->assignments[i]);
                if (r < 0)
                        return r;
        }
        text = json_object_to_json_string_length(array, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE,
                                                 &len);
        if (!text)
                return -ENOMEM;
        if (len + 1 > ASSIGNMENTS_SIZE_MAX)
                return -EFBIG;
        buf = malloc(len + 2);
        if (!buf)
                return -ENOMEM;
        memcpy(buf, text, len);
        buf[len++] = '\n';
        buf[len] = 0;
        *ret_buf = buf;
        *ret_size = len;
        return 0;
}

int assignments_read_file(int dir_fd, const char *name, LuodState *ret, char **ret_error) {
        _cleanup_free_ char *buf = NULL;
        size_t size;
        int r;

        if (ret_error)
                *ret_error = NULL;
        r = read_regular_file_at(dir_fd, name, ASSIGNMENTS_SIZE_MAX, &buf, &size);
        if (r < 0)
                return r;
        return assignments_parse(buf, size, ret, ret_error);
}

int assignments_write_file(int dir_fd, const char *name, const LuodState *s) {
        _cleanup_free_ char *buf = NULL;
        size_t size;
        int r;

        r = assignments_serialize(s, &buf, &size);
        if (r < 0)
                return r;
        return write_file_atomic_at(dir_fd, name, buf, size, 0600);
}
