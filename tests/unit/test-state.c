/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The preserved-state format: round trip, integrity, versioning, strict
 * schema, atomic file write, memfd, and the committed example file.
 * argv[1] is the source root (for proto/state-example.luod-state). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "state.h"
#include "tap.h"

static const char *arg_srcdir;

static void make_vf(VfRecord *vf, uint32_t index, const char *bdf, const char *driver,
                    const char *driver_override, int iommu_group) {
        *vf = (VfRecord) {
                .index = index,
                .driver = driver ? strdup(driver) : NULL,
                .driver_override = driver_override ? strdup(driver_override) : NULL,
                .iommu_group = iommu_group,
        };
        CHECK(pci_bdf_parse(bdf, &vf->bdf) == 0);
}

/* One igb PF with a netdev and VF settings, one nvme PF without; the
 * content of proto/state-example.luod-state. */
static void make_state(LuodState *s) {
        PfRecord *igb, *nvme;

        *s = (LuodState) {
                .update_id = "3f6c2a9e-8b1d-4e57-9a0c-5d2e7f14b6a8",
                .old_kernel_release = strdup("7.3.0-luod"),
                .old_boot_id = "b1e0c7d2-54a3-4f1e-8c9b-2a6d0e3f7c15",
                .tsc_khz = 2495999,
                .pfs = calloc(2, sizeof(PfRecord)),
                .n_pfs = 2,
        };
        CHECK(luod_state_add_timestamp(s, "snapshot-start", UINT64_C(183401234567890),
                                       UINT64_C(1767225600123456789)) == 0);
        CHECK(luod_state_add_timestamp(s, "snapshot-end", UINT64_C(183401309442070),
                                       UINT64_C(1767225600153456789)) == 0);

        igb = &s->pfs[0];
        *igb = (PfRecord) {
                .vendor = 0x8086, .device = 0x10c9, .subsystem_vendor = 0x8086, .subsystem_device = 0,
                .identity = strdup("path:pci0000:00/0000:00:02.0/8086:10c9:8086:0000"),
                .driver = strdup("igb"),
                .numvfs = 2, .totalvfs = 7,
                .drivers_autoprobe = false,
                .netdev = strdup("enp1s0"),
                .netdev_up = true,
                .vfs = calloc(2, sizeof(VfRecord)),
                .n_vfs = 2,
        };
        CHECK(pci_bdf_parse("0000:01:00.0", &igb->bdf) == 0);
        make_vf(&igb->vfs[0], 0, "0000:01:10.0", "vfio-pci", "vfio-pci", 14);
        igb->vfs[0].settings = (VfSettings) {
                .valid = true,
                .mac = { 0x52, 0x54, 0x00, 0xab, 0xcd, 0x01 },
                .vlan = 100, .qos = 3, .vlan_proto = 0x88a8,
                .spoofchk = 1, .trust = 0, .rss_query_en = -1,
                .link_state = 2, .min_tx_rate = 100, .max_tx_rate = 1000,
        };
        make_vf(&igb->vfs[1], 1, "0000:01:10.2", "igbvf", NULL, 15);
        igb->vfs[1].settings = (VfSettings) {
                .valid = true,
                .mac = { 0x52, 0x54, 0x00, 0xab, 0xcd, 0x02 },
                .vlan_proto = 0x8100,
                .spoofchk = 0, .trust = -1, .rss_query_en = 1,
        };

        nvme = &s->pfs[1];
        *nvme = (PfRecord) {
                .vendor = 0x1b36, .device = 0x0010, .subsystem_vendor = 0x1af4, .subsystem_device = 0x1100,
                .identity = strdup("path:pci0000:00/0000:00:04.0/1b36:0010:1af4:1100"),
                .driver = strdup("nvme"),
                .numvfs = 2, .totalvfs = 4,
                .drivers_autoprobe = true,
                .vfs = calloc(2, sizeof(VfRecord)),
                .n_vfs = 2,
        };
        CHECK(pci_bdf_parse("0000:05:00.0", &nvme->bdf) == 0);
        make_vf(&nvme->vfs[0], 0, "0000:05:00.1", "vfio-pci", "vfio-pci", 16);
        make_vf(&nvme->vfs[1], 1, "0000:05:00.2", NULL, NULL, -1);
}

static bool streq_null(const char *a, const char *b) {
        return a && b ? strcmp(a, b) == 0 : a == b;
}

