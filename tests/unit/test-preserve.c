/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The state backends (preserve.h) and the kexec helpers (kexec.h).
 *   test-preserve       initrd append (padding, cpio read back), the file
 *                       backend, initrd_find_state(), the command line
 *                       helpers, kexec error reporting, the preflighted
 *                       kexec images (a change after opening refused)
 *   test-preserve luo   the LUO backend on a machine without
 *                       /dev/liveupdate: -ENOENT (skipped, 77, where the
 *                       device exists) */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kexec.h"
#include "liveupdate-uapi.h"
#include "macro.h"
#include "preserve.h"
#include "tap.h"

/* Bytes, not a string: a NUL inside must survive every backend. */
static const char payload[] = "{\"format\":\"luod-state\"}\n\0body\xff";
#define PAYLOAD_SIZE (sizeof(payload) - 1)

#define OLD_ID "00000000-0000-4000-8000-000000000000"
#define NEW_ID "3f6c2a9e-8b1d-4e57-9a0c-5d2e7f14b6a8"

static void write_bytes(const char *path, const void *p, size_t n) {
        FILE *f = fopen(path, "we");

        CHECK(f);
        if (!f)
                return;
        CHECK(fwrite(p, 1, n, f) == n);
        CHECK(fclose(f) == 0);
}

/* The whole file, or NULL (size 0) when it cannot be read. */
static char *read_bytes(const char *path, size_t *ret_size) {
        struct stat st;
        char *buf;
        FILE *f;

        *ret_size = 0;
        f = fopen(path, "re");
        if (!f)
                return NULL;
        if (fstat(fileno(f), &st) < 0 || !(buf = malloc((size_t) st.st_size + 1))) {
                fclose(f);
                return NULL;
        }
        *ret_size = fread(buf, 1, (size_t) st.st_size, f);
        fclose(f);
        return buf;
}

static size_t count_entries(const char *dir) {
        DIR *d = opendir(dir);
        struct dirent *de;
        size_t n = 0;

        CHECK(d);
        if (!d)
                return 0;
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        n++;
        closedir(d);
        return n;
}

/* The archive holds exactly luod/ (0700) and luod/state.luod-state (0600)
 * with the payload, and nothing after its trailer but the end. */
static void check_archive(const char *p, size_t size) {
        struct archive *a = archive_read_new();
        struct archive_entry *e;
        char data[sizeof(payload)];

        CHECK(a);
        if (!a)
                return;
        CHECK(size >= 6 && memcmp(p, "070701", 6) == 0);
        CHECK(archive_read_support_format_cpio(a) == ARCHIVE_OK);
        CHECK(archive_read_open_memory(a, p, size) == ARCHIVE_OK);

        CHECK(archive_read_next_header(a, &e) == ARCHIVE_OK);
        CHECK(strcmp(archive_entry_pathname(e), "luod") == 0);
        CHECK(archive_entry_filetype(e) == AE_IFDIR);
        CHECK(archive_entry_perm(e) == 0700);
        CHECK(archive_format(a) == ARCHIVE_FORMAT_CPIO_SVR4_NOCRC);

        CHECK(archive_read_next_header(a, &e) == ARCHIVE_OK);
        CHECK(strcmp(archive_entry_pathname(e), "luod/state.luod-state") == 0);
        CHECK(archive_entry_filetype(e) == AE_IFREG);
        CHECK(archive_entry_perm(e) == 0600);
        CHECK(archive_entry_uid(e) == 0 && archive_entry_gid(e) == 0);
        CHECK(archive_entry_size(e) == (la_int64_t) PAYLOAD_SIZE);
        CHECK(archive_read_data(a, data, sizeof(data)) == (la_ssize_t) PAYLOAD_SIZE);
        CHECK(memcmp(data, payload, PAYLOAD_SIZE) == 0);

        CHECK(archive_read_next_header(a, &e) == ARCHIVE_EOF);
        CHECK(archive_read_free(a) == ARCHIVE_OK);
}

/* One newc member: 110-byte header + name + NUL, then the data, each padded
 * to 4 bytes. */
static size_t newc_member_size(const char *name, size_t data_size) {
        return (110 + strlen(name) + 1 + 3) / 4 * 4 + (data_size + 3) / 4 * 4;
}

