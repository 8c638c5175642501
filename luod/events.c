/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libudev.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "config.h"
#include "event-attr.h"
#include "errors.h"
#include "events.h"
#include "io-util.h"
#include "log.h"
#include "sysfs.h"
#include "macro.h"
#include "types.h"
#include "pci-util.h"
#include "sriov.h"
#include "time-util.h"

#define EVENTS_RCVBUF (128 * 1024 * 1024)
#define EVENTS_DRAIN_MAX 1024   /* events read per turn of the event loop */

typedef struct DevEvent {
        uint64_t seqnum;
        uint64_t order;         /* delivery order: 1, 2, ... (seqnum order but for late ones) */
        char *action, *subsystem, *devpath;
        char **props;           /* key, value, ..., NULL */
        size_t pf;              /* index in Events.pfs */
        uint64_t received_us;   /* CLOCK_MONOTONIC */
        uint64_t held_us;       /* how long luod held it before delivery */
} DevEvent;

typedef struct Sent {           /* per consumer name: what it was sent */
        char *consumer;
        uint64_t upto;          /* highest DevEvent.order sent */
        uint64_t replayed_us;   /* last held event sent */
        uint64_t lost_told;     /* the EventsLost count it was last sent */
        bool stalled;           /* a send failed: nothing more until it registers again */
} Sent;

typedef struct Raw {            /* read while the restore runs, attributed after it */
        struct udev_device *device;
        uint64_t received_us;
} Raw;

/* When the first release after the restore happened, step by step
 * (CLOCK_MONOTONIC µs; 0: not reached). */
typedef struct ReleaseTimes {
        uint64_t attach_us;     /* events_attach() called (the bus is up) */
        uint64_t learned_us;    /* the PFs and VFs present now were read */
        uint64_t taken_us;      /* the held events were attributed */
        uint64_t released_us;   /* udevd's queue was empty: held events delivered */
} ReleaseTimes;

struct Events {
        struct udev *udev;
        struct udev_monitor *monitor;
        struct udev_queue *queue;       /* udev source: udevd's event queue */
        /* Read from the start, before the restore: until events_attach()
         * the PFs are not known, so what is read is only stamped and kept
         * here; nothing is delivered. */
        Raw *raw;
        size_t n_raw;
        const char *source;
        sd_event_source *io, *queue_io, *timer;
        bool attached;
        bool released;          /* the first release after the restore happened */
        ReleaseTimes times;
        void (*on_released)(Manager *m);        /* after the first release */
        EventAttr attr;         /* the PFs known, and which PF a VF or IOMMU group belongs to */
        DevEvent *pending;      /* read, not delivered (udevd may still finish older ones) */
        size_t n_pending, pending_cap;
        DevEvent *ring;         /* delivered, for GetEvents: ring[(start + i) % max] */
        size_t ring_start, ring_n, ring_max;
        Sent *sent;
        size_t n_sent;
        uint64_t received, delivered, held, unattributed, dropped, late, replayed_uevents, waited_out;
        uint64_t last_seqnum;   /* highest delivered */
        uint64_t max_seqnum;    /* highest read */
        uint64_t overrun_seqnum;        /* highest read before the socket overran */
        uint64_t last_order;
        bool overrun;
};

static void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}

static void dev_event_free(DevEvent *ev) {
        free(ev->action);
        free(ev->subsystem);
        free(ev->devpath);
        if (ev->props)
                for (char **p = ev->props; *p; p++)
                        free(*p);
        free(ev->props);
        *ev = (DevEvent) {};
}

/* Attribution reads the real sysfs. */
static ssize_t sysfs_device_link(void *userdata, const PciBdf *bdf, const char *attr, char *buf, size_t size) {
        char path[PATH_MAX], b[PCI_BDF_STRING_MAX];
        ssize_t n;

        (void) sysfs_path(path, sizeof(path), "bus/pci/devices/%s/%s", pci_bdf_format(bdf, b), attr);
        n = readlink(path, buf, size - 1);
        if (n < 0)
                return -errno;
        buf[n] = 0;
        return n;
}

static int sysfs_pf_identity(void *userdata, const PciBdf *bdf, char **ret) {
        char path[PATH_MAX], b[PCI_BDF_STRING_MAX];

        (void) sysfs_path(path, sizeof(path), "bus/pci/devices/%s/sriov_totalvfs", pci_bdf_format(bdf, b));
        if (access(path, F_OK) < 0)
                return -errno;
        return sriov_pf_identity(bdf, ret);
}

