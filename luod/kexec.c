/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/kexec.h>

#include "io-util.h"
#include "kexec.h"
#include "log.h"
#include "macro.h"
#include "sysfs.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
/* Enough for any kexec-tools message; the rest of a longer stderr is read
 * and dropped. */
#define MESSAGE_MAX 4096
/* /proc/cmdline: COMMAND_LINE_SIZE is at most 4096 on the architectures
 * luod runs on, plus the newline. */
#define CMDLINE_MAX 8192

__attribute__((format(printf, 2, 3)))
static void set_error(char **ret_error, const char *fmt, ...) {
        va_list ap;

        if (!ret_error)
                return;
        va_start(ap, fmt);
        if (vasprintf(ret_error, fmt, ap) < 0)
                *ret_error = NULL;
        va_end(ap);
}

/* The first executable file name in PATH, then in DEFAULT_PATH. */
static int find_executable(const char *name, char **ret) {
        _cleanup_free_ char *search = NULL;
        const char *path = getenv("PATH");

        if (asprintf(&search, "%s:%s", path ?: "", DEFAULT_PATH) < 0)
                return -ENOMEM;
        for (const char *p = search; *p;) {
                size_t n = strcspn(p, ":");

                if (n > 0) {
                        char *candidate;

                        if (asprintf(&candidate, "%.*s/%s", (int) n, p, name) < 0)
                                return -ENOMEM;
                        if (access(candidate, X_OK) == 0) {
                                *ret = candidate;
                                return 0;
                        }
                        free(candidate);
                }
                p += n + (p[n] == ':');
        }
        return -ENOENT;
}

/* The errno whose text ends the last line of msg after ':' or ' ', the
 * longest if several do; else ENOEXEC for kexec-tools' own "not a kernel I
 * know" message; 0 when none applies. */
static int errno_from_message(const char *msg) {
        const char *line = strrchr(msg, '\n');
        size_t n, best_len = 0;
        int best = 0;

        if (strstr(msg, "Cannot determine the file type"))
                return ENOEXEC;
        line = line ? line + 1 : msg;
        n = strlen(line);
        for (int e = 1; e < 4096; e++) {
                const char *text = strerrordesc_np(e);
                size_t k;

                if (!text)
                        continue;
                k = strlen(text);
                if (k < n && k > best_len && strcmp(line + n - k, text) == 0 &&
                    (line[n - k - 1] == ':' || line[n - k - 1] == ' ')) {
                        best = e;
                        best_len = k;
                }
        }
        return best;
}

/* Drops trailing whitespace. */
static void strip_trailing(char *s) {
        size_t n = strlen(s);

        while (n > 0 && isspace((unsigned char) s[n - 1]))
                s[--n] = 0;
}

/* Reads fd to EOF, keeping the first MESSAGE_MAX bytes, NUL-terminated. */
static int read_output(int fd, char **ret) {
        _cleanup_free_ char *buf = NULL;
        char drop[512];
        ssize_t k;

        buf = malloc(MESSAGE_MAX + 1);
        if (!buf)
                return -ENOMEM;
        k = read_full(fd, buf, MESSAGE_MAX, -1);
        if (k < 0)
                return (int) k;
        buf[k] = 0;
        /* The rest is read and dropped, so the writer never blocks on a
         * full pipe. */
        do
                k = read_full(fd, drop, sizeof(drop), -1);
        while (k > 0);
        if (k < 0)
                return (int) k;
        strip_trailing(buf);
        *ret = TAKE_PTR(buf);
        return 0;
}

/* The child's fds 3, 4, ...: the files a kexec-tools load reads as
 * /proc/self/fd/N. */
#define CHILD_FD_FIRST 3