/* The tests run in a fresh temporary directory: relative names. */
static void test_initrd_append(void) {
        _cleanup_free_ char *archive_only = NULL;
        size_t archive_size;

        /* The archive alone, as a NULL or empty initrd path gives it. */
        CHECK(initrd_append_state(NULL, "archive-only", payload, PAYLOAD_SIZE) == 0);
        archive_only = read_bytes("archive-only", &archive_size);
        CHECK(archive_only);
        if (!archive_only)
                return;
        /* Exactly the three members: no block padding after the trailer. */
        CHECK(archive_size == newc_member_size("luod", 0) +
                              newc_member_size("luod/state.luod-state", PAYLOAD_SIZE) +
                              newc_member_size("TRAILER!!!", 0));
        check_archive(archive_only, archive_size);

        CHECK(initrd_append_state("", "out", payload, PAYLOAD_SIZE) == 0);
        {
                _cleanup_free_ char *o = NULL;
                size_t n;

                o = read_bytes("out", &n);
                CHECK(o && n == archive_size && memcmp(o, archive_only, n) == 0);
        }

        /* Odd, even and aligned "initrds", and an empty one. */
        static const size_t sizes[] = { 1001, 1002, 1003, 1004, 0 };
        for (size_t i = 0; i < ELEMENTSOF(sizes); i++) {
                size_t n = sizes[i], pad = (4 - n % 4) % 4, out_size;
                _cleanup_free_ char *fake = malloc(n + 1), *o = NULL;
                char initrd[32];
                struct stat st;

                CHECK(fake);
                if (!fake)
                        return;
                for (size_t j = 0; j < n; j++)
                        fake[j] = (char) (j * 7 + 1); /* never 4 zeros in a row */
                snprintf(initrd, sizeof(initrd), "initrd-%zu", n);
                write_bytes(initrd, fake, n);

                CHECK(initrd_append_state(initrd, "out", payload, PAYLOAD_SIZE) == 0);
                o = read_bytes("out", &out_size);
                CHECK(o);
                if (!o)
                        return;
                CHECK(out_size == n + pad + archive_size);
                if (out_size != n + pad + archive_size)
                        continue;
                CHECK(memcmp(o, fake, n) == 0);
                for (size_t j = n; j < n + pad; j++)
                        CHECK(o[j] == 0);
                CHECK((n + pad) % 4 == 0);
                /* Read back from the padded offset, as the kernel does. */
                check_archive(o + n + pad, out_size - n - pad);
                CHECK(memcmp(o + n + pad, archive_only, archive_size) == 0);
                CHECK(stat("out", &st) == 0 && (st.st_mode & 07777) == 0600);
        }

        /* out may not be the initrd; the initrd stays intact. */
        CHECK(initrd_append_state("initrd-1001", "initrd-1001", payload, PAYLOAD_SIZE) == -EINVAL);
        {
                _cleanup_free_ char *o = NULL;
                size_t n;

                o = read_bytes("initrd-1001", &n);
                CHECK(o && n == 1001);
        }

        /* A missing initrd creates no output; a bad size is refused. */
        CHECK(initrd_append_state("no-such-initrd", "out-missing", payload, PAYLOAD_SIZE) == -ENOENT);
        CHECK(access("out-missing", F_OK) < 0 && errno == ENOENT);
        CHECK(initrd_append_state(NULL, "out-missing", payload, 0) == -EINVAL);
        CHECK(access("out-missing", F_OK) < 0 && errno == ENOENT);
}

static void test_initrd_find(void) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;

        write_bytes("found.luod-state", payload, PAYLOAD_SIZE);
        CHECK(initrd_find_state("found.luod-state", &buf, &size) == 0);
        CHECK(buf && size == PAYLOAD_SIZE && memcmp(buf, payload, size) == 0 && buf[size] == 0);

        CHECK(initrd_find_state("absent.luod-state", &buf, &size) == -ENOENT);
        write_bytes("empty.luod-state", "", 0);
        CHECK(initrd_find_state("empty.luod-state", &buf, &size) == -EBADMSG);
        CHECK(initrd_find_state(".", &buf, &size) == -EBADFD);
}

