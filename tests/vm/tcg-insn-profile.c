/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tcg-insn-profile: a QEMU TCG plugin that counts, per translation-block
 * start address (the guest's virtual PC), how often blocks starting there
 * ran, how many guest instructions they ran and how many of those were
 * PAUSE (F3 90, the body of every cpu_relax() spin loop), and writes
 * snapshots of the counters on request.  The test bed's runner
 * (tests/vm/run, hardware `tcg-profile on`) loads it and takes a snapshot
 * at each HOSTSAMPLE line; tests/vm/tcg-profile-report diffs two and
 * aggregates them by kernel symbol.
 *
 *   qemu-system-x86_64 ... -plugin file=tcg-insn-profile.so,outdir=DIR
 *
 * DIR (created if missing) gets a control FIFO DIR/ctl (created with
 * mkfifo if missing; an existing non-FIFO refuses the load).  A line
 *   snap NAME          NAME of [A-Za-z0-9._-], at most 200 characters
 * written to it makes the plugin write DIR/NAME.tsv (to a temporary file
 * first, then renamed) and then append a line "NAME" to DIR/acks ("FAILED
 * NAME" if it could not write it; errors go to QEMU's stderr).  The file:
 *   # total EXECS INSNS PAUSES
 *   VADDR_HEX<TAB>EXECS<TAB>INSNS<TAB>PAUSES      one line per start address
 * with the counters summed over the vCPUs, since QEMU started, for every
 * address whose blocks ran at least once.
 *
 * How it counts: at translation (qemu_plugin_register_vcpu_tb_trans_cb)
 * the block's start address gets an entry (an open-addressing hash table
 * of our own) and three inline per-vCPU adds at the block's start: +1
 * execution, +N instructions, +P PAUSEs (N, P of this translation).  No
 * callback runs while the guest executes.  QEMU may translate a block at
 * the same address again (after a flush, with other flags or another
 * length): each translation adds its own counts to the same entry, so an
 * entry's totals stay exact for whatever ran from that address.  Limits:
 * the adds happen when a block starts, so a block left half-way (a fault
 * or an interrupt taken inside it) counts all its instructions; a PAUSE
 * ends its block under TCG (the helper leaves the CPU loop), so it is the
 * block's last instruction and PAUSE counts are exact.  x86-64 system
 * emulation shares a block between virtual addresses that map the same
 * physical code (CF_PCREL): the counts go to the address of its first
 * translation, which matters for user space (one library in several
 * processes), not for the kernel's text (mapped once).
 *
 * Concurrency: the vCPUs add to their own slots of the scoreboards while
 * the control thread reads them; every counter is a naturally aligned u64,
 * so a reading is never torn, but a snapshot taken while the guest runs is
 * no instant.  The test bed takes it while the guest sleeps (tb_hostsample
 * sleeps 300 ms after its line).  The table grows from the translation
 * callback under a mutex that the control thread takes too.  Counters
 * live in chunks of CHUNK entries, one scoreboard a chunk (a scoreboard's
 * address is compiled into the blocks that use it, so chunks never move). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define CHUNK_SHIFT 13
#define CHUNK (1u << CHUNK_SHIFT) /* entries per scoreboard */
#define MAX_CHUNKS 4096           /* 32 M start addresses: far more than a guest has */
#define NAME_MAX_LEN 200
#define LINE_MAX_LEN 512

/* One entry's counters, per vCPU, in a scoreboard chunk. */
struct counters {
        uint64_t execs;
        uint64_t insns;
        uint64_t pauses;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Under lock: the start address of entry i, the hash table of entry
 * numbers + 1 (0: empty slot), the chunks. */
static uint64_t *vaddrs;
static uint32_t n_entries, cap_entries;
static uint32_t *slots;
static uint32_t n_slots; /* a power of 2, at least twice n_entries */
static struct qemu_plugin_scoreboard *chunks[MAX_CHUNKS];
static uint32_t n_chunks;
/* Entry 0 collects what could not get its own entry (out of memory or
 * chunks): its address is UINT64_MAX, so the totals stay exact. */
#define LOST_VADDR UINT64_MAX

static char *outdir;
static int ctl_fd = -1;

#define err(...) fprintf(stderr, "tcg-insn-profile: " __VA_ARGS__)

/* splitmix64's finalizer: block addresses differ in their low bits. */
static uint64_t hash64(uint64_t x) {
        x ^= x >> 30;
        x *= 0xbf58476d1ce4e5b9ULL;
        x ^= x >> 27;
        x *= 0x94d049bb133111ebULL;
        x ^= x >> 31;
        return x;
}

static qemu_plugin_u64 counter(uint32_t idx, size_t member) {
        qemu_plugin_u64 u = {
                .score = chunks[idx >> CHUNK_SHIFT],
                .offset = (idx & (CHUNK - 1)) * sizeof(struct counters) + member,
        };
        return u;
}

/* Doubles the slot table (lock held); false if out of memory. */
static bool grow_slots(void) {
        uint32_t n = n_slots ? n_slots * 2 : 1u << 16;
        uint32_t *s;

        if (n_slots >= 1u << 31)
                return false;
        s = calloc(n, sizeof(*s));
        if (!s)
                return false;
        for (uint32_t i = 0; i < n_entries; i++) {
                uint32_t h = (uint32_t) hash64(vaddrs[i]) & (n - 1);

                while (s[h])
                        h = (h + 1) & (n - 1);
                s[h] = i + 1;
        }
        free(slots);
        slots = s;
        n_slots = n;
        return true;
}

/* Appends an entry for VADDR (lock held): its index, or 0 (the lost
 * entry) when memory or chunks run out. */
static uint32_t new_entry(uint64_t vaddr) {
        uint32_t idx = n_entries;

        if (idx == cap_entries) {
                uint32_t cap = cap_entries ? cap_entries * 2 : CHUNK;
                uint64_t *v = cap > cap_entries ? realloc(vaddrs, cap * sizeof(*v)) : NULL;

                if (!v)
                        return 0;
                vaddrs = v;
                cap_entries = cap;
        }
        if ((idx >> CHUNK_SHIFT) == n_chunks) {
                if (n_chunks == MAX_CHUNKS)
                        return 0;
                chunks[n_chunks] = qemu_plugin_scoreboard_new(CHUNK * sizeof(struct counters));
                if (!chunks[n_chunks])
                        return 0;
                n_chunks++;
        }
        vaddrs[idx] = vaddr;
        n_entries++;
        return idx;
}

/* The entry of VADDR, made if new (lock held). */
static uint32_t find_entry(uint64_t vaddr) {
        static bool warned;
        uint32_t h, idx;

        if (2 * (n_entries + 1) > n_slots && !grow_slots())
                goto lost;
        h = (uint32_t) hash64(vaddr) & (n_slots - 1);
        while (slots[h]) {
                if (vaddrs[slots[h] - 1] == vaddr)
                        return slots[h] - 1;
                h = (h + 1) & (n_slots - 1);
        }
        idx = new_entry(vaddr);
        if (idx == 0)
                goto lost;
        slots[h] = idx + 1;
        return idx;
lost:
        if (!warned) {
                warned = true;
                err("out of memory for %" PRIu32 " entries: further new addresses count as %016" PRIx64 "\n",
                    n_entries, LOST_VADDR);
        }
        return 0;
}

/* PAUSE is F3 90 (REP NOP); Linux's cpu_relax() emits exactly that. */
static bool is_pause(const struct qemu_plugin_insn *insn) {
        uint8_t b[2];

        return qemu_plugin_insn_size(insn) == 2 && qemu_plugin_insn_data(insn, b, sizeof(b)) == 2 &&
               b[0] == 0xf3 && b[1] == 0x90;
}

static void vcpu_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
        uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
        size_t n = qemu_plugin_tb_n_insns(tb);
        uint64_t pauses = 0;
        qemu_plugin_u64 execs_u, insns_u, pauses_u;
        uint32_t idx;

        (void) id;
        for (size_t i = 0; i < n; i++)
                if (is_pause(qemu_plugin_tb_get_insn(tb, i)))
                        pauses++;

        pthread_mutex_lock(&lock);
        idx = find_entry(vaddr);
        execs_u = counter(idx, offsetof(struct counters, execs));
        insns_u = counter(idx, offsetof(struct counters, insns));
        pauses_u = counter(idx, offsetof(struct counters, pauses));
        pthread_mutex_unlock(&lock);

        qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(tb, QEMU_PLUGIN_INLINE_ADD_U64, execs_u, 1);
        qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(tb, QEMU_PLUGIN_INLINE_ADD_U64, insns_u, n);
        if (pauses)
                qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(tb, QEMU_PLUGIN_INLINE_ADD_U64, pauses_u,
                                                                  pauses);
}

static bool valid_name(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > NAME_MAX_LEN)
                return false;
        for (; *s; s++)
                if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
                      *s == '.' || *s == '_' || *s == '-'))
                        return false;
        return true;
}

