/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <systemd/sd-journal.h>

#include "assignments.h"
#include "config.h"
#include "consumers.h"
#include "errors.h"
#include "events.h"
#include "fs-util.h"
#include "log.h"
#include "policy.h"
#include "macro.h"
#include "types.h"

extern uint64_t luod_start_tsc, luod_start_boottime_us;
#include "sriov.h"
#include "tsc.h"
#include "time-util.h"

#define CONSUMER_NAME_MAX 64
#define GUEST_NAME_MAX 256

static bool name_ok(const char *s, size_t max) {
        size_t n = strlen(s);

        if (n == 0 || n > max)
                return false;
        for (const char *p = s; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                      *p == '.' || *p == '_' || *p == '-'))
                        return false;
        return true;
}

/* Guest names go into logs and journal messages: no control characters. */
/* 1..max bytes without C0 controls or DEL (names and reasons end up in
 * logs, the journal and terminals). */
bool consumer_text_ok(const char *s, size_t max) {
        size_t n = strlen(s);

        if (n == 0 || n > max)
                return false;
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                if (*p < 0x20 || *p == 0x7f)
                        return false;
        return true;
}

static bool guest_name_ok(const char *s) {
        return consumer_text_ok(s, GUEST_NAME_MAX);
}

static Consumer *consumer_by_sender(Manager *m, const char *sender) {
        for (size_t i = 0; i < m->n_consumers; i++)
                if (strcmp(m->consumers[i]->sender, sender) == 0)
                        return m->consumers[i];
        return NULL;
}

static void consumer_free(Consumer *c) {
        if (!c)
                return;
        sd_bus_track_unref(c->track);
        free(c->name);
        free(c->sender);
        free(c);
}

static int on_consumer_gone(sd_bus_track *t, void *userdata) {
        Consumer *c = userdata;
        Manager *m = c->manager;

        log_info("Consumer %s (%s) disconnected; dropped, its VF assignments kept", c->name, c->sender);
        for (size_t i = 0; i < m->n_consumers; i++)
                if (m->consumers[i] == c) {
                        memmove(&m->consumers[i], &m->consumers[i + 1], (m->n_consumers - i - 1) * sizeof(Consumer *));
                        m->n_consumers--;
                        break;
                }
        consumer_free(c);
        return 0;
}

void consumers_done(Manager *m) {
        for (size_t i = 0; i < m->n_consumers; i++)
                consumer_free(m->consumers[i]);
        free(m->consumers);
        m->consumers = NULL;
        m->n_consumers = 0;
        for (size_t i = 0; i < m->n_owners; i++)
                free(m->owners[i].name);
        free(m->owners);
        m->owners = NULL;
        m->n_owners = 0;
        luod_state_free(&m->held);
}

