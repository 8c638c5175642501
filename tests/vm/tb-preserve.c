/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tb-preserve: drives luod's state backends (preserve.h) and kexec helpers
 * (kexec.h) in the VM test bed.  Prints "key=value" lines; a failure value
 * is the errno name (luo=ENOENT).
 *   tb-preserve save TEXT INITRD_IN INITRD_OUT
 *       preserves the bytes of TEXT three ways: LUO (the session fd is
 *       handed to a setsid() child that holds it until kexec; prints
 *       holder=PID), initrd_append_state(INITRD_IN -> INITRD_OUT) and
 *       file_preserve(/var/lib/luod).  Exit 0 when all three worked.
 *   tb-preserve try [--busy] TEXT
 *       one more luo_preserve(); with --busy while another process holds
 *       /dev/liveupdate open.  Prints luo=ok|ERRNO, then closes the session
 *       (which unpreserves).  Exit 0 when it ran.
 *   tb-preserve load
 *       prints what each backend retrieves (luo=, initrd=, file=), finish=
 *       (luo_finish() after a retrieve) and update_id= from /proc/cmdline.
 *   tb-preserve kexec KERNEL INITRD CMDLINE UPDATE_ID
 *       loads KERNEL + INITRD with CMDLINE plus luod.update_id=UPDATE_ID
 *       (kexec_load_kernel()); prints cmdline= and kexec=ok|ERRNO MESSAGE.
 *   tb-preserve unload | loaded | exec
 *       kexec_unload(), kexec_loaded(), kexec_execute(false) (exec returns
 *       only on failure). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kexec.h"
#include "liveupdate-uapi.h"
#include "macro.h"
#include "preserve.h"

static const char *errname(int r) {
        return strerrorname_np(r < 0 ? -r : r) ?: "E?";
}

static void print_value(const char *key, const char *buf, size_t size) {
        printf("%s=", key);
        fwrite(buf, 1, size, stdout);
        putchar('\n');
}

/* The child that keeps the LUO session alive until kexec: its own session
 * (no SIGHUP when the shell goes), stdio on /dev/null (a $(...) capture
 * ends), sleeping with the session fd open. */
_Noreturn static void hold_session(void) {
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);

        (void) setsid();
        if (null >= 0) {
                (void) dup2(null, STDIN_FILENO);
                (void) dup2(null, STDOUT_FILENO);
                (void) dup2(null, STDERR_FILENO);
        }
        for (;;)
                pause();
}

static int cmd_save(const char *text, const char *initrd_in, const char *initrd_out) {
        size_t size = strlen(text);
        int session_fd = -EBADF, failed = 0, r;
        pid_t pid;

        r = luo_preserve(text, size, &session_fd);
        if (r < 0) {
                printf("luo=%s\n", errname(r));
                failed++;
        } else {
                fflush(stdout);
                pid = fork();
                if (pid < 0) {
                        printf("luo=%s (fork)\n", errname(-errno));
                        failed++;
                } else if (pid == 0)
                        hold_session();
                else
                        printf("luo=ok\nholder=%jd\n", (intmax_t) pid);
                (void) close(session_fd);
        }

        r = initrd_append_state(initrd_in, initrd_out, text, size);
        printf("initrd=%s\n", r < 0 ? errname(r) : "ok");
        failed += r < 0;

        r = file_preserve(NULL, text, size);
        printf("file=%s\n", r < 0 ? errname(r) : "ok");
        failed += r < 0;
        return failed ? 1 : 0;
}

/* A child that opens /dev/liveupdate, says so on ready[1] (one errno
 * byte, 0 = open), and holds it until release[0] reaches EOF: when the
 * parent closes release[1] or exits. */
static pid_t hold_device(const int ready[2], const int release[2]) {
        pid_t pid = fork();
        char c;
        int fd;

        if (pid != 0)
                return pid;
        (void) close(ready[0]);
        (void) close(release[1]);
        fd = open(LIVEUPDATE_DEVICE, O_RDWR | O_CLOEXEC);
        c = (char) (fd < 0 ? errno : 0);
        /* The parent reads EOF as a failure if this byte is lost. */
        if (write(ready[1], &c, 1) != 1)
                _exit(1);
        while (read(release[0], &c, 1) > 0)
                ;
        _exit(0);
}

