/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <sha2.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fs-util.h"
#include "json-util.h"
#include "io-util.h"
#include "log.h"
#include "macro.h"
#include "state.h"

/* 64-bit values stop one short of UINT64_MAX: json-c saturates numbers that
 * overflow to UINT64_MAX, so that value cannot be told apart from garbage. */
#define STATE_U64_MAX (UINT64_MAX - 1)
#define SHA256_HEX_SIZE 65
/* Sizes of the "PF <bdf>", "PF <bdf> VF <index>" and "... settings" prefixes
 * of error messages. */
#define PF_WHERE_MAX 48
#define VF_WHERE_MAX 96
#define SETTINGS_WHERE_MAX 112
/* Size of "assignments[N] (guest \"...\")". */
#define ASSIGNMENT_WHERE_MAX 128

static const struct {
        uint16_t proto;
        const char *name;
} vlan_protos[] = {
        { 0x8100, "802.1Q"  },
        { 0x88a8, "802.1ad" },
};

/* Indexed by IFLA_VF_LINK_STATE_*. */
static const char *const link_states[] = { "auto", "enable", "disable" };


static int unhex(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

/* Reads n (<= 4) lowercase hex digits at s; -1 when one is not. */
static int unhexn(const char *s, size_t n) {
        int v = 0;

        for (size_t i = 0; i < n; i++) {
                int d = unhex(s[i]);
                if (d < 0)
                        return -1;
                v = v << 4 | d;
        }
        return v;
}

bool luod_uuid_valid(const char *s) {
        if (strnlen(s, LUOD_UUID_STRING_MAX) != LUOD_UUID_STRING_MAX - 1)
                return false;
        for (size_t i = 0; i < LUOD_UUID_STRING_MAX - 1; i++)
                if (i == 8 || i == 13 || i == 18 || i == 23 ? s[i] != '-' : unhex(s[i]) < 0)
                        return false;
        return true;
}

/* Strict UTF-8 (RFC 3629: no overlong forms, no surrogates, at most
 * U+10FFFF): the reader parses with JSON_TOKENER_VALIDATE_UTF8, so the
 * writer must refuse what it would refuse. */
static bool utf8_valid(const char *s) {
        const unsigned char *p = (const unsigned char *) s;

        while (*p) {
                unsigned c = *p, n, min;
                uint32_t cp;

                if (c < 0x80) {
                        p++;
                        continue;
                }
                if ((c & 0xe0) == 0xc0)
                        n = 1, min = 0x80, cp = c & 0x1f;
                else if ((c & 0xf0) == 0xe0)
                        n = 2, min = 0x800, cp = c & 0x0f;
                else if ((c & 0xf8) == 0xf0)
                        n = 3, min = 0x10000, cp = c & 0x07;
                else
                        return false;
                for (unsigned i = 1; i <= n; i++) {
                        if ((p[i] & 0xc0) != 0x80)
                                return false;
                        cp = cp << 6 | (p[i] & 0x3f);
                }
                if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                        return false;
                p += n + 1;
        }
        return true;
}

bool luod_state_utf8_valid(const char *s) {
        return utf8_valid(s);
}

static bool bdf_valid(const PciBdf *b) {
        return b->device <= 0x1f && b->function <= 7;
}

static bool name_valid(const char *s, bool nullable) {
        return s ? *s != '\0' && utf8_valid(s) : nullable;
}

/* SHA-256 of p as 64 lowercase hex digits (libmd: no library state to set
 * up, which OpenSSL's first digest spends milliseconds on). */
static int sha256_hex(const void *p, size_t n, char ret[static SHA256_HEX_SIZE]) {
        _Static_assert(SHA256_HEX_SIZE == SHA256_DIGEST_STRING_LENGTH, "hex digest size");
        return SHA256Data(p, n, ret) ? 0 : -EIO;
}

/* The rules that typing alone does not enforce; checked before writing and
 * after reading, so that whatever is written can be read back. */
static int settings_verify(const VfSettings *st, const char *vf_where, char **error) {
        char where[SETTINGS_WHERE_MAX];
        size_t i;

        snprintf(where, sizeof(where), "%s settings", vf_where);
        if (st->vlan > VF_VLAN_MAX)
                return json_fail(-EBADMSG, error, where, "vlan", "%u is out of range 0..%u",
                            st->vlan, VF_VLAN_MAX);
        if (st->qos > VF_QOS_MAX)
                return json_fail(-EBADMSG, error, where, "qos", "%u is out of range 0..%u",
                            st->qos, VF_QOS_MAX);
        for (i = 0; i < ELEMENTSOF(vlan_protos); i++)
                if (vlan_protos[i].proto == st->vlan_proto)
                        break;
        if (i == ELEMENTSOF(vlan_protos))
                return json_fail(-EBADMSG, error, where, "vlan_proto", "unknown protocol 0x%04x",
                            st->vlan_proto);
        if (st->link_state >= ELEMENTSOF(link_states))
                return json_fail(-EBADMSG, error, where, "link_state", "unknown state %" PRIu32,
                            st->link_state);
        if (st->spoofchk < -1 || st->spoofchk > 1 || st->trust < -1 || st->trust > 1 ||
            st->rss_query_en < -1 || st->rss_query_en > 1)
                return json_fail(-EBADMSG, error, where, NULL, "a tri-state is not -1, 0 or 1");
        return 0;
}

static int pf_verify(const PfRecord *pf, const char *where, char **error) {
        char vf_where[VF_WHERE_MAX];
        int r;

        if (!name_valid(pf->identity, false))
                return json_fail(-EBADMSG, error, where, "identity", "empty or not valid UTF-8");
        if (!name_valid(pf->driver, false))
                return json_fail(-EBADMSG, error, where, "driver", "missing, empty or not valid UTF-8");
        if (!name_valid(pf->netdev, true))
                return json_fail(-EBADMSG, error, where, "netdev", "empty or not valid UTF-8");
        if (pf->numvfs > pf->totalvfs)
                return json_fail(-EBADMSG, error, where, "numvfs", "%" PRIu32 " exceeds totalvfs %" PRIu32,
                            pf->numvfs, pf->totalvfs);

        for (size_t i = 0; i < pf->n_vfs; i++) {
                const VfRecord *vf = &pf->vfs[i];

                snprintf(vf_where, sizeof(vf_where), "%s VF %" PRIu32, where, vf->index);
                if (vf->index >= pf->numvfs)
                        return json_fail(-EBADMSG, error, vf_where, "index", "not below numvfs %" PRIu32,
                                    pf->numvfs);
                if (i > 0 && vf->index <= pf->vfs[i - 1].index)
                        return json_fail(-EBADMSG, error, vf_where, "index",
                                    "VFs must be unique and in ascending index order");
                if (!bdf_valid(&vf->bdf))
                        return json_fail(-EBADMSG, error, vf_where, "bdf", "not a PCI address");
                if (!name_valid(vf->driver, true))
                        return json_fail(-EBADMSG, error, vf_where, "driver", "empty or not valid UTF-8");
                if (!name_valid(vf->driver_override, true))
                        return json_fail(-EBADMSG, error, vf_where, "driver_override", "empty or not valid UTF-8");
                if (vf->iommu_group < -1)
                        return json_fail(-EBADMSG, error, vf_where, "iommu_group", "negative");
                if (vf->settings.valid) {
                        r = settings_verify(&vf->settings, vf_where, error);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

int luod_state_assignments_verify(const LuodState *s, char **error) {
        char where[PF_WHERE_MAX];

        for (size_t i = 0; i < s->n_assignments; i++) {
                const VfAssignment *a = &s->assignments[i];

                snprintf(where, sizeof(where), "assignments[%zu]", i);
                if (!name_valid(a->consumer, false) || !name_valid(a->guest, false) ||
                    !name_valid(a->pf_identity, false))
                        return json_fail(-EBADMSG, error, where, NULL, "consumer, guest and pf_identity must be non-empty UTF-8");
                if (a->vf_index > 65535)
                        return json_fail(-EBADMSG, error, where, "vf_index", "%" PRIu32 " is above 65535", a->vf_index);
                for (size_t j = 0; j < i; j++) {
                        const VfAssignment *b = &s->assignments[j];

                        if (b->vf_index == a->vf_index && strcmp(b->pf_identity, a->pf_identity) == 0)
                                return json_fail(-EBADMSG, error, where, NULL,
                                            "VF %" PRIu32 " of %s is assigned twice (also assignments[%zu])",
                                            a->vf_index, a->pf_identity, j);
                        if (a->consumer_uid != VF_ASSIGNMENT_NO_UID && b->consumer_uid != VF_ASSIGNMENT_NO_UID &&
                            a->consumer_uid != b->consumer_uid && strcmp(a->consumer, b->consumer) == 0)
                                return json_fail(-EBADMSG, error, where, "consumer_uid",
                                            "consumer %s is owned by uid %" PRIu32 " and by uid %" PRIu32
                                            " (assignments[%zu])", a->consumer, b->consumer_uid,
                                            a->consumer_uid, j);
                }
        }
        return 0;
}

static int state_verify(const LuodState *s, char **error) {
        char bdf[PCI_BDF_STRING_MAX], where[PF_WHERE_MAX];
        int r;

        if (!luod_uuid_valid(s->update_id))
                return json_fail(-EBADMSG, error, NULL, "update_id", "not a lowercase UUID");
        if (!name_valid(s->old_kernel_release, false))
                return json_fail(-EBADMSG, error, NULL, "old_kernel_release", "empty or not valid UTF-8");
        if (!luod_uuid_valid(s->old_boot_id))
                return json_fail(-EBADMSG, error, NULL, "old_boot_id", "not a lowercase UUID");
        if (s->tsc_khz > STATE_U64_MAX)
                return json_fail(-EBADMSG, error, NULL, "tsc_khz", "2^64-1 is reserved");
        if (s->consumed_boot_id[0] && !luod_uuid_valid(s->consumed_boot_id))
                return json_fail(-EBADMSG, error, "consumed", "boot_id", "not a lowercase UUID");
        if (s->consumed_boot_id[0] && s->consumed_attempt == 0)
                return json_fail(-EBADMSG, error, "consumed", "attempt", "0 (the first attempt is 1)");

        for (size_t i = 0; i < s->n_timestamps; i++) {
                const StateTimestamp *t = &s->timestamps[i];

                snprintf(where, sizeof(where), "timestamps[%zu]", i);
                if (!name_valid(t->name, false))
                        return json_fail(-EBADMSG, error, where, "name", "empty or not valid UTF-8");
                if (t->tsc > STATE_U64_MAX || t->realtime_ns > STATE_U64_MAX)
                        return json_fail(-EBADMSG, error, where, NULL, "2^64-1 is reserved");
        }

        for (size_t i = 0; i < s->n_pfs; i++) {
                const PfRecord *pf = &s->pfs[i];

                if (!bdf_valid(&pf->bdf)) {
                        snprintf(where, sizeof(where), "pfs[%zu]", i);
                        return json_fail(-EBADMSG, error, where, "bdf", "not a PCI address");
                }
                snprintf(where, sizeof(where), "PF %s", pci_bdf_format(&pf->bdf, bdf));
                if (i > 0 && pci_bdf_compare(&pf->bdf, &s->pfs[i - 1].bdf) <= 0)
                        return json_fail(-EBADMSG, error, where, "bdf",
                                    "PFs must be unique and in ascending BDF order");
                r = pf_verify(pf, where, error);
                if (r < 0)
                        return r;
        }

        /* Records are matched to devices by identity after the kexec: one
         * identity must name one PF. */
        size_t first, second;
        if (luod_state_find_duplicate_identity(s, &first, &second)) {
                char other[PCI_BDF_STRING_MAX];

                snprintf(where, sizeof(where), "PF %s", pci_bdf_format(&s->pfs[second].bdf, bdf));
                return json_fail(-EBADMSG, error, where, "identity", "%s is also the identity of PF %s",
                            s->pfs[second].identity, pci_bdf_format(&s->pfs[first].bdf, other));
        }

        return luod_state_assignments_verify(s, error);
}

/* Serialization.  Every helper takes ownership of the json_object it is
 * given; a NULL one means its constructor ran out of memory (json_add()). */
static int add_null(json_object *o, const char *key) {
        return json_object_object_add(o, key, NULL) < 0 ? -ENOMEM : 0;
}

static int add_string_or_null(json_object *o, const char *key, const char *s) {
        return s ? json_add(o, key, json_object_new_string(s)) : add_null(o, key);
}

static int add_tristate(json_object *o, const char *key, int v) {
        return v < 0 ? add_null(o, key) : json_add(o, key, json_object_new_boolean(v));
}

static int add_hex16(json_object *o, const char *key, uint16_t v) {
        char buf[7];

        snprintf(buf, sizeof(buf), "0x%04x", v);
        return json_add(o, key, json_object_new_string(buf));
}

static int add_bdf(json_object *o, const char *key, const PciBdf *bdf) {
        char buf[PCI_BDF_STRING_MAX];

        return json_add(o, key, json_object_new_string(pci_bdf_format(bdf, buf)));
}

/* Adds child under key in the object parent, or appends it to the array
 * parent when key is NULL.  Returns child, or NULL when out of memory. */
static json_object *add_child(json_object *parent, const char *key, json_object *child) {
        if (!child)
                return NULL;
        if ((key ? json_object_object_add(parent, key, child) : json_object_array_add(parent, child)) < 0) {
                json_object_put(child);
                return NULL;
        }
        return child;
}

static int settings_to_json(json_object *vf, const VfSettings *st) {
        const char *proto = NULL;
        json_object *o;
        char mac[18];

        if (!st->valid)
                return add_null(vf, "settings");

        o = add_child(vf, "settings", json_object_new_object());
        if (!o)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(vlan_protos); i++)
                if (vlan_protos[i].proto == st->vlan_proto)
                        proto = vlan_protos[i].name;
        snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x",
                 st->mac[0], st->mac[1], st->mac[2], st->mac[3], st->mac[4], st->mac[5]);

        if (json_add(o, "mac", json_object_new_string(mac)) < 0 ||
            json_add(o, "vlan", json_object_new_uint64(st->vlan)) < 0 ||
            json_add(o, "qos", json_object_new_uint64(st->qos)) < 0 ||
            json_add(o, "vlan_proto", json_object_new_string(proto)) < 0 ||
            add_tristate(o, "spoofchk", st->spoofchk) < 0 ||
            add_tristate(o, "trust", st->trust) < 0 ||
            json_add(o, "link_state", json_object_new_string(link_states[st->link_state])) < 0 ||
            json_add(o, "min_tx_rate", json_object_new_uint64(st->min_tx_rate)) < 0 ||
            json_add(o, "max_tx_rate", json_object_new_uint64(st->max_tx_rate)) < 0 ||
            add_tristate(o, "rss_query_en", st->rss_query_en) < 0)
                return -ENOMEM;
        return 0;
}

static int vf_to_json(json_object *vfs, const VfRecord *vf) {
        json_object *o;

        o = add_child(vfs, NULL, json_object_new_object());
        if (!o)
                return -ENOMEM;
        if (json_add(o, "index", json_object_new_uint64(vf->index)) < 0 ||
            add_bdf(o, "bdf", &vf->bdf) < 0 ||
            add_string_or_null(o, "driver", vf->driver) < 0 ||
            add_string_or_null(o, "driver_override", vf->driver_override) < 0 ||
            (vf->iommu_group < 0 ? add_null(o, "iommu_group") :
                                   json_add(o, "iommu_group", json_object_new_int(vf->iommu_group))) < 0)
                return -ENOMEM;
        return settings_to_json(o, &vf->settings);
}

static int pf_to_json(json_object *pfs, const PfRecord *pf) {
        json_object *o, *vfs;
        int r;

        o = add_child(pfs, NULL, json_object_new_object());
        if (!o)
                return -ENOMEM;
        if (add_bdf(o, "bdf", &pf->bdf) < 0 ||
            add_hex16(o, "vendor", pf->vendor) < 0 ||
            add_hex16(o, "device", pf->device) < 0 ||
            add_hex16(o, "subsystem_vendor", pf->subsystem_vendor) < 0 ||
            add_hex16(o, "subsystem_device", pf->subsystem_device) < 0 ||
            json_add(o, "identity", json_object_new_string(pf->identity)) < 0 ||
            json_add(o, "driver", json_object_new_string(pf->driver)) < 0 ||
            json_add(o, "numvfs", json_object_new_uint64(pf->numvfs)) < 0 ||
            json_add(o, "totalvfs", json_object_new_uint64(pf->totalvfs)) < 0 ||
            json_add(o, "drivers_autoprobe", json_object_new_boolean(pf->drivers_autoprobe)) < 0 ||
            add_string_or_null(o, "netdev", pf->netdev) < 0 ||
            json_add(o, "netdev_up", json_object_new_boolean(pf->netdev_up)) < 0)
                return -ENOMEM;

        vfs = add_child(o, "vfs", json_object_new_array());
        if (!vfs)
                return -ENOMEM;
        for (size_t i = 0; i < pf->n_vfs; i++) {
                r = vf_to_json(vfs, &pf->vfs[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

int luod_state_assignment_to_json(json_object *array, const VfAssignment *a) {
        json_object *e = add_child(array, NULL, json_object_new_object());

        if (!e ||
            json_add(e, "consumer", json_object_new_string(a->consumer)) < 0 ||
            json_add(e, "guest", json_object_new_string(a->guest)) < 0 ||
            json_add(e, "pf_identity", json_object_new_string(a->pf_identity)) < 0 ||
            json_add(e, "vf_index", json_object_new_uint64(a->vf_index)) < 0 ||
            (a->consumer_uid != VF_ASSIGNMENT_NO_UID &&
             json_add(e, "consumer_uid", json_object_new_uint64(a->consumer_uid)) < 0))
                return -ENOMEM;
        return 0;
}

static int state_to_json(const LuodState *s, json_object *o) {
        json_object *timestamps, *pfs;
        int r;

        if (json_add(o, "update_id", json_object_new_string(s->update_id)) < 0 ||
            json_add(o, "old_kernel_release", json_object_new_string(s->old_kernel_release)) < 0 ||
            json_add(o, "old_boot_id", json_object_new_string(s->old_boot_id)) < 0 ||
            json_add(o, "tsc_khz", json_object_new_uint64(s->tsc_khz)) < 0)
                return -ENOMEM;
        if (s->consumed_boot_id[0]) {
                json_object *c = add_child(o, "consumed", json_object_new_object());

                if (!c ||
                    json_add(c, "boot_id", json_object_new_string(s->consumed_boot_id)) < 0 ||
                    json_add(c, "attempt", json_object_new_uint64(s->consumed_attempt)) < 0)
                        return -ENOMEM;
        }

        timestamps = add_child(o, "timestamps", json_object_new_array());
        if (!timestamps)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_timestamps; i++) {
                const StateTimestamp *t = &s->timestamps[i];
                json_object *e = add_child(timestamps, NULL, json_object_new_object());

                if (!e ||
                    json_add(e, "name", json_object_new_string(t->name)) < 0 ||
                    json_add(e, "tsc", json_object_new_uint64(t->tsc)) < 0 ||
                    json_add(e, "realtime_ns", json_object_new_uint64(t->realtime_ns)) < 0)
                        return -ENOMEM;
        }

        pfs = add_child(o, "pfs", json_object_new_array());
        if (!pfs)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_pfs; i++) {
                r = pf_to_json(pfs, &s->pfs[i]);
                if (r < 0)
                        return r;
        }

        json_object *assignments = add_child(o, "assignments", json_object_new_array());
        if (!assignments)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_assignments; i++) {
                r = luod_state_assignment_to_json(assignments, &s->assignments[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

int luod_state_verify(const LuodState *s, char **ret_error) {
        char *error = NULL;

        return json_pass_error(state_verify(s, &error) < 0 ? -EINVAL : 0, &error, ret_error);
}

int luod_state_serialize(const LuodState *s, char **ret_buf, size_t *ret_size) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_free_ char *error = NULL, *buf = NULL;
        char header[160], sha[SHA256_HEX_SIZE];
        size_t body_len, header_len;
        const char *json;
        char *p;
        int r;

        r = state_verify(s, &error);
        if (r < 0) {
                log_error("Refusing to serialize invalid state: %s", error ?: "out of memory");
                return -EINVAL;
        }

        o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        r = state_to_json(s, o);
        if (r < 0)
                return r;
        json = json_object_to_json_string_length(
                        o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE,
                        &body_len);
        if (!json)
                return -ENOMEM;

        /* The body is the JSON text and a newline. */
        buf = malloc(body_len + 1);
        if (!buf)
                return -ENOMEM;
        memcpy(buf, json, body_len);
        buf[body_len++] = '\n';
        r = sha256_hex(buf, body_len, sha);
        if (r < 0)
                return r;

        header_len = (size_t) snprintf(header, sizeof(header),
                                       "{\"format\":\"%s\",\"major\":%d,\"minor\":%d,\"length\":%zu,\"sha256\":\"%s\"}\n",
                                       LUOD_STATE_FORMAT, LUOD_STATE_MAJOR, LUOD_STATE_MINOR, body_len, sha);
        if (header_len + body_len > LUOD_STATE_SIZE_MAX)
                return -EFBIG;

        p = realloc(buf, header_len + body_len);
        if (!p)
                return -ENOMEM;
        memmove(p + header_len, p, body_len);
        memcpy(p, header, header_len);
        buf = NULL;

        *ret_buf = p;
        *ret_size = header_len + body_len;
        return 0;
}

/* Parsing.  The getters return 1 with the value, 0 for a null the key may
 * hold, or -EBADMSG with *error set. */
static int get_bool(char **error, const char *where, json_object *o, const char *key,
                    bool nullable, bool *ret) {
        json_object *v;
        int r;

        r = json_get_member(error, where, o, key, json_type_boolean, nullable, &v);
        if (r > 0)
                *ret = json_object_get_boolean(v);
        return r;
}

static int get_tristate(char **error, const char *where, json_object *o, const char *key, int *ret) {
        bool b;
        int r;

        r = get_bool(error, where, o, key, true, &b);
        if (r >= 0)
                *ret = r == 0 ? -1 : b;
        return r;
}

/* Returns a pointer into o: valid while o lives. */
static int get_uuid(char **error, const char *where, json_object *o, const char *key,
                    char ret[static LUOD_UUID_STRING_MAX]) {
        const char *s;
        int r;

        r = json_get_str(error, where, o, key, false, &s);
        if (r < 0)
                return r;
        if (!luod_uuid_valid(s))
                return json_fail(-EBADMSG, error, where, key, "\"%s\" is not a lowercase UUID", s);
        memcpy(ret, s, LUOD_UUID_STRING_MAX);
        return 1;
}


static int get_hex16(char **error, const char *where, json_object *o, const char *key, uint16_t *ret) {
        const char *s;
        int v, r;

        r = json_get_str(error, where, o, key, false, &s);
        if (r < 0)
                return r;
        v = strlen(s) == 6 && s[0] == '0' && s[1] == 'x' ? unhexn(s + 2, 4) : -1;
        if (v < 0)
                return json_fail(-EBADMSG, error, where, key, "\"%s\" is not 0x and 4 lowercase hex digits", s);
        *ret = (uint16_t) v;
        return 1;
}

/* Gets the array under key and a zeroed array of as many elements of
 * size elsize (NULL if empty). */
static int get_array(char **error, const char *where, json_object *o, const char *key,
                     size_t elsize, json_object **ret, void **ret_items, size_t *ret_n) {
        size_t n;
        int r;

        r = json_get_member(error, where, o, key, json_type_array, false, ret);
        if (r < 0)
                return r;
        n = json_object_array_length(*ret);
        *ret_items = n > 0 ? calloc(n, elsize) : NULL;
        if (n > 0 && !*ret_items)
                return -ENOMEM;
        *ret_n = n;
        return 1;
}

static int get_element(char **error, const char *where, json_object *array, const char *key,
                       size_t i, json_object **ret) {
        char k[64];

        *ret = json_object_array_get_idx(array, i);
        if (json_object_is_type(*ret, json_type_object))
                return 1;
        snprintf(k, sizeof(k), "%s[%zu]", key, i);
        return json_fail(-EBADMSG, error, where, k, "expected object, got %s",
                    json_type_to_name(json_object_get_type(*ret)));
}

static int settings_from_json(json_object *o, const char *where, VfSettings *st, char **error) {
        const char *mac, *proto, *link;
        uint64_t u;
        int r;

        st->valid = true;

        r = json_get_str(error, where, o, "mac", false, &mac);
        if (r < 0)
                return r;
        if (strlen(mac) != 17)
                return json_fail(-EBADMSG, error, where, "mac", "\"%s\" is not a MAC address", mac);
        for (size_t i = 0; i < 6; i++) {
                int b = unhexn(mac + 3 * i, 2);
                if (b < 0 || (i < 5 && mac[3 * i + 2] != ':'))
                        return json_fail(-EBADMSG, error, where, "mac", "\"%s\" is not a MAC address", mac);
                st->mac[i] = (uint8_t) b;
        }

        r = json_get_uint(error, where, o, "vlan", VF_VLAN_MAX, false, &u);
        if (r < 0)
                return r;
        st->vlan = (uint16_t) u;
        r = json_get_uint(error, where, o, "qos", VF_QOS_MAX, false, &u);
        if (r < 0)
                return r;
        st->qos = (uint8_t) u;

        r = json_get_str(error, where, o, "vlan_proto", false, &proto);
        if (r < 0)
                return r;
        st->vlan_proto = 0;
        for (size_t i = 0; i < ELEMENTSOF(vlan_protos); i++)
                if (strcmp(proto, vlan_protos[i].name) == 0)
                        st->vlan_proto = vlan_protos[i].proto;
        if (st->vlan_proto == 0)
                return json_fail(-EBADMSG, error, where, "vlan_proto",
                            "\"%s\" is not 802.1Q or 802.1ad", proto);

        r = json_get_str(error, where, o, "link_state", false, &link);
        if (r < 0)
                return r;
        for (st->link_state = 0; st->link_state < ELEMENTSOF(link_states); st->link_state++)
                if (strcmp(link, link_states[st->link_state]) == 0)
                        break;
        if (st->link_state == ELEMENTSOF(link_states))
                return json_fail(-EBADMSG, error, where, "link_state",
                            "\"%s\" is not auto, enable or disable", link);

        r = json_get_uint(error, where, o, "min_tx_rate", UINT32_MAX, false, &u);
        if (r < 0)
                return r;
        st->min_tx_rate = (uint32_t) u;
        r = json_get_uint(error, where, o, "max_tx_rate", UINT32_MAX, false, &u);
        if (r < 0)
                return r;
        st->max_tx_rate = (uint32_t) u;

        r = get_tristate(error, where, o, "spoofchk", &st->spoofchk);
        if (r < 0)
                return r;
        r = get_tristate(error, where, o, "trust", &st->trust);
        if (r < 0)
                return r;
        r = get_tristate(error, where, o, "rss_query_en", &st->rss_query_en);
        return r < 0 ? r : 0;
}

static int vf_from_json(json_object *o, const char *pf_where, size_t i, VfRecord *vf, char **error) {
        json_object *settings;
        char where[VF_WHERE_MAX], sw[SETTINGS_WHERE_MAX];
        uint64_t u;
        int r;

        snprintf(where, sizeof(where), "%s vfs[%zu]", pf_where, i);
        r = json_get_uint(error, where, o, "index", UINT32_MAX, false, &u);
        if (r < 0)
                return r;
        vf->index = (uint32_t) u;
        snprintf(where, sizeof(where), "%s VF %" PRIu32, pf_where, vf->index);

        r = json_get_bdf(error, where, o, "bdf", &vf->bdf);
        if (r < 0)
                return r;
        r = json_get_strdup(error, where, o, "driver", true, &vf->driver);
        if (r < 0)
                return r;
        r = json_get_strdup(error, where, o, "driver_override", true, &vf->driver_override);
        if (r < 0)
                return r;
        r = json_get_uint(error, where, o, "iommu_group", INT_MAX, true, &u);
        if (r < 0)
                return r;
        vf->iommu_group = r > 0 ? (int) u : -1;

        r = json_get_member(error, where, o, "settings", json_type_object, true, &settings);
        if (r <= 0)
                return r;
        snprintf(sw, sizeof(sw), "%s settings", where);
        return settings_from_json(settings, sw, &vf->settings, error);
}

static int pf_from_json(json_object *o, size_t i, PfRecord *pf, char **error) {
        char where[PF_WHERE_MAX], bdf[PCI_BDF_STRING_MAX];
        json_object *vfs;
        uint64_t u;
        int r;

        snprintf(where, sizeof(where), "pfs[%zu]", i);
        r = json_get_bdf(error, where, o, "bdf", &pf->bdf);
        if (r < 0)
                return r;
        snprintf(where, sizeof(where), "PF %s", pci_bdf_format(&pf->bdf, bdf));

        r = get_hex16(error, where, o, "vendor", &pf->vendor);
        if (r < 0)
                return r;
        r = get_hex16(error, where, o, "device", &pf->device);
        if (r < 0)
                return r;
        r = get_hex16(error, where, o, "subsystem_vendor", &pf->subsystem_vendor);
        if (r < 0)
                return r;
        r = get_hex16(error, where, o, "subsystem_device", &pf->subsystem_device);
        if (r < 0)
                return r;
        r = json_get_strdup(error, where, o, "identity", false, &pf->identity);
        if (r < 0)
                return r;
        r = json_get_strdup(error, where, o, "driver", false, &pf->driver);
        if (r < 0)
                return r;
        r = json_get_uint(error, where, o, "numvfs", UINT32_MAX, false, &u);
        if (r < 0)
                return r;
        pf->numvfs = (uint32_t) u;
        r = json_get_uint(error, where, o, "totalvfs", UINT32_MAX, false, &u);
        if (r < 0)
                return r;
        pf->totalvfs = (uint32_t) u;
        r = get_bool(error, where, o, "drivers_autoprobe", false, &pf->drivers_autoprobe);
        if (r < 0)
                return r;
        r = json_get_strdup(error, where, o, "netdev", true, &pf->netdev);
        if (r < 0)
                return r;
        r = get_bool(error, where, o, "netdev_up", false, &pf->netdev_up);
        if (r < 0)
                return r;

        r = get_array(error, where, o, "vfs", sizeof(VfRecord), &vfs, (void **) &pf->vfs, &pf->n_vfs);
        if (r < 0)
                return r;
        for (size_t j = 0; j < pf->n_vfs; j++) {
                json_object *e;

                r = get_element(error, where, vfs, "vfs", j, &e);
                if (r < 0)
                        return r;
                r = vf_from_json(e, where, j, &pf->vfs[j], error);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A non-empty UTF-8 string without NUL, copied. */
static int get_name(json_object *e, const char *where, const char *key, char **ret, char **error) {
        const char *s;
        int r;

        r = json_get_str(error, where, e, key, false, &s);
        if (r < 0)
                return r;
        if (!*s)
                return json_fail(-EBADMSG, error, where, key, "empty");
        if (!utf8_valid(s))
                return json_fail(-EBADMSG, error, where, key, "not UTF-8");
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

int luod_state_assignment_from_json(json_object *e, size_t i, VfAssignment *a, char **error) {
        char where[ASSIGNMENT_WHERE_MAX];
        uint64_t u;
        int r;

        snprintf(where, sizeof(where), "assignments[%zu]", i);
        if (!json_object_is_type(e, json_type_object))
                return json_fail(-EBADMSG, error, where, NULL, "expected object, got %s",
                            json_type_to_name(json_object_get_type(e)));
        r = get_name(e, where, "consumer", &a->consumer, error);
        if (r < 0)
                return r;
        r = get_name(e, where, "guest", &a->guest, error);
        if (r < 0)
                return r;
        /* From here on the guest names the entry too (cut at 64 bytes). */
        snprintf(where, sizeof(where), "assignments[%zu] (guest \"%.64s\")", i, a->guest);
        r = get_name(e, where, "pf_identity", &a->pf_identity, error);
        if (r < 0)
                return r;
        r = json_get_uint(error, where, e, "vf_index", 65535, false, &u);
        if (r < 0)
                return r;
        a->vf_index = (uint32_t) u;
        /* Minor 2; absent: the owner of the consumer name is unknown. */
        a->consumer_uid = VF_ASSIGNMENT_NO_UID;
        if (json_object_object_get_ex(e, "consumer_uid", NULL)) {
                r = json_get_uint(error, where, e, "consumer_uid", VF_ASSIGNMENT_NO_UID - 1, false, &u);
                if (r < 0)
                        return r;
                a->consumer_uid = (uint32_t) u;
        }
        return 0;
}

/* "assignments" (format minor 1; absent in minor 0 states: none). */
static int assignments_from_json(json_object *o, LuodState *s, char **error) {
        json_object *assignments;
        int r;

        if (!json_object_object_get_ex(o, "assignments", &assignments))
                return 0;
        r = get_array(error, NULL, o, "assignments", sizeof(VfAssignment), &assignments,
                      (void **) &s->assignments, &s->n_assignments);
        if (r < 0)
                return r;
        for (size_t i = 0; i < s->n_assignments; i++) {
                r = luod_state_assignment_from_json(json_object_array_get_idx(assignments, i), i,
                                                    &s->assignments[i], error);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int state_from_json(json_object *o, LuodState *s, char **error) {
        json_object *timestamps, *pfs, *e;
        char where[PF_WHERE_MAX];
        int r;

        r = get_uuid(error, NULL, o, "update_id", s->update_id);
        if (r < 0)
                return r;
        r = json_get_strdup(error, NULL, o, "old_kernel_release", false, &s->old_kernel_release);
        if (r < 0)
                return r;
        r = get_uuid(error, NULL, o, "old_boot_id", s->old_boot_id);
        if (r < 0)
                return r;
        r = json_get_uint(error, NULL, o, "tsc_khz", STATE_U64_MAX, false, &s->tsc_khz);
        if (r < 0)
                return r;
        /* Minor 3; absent: not applied in any boot yet. */
        if (json_object_object_get_ex(o, "consumed", NULL)) {
                json_object *c;
                uint64_t attempt;

                r = json_get_member(error, NULL, o, "consumed", json_type_object, false, &c);
                if (r >= 0)
                        r = get_uuid(error, "consumed", c, "boot_id", s->consumed_boot_id);
                if (r >= 0)
                        r = json_get_uint(error, "consumed", c, "attempt", UINT32_MAX, false, &attempt);
                if (r < 0)
                        return r;
                s->consumed_attempt = (uint32_t) attempt;
        }

        r = get_array(error, NULL, o, "timestamps", sizeof(StateTimestamp), &timestamps,
                      (void **) &s->timestamps, &s->n_timestamps);
        if (r < 0)
                return r;
        for (size_t i = 0; i < s->n_timestamps; i++) {
                StateTimestamp *t = &s->timestamps[i];

                r = get_element(error, NULL, timestamps, "timestamps", i, &e);
                if (r < 0)
                        return r;
                snprintf(where, sizeof(where), "timestamps[%zu]", i);
                r = json_get_strdup(error, where, e, "name", false, &t->name);
                if (r < 0)
                        return r;
                r = json_get_uint(error, where, e, "tsc", STATE_U64_MAX, false, &t->tsc);
                if (r < 0)
                        return r;
                r = json_get_uint(error, where, e, "realtime_ns", STATE_U64_MAX, false, &t->realtime_ns);
                if (r < 0)
                        return r;
        }

        r = get_array(error, NULL, o, "pfs", sizeof(PfRecord), &pfs, (void **) &s->pfs, &s->n_pfs);
        if (r < 0)
                return r;
        for (size_t i = 0; i < s->n_pfs; i++) {
                r = get_element(error, NULL, pfs, "pfs", i, &e);
                if (r < 0)
                        return r;
                r = pf_from_json(e, i, &s->pfs[i], error);
                if (r < 0)
                        return r;
        }

        return assignments_from_json(o, s, error);
}

/* Checks the header line (n bytes at p, without its newline) and that the
 * body_size bytes at body match its length and sha256. */
static int parse_header(const char *p, size_t n, const char *body, size_t body_size, char **error) {
        _cleanup_(json_object_putp) json_object *h = NULL;
        const char *format, *sha;
        char digest[SHA256_HEX_SIZE];
        uint64_t major, minor, length;
        int r;

        r = json_parse_whole(p, n, json_type_object, "header", &h, error);
        if (r < 0)
                return r;

        /* format and major first: another format or major may lay out the
         * rest differently. */
        r = json_get_str(error, "header", h, "format", false, &format);
        if (r < 0)
                return r;
        if (strcmp(format, LUOD_STATE_FORMAT) != 0)
                return json_fail(-EPROTONOSUPPORT, error, "header", "format",
                            "\"%s\" is not " LUOD_STATE_FORMAT, format);
        r = json_get_uint(error, "header", h, "major", UINT64_MAX, false, &major);
        if (r < 0)
                return r;
        if (major != LUOD_STATE_MAJOR)
                return json_fail(-EPROTONOSUPPORT, error, "header", "major",
                            "version %" PRIu64 " is not supported (only %d)", major, LUOD_STATE_MAJOR);

        r = json_get_uint(error, "header", h, "minor", UINT64_MAX, false, &minor);
        if (r < 0)
                return r;
        r = json_get_uint(error, "header", h, "length", UINT64_MAX, false, &length);
        if (r < 0)
                return r;
        if (length != body_size)
                return json_fail(-EBADMSG, error, "header", "length",
                            "%" PRIu64 " bytes announced but %zu follow (%s)", length, body_size,
                            length > body_size ? "truncated" : "trailing data");

        r = json_get_str(error, "header", h, "sha256", false, &sha);
        if (r < 0)
                return r;
        r = sha256_hex(body, body_size, digest);
        if (r < 0)
                return r;
        if (strcmp(sha, digest) != 0)
                return json_fail(-EBADMSG, error, "header", "sha256",
                            "mismatch: header says %s, body hashes to %s", sha, digest);
        return 0;
}

static int state_parse(const char *buf, size_t size, LuodState *ret, char **error) {
        _cleanup_(json_object_putp) json_object *body = NULL;
        _cleanup_luod_state_ LuodState s = {};
        const char *nl;
        size_t body_size;
        int r;

        if (size > LUOD_STATE_SIZE_MAX)
                return -EFBIG;
        nl = memchr(buf, '\n', size);
        if (!nl)
                return json_fail(-EBADMSG, error, "header", NULL, "no header line");
        body_size = size - (size_t) (nl + 1 - buf);

        r = parse_header(buf, (size_t) (nl - buf), nl + 1, body_size, error);
        if (r < 0)
                return r;
        r = json_parse_whole(nl + 1, body_size, json_type_object, "body", &body, error);
        if (r < 0)
                return r;
        r = state_from_json(body, &s, error);
        if (r < 0)
                return r;
        r = state_verify(&s, error);
        if (r < 0)
                return r;

        *ret = s;
        s = (LuodState) {};
        return 0;
}

int luod_state_parse(const char *buf, size_t size, LuodState *ret, char **ret_error) {
        char *error = NULL;

        return json_pass_error(state_parse(buf, size, ret, &error), &error, ret_error);
}

int luod_state_write_fd(int fd, const LuodState *s) {
        _cleanup_free_ char *buf = NULL;
        size_t size;
        int r;

        r = luod_state_serialize(s, &buf, &size);
        if (r < 0)
                return r;
        r = write_full(fd, buf, size, 0);
        if (r < 0)
                return r;
        return ftruncate(fd, (off_t) size) < 0 ? -errno : 0;
}

int luod_state_read_fd(int fd, LuodState *ret, char **ret_error) {
        _cleanup_free_ char *buf = NULL;
        size_t size;
        int r;

        if (ret_error)
                *ret_error = NULL;
        r = read_regular_fd(fd, LUOD_STATE_SIZE_MAX, &buf, &size);
        if (r < 0)
                return r;
        /* A file that shrank meanwhile read short and fails the length check. */
        return luod_state_parse(buf, size, ret, ret_error);
}

int luod_state_write_file(int dir_fd, const char *name, const LuodState *s) {
        _cleanup_free_ char *buf = NULL;
        size_t size;
        int r;

        if (dir_fd < 0)
                return -EBADF;
        if (!filename_is_valid(name))
                return -EINVAL;
        r = luod_state_serialize(s, &buf, &size);
        if (r < 0)
                return r;
        return write_file_atomic_at(dir_fd, name, buf, size, 0644);
}

int luod_state_read_file(int dir_fd, const char *name, LuodState *ret, char **ret_error) {
        _cleanup_close_ int fd = -EBADF;

        if (ret_error)
                *ret_error = NULL;
        fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        return luod_state_read_fd(fd, ret, ret_error);
}