static int open_state_dir(const Manager *m) {
        int fd = open(m->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        return fd < 0 ? log_error_errno(-errno, "Cannot open %s: %m", m->state_dir) : fd;
}

/* Renames the unusable assignments.json in dir_fd out of the way, to
 * assignments.json.broken or, when that exists (an earlier one nobody
 * looked at yet), .broken.2, .broken.3 ..., and makes the rename durable:
 * the next save must not overwrite assignments it could not read. */
static int set_aside(const Manager *m, int dir_fd, char *ret_name, size_t size) {
        int r;

        for (unsigned n = 1; n <= 100; n++) {
                if (n == 1)
                        snprintf(ret_name, size, ASSIGNMENTS_FILE_NAME ".broken");
                else
                        snprintf(ret_name, size, ASSIGNMENTS_FILE_NAME ".broken.%u", n);
                if (renameat2(dir_fd, ASSIGNMENTS_FILE_NAME, dir_fd, ret_name, RENAME_NOREPLACE) >= 0 ||
                    /* A file system without RENAME_NOREPLACE: replace the first. */
                    (errno == EINVAL && renameat(dir_fd, ASSIGNMENTS_FILE_NAME, dir_fd, ret_name) >= 0)) {
                        r = fsync_directory_at(dir_fd, ".");
                        if (r < 0)
                                log_warning_errno(r, "Cannot fsync %s after renaming %s: %m", m->state_dir, ret_name);
                        return 0;
                }
                if (errno != EEXIST)
                        return -errno;
        }
        return -EEXIST;
}

/* Loads assignments.json all or nothing: a file that cannot be read or
 * parsed whole is moved aside (set_aside()) and no assignment is loaded;
 * everything else works as with no file. */
int consumers_load(Manager *m) {
        _cleanup_luod_state_ LuodState s = {};
        _cleanup_free_ char *error = NULL;
        _cleanup_close_ int dir_fd = -EBADF;
        char aside[sizeof(ASSIGNMENTS_FILE_NAME ".broken.100")];
        int r, q;

        dir_fd = open(m->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                return errno == ENOENT ? 0 : log_error_errno(-errno, "Cannot open %s: %m", m->state_dir);
        r = assignments_read_file(dir_fd, ASSIGNMENTS_FILE_NAME, &s, &error);
        if (r == -ENOENT)
                return 0;
        if (r >= 0) {
                luod_state_free(&m->held);
                m->held = s;
                s = (LuodState) {};
                log_info("Loaded %zu VF assignments from %s/" ASSIGNMENTS_FILE_NAME, m->held.n_assignments,
                         m->state_dir);
                return 0;
        }
        q = set_aside(m, dir_fd, aside, sizeof(aside));
        if (q < 0)
                return log_error_errno(r, "Refusing %s/" ASSIGNMENTS_FILE_NAME ": %s%s%m; no VF assignment loaded, "
                                       "and the file could not be renamed aside (%s): the next AssignVF or "
                                       "UnassignVF replaces it", m->state_dir, error ?: "", error ? ": " : "",
                                       strerror(-q));
        return log_error_errno(r, "Refusing %s/" ASSIGNMENTS_FILE_NAME ": %s%s%m; no VF assignment loaded, the "
                               "file is kept as %s/%s", m->state_dir, error ?: "", error ? ": " : "", m->state_dir,
                               aside);
}

int consumers_save(Manager *m) {
        _cleanup_close_ int dir_fd = -EBADF;
        int r;

        dir_fd = open_state_dir(m);
        if (dir_fd < 0)
                return dir_fd;
        r = assignments_write_file(dir_fd, ASSIGNMENTS_FILE_NAME, &m->held);
        if (r < 0)
                return log_error_errno(r, "Cannot write %s/" ASSIGNMENTS_FILE_NAME ": %m", m->state_dir);
        return 0;
}

int consumers_copy_assignments(const Manager *m, LuodState *s) {
        for (size_t i = 0; i < m->held.n_assignments; i++) {
                const VfAssignment *a = &m->held.assignments[i];
                int r = luod_state_add_assignment(s, a->consumer, a->guest, a->pf_identity, a->vf_index);

                if (r < 0)
                        return r;
                s->assignments[s->n_assignments - 1].consumer_uid = a->consumer_uid;
        }
        return 0;
}

/* <state_dir>/assignments.update_id: the update whose assignments
 * assignments.json took over (a restore run again by a restarted luod,
 * while a failed state is kept, must not undo what consumers did since). */
#define ADOPTED_FILE_NAME "assignments.update_id"

static int adopted_path(const Manager *m, char *buf, size_t size) {
        if (snprintf(buf, size, "%s/" ADOPTED_FILE_NAME, m->state_dir) >= (int) size)
                return -ENAMETOOLONG;
        return 0;
}

static bool adopted_already(const Manager *m, const char *update_id) {
        char path[PATH_MAX], buf[LUOD_UUID_STRING_MAX + 2] = "";
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;

        if (adopted_path(m, path, sizeof(path)) < 0 || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
                return false;
        n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return false;
        buf[n] = 0;
        buf[strcspn(buf, "\n")] = 0;
        return strcmp(buf, update_id) == 0;
}

int consumers_adopt_assignments(Manager *m, const LuodState *s) {
        _cleanup_close_ int dir_fd = -EBADF;
        LuodState held = {};
        int r;

        /* As they were at the kexec, for each guest's phases (GuestRunning),
         * whatever the consumers change later. */
        for (size_t i = 0; i < s->n_assignments; i++) {
                const VfAssignment *a = &s->assignments[i];
                (void) luod_state_add_assignment(&m->restored, a->consumer, a->guest, a->pf_identity, a->vf_index);
        }
        if (adopted_already(m, s->update_id)) {
                log_info("VF assignments of update %s were taken over before (luod restarted): %s/assignments.json "
                         "kept as the consumers left it", s->update_id, m->state_dir);
                return 0;
        }

        for (size_t i = 0; i < s->n_assignments; i++) {
                const VfAssignment *a = &s->assignments[i];
                r = luod_state_add_assignment(&held, a->consumer, a->guest, a->pf_identity, a->vf_index);
                if (r < 0) {
                        luod_state_free(&held);
                        return r;
                }
                held.assignments[held.n_assignments - 1].consumer_uid = a->consumer_uid;
        }
        luod_state_free(&m->held);
        m->held = held;
        r = consumers_save(m);
        if (r < 0)
                return r;
        dir_fd = open_state_dir(m);
        if (dir_fd < 0)
                return dir_fd;
        r = write_file_atomic_at(dir_fd, ADOPTED_FILE_NAME, s->update_id, strlen(s->update_id), 0600);
        if (r < 0)
                return log_error_errno(r, "Cannot write %s/" ADOPTED_FILE_NAME ": %m", m->state_dir);
        return 0;
}

/* Names stay bound to their uid while luod runs (consumer_owner_check), so
 * they are bounded per uid, and in all; the names a uid already owns stay
 * free to reuse.  VF assignments are bounded per uid (a host has at most
 * a few thousand VFs). */
#define NAMES_PER_UID_MAX 64
#define NAMES_MAX 4096
#define ASSIGNMENTS_PER_UID_MAX 1024

/* 1 when uid may use name, binding it on first use; 0 when another uid
 * owns it (*ret_owner says which); -EDQUOT when binding it would exceed
 * NAMES_PER_UID_MAX (*ret_count: the names uid owns) or NAMES_MAX.  The
 * owner is the uid that registered the name first since luod started or,
 * before that, the one recorded with the name's VF assignments
 * (assignments.json, the preserved state): a luod restart or a kexec does
 * not free a name for whoever comes first. */
static int consumer_owner_check(Manager *m, const char *name, uid_t uid, uid_t *ret_owner, size_t *ret_count) {
        size_t count = 0;

        for (size_t i = 0; i < m->n_owners; i++) {
                if (strcmp(m->owners[i].name, name) == 0) {
                        *ret_owner = m->owners[i].uid;
                        return m->owners[i].uid == uid;
                }
                count += m->owners[i].uid == uid;
        }
        for (size_t i = 0; i < m->held.n_assignments; i++) {
                const VfAssignment *a = &m->held.assignments[i];

                if (a->consumer_uid != VF_ASSIGNMENT_NO_UID && strcmp(a->consumer, name) == 0 &&
                    a->consumer_uid != (uint32_t) uid) {
                        *ret_owner = (uid_t) a->consumer_uid;
                        return 0;
                }
        }
        *ret_count = count;
        if (count >= NAMES_PER_UID_MAX || m->n_owners >= NAMES_MAX)
                return -EDQUOT;
        ConsumerOwner *n = reallocarray(m->owners, m->n_owners + 1, sizeof(ConsumerOwner));
        if (!n)
                return 1;       /* no memory to remember: allowed this once */
        m->owners = n;
        m->owners[m->n_owners] = (ConsumerOwner) { .name = strdup(name), .uid = uid };
        if (m->owners[m->n_owners].name)
                m->n_owners++;
        return 1;
}

/* GuestRestored, unicast to the consumer name at sender (only it learns
 * about its guests), for each of its guests in the last update's report. */
static void send_guests_restored(Manager *m, const char *name, const char *sender) {
        int r;

        for (size_t i = 0; i < m->n_guests; i++) {
                const Guest *g = &m->guests[i];
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *sig = NULL;

                if (strcmp(g->consumer, name) != 0)
                        continue;
                r = sd_bus_message_new_signal(m->bus, &sig, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE, "GuestRestored");
                if (r >= 0)
                        r = sd_bus_message_set_destination(sig, sender);
                if (r >= 0)
                        r = sd_bus_message_append(sig, "sssb", name, g->name, g->error ?: "",
                                                  g->result != GUEST_RESULT_FAILED);
                if (r >= 0)
                        r = sd_bus_send(m->bus, sig, NULL);
                if (r < 0)
                        log_warning_errno(r, "GuestRestored to consumer %s (%s): %m", name, sender);
        }
}

/* Whether sender may register as consumer name: a valid name, a sender
 * not registered yet under any name, a name no other sender holds.
 * Returns 0, or an error set in error. */
static int consumer_name_available(Manager *m, const char *name, const char *sender, sd_bus_error *error) {
        Consumer *c;

        if (!name_ok(name, CONSUMER_NAME_MAX))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Consumer name '%.80s%s' must be 1..%d of [A-Za-z0-9._-]", name,
                                         strlen(name) > 80 ? "..." : "", CONSUMER_NAME_MAX);
        if (!sender)
                return sd_bus_error_set_errnof(error, EINVAL, "A consumer must call over a bus (no sender)");
        c = consumer_by_sender(m, sender);
        if (c)
                return sd_bus_error_setf(error, LUOD_ERROR_NAME_TAKEN, "%s is already registered as consumer %s",
                                         sender, c->name);
        for (size_t i = 0; i < m->n_consumers; i++)
                if (strcmp(m->consumers[i]->name, name) == 0)
                        return sd_bus_error_setf(error, LUOD_ERROR_NAME_TAKEN, "Consumer name %s is taken by %s",
                                                 name, m->consumers[i]->sender);
        return 0;
}

/* The uid of the caller of msg (its effective uid where the bus knows
 * it), and whether that uid may take name.  A name belongs to the uid that
 * registered it first since luod started: no one else may take it (and
 * with it the consumer's events, guests and inhibitors) while its owner is
 * away.  Returns 0, or an error set in error. */
static int consumer_uid_check(Manager *m, sd_bus_message *msg, const char *name, const char *sender,
                              uid_t *ret_uid, sd_bus_error *error) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        size_t owned = 0;
        uid_t uid, owner;
        int r;

        r = sd_bus_query_sender_creds(msg, SD_BUS_CREDS_EUID | SD_BUS_CREDS_UID | SD_BUS_CREDS_AUGMENT, &creds);
        if (r >= 0 && sd_bus_creds_get_euid(creds, &uid) < 0)
                r = sd_bus_creds_get_uid(creds, &uid);
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "Cannot learn the uid of %s: %m", sender);
        r = consumer_owner_check(m, name, uid, &owner, &owned);
        if (r == -EDQUOT)
                return sd_bus_error_setf(error, LUOD_ERROR_TOO_MANY, "Consumer name %s: uid %u owns %zu names of at "
                                         "most %d, all uids %zu of at most %d; reuse one of them",
                                         name, (unsigned) uid, owned, NAMES_PER_UID_MAX, m->n_owners, NAMES_MAX);
        if (r == 0)
                return sd_bus_error_setf(error, LUOD_ERROR_NOT_PERMITTED,
                                         "Consumer name %s belongs to uid %u (it registered it "
                                         "first, or its VF assignments were made by it); uid %u may not take it",
                                         name, (unsigned) owner, (unsigned) uid);
        *ret_uid = uid;
        return 0;
}