static int spawn(const char *binary, char *const argv[], int stderr_fd, const int *fds, size_t n_fds,
                 pid_t *ret_pid) {
        posix_spawn_file_actions_t actions;
        posix_spawnattr_t attr;
        sigset_t none, all;
        int r;

        sigemptyset(&none);
        sigfillset(&all);
        r = posix_spawn_file_actions_init(&actions);
        if (r != 0)
                return -r;
        r = posix_spawnattr_init(&attr);
        if (r != 0) {
                posix_spawn_file_actions_destroy(&actions);
                return -r;
        }
        r = posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        if (r == 0)
                r = posix_spawn_file_actions_adddup2(&actions, stderr_fd, STDERR_FILENO);
        /* dup2() leaves the copies without O_CLOEXEC. */
        for (size_t i = 0; r == 0 && i < n_fds; i++)
                r = posix_spawn_file_actions_adddup2(&actions, fds[i], CHILD_FD_FIRST + (int) i);
        if (r == 0)
                r = posix_spawnattr_setsigmask(&attr, &none);
        if (r == 0)
                r = posix_spawnattr_setsigdefault(&attr, &all);
        if (r == 0)
                r = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        if (r == 0)
                r = posix_spawn(ret_pid, binary, &actions, &attr, argv, environ);
        posix_spawnattr_destroy(&attr);
        posix_spawn_file_actions_destroy(&actions);
        return -r;
}

/* Runs argv (argv[0] looked up as find_executable() does), with fds[i] as
 * its fd CHILD_FD_FIRST + i, and waits for it.  Returns 0 when it exits 0;
 * otherwise the errno its message names or -EIO, with the message in
 * *ret_error (if non-NULL). */
static int run_with_fds(char *const argv[], const int *fds, size_t n_fds, char **ret_error) {
        _cleanup_free_ char *binary = NULL, *output = NULL;
        _cleanup_close_ int out_fd = -EBADF;
        int pipe_fds[2], status, r;
        pid_t pid;

        if (ret_error)
                *ret_error = NULL;

        r = find_executable(argv[0], &binary);
        if (r < 0) {
                set_error(ret_error, "%s not found in PATH or %s", argv[0], DEFAULT_PATH);
                return r;
        }
        if (pipe2(pipe_fds, O_CLOEXEC) < 0) {
                r = -errno;
                set_error(ret_error, "Failed to create a pipe for %s: %s", binary, strerror(-r));
                return r;
        }
        out_fd = pipe_fds[0];
        r = spawn(binary, argv, pipe_fds[1], fds, n_fds, &pid);
        (void) close(pipe_fds[1]);
        if (r < 0) {
                set_error(ret_error, "Failed to start %s: %s", binary, strerror(-r));
                return r;
        }

        r = read_output(out_fd, &output);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR) {
                        r = -errno;
                        set_error(ret_error, "Failed to wait for %s (pid %jd): %s", binary, (intmax_t) pid,
                                  strerror(-r));
                        return r;
                }
        if (r < 0) {
                set_error(ret_error, "Failed to read the output of %s: %s", binary, strerror(-r));
                return r;
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return 0;

        r = errno_from_message(output);
        if (WIFSIGNALED(status))
                set_error(ret_error, "%s killed by signal SIG%s%s%s", binary,
                          sigabbrev_np(WTERMSIG(status)) ?: "?", *output ? ": " : "", output);
        else if (*output)
                set_error(ret_error, "%s", output);
        else
                set_error(ret_error, "%s exited with status %d", binary, WEXITSTATUS(status));
        return r > 0 ? -r : -EIO;
}

static int run(char *const argv[], char **ret_error) {
        return run_with_fds(argv, NULL, 0, ret_error);
}

static const char *const kexec_loader_table[_KEXEC_LOADER_MAX] = {
        [KEXEC_LOADER_FILE_LOAD] = "kexec_file_load",
        [KEXEC_LOADER_KEXEC_TOOLS] = "kexec-tools",
};

const char *kexec_loader_to_string(KexecLoader l) {
        if (l < 0 || l >= _KEXEC_LOADER_MAX)
                return NULL;
        return kexec_loader_table[l];
}

static long sys_kexec_file_load(int kernel_fd, int initrd_fd, const char *cmdline, unsigned long flags) {
        return syscall(SYS_kexec_file_load, kernel_fd, initrd_fd, cmdline ? strlen(cmdline) + 1 : 0, cmdline,
                       flags);
}

KexecLoader kexec_loader_detect(void) {
        /* No fd: a kernel with the syscall fails at reading it (EBADF), or
         * earlier at the permission check (EPERM); nothing loaded is
         * touched, as a failed load leaves the loaded image in place. */
        if (sys_kexec_file_load(-1, -1, NULL, 0) < 0 && errno == ENOSYS)
                return KEXEC_LOADER_KEXEC_TOOLS;
        return KEXEC_LOADER_FILE_LOAD;
}

