/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* write_file_atomic_at(), fsync_directory_at() and read_regular_file_at()
 * on a real file system (a directory under /tmp): content, mode, and that
 * a failed write leaves the old file and no temporary file behind. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fs-util.h"
#include "macro.h"
#include "tap.h"

static char dir[] = "/tmp/test-fs-util-XXXXXX";
static int dfd = -EBADF;

/* The names in dir, other than "." and "..", sorted and joined by ' '. */
static char *entries(void) {
        struct dirent **list = NULL;
        char *s = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&s, &size);
        int n = scandir(dir, &list, NULL, alphasort);
        bool first = true;

        for (int i = 0; i < n; i++) {
                if (strcmp(list[i]->d_name, ".") != 0 && strcmp(list[i]->d_name, "..") != 0) {
                        fprintf(f, "%s%s", first ? "" : " ", list[i]->d_name);
                        first = false;
                }
                free(list[i]);
        }
        free(list);
        fclose(f);
        return s;
}

static void check_entries(const char *want) {
        _cleanup_free_ char *have = entries();

        CHECK(have && strcmp(have, want) == 0);
        if (have && strcmp(have, want) != 0)
                fprintf(stderr, "  entries: have '%s', want '%s'\n", have, want);
}

static void check_content(const char *name, const char *want) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;

        CHECK(read_regular_file_at(dfd, name, 1 << 20, &buf, &size) == 0);
        CHECK(buf && size == strlen(want) && memcmp(buf, want, size) == 0 && buf[size] == 0);
        if (buf && strcmp(buf, want) != 0)
                fprintf(stderr, "  %s: have '%.40s', want '%.40s'\n", name, buf, want);
}

static mode_t mode_of(const char *name) {
        struct stat st;

        return fstatat(dfd, name, &st, 0) == 0 ? st.st_mode & 07777 : (mode_t) -1;
}

static void test_write(void) {
        struct stat before, after;
        mode_t old_umask;

        /* New file: content, and mode exactly, whatever the umask. */
        old_umask = umask(077);
        CHECK(write_file_atomic_at(dfd, "report.json", "{ \"a\": 1 }", 10, 0644) == 0);
        umask(old_umask);
        check_content("report.json", "{ \"a\": 1 }");
        CHECK(mode_of("report.json") == 0644);
        check_entries("report.json");

        /* Replaced: a new inode renamed over the old one, new mode. */
        CHECK(fstatat(dfd, "report.json", &before, 0) == 0);
        CHECK(write_file_atomic_at(dfd, "report.json", "second", 6, 0600) == 0);
        CHECK(fstatat(dfd, "report.json", &after, 0) == 0);
        CHECK(before.st_ino != after.st_ino);
        check_content("report.json", "second");
        CHECK(mode_of("report.json") == 0600);

        /* Empty content. */
        CHECK(write_file_atomic_at(dfd, "empty", "", 0, 0600) == 0);
        check_content("empty", "");
        CHECK(unlinkat(dfd, "empty", 0) == 0);
        check_entries("report.json");
}

