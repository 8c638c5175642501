/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The types luod's modules share: the Manager (every object luod holds),
 * consumers, inhibitors, the guests and the report of an update.  Types only, no functions of a module: every
 * module may include it without depending on another (see
 * tools/check-include-cycles.py). */

#include <stdbool.h>
#include <stdlib.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "inventory.h"
#include "inventory-cache.h"

typedef struct Manager Manager;

typedef struct Inhibitor {
        char *consumer;
        bool block;             /* block: Update refused; else delay */
        char *why;
        uid_t uid;              /* its consumer's uid (the cap is per uid) */
        int fd;                 /* read end of the pipe; POLLHUP: released */
} Inhibitor;

/* A consumer name and the uid that registered it first (this luod run). */
typedef struct ConsumerOwner {
        char *name;
        uid_t uid;
} ConsumerOwner;

typedef struct Consumer {
        char *name;             /* [A-Za-z0-9._-]{1,64} */
        char *sender;           /* unique bus name, e.g. ":1.42" */
        uid_t uid;              /* the caller's (effective) uid, the name's owner */
        bool privileged;        /* root or in the consumer group: block inhibitors, AssignVF */
        sd_bus_track *track;    /* drops the consumer when its connection goes */
        Manager *manager;
} Consumer;

/* Update flags of org.luod1.Manager.Update (proto/org.luod1.Manager.xml). */
#define UPDATE_DRY_RUN        (UINT64_C(1) << 0)
#define UPDATE_VIA_SYSTEMD    (UINT64_C(1) << 1)
#define UPDATE_FLAGS_ALL      (UPDATE_DRY_RUN | UPDATE_VIA_SYSTEMD)

/* Preservation backends Update may use (luod --backends), tried in this
 * order: LUO session, state appended to the initrd, state file. */
#define BACKEND_LUO           (1U << 0)
#define BACKEND_INITRD        (1U << 1)
#define BACKEND_FILE          (1U << 2)
#define BACKEND_ALL           (BACKEND_LUO | BACKEND_INITRD | BACKEND_FILE)

typedef struct Events Events;
typedef struct PfRestore PfRestore;
typedef struct Update Update;

/* What became of a guest that held VFs at the kexec. */
typedef enum GuestResult {
        GUEST_RESULT_OK,                /* every PF of its VFs restored */
        GUEST_RESULT_FAILED,            /* one was not (error says which) */
        GUEST_RESULT_RUNNING,           /* its consumer said it runs (GuestRunning) */
        _GUEST_RESULT_MAX,
        _GUEST_RESULT_INVALID = -22,    /* -EINVAL */
} GuestResult;

/* The points of a guest's way back (guests.c says what each is; report.c
 * names them). */
typedef enum GuestPhaseType {
        GUEST_PHASE_BLACKOUT_START,
        GUEST_PHASE_PERSIST_AND_KEXEC,
        GUEST_PHASE_KERNEL_START,
        GUEST_PHASE_LUOD_START,
        GUEST_PHASE_PFS_ENABLED,
        GUEST_PHASE_VFS_BOUND,
        GUEST_PHASE_EVENTS_REPLAYED,
        GUEST_PHASE_RUNNING,
        _GUEST_PHASE_MAX,
        _GUEST_PHASE_INVALID = -22,     /* -EINVAL */
} GuestPhaseType;

#define GUEST_PHASES_MAX _GUEST_PHASE_MAX

/* A point of a guest's way back, in ms since its blackout start. */
typedef struct GuestPhase {
        GuestPhaseType type;
        double at_ms;
} GuestPhase;

/* A guest of the last update (guests.c; its JSON in report.c). */
typedef struct Guest {
        char *consumer;
        char *name;
        unsigned vfs;
        GuestResult result;             /* FAILED stays FAILED once running */
        char *error;                    /* its first failed PF's error, NULL if none */
        bool running;                   /* GuestRunning came: the fields below are set */
        double downtime_ms;
        char *blackout_start;           /* the timestamp its downtime counts from */
        bool approximate;               /* wall clock, not the TSC */
        GuestPhase phases[GUEST_PHASES_MAX];
        size_t n_phases;
} Guest;

/* Frees what g points to (not g itself). */
static inline void guest_done(Guest *g) {
        free(g->consumer);
        free(g->name);
        free(g->error);
        free(g->blackout_start);
}

/* The phases of an update the report times (report.h says what each
 * spans). */
typedef enum ReportPhaseType {
        REPORT_PHASE_SNAPSHOT,
        REPORT_PHASE_KEXEC_LOAD,
        REPORT_PHASE_PERSIST_AND_KEXEC,
        REPORT_PHASE_KERNEL_BOOT_TO_LUOD_START,
        REPORT_PHASE_KERNEL_PCI_ENUMERATION,
        REPORT_PHASE_RESTORE,
        REPORT_PHASE_TOTAL_BLACKOUT,
        _REPORT_PHASE_MAX,
        _REPORT_PHASE_INVALID = -22,    /* -EINVAL */
} ReportPhaseType;

typedef struct ReportPhase {
        ReportPhaseType type;
        double ms;                      /* negative when the clocks disagree */
} ReportPhase;

/* A delay inhibitor of the update and how long it held the update. */
typedef struct ReportInhibitor {
        char *consumer;
        bool has_held_ms;               /* false without a TSC rate */
        double held_ms;                 /* prepare-start to its release or timeout */
        bool timed_out;                 /* --max-delay ended the wait for it */
} ReportInhibitor;

