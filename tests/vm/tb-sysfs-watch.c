/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tb-sysfs-watch: watches SR-IOV PFs' VFs appear and go in sysfs, for the
 * VM test bed (issue 5, docs/kernel-staged-sysfs.md).
 *
 *   tb-sysfs-watch [OPTIONS] PFBDF...
 *
 * Until SIGTERM or SIGINT, for up to 8 PFs (one PCI domain):
 *  - N scanner threads read each PF's parent directory (where its VFs
 *    appear) with getdents64() in a tight loop and, for every entry that is
 *    one of the PFs' VFs (its routing ID = PF + sriov_offset + i x
 *    sriov_stride, i < sriov_totalvfs) not yet seen complete, look up the
 *    entries device_add() creates in it (--entries).  A directory that
 *    lacks any of them is *half-built*: each such observation is recorded
 *    with its time and what was missing.
 *  - A netlink uevent monitor (NETLINK_KOBJECT_UEVENT, the kernel's own
 *    broadcast, what `udevadm monitor --kernel` shows; no udevd needed)
 *    logs every event and checks, when a VF's "add" is read, that its
 *    directory has every entry; it counts per VF the adds and removes, an
 *    add while the VF is present, an event while it is not, and SEQNUMs
 *    that do not rise.
 * VFs may come and go many times (rounds of sriov_numvfs N, 0): a VF's
 * "remove" makes the scanners wait until one whole scan of its parent no
 * longer lists it, and then look at its next directory afresh.
 * Then it prints a summary, one key=value a line, on stdout (see
 * print_summary()).
 *
 * Options:
 *   --scanners N     scanner threads (default 1)
 *   --entries LIST   comma-separated entries of a complete VF directory
 *                    (default uevent,subsystem,config,vendor,device,
 *                    driver_override; add iommu_group under an IOMMU,
 *                    physfn for the VF's link to its PF).  The pseudo-entry
 *                    @virtfn is the PF's link to the VF, PF/virtfnN.
 *   --events FILE    one line per uevent: SEQNUM ACTION DEVPATH STATE, STATE
 *                    for a VF's add "complete" or "partial:ENTRY[,ENTRY...]"
 *                    (the entries missing), "-" otherwise
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

#include "io-util.h"
#include "log.h"
#include "macro.h"
#include "pci-util.h"

#define MAX_ENTRIES 32
#define MAX_SCANNERS 8
#define MAX_PFS 8
#define MAX_RECORDS 65536
#define N_IDS 65536 /* PCI routing IDs (bus << 8 | devfn) */

enum {
        VF_UNSEEN = 0,
        VF_SEEN,     /* seen by a scanner, not yet complete */
        VF_COMPLETE, /* seen with every entry */
        VF_REMOVED,  /* "remove" read; its directory may still be listed */
};

/* One VF (routing ID); the times are of its current round's directory. */
typedef struct Vf {
        uint8_t state;          /* VF_*, atomic */
        int8_t pf;              /* index in pfs[], -1: not a VF of ours */
        uint32_t half_built;    /* observations, all rounds, atomic */
        uint32_t sightings;     /* UNSEEN -> SEEN/COMPLETE, atomic */
        uint32_t completions;   /* -> COMPLETE, atomic */
        uint64_t first_seen_ns; /* by the scanner that saw it first this round */
        uint64_t first_half_ns;
        uint64_t last_half_ns;
        uint64_t complete_ns;
        uint64_t seen_to_complete_max_ns;
        uint64_t half_span_ns;  /* sum over rounds of last - first half-built */
        uint64_t half_span_max_ns;
        uint64_t listed_ns;     /* start of the latest scan that listed it */
        uint64_t removed_ns;    /* when its "remove" was read */
        /* the monitor's (one thread) */
        unsigned adds, removes;
        bool present;           /* between its add and its remove */
        unsigned adds_double;   /* adds while present */
        unsigned events_absent; /* other events while not present */
} Vf;

typedef struct Pf {
        const char *name;       /* "DDDD:BB:DD.F", as given */
        unsigned id;            /* routing ID */
        unsigned offset, stride, total; /* sriov_offset, _stride, _totalvfs */
        size_t parent;          /* index in parents[] */
} Pf;

typedef struct Parent {
        char path[PATH_MAX];    /* /sys/devices/.../<PFs' parent> */
        int fd;
} Parent;

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
static Pf pfs[MAX_PFS];
static size_t n_pfs;
static Parent parents[MAX_PFS];
static size_t n_parents;
static unsigned pf_domain;
static Vf *vfs;
static uint32_t n_removed;      /* VFs in VF_REMOVED, atomic */
static uint64_t n_teardown_sightings; /* incomplete, but removed meanwhile, atomic */
static uint32_t n_thread_errors;      /* scanners or the monitor that died, atomic */
static uint64_t t0_ns;
static volatile bool stopping;

/* the monitor's counters */
static int nl_fd = -1;
static pthread_t monitor_thread;
static FILE *events_file;
static uint64_t n_events, n_seqnum_errors, n_events_lost, n_adds_partial, n_adds_gone, n_remove_unconfirmed;

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

/* The VF index of routing ID id under PF p, or -1 if it is not one of p's
 * VFs: id = p's id + sriov_offset + index x sriov_stride. */
static int vf_index(const Pf *p, unsigned id) {
        unsigned d = (id - p->id - p->offset) & 0xffff;

        if (p->stride == 0 || d % p->stride != 0 || d / p->stride >= p->total)
                return -1;
        return (int) (d / p->stride);
}

/* "PF/virtfnN" of the VF with routing ID id, relative to their parent. */
static bool virtfn_path(unsigned id, char *buf, size_t size) {
        const Pf *p;
        int i;

        if (vfs[id].pf < 0)
                return false;
        p = &pfs[vfs[id].pf];
        i = vf_index(p, id);
        return i >= 0 && (size_t) snprintf(buf, size, "%s/virtfn%d", p->name, i) < size;
}

/* Returns the bitmask of entries missing in dir NAME below dirfd, or -1 if
 * NAME itself is gone (a VF removed: not half-built). */
static int64_t missing_entries(int dirfd, const char *name, unsigned id) {
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

                if (strcmp(entries[i], "@virtfn") == 0) {
                        char vpath[PATH_MAX];

                        if (!virtfn_path(id, vpath, sizeof(vpath)) ||
                            fstatat(dirfd, vpath, &st, AT_SYMLINK_NOFOLLOW) < 0)
                                missing |= UINT32_C(1) << i;
                        continue;
                }

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

static void scan_entry(Scanner *s, size_t parent, int dirfd, const char *name, uint64_t scan_start) {
        unsigned domain, id;
        uint8_t state;
        int64_t missing;
        uint64_t t;
        Vf *vf;

        if (!parse_bdf(name, &domain, &id) || domain != pf_domain)
                return;
        vf = &vfs[id];
        if (vf->pf < 0 || pfs[vf->pf].parent != parent)
                return;
        set_max(&vf->listed_ns, scan_start);
        state = __atomic_load_n(&vf->state, __ATOMIC_RELAXED);
        if (state == VF_COMPLETE || state == VF_REMOVED)
                return;
        missing = missing_entries(dirfd, name, id);
        t = now_ns();
        if (missing < 0)
                return;
        /* Its remove read meanwhile: what is missing may be the teardown's
         * doing (device_del() removes entries before KOBJ_REMOVE). */
        if (missing != 0 && __atomic_load_n(&vf->state, __ATOMIC_RELAXED) == VF_REMOVED) {
                __atomic_add_fetch(&n_teardown_sightings, 1, __ATOMIC_RELAXED);
                return;
        }
        if (state == VF_UNSEEN) {
                uint8_t unseen = VF_UNSEEN;

                /* Another scanner may have seen it meanwhile. */
                if (__atomic_compare_exchange_n(&vf->state, &unseen, VF_SEEN, false, __ATOMIC_RELAXED,
                                                __ATOMIC_RELAXED)) {
                        __atomic_add_fetch(&vf->sightings, 1, __ATOMIC_RELAXED);
                        __atomic_store_n(&vf->first_seen_ns, t, __ATOMIC_RELAXED);
                }
        }
        if (missing == 0) {
                uint8_t seen = VF_SEEN;

                if (__atomic_compare_exchange_n(&vf->state, &seen, VF_COMPLETE, false, __ATOMIC_RELAXED,
                                                __ATOMIC_RELAXED)) {
                        __atomic_add_fetch(&vf->completions, 1, __ATOMIC_RELAXED);
                        __atomic_store_n(&vf->complete_ns, t, __ATOMIC_RELAXED);
                        set_max(&vf->seen_to_complete_max_ns,
                                t - __atomic_load_n(&vf->first_seen_ns, __ATOMIC_RELAXED));
                }
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

/* After a whole scan of parent that started at scan_start: a removed VF it
 * did not list is gone; its next directory is a new round's.  (The round's
 * half-built span was added up by the monitor at the remove.) */
static void confirm_removed(size_t parent, uint64_t scan_start) {
        if (__atomic_load_n(&n_removed, __ATOMIC_RELAXED) == 0)
                return;
        for (size_t i = 0; i < n_pfs; i++) {
                const Pf *p = &pfs[i];

                if (p->parent != parent)
                        continue;
                for (unsigned k = 0; k < p->total; k++) {
                        unsigned id = (p->id + p->offset + k * p->stride) & 0xffff;
                        Vf *vf = &vfs[id];
                        uint8_t removed = VF_REMOVED;

                        if (__atomic_load_n(&vf->state, __ATOMIC_RELAXED) != VF_REMOVED ||
                            __atomic_load_n(&vf->removed_ns, __ATOMIC_RELAXED) >= scan_start ||
                            __atomic_load_n(&vf->listed_ns, __ATOMIC_RELAXED) >= scan_start)
                                continue;
                        if (__atomic_compare_exchange_n(&vf->state, &removed, VF_UNSEEN, false,
                                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                                __atomic_sub_fetch(&n_removed, 1, __ATOMIC_RELAXED);
                }
        }
}

static void *scanner_main(void *userdata) {
        Scanner *s = userdata;
        int fds[MAX_PFS];
        char buf[32768];
        void *ret = NULL;

        /* Directory fds of its own: getdents64() positions are per open file. */
        for (size_t i = 0; i < n_parents; i++)
                fds[i] = -1;
        for (size_t i = 0; i < n_parents; i++) {
                fds[i] = open(parents[i].path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fds[i] < 0) {
                        log_error_errno(-errno, "Failed to open %s: %m", parents[i].path);
                        goto out;
                }
        }
        while (!__atomic_load_n(&stopping, __ATOMIC_RELAXED)) {
                for (size_t i = 0; i < n_parents; i++) {
                        uint64_t scan_start = now_ns();
                        ssize_t n;

                        if (lseek(fds[i], 0, SEEK_SET) < 0) {
                                log_error_errno(-errno, "Failed to rewind %s: %m", parents[i].path);
                                goto out;
                        }
                        while ((n = getdents64(fds[i], buf, sizeof(buf))) > 0)
                                for (ssize_t off = 0; off < n;) {
                                        struct dirent64 *de = (struct dirent64 *) (buf + off);

                                        if (de->d_type == DT_DIR || de->d_type == DT_UNKNOWN)
                                                scan_entry(s, i, fds[i], de->d_name, scan_start);
                                        off += de->d_reclen;
                                }
                        if (n < 0) {
                                log_error_errno(-errno, "Failed to read %s: %m", parents[i].path);
                                goto out;
                        }
                        confirm_removed(i, scan_start);
                }
                s->scans++;
        }
out:
        if (!__atomic_load_n(&stopping, __ATOMIC_RELAXED))
                __atomic_add_fetch(&n_thread_errors, 1, __ATOMIC_RELAXED);
        for (size_t i = 0; i < n_parents; i++)
                if (fds[i] >= 0)
                        (void) close(fds[i]);
        return ret;
}

/* The value of KEY= in a uevent message's NUL-separated environment. */
static const char *uevent_get(const char *buf, size_t len, const char *key) {
        size_t kl = strlen(key);

        for (size_t off = strlen(buf) + 1; off < len; off += strlen(buf + off) + 1)
                if (strncmp(buf + off, key, kl) == 0 && buf[off + kl] == '=')
                        return buf + off + kl + 1;
        return NULL;
}

/* A VF's current round ends: its half-built span joins the totals. */
static void end_round(Vf *vf) {
        uint64_t first = __atomic_load_n(&vf->first_half_ns, __ATOMIC_RELAXED);
        uint64_t last = __atomic_load_n(&vf->last_half_ns, __ATOMIC_RELAXED);

        if (first != 0 && last >= first) {
                vf->half_span_ns += last - first;
                vf->half_span_max_ns = MAX(vf->half_span_max_ns, last - first);
        }
        __atomic_store_n(&vf->first_half_ns, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&vf->last_half_ns, 0, __ATOMIC_RELAXED);
}

static void handle_uevent(const char *buf, size_t len, uint64_t *last_seqnum) {
        const char *action, *devpath, *seqnum, *subsystem, *state = "-", *name;
        char partial[1024 + 64]; /* "partial:" and at most --entries (< 1024) */
        unsigned domain, id;
        uint64_t seq;

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

        /* A VF: /devices/.../<its PF's parent>/<BDF>. */
        name = strrchr(devpath, '/');
        if (name && parse_bdf(name + 1, &domain, &id) && domain == pf_domain && vfs[id].pf >= 0 && subsystem &&
            strcmp(subsystem, "pci") == 0) {
                Vf *vf = &vfs[id];
                const Parent *par = &parents[pfs[vf->pf].parent];
                size_t plen = strlen(par->path) - strlen("/sys");

                if ((size_t) (name - devpath) != plen || strncmp(devpath, par->path + strlen("/sys"), plen) != 0)
                        goto log;
                if (strcmp(action, "add") == 0) {
                        int64_t missing = missing_entries(par->fd, name + 1, id);
                        uint8_t removed = VF_REMOVED;

                        if (vf->present)
                                vf->adds_double++;
                        vf->adds++;
                        vf->present = true;
                        state = "complete";
                        if (missing < 0) {
                                /* Read after the directory was gone (a
                                 * monitor behind an enable and disable). */
                                state = "gone";
                                n_adds_gone++;
                        } else if (missing != 0) {
                                size_t l = strlen("partial:");

                                memcpy(partial, "partial:", l + 1);
                                for (size_t e = 0; e < n_entries && missing > 0; e++)
                                        if (missing & (INT64_C(1) << e))
                                                l += (size_t) snprintf(partial + l, l < sizeof(partial) ? sizeof(partial) - l : 0,
                                                                       "%s%s", l > strlen("partial:") ? "," : "", entries[e]);
                                state = partial;
                                n_adds_partial++;
                        }
                        /* Its last directory never seen gone by a scanner
                         * (the new one may have been taken for it). */
                        if (__atomic_compare_exchange_n(&vf->state, &removed, VF_UNSEEN, false,
                                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
                                __atomic_sub_fetch(&n_removed, 1, __ATOMIC_RELAXED);
                                n_remove_unconfirmed++;
                        }
                } else if (strcmp(action, "remove") == 0) {
                        uint8_t old;

                        if (!vf->present)
                                vf->events_absent++;
                        vf->removes++;
                        vf->present = false;
                        end_round(vf);
                        __atomic_store_n(&vf->removed_ns, now_ns(), __ATOMIC_RELAXED);
                        old = __atomic_exchange_n(&vf->state, VF_REMOVED, __ATOMIC_RELAXED);
                        if (old != VF_REMOVED)
                                __atomic_add_fetch(&n_removed, 1, __ATOMIC_RELAXED);
                } else if (!vf->present)
                        vf->events_absent++;
        }
log:
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
                        if (errno != EAGAIN) {
                                log_error_errno(-errno, "Failed to read the uevent socket: %m");
                                __atomic_add_fetch(&n_thread_errors, 1, __ATOMIC_RELAXED);
                        }
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
        if (optind >= argc)
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
 *   pfs, parents, entries, scanners, duration_ms
 *   scans                 scans of all parent directories, all scanners
 *   scan_us               mean time of one such scan (duration x scanners /
 *                         scans)
 *   vf_dirs               distinct VFs whose directory a scanner saw
 *   vf_complete           ... of them complete at the end (not removed)
 *   vf_sightings          VF directories seen, a VF once per round
 *   vf_completions        ... of them then seen complete
 *   half_built            observations of a VF directory missing entries
 *   half_built_vfs        distinct VFs seen half-built at least once
 *   half_built_max_us     longest time a VF was seen half-built in a round
 *                         (first to last observation)
 *   half_built_mean_us    ... mean over the VFs seen half-built (sum of
 *                         their rounds' spans / VFs)
 *   seen_to_complete_max_us  longest time from a VF directory's first
 *                         sighting to its first complete one
 *   records_dropped       half-built observations not logged (MAX_RECORDS)
 *   events                uevents read (all devices)
 *   events_lost           ENOBUFS on the uevent socket (events dropped)
 *   seqnum_errors         events whose SEQNUM did not rise
 *   vf_adds, vf_removes   "add" and "remove" events of VFs
 *   vf_adds_partial       adds read while the VF's directory lacked entries
 *   vf_adds_not_once      VFs seen by a scanner or an event, with != 1 add
 *                         (one round: every VF announced once)
 *   vf_adds_double        adds of a VF already added and not removed
 *   vf_events_before_add  VFs with an event while not present (before
 *                         their add, or after their remove)
 *   vf_unpaired           VFs whose adds are neither their removes nor
 *                         their removes + 1
 *   vf_remove_unconfirmed VF adds read before a scan had seen the VF's
 *                         previous directory gone
 *   vf_adds_gone          adds read when the VF's directory was already gone
 *   vf_adds_min, vf_adds_max  fewest and most adds of one VF (among the VFs
 *                         with any add, sighting or event)
 *   teardown_sightings    incomplete directories not counted as half-built:
 *                         the VF's remove was read meanwhile
 *   thread_errors         scanners or the monitor that stopped on an error */
static void print_summary(Scanner *scanners, uint64_t duration_ns) {
        uint64_t scans = 0, half = 0, dropped = 0, half_max = 0, half_sum = 0, complete_max = 0, adds = 0,
                 removes = 0, sightings = 0, completions = 0, adds_double = 0;
        unsigned dirs = 0, complete = 0, half_vfs = 0, not_once = 0, before_add = 0, unpaired = 0;
        unsigned adds_min = UINT_MAX, adds_max = 0;

        for (unsigned i = 0; i < arg_scanners; i++) {
                scans += scanners[i].scans;
                half += scanners[i].half_built;
                dropped += scanners[i].records_dropped;
        }
        for (unsigned id = 0; id < N_IDS; id++) {
                Vf *vf = &vfs[id];

                if (vf->pf < 0)
                        continue;
                end_round(vf);
                if (vf->sightings == 0 && vf->adds == 0 && vf->removes == 0 && vf->events_absent == 0)
                        continue;
                adds += vf->adds;
                adds_min = vf->adds < adds_min ? vf->adds : adds_min;
                adds_max = MAX(adds_max, vf->adds);
                removes += vf->removes;
                adds_double += vf->adds_double;
                sightings += vf->sightings;
                completions += vf->completions;
                if (vf->adds != 1)
                        not_once++;
                if (vf->events_absent > 0)
                        before_add++;
                if (vf->adds != vf->removes && vf->adds != vf->removes + 1)
                        unpaired++;
                if (vf->sightings > 0)
                        dirs++;
                if (vf->state == VF_COMPLETE)
                        complete++;
                complete_max = MAX(complete_max, vf->seen_to_complete_max_ns);
                if (vf->half_built > 0) {
                        half_vfs++;
                        half_max = MAX(half_max, vf->half_span_max_ns);
                        half_sum += vf->half_span_ns;
                }
        }
        printf("pfs=");
        for (size_t i = 0; i < n_pfs; i++)
                printf("%s%s", i ? "," : "", pfs[i].name);
        printf("\nparents=");
        for (size_t i = 0; i < n_parents; i++)
                printf("%s%s", i ? "," : "", parents[i].path);
        printf("\nparent=%s\n", parents[0].path);
        printf("entries=%s\n", arg_entries);
        printf("scanners=%u\n", arg_scanners);
        printf("duration_ms=%" PRIu64 "\n", duration_ns / 1000000);
        printf("scans=%" PRIu64 "\n", scans);
        printf("scan_us=%.1f\n", scans ? (double) duration_ns * arg_scanners / 1000.0 / (double) scans : 0.0);
        printf("vf_dirs=%u\n", dirs);
        printf("vf_complete=%u\n", complete);
        printf("vf_sightings=%" PRIu64 "\n", sightings);
        printf("vf_completions=%" PRIu64 "\n", completions);
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
        printf("vf_removes=%" PRIu64 "\n", removes);
        printf("vf_adds_partial=%" PRIu64 "\n", n_adds_partial);
        printf("vf_adds_not_once=%u\n", not_once);
        printf("vf_adds_double=%" PRIu64 "\n", adds_double);
        printf("vf_events_before_add=%u\n", before_add);
        printf("vf_unpaired=%u\n", unpaired);
        printf("vf_remove_unconfirmed=%" PRIu64 "\n", n_remove_unconfirmed);
        printf("vf_adds_gone=%" PRIu64 "\n", n_adds_gone);
        printf("vf_adds_min=%u\n", adds_min == UINT_MAX ? 0 : adds_min);
        printf("vf_adds_max=%u\n", adds_max);
        printf("teardown_sightings=%" PRIu64 "\n", n_teardown_sightings);
        printf("thread_errors=%u\n", n_thread_errors);
}

/* /sys/bus/pci/devices/PF/KEY (sriov_offset, _stride, _totalvfs): a decimal. */
static int read_sriov_uint(const char *pf, const char *key, unsigned *ret) {
        char path[PATH_MAX], buf[32], *end;
        unsigned long v;
        int r;

        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", pf, key);
        r = read_line(path, buf, sizeof(buf));
        if (r < 0)
                return log_error_errno(r, "Failed to read %s: %m", path);
        errno = 0;
        v = strtoul(buf, &end, 10);
        if (errno != 0 || end == buf || *end != '\0' || v > 0xffff)
                return log_error_errno(-EINVAL, "%s: not a number below 65536: '%s'", path, buf);
        *ret = (unsigned) v;
        return 0;
}

/* PF i: its SR-IOV routing parameters, its VFs in vfs[], its parent. */
static int setup_pf(size_t i) {
        Pf *p = &pfs[i];
        char link[PATH_MAX], path[PATH_MAX], *slash;
        int r;

        r = read_sriov_uint(p->name, "sriov_offset", &p->offset);
        if (r >= 0)
                r = read_sriov_uint(p->name, "sriov_stride", &p->stride);
        if (r >= 0)
                r = read_sriov_uint(p->name, "sriov_totalvfs", &p->total);
        if (r < 0)
                return r;
        if (p->stride == 0 || p->total == 0)
                return log_error_errno(-EINVAL, "%s: sriov_stride %u, sriov_totalvfs %u: no VFs to watch", p->name,
                                       p->stride, p->total);
        for (unsigned k = 0; k < p->total; k++) {
                Vf *vf = &vfs[(p->id + p->offset + k * p->stride) & 0xffff];

                if (vf->pf >= 0)
                        return log_error_errno(-EINVAL, "%s: its VF %u's routing ID is %s's too", p->name, k,
                                               pfs[vf->pf].name);
                vf->pf = (int8_t) i;
        }
        snprintf(link, sizeof(link), "/sys/bus/pci/devices/%s", p->name);
        if (!realpath(link, path))
                return log_error_errno(-errno, "Failed to resolve %s: %m", link);
        slash = strrchr(path, '/');
        *slash = '\0';
        if (strncmp(path, "/sys/", 5) != 0)
                return log_error_errno(-EINVAL, "%s is not below /sys", path);
        for (p->parent = 0; p->parent < n_parents; p->parent++)
                if (strcmp(parents[p->parent].path, path) == 0)
                        return 0;
        strcpy(parents[n_parents].path, path);
        parents[n_parents].fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (parents[n_parents].fd < 0)
                return log_error_errno(-errno, "Failed to open %s: %m", path);
        n_parents++;
        return 0;
}

static int run(void) {
        _cleanup_free_ Scanner *scanners = NULL;
        sigset_t mask;
        uint64_t t_end;
        int r, sig;

        vfs = calloc(N_IDS, sizeof(Vf));
        scanners = calloc(arg_scanners, sizeof(Scanner));
        if (!vfs || !scanners)
                return log_error_errno(-ENOMEM, "Out of memory");
        for (unsigned id = 0; id < N_IDS; id++)
                vfs[id].pf = -1;
        for (size_t i = 0; i < n_pfs; i++) {
                r = setup_pf(i);
                if (r < 0)
                        return r;
        }
        /* The PFs themselves are not VFs (a VF routing ID of another PF). */
        for (size_t i = 0; i < n_pfs; i++)
                if (vfs[pfs[i].id].pf >= 0)
                        return log_error_errno(-EINVAL, "%s is a VF of %s", pfs[i].name, pfs[vfs[pfs[i].id].pf].name);
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
                                "                      [--log FILE] [--ready FILE] PFBDF...\n");
                return 2;
        }
        if (parse_entries() < 0)
                return 2;
        for (int i = optind; i < argc; i++) {
                unsigned domain, id;

                if (!parse_bdf(argv[i], &domain, &id)) {
                        log_error("'%s' is not a PCI address (DDDD:BB:DD.F)", argv[i]);
                        return 2;
                }
                if (n_pfs > 0 && domain != pf_domain) {
                        log_error("%s: all PFs must be in one PCI domain (%04x)", argv[i], pf_domain);
                        return 2;
                }
                if (n_pfs == MAX_PFS) {
                        log_error("More than %d PFs", MAX_PFS);
                        return 2;
                }
                pf_domain = domain;
                pfs[n_pfs++] = (Pf) { .name = argv[i], .id = id };
        }
        return run() < 0 ? 1 : 0;
}