/* Adds the consumer name at the sender of msg, tracked so that it goes
 * when the sender does.  Returns 0 or a negative errno. */
static int consumer_add(Manager *m, sd_bus_message *msg, const char *name, const char *sender, uid_t uid,
                        bool privileged) {
        Consumer *c, **n;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->manager = m;
        c->uid = uid;
        c->privileged = privileged;
        c->name = strdup(name);
        c->sender = strdup(sender);
        r = c->name && c->sender ? sd_bus_track_new(m->bus, &c->track, on_consumer_gone, c) : -ENOMEM;
        if (r >= 0)
                r = sd_bus_track_add_sender(c->track, msg);
        n = r >= 0 ? reallocarray(m->consumers, m->n_consumers + 1, sizeof(Consumer *)) : NULL;
        if (!n) {
                consumer_free(c);
                return r < 0 ? r : -ENOMEM;
        }
        m->consumers = n;
        m->consumers[m->n_consumers++] = c;
        return 0;
}

int method_register_consumer(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        const char *name, *sender = sd_bus_message_get_sender(msg);
        uid_t uid = (uid_t) -1;
        int r;

        r = sd_bus_message_read(msg, "s", &name);
        if (r < 0)
                return r;
        r = consumer_name_available(m, name, sender, error);
        if (r < 0)
                return r;
        r = consumer_uid_check(m, msg, name, sender, &uid, error);
        if (r < 0)
                return r;
        /* Fixed for the connection: the groups the bus recorded at connect. */
        r = policy_sender_privileged(m->bus, sender, uid, m->have_consumer_gid, m->consumer_gid);
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "Cannot learn the groups of %s: %m", sender);
        r = consumer_add(m, msg, name, sender, uid, r > 0);
        if (r < 0)
                return r;
        log_info("Consumer %s registered (%s)", name, sender);
        r = sd_bus_reply_method_return(msg, NULL);
        if (r < 0)
                return r;

        /* Its guests of the last live update: restored or not, now (the
         * restore ran before luod took its bus name). */
        send_guests_restored(m, name, sender);
        /* Then the device events of its PFs it was not sent yet, in order. */
        (void) events_consumer_registered(m, name, sender);
        return 0;
}