int kexec_image_open(const char *path, KexecImage *ret) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        /* O_NONBLOCK: a FIFO swapped in must not block luod's loop. */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        *ret = (KexecImage) { .fd = TAKE_FD(fd), .st = st };
        return 0;
}

void kexec_image_close(KexecImage *img) {
        if (img->fd >= 0)
                (void) close(img->fd);
        *img = KEXEC_IMAGE_NULL;
}

int kexec_image_unchanged(const KexecImage *img) {
        struct stat st;

        if (fstat(img->fd, &st) < 0)
                return -errno;
        /* Any write, and any link added or removed (a rename over the
         * path, an unlink), changes st_ctim, and nobody can set it back. */
        if (st.st_dev != img->st.st_dev || st.st_ino != img->st.st_ino || st.st_size != img->st.st_size ||
            st.st_mtim.tv_sec != img->st.st_mtim.tv_sec || st.st_mtim.tv_nsec != img->st.st_mtim.tv_nsec ||
            st.st_ctim.tv_sec != img->st.st_ctim.tv_sec || st.st_ctim.tv_nsec != img->st.st_ctim.tv_nsec)
                return -ESTALE;
        return 0;
}

static int images_unchanged(const KexecImage *kernel, const KexecImage *initrd, const char *when,
                            char **ret_error) {
        int r;

        r = kexec_image_unchanged(kernel);
        if (r >= 0 && initrd)
                r = kexec_image_unchanged(initrd);
        if (r == -ESTALE)
                set_error(ret_error, "the %s changed (written to, renamed over or removed) %s the preflight "
                          "opened it; not loaded", kexec_image_unchanged(kernel) < 0 ? "kernel image" : "initrd",
                          when);
        else if (r < 0)
                set_error(ret_error, "fstat() of the preflighted images: %s", strerror(-r));
        return r;
}

static int load_syscall(const KexecImage *kernel, const KexecImage *initrd, const char *cmdline,
                        char **ret_error) {
        if (sys_kexec_file_load(kernel->fd, initrd ? initrd->fd : -1, cmdline,
                                initrd ? 0 : KEXEC_FILE_NO_INITRAMFS) >= 0)
                return 0;
        int r = -errno;
        set_error(ret_error, "kexec_file_load(2): %s%s", strerror(-r),
                  r == -EPERM ? " (no CAP_SYS_BOOT, kexec disabled, or lockdown wants a signed image)" :
                  r == -ENOEXEC ? " (not a kernel image this kernel can load)" :
                  r == -EKEYREJECTED || r == -EBADMSG ? " (the image's signature was refused)" : "");
        return r;
}

/* kexec-tools reads the same open files, as /proc/self/fd/N of its own:
 * no path is looked up again.  -c: the kexec_load(2) syscall, since
 * kexec_file_load(2) is what the running kernel lacks. */
static int load_kexec_tools(const KexecImage *kernel, const KexecImage *initrd, const char *cmdline,
                            char **ret_error) {
        _cleanup_free_ char *kernel_arg = NULL, *initrd_arg = NULL, *cmdline_arg = NULL;
        int fds[2] = { kernel->fd, initrd ? initrd->fd : -EBADF };

        if (asprintf(&kernel_arg, "/proc/self/fd/%d", CHILD_FD_FIRST) < 0)
                kernel_arg = NULL;
        if ((initrd && asprintf(&initrd_arg, "--initrd=/proc/self/fd/%d", CHILD_FD_FIRST + 1) < 0) ||
            asprintf(&cmdline_arg, "--command-line=%s", cmdline) < 0 || !kernel_arg)
                return -ENOMEM;

        char *argv[] = {
                (char *) "kexec", (char *) "-c", (char *) "-l", kernel_arg, cmdline_arg,
                initrd_arg, /* NULL without an initrd: ends argv there */
                NULL,
        };
        return run_with_fds(argv, fds, initrd ? 2 : 1, ret_error);
}