static void test_file(void) {
        static const char second[] = "second state";
        const char *sub = "var-lib-luod", *path = "var-lib-luod/state.luod-state";
        struct stat st;

        CHECK(mkdir(sub, 0700) == 0);

        CHECK(file_preserve(sub, payload, PAYLOAD_SIZE) == 0);
        {
                _cleanup_free_ char *buf = NULL;
                size_t size = 0;

                CHECK(file_retrieve(sub, &buf, &size) == 0);
                CHECK(buf && size == PAYLOAD_SIZE && memcmp(buf, payload, size) == 0);
        }
        CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600);
        CHECK(count_entries(sub) == 1);

        /* Replacing leaves the new state and no temporary file. */
        CHECK(file_preserve(sub, second, strlen(second)) == 0);
        {
                _cleanup_free_ char *buf = NULL;
                size_t size = 0;

                CHECK(file_retrieve(sub, &buf, &size) == 0);
                CHECK(buf && size == strlen(second) && strcmp(buf, second) == 0);
        }
        CHECK(count_entries(sub) == 1);

        CHECK(file_remove(sub) == 0);
        CHECK(count_entries(sub) == 0);
        {
                _cleanup_free_ char *buf = NULL;
                size_t size = 0;

                CHECK(file_retrieve(sub, &buf, &size) == -ENOENT);
        }
        CHECK(file_remove(sub) == -ENOENT);
        CHECK(file_preserve(sub, payload, 0) == -EINVAL);
        CHECK(count_entries(sub) == 0);

        CHECK(file_preserve("no-such-dir", payload, PAYLOAD_SIZE) == -ENOENT);
        CHECK(rmdir(sub) == 0);
}

static void check_with_update_id(const char *base, const char *want) {
        _cleanup_free_ char *s = NULL;
        char id[LUOD_UUID_STRING_MAX];

        CHECK(kernel_cmdline_with_update_id(base, NEW_ID, &s) == 0);
        CHECK(s && strcmp(s, want) == 0);
        if (s && strcmp(s, want) != 0)
                fprintf(stderr, "  got  '%s'\n  want '%s'\n", s, want);
        CHECK(s && kernel_cmdline_get_update_id(s, id) == 0 && strcmp(id, NEW_ID) == 0);
}