static int sysfs_group_devices(void *userdata, long group, int (*fn)(const char *name, void *arg), void *arg) {
        char path[64];
        struct dirent *de;
        int r = 0;

        (void) sysfs_path(path, sizeof(path), "kernel/iommu_groups/%ld/devices", group);
        _cleanup_(closedirp) DIR *dir = opendir(path);
        if (!dir)
                return -errno;
        while (r == 0 && (de = readdir(dir)))
                r = fn(de->d_name, arg);
        return r;
}

static const EventSysfs sysfs_ops = {
        .device_link = sysfs_device_link,
        .pf_identity = sysfs_pf_identity,
        .group_devices = sysfs_group_devices,
};

static bool receive_error_is_loss(Events *e) {
        if (errno != ENOBUFS)
                return false;
        if (!e->overrun)
                log_error("Device events: the monitor's receive buffer overran after seqnum %" PRIu64
                          "; events were lost (reported in GetEvents and the report)", e->max_seqnum);
        e->overrun = true;
        e->overrun_seqnum = e->max_seqnum;
        return true;
}

void events_done(Manager *m) {
        Events *e = m->events;

        if (!e)
                return;
        for (size_t i = 0; i < e->n_raw; i++)
                udev_device_unref(e->raw[i].device);
        free(e->raw);
        sd_event_source_unref(e->io);
        sd_event_source_unref(e->queue_io);
        sd_event_source_unref(e->timer);
        udev_monitor_unref(e->monitor);
        udev_queue_unref(e->queue);
        udev_unref(e->udev);
        event_attr_done(&e->attr);
        for (size_t i = 0; i < e->n_pending; i++)
                dev_event_free(&e->pending[i]);
        free(e->pending);
        for (size_t i = 0; i < e->ring_n; i++)
                dev_event_free(&e->ring[(e->ring_start + i) % e->ring_max]);
        free(e->ring);
        for (size_t i = 0; i < e->n_sent; i++)
                free(e->sent[i].consumer);
        free(e->sent);
        free(e);
        m->events = NULL;
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata);
static int on_queue(sd_event_source *s, int fd, uint32_t revents, void *userdata);

/* The monitor on e->source, filtered to pci, vfio and net, its 128 MiB
 * receive buffer, bound. */
static int open_monitor(Events *e) {
        const char *subsystems[] = { "pci", "vfio", "net" };
        int r;

        e->monitor = udev_monitor_new_from_netlink(e->udev, e->source);
        if (!e->monitor) {
                r = -errno ?: -EIO;
                return log_error_errno(r, "Cannot open a device event monitor (%s source): %m; no device events",
                                       e->source);
        }
        for (size_t i = 0; i < ELEMENTSOF(subsystems); i++) {
                r = udev_monitor_filter_add_match_subsystem_devtype(e->monitor, subsystems[i], NULL);
                if (r < 0)
                        return log_error_errno(r, "Device events: cannot filter subsystem %s: %m", subsystems[i]);
        }
        r = udev_monitor_set_receive_buffer_size(e->monitor, EVENTS_RCVBUF);
        if (r < 0)
                log_warning_errno(r, "Device events: cannot set a %d MiB receive buffer (SO_RCVBUFFORCE): %m; "
                                  "events may overrun during the restore", EVENTS_RCVBUF >> 20);
        r = udev_monitor_enable_receiving(e->monitor);
        if (r < 0)
                return log_error_errno(r, "Device events: cannot bind the monitor (%s source): %m", e->source);
        return 0;
}

/* udevd's queue (udev source only): an inotify fd on /run/udev that wakes
 * the loop when the queue file goes away, so held and live events go out
 * the moment udevd has finished every older one. */
static int watch_queue(Manager *m, Events *e) {
        int fd, r;

        e->queue = udev_queue_new(e->udev);
        if (!e->queue)
                return log_error_errno(-ENOMEM, "Device events: %m");
        fd = udev_queue_get_fd(e->queue);
        if (fd < 0)
                return log_error_errno(fd, "Device events: cannot watch udevd's queue (/run/udev): %m");
        r = sd_event_add_io(m->event, &e->queue_io, fd, EPOLLIN, on_queue, m);
        if (r < 0)
                return log_error_errno(r, "Device events: cannot watch udevd's queue: %m");
        return 0;
}