static void check_equal(const LuodState *a, const LuodState *b) {
        CHECK(strcmp(a->update_id, b->update_id) == 0);
        CHECK(streq_null(a->old_kernel_release, b->old_kernel_release));
        CHECK(strcmp(a->old_boot_id, b->old_boot_id) == 0);
        CHECK(a->tsc_khz == b->tsc_khz);
        CHECK(a->n_timestamps == b->n_timestamps);
        for (size_t i = 0; i < a->n_timestamps && i < b->n_timestamps; i++) {
                CHECK(streq_null(a->timestamps[i].name, b->timestamps[i].name));
                CHECK(a->timestamps[i].tsc == b->timestamps[i].tsc);
                CHECK(a->timestamps[i].realtime_ns == b->timestamps[i].realtime_ns);
        }
        CHECK(a->n_pfs == b->n_pfs);
        for (size_t i = 0; i < a->n_pfs && i < b->n_pfs; i++) {
                const PfRecord *p = &a->pfs[i], *q = &b->pfs[i];

                CHECK(pci_bdf_compare(&p->bdf, &q->bdf) == 0);
                CHECK(p->vendor == q->vendor && p->device == q->device);
                CHECK(p->subsystem_vendor == q->subsystem_vendor);
                CHECK(p->subsystem_device == q->subsystem_device);
                CHECK(streq_null(p->identity, q->identity));
                CHECK(streq_null(p->driver, q->driver));
                CHECK(p->numvfs == q->numvfs && p->totalvfs == q->totalvfs);
                CHECK(p->drivers_autoprobe == q->drivers_autoprobe);
                CHECK(streq_null(p->netdev, q->netdev));
                CHECK(p->netdev_up == q->netdev_up);
                CHECK(p->n_vfs == q->n_vfs);
                for (size_t j = 0; j < p->n_vfs && j < q->n_vfs; j++) {
                        const VfRecord *v = &p->vfs[j], *w = &q->vfs[j];
                        const VfSettings *x = &v->settings, *y = &w->settings;

                        CHECK(v->index == w->index);
                        CHECK(pci_bdf_compare(&v->bdf, &w->bdf) == 0);
                        CHECK(streq_null(v->driver, w->driver));
                        CHECK(streq_null(v->driver_override, w->driver_override));
                        CHECK(v->iommu_group == w->iommu_group);
                        CHECK(x->valid == y->valid);
                        if (!x->valid || !y->valid)
                                continue;
                        CHECK(memcmp(x->mac, y->mac, sizeof(x->mac)) == 0);
                        CHECK(x->vlan == y->vlan && x->qos == y->qos && x->vlan_proto == y->vlan_proto);
                        CHECK(x->spoofchk == y->spoofchk && x->trust == y->trust);
                        CHECK(x->rss_query_en == y->rss_query_en);
                        CHECK(x->link_state == y->link_state);
                        CHECK(x->min_tx_rate == y->min_tx_rate && x->max_tx_rate == y->max_tx_rate);
                }
        }
}

/* Frames body with a header of the given major/minor and a correct length
 * and sha256, plus extra header text. */
static char *frame(const char *body, int major, int minor, const char *extra, size_t *ret_size) {
        uint8_t md[EVP_MAX_MD_SIZE];
        unsigned md_len;
        char sha[65], *buf;
        int n;

        CHECK(EVP_Digest(body, strlen(body), md, &md_len, EVP_sha256(), NULL) == 1);
        for (unsigned i = 0; i < 32; i++)
                snprintf(sha + 2 * i, 3, "%02x", md[i]);
        n = asprintf(&buf, "{\"format\":\"luod-state\",\"major\":%d,\"minor\":%d,\"length\":%zu,"
                     "\"sha256\":\"%s\"%s}\n%s", major, minor, strlen(body), sha, extra, body);
        CHECK(n > 0);
        *ret_size = (size_t) n;
        return buf;
}

/* The body of the serialized example state as a json-c object to edit. */
static json_object *example_body(void) {
        _cleanup_luod_state_ LuodState s = {};
        _cleanup_free_ char *buf = NULL, *body = NULL;
        const char *nl;
        size_t size;

        make_state(&s);
        CHECK(luod_state_serialize(&s, &buf, &size) == 0);
        /* buf is not NUL-terminated. */
        nl = memchr(buf, '\n', size);
        body = strndup(nl + 1, size - (size_t) (nl + 1 - buf));
        return json_tokener_parse(body);
}

/* Frames the edited body o (consumed) as major 1 minor 0 and parses it;
 * returns the result, *ret_error gets the message. */
static int parse_edited(json_object *o, LuodState *ret, char **ret_error) {
        _cleanup_free_ char *body = NULL, *buf = NULL;
        size_t size;
        int r;

        CHECK(asprintf(&body, "%s\n", json_object_to_json_string(o)) > 0);
        json_object_put(o);
        buf = frame(body, 1, 0, "", &size);
        r = luod_state_parse(buf, size, ret, ret_error);
        if (ret_error && *ret_error)
                fprintf(stderr, "expected error: %s\n", *ret_error);
        return r;
}