/* The snapshot's text, built in a growing buffer under the lock and
 * written out after it. */
struct buf {
        char *p;
        size_t len, cap;
        bool oom;
};

static void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_printf(struct buf *b, const char *fmt, ...) {
        va_list ap;
        size_t cap;
        char *p;
        int n;

        if (b->oom)
                return;
        if (!b->p) {
                b->p = malloc(1 << 20);
                if (!b->p) {
                        b->oom = true;
                        return;
                }
                b->cap = 1 << 20;
        }
        for (;;) {
                va_start(ap, fmt);
                n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
                va_end(ap);
                if (n < 0) {
                        b->oom = true;
                        return;
                }
                if ((size_t) n < b->cap - b->len) {
                        b->len += n;
                        return;
                }
                cap = b->cap * 2;
                p = realloc(b->p, cap);
                if (!p) {
                        b->oom = true;
                        return;
                }
                b->p = p;
                b->cap = cap;
        }
}

/* Appends LINE and a newline to DIR/acks in one write. */
static void ack(const char *line) {
        char path[PATH_MAX], msg[NAME_MAX_LEN + 16];
        int fd, n;

        snprintf(path, sizeof(path), "%s/acks", outdir);
        n = snprintf(msg, sizeof(msg), "%s\n", line);
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) {
                err("open %s: %s\n", path, strerror(errno));
                return;
        }
        if (write(fd, msg, n) != n)
                err("write %s: %s\n", path, strerror(errno ?: EIO));
        close(fd);
}