int events_start(Manager *m, unsigned buffer_max) {
        Events *e;
        int r;

        assert(m->event);
        e = calloc(1, sizeof(*e));
        if (!e)
                return log_error_errno(-ENOMEM, "Device events: %m");
        m->events = e;
        e->attr.sysfs = &sysfs_ops;
        e->ring_max = buffer_max ?: EVENTS_BUFFER_DEFAULT;
        e->ring = calloc(e->ring_max, sizeof(DevEvent));
        e->udev = udev_new();
        if (!e->ring || !e->udev) {
                events_done(m);
                return log_error_errno(-ENOMEM, "Device events: %m");
        }
        /* udevd announces events on the "udev" source after its rules ran;
         * without udevd nothing comes there, so take the kernel's. */
        e->source = access("/run/udev/control", F_OK) >= 0 ? "udev" : "kernel";
        r = open_monitor(e);
        if (r >= 0 && strcmp(e->source, "udev") == 0)
                r = watch_queue(m, e);
        if (r >= 0) {
                r = sd_event_add_io(m->event, &e->io, udev_monitor_get_fd(e->monitor), EPOLLIN, on_io, m);
                if (r < 0)
                        log_error_errno(r, "Device events: cannot watch the monitor: %m");
        }
        if (r < 0) {
                events_done(m);
                return r;
        }
        log_info("Watching pci, vfio and net device events (%s source), held until the restore ends", e->source);
        return 0;
}

