/* registry.h: the SQLite registry (schema in db/schema.sql, embedded at
** build), and what every part of it shares: the handle, opening (creating,
** migrating, guarding), the sweep's lock, devices and runs, misses. Several
** processes may write one registry: WAL mode and a busy timeout. Each write
** is its own transaction, so what a sweep learns is kept the moment it
** lands, and an interrupted sweep loses at most the candidate in flight.
**
** The registry's modules, by what they store, each with its header:
**   registry_measure.h  measurements: one row per candidate evaluated
**   registry_winner.h   winners (and their finalists), defaults
**   registry_cubin.h    the compile cache; what trim and gc keep
**   registry_vendor.h   the vendor library's times
**   registry_scan.h     `aitune scan`'s rows
**   registry_decided.h  the buckets a sweep decided (what a resume skips)
**   registry_export.h   rows as JSON, text and Kernel Tuner T4 (export, import)
**   registry_merge.h    another registry merged in, checked first
**   registry_sql.h      for those modules only: statement helpers, shared SQL
** libaitune (rt.c) reads the same tables with the same SQL (names.h).
**
** Calls return 0 or -1; on -1, reg_errmsg(r) names the registry file and the
** problem. Nothing here prints, but reg_sweep_lock's refusal. */
#ifndef REGISTRY_H
#define REGISTRY_H
#include "device.h"
#include "util.h"

typedef struct reg reg;

/* 2: defaults carry their kernel (cubin, launch); winners.launch holds
** launch plans (plan.h) instead of 0.1's evaluated-at-tuning JSON.
** 3: hardware apart from toolchain identity (db/migrations/010-identity.sql):
** devices.hw and .toolchain, runs.sources, winners keyed by hardware too.
** 4: measurements.timing (db/migrations/011-timing.sql): flush or stream (neighbour since, no migration: a name).
** 5: vendor_times (db/migrations/012-vendor.sql; registry_vendor.h).
** 6: scans (db/migrations/013-scans.sql; registry_scan.h).
** 7: cubins.cubin_hash (db/migrations/014-cubin-hash.sql): each cached
** cubin's bytes, checked before the cache hands it out.
** 8: decided (db/migrations/015-decided.sql; registry_decided.h): the
** buckets a sweep decided, so a sweep run again leaves them as they are.
** The version itself is names.h's REG_SCHEMA_VERSION. */

/* ---- the handle ---- */

/* Open (and, unless readonly, create) the registry at path. *out is set even
** on failure, so reg_errmsg works; reg_close it either way. Opened for
** writing, an older schema is migrated (db/migrations/), in one transaction;
** a newer one is refused. path must be a regular file (or, unless readonly,
** absent): devices, FIFOs and folders are refused; it is a file name, never
** read as a SQLite URI. A file whose schema holds anything but the
** registry's tables, indexes and triggers (dbguard.h: views, virtual
** tables, generated columns, foreign tables or triggers) is refused before
** any table is read, and every statement's work is bounded (reg_bound). A
** read-only open works in a read-only folder. Returns 0, -1 for a registry
** that is missing, not one or unusable (bad input), or REG_NOTWRITABLE when
** a write open finds the file or its folder read-only (a tool failure: the
** user must point --db elsewhere). */
#define REG_NOTWRITABLE (-2)
int reg_open(const char *path, int readonly, reg **out);
void reg_close(reg *r);
const char *reg_errmsg(reg *r);
const char *reg_path(reg *r);
/* The schema version the open left (older only when opened read-only: every
** reader copes with each version since 1, or says what it lacks). */
int reg_version(reg *r);
/* Every statement on r stops after this many steps of SQLite's virtual
** machine (dbguard.h; DBGUARD_TOOL_STEPS from reg_open, which also refuses
** a file whose schema holds views, foreign triggers or virtual tables), and
** fails with a message that says so. Tests lower it. */
void reg_bound(reg *r, long long steps);