typedef enum PfResult {
        PF_RESULT_OK,                   /* restored and read back as recorded */
        PF_RESULT_FAILED,               /* a step failed (error says which) */
        _PF_RESULT_MAX,
        _PF_RESULT_INVALID = -22,       /* -EINVAL */
} PfResult;

/* A PF of the record and its restore: the ms between the steps of
 * restore.c (0 for a step not reached). */
typedef struct ReportPf {
        PciBdf bdf;                     /* where it is now */
        PciBdf recorded_bdf;            /* where it was in the old kernel */
        char *identity;                 /* NULL when the record has none */
        uint32_t numvfs;
        PfResult result;
        char *error;                    /* the failed step and its errno; NULL if none */
        char **differences;             /* read back unlike the record, one field each */
        size_t n_differences;
        double driver_wait_ms, enable_ms, settings_ms, bind_ms, verify_ms;
        double total_ms;                /* start to verified (or bound) */
        uint64_t end_monotonic_us;      /* its last step, CLOCK_MONOTONIC of this kernel */
} ReportPf;

/* The report of an update (report.c builds it, turns it into JSON and back,
 * and writes it; metrics.c formats it).  guests and events are copies,
 * taken by report_write(), of what it wrote. */
typedef struct Report {
        char *update_id;
        char *old_kernel;               /* uname -r before and after the kexec */
        char *new_kernel;
        const struct Backend *backend;  /* where the state travelled; NULL if unknown */
        uint64_t tsc_khz;               /* the TSC rate recorded before the kexec; 0: none */
        bool approximate;               /* the blackout figures are approximate */
        ReportPhase phases[_REPORT_PHASE_MAX];  /* those measured, in update order */
        size_t n_phases;
        ReportInhibitor *inhibitors;
        size_t n_inhibitors;
        unsigned pci_devices_found;     /* by the new kernel's PCI enumeration (its log) */
        ReportPf *pfs;
        size_t n_pfs;
        unsigned attempt;               /* 1, 2, ...: applying the state; 0: not known */
        bool resumed;                   /* luod restarted mid-restore in the same boot */
        bool retry;                     /* luoctl retry */
        Guest *guests;
        size_t n_guests;
        struct EventsStats *events;     /* NULL: no device events watched */
} Report;

typedef struct Manager {
        sd_event *event;
        sd_bus *bus;
        const char *state_dir;          /* /var/lib/luod: state file, reports */
        const char *runtime_dir;        /* /run/luod: initrd copies, the initrd backend's state */
        const char *metrics_file;       /* --metrics-file: the report as textfile metrics, or NULL */
        uint64_t driver_wait_usec;      /* restore: bound on each PF driver wait */
        const char *modules_root;       /* /lib/modules: the new kernel's module indexes */
        unsigned backends;              /* BACKEND_*: what Update may use; restore looks everywhere */
        char *state;                    /* "idle", "restoring", "restored", "loaded", "failed" */
        char *update_id;                /* last or pending update, "" if none */
        char *last_error;               /* "" if none */
        char *phase;                    /* Update's current step, "" outside Update */
        Report *report;                 /* the last update's report (report.c), or NULL */

        /* The update between its preflight and its load (update.c). */
        Update *update;
        /* A loaded update waiting for kexec -e. */
        LuodState pending;
        int luo_out_fd;                 /* outgoing LUO session: unpreserves when closed */
        const struct Backend *pending_backend;
        char *pending_initrd;           /* initrd with the appended state, removed on failure */
        bool pending_via_systemd;
        bool pending_prepared;          /* PrepareForUpdate went out for it */
        bool executing;                 /* systemctl kexec accepted: past abandoning */
        sd_event_source *execute_source;

        /* What the restore at start found; kept until restored or discarded. */
        int luo_in_fd;                  /* retrieved LUO session, FINISH after a full restore */
        bool state_kept;                /* a preserved state is still held */

        /* Consumers (consumers.c): registered connections, and the VF
         * assignments, kept in held.assignments (nothing else of held is
         * used) and <state_dir>/assignments.json. */
        Consumer **consumers;
        size_t n_consumers;
        struct ConsumerOwner *owners;   /* name -> uid that registered it first */
        size_t n_owners;
        LuodState held;
        Inhibitor *inhibitors;
        size_t n_inhibitors;
        uint64_t max_delay_usec;        /* --max-delay: bound on delay inhibitors */
        bool have_consumer_gid;         /* --consumer-group resolved */
        gid_t consumer_gid;             /* may take block inhibitors and AssignVF, with root */
        InventoryCache inventory;       /* GetInventory's last answer */
        uint64_t blackout_start_tsc;    /* restored update: its persist-start (TSC), 0 = unknown */
        uint64_t tsc_khz;               /* and the TSC rate recorded before the kexec */
        LuodState restored;             /* its timestamps (only those are kept) */
        Guest *guests;                  /* its guests (guests.c) */
        size_t n_guests;
        PfRestore *restore_pfs;         /* and its per-PF results (restore.h) */
        size_t n_restore_pfs;
        uint64_t restore_end_us;        /* CLOCK_MONOTONIC */
        uint64_t restore_end_tsc;

        /* Held and replayed device events (events.c). */
        Events *events;
        unsigned event_buffer;          /* --event-buffer: events kept for GetEvents */
        bool replay_uevents;            /* --replay-uevents: "add <uuid>" to each restored VF */
} Manager;

/* The id of the update between its preflight and kexec -e (in progress or
 * loaded), or NULL when there is none. */
static inline const char *manager_update_busy(const Manager *m) {
        if (m->update)
                return m->update_id;
        if (m->pending.update_id[0])
                return m->pending.update_id;
        return NULL;
}