static void test_cmdline(void) {
        char id[LUOD_UUID_STRING_MAX] = "";
        _cleanup_free_ char *s = NULL;
        int r;

        /* The id goes before "--": what follows goes to init. */
        check_with_update_id("console=ttyS0 -- single luod.update_id=" OLD_ID,
                             "console=ttyS0 luod.update_id=" NEW_ID " -- single luod.update_id=" OLD_ID);
        /* An unbalanced quote would swallow the id; an over-long line does
         * not fit COMMAND_LINE_SIZE. */
        CHECK(kernel_cmdline_with_update_id("a=\"b c", NEW_ID, &s) == -EINVAL);
        {
                char longline[2100];
                memset(longline, 'x', sizeof(longline) - 1);
                longline[sizeof(longline) - 1] = '\0';
                CHECK(kernel_cmdline_with_update_id(longline, NEW_ID, &s) == -E2BIG);
        }

        /* Replaces an old update id, keeps the rest (as /proc/cmdline reads). */
        check_with_update_id("console=ttyS0 luod.update_id=" OLD_ID " quiet kho=on\n",
                             "console=ttyS0 quiet kho=on luod.update_id=" NEW_ID);
        /* Appends when there is none; whitespace collapses. */
        check_with_update_id("  console=ttyS0\tquiet  ", "console=ttyS0 quiet luod.update_id=" NEW_ID);
        check_with_update_id("", "luod.update_id=" NEW_ID);
        check_with_update_id(NULL, "luod.update_id=" NEW_ID);
        /* Every old one goes; look-alikes and quoted words stay. */
        check_with_update_id("luod.update_id=a luod.update_id=" OLD_ID " xluod.update_id=b luod.update_id",
                             "xluod.update_id=b luod.update_id luod.update_id=" NEW_ID);
        check_with_update_id("init=/bin/sh \"x=a luod.update_id=" OLD_ID " b\" ro",
                             "init=/bin/sh \"x=a luod.update_id=" OLD_ID " b\" ro luod.update_id=" NEW_ID);
        /* The update id must be a lowercase UUID. */
        CHECK(kernel_cmdline_with_update_id("a", "3F6C2A9E-8B1D-4E57-9A0C-5D2E7F14B6A8", &s) == -EINVAL);
        CHECK(kernel_cmdline_with_update_id("a", "3f6c2a9e", &s) == -EINVAL);
        CHECK(kernel_cmdline_with_update_id("a", NULL, &s) == -EINVAL);
        CHECK(!s);

        /* Parsing: absent, the last one counts, malformed. */
        CHECK(kernel_cmdline_get_update_id("console=ttyS0 quiet\n", id) == -ENOENT);
        CHECK(kernel_cmdline_get_update_id("", id) == -ENOENT);
        CHECK(kernel_cmdline_get_update_id("xluod.update_id=" NEW_ID " luod.update_id", id) == -ENOENT);
        CHECK(kernel_cmdline_get_update_id("luod.update_id=" OLD_ID " a luod.update_id=" NEW_ID "\n",
                                           id) == 0);
        CHECK(strcmp(id, NEW_ID) == 0);
        CHECK(kernel_cmdline_get_update_id("luod.update_id= quiet", id) == -EINVAL);
        CHECK(kernel_cmdline_get_update_id("luod.update_id=3F6C2A9E-8B1D-4E57-9A0C-5D2E7F14B6A8",
                                           id) == -EINVAL);
        CHECK(kernel_cmdline_get_update_id("luod.update_id=" NEW_ID "0", id) == -EINVAL);
        CHECK(kernel_cmdline_get_update_id("luod.update_id=3f6c2a9e+8b1d-4e57-9a0c-5d2e7f14b6a8",
                                           id) == -EINVAL);
        CHECK(strcmp(id, NEW_ID) == 0); /* untouched on failure */

        /* The running kernel's command line has no update id here. */
        {
                _cleanup_free_ char *proc = NULL;
                size_t n;

                proc = read_bytes("/proc/cmdline", &n);
                CHECK(proc);
                if (proc) {
                        proc[n] = 0;
                        r = kernel_cmdline_get_update_id(NULL, id);
                        CHECK(strstr(proc, "luod.update_id=") ? r != -ENOENT : r == -ENOENT);
                }
        }
}

static void test_kexec(void) {
        _cleanup_free_ char *error = NULL;
        int r;

        /* kexec-tools names the missing kernel; without kexec installed the
         * lookup fails the same way.  Nothing is loaded either way. */
        r = kexec_load_kernel("/nonexistent/luod-test/bzImage", NULL, "console=ttyS0", &error);
        CHECK(r == -ENOENT);
        CHECK(error && (strstr(error, "/nonexistent/luod-test/bzImage") ||
                        strstr(error, "not found in PATH")));
        if (error)
                fprintf(stderr, "kexec_load_kernel(/nonexistent/...): %s\n", error);
        free(error);
        error = NULL;
        CHECK(kexec_load_kernel(NULL, NULL, "x", &error) == -EINVAL);
        CHECK(error);

        r = kexec_loaded();
        if (access("/sys/kernel/kexec_loaded", R_OK) == 0)
                CHECK(r == 0 || r == 1);
        else
                CHECK(r == -ENOENT);
}

/* What the preflight opened is what a load reads, and a change to it is
 * refused before any syscall: the images here are no kernels, so nothing
 * could be loaded even by mistake. */