static json_object *vf_of(json_object *body, size_t pf, size_t vf) {
        json_object *pfs, *vfs;

        CHECK(json_object_object_get_ex(body, "pfs", &pfs));
        CHECK(json_object_object_get_ex(json_object_array_get_idx(pfs, pf), "vfs", &vfs));
        return json_object_array_get_idx(vfs, vf);
}

static void test_roundtrip(void) {
        _cleanup_luod_state_ LuodState s = {}, t = {};
        _cleanup_free_ char *buf = NULL, *error = NULL;
        size_t size;

        make_state(&s);
        /* Beyond 2^63: must survive without passing through a double or int64. */
        s.timestamps[0].tsc = UINT64_C(0x8000000000000001);
        s.timestamps[1].tsc = UINT64_MAX - 1;
        s.timestamps[1].realtime_ns = UINT64_C(0xfedcba9876543210);
        s.tsc_khz = UINT64_C(0x8000000000000000);

        CHECK(luod_state_serialize(&s, &buf, &size) == 0);
        CHECK(size > 0 && buf[size - 1] == '\n');
        CHECK(strncmp(buf, "{\"format\":\"luod-state\",\"major\":1,\"minor\":3,\"length\":", 51) == 0);
        CHECK(luod_state_parse(buf, size, &t, &error) == 0);
        CHECK(!error);
        check_equal(&s, &t);
        CHECK(t.timestamps[0].tsc == UINT64_C(0x8000000000000001));
        CHECK(t.timestamps[1].tsc == UINT64_MAX - 1);
        CHECK(t.pfs[1].vfs[1].iommu_group == -1 && !t.pfs[1].vfs[1].driver);
        CHECK(!t.pfs[1].netdev && !t.pfs[1].vfs[0].settings.valid);
}

static void test_corrupt(void) {
        _cleanup_luod_state_ LuodState s = {};
        _cleanup_free_ char *buf = NULL;
        LuodState t = { .tsc_khz = 42 };
        size_t size;

        make_state(&s);
        CHECK(luod_state_serialize(&s, &buf, &size) == 0);

        /* A flipped byte in the body. */
        {
                _cleanup_free_ char *error = NULL;

                buf[size - 20] ^= 0x01;
                CHECK(luod_state_parse(buf, size, &t, &error) == -EBADMSG);
                CHECK(error && strstr(error, "sha256"));
                buf[size - 20] ^= 0x01;
        }
        /* Truncated in the body, in the header, and empty. */
        {
                _cleanup_free_ char *error = NULL;

                CHECK(luod_state_parse(buf, size - 1, &t, &error) == -EBADMSG);
                CHECK(error && strstr(error, "truncated"));
        }
        CHECK(luod_state_parse(buf, 30, &t, NULL) == -EBADMSG);
        CHECK(luod_state_parse(buf, 0, &t, NULL) == -EBADMSG);
        /* Trailing data: a second body after the first. */
        {
                _cleanup_free_ char *twice = malloc(2 * size);

                memcpy(twice, buf, size);
                memcpy(twice + size, buf, size);
                CHECK(luod_state_parse(twice, 2 * size, &t, NULL) == -EBADMSG);
        }
        CHECK(t.tsc_khz == 42 && !t.pfs);
}

static void test_versions(void) {
        _cleanup_free_ char *body = NULL;
        json_object *o = example_body();
        LuodState t = { .tsc_khz = 42 };

        CHECK(asprintf(&body, "%s\n", json_object_to_json_string(o)) > 0);
        json_object_put(o);

        /* Major 2 is refused, also when its body would parse. */
        {
                _cleanup_free_ char *buf = NULL, *error = NULL;
                size_t size;

                buf = frame(body, 2, 0, "", &size);
                CHECK(luod_state_parse(buf, size, &t, &error) == -EPROTONOSUPPORT);
                CHECK(error && strstr(error, "major"));
        }
        /* Another format. */
        {
                _cleanup_free_ char *buf = NULL;
                size_t size;

                buf = frame(body, 1, 0, "", &size);
                memcpy(strstr(buf, "luod-state"), "luod-stats", 10);
                CHECK(luod_state_parse(buf, size, &t, NULL) == -EPROTONOSUPPORT);
        }
        CHECK(t.tsc_khz == 42);

        /* Minor 7, with keys this reader does not know in the header and
         * at every level of the body, is accepted. */
        {
                _cleanup_luod_state_ LuodState s = {}, u = {};
                _cleanup_free_ char *buf = NULL, *newer = NULL, *error = NULL;
                json_object *b = example_body();
                size_t size;

                json_object_object_add(b, "x_future", json_object_new_array());
                json_object_object_add(vf_of(b, 0, 1), "x_future", json_object_new_int(7));
                CHECK(asprintf(&newer, "%s\n", json_object_to_json_string(b)) > 0);
                json_object_put(b);
                buf = frame(newer, 1, 7, ",\"x_flags\":[]", &size);
                CHECK(luod_state_parse(buf, size, &u, &error) == 0);
                CHECK(!error);
                make_state(&s);
                check_equal(&s, &u);
        }
}