/* Writes DIR/NAME.tsv; 0 or -1 (with a message). */
static int snapshot(const char *name) {
        char tmp[PATH_MAX], path[PATH_MAX];
        struct buf body = { 0 };
        uint64_t te = 0, ti = 0, tp = 0;
        FILE *f;
        int fd;

        if (snprintf(path, sizeof(path), "%s/%s.tsv", outdir, name) >= (int) sizeof(path) ||
            snprintf(tmp, sizeof(tmp), "%s/.%s.tsv.tmp", outdir, name) >= (int) sizeof(tmp)) {
                err("snap %s: path too long\n", name);
                return -1;
        }
        pthread_mutex_lock(&lock);
        for (uint32_t i = 0; i < n_entries; i++) {
                uint64_t e = qemu_plugin_u64_sum(counter(i, offsetof(struct counters, execs)));
                uint64_t n, p;

                if (!e)
                        continue;
                n = qemu_plugin_u64_sum(counter(i, offsetof(struct counters, insns)));
                p = qemu_plugin_u64_sum(counter(i, offsetof(struct counters, pauses)));
                te += e;
                ti += n;
                tp += p;
                buf_printf(&body, "%" PRIx64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\n", vaddrs[i], e, n, p);
        }
        pthread_mutex_unlock(&lock);
        if (body.oom) {
                err("snap %s: out of memory\n", name);
                free(body.p);
                return -1;
        }

        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
                err("snap %s: open %s: %s\n", name, tmp, strerror(errno));
                free(body.p);
                return -1;
        }
        f = fdopen(fd, "w");
        if (!f) {
                err("snap %s: fdopen %s: %s\n", name, tmp, strerror(errno));
                close(fd);
                unlink(tmp);
                free(body.p);
                return -1;
        }
        fprintf(f, "# total %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", te, ti, tp);
        if (body.len)
                fwrite(body.p, 1, body.len, f);
        free(body.p);
        errno = 0;
        /* | not ||: the file is closed either way */
        if (ferror(f) | fclose(f)) {
                err("snap %s: write %s: %s\n", name, tmp, strerror(errno ?: EIO));
                unlink(tmp);
                return -1;
        }
        if (rename(tmp, path) < 0) {
                err("snap %s: rename %s to %s: %s\n", name, tmp, path, strerror(errno));
                unlink(tmp);
                return -1;
        }
        return 0;
}

