/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <json-c/json.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "inventory.h"

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

/* Parses a comma-separated list of "luo", "initrd", "file" into BACKEND_*
 * bits.  Returns 0, or -EINVAL for an empty list or an unknown name. */
int backends_from_string(const char *s, unsigned *ret);

typedef struct Consumer Consumer;
typedef struct Inhibitor Inhibitor;
typedef struct Events Events;
typedef struct PfRestore PfRestore;

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
        json_object *report;            /* the last update's report, or NULL */

        /* A loaded update waiting for kexec -e. */
        LuodState pending;
        int luo_out_fd;                 /* outgoing LUO session: unpreserves when closed */
        char *pending_backend;
        char *pending_initrd;           /* initrd with the appended state, removed on failure */
        bool pending_via_systemd;

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
        uint64_t blackout_start_tsc;    /* restored update: its persist-start (TSC), 0 = unknown */
        uint64_t tsc_khz;               /* and the TSC rate recorded before the kexec */
        LuodState restored;             /* its timestamps (only those are kept) */
        PfRestore *restore_pfs;         /* and its per-PF results (restore.h) */
        size_t n_restore_pfs;
        uint64_t restore_end_us;        /* CLOCK_MONOTONIC */
        uint64_t restore_end_tsc;

        /* Held and replayed device events (events.c). */
        Events *events;
        unsigned event_buffer;          /* --event-buffer: events kept for GetEvents */
        bool replay_uevents;            /* --replay-uevents: "add <uuid>" to each restored VF */
} Manager;

/* Runs at start, before the bus name is taken: finds a preserved state
 * (LUO session "luod", then <runtime_dir> or /luod from the initramfs, then
 * <state_dir>/state.luod-state).  Refuses it (kept, logged, State
 * "failed") when it is corrupt or its major version is unknown, when
 * another boot consumed it (its "consumed" boot id is not this boot's), or,
 * not consumed yet, when the kernel command line lacks its luod.update_id
 * (a cold boot).  Otherwise marks it consumed by this boot and writes it to
 * <state_dir>/state.luod-state (fsync, rename, directory fsync) before any
 * restore step, so a luod killed mid-restore resumes it when started again
 * in the same boot (report: resumed true, attempt N); then restores every PF
 * in parallel, writes <state_dir>/reports/<update-id>.json and report.json,
 * and drops the state only when every PF was restored (and notes the update
 * in <runtime_dir>/finished).  A command line with luod.update_id=X and no
 * state, X not finished in this boot, is a failure (-ENOENT, State
 * "failed", LastError "State of update X not found: ...", a journal entry
 * with a catalog ID).  Returns 0 (also when nothing was preserved), or a
 * negative errno (the state is kept). */
int manager_restore_at_start(Manager *m);

/* Applies the state kept in <state_dir>/state.luod-state in this boot, as
 * `luoctl retry` asks (D-Bus Retry): whatever boot consumed it before and
 * whatever this boot's command line says.  Marks it consumed by this boot
 * (attempt + 1) and writes that durably first, then restores as at start
 * and writes the report (resumed false, retry true).  Blocks until every PF
 * is done.  Returns 0 when every PF was restored (the state is dropped), or
 * a negative errno with *ret_error a malloc'd message naming the file, the
 * PFs or the errno: -ENOENT no kept state, -EBADMSG (or another parse
 * error) it is unusable, -EUCLEAN some PF failed (state kept), the errno
 * of the state file write, -ENOMEM. */
int manager_retry(Manager *m, char **ret_error);

/* Writes m->report to <state_dir>/reports/<update_id>.json and
 * <state_dir>/report.json.  Returns 0 or a negative errno (logged). */
int manager_write_report(Manager *m, const char *update_id);

/* Adds org.luod1.Manager at /org/luod1 to m->bus. */
int manager_add_bus_object(Manager *m);

void manager_done(Manager *m);