/* The calling consumer, or an error naming why not. */
Consumer *consumer_caller(Manager *m, sd_bus_message *msg, sd_bus_error *error, int *ret) {
        const char *sender = sd_bus_message_get_sender(msg);
        Consumer *c = sender ? consumer_by_sender(m, sender) : NULL;

        if (!c)
                *ret = sd_bus_error_setf(error, LUOD_ERROR_NOT_CONSUMER,
                                         "%s is not a registered consumer (RegisterConsumer first)",
                                         sender ?: "the caller");
        return c;
}

/* AssignVF's and UnassignVF's arguments and caller.  The record of the VF
 * assignments an update carries is taken at its preflight: they do not
 * change until the update ends. */
typedef struct AssignmentCall {
        const char *guest, *identity;
        uint32_t index;
        Consumer *c;
} AssignmentCall;

static int assignment_args(Manager *m, sd_bus_message *msg, sd_bus_error *error, AssignmentCall *a) {
        int r;

        r = sd_bus_message_read(msg, "ssu", &a->guest, &a->identity, &a->index);
        if (r < 0)
                return r;
        a->c = consumer_caller(m, msg, error, &r);
        if (!a->c)
                return r;
        if (manager_update_busy(m))
                return sd_bus_error_setf(error, LUOD_ERROR_UPDATE_IN_PROGRESS,
                                         "Update %s is in progress: its record of the VF assignments was taken at "
                                         "its preflight; assign or unassign after it", manager_update_busy(m));
        return 0;
}