static void command(char *line) {
        char done[NAME_MAX_LEN + 8];

        if (strncmp(line, "snap ", 5) != 0) {
                err("control: unknown command '%.64s' (want 'snap NAME')\n", line);
                return;
        }
        line += 5;
        if (!valid_name(line)) {
                err("control: refused snapshot name '%.64s' (want 1-%d of [A-Za-z0-9._-])\n", line,
                    NAME_MAX_LEN);
                return;
        }
        if (snapshot(line) == 0) {
                ack(line);
        } else {
                snprintf(done, sizeof(done), "FAILED %s", line);
                ack(done);
        }
}

/* The control thread: reads lines from DIR/ctl.  The FIFO is open
 * read-write, so it never sees end-of-file when a writer closes it. */
static void *control(void *arg) {
        char line[LINE_MAX_LEN];
        size_t len = 0;
        bool skipping = false;

        (void) arg;
        for (;;) {
                char c;
                ssize_t r = read(ctl_fd, &c, 1);

                if (r < 0 && errno == EINTR)
                        continue;
                if (r <= 0) {
                        err("control: read: %s; no more snapshots\n", r < 0 ? strerror(errno) : "end of file");
                        return NULL;
                }
                if (c == '\n') {
                        line[len] = '\0';
                        if (!skipping && len)
                                command(line);
                        len = 0;
                        skipping = false;
                } else if (len + 1 < sizeof(line)) {
                        line[len++] = c;
                } else if (!skipping) {
                        err("control: line longer than %d characters ignored\n", LINE_MAX_LEN - 1);
                        skipping = true;
                }
        }
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                           char **argv) {
        char path[PATH_MAX];
        sigset_t all, old;
        pthread_attr_t attr;
        pthread_t th;
        struct stat st;
        int r;

        for (int i = 0; i < argc; i++) {
                if (strncmp(argv[i], "outdir=", 7) == 0 && argv[i][7]) {
                        outdir = argv[i] + 7;
                } else {
                        err("unknown argument '%s' (want outdir=DIR)\n", argv[i]);
                        return -1;
                }
        }
        if (!outdir) {
                err("outdir=DIR is required\n");
                return -1;
        }
        if (strcmp(info->target_name, "x86_64") != 0 && strcmp(info->target_name, "i386") != 0) {
                err("counts x86's PAUSE (F3 90): target %s is not x86\n", info->target_name);
                return -1;
        }
        if (mkdir(outdir, 0755) < 0 && errno != EEXIST) {
                err("mkdir %s: %s\n", outdir, strerror(errno));
                return -1;
        }
        if (snprintf(path, sizeof(path), "%s/ctl", outdir) >= (int) sizeof(path)) {
                err("outdir %s: path too long\n", outdir);
                return -1;
        }
        if (mkfifo(path, 0600) < 0 && errno != EEXIST) {
                err("mkfifo %s: %s\n", path, strerror(errno));
                return -1;
        }
        if (stat(path, &st) < 0) {
                err("stat %s: %s\n", path, strerror(errno));
                return -1;
        }
        if (!S_ISFIFO(st.st_mode)) {
                err("%s exists and is not a FIFO\n", path);
                return -1;
        }
        /* read-write: the open does not wait for a writer (Linux) */
        ctl_fd = open(path, O_RDWR | O_CLOEXEC);
        if (ctl_fd < 0) {
                err("open %s: %s\n", path, strerror(errno));
                return -1;
        }

        /* entry 0: the lost entry */
        pthread_mutex_lock(&lock);
        r = grow_slots() && (new_entry(LOST_VADDR), n_entries == 1);
        pthread_mutex_unlock(&lock);
        if (!r) {
                err("out of memory for the first entries\n");
                return -1;
        }

        /* No signal for this thread: QEMU's threads block them too, and
         * process-wide ones (SIGTERM, SIGINT) belong to the main loop. */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        r = pthread_create(&th, &attr, control, NULL);
        pthread_attr_destroy(&attr);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r) {
                err("pthread_create: %s\n", strerror(r));
                return -1;
        }

        qemu_plugin_register_vcpu_tb_trans_cb(id, vcpu_tb_trans);
        return 0;
}
