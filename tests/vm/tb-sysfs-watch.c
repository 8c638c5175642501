/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tb-sysfs-watch: watches an SR-IOV PF's VFs appear in sysfs, for the VM
 * test bed (issue 5, docs/kernel-staged-sysfs.md).
 *
 *   tb-sysfs-watch [OPTIONS] PFBDF
 *
 * Until SIGTERM or SIGINT:
 *  - N scanner threads read the PF's parent directory (where its VFs
 *    appear) with getdents64() in a tight loop and, for every VF-looking
 *    entry (a PCI address other than the PF) not yet seen complete, look up
 *    the entries device_add() creates in it (--entries).  A directory that
 *    lacks any of them is *half-built*: each such observation is recorded
 *    with its time and what was missing.
 *  - A netlink uevent monitor (NETLINK_KOBJECT_UEVENT, the kernel's own
 *    broadcast; no udevd needed) logs every event and checks, when a VF's
 *    "add" is read, that its directory has every entry; it counts the adds
 *    per VF, events of a VF before its add, and SEQNUMs that do not rise.
 * Then it prints a summary, one key=value a line, on stdout (see
 * print_summary()).
 *
 * Options:
 *   --scanners N     scanner threads (default 1)
 *   --entries LIST   comma-separated entries of a complete VF directory
 *                    (default uevent,subsystem,config,vendor,device,
 *                    driver_override; add iommu_group under an IOMMU)
 *   --events FILE    one line per uevent: SEQNUM ACTION DEVPATH STATE, STATE
 *                    complete|partial for a VF's add, "-" otherwise
 *   --log FILE       one line per half-built observation:
 *                    USEC BDF missing ENTRY[,ENTRY...]
 *                    (USEC: CLOCK_MONOTONIC since the start, microseconds)
 *   --ready FILE     created once the monitor listens and the scanners run
 * Exit status: 0 (the verdict is the caller's, from the summary), 1 setup
 * error, 2 usage. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/netlink.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "pci-util.h"

#define MAX_ENTRIES 32
#define MAX_SCANNERS 8
#define MAX_RECORDS 65536
#define N_IDS 65536 /* PCI routing IDs (bus << 8 | devfn) */

enum {
        VF_UNSEEN = 0,
        VF_SEEN,     /* seen by a scanner, not yet complete */
        VF_COMPLETE, /* seen with every entry */
};

typedef struct Vf {
        uint8_t state;          /* VF_*, atomic */
        uint32_t half_built;    /* observations, atomic */
        uint64_t first_seen_ns; /* by a scanner; first writer wins */
        uint64_t first_half_ns;
        uint64_t last_half_ns;
        uint64_t complete_ns;
        /* the monitor's (one thread) */
        unsigned adds;
        bool event_before_add;
} Vf;

typedef struct Record {
        uint64_t t_ns;
        uint32_t missing; /* bit i: entries[i] */
        uint16_t id;
} Record;

typedef struct Scanner {
        pthread_t thread;
        uint64_t scans;
        uint64_t half_built;
        uint64_t records_dropped;
        size_t n_records;
        Record *records;
} Scanner;

static const char *arg_entries = "uevent,subsystem,config,vendor,device,driver_override";
static const char *arg_events = NULL;
static const char *arg_log = NULL;
static const char *arg_ready = NULL;
static unsigned arg_scanners = 1;

static char *entries[MAX_ENTRIES];
static size_t n_entries;
static char parent[PATH_MAX];   /* /sys/devices/.../<PF's parent> */
static unsigned pf_domain, pf_id;
static int parent_fd = -1;
static Vf *vfs;
static uint64_t t0_ns;
static volatile bool stopping;

/* the monitor's counters */
static int nl_fd = -1;
static pthread_t monitor_thread;
static FILE *events_file;
static uint64_t n_events, n_seqnum_errors, n_events_lost, n_adds_partial;

static uint64_t now_ns(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

/* "DDDD:BB:DD.F" -> domain and routing ID (bus << 8 | dev << 3 | fn). */
static bool parse_bdf(const char *s, unsigned *ret_domain, unsigned *ret_id) {
        PciBdf b;

        if (pci_bdf_parse(s, &b) < 0)
                return false;
        *ret_domain = b.domain;
        *ret_id = (unsigned) b.bus << 8 | (unsigned) b.device << 3 | b.function;
        return true;
}

/* Returns the bitmask of entries missing in dir NAME below dirfd, or -1 if
 * NAME itself is gone (a VF removed: not half-built). */
static int64_t missing_entries(int dirfd, const char *name) {
        char path[PATH_MAX];
        struct stat st;
        uint32_t missing = 0;
        size_t len = strlen(name);

        if (len + 2 >= sizeof(path))
                return -1;
        memcpy(path, name, len);
        path[len++] = '/';
        for (size_t i = 0; i < n_entries; i++) {
                size_t l = strlen(entries[i]);

                if (len + l + 1 > sizeof(path))
                        return -1;
                memcpy(path + len, entries[i], l + 1);
                if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        missing |= UINT32_C(1) << i;
        }
        if (missing == (n_entries == 32 ? UINT32_MAX : (UINT32_C(1) << n_entries) - 1) &&
            fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -1;
        return missing;
}

static void set_once(uint64_t *p, uint64_t v) {
        uint64_t zero = 0;

        (void) __atomic_compare_exchange_n(p, &zero, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

static void set_max(uint64_t *p, uint64_t v) {
        uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);

        while (cur < v && !__atomic_compare_exchange_n(p, &cur, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                ;
}

static void scan_entry(Scanner *s, int dirfd, const char *name) {
        unsigned domain, id;
        uint8_t state;
        int64_t missing;
        uint64_t t;
        Vf *vf;

        if (!parse_bdf(name, &domain, &id) || domain != pf_domain || id == pf_id)
                return;
        vf = &vfs[id];
        state = __atomic_load_n(&vf->state, __ATOMIC_RELAXED);
        if (state == VF_COMPLETE)
                return;
        missing = missing_entries(dirfd, name);
        t = now_ns();
        if (missing < 0)
                return;
        if (state == VF_UNSEEN) {
                uint8_t unseen = VF_UNSEEN;

                /* Another scanner may have seen it complete meanwhile. */
                (void) __atomic_compare_exchange_n(&vf->state, &unseen, VF_SEEN, false, __ATOMIC_RELAXED,
                                                   __ATOMIC_RELAXED);
                set_once(&vf->first_seen_ns, t);
        }
        if (missing == 0) {
                __atomic_store_n(&vf->state, VF_COMPLETE, __ATOMIC_RELAXED);
                set_once(&vf->complete_ns, t);
                return;
        }
        s->half_built++;
        __atomic_add_fetch(&vf->half_built, 1, __ATOMIC_RELAXED);
        set_once(&vf->first_half_ns, t);
        set_max(&vf->last_half_ns, t);
        if (s->n_records < MAX_RECORDS)
                s->records[s->n_records++] = (Record) { .t_ns = t, .missing = (uint32_t) missing, .id = (uint16_t) id };
        else
                s->records_dropped++;
}

static void *scanner_main(void *userdata) {
        Scanner *s = userdata;
        _cleanup_close_ int fd = -1;
        char buf[32768];

        /* A directory fd of its own: getdents64() positions are per open file. */
        fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                log_error_errno(-errno, "Failed to open %s: %m", parent);
                return NULL;
        }
        while (!__atomic_load_n(&stopping, __ATOMIC_RELAXED)) {
                ssize_t n;

                if (lseek(fd, 0, SEEK_SET) < 0) {
                        log_error_errno(-errno, "Failed to rewind %s: %m", parent);
                        return NULL;
                }
                while ((n = getdents64(fd, buf, sizeof(buf))) > 0)
                        for (ssize_t off = 0; off < n;) {
                                struct dirent64 *de = (struct dirent64 *) (buf + off);

                                if (de->d_type == DT_DIR || de->d_type == DT_UNKNOWN)
                                        scan_entry(s, fd, de->d_name);
                                off += de->d_reclen;
                        }
                if (n < 0) {
                        log_error_errno(-errno, "Failed to read %s: %m", parent);
                        return NULL;
                }
                s->scans++;
        }
        return NULL;
}

/* The value of KEY= in a uevent message's NUL-separated environment. */
static const char *uevent_get(const char *buf, size_t len, const char *key) {
        size_t kl = strlen(key);

        for (size_t off = strlen(buf) + 1; off < len; off += strlen(buf + off) + 1)
                if (strncmp(buf + off, key, kl) == 0 && buf[off + kl] == '=')
                        return buf + off + kl + 1;
        return NULL;
}

static void handle_uevent(const char *buf, size_t len, uint64_t *last_seqnum) {
        const char *action, *devpath, *seqnum, *subsystem, *state = "-", *name;
        unsigned domain, id;
        uint64_t seq;
        size_t plen = strlen(parent) - strlen("/sys");

        action = uevent_get(buf, len, "ACTION");
        devpath = uevent_get(buf, len, "DEVPATH");
        seqnum = uevent_get(buf, len, "SEQNUM");
        subsystem = uevent_get(buf, len, "SUBSYSTEM");
        if (!action || !devpath || !seqnum)
                return;
        n_events++;
        seq = strtoull(seqnum, NULL, 10);
        if (seq <= *last_seqnum)
                n_seqnum_errors++;
        *last_seqnum = seq;

        /* A VF: /devices/.../<parent>/<BDF>, a sibling of the PF. */
        name = strrchr(devpath, '/');
        if (name && (size_t) (name - devpath) == plen && strncmp(devpath, parent + strlen("/sys"), plen) == 0 &&
            parse_bdf(name + 1, &domain, &id) && domain == pf_domain && id != pf_id &&
            subsystem && strcmp(subsystem, "pci") == 0) {
                Vf *vf = &vfs[id];

                if (strcmp(action, "add") == 0) {
                        int64_t missing = missing_entries(parent_fd, name + 1);

                        vf->adds++;
                        state = missing == 0 ? "complete" : "partial";
                        if (missing != 0)
                                n_adds_partial++;
                } else if (vf->adds == 0)
                        vf->event_before_add = true;
        }
        if (events_file)
                fprintf(events_file, "%s %s %s %s\n", seqnum, action, devpath, state);
}

static void *monitor_main(void *userdata) {
        uint64_t last_seqnum = 0;
        char buf[16384];

        for (;;) {
                bool stop = __atomic_load_n(&stopping, __ATOMIC_RELAXED);
                struct sockaddr_nl sa;
                struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) - 1 };
                struct msghdr mh = { .msg_name = &sa, .msg_namelen = sizeof(sa), .msg_iov = &iov, .msg_iovlen = 1 };
                ssize_t n;

                if (!stop) {
                        struct pollfd pfd = { .fd = nl_fd, .events = POLLIN };

                        if (poll(&pfd, 1, 100) <= 0)
                                continue;
                }
                /* Once stopping, drain what is queued, then leave. */
                n = recvmsg(nl_fd, &mh, stop ? MSG_DONTWAIT : 0);
                if (n < 0) {
                        if (errno == ENOBUFS) {
                                n_events_lost++;
                                continue;
                        }
                        if (errno == EINTR || (errno == EAGAIN && !stop))
                                continue;
                        if (errno != EAGAIN)
                                log_error_errno(-errno, "Failed to read the uevent socket: %m");
                        break;
                }
                if (sa.nl_pid != 0) /* not the kernel's */
                        continue;
                buf[n] = '\0';
                handle_uevent(buf, (size_t) n, &last_seqnum);
        }
        return NULL;
}

static int parse_entries(void) {
        static char copy[1024];
        char *p, *save = NULL;

        if (strlen(arg_entries) >= sizeof(copy))
                return log_error_errno(-EINVAL, "--entries is too long");
        strcpy(copy, arg_entries);
        for (p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
                if (n_entries >= MAX_ENTRIES)
                        return log_error_errno(-EINVAL, "--entries: more than %d entries", MAX_ENTRIES);
                entries[n_entries++] = p;
        }
        if (n_entries == 0)
                return log_error_errno(-EINVAL, "--entries is empty");
        return 0;
}

static int parse_argv(int argc, char *argv[]) {
        static const struct option options[] = {
                { "scanners", required_argument, NULL, 's' },
                { "entries", required_argument, NULL, 'e' },
                { "events", required_argument, NULL, 'E' },
                { "log", required_argument, NULL, 'l' },
                { "ready", required_argument, NULL, 'r' },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case 's': {
                        char *end;
                        unsigned long v = strtoul(optarg, &end, 10);

                        if (*optarg == '\0' || *end != '\0' || v < 1 || v > MAX_SCANNERS)
                                return log_error_errno(-EINVAL, "--scanners wants 1..%d", MAX_SCANNERS);
                        arg_scanners = (unsigned) v;
                        break;
                }
                case 'e':
                        arg_entries = optarg;
                        break;
                case 'E':
                        arg_events = optarg;
                        break;
                case 'l':
                        arg_log = optarg;
                        break;
                case 'r':
                        arg_ready = optarg;
                        break;
                default:
                        return -EINVAL;
                }
        if (optind != argc - 1)
                return -EINVAL;
        return 0;
}

static int open_monitor(void) {
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 };
        int size = 16 * 1024 * 1024;

        nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
        if (nl_fd < 0)
                return log_error_errno(-errno, "Failed to open a NETLINK_KOBJECT_UEVENT socket: %m");
        if (setsockopt(nl_fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
                (void) setsockopt(nl_fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
        if (bind(nl_fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return log_error_errno(-errno, "Failed to bind the uevent socket: %m");
        return 0;
}

static int cmp_record(const void *a, const void *b) {
        const Record *x = a, *y = b;

        return x->t_ns < y->t_ns ? -1 : x->t_ns > y->t_ns;
}

static void id_name(unsigned id, char buf[static 16]) {
        snprintf(buf, 16, "%04x:%02x:%02x.%u", pf_domain, id >> 8, (id >> 3) & 0x1f, id & 7);
}

static int write_log(Scanner *scanners) {
        _cleanup_free_ Record *all = NULL;
        size_t n = 0;
        FILE *f;

        for (unsigned i = 0; i < arg_scanners; i++)
                n += scanners[i].n_records;
        all = malloc(MAX(n, 1) * sizeof(Record));
        if (!all)
                return log_error_errno(-ENOMEM, "Out of memory");
        n = 0;
        for (unsigned i = 0; i < arg_scanners; i++) {
                memcpy(all + n, scanners[i].records, scanners[i].n_records * sizeof(Record));
                n += scanners[i].n_records;
        }
        qsort(all, n, sizeof(Record), cmp_record);
        f = fopen(arg_log, "we");
        if (!f)
                return log_error_errno(-errno, "Failed to create %s: %m", arg_log);
        for (size_t i = 0; i < n; i++) {
                char name[16];
                const char *sep = "";

                id_name(all[i].id, name);
                fprintf(f, "%" PRIu64 " %s missing ", (all[i].t_ns - t0_ns) / 1000, name);
                for (size_t e = 0; e < n_entries; e++)
                        if (all[i].missing & (UINT32_C(1) << e)) {
                                fprintf(f, "%s%s", sep, entries[e]);
                                sep = ",";
                        }
                fputc('\n', f);
        }
        if (fclose(f) != 0)
                return log_error_errno(-EIO, "Failed to write %s", arg_log);
        return 0;
}

/* The summary, key=value on stdout:
 *   parent, entries, scanners, duration_ms
 *   scans                 scans of the parent directory, all scanners
 *   scan_us               mean time of one scan (duration x scanners / scans)
 *   vf_dirs               VF directories seen by the scanners
 *   vf_complete           ... of them seen complete by the end
 *   half_built            observations of a VF directory missing entries
 *   half_built_vfs        VFs seen half-built at least once
 *   half_built_max_us     longest time a VF was seen half-built (first to
 *                         last observation)
 *   half_built_mean_us    ... mean over the VFs seen half-built
 *   seen_to_complete_max_us  longest time from a VF's first sighting to its
 *                         first complete one
 *   records_dropped       half-built observations not logged (MAX_RECORDS)
 *   events                uevents read (all devices)
 *   events_lost           ENOBUFS on the uevent socket (events dropped)
 *   seqnum_errors         events whose SEQNUM did not rise
 *   vf_adds               "add" events of VFs
 *   vf_adds_partial       ... read while the VF's directory lacked entries
 *   vf_adds_not_once      VFs seen by a scanner or an event, with != 1 add
 *   vf_events_before_add  VFs with an event before their add */
static void print_summary(Scanner *scanners, uint64_t duration_ns) {
        uint64_t scans = 0, half = 0, dropped = 0, half_max = 0, half_sum = 0, complete_max = 0, adds = 0;
        unsigned dirs = 0, complete = 0, half_vfs = 0, not_once = 0, before_add = 0;

        for (unsigned i = 0; i < arg_scanners; i++) {
                scans += scanners[i].scans;
                half += scanners[i].half_built;
                dropped += scanners[i].records_dropped;
        }
        for (unsigned id = 0; id < N_IDS; id++) {
                Vf *vf = &vfs[id];

                if (vf->state == VF_UNSEEN && vf->adds == 0 && !vf->event_before_add)
                        continue;
                adds += vf->adds;
                if (vf->adds != 1)
                        not_once++;
                if (vf->event_before_add)
                        before_add++;
                if (vf->state == VF_UNSEEN)
                        continue;
                dirs++;
                if (vf->state == VF_COMPLETE) {
                        complete++;
                        complete_max = MAX(complete_max, vf->complete_ns - vf->first_seen_ns);
                }
                if (vf->half_built > 0) {
                        half_vfs++;
                        half_max = MAX(half_max, vf->last_half_ns - vf->first_half_ns);
                        half_sum += vf->last_half_ns - vf->first_half_ns;
                }
        }
        printf("parent=%s\n", parent);
        printf("entries=%s\n", arg_entries);
        printf("scanners=%u\n", arg_scanners);
        printf("duration_ms=%" PRIu64 "\n", duration_ns / 1000000);
        printf("scans=%" PRIu64 "\n", scans);
        printf("scan_us=%.1f\n", scans ? (double) duration_ns * arg_scanners / 1000.0 / (double) scans : 0.0);
        printf("vf_dirs=%u\n", dirs);
        printf("vf_complete=%u\n", complete);
        printf("half_built=%" PRIu64 "\n", half);
        printf("half_built_vfs=%u\n", half_vfs);
        printf("half_built_max_us=%" PRIu64 "\n", half_max / 1000);
        printf("half_built_mean_us=%" PRIu64 "\n", half_vfs ? half_sum / half_vfs / 1000 : 0);
        printf("seen_to_complete_max_us=%" PRIu64 "\n", complete_max / 1000);
        printf("records_dropped=%" PRIu64 "\n", dropped);
        printf("events=%" PRIu64 "\n", n_events);
        printf("events_lost=%" PRIu64 "\n", n_events_lost);
        printf("seqnum_errors=%" PRIu64 "\n", n_seqnum_errors);
        printf("vf_adds=%" PRIu64 "\n", adds);
        printf("vf_adds_partial=%" PRIu64 "\n", n_adds_partial);
        printf("vf_adds_not_once=%u\n", not_once);
        printf("vf_events_before_add=%u\n", before_add);
}

static int run(const char *pf) {
        _cleanup_free_ Scanner *scanners = NULL;
        char link[PATH_MAX], *slash;
        sigset_t mask;
        uint64_t t_end;
        int r, sig;

        snprintf(link, sizeof(link), "/sys/bus/pci/devices/%s", pf);
        if (!realpath(link, parent))
                return log_error_errno(-errno, "Failed to resolve %s: %m", link);
        slash = strrchr(parent, '/');
        *slash = '\0';
        if (strncmp(parent, "/sys/", 5) != 0)
                return log_error_errno(-EINVAL, "%s is not below /sys", parent);
        parent_fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (parent_fd < 0)
                return log_error_errno(-errno, "Failed to open %s: %m", parent);
        vfs = calloc(N_IDS, sizeof(Vf));
        scanners = calloc(arg_scanners, sizeof(Scanner));
        if (!vfs || !scanners)
                return log_error_errno(-ENOMEM, "Out of memory");
        for (unsigned i = 0; i < arg_scanners; i++) {
                scanners[i].records = malloc(MAX_RECORDS * sizeof(Record));
                if (!scanners[i].records)
                        return log_error_errno(-ENOMEM, "Out of memory");
        }
        if (arg_events) {
                events_file = fopen(arg_events, "we");
                if (!events_file)
                        return log_error_errno(-errno, "Failed to create %s: %m", arg_events);
        }
        r = open_monitor();
        if (r < 0)
                return r;

        /* Signals go to sigwait() here, not to the threads. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        r = pthread_sigmask(SIG_BLOCK, &mask, NULL);
        if (r != 0)
                return log_error_errno(-r, "Failed to block signals: %m");

        t0_ns = now_ns();
        r = pthread_create(&monitor_thread, NULL, monitor_main, NULL);
        if (r != 0)
                return log_error_errno(-r, "Failed to start the monitor: %m");
        for (unsigned i = 0; i < arg_scanners; i++) {
                r = pthread_create(&scanners[i].thread, NULL, scanner_main, &scanners[i]);
                if (r != 0)
                        return log_error_errno(-r, "Failed to start a scanner: %m");
        }
        if (arg_ready) {
                _cleanup_close_ int fd = open(arg_ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

                if (fd < 0)
                        return log_error_errno(-errno, "Failed to create %s: %m", arg_ready);
        }

        do
                r = sigwait(&mask, &sig);
        while (r == EINTR);
        t_end = now_ns();
        __atomic_store_n(&stopping, true, __ATOMIC_RELAXED);
        for (unsigned i = 0; i < arg_scanners; i++)
                (void) pthread_join(scanners[i].thread, NULL);
        (void) pthread_join(monitor_thread, NULL);

        if (events_file && fclose(events_file) != 0)
                log_error("Failed to write %s", arg_events);
        if (arg_log)
                (void) write_log(scanners);
        print_summary(scanners, t_end - t0_ns);
        for (unsigned i = 0; i < arg_scanners; i++)
                free(scanners[i].records);
        return 0;
}

int main(int argc, char *argv[]) {
        if (parse_argv(argc, argv) < 0) {
                fprintf(stderr, "usage: tb-sysfs-watch [--scanners N] [--entries LIST] [--events FILE]\n"
                                "                      [--log FILE] [--ready FILE] PFBDF\n");
                return 2;
        }
        if (parse_entries() < 0)
                return 2;
        if (!parse_bdf(argv[optind], &pf_domain, &pf_id)) {
                log_error("'%s' is not a PCI address (DDDD:BB:DD.F)", argv[optind]);
                return 2;
        }
        return run(argv[optind]) < 0 ? 1 : 0;
}
