/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "fs-util.h"
#include "kexec.h"
#include "log.h"
#include "macro.h"
#include "preserve.h"
#include "state.h"
#include "status.h"
#include "sysfs.h"
#include "update-loaded.h"

#define LOADED_NAME "loaded"
#define LOADED_SIZE_MAX 4096

int update_loaded_mark(Manager *m, const char *update_id, const char *backend) {
        _cleanup_close_ int dir_fd = -EBADF;
        char line[128], boot[LUOD_UUID_STRING_MAX];
        int r, n;

        r = procfs_read_line("sys/kernel/random/boot_id", boot, sizeof(boot));
        if (r < 0)
                return log_error_errno(r, "Update %s: this boot's id is unknown (/proc/sys/kernel/random/boot_id): %m",
                                       update_id);
        n = snprintf(line, sizeof(line), "%s %s %s\n", update_id, backend, boot);
        if (n < 0 || (size_t) n >= sizeof(line))
                return log_error_errno(-EINVAL, "Update %s: cannot name it in %s/" LOADED_NAME ": %m", update_id,
                                       m->runtime_dir);
        (void) mkdir(m->runtime_dir, 0700);
        dir_fd = open(m->runtime_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                return log_error_errno(-errno, "Update %s: cannot open %s: %m", update_id, m->runtime_dir);
        r = write_file_atomic_at(dir_fd, LOADED_NAME, line, (size_t) n, 0600);
        if (r < 0)
                return log_error_errno(r, "Update %s: cannot write %s/" LOADED_NAME ": %m", update_id,
                                       m->runtime_dir);
        return 0;
}

void update_loaded_unmark(Manager *m) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/" LOADED_NAME, m->runtime_dir);
        if (unlink(path) < 0 && errno != ENOENT)
                log_warning_errno(-errno, "Cannot remove %s: %m", path);
}

void update_unload(Manager *m) {
        (void) kexec_unload();
        update_loaded_unmark(m);
}

/* The state file holds update_id, not consumed: this boot's own outgoing
 * state of that update. */
static bool state_file_is(Manager *m, const char *update_id) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_luod_state_ LuodState s = {};
        size_t size;

        if (file_retrieve(m->state_dir, &buf, &size) < 0 || luod_state_parse(buf, size, &s, NULL) < 0)
                return false;
        return strcmp(s.update_id, update_id) == 0 && !s.consumed_boot_id[0];
}

static void remove_own_state(Manager *m, const char *update_id, const char *backend) {
        char path[PATH_MAX];

        if (strcmp(backend, backend_initrd.name) == 0) {
                snprintf(path, sizeof(path), "%s/initrd-%s", m->runtime_dir, update_id);
                backend_initrd.unpersist(m, path);
        } else if (strcmp(backend, backend_file.name) == 0 && state_file_is(m, update_id))
                backend_file.unpersist(m, NULL);
        /* luo: the session went with the process that created it. */
}

/* The update, the backend's name and the boot <runtime_dir>/loaded holds,
 * when it is a regular file "UUID NAME BOOT-ID\n" (what
 * update_loaded_mark() writes); all left empty otherwise.  Returns 0,
 * -ENOENT when there is none, -EBADMSG when it is not of that form, or the
 * negative errno of reading it (-EBADFD: not a regular file; -EFBIG: too
 * large). */
static int read_marker(const char *path, char id[static LUOD_UUID_STRING_MAX], char backend[static 16],
                       char boot[static LUOD_UUID_STRING_MAX]) {
        _cleanup_free_ char *buf = NULL;
        char *b, *bt;
        size_t size;
        int r;

        r = read_regular_file_at(AT_FDCWD, path, LOADED_SIZE_MAX, &buf, &size);
        if (r < 0)
                return r;
        if (size == 0 || buf[size - 1] != '\n' || memchr(buf, '\0', size))
                return -EBADMSG;
        buf[size - 1] = '\0';
        b = strchr(buf, ' ');
        bt = b ? strchr(b + 1, ' ') : NULL;
        if (!bt)
                return -EBADMSG;
        *b++ = '\0';
        *bt++ = '\0';
        if (!luod_uuid_valid(buf) || !luod_uuid_valid(bt) || strlen(b) < 1 || strlen(b) > 15 ||
            strspn(b, "abcdefghijklmnopqrstuvwxyz0123456789-_") != strlen(b))
                return -EBADMSG;
        strcpy(id, buf);
        strcpy(backend, b);
        strcpy(boot, bt);
        return 0;
}

int update_loaded_recover(Manager *m) {
        char path[PATH_MAX], id[LUOD_UUID_STRING_MAX] = "", backend[16] = "", msg[512];
        char boot[LUOD_UUID_STRING_MAX] = "", this_boot[LUOD_UUID_STRING_MAX] = "";
        int r;

        snprintf(path, sizeof(path), "%s/" LOADED_NAME, m->runtime_dir);
        r = read_marker(path, id, backend, boot);
        if (r == -ENOENT)
                return 0;
        /* Of another boot (a runtime dir that is not on a tmpfs): that
         * update's kexec happened; its state is the new kernel's to restore. */
        if (r >= 0 && procfs_read_line("sys/kernel/random/boot_id", this_boot, sizeof(this_boot)) >= 0 &&
            strcmp(boot, this_boot) != 0) {
                log_info("%s names update %s of boot %s, not this one: removed, nothing abandoned", path, id, boot);
                update_loaded_unmark(m);
                return 0;
        }
        /* Whatever is there, a luod of this boot may have loaded a kernel:
         * unloaded all the same, but only a well-formed marker's own state
         * is removed, and only its id shows in UpdateId. */
        if (r < 0)
                log_warning_errno(r, "%s is not a file \"UPDATE-ID BACKEND BOOT-ID\": %m; unloading the kernel all the same",
                                  path);
        snprintf(msg, sizeof(msg), "Update %s (%s) was loaded by a luod that exited before kexec -e in this boot: "
                 "abandoned, the kernel unloaded and its state removed", *id ? id : "?", *backend ? backend : "?");
        log_warning("%s", msg);
        if (*id)
                remove_own_state(m, id, backend);
        update_unload(m);
        if (*id)
                (void) status_set_string(&m->update_id, id);
        status_set_state(m, "failed", msg);
        return 1;
}