int kexec_load_images(const KexecImage *kernel, const KexecImage *initrd, const char *cmdline,
                      KexecLoader loader, char **ret_error) {
        int r;

        if (ret_error)
                *ret_error = NULL;
        if (!kernel || kernel->fd < 0 || !cmdline || (initrd && initrd->fd < 0) ||
            loader < 0 || loader >= _KEXEC_LOADER_MAX) {
                set_error(ret_error, "kexec_load_images() needs a kernel, a command line and a loader");
                return -EINVAL;
        }
        r = images_unchanged(kernel, initrd, "after", ret_error);
        if (r < 0)
                return r;
        r = loader == KEXEC_LOADER_FILE_LOAD ? load_syscall(kernel, initrd, cmdline, ret_error) :
                                               load_kexec_tools(kernel, initrd, cmdline, ret_error);
        if (r < 0)
                return r;
        /* The kernel denies writers while it reads an image; a write that
         * slipped in between the check above and that read shows here. */
        r = images_unchanged(kernel, initrd, "while it was loaded, after", ret_error);
        if (r < 0) {
                (void) kexec_unload();
                return r;
        }
        return 0;
}

int kexec_load_kernel(const char *kernel, const char *initrd, const char *cmdline, char **ret_error) {
        _cleanup_(kexec_image_close) KexecImage k = KEXEC_IMAGE_NULL, i = KEXEC_IMAGE_NULL;
        int r;

        if (ret_error)
                *ret_error = NULL;
        if (!kernel || !cmdline) {
                set_error(ret_error, "kexec_load_kernel() needs a kernel and a command line");
                return -EINVAL;
        }
        r = kexec_image_open(kernel, &k);
        if (r < 0) {
                set_error(ret_error, "Kernel image %s: %s", kernel, strerror(-r));
                return r;
        }
        if (initrd) {
                r = kexec_image_open(initrd, &i);
                if (r < 0) {
                        set_error(ret_error, "Initrd %s: %s", initrd, strerror(-r));
                        return r;
                }
        }
        return kexec_load_images(&k, initrd ? &i : NULL, cmdline, kexec_loader_detect(), ret_error);
}

int kexec_unload(void) {
        char *argv[] = { (char *) "kexec", (char *) "-u", NULL };
        _cleanup_free_ char *error = NULL;
        int r;

        if (sys_kexec_file_load(-1, -1, NULL, KEXEC_FILE_UNLOAD) >= 0)
                return 0;
        r = -errno;
        if (r != -ENOSYS)
                return log_error_errno(r, "Failed to unload the kexec kernel (kexec_file_load(2) "
                                       "KEXEC_FILE_UNLOAD): %m");
        r = run(argv, &error);
        if (r < 0)
                return log_error_errno(r, "Failed to unload the kexec kernel (kexec -u): %s",
                                       error ?: "out of memory");
        return 0;
}

int kexec_execute(bool via_systemd) {
        char *kexec_argv[] = { (char *) "kexec", (char *) "-e", NULL };
        char *systemctl_argv[] = { (char *) "systemctl", (char *) "kexec", NULL };
        _cleanup_free_ char *error = NULL;
        int r;

        if (via_systemd) {
                r = run(systemctl_argv, &error);
                if (r < 0)
                        return log_error_errno(r, "systemctl kexec failed: %s", error ?: "out of memory");
                return 0;
        }
        r = run(kexec_argv, &error);
        if (r == 0)
                return log_error_errno(-EIO, "kexec -e exited 0 without booting the loaded kernel");
        return log_error_errno(r, "kexec -e failed: %s", error ?: "out of memory");
}

/* Reads a small text file whole, NUL-terminated. */
static int read_text_file(const char *path, char **ret) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t size = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return log_error_errno(-errno, "Failed to open %s: %m", path);
        buf = malloc(CMDLINE_MAX + 2);
        if (!buf)
                return log_error_errno(-ENOMEM, "Failed to allocate a buffer for %s: %m", path);
        /* One byte more than allowed tells an over-long file. */
        ssize_t k = read_full(fd, buf, CMDLINE_MAX + 1, -1);
        if (k < 0)
                return log_error_errno((int) k, "Failed to read %s: %m", path);
        if (k > CMDLINE_MAX)
                return log_error_errno(-EFBIG, "%s is longer than %d bytes", path, CMDLINE_MAX);
        size = (size_t) k;
        buf[size] = 0;
        *ret = buf;
        buf = NULL;
        return 0;
}