static void test_refused(void) {
        int fd;

        CHECK(write_file_atomic_at(-1, "x", "x", 1, 0600) == -EBADF);
        CHECK(write_file_atomic_at(AT_FDCWD, "x", "x", 1, 0600) == -EBADF);
        CHECK(write_file_atomic_at(dfd, "", "x", 1, 0600) == -EINVAL);
        CHECK(write_file_atomic_at(dfd, NULL, "x", 1, 0600) == -EINVAL);
        CHECK(write_file_atomic_at(dfd, "../x", "x", 1, 0600) == -EINVAL);
        CHECK(write_file_atomic_at(dfd, ".", "x", 1, 0600) == -EINVAL);
        CHECK(write_file_atomic_at(dfd, "..", "x", 1, 0600) == -EINVAL);
        CHECK(write_file_atomic_at(dfd, "x", "x", 1, 010600) == -EINVAL);
        CHECK(filename_is_valid("assignments.json") && !filename_is_valid("a/b"));

        /* dir_fd that is not a directory. */
        fd = openat(dfd, "report.json", O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        CHECK(write_file_atomic_at(fd, "x", "x", 1, 0600) == -ENOTDIR);
        close(fd);

        /* A name too long for the temporary file. */
        char name[256];
        memset(name, 'n', 250);
        name[250] = 0;
        CHECK(write_file_atomic_at(dfd, name, "x", 1, 0600) == -ENAMETOOLONG);
        (void) unlinkat(dfd, name, 0);

        /* A name that is a directory: refused at the rename, the directory
         * stays, the temporary file is gone. */
        CHECK(mkdirat(dfd, "assignments.json", 0700) == 0);
        CHECK(write_file_atomic_at(dfd, "assignments.json", "[]", 2, 0600) == -EISDIR);
        fd = openat(dfd, "assignments.json", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK(fd >= 0);
        if (fd >= 0)
                close(fd);
        check_entries("assignments.json report.json");
        CHECK(unlinkat(dfd, "assignments.json", AT_REMOVEDIR) == 0);
        check_entries("report.json");
}

/* A write cut short (RLIMIT_FSIZE: the file system says EFBIG after 4 KiB)
 * leaves the old content, not a truncated file, and no temporary file. */
static void test_failed_write(void) {
        struct rlimit old, small = { .rlim_cur = 4096, .rlim_max = RLIM_INFINITY };
        _cleanup_free_ char *big = malloc(65536);

        CHECK(big);
        if (!big)
                return;
        memset(big, 'x', 65536);
        CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
        small.rlim_max = old.rlim_max;
        signal(SIGXFSZ, SIG_IGN);
        CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
        CHECK(write_file_atomic_at(dfd, "report.json", big, 65536, 0644) == -EFBIG);
        CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
        signal(SIGXFSZ, SIG_DFL);
        check_content("report.json", "second");
        CHECK(mode_of("report.json") == 0600);
        check_entries("report.json");
}

/* A directory luod may not write: refused with EACCES, nothing changes.  As
 * root (which may write anywhere), the write runs as uid 65534. */
static void test_read_only_dir(void) {
        int status = -1;
        pid_t pid;

        CHECK(chmod(dir, 0555) == 0);
        pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
                if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                                       setresuid(65534, 65534, 65534) < 0))
                        _exit(2);
                _exit(write_file_atomic_at(dfd, "report.json", "third", 5, 0644) == -EACCES ? 0 : 1);
        }
        CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
        CHECK(chmod(dir, 0755) == 0);
        check_content("report.json", "second");
        check_entries("report.json");
}

static void test_fsync_directory(void) {
        CHECK(fsync_directory_at(dfd, ".") == 0);
        CHECK(fsync_directory_at(AT_FDCWD, dir) == 0);
        CHECK(fsync_directory_at(dfd, "report.json") == -ENOTDIR);
        CHECK(fsync_directory_at(dfd, "absent") == -ENOENT);
}

static void test_read(void) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;

        CHECK(read_regular_file_at(dfd, "absent", 100, &buf, &size) == -ENOENT);
        CHECK(read_regular_file_at(dfd, ".", 100, &buf, &size) == -EBADFD);
        CHECK(read_regular_file_at(dfd, "report.json", 5, &buf, &size) == -EFBIG);
        /* A FIFO is refused, not waited on. */
        CHECK(mkfifoat(dfd, "fifo", 0600) == 0);
        CHECK(read_regular_file_at(dfd, "fifo", 100, &buf, &size) == -EBADFD);
        CHECK(unlinkat(dfd, "fifo", 0) == 0);
        CHECK(!buf);
        CHECK(read_regular_file_at(dfd, "report.json", 6, &buf, &size) == 0);
        CHECK(buf && size == 6 && strcmp(buf, "second") == 0);
}

int main(void) {
        CHECK(mkdtemp(dir));
        CHECK(chmod(dir, 0755) == 0);
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK(dfd >= 0);
        if (dfd < 0)
                return 1;

        test_write();
        test_refused();
        test_failed_write();
        test_read_only_dir();
        test_fsync_directory();
        test_read();

        CHECK(unlinkat(dfd, "report.json", 0) == 0);
        close(dfd);
        CHECK(rmdir(dir) == 0);
        return tap_failures ? 1 : 0;
}
