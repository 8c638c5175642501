/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* assignments.json: parsed all or nothing and as strictly as the state's
 * assignments; written and read back through a real directory. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "assignments.h"
#include "macro.h"
#include "tap.h"

#define PF "dsn:00-11-22-33-44-55-66-77/00.0"
#define ENTRY(guest, index) "{ \"consumer\": \"hv1\", \"guest\": \"" guest "\", \"pf_identity\": \"" PF \
                            "\", \"vf_index\": " index " }"

static void check_valid(void) {
        static const char text[] =
                "[ " ENTRY("vm-a", "0") ",\n"
                "  { \"consumer\": \"hv2\", \"guest\": \"vm-b\", \"pf_identity\": \"path:pci0000:00/00.1/x\",\n"
                "    \"vf_index\": 65535, \"consumer_uid\": 1000, \"unknown-key\": [ 1 ] },\n"
                "  { \"consumer\": \"hv2\", \"guest\": \"vm-b\", \"pf_identity\": \"" PF "\", \"vf_index\": 1,\n"
                "    \"consumer_uid\": 1000 } ]\n\n";
        _cleanup_luod_state_ LuodState s = {};
        char *error = (char *) 1;

        s.tsc_khz = 42;         /* untouched */
        CHECK(assignments_parse(text, strlen(text), &s, &error) == 0);
        CHECK(!error);
        CHECK(s.tsc_khz == 42 && s.n_assignments == 3);
        if (s.n_assignments != 3)
                return;
        CHECK(strcmp(s.assignments[0].consumer, "hv1") == 0 && strcmp(s.assignments[0].guest, "vm-a") == 0 &&
              strcmp(s.assignments[0].pf_identity, PF) == 0 && s.assignments[0].vf_index == 0 &&
              s.assignments[0].consumer_uid == VF_ASSIGNMENT_NO_UID);
        CHECK(strcmp(s.assignments[1].pf_identity, "path:pci0000:00/00.1/x") == 0 &&
              s.assignments[1].vf_index == 65535 && s.assignments[1].consumer_uid == 1000);
        CHECK(s.assignments[2].vf_index == 1 && s.assignments[2].consumer_uid == 1000);

        /* An empty array: nothing assigned, not an error. */
        _cleanup_luod_state_ LuodState e = {};
        CHECK(assignments_parse("[]", 2, &e, NULL) == 0 && e.n_assignments == 0 && !e.assignments);
        /* Not NUL-terminated: exactly size bytes are parsed. */
        CHECK(assignments_parse("[]xyz", 2, &e, NULL) == 0);
}

/* text must be refused with -EBADMSG and a message containing want, leaving
 * ret as it was. */
static void check_bad(const char *text, const char *want) {
        LuodState s = { .tsc_khz = 7 };
        _cleanup_free_ char *error = NULL;
        int r;

        r = assignments_parse(text, strlen(text), &s, &error);
        CHECK(r == -EBADMSG);
        CHECK(s.n_assignments == 0 && !s.assignments && s.tsc_khz == 7);
        CHECK(error && strstr(error, want));
        if (r != -EBADMSG || !error || !strstr(error, want))
                fprintf(stderr, "  %s\n  -> %d '%s', want '%s'\n", text, r, error ?: "(null)", want);
        luod_state_free(&s);
}

static void check_bad_kinds(void) {
        check_bad("", "assignments: empty");
        check_bad("[ " ENTRY("vm-a", "0"), "not JSON: incomplete");
        check_bad("{}", "assignments: expected array, got object");
        check_bad("\"x\"", "expected array, got string");
        check_bad("[] []", "not JSON: unexpected character");
        check_bad("[ 5 ]", "assignments[0]: expected object, got int");
        check_bad("[ {\"guest\": \"vm-a\", \"pf_identity\": \"x\", \"vf_index\": 0} ]",
                  "assignments[0]: consumer: missing");
        check_bad("[ {\"consumer\": 1, \"guest\": \"vm-a\", \"pf_identity\": \"x\", \"vf_index\": 0} ]",
                  "assignments[0]: consumer: expected string, got int");
        check_bad("[ {\"consumer\": \"\", \"guest\": \"vm-a\", \"pf_identity\": \"x\", \"vf_index\": 0} ]",
                  "assignments[0]: consumer: empty");
        check_bad("[ {\"consumer\": \"a\\u0000b\", \"guest\": \"vm-a\", \"pf_identity\": \"x\", \"vf_index\": 0} ]",
                  "assignments[0]: consumer: contains a NUL character");
        check_bad("[ {\"consumer\": \"hv1\", \"guest\": null, \"pf_identity\": \"x\", \"vf_index\": 0} ]",
                  "assignments[0]: guest: expected string, got null");
        /* UTF-8 as the state has it: json-c's own check lets an overlong
         * form (C0 8F) through. */
        check_bad("[ {\"consumer\": \"v\", \"guest\": \"/\", \"pf_identity\": \"\xc0\x8f\", \"vf_index\": 0} ]",
                  "assignments[0] (guest \"/\"): pf_identity: not UTF-8");
        check_bad("[ {\"consumer\": \"hv1\", \"guest\": \"vm-a\", \"vf_index\": 0} ]",
                  "assignments[0] (guest \"vm-a\"): pf_identity: missing");
        check_bad("[ " ENTRY("vm-a", "\"5\"") " ]", "assignments[0] (guest \"vm-a\"): vf_index: expected int, got string");
        check_bad("[ " ENTRY("vm-a", "5.0") " ]", "vf_index: expected int, got double");
        check_bad("[ " ENTRY("vm-a", "true") " ]", "vf_index: expected int, got boolean");
        check_bad("[ " ENTRY("vm-a", "-1") " ]", "vf_index: -1 is negative");
        check_bad("[ " ENTRY("vm-a", "65536") " ]", "vf_index: 65536 is out of range 0..65535");
        /* 2^32+5 must not become VF 5, nor 2^64+5 anything. */
        check_bad("[ " ENTRY("vm-a", "4294967301") " ]", "vf_index: 4294967301 is out of range 0..65535");
        check_bad("[ " ENTRY("vm-a", "18446744073709551621") " ]", "vf_index: 18446744073709551615 is out of range");
        check_bad("[ {\"consumer\": \"hv1\", \"guest\": \"vm-a\", \"pf_identity\": \"x\", \"vf_index\": 0, "
                  "\"consumer_uid\": 4294967295} ]", "consumer_uid: 4294967295 is out of range 0..4294967294");
        check_bad("[ {\"consumer\": \"hv1\", \"guest\": \"vm-a\", \"pf_identity\": \"x\", \"vf_index\": 0, "
                  "\"consumer_uid\": \"0\"} ]", "consumer_uid: expected int, got string");
        /* Duplicates of one VF, even for another guest. */
        check_bad("[ " ENTRY("vm-a", "3") ", " ENTRY("vm-b", "4") ", " ENTRY("vm-c", "3") " ]",
                  "assignments[2]: VF 3 of " PF " is assigned twice (also assignments[0])");
        check_bad("[ {\"consumer\": \"hv1\", \"guest\": \"a\", \"pf_identity\": \"x\", \"vf_index\": 0, \"consumer_uid\": 0},"
                  "  {\"consumer\": \"hv1\", \"guest\": \"b\", \"pf_identity\": \"x\", \"vf_index\": 1, \"consumer_uid\": 9} ]",
                  "assignments[1]: consumer_uid: consumer hv1 is owned by uid 0 and by uid 9");
        /* Not UTF-8. */
        check_bad("[ " ENTRY("vm-\xff", "0") " ]", "not JSON");
}