int method_assign_vf(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_luod_state_ LuodState now = {};
        const PfRecord *pf = NULL;
        AssignmentCall call;
        int r = 0;

        r = assignment_args(m, msg, error, &call);
        if (r < 0)
                return r;
        if (!call.c->privileged)
                return policy_refuse(m, call.c, "assign VFs", error);
        if (!guest_name_ok(call.guest))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Guest name must be 1..%d bytes, no control characters", GUEST_NAME_MAX);
        size_t mine = 0;
        for (size_t i = 0; i < m->held.n_assignments; i++)
                mine += m->held.assignments[i].consumer_uid == (uint32_t) call.c->uid;
        if (mine >= ASSIGNMENTS_PER_UID_MAX)
                return sd_bus_error_setf(error, LUOD_ERROR_TOO_MANY, "Consumer %s: uid %u holds %zu VF assignments "
                                         "of at most %d", call.c->name, (unsigned) call.c->uid, mine,
                                         ASSIGNMENTS_PER_UID_MAX);
        r = sriov_scan(&now);
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "Scanning the SR-IOV PFs: %m");
        for (size_t i = 0; i < now.n_pfs && !pf; i++)
                if (now.pfs[i].identity && strcmp(now.pfs[i].identity, call.identity) == 0)
                        pf = &now.pfs[i];
        if (!pf)
                return sd_bus_error_setf(error, LUOD_ERROR_NO_SUCH_PF,
                                         "No SR-IOV PF with identity '%s' (luoctl vfs)", call.identity);
        if (call.index >= pf->totalvfs)
                return sd_bus_error_setf(error, LUOD_ERROR_NO_SUCH_VF, "PF %s has sriov_totalvfs %u: no VF %u",
                                         call.identity, pf->totalvfs, call.index);
        for (size_t i = 0; i < m->held.n_assignments; i++) {
                const VfAssignment *a = &m->held.assignments[i];

                if (a->vf_index == call.index && strcmp(a->pf_identity, call.identity) == 0)
                        return sd_bus_error_setf(error, LUOD_ERROR_VF_BUSY,
                                                 "VF %u of PF %s is held by guest %s of consumer %s",
                                                 call.index, call.identity, a->guest, a->consumer);
        }
        r = luod_state_add_assignment(&m->held, call.c->name, call.guest, call.identity, call.index);
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "Assigning VF %u of PF %s to %s: %m",
                                               call.index, call.identity, call.guest);
        m->held.assignments[m->held.n_assignments - 1].consumer_uid = (uint32_t) call.c->uid;
        r = consumers_save(m);
        if (r < 0) {
                (void) luod_state_remove_assignment(&m->held, call.guest, call.identity, call.index);
                return sd_bus_error_set_errnof(error, -r, "Saving %s/assignments.json: %m", m->state_dir);
        }
        log_info("Consumer %s: guest %s holds VF %u of PF %s", call.c->name, call.guest, call.index, call.identity);
        return sd_bus_reply_method_return(msg, NULL);
}