/* One sweep at a time on a registry (sweep, retune, check, window): an
** exclusive lock on "PATH.lock" beside the registry (PATH with its links
** resolved), flock'd and kept until this process exits, so a second sweep
** on the same registry is refused instead of timing against the first on
** the same GPU and racing it for rows. A process that dies releases it (the
** kernel drops its locks), so a stale lock file never blocks. Taking it
** again in the process that holds it succeeds. The file holds the holder's
** pid, start time and command, for the message. Returns 0, or an exit code
** with one line printed: EXIT_FAIL when another process holds it (the line
** says which) or it cannot be made. */
int reg_sweep_lock(const char *path, const char *command);

/* Several writes as one transaction (a command whose rows of several
** tables stand or fall together: pin): reg_begin takes the write lock
** (BEGIN IMMEDIATE), reg_commit keeps what was written since, reg_rollback
** drops it. A call that makes a transaction of its own (reg_winners_put)
** nests inside it. */
int reg_begin(reg *r);
int reg_commit(reg *r);
void reg_rollback(reg *r);

struct plan_arg;
/* The op's signature for plan migration: 0, or -1 when the op is unknown. */
typedef int (*reg_signature_fn)(void *ctx, const char *op, const char *dtype, int *ndims, char dims[][64],
                                int *nargs, struct plan_arg *args);
/* Rewrite 0.1 launch JSON in winners to plan version 2 (plan_decode_v1 with
** the op's signature from sig). Rows that cannot be converted (an op no
** longer known) are left and counted in *failed. */
int reg_migrate_plans(reg *r, reg_signature_fn sig, void *ctx, int *converted, int *failed);

/* ---- devices and runs ---- */

/* The device row for this fingerprint, inserted if new. */
int reg_device(reg *r, const device *d, long long *id);
int reg_run_begin(reg *r, const char *command, const char *spec_hash, unsigned long long seed,
                  long long device, const char *env_json, long long *id);
int reg_run_end(reg *r, long long run, const char *outcome);
/* Record the hashes of the template sources a run's kernels came from: a
** JSON object, op -> identity_sources() (db/migrations/010-identity.sql). */
int reg_run_sources(reg *r, long long run, const char *json);

/* A run and the device it measured on. */
typedef struct reg_run {
    char command[1024], version[32], started[32], ended[32], outcome[16];
    unsigned long long seed;
    char env[2048];             /* JSON, "" if none */
    device dev;                 /* name, uuid, cc, SMs, memory, L2, driver, CUDA driver, NVRTC */
    long long device_id;
} reg_run;
/* 1 found (out filled), 0 no such run. */
int reg_run_get(reg *r, long long run, reg_run *out);
/* The id of the newest run recorded, 0 when there is none. */
int reg_run_last(reg *r, long long *id);

/* ---- the registry as a whole ---- */

/* PRAGMA integrity_check: 0 if "ok". */
int reg_check(reg *r);
/* Whether anything (a winner, a default or a measurement) names op, and
** (op, dtype). */
int reg_knows(reg *r, const char *op, const char *dtype, int *op_known, int *dtype_known);
/* The registry's bytes on disk: the file and its WAL; settled, the file
** alone once the WAL is copied into it as far as other connections allow
** (the WAL goes when the last connection closes). */
long long reg_disk_bytes(reg *r, int settled);

/* The misses libaitune recorded (shapes it was asked for and had no bucket
** for), per (op, arch, dtype): distinct shapes and calls. */
int reg_misses_by_op(reg *r, int (*cb)(const char *op, const char *arch, const char *dtype, long long shapes,
                                       long long calls, void *ctx), void *ctx);
/* Each recorded miss: shape is the JSON object the runtime wrote. */
int reg_misses_each(reg *r, int (*cb)(const char *op, const char *arch, const char *dtype, const char *shape,
                                      long long calls, void *ctx), void *ctx);

#endif
