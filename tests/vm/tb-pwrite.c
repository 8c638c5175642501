/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tb-pwrite: several writes started at once, from threads of one process
 * or from processes, each timed with its own CPU clock: the same kernel
 * work with and without an address-space switch between the writers
 * (under QEMU TCG every page-table load flushes the vCPU's soft TLB).
 *
 *   tb-pwrite thread|process FILE=VALUE...
 *
 * Every writer opens its FILE first, then all wait at one barrier and
 * write VALUE (one write(2)).  Prints a line per writer,
 *   FILE WALL_MS CPU_MS VCSW IVCSW START_MS END_MS
 * (CPU: CLOCK_THREAD_CPUTIME_ID around the write; context switches from
 * getrusage(RUSAGE_THREAD); START/END: CLOCK_MONOTONIC ms after the
 * earliest writer's start), then
 *   total WALL_MS CPU_MS VCSW IVCSW
 * (WALL: the earliest start to the latest end; the rest summed) when
 * every write succeeded.  Exit 0 then; 1 with a line naming the file and
 * errno, and no total, when one failed; 2 on usage errors (an empty VALUE
 * included). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_WRITERS 64

struct writer {
        const char *file;
        const char *value;
        int64_t start_ns, end_ns, cpu_ns;
        long vcsw, ivcsw;
        int err; /* errno of a failed open or write, 0 */
};

struct shared {
        pthread_barrier_t barrier;
        struct writer w[MAX_WRITERS];
};

static struct shared *sh;

static int64_t clock_ns(clockid_t id) {
        struct timespec ts;

        clock_gettime(id, &ts);
        return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One writer: open, barrier, timed write; results into its slot. */
static void run_writer(struct writer *w) {
        struct rusage r0, r1;
        size_t len = strlen(w->value);
        int64_t c0;
        int fd;

        fd = open(w->file, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                w->err = errno;
        pthread_barrier_wait(&sh->barrier);
        if (fd < 0)
                return;
        getrusage(RUSAGE_THREAD, &r0);
        c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        w->start_ns = clock_ns(CLOCK_MONOTONIC);
        errno = 0;
        if (write(fd, w->value, len) != (ssize_t) len)
                w->err = errno ?: EIO; /* a short write sets no errno */
        w->end_ns = clock_ns(CLOCK_MONOTONIC);
        w->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
        getrusage(RUSAGE_THREAD, &r1);
        w->vcsw = r1.ru_nvcsw - r0.ru_nvcsw;
        w->ivcsw = r1.ru_nivcsw - r0.ru_nivcsw;
        close(fd);
}

static void *writer_thread(void *arg) {
        run_writer(arg);
        return NULL;
}

int main(int argc, char *argv[]) {
        pthread_barrierattr_t ba;
        pthread_t th[MAX_WRITERS];
        pid_t pid[MAX_WRITERS];
        int64_t lo = INT64_MAX, hi = 0, cpu = 0;
        long vcsw = 0, ivcsw = 0;
        int n = argc - 2, threads, failed = 0, r;

        if (argc < 3 || n > MAX_WRITERS || (strcmp(argv[1], "thread") && strcmp(argv[1], "process"))) {
                fprintf(stderr, "usage: tb-pwrite thread|process FILE=VALUE... (at most %d)\n", MAX_WRITERS);
                return 2;
        }
        threads = strcmp(argv[1], "thread") == 0;
        sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (sh == MAP_FAILED) {
                fprintf(stderr, "tb-pwrite: mmap: %s\n", strerror(errno));
                return 1;
        }
        for (int i = 0; i < n; i++) {
                char *eq = strchr(argv[i + 2], '=');

                if (!eq || eq == argv[i + 2] || !eq[1]) {
                        fprintf(stderr, "tb-pwrite: '%s' is not FILE=VALUE\n", argv[i + 2]);
                        return 2;
                }
                *eq = '\0';
                sh->w[i].file = argv[i + 2];
                sh->w[i].value = eq + 1;
        }
        /* the writers and this thread, so that no writer starts before all exist */
        pthread_barrierattr_init(&ba);
        pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
        r = pthread_barrier_init(&sh->barrier, &ba, n + 1);
        if (r) {
                fprintf(stderr, "tb-pwrite: pthread_barrier_init: %s\n", strerror(r));
                return 1;
        }
        for (int i = 0; i < n; i++) {
                if (threads) {
                        r = pthread_create(&th[i], NULL, writer_thread, &sh->w[i]);
                        if (r) {
                                fprintf(stderr, "tb-pwrite: pthread_create: %s\n", strerror(r));
                                return 1; /* the barrier never opens: exit */
                        }
                } else {
                        pid[i] = fork();
                        if (pid[i] < 0) {
                                fprintf(stderr, "tb-pwrite: fork: %s\n", strerror(errno));
                                /* the writers forked so far wait at the barrier forever */
                                for (int j = 0; j < i; j++)
                                        kill(pid[j], SIGKILL);
                                return 1;
                        }
                        if (pid[i] == 0) {
                                run_writer(&sh->w[i]);
                                _exit(0);
                        }
                }
        }
        pthread_barrier_wait(&sh->barrier);
        for (int i = 0; i < n; i++) {
                if (threads)
                        pthread_join(th[i], NULL);
                else {
                        int st;

                        if (waitpid(pid[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
                                fprintf(stderr, "tb-pwrite: the writer of %s died\n", sh->w[i].file);
                                failed = 1;
                        }
                }
        }
        for (int i = 0; i < n; i++) {
                struct writer *w = &sh->w[i];

                if (w->err) {
                        fprintf(stderr, "tb-pwrite: %s: %s\n", w->file, strerror(w->err));
                        failed = 1;
                }
                if (!w->start_ns)
                        continue;
                lo = w->start_ns < lo ? w->start_ns : lo;
                hi = w->end_ns > hi ? w->end_ns : hi;
                cpu += w->cpu_ns;
                vcsw += w->vcsw;
                ivcsw += w->ivcsw;
        }
        for (int i = 0; i < n; i++) {
                struct writer *w = &sh->w[i];

                if (w->start_ns)
                        printf("%s %.1f %.1f %ld %ld %.1f %.1f\n", w->file, (w->end_ns - w->start_ns) / 1e6,
                               w->cpu_ns / 1e6, w->vcsw, w->ivcsw, (w->start_ns - lo) / 1e6, (w->end_ns - lo) / 1e6);
        }
        /* no total after a failure: its figures would not be of the whole work */
        if (hi && !failed)
                printf("total %.1f %.1f %ld %ld\n", (hi - lo) / 1e6, cpu / 1e6, vcsw, ivcsw);
        return failed;
}
