/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Held and replayed device events: uevents for the PFs and VFs, held while
 * the restore runs and replayed to consumers after it.
 *
 * luod watches device events of the subsystems pci, vfio and net from its
 * start, before the restore: a libudev monitor on the "udev" source (events
 * after systemd-udevd processed them), or on the "kernel" source when udevd
 * is not running (/run/udev/control missing; the report says which).  The
 * monitor's fd is on luod's sd-event loop from the start, and the loop runs
 * while the restore's workers do (restore_all() with RestoreOptions.event):
 * events are read and stamped as they come (the socket's receive buffer,
 * 128 MiB with SO_RCVBUFFORCE, takes bursts) and none is delivered, so
 * nothing concerning a PF or its VFs can reach a consumer before that PF's
 * restore finished (or failed).  libudev's monitor rather than
 * sd_device_monitor: libsystemd's public sd_device_monitor_new() listens on
 * udev's source only, and a host whose udevd is not (yet) running has only
 * the kernel's.
 *
 * Once the bus is up (events_attach()), each event is attributed to a PF by
 * the BDFs in its devpath (the PF itself, or a VF through its physfn link;
 * a vfio group by the devices of its IOMMU group), kept in a bounded buffer
 * (--event-buffer, default 4096 events; the oldest dropped first, counted
 * and logged) and delivered as the unicast signal DeviceEvent to each
 * registered consumer holding a VF of that PF (AssignVF), in kernel
 * sequence-number (SEQNUM) order: udevd finishes events of unrelated
 * devices in any order, so events go out sorted once udevd's queue is
 * empty (/run/udev/queue gone, watched with inotify: udev_queue_get_fd()),
 * at most EVENTS_MAX_WAIT_USEC after the oldest of them arrived; the
 * kernel source is in order and goes out at once.  A consumer that
 * registers gets what it has not been sent yet (per consumer name: none
 * lost, none duplicated across reconnects) right after its GuestRestored
 * signals; GetEvents fetches again from any seqnum.  Events of no known PF are counted, not
 * delivered. */

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <systemd/sd-bus.h>

#include "inventory.h"
#include "restore.h"

typedef struct Manager Manager;
typedef struct Events Events;

#define EVENTS_BUFFER_DEFAULT 4096
#define EVENTS_MAX_WAIT_USEC (5 * 1000 * 1000)
#define EVENTS_FETCH_MAX 1024   /* events in one GetEvents reply */
#define EVENTS_BUFFER_MAX 65536 /* --event-buffer */

/* Opens the monitor (udev source, else kernel source) with a filter for
 * pci, vfio and net, and a 128 MiB receive buffer; stores it in m->events
 * and puts its fd (and, on the udev source, an inotify fd on /run/udev for
 * udevd's queue) on m->event, which must exist.  Called before the
 * restore: whenever m->event runs, events are read, stamped and held until
 * events_attach().  Returns 0, or a negative errno (logged: luod then runs
 * without device events, and the report says so). */
int events_start(Manager *m, unsigned buffer_max);

/* After the restore, with m->bus set up: learns the PFs and VFs present
 * now (sysfs), optionally writes "add <uuid>" to the uevent file of every
 * VF of each restored PF (one UUID per PF: SYNTH_UUID groups the replay for
 * udev rules) when replay_uevents, attributes what was held, and releases
 * it once udevd's queue is empty: now, or later from the loop.  After that
 * first release on_released(m) is called (may be NULL).  pfs: the
 * restore's results (NULL when nothing was restored).  Returns 0 (a
 * failure to read the PFs is logged and leaves attribution by physfn
 * only). */
int events_attach(Manager *m, const PfRestore *pfs, size_t n_pfs, bool replay_uevents,
                  void (*on_released)(Manager *m));

/* A consumer registered: sends it (unicast DeviceEvent signals) every
 * buffered event of its PFs it was not sent yet.  Returns the number of
 * events sent, or a negative errno. */
int events_consumer_registered(Manager *m, const char *consumer, const char *sender);

/* When the consumer was last sent a held event of one of its PFs
 * (CLOCK_MONOTONIC µs; 0: none yet). */
uint64_t events_consumer_replayed_us(Manager *m, const char *consumer);

/* A PF's events dropped from the buffer before GetEvents could fetch
 * them. */
typedef struct EventsPfDropped {
        char *identity;                 /* the PF's stable identity */
        uint64_t dropped;
} EventsPfDropped;

/* Where the time from the restore's end to the first release of the held
 * events went, in ms (CLOCK_MONOTONIC). */
typedef struct EventsRelease {
        double after_restore_ms;        /* the restore's end to the release: the four below */
        double until_attach_ms;         /* the report written, the bus opened */
        double scan_ms;                 /* the PFs and VFs present read, uevents replayed */
        double attribute_ms;            /* the held events attributed to their PFs */
        double udev_queue_ms;           /* waiting for udevd's queue to empty */
} EventsRelease;

/* The device events' figures for the report (its "events"), counted since
 * events_start(). */
typedef struct EventsStats {
        char *source;                   /* the monitor's: "udev" or "kernel" */
        uint64_t buffer;                /* events kept for GetEvents (--event-buffer) */
        uint64_t received;              /* read from the monitor */
        uint64_t delivered;             /* sent on (attributed to a PF) */
        uint64_t held;                  /* of those, held during the restore */
        uint64_t unattributed;          /* of no known PF: counted, not delivered */
        uint64_t dropped;               /* dropped from the buffer, oldest first */
        EventsPfDropped *dropped_by_pf; /* the PFs with dropped > 0 */
        size_t n_dropped_by_pf;
        uint64_t late;                  /* delivered after a higher seqnum (udevd held it past the bound) */
        bool overrun;                   /* the monitor's socket overran: events lost */
        uint64_t replayed_uevents;      /* "add" written to VF uevent files (--replay-uevents) */
        uint64_t waited_out;            /* releases forced after EVENTS_MAX_WAIT_USEC with udevd's
                                         * queue still busy */
        bool released;                  /* the held events went out: release is set */
        EventsRelease release;
} EventsStats;

/* Fills *ret with the figures so far (strings copied; free with
 * events_stats_done()).  Returns 0, -ENODATA when luod watches no device
 * events (m->events is NULL), or -ENOMEM (*ret untouched). */
int events_stats(Manager *m, EventsStats *ret);

static inline void events_stats_done(EventsStats *s) {
        free(s->source);
        for (size_t i = 0; i < s->n_dropped_by_pf; i++)
                free(s->dropped_by_pf[i].identity);
        free(s->dropped_by_pf);
        *s = (EventsStats) {};
}

void events_done(Manager *m);

/* org.luod1.Manager.GetEvents(t after_seqnum) -> (t lost, a(stsssa{ss}))
 * (proto/org.luod1.Manager.xml). */
int method_get_events(sd_bus_message *msg, void *userdata, sd_bus_error *error);
