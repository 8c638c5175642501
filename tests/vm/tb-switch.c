/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tb-switch: what a context switch costs on this CPU (the test bed's
 * vCPUs under QEMU TCG, where an address-space switch may be far dearer
 * than on hardware).
 *
 *   tb-switch thread|process ROUNDS
 *   tb-switch pause COUNT
 *
 * Two tasks pinned to the CPU tb-switch starts on pass a byte back and
 * forth over two pipes ROUNDS times: every pass is one switch.  "thread":
 * two threads of one process (no address-space switch); "process": two
 * processes (every switch loads another page table, CR3).  Prints
 * "SWITCHES WALL_US US_PER_SWITCH" (CLOCK_MONOTONIC).  "pause": COUNT PAUSE
 * instructions in a row (the body of every cpu_relax() spin loop), printed
 * as "COUNT WALL_US US_PER_PAUSE": what one spin iteration costs here.
 * Exit 0, or 1 with a message naming the failed call and its errno. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];
static long rounds;

static uint64_t now_us(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

/* The echoing side: reads a byte from ping, writes it to pong, ROUNDS
 * times; returns 0 or a negative errno. */
static int echo_side(void) {
        char c;

        for (long i = 0; i < rounds; i++) {
                if (read(ping[0], &c, 1) != 1)
                        return -errno ?: -EIO;
                if (write(pong[1], &c, 1) != 1)
                        return -errno ?: -EIO;
        }
        return 0;
}

static void *echo_thread(void *arg) {
        (void) arg;
        return (void *) (intptr_t) echo_side();
}

int main(int argc, char *argv[]) {
        cpu_set_t one;
        uint64_t t0, t1;
        pthread_t th;
        pid_t pid = 0;
        int cpu, threads, r = 0;
        void *ret;
        char c = 'x';
        char *end;

        errno = 0;
        if (argc == 3)
                rounds = strtol(argv[2], &end, 10);
        /* at most 10^9: a typo must not spin a vCPU for hours */
        if (argc != 3 || (strcmp(argv[1], "thread") && strcmp(argv[1], "process") && strcmp(argv[1], "pause")) ||
            errno || *end || end == argv[2] || rounds <= 0 || rounds > 1000000000L) {
                fprintf(stderr, "usage: tb-switch thread|process ROUNDS, tb-switch pause COUNT\n");
                return 2;
        }
        if (strcmp(argv[1], "pause") == 0) {
                t0 = now_us();
                for (long i = 0; i < rounds; i++)
                        __builtin_ia32_pause();
                t1 = now_us();
                printf("%ld %" PRIu64 " %.3f\n", rounds, t1 - t0, (double) (t1 - t0) / rounds);
                return 0;
        }
        threads = strcmp(argv[1], "thread") == 0;
        cpu = sched_getcpu();
        if (cpu < 0) {
                fprintf(stderr, "tb-switch: sched_getcpu: %s\n", strerror(errno));
                return 1;
        }
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        /* pinned before the second task exists: it inherits the mask */
        if (sched_setaffinity(0, sizeof(one), &one) < 0) {
                fprintf(stderr, "tb-switch: sched_setaffinity(CPU %d): %s\n", cpu, strerror(errno));
                return 1;
        }
        if (pipe(ping) < 0 || pipe(pong) < 0) {
                fprintf(stderr, "tb-switch: pipe: %s\n", strerror(errno));
                return 1;
        }
        if (threads) {
                r = pthread_create(&th, NULL, echo_thread, NULL);
                if (r) {
                        fprintf(stderr, "tb-switch: pthread_create: %s\n", strerror(r));
                        return 1;
                }
        } else {
                pid = fork();
                if (pid < 0) {
                        fprintf(stderr, "tb-switch: fork: %s\n", strerror(errno));
                        return 1;
                }
                if (pid == 0) {
                        close(ping[1]);
                        close(pong[0]);
                        _exit(echo_side() < 0 ? 1 : 0);
                }
                /* the echo child's ends closed here, so its death is EOF, not a hang */
                close(ping[0]);
                close(pong[1]);
        }

        t0 = now_us();
        for (long i = 0; i < rounds; i++) {
                if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1) {
                        fprintf(stderr, "tb-switch: pipe I/O (ping-pong round %ld): %s\n", i,
                                strerror(errno ?: EIO));
                        r = 1;
                        break;
                }
        }
        t1 = now_us();

        if (threads) {
                if (r)
                        return 1; /* the echo thread may be blocked in read() */
                pthread_join(th, &ret);
                if ((intptr_t) ret < 0) {
                        fprintf(stderr, "tb-switch: echo thread: %s\n", strerror((int) -(intptr_t) ret));
                        return 1;
                }
        } else {
                int st;

                if (r)
                        kill(pid, SIGKILL);
                if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                        fprintf(stderr, "tb-switch: the echo process failed\n");
                        return 1;
                }
                if (r)
                        return 1;
        }
        printf("%ld %" PRIu64 " %.2f\n", 2 * rounds, t1 - t0, (double) (t1 - t0) / (2.0 * rounds));
        return 0;
}