static int cmd_try(bool busy, const char *text) {
        int ready[2] = { -EBADF, -EBADF }, release[2] = { -EBADF, -EBADF };
        int session_fd = -EBADF, r;
        pid_t holder = 0;
        char c;

        if (busy) {
                if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(release, O_CLOEXEC) < 0) {
                        printf("pipe=%s\n", errname(-errno));
                        return 1;
                }
                fflush(stdout);
                holder = hold_device(ready, release);
                if (holder < 0) {
                        printf("holder=%s\n", errname(-errno));
                        return 1;
                }
                (void) close(ready[1]);
                (void) close(release[0]);
                if (read(ready[0], &c, 1) != 1) {
                        printf("holder-open=no answer\n");
                        return 1;
                }
                if (c != 0) {
                        printf("holder-open=%s\n", errname(c));
                        return 1;
                }
                printf("holder-open=ok\n");
        }

        r = luo_preserve(text, strlen(text), &session_fd);
        printf("luo=%s\n", r < 0 ? errname(r) : "ok");
        if (r >= 0)
                (void) close(session_fd);

        if (busy) {
                (void) close(release[1]);
                (void) waitpid(holder, NULL, 0);
        }
        return 0;
}

static int cmd_load(void) {
        _cleanup_free_ char *luo = NULL, *initrd = NULL, *file = NULL;
        char id[LUOD_UUID_STRING_MAX];
        size_t size;
        int session_fd, r;

        r = luo_retrieve(&luo, &size, &session_fd);
        if (r < 0)
                printf("luo=%s\n", errname(r));
        else {
                print_value("luo", luo, size);
                r = luo_finish(session_fd);
                printf("finish=%s\n", r < 0 ? errname(r) : "ok");
                (void) close(session_fd);
        }

        r = initrd_find_state(NULL, &initrd, &size);
        if (r < 0)
                printf("initrd=%s\n", errname(r));
        else
                print_value("initrd", initrd, size);

        r = file_retrieve(NULL, &file, &size);
        if (r < 0)
                printf("file=%s\n", errname(r));
        else
                print_value("file", file, size);

        r = kernel_cmdline_get_update_id(NULL, id);
        printf("update_id=%s\n", r < 0 ? errname(r) : id);
        return 0;
}

static int cmd_kexec(const char *kernel, const char *initrd, const char *cmdline, const char *update_id) {
        _cleanup_free_ char *full = NULL, *error = NULL;
        int r;

        r = kernel_cmdline_with_update_id(cmdline, update_id, &full);
        if (r < 0) {
                printf("cmdline=%s\n", errname(r));
                return 1;
        }
        printf("cmdline=%s\n", full);
        r = kexec_load_kernel(kernel, initrd, full, &error);
        if (r < 0) {
                printf("kexec=%s %s\n", errname(r), error ?: "");
                return 1;
        }
        printf("kexec=ok\n");
        return 0;
}

int main(int argc, char *argv[]) {
        int r;

        if (argc == 5 && strcmp(argv[1], "save") == 0)
                return cmd_save(argv[2], argv[3], argv[4]);
        if (argc == 3 && strcmp(argv[1], "try") == 0)
                return cmd_try(false, argv[2]);
        if (argc == 4 && strcmp(argv[1], "try") == 0 && strcmp(argv[2], "--busy") == 0)
                return cmd_try(true, argv[3]);
        if (argc == 2 && strcmp(argv[1], "load") == 0)
                return cmd_load();
        if (argc == 6 && strcmp(argv[1], "kexec") == 0)
                return cmd_kexec(argv[2], argv[3], argv[4], argv[5]);
        if (argc == 2 && strcmp(argv[1], "unload") == 0) {
                r = kexec_unload();
                printf("unload=%s\n", r < 0 ? errname(r) : "ok");
                return r < 0;
        }
        if (argc == 2 && strcmp(argv[1], "loaded") == 0) {
                r = kexec_loaded();
                if (r < 0)
                        printf("loaded=%s\n", errname(r));
                else
                        printf("loaded=%d\n", r);
                return r < 0;
        }
        if (argc == 2 && strcmp(argv[1], "exec") == 0) {
                fflush(stdout);
                r = kexec_execute(false);
                printf("exec=%s\n", errname(r));
                return 1;
        }
        fprintf(stderr, "usage: tb-preserve save TEXT INITRD_IN INITRD_OUT | try [--busy] TEXT | load |\n"
                        "       kexec KERNEL INITRD CMDLINE UPDATE_ID | unload | loaded | exec\n");
        return 2;
}