/* Every SR-IOV PF present now, with its VFs and their IOMMU groups. */
static int learn_devices(Events *e) {
        _cleanup_luod_state_ LuodState now = {};
        int r;

        r = sriov_scan(&now);
        if (r < 0)
                return r;
        for (size_t i = 0; i < now.n_pfs; i++) {
                const PfRecord *pf = &now.pfs[i];
                int k = event_attr_add_pf(&e->attr, pf->identity, &pf->bdf);

                if (k < 0)
                        return k;
                for (size_t j = 0; j < pf->n_vfs; j++) {
                        r = event_attr_add_map(&e->attr, &pf->vfs[j].bdf, -1, (size_t) k);
                        if (r >= 0 && pf->vfs[j].iommu_group >= 0)
                                r = event_attr_add_map(&e->attr, NULL, pf->vfs[j].iommu_group, (size_t) k);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int read_event(struct udev_device *d, DevEvent *ret) {
        struct udev_list_entry *l;
        size_t n = 0, i = 0;

        *ret = (DevEvent) {
                .seqnum = udev_device_get_seqnum(d),
                .action = strdup(udev_device_get_action(d) ?: ""),
                .subsystem = strdup(udev_device_get_subsystem(d) ?: ""),
                .devpath = strdup(udev_device_get_devpath(d) ?: ""),
                .received_us = now_usec(),
        };
        udev_list_entry_foreach(l, udev_device_get_properties_list_entry(d))
                n++;
        ret->props = calloc(2 * n + 1, sizeof(char *));
        if (!ret->action || !ret->subsystem || !ret->devpath || !ret->props) {
                dev_event_free(ret);
                return -ENOMEM;
        }
        udev_list_entry_foreach(l, udev_device_get_properties_list_entry(d)) {
                ret->props[i] = strdup(udev_list_entry_get_name(l));
                ret->props[i + 1] = strdup(udev_list_entry_get_value(l) ?: "");
                if (!ret->props[i] || !ret->props[i + 1]) {
                        dev_event_free(ret);
                        return -ENOMEM;
                }
                i += 2;
        }
        return 0;
}

/* Attributes one event to its PF and queues it in e->pending; an event of
 * no known PF is counted only.  Takes d. */
static int take(Events *e, struct udev_device *d, uint64_t received_us) {
        DevEvent ev;
        int k, r;

        e->received++;
        e->max_seqnum = MAX(e->max_seqnum, udev_device_get_seqnum(d));
        k = event_attr_pf(&e->attr, udev_device_get_devpath(d), udev_device_get_subsystem(d),
                          udev_device_get_sysname(d));
        if (k < 0) {
                e->unattributed++;
                udev_device_unref(d);
                return 0;
        }
        r = read_event(d, &ev);
        udev_device_unref(d);
        if (r < 0)
                return log_error_errno(r, "Device events: %m");
        ev.pf = (size_t) k;
        ev.received_us = received_us;
        if (e->n_pending == e->pending_cap) {
                size_t cap = e->pending_cap ? e->pending_cap * 2 : 64;
                DevEvent *n = reallocarray(e->pending, cap, sizeof(DevEvent));
                if (!n) {
                        dev_event_free(&ev);
                        return log_error_errno(-ENOMEM, "Device events: %m");
                }
                e->pending = n;
                e->pending_cap = cap;
        }
        e->pending[e->n_pending++] = ev;
        return 0;
}

/* The next event the socket has, or NULL when it has none now (EAGAIN,
 * or a message libudev dropped: not ours); a loss is counted. */
static struct udev_device *receive(Events *e) {
        for (;;) {
                struct udev_device *d;

                errno = 0;
                d = udev_monitor_receive_device(e->monitor);
                if (d || !(receive_error_is_loss(e) || errno == EINTR))
                        return d;
        }
}

/* Before events_attach(): what the socket has now, stamped and kept in
 * e->raw (the PFs are not known yet, so nothing is attributed). */
static void hold(Events *e) {
        struct udev_device *d;

        for (unsigned got = 0; got < EVENTS_DRAIN_MAX && (d = receive(e)); got++) {
                Raw *n = reallocarray(e->raw, e->n_raw + 1, sizeof(Raw));
                if (!n) {
                        udev_device_unref(d);
                        log_error("Device events: out of memory while holding; event dropped");
                        e->overrun = true;
                        continue;
                }
                e->raw = n;
                e->raw[e->n_raw++] = (Raw) { .device = d, .received_us = now_usec() };
        }
}

/* Reads what the socket has now into e->pending, at most max events
 * (the event loop keeps turning under a flood).  Returns how many. */
static int drain(Events *e, unsigned max) {
        struct udev_device *d;
        unsigned got = 0;

        for (; got < max && (d = receive(e)); got++)
                (void) take(e, d, now_usec());
        return (int) got;
}

static bool consumer_holds_pf(const Manager *m, const char *consumer, const char *identity) {
        for (size_t i = 0; i < m->held.n_assignments; i++)
                if (strcmp(m->held.assignments[i].consumer, consumer) == 0 &&
                    strcmp(m->held.assignments[i].pf_identity, identity) == 0)
                        return true;
        return false;
}

static Sent *sent_of(Events *e, const char *consumer, bool create) {
        for (size_t i = 0; i < e->n_sent; i++)
                if (strcmp(e->sent[i].consumer, consumer) == 0)
                        return &e->sent[i];
        if (!create)
                return NULL;
        Sent *n = reallocarray(e->sent, e->n_sent + 1, sizeof(Sent));
        if (!n)
                return NULL;
        e->sent = n;
        e->sent[e->n_sent] = (Sent) { .consumer = strdup(consumer) };
        if (!e->sent[e->n_sent].consumer)
                return NULL;
        return &e->sent[e->n_sent++];
}

static int append_event(sd_bus_message *msg, const Events *e, const DevEvent *ev) {
        int r;

        r = sd_bus_message_append(msg, "stsss", e->attr.pfs[ev->pf].identity, ev->seqnum, ev->action, ev->subsystem,
                                  ev->devpath);
        if (r >= 0)
                r = sd_bus_message_open_container(msg, 'a', "{ss}");
        for (char **p = ev->props; r >= 0 && *p; p += 2)
                r = sd_bus_message_append(msg, "{ss}", p[0], p[1]);
        if (r >= 0)
                r = sd_bus_message_close_container(msg);
        return r;
}

/* Sends ev to one consumer, unless it had it. */
static int send_to(Manager *m, const char *consumer, const char *sender, const DevEvent *ev) {
        Events *e = m->events;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
        Sent *s = sent_of(e, consumer, true);
        int r;

        if (!s)
                return -ENOMEM;
        if (ev->order <= s->upto || s->stalled)
                return 0;
        r = sd_bus_message_new_signal(m->bus, &msg, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE, "DeviceEvent");
        if (r >= 0)
                r = sd_bus_message_set_destination(msg, sender);
        if (r >= 0)
                r = append_event(msg, e, ev);
        if (r >= 0)
                r = sd_bus_message_append(msg, "t", ev->held_us);
        if (r >= 0)
                r = sd_bus_send(m->bus, msg, NULL);
        if (r < 0) {
                /* Keep its watermark: it gets this one and the rest when it
                 * registers again (or with GetEvents). */
                s->stalled = true;
                return log_warning_errno(r, "Device event %" PRIu64 " to consumer %s (%s): %m; no more events "
                                         "to it until it registers again", ev->seqnum, consumer, sender);
        }
        s->upto = ev->order;
        if (ev->held_us)
                s->replayed_us = now_usec();
        return 1;
}

/* udevd still works on events: some of seqnum lower than those read may
 * come yet (it finishes events of unrelated devices in any order).  It
 * creates /run/udev/queue with the first event it queues and removes it
 * once it finished the last; the kernel source has no such queue. */
static bool udev_busy(Events *e) {
        return e->queue && udev_queue_get_queue_is_empty(e->queue) == 0;
}

static int cmp_seqnum(const void *a, const void *b) {
        const DevEvent *x = a, *y = b;

        return x->seqnum < y->seqnum ? -1 : x->seqnum > y->seqnum;
}

static double ms_between(uint64_t from, uint64_t to) {
        return from && to >= from ? (double) (to - from) / 1000.0 : 0.0;
}

/* The first release after the restore: where the time from the restore's
 * end to it went. */
static void log_release(Manager *m) {
        Events *e = m->events;

        e->times.released_us = now_usec();
        log_info("Device events: %zu held events released %.1f ms after the restore ended: %.1f ms until "
                 "events_attach() (report, bus), %.1f ms reading the PFs and VFs, %.1f ms attributing, "
                 "%.1f ms waiting for udevd's queue", e->n_pending,
                 ms_between(m->restore_end_us, e->times.released_us),
                 ms_between(m->restore_end_us, e->times.attach_us),
                 ms_between(e->times.attach_us, e->times.learned_us),
                 ms_between(e->times.learned_us, e->times.taken_us),
                 ms_between(e->times.taken_us, e->times.released_us));
}

static void first_release_done(Manager *m) {
        Events *e = m->events;

        if (e->released)
                return;
        e->released = true;
        if (e->on_released)
                e->on_released(m);
}

/* Delivers every pending event in seqnum order, into the ring and to the
 * consumers of its PF. */
static void flush(Manager *m) {
        Events *e = m->events;

        if (!e->released)
                log_release(m);
        if (e->n_pending == 0) {
                first_release_done(m);
                return;
        }
        qsort(e->pending, e->n_pending, sizeof(DevEvent), cmp_seqnum);
        for (size_t i = 0; i < e->n_pending; i++) {
                DevEvent *ev = &e->pending[i];

                /* Held: everything in the first release after the restore
                 * (what came before it and while udevd finished the
                 * restore's events). */
                if (!e->released || ev->received_us < e->times.learned_us) {
                        ev->held_us = now_usec() - ev->received_us;
                        e->held++;
                }
                if (ev->seqnum && ev->seqnum <= e->last_seqnum) {
                        e->late++;
                        log_warning("Device event %" PRIu64 " (%s %s) came after %" PRIu64
                                    " was delivered (udevd held it past the %u s bound); delivered late",
                                    ev->seqnum, ev->action, ev->devpath, e->last_seqnum,
                                    (unsigned) (EVENTS_MAX_WAIT_USEC / 1000000));
                } else
                        e->last_seqnum = ev->seqnum;
                ev->order = ++e->last_order;
                for (size_t c = 0; c < m->n_consumers; c++)
                        if (consumer_holds_pf(m, m->consumers[c]->name, e->attr.pfs[ev->pf].identity))
                                (void) send_to(m, m->consumers[c]->name, m->consumers[c]->sender, ev);
                e->delivered++;
                if (e->ring_n == e->ring_max) {
                        DevEvent *old = &e->ring[e->ring_start];

                        if (e->dropped == 0)
                                log_warning("Device events: the buffer of %zu events is full; dropping the oldest "
                                            "(seqnum %" PRIu64 "); GetEvents reports the loss", e->ring_max,
                                            old->seqnum);
                        e->dropped++;
                        e->attr.pfs[old->pf].dropped++;
                        e->attr.pfs[old->pf].dropped_max_seqnum = MAX(e->attr.pfs[old->pf].dropped_max_seqnum, old->seqnum);
                        dev_event_free(old);
                        e->ring_start = (e->ring_start + 1) % e->ring_max;
                        e->ring_n--;
                }
                e->ring[(e->ring_start + e->ring_n) % e->ring_max] = *ev;
                e->ring_n++;
        }
        e->n_pending = 0;
        /* Nothing pending: the bound of what went out no longer applies
         * (arm_timer() only ever moves it earlier). */
        if (e->timer)
                (void) sd_event_source_set_enabled(e->timer, SD_EVENT_OFF);
        first_release_done(m);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata);

/* The timer at the absolute CLOCK_MONOTONIC time usec, unless it is armed
 * for earlier. */
static void arm_timer(Manager *m, uint64_t usec) {
        Events *e = m->events;
        int enabled = SD_EVENT_OFF;
        uint64_t t = 0;

        if (!e->timer) {
                (void) sd_event_add_time(m->event, &e->timer, CLOCK_MONOTONIC, usec, 0, on_timer, m);
                return;
        }
        (void) sd_event_source_get_enabled(e->timer, &enabled);
        (void) sd_event_source_get_time(e->timer, &t);
        if (enabled == SD_EVENT_OFF || usec < t) {
                (void) sd_event_source_set_time(e->timer, usec);
                (void) sd_event_source_set_enabled(e->timer, SD_EVENT_ONESHOT);
        }
}

/* Delivers the pending events once nothing older can come: at once when
 * udevd's queue is empty (or there is none: the kernel source is in
 * order), else when it empties (on_queue()), at the latest
 * EVENTS_MAX_WAIT_USEC after the oldest pending event arrived (held ones
 * count from events_attach()). */
static void release(Manager *m) {
        Events *e = m->events;

        if (!e->attached || e->n_pending == 0)
                return;
        if (udev_busy(e)) {
                uint64_t oldest = UINT64_MAX;

                for (size_t i = 0; i < e->n_pending; i++)
                        oldest = MIN(oldest, e->pending[i].received_us);
                arm_timer(m, MAX(oldest, e->times.learned_us) + EVENTS_MAX_WAIT_USEC);
                return;
        }
        /* Empty: whatever udevd sent before it emptied is in the socket
         * now; read it all, then deliver in seqnum order. */
        while (drain(e, EVENTS_DRAIN_MAX) > 0)
                ;
        flush(m);
}

/* udevd kept an event past EVENTS_MAX_WAIT_USEC: deliver what is pending
 * anyway (an older event still in udevd comes late, counted). */
static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        Events *e = m->events;

        (void) s;
        (void) usec;
        if (e->n_pending == 0 || !udev_busy(e)) {
                release(m);
                return 0;
        }
        e->waited_out++;
        log_warning("Device events: udevd's queue is still busy %u s after the oldest of %zu pending events "
                    "arrived; delivering them now", (unsigned) (EVENTS_MAX_WAIT_USEC / 1000000), e->n_pending);
        while (drain(e, EVENTS_DRAIN_MAX) > 0)
                ;
        flush(m);
        return 0;
}

static int on_io(_unused_ sd_event_source *s, _unused_ int fd, _unused_ uint32_t revents, void *userdata) {
        Manager *m = userdata;
        Events *e = m->events;

        if (!e->attached) {
                hold(e);
                return 0;
        }
        /* Any device event may change the inventory (VFs, drivers, PFs). */
        if (drain(e, EVENTS_DRAIN_MAX) > 0)
                inventory_cache_invalidate(m);
        release(m);
        return 0;
}

/* Something in /run/udev was deleted: perhaps the queue file. */
static int on_queue(_unused_ sd_event_source *s, _unused_ int fd, _unused_ uint32_t revents, void *userdata) {
        Manager *m = userdata;

        (void) udev_queue_flush(m->events->queue);
        release(m);
        return 0;
}

static int replay_uevents(Events *e, const PfRestore *pf) {
        char path[PATH_MAX], b[PCI_BDF_STRING_MAX], uuid[64], line[80];
        int r, n = 0;

        r = procfs_read_line("sys/kernel/random/uuid", uuid, sizeof(uuid));
        if (r < 0)
                return log_warning_errno(r, "Replaying uevents: no UUID from /proc/sys/kernel/random/uuid: %m");
        snprintf(line, sizeof(line), "add %s", uuid);
        for (uint32_t i = 0; i < pf->numvfs; i++) {
                PciBdf vf;
                if (sriov_vf_bdf(&pf->bdf, i, &vf) < 0)
                        continue;
                (void) sysfs_path(path, sizeof(path), "bus/pci/devices/%s/uevent", pci_bdf_format(&vf, b));
                _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
                if (fd < 0 || write(fd, line, strlen(line)) < 0) {
                        log_warning_errno(-errno, "Replaying VF %s's add uevent (%s): %m", b, path);
                        continue;
                }
                n++;
        }
        e->replayed_uevents += (uint64_t) n;
        log_info("PF %s: replayed %d VF add uevents, SYNTH_UUID=%s", pci_bdf_format(&pf->bdf, b), n, uuid);
        return n;
}

int events_attach(Manager *m, const PfRestore *pfs, size_t n_pfs, bool replay, void (*on_released)(Manager *m)) {
        Events *e = m->events;
        int r;

        if (!e)
                return 0;
        hold(e);        /* what came since the loop last ran (the report, the bus) */
        e->times.attach_us = now_usec();
        e->on_released = on_released;
        r = learn_devices(e);
        if (r < 0)
                log_warning_errno(r, "Device events: cannot list the PFs and VFs now: %m; attributing by physfn only");
        for (size_t i = 0; pfs && i < n_pfs; i++)
                if (pfs[i].identity && pfs[i].error == 0 && replay)
                        (void) replay_uevents(e, &pfs[i]);
        /* What came until now was held; the replayed uevents too. */
        e->times.learned_us = now_usec();
        e->attached = true;
        for (size_t i = 0; i < e->n_raw; i++)
                (void) take(e, e->raw[i].device, e->raw[i].received_us);
        free(e->raw);
        e->raw = NULL;
        e->n_raw = 0;
        while (drain(e, EVENTS_DRAIN_MAX) > 0)
                ;
        e->times.taken_us = now_usec();
        log_info("Device events: %" PRIu64 " held during the restore (%" PRIu64 " of other devices), "
                 "released in seqnum order once udevd's queue is empty", (uint64_t) e->n_pending, e->unattributed);
        /* The restore's own events may still be in udevd: they go out when
         * its queue empties (bounded), the loop serving calls meanwhile. */
        release(m);
        if (e->n_pending == 0 && !e->released)
                flush(m);
        return 0;
}

/* Events of the PFs consumer holds (all PFs for NULL) dropped from the
 * buffer when the newest of them is above after; plus 1 when the socket
 * overran after `after` (how many were lost there is unknown). */
static uint64_t lost_after(Manager *m, const char *consumer, uint64_t after) {
        Events *e = m->events;
        uint64_t lost = 0;

        for (size_t i = 0; i < e->attr.n_pfs; i++)
                if (e->attr.pfs[i].dropped > 0 && e->attr.pfs[i].dropped_max_seqnum > after &&
                    (!consumer || consumer_holds_pf(m, consumer, e->attr.pfs[i].identity)))
                        lost += e->attr.pfs[i].dropped;
        if (e->overrun && e->overrun_seqnum >= after)
                lost++;
        return lost;
}

int events_consumer_registered(Manager *m, const char *consumer, const char *sender) {
        Events *e = m->events;
        Sent *s;
        int n = 0;

        if (!e)
                return 0;
        s = sent_of(e, consumer, true);
        if (!s)
                return -ENOMEM;
        s->stalled = false;
        /* Tell it first when some of its events are gone from the buffer
         * before it could be sent them (a gap). */
        uint64_t lost = 0;
        if (e->ring_n > 0 && s->upto < e->ring[e->ring_start].order)
                lost = lost_after(m, consumer, 0);
        /* Once per gap: what was dropped since it was last told, not the
         * same count again on each registration while its watermark stays
         * put (nothing of its PFs left to send). */
        if (lost > s->lost_told) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
                uint64_t count = lost - s->lost_told;
                int r = sd_bus_message_new_signal(m->bus, &msg, LUOD_OBJECT_PATH, LUOD_MANAGER_IFACE, "EventsLost");
                if (r >= 0)
                        r = sd_bus_message_set_destination(msg, sender);
                if (r >= 0)
                        r = sd_bus_message_append(msg, "t", count);
                if (r >= 0)
                        r = sd_bus_send(m->bus, msg, NULL);
                if (r < 0)
                        log_warning_errno(r, "EventsLost to consumer %s (%s): %m", consumer, sender);
                else
                        s->lost_told = lost;
                log_warning("Consumer %s: %" PRIu64 " events of its PFs were dropped from the buffer before it "
                            "registered (--event-buffer=%zu)", consumer, count, e->ring_max);
        }
        for (size_t i = 0; i < e->ring_n; i++) {
                const DevEvent *ev = &e->ring[(e->ring_start + i) % e->ring_max];

                if (consumer_holds_pf(m, consumer, e->attr.pfs[ev->pf].identity) && send_to(m, consumer, sender, ev) > 0)
                        n++;
        }
        if (n > 0)
                log_info("Consumer %s: sent %d buffered device events of its PFs", consumer, n);
        return n;
}

uint64_t events_consumer_replayed_us(Manager *m, const char *consumer) {
        Sent *s = m->events ? sent_of(m->events, consumer, false) : NULL;

        return s ? s->replayed_us : 0;
}

int events_stats(Manager *m, EventsStats *ret) {
        Events *e = m->events;
        EventsStats s = {};
        size_t n = 0;

        if (!e)
                return -ENODATA;
        for (size_t i = 0; i < e->attr.n_pfs; i++)
                n += e->attr.pfs[i].dropped > 0;
        s = (EventsStats) {
                .source = strdup(e->source),
                .dropped_by_pf = n > 0 ? calloc(n, sizeof(EventsPfDropped)) : NULL,
                .buffer = e->ring_max,
                .received = e->received,
                .delivered = e->delivered,
                .held = e->held,
                .unattributed = e->unattributed,
                .dropped = e->dropped,
                .late = e->late,
                .overrun = e->overrun,
                .replayed_uevents = e->replayed_uevents,
                .waited_out = e->waited_out,
                .released = e->times.released_us > 0,
        };
        if (s.released)
                s.release = (EventsRelease) {
                        .after_restore_ms = ms_between(m->restore_end_us, e->times.released_us),
                        .until_attach_ms = ms_between(m->restore_end_us, e->times.attach_us),
                        .scan_ms = ms_between(e->times.attach_us, e->times.learned_us),
                        .attribute_ms = ms_between(e->times.learned_us, e->times.taken_us),
                        .udev_queue_ms = ms_between(e->times.taken_us, e->times.released_us),
                };
        if (!s.source || (n > 0 && !s.dropped_by_pf)) {
                events_stats_done(&s);
                return -ENOMEM;
        }
        for (size_t i = 0; i < e->attr.n_pfs; i++) {
                if (e->attr.pfs[i].dropped == 0)
                        continue;
                EventsPfDropped *d = &s.dropped_by_pf[s.n_dropped_by_pf++];
                d->dropped = e->attr.pfs[i].dropped;
                d->identity = strdup(e->attr.pfs[i].identity);
                if (!d->identity) {
                        events_stats_done(&s);
                        return -ENOMEM;
                }
        }
        *ret = s;
        return 0;
}

/* /sys/kernel/uevent_seqnum: the last seqnum this kernel gave (0 if
 * unreadable). */
static uint64_t kernel_uevent_seqnum(void) {
        _cleanup_close_ int fd = -EBADF;
        char buf[32], path[PATH_MAX];
        ssize_t n;

        if (sysfs_path(path, sizeof(path), "kernel/uevent_seqnum") >= 0)
                fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
                return 0;
        buf[n] = 0;
        return strtoull(buf, NULL, 10);
}

int method_get_events(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        Events *e = m->events;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *sender = sd_bus_message_get_sender(msg), *consumer = NULL;
        uint64_t after;
        unsigned n = 0;
        int r;

        r = sd_bus_message_read(msg, "t", &after);
        if (r < 0)
                return r;
        if (!e)
                return sd_bus_error_setf(error, LUOD_ERROR_NO_EVENTS, "luod watches no device events (see its log)");
        /* Seqnums start again at each boot: a cursor beyond anything this
         * kernel numbered comes from before the kexec. */
        uint64_t newest = MAX(e->max_seqnum, kernel_uevent_seqnum());
        if (after > newest)
                return sd_bus_error_setf(error, LUOD_ERROR_CURSOR_FROM_OTHER_BOOT,
                                         "Seqnum %" PRIu64 " is beyond the newest event of this "
                                         "boot (%" PRIu64 ", /sys/kernel/uevent_seqnum): a cursor from before "
                                         "the kexec? Start from 0", after, newest);
        for (size_t i = 0; sender && i < m->n_consumers; i++)
                if (strcmp(m->consumers[i]->sender, sender) == 0)
                        consumer = m->consumers[i]->name;
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r >= 0)
                r = sd_bus_message_append(reply, "t", lost_after(m, consumer, after));
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(stsssa{ss})");
        /* At most EVENTS_FETCH_MAX a reply, so that it stays well under the
         * bus's message size limit: the caller asks again from the last. */
        for (size_t i = 0; r >= 0 && i < e->ring_n && n < EVENTS_FETCH_MAX; i++) {
                const DevEvent *ev = &e->ring[(e->ring_start + i) % e->ring_max];

                if (ev->seqnum <= after || (consumer && !consumer_holds_pf(m, consumer, e->attr.pfs[ev->pf].identity)))
                        continue;
                r = sd_bus_message_open_container(reply, 'r', "stsssa{ss}");
                if (r >= 0)
                        r = append_event(reply, e, ev);
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
                n++;
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}