static void test_schema(void) {
        LuodState t = { .tsc_khz = 42 };
        json_object *o;

        /* Missing "pfs". */
        {
                _cleanup_free_ char *error = NULL;

                o = example_body();
                json_object_object_del(o, "pfs");
                CHECK(parse_edited(o, &t, &error) == -EBADMSG);
                CHECK(error && strstr(error, "pfs"));
        }
        /* A VF BDF that does not parse names its PF and VF. */
        {
                _cleanup_free_ char *error = NULL;

                o = example_body();
                json_object_object_add(vf_of(o, 0, 1), "bdf", json_object_new_string("0000:01:10.8"));
                CHECK(parse_edited(o, &t, &error) == -EBADMSG);
                CHECK(error && strstr(error, "PF 0000:01:00.0") && strstr(error, "VF 1"));
        }
        /* Out of range, mistyped, or inconsistent. */
        {
                _cleanup_free_ char *error = NULL;
                json_object *st;

                o = example_body();
                CHECK(json_object_object_get_ex(vf_of(o, 0, 0), "settings", &st));
                json_object_object_add(st, "vlan", json_object_new_int(4096));
                CHECK(parse_edited(o, &t, &error) == -EBADMSG);
                CHECK(error && strstr(error, "vlan"));
        }
        o = example_body();
        json_object_object_add(o, "tsc_khz", json_object_new_string("2495999"));
        CHECK(parse_edited(o, &t, NULL) == -EBADMSG);

        o = example_body();
        json_object_object_add(o, "tsc_khz", json_object_new_int(-1));
        CHECK(parse_edited(o, &t, NULL) == -EBADMSG);

        o = example_body();
        json_object_object_add(o, "update_id", json_object_new_string("3F6C2A9E-8B1D-4E57-9A0C-5D2E7F14B6A8"));
        CHECK(parse_edited(o, &t, NULL) == -EBADMSG);

        o = example_body();
        json_object_object_add(vf_of(o, 1, 1), "index", json_object_new_int(0));
        CHECK(parse_edited(o, &t, NULL) == -EBADMSG);

        o = example_body();
        json_object_object_add(vf_of(o, 1, 0), "driver", json_object_new_string(""));
        CHECK(parse_edited(o, &t, NULL) == -EBADMSG);

        CHECK(t.tsc_khz == 42 && !t.pfs);
}

static void test_serialize_invalid(void) {
        _cleanup_luod_state_ LuodState s = {};
        char *buf = NULL;
        size_t size = 0;

        make_state(&s);
        s.pfs[0].vfs[0].settings.vlan = 5000;
        CHECK(luod_state_serialize(&s, &buf, &size) == -EINVAL);
        CHECK(!buf && size == 0);
        s.pfs[0].vfs[0].settings.vlan = 0;
        s.pfs[1].bdf = s.pfs[0].bdf;
        CHECK(luod_state_serialize(&s, &buf, &size) == -EINVAL);
}