int kexec_loaded(void) {
        _cleanup_free_ char *text = NULL;
        int r;

        char path[PATH_MAX];

        r = sysfs_path(path, sizeof(path), "kernel/kexec_loaded");
        if (r >= 0)
                r = read_text_file(path, &text);
        if (r < 0)
                return r;
        strip_trailing(text);
        if (strcmp(text, "1") == 0)
                return 1;
        if (strcmp(text, "0") == 0)
                return 0;
        return -EBADMSG;
}

/* Lowercase "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", n bytes long. */
static bool uuid_valid(const char *s, size_t n) {
        if (n != LUOD_UUID_STRING_MAX - 1)
                return false;
        for (size_t i = 0; i < n; i++) {
                bool dash = i == 8 || i == 13 || i == 18 || i == 23;

                if (dash ? s[i] != '-' : !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        }
        return true;
}

/* The next word of a kernel command line at *p: skips whitespace, then
 * returns the word's start and length (0 at the end) and advances *p past
 * it.  Whitespace inside double quotes belongs to the word. */
/* x86 COMMAND_LINE_SIZE, NUL included. */

static size_t next_word(const char **p, const char **ret_start) {
        const char *s = *p;
        bool quoted = false;
        size_t n = 0;

        while (isspace((unsigned char) *s))
                s++;
        while (s[n] && (quoted || !isspace((unsigned char) s[n]))) {
                if (s[n] == '"')
                        quoted = !quoted;
                n++;
        }
        *ret_start = s;
        *p = s + n;
        return n;
}

static bool is_update_id_word(const char *w, size_t n) {
        size_t k = strlen(UPDATE_ID_PARAM "=");

        return n >= k && strncmp(w, UPDATE_ID_PARAM "=", k) == 0;
}

int kernel_cmdline_with_update_id(const char *base, const char *update_id, char **ret) {
        _cleanup_free_ char *buf = NULL;
        const char *p = base ?: "", *w;
        size_t n, len = 0, quotes = 0;
        bool placed = false;

        if (!update_id || !uuid_valid(update_id, strlen(update_id)))
                return -EINVAL;
        for (const char *q = p; *q; q++)
                quotes += *q == '"';
        if (quotes % 2)
                return -EINVAL;         /* the id would land inside a quoted value */
        /* The result is never longer than base + one space + the new word. */
        buf = malloc(strlen(p) + 2 + strlen(UPDATE_ID_PARAM "=") + LUOD_UUID_STRING_MAX);
        if (!buf)
                return -ENOMEM;
        while ((n = next_word(&p, &w)) > 0) {
                if (!placed && n == 2 && strncmp(w, "--", 2) == 0) {
                        /* Words after "--" go to init: the id goes before. */
                        len += (size_t) sprintf(buf + len, "%s=%s ", UPDATE_ID_PARAM, update_id);
                        placed = true;
                } else if (!placed && is_update_id_word(w, n))
                        continue;
                memcpy(buf + len, w, n);
                len += n;
                buf[len++] = ' ';
        }
        if (placed)
                buf[--len] = '\0';
        else
                len += (size_t) sprintf(buf + len, "%s=%s", UPDATE_ID_PARAM, update_id);
        if (len >= KERNEL_CMDLINE_MAX)
                return -E2BIG;

        *ret = buf;
        buf = NULL;
        return 0;
}

int kernel_cmdline_get_update_id(const char *proc_cmdline, char ret[static LUOD_UUID_STRING_MAX]) {
        _cleanup_free_ char *text = NULL;
        const char *p, *w, *value = NULL;
        size_t n, value_len = 0, k = strlen(UPDATE_ID_PARAM "=");
        int r;

        if (!proc_cmdline) {
                char path[PATH_MAX];

                r = procfs_path(path, sizeof(path), "cmdline");
                if (r >= 0)
                        r = read_text_file(path, &text);
                if (r < 0)
                        return r;
                proc_cmdline = text;
        }
        p = proc_cmdline;
        while ((n = next_word(&p, &w)) > 0 && !(n == 2 && strncmp(w, "--", 2) == 0))
                if (is_update_id_word(w, n)) {
                        value = w + k;
                        value_len = n - k;
                }
        if (!value)
                return -ENOENT;
        if (!uuid_valid(value, value_len))
                return -EINVAL;
        memcpy(ret, value, value_len);
        ret[value_len] = 0;
        return 0;
}