int method_unassign_vf(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        AssignmentCall call;
        int r = 0;

        r = assignment_args(m, msg, error, &call);
        if (r < 0)
                return r;
        for (size_t i = 0; i < m->held.n_assignments; i++) {
                const VfAssignment *a = &m->held.assignments[i];

                if (a->vf_index == call.index && strcmp(a->pf_identity, call.identity) == 0 &&
                    strcmp(a->guest, call.guest) == 0 && strcmp(a->consumer, call.c->name) != 0)
                        return sd_bus_error_setf(error, LUOD_ERROR_NOT_PERMITTED,
                                                 "VF %u of PF %s was assigned by consumer %s, not %s",
                                                 call.index, call.identity, a->consumer, call.c->name);
        }
        r = luod_state_remove_assignment(&m->held, call.guest, call.identity, call.index);
        if (r < 0)
                return r == -ENOENT ?
                        sd_bus_error_setf(error, LUOD_ERROR_NO_SUCH_VF,
                                          "Guest %s holds no VF %u of PF %s", call.guest, call.index,
                                          call.identity) :
                        sd_bus_error_set_errnof(error, -r, "Guest %s holds no VF %u of PF %s",
                                                call.guest, call.index, call.identity);
        r = consumers_save(m);
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "Saving %s/assignments.json: %m", m->state_dir);
        log_info("Consumer %s: guest %s released VF %u of PF %s", call.c->name, call.guest, call.index, call.identity);
        return sd_bus_reply_method_return(msg, NULL);
}

int method_get_assignments(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_return(msg, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(sssu)");
        for (size_t i = 0; r >= 0 && i < m->held.n_assignments; i++) {
                const VfAssignment *a = &m->held.assignments[i];

                r = sd_bus_message_append(reply, "(sssu)", a->consumer, a->guest, a->pf_identity, a->vf_index);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}