static void test_file(void) {
        _cleanup_luod_state_ LuodState s = {}, t = {};
        _cleanup_free_ char *error = NULL;
        _cleanup_close_ int dfd = -EBADF;
        char dir[] = "/tmp/test-state-XXXXXX";
        struct dirent *de;
        unsigned n = 0;
        DIR *d;

        CHECK(mkdtemp(dir));
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK(dfd >= 0);

        CHECK(luod_state_read_file(dfd, "state", &t, &error) == -ENOENT);
        CHECK(!error);

        make_state(&s);
        CHECK(luod_state_write_file(dfd, "state", &s) == 0);
        /* Replacing an existing file. */
        s.pfs[0].vfs[0].settings.vlan = 200;
        CHECK(luod_state_write_file(dfd, "state", &s) == 0);
        CHECK(luod_state_write_file(dfd, "../state", &s) == -EINVAL);
        CHECK(luod_state_read_file(dfd, "state", &t, &error) == 0);
        check_equal(&s, &t);
        CHECK(t.pfs[0].vfs[0].settings.vlan == 200);

        d = opendir(dir);
        CHECK(d);
        while (d && (de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                CHECK(strcmp(de->d_name, "state") == 0);
                n++;
        }
        if (d)
                closedir(d);
        CHECK(n == 1);

        CHECK(unlinkat(dfd, "state", 0) == 0);
        CHECK(rmdir(dir) == 0);
}

static void test_memfd(void) {
        _cleanup_luod_state_ LuodState s = {}, t = {}, empty = {}, u = {};
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        fd = memfd_create("luod-state", MFD_CLOEXEC);
        CHECK(fd >= 0);
        make_state(&s);
        CHECK(luod_state_write_fd(fd, &s) == 0);
        CHECK(luod_state_read_fd(fd, &t, NULL) == 0);
        check_equal(&s, &t);

        /* A smaller state overwrites a larger one: the file is truncated. */
        empty = (LuodState) {
                .update_id = "00000000-0000-4000-8000-000000000000",
                .old_kernel_release = strdup("7.3.0"),
                .old_boot_id = "00000000-0000-4000-8000-000000000001",
        };
        CHECK(luod_state_write_fd(fd, &empty) == 0);
        CHECK(luod_state_read_fd(fd, &u, NULL) == 0);
        check_equal(&empty, &u);
        CHECK(fstat(fd, &st) == 0 && st.st_size < 400);
}

/* Minor 1: VF assignments, keyed by PF identity and VF index. */
static void test_assignments(void) {
        _cleanup_luod_state_ LuodState s = {}, t = {};
        _cleanup_free_ char *buf = NULL, *error = NULL;
        size_t size;

        make_state(&s);
        CHECK(luod_state_add_assignment(&s, "libvirt", "vm-a", "dsn:00-11-22-33-44-55-66-77", 0) == 0);
        CHECK(luod_state_add_assignment(&s, "libvirt", "vm-b", "dsn:00-11-22-33-44-55-66-77", 1) == 0);
        CHECK(luod_state_add_assignment(&s, "chv", "vm-c", "path:pci0000:00/0000:00:02.0/8086:10c9:8086:0000", 0) == 0);
        /* One VF, one guest; bad input. */
        CHECK(luod_state_add_assignment(&s, "chv", "vm-d", "dsn:00-11-22-33-44-55-66-77", 1) == -EEXIST);
        CHECK(luod_state_add_assignment(&s, "chv", "", "x", 1) == -EINVAL);
        CHECK(luod_state_add_assignment(&s, "chv", "vm-d", "x", 65536) == -EINVAL);
        CHECK(s.n_assignments == 3);
        /* Minor 2: the uid owning the consumer name, when known. */
        CHECK(s.assignments[0].consumer_uid == VF_ASSIGNMENT_NO_UID);
        s.assignments[0].consumer_uid = 0;
        s.assignments[2].consumer_uid = 64055;

        CHECK(luod_state_serialize(&s, &buf, &size) == 0);
        CHECK(luod_state_parse(buf, size, &t, &error) == 0);
        CHECK(t.n_assignments == 3);
        CHECK(t.assignments[0].consumer_uid == 0 && t.assignments[1].consumer_uid == VF_ASSIGNMENT_NO_UID &&
              t.assignments[2].consumer_uid == 64055);
        {
                /* One consumer name owned by two uids: refused. */
                _cleanup_free_ char *b2 = NULL;
                size_t n2;

                s.assignments[1].consumer_uid = 1000;
                CHECK(luod_state_serialize(&s, &b2, &n2) == -EINVAL);
                s.assignments[1].consumer_uid = 0;
                CHECK(luod_state_serialize(&s, &b2, &n2) == 0);
                s.assignments[1].consumer_uid = VF_ASSIGNMENT_NO_UID;
        }
        CHECK(t.n_assignments == 3 && strcmp(t.assignments[1].guest, "vm-b") == 0 &&
              t.assignments[1].vf_index == 1 && strcmp(t.assignments[2].consumer, "chv") == 0 &&
              strcmp(t.assignments[2].pf_identity, "path:pci0000:00/0000:00:02.0/8086:10c9:8086:0000") == 0);

        /* Removal: only by the holding guest when one is named. */
        CHECK(luod_state_remove_assignment(&t, "vm-a", "dsn:00-11-22-33-44-55-66-77", 1) == -ENOENT);
        CHECK(luod_state_remove_assignment(&t, "vm-b", "dsn:00-11-22-33-44-55-66-77", 1) == 0);
        CHECK(t.n_assignments == 2 && strcmp(t.assignments[1].guest, "vm-c") == 0);

        /* A state that assigns one VF twice is refused, on write and on read. */
        free(s.assignments[1].pf_identity);
        s.assignments[1].pf_identity = strdup("dsn:00-11-22-33-44-55-66-77");
        s.assignments[1].vf_index = 0;
        free(buf);
        buf = NULL;
        CHECK(luod_state_serialize(&s, &buf, &size) == -EINVAL);
        {
                _cleanup_free_ char *error2 = NULL;
                LuodState u = {};

                /* Frame a body with a duplicate by hand. */
                s.assignments[1].vf_index = 1;
                CHECK(luod_state_serialize(&s, &buf, &size) == 0);
                /* buf is not NUL-terminated. */
                const char *nl = memchr(buf, '\n', size);
                _cleanup_free_ char *edited = strndup(nl + 1, size - (size_t) (nl + 1 - buf));
                char *dup = strstr(edited, "\"vf_index\": 1");
                CHECK(dup != NULL);
                if (dup) {
                        char *d = strstr(edited, "\"vf_index\": 1");
                        d[12] = '0';
                        _cleanup_free_ char *framed = frame(edited, 1, 1, "", &size);
                        CHECK(luod_state_parse(framed, size, &u, &error2) == -EBADMSG);
                        CHECK(error2 && strstr(error2, "assigned twice"));
                        luod_state_free(&u);
                }
        }
}


/* One identity names one PF: the writer and the reader refuse two PFs of
 * one identity, naming both. */
static void test_duplicate_identity(void) {
        _cleanup_luod_state_ LuodState s = {}, t = {};
        _cleanup_free_ char *buf = NULL, *error = NULL;
        size_t size;

        make_state(&s);
        CHECK(luod_state_verify(&s, &error) == 0 && !error);
        CHECK(luod_state_serialize(&s, &buf, &size) == 0);
        /* The same bytes with the second PF's identity made the first's:
         * what a dual-port card gave before the function was part of it. */
        json_object *o = NULL;
        _cleanup_free_ char *edited = NULL;
        const char *nl = memchr(buf, '\n', size);
        CHECK(nl);
        _cleanup_free_ char *body = strndup(nl + 1, size - (size_t) (nl + 1 - buf));
        o = json_tokener_parse(body);
        CHECK(o);
        json_object *pfs = json_object_object_get(o, "pfs");
        json_object_object_add(json_object_array_get_idx(pfs, 1), "identity",
                               json_object_new_string(s.pfs[0].identity));
        size_t n;
        edited = frame(json_object_to_json_string(o), 1, 3, "", &n);
        json_object_put(o);
        CHECK(luod_state_parse(edited, n, &t, &error) == -EBADMSG);
        CHECK(error && strstr(error, "PF 0000:05:00.0: identity:") && strstr(error, "also the identity of PF 0000:01:00.0"));
        if (error)
                fprintf(stderr, "duplicate identity: %s\n", error);

        free(s.pfs[1].identity);
        s.pfs[1].identity = strdup(s.pfs[0].identity);
        free(error);
        error = NULL;
        CHECK(luod_state_verify(&s, &error) == -EINVAL);
        CHECK(error && strstr(error, "0000:05:00.0") && strstr(error, "0000:01:00.0"));
        free(buf);
        buf = NULL;
        CHECK(luod_state_serialize(&s, &buf, &size) == -EINVAL);
}

/* Whatever is written can be read back: a name the kernel accepts but JSON
 * cannot carry (not UTF-8) is refused before anything is written. */
static void test_utf8(void) {
        _cleanup_luod_state_ LuodState s = {};
        _cleanup_free_ char *buf = NULL, *error = NULL;
        size_t size;

        make_state(&s);
        free(s.pfs[0].netdev);
        s.pfs[0].netdev = strdup("eth\xff\xfe");
        CHECK(luod_state_verify(&s, &error) == -EINVAL);
        CHECK(error && strstr(error, "PF 0000:01:00.0: netdev: ") && strstr(error, "UTF-8"));
        CHECK(luod_state_serialize(&s, &buf, &size) == -EINVAL);
        /* Overlong "/" and a UTF-16 surrogate are not UTF-8 either; 4-byte
         * forms are. */
        free(s.pfs[0].netdev);
        s.pfs[0].netdev = strdup("a\xc0\xaf");
        CHECK(luod_state_verify(&s, NULL) == -EINVAL);
        free(s.pfs[0].netdev);
        s.pfs[0].netdev = strdup("a\xed\xa0\x80");
        CHECK(luod_state_verify(&s, NULL) == -EINVAL);
        free(s.pfs[0].netdev);
        s.pfs[0].netdev = strdup("n\xc3\xa9t\xf0\x9f\x98\x80");
        CHECK(luod_state_verify(&s, NULL) == 0);
        CHECK(luod_state_serialize(&s, &buf, &size) == 0);
}

/* The consuming boot and attempt travel with the state (minor 3). */
static void test_consumed(void) {
        _cleanup_luod_state_ LuodState s = {}, t = {}, u = {};
        _cleanup_free_ char *buf = NULL, *buf2 = NULL, *error = NULL;
        size_t size, size2;

        make_state(&s);
        CHECK(luod_state_serialize(&s, &buf, &size) == 0);
        CHECK(!memmem(buf, size, "consumed", 8));
        CHECK(luod_state_parse(buf, size, &t, &error) == 0);
        CHECK(t.consumed_boot_id[0] == '\0' && t.consumed_attempt == 0);

        strcpy(s.consumed_boot_id, "0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5");
        s.consumed_attempt = 2;
        free(buf);
        buf = NULL;
        CHECK(luod_state_serialize(&s, &buf, &size) == 0);
        CHECK(luod_state_parse(buf, size, &u, &error) == 0);
        CHECK(strcmp(u.consumed_boot_id, s.consumed_boot_id) == 0 && u.consumed_attempt == 2);
        CHECK(luod_state_serialize(&u, &buf2, &size2) == 0);
        CHECK(size2 == size && memcmp(buf, buf2, size) == 0);

        s.consumed_attempt = 0;
        CHECK(luod_state_verify(&s, &error) == -EINVAL);
        CHECK(error && strstr(error, "consumed: attempt"));
        free(error);
        error = NULL;
        strcpy(s.consumed_boot_id, "not-a-uuid");
        s.consumed_attempt = 1;
        CHECK(luod_state_verify(&s, &error) == -EINVAL);
        CHECK(error && strstr(error, "consumed: boot_id"));
}

static void add_pf(LuodState *s, const char *bdf, const char *identity) {
        PfRecord *p = reallocarray(s->pfs, s->n_pfs + 1, sizeof(PfRecord));

        CHECK(p);
        s->pfs = p;
        p[s->n_pfs] = (PfRecord) { .vendor = 0x8086, .device = 0x10c9,
                                   .identity = identity ? strdup(identity) : NULL };
        CHECK(pci_bdf_parse(bdf, &p[s->n_pfs].bdf) == 0);
        s->n_pfs++;
}

static void test_identity_forms(void) {
        _cleanup_free_ char *a = pf_identity_without_function("dsn:00-11-22-33-44-55-66-77/00.1");
        _cleanup_free_ char *b = pf_identity_without_function("path:pci0000:00/0000:00:02.0/00.1/8086:10c9:1af4:1100");
        _cleanup_free_ char *c = pf_identity_without_function("path:pci0000:00/0000:00:02.0/8086:10c9:1af4:1100");
        _cleanup_free_ char *d = pf_identity_without_function("dsn:00-11-22-33-44-55-66-77");
        _cleanup_free_ char *e = pf_identity_without_function("path:pci0000:00/1f.7/8086:10c9:1af4:1100");

        CHECK(a && strcmp(a, "dsn:00-11-22-33-44-55-66-77") == 0);
        CHECK(b && strcmp(b, "path:pci0000:00/0000:00:02.0/8086:10c9:1af4:1100") == 0);
        CHECK(!c && errno == 0);        /* the parent's own "02.0" is no function part */
        CHECK(!d && errno == 0);
        CHECK(e && strcmp(e, "path:pci0000:00/8086:10c9:1af4:1100") == 0);
}

/* Assignments saved before the function was in the identity follow their
 * PF, unless the PF cannot be told (two ports, one old identity). */
static void test_upgrade_assignments(void) {
        _cleanup_luod_state_ LuodState s = {};

        add_pf(&s, "0000:01:00.0", "path:pci0000:00/0000:00:02.0/00.0/8086:10c9:1af4:1100");
        add_pf(&s, "0000:01:00.1", "path:pci0000:00/0000:00:02.0/00.1/8086:10c9:1af4:1100");
        add_pf(&s, "0000:05:00.0", "dsn:00-11-22-33-44-55-66-77/00.0");
        CHECK(luod_state_add_assignment(&s, "hv", "g1", "dsn:00-11-22-33-44-55-66-77", 1) == 0);
        CHECK(luod_state_add_assignment(&s, "hv", "g2", "path:pci0000:00/0000:00:02.0/8086:10c9:1af4:1100", 1) == 0);
        CHECK(luod_state_add_assignment(&s, "hv", "g3", "dsn:00-11-22-33-44-55-66-77/00.0", 2) == 0);
        CHECK(luod_state_upgrade_assignments(&s) == 1);
        CHECK(strcmp(s.assignments[0].pf_identity, "dsn:00-11-22-33-44-55-66-77/00.0") == 0);
        CHECK(strcmp(s.assignments[1].pf_identity, "path:pci0000:00/0000:00:02.0/8086:10c9:1af4:1100") == 0);
        CHECK(strcmp(s.assignments[2].pf_identity, "dsn:00-11-22-33-44-55-66-77/00.0") == 0);
        CHECK(luod_state_upgrade_assignments(&s) == 0);
}

/* Records and devices, one to one. */
static void test_match(void) {
        _cleanup_luod_state_ LuodState want = {}, now = {}, old = {}, dsn = {};
        ssize_t m[4];

        /* Dual-port card: two functions in one slot, each its own record,
         * and a device moved to another bus since. */
        add_pf(&now, "0000:01:00.0", "path:pci0000:00/0000:00:02.0/00.0/8086:10c9:1af4:1100");
        add_pf(&now, "0000:01:00.1", "path:pci0000:00/0000:00:02.0/00.1/8086:10c9:1af4:1100");
        add_pf(&now, "0000:07:00.0", "dsn:00-11-22-33-44-55-66-77/00.0");
        add_pf(&want, "0000:01:00.0", "path:pci0000:00/0000:00:02.0/00.0/8086:10c9:1af4:1100");
        add_pf(&want, "0000:01:00.1", "path:pci0000:00/0000:00:02.0/00.1/8086:10c9:1af4:1100");
        add_pf(&want, "0000:03:00.0", "dsn:00-11-22-33-44-55-66-77/00.0");
        add_pf(&want, "0000:04:00.0", "dsn:00-11-22-33-44-55-66-88/00.0");
        CHECK(luod_state_match_pfs(&want, &now, m) == 0);
        CHECK(m[0] == 0 && m[1] == 1 && m[2] == 2);
        CHECK(m[3] == -ENODEV);         /* a serial number gone: no BDF fallback */

        /* A state from before the function was in the identity: both
         * ports had one identity; the BDF tells them apart. */
        add_pf(&old, "0000:01:00.1", "path:pci0000:00/0000:00:02.0/8086:10c9:1af4:1100");
        CHECK(luod_state_match_pfs(&old, &now, m) == 0);
        CHECK(m[0] == 1);
        add_pf(&old, "0000:09:00.0", "path:pci0000:00/0000:00:02.0/8086:10c9:1af4:1100");
        CHECK(luod_state_match_pfs(&old, &now, m) == 0);
        CHECK(m[0] == 1 && m[1] == 0);  /* the one left */
        add_pf(&old, "0000:0a:00.0", "path:pci0000:00/0000:00:02.0/8086:10c9:1af4:1100");
        CHECK(luod_state_match_pfs(&old, &now, m) == 0);
        CHECK(m[2] == -ENODEV);         /* both taken: never one device twice */

        _cleanup_luod_state_ LuodState amb = {};
        add_pf(&amb, "0000:09:00.0", "path:pci0000:00/0000:00:02.0/8086:10c9:1af4:1100");
        CHECK(luod_state_match_pfs(&amb, &now, m) == 0);
        CHECK(m[0] == -ENOTUNIQ);

        /* The BDF hint serves a record whose identity is gone, once. */
        add_pf(&dsn, "0000:01:00.0", "path:pci0000:00/0000:00:09.0/00.0/8086:10c9:1af4:1100");
        add_pf(&dsn, "0000:01:00.0", "path:pci0000:00/0000:00:0a.0/00.0/8086:10c9:1af4:1100");
        CHECK(luod_state_match_pfs(&dsn, &now, m) == 0);
        CHECK(m[0] == 0 && m[1] == -ENODEV);
}

static void test_example(void) {
        _cleanup_luod_state_ LuodState s = {}, t = {};
        _cleanup_free_ char *path = NULL, *error = NULL;

        CHECK(asprintf(&path, "%s/proto/state-example.luod-state", arg_srcdir) > 0);
        CHECK(luod_state_read_file(AT_FDCWD, path, &t, &error) == 0);
        if (error)
                fprintf(stderr, "%s: %s\n", path, error);
        CHECK(strcmp(t.update_id, "3f6c2a9e-8b1d-4e57-9a0c-5d2e7f14b6a8") == 0);
        CHECK(t.n_pfs == 2 && t.pfs[0].n_vfs == 2);
        CHECK(t.n_timestamps == 2 && t.timestamps[0].tsc == UINT64_C(183401234567890));
        CHECK(t.n_pfs == 2 && t.pfs[0].n_vfs == 2 && t.pfs[0].vfs[0].settings.vlan_proto == 0x88a8);
        make_state(&s);
        check_equal(&s, &t);
}

int main(int argc, char *argv[]) {
        if (argc != 2) {
                fprintf(stderr, "usage: %s SOURCE-ROOT\n", argv[0]);
                return 2;
        }
        arg_srcdir = argv[1];

        test_roundtrip();
        test_corrupt();
        test_versions();
        test_schema();
        test_serialize_invalid();
        test_file();
        test_memfd();
        test_example();
        test_assignments();
        test_duplicate_identity();
        test_utf8();
        test_consumed();
        test_identity_forms();
        test_match();
        test_upgrade_assignments();
        return tap_failures ? 1 : 0;
}