/* D8: vm-a, vm-b, a malformed vm-c, vm-d: nothing is loaded, not the first
 * two. */
static void check_all_or_nothing(void) {
        static const char text[] =
                "[ " ENTRY("vm-a", "0") ", " ENTRY("vm-b", "1") ", " ENTRY("vm-c", "\"5\"") ", " ENTRY("vm-d", "2") " ]";
        _cleanup_luod_state_ LuodState s = {};
        _cleanup_free_ char *error = NULL;

        CHECK(assignments_parse(text, strlen(text), &s, &error) == -EBADMSG);
        CHECK(s.n_assignments == 0 && !s.assignments);
        CHECK(error && strcmp(error, "assignments[2] (guest \"vm-c\"): vf_index: expected int, got string") == 0);
        if (error)
                fprintf(stderr, "  (third entry bad: '%s', %zu loaded)\n", error, s.n_assignments);
}

static void check_write_read(void) {
        _cleanup_luod_state_ LuodState s = {}, t = {};
        _cleanup_free_ char *buf = NULL, *error = NULL;
        char dir[] = "/tmp/test-assignments-XXXXXX";
        struct stat st;
        size_t size;
        int dfd;

        CHECK(mkdtemp(dir));
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK(dfd >= 0);
        CHECK(assignments_read_file(dfd, ASSIGNMENTS_FILE_NAME, &t, &error) == -ENOENT && !error);

        CHECK(luod_state_add_assignment(&s, "hv1", "vm-a", PF, 0) == 0);
        CHECK(luod_state_add_assignment(&s, "hv2", "vm \"b\" / ü", PF, 65535) == 0);
        s.assignments[1].consumer_uid = 0;
        CHECK(assignments_serialize(&s, &buf, &size) == 0);
        CHECK(buf && size == strlen(buf) && buf[size - 1] == '\n');
        CHECK(assignments_write_file(dfd, ASSIGNMENTS_FILE_NAME, &s) == 0);
        CHECK(fstatat(dfd, ASSIGNMENTS_FILE_NAME, &st, 0) == 0 && (st.st_mode & 07777) == 0600);
        CHECK(assignments_read_file(dfd, ASSIGNMENTS_FILE_NAME, &t, &error) == 0 && !error);
        CHECK(t.n_assignments == 2);
        if (t.n_assignments == 2)
                CHECK(strcmp(t.assignments[1].guest, "vm \"b\" / ü") == 0 && t.assignments[1].vf_index == 65535 &&
                      t.assignments[1].consumer_uid == 0 && t.assignments[0].consumer_uid == VF_ASSIGNMENT_NO_UID);

        /* What would not read back is not written. */
        s.assignments[1].vf_index = 0;
        CHECK(assignments_write_file(dfd, ASSIGNMENTS_FILE_NAME, &s) == -EINVAL);
        luod_state_free(&t);
        CHECK(assignments_read_file(dfd, ASSIGNMENTS_FILE_NAME, &t, NULL) == 0 && t.n_assignments == 2);

        /* Not a regular file. */
        CHECK(assignments_read_file(dfd, ".", &t, &error) == -EBADFD && !error);
        CHECK(unlinkat(dfd, ASSIGNMENTS_FILE_NAME, 0) == 0);
        close(dfd);
        CHECK(rmdir(dir) == 0);
}

int main(void) {
        check_valid();
        check_bad_kinds();
        check_all_or_nothing();
        check_write_read();
        return tap_failures ? 1 : 0;
}