static void test_kexec_images(void) {
        _cleanup_(kexec_image_close) KexecImage k = KEXEC_IMAGE_NULL, i = KEXEC_IMAGE_NULL;
        _cleanup_free_ char *error = NULL;
        KexecImage x = KEXEC_IMAGE_NULL;

        CHECK(strcmp(kexec_loader_to_string(KEXEC_LOADER_FILE_LOAD), "kexec_file_load") == 0);
        CHECK(strcmp(kexec_loader_to_string(KEXEC_LOADER_KEXEC_TOOLS), "kexec-tools") == 0);
        CHECK(!kexec_loader_to_string(_KEXEC_LOADER_MAX));
        CHECK(kexec_loader_detect() == KEXEC_LOADER_FILE_LOAD || kexec_loader_detect() == KEXEC_LOADER_KEXEC_TOOLS);

        CHECK(kexec_image_open("no-such-image", &x) == -ENOENT);
        CHECK(kexec_image_open(".", &x) == -EINVAL);
        /* A FIFO without a writer is refused at once, not waited on. */
        CHECK(mkfifo("fifo-image", 0600) == 0);
        CHECK(kexec_image_open("fifo-image", &x) == -EINVAL);
        CHECK(x.fd == -EBADF);

        write_bytes("image-k", "kernel", 6);
        write_bytes("image-i", "initrd", 6);
        CHECK(kexec_image_open("image-k", &k) == 0);
        CHECK(kexec_image_open("image-i", &i) == 0);
        CHECK(kexec_image_unchanged(&k) == 0 && kexec_image_unchanged(&i) == 0);

        /* Renamed over: the open file is the one the preflight saw, and it
         * has lost its link, so it is refused. */
        write_bytes("image-other", "other!", 6);
        CHECK(rename("image-other", "image-k") == 0);
        CHECK(kexec_image_unchanged(&k) == -ESTALE);
        CHECK(kexec_load_images(&k, &i, "console=ttyS0", KEXEC_LOADER_FILE_LOAD, &error) == -ESTALE);
        CHECK(error && strstr(error, "the kernel image changed"));
        free(error);
        error = NULL;
        /* Written to in place, same size and mtime set back: ctime tells. */
        struct stat before = i.st;
        int fd = open("image-i", O_WRONLY | O_CLOEXEC);
        CHECK(fd >= 0 && pwrite(fd, "INITRD", 6, 0) == 6);
        CHECK(futimens(fd, (const struct timespec[2]) { before.st_atim, before.st_mtim }) == 0);
        if (fd >= 0)
                close(fd);
        CHECK(kexec_image_unchanged(&i) == -ESTALE);
        kexec_image_close(&k);
        CHECK(kexec_image_open("image-k", &k) == 0);
        CHECK(kexec_load_images(&k, &i, "console=ttyS0", KEXEC_LOADER_KEXEC_TOOLS, &error) == -ESTALE);
        CHECK(error && strstr(error, "the initrd changed"));
        free(error);
        error = NULL;
        CHECK(kexec_load_images(&k, NULL, NULL, KEXEC_LOADER_FILE_LOAD, &error) == -EINVAL);
        free(error);
        error = NULL;
        CHECK(kexec_load_images(&k, NULL, "x", _KEXEC_LOADER_MAX, &error) == -EINVAL);
        CHECK(unlink("fifo-image") == 0 && unlink("image-k") == 0 && unlink("image-i") == 0);
}

static int test_luo(void) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        int fd = -EBADF;

        if (access(LIVEUPDATE_DEVICE, F_OK) == 0) {
                fprintf(stderr, "%s exists: skipping the no-LUO checks\n", LIVEUPDATE_DEVICE);
                return 77;
        }
        CHECK(luo_preserve(payload, PAYLOAD_SIZE, &fd) == -ENOENT);
        CHECK(fd == -EBADF);
        CHECK(luo_retrieve(&buf, &size, &fd) == -ENOENT);
        CHECK(!buf && fd == -EBADF);
        CHECK(luo_preserve(payload, 0, &fd) == -EINVAL);
        CHECK(luo_finish(-1) == -EBADF);
        return tap_failures ? 1 : 0;
}

int main(int argc, char *argv[]) {
        char dir[] = "/tmp/test-preserve.XXXXXX";

        if (argc > 1 && strcmp(argv[1], "luo") == 0)
                return test_luo();

        if (!mkdtemp(dir) || chdir(dir) < 0) {
                perror(dir);
                return 1;
        }
        test_initrd_append();
        test_initrd_find();
        test_file();
        test_cmdline();
        test_kexec();
        test_kexec_images();

        /* Everything the tests wrote, by name: nothing else may be left. */
        {
                static const char *const names[] = {
                        "archive-only", "out", "initrd-1001", "initrd-1002", "initrd-1003",
                        "initrd-1004", "initrd-0", "found.luod-state", "empty.luod-state",
                };

                for (size_t i = 0; i < ELEMENTSOF(names); i++)
                        CHECK(unlink(names[i]) == 0);
                CHECK(count_entries(".") == 0);
                CHECK(chdir("/") == 0 && rmdir(dir) == 0);
        }
        return tap_failures ? 1 : 0;
}
