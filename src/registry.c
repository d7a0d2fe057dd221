/* registry.c: see registry.h. */
#define _GNU_SOURCE
#include "registry_sql.h"
#include "registry_vendor.h"
#include "vendor.h"
#include <errno.h>
#include "dbguard.h"
#include "jit.h"
#include "json.h"
#include "plan.h"
#include "spec.h"
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REG_BUSY_MS 10000   /* how long a write waits for another process's */

extern const char reg_schema_sql[];   /* build/gen/schema.c, from db/schema.sql */
/* build/gen/migrations.c, from db/migrations/NNN-*.sql: [v] takes v-1 to v. */
extern const char *const reg_migration_sql[];

struct reg {
    sqlite3 *db;
    char *path;
    int version;            /* schema version after open (and migration) */
    dbguard_budget budget;  /* each statement's work (dbguard_bound) */
    char err[1024];
};

/* ---- registry_sql.h: what the registry's modules share ---- */

int reg_fail(reg *r, const char *fmt, ...)
{
    va_list ap;
    char msg[768];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(r->err, sizeof r->err, "registry '%s': %s", r->path, msg);
    return -1;
}

int reg_dbfail(reg *r, const char *what)
{
    if (r->budget.hit)
        return reg_fail(r, "%s: stopped after %lld steps of work (a registry altered to make its readers hang?)", what,
                        r->budget.ticks * DBGUARD_TICK);
    return reg_fail(r, "%s: %s", what, sqlite3_errmsg(r->db));
}

const char *reg_errmsg(reg *r) { return r->err[0] ? r->err : "not an error"; }
const char *reg_path(reg *r) { return r->path; }
sqlite3 *reg_db(reg *r) { return r->db; }

int reg_exec(reg *r, const char *sql, const char *what)
{
    char *msg = NULL;
    if (sqlite3_exec(r->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        if (r->budget.hit) reg_dbfail(r, what);
        else reg_fail(r, "%s: %s", what, msg ? msg : sqlite3_errmsg(r->db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

sqlite3_stmt *reg_prep(reg *r, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK) {
        reg_dbfail(r, "prepare");
        return NULL;
    }
    return st;
}

int reg_done(reg *r, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return reg_dbfail(r, what);
    return 0;
}

void reg_bind(sqlite3_stmt *st, int i, const char *s)
{
    if (s) sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(st, i);
}

void reg_bind_id(sqlite3_stmt *st, int i, long long id)
{
    if (id > 0) sqlite3_bind_int64(st, i, id);
    else sqlite3_bind_null(st, i);
}

void reg_bind_bucket(sqlite3_stmt *st, const char *op, const char *arch, const char *dtype, const char *bucket)
{
    reg_bind(st, 1, op);
    reg_bind(st, 2, arch);
    reg_bind(st, 3, dtype);
    reg_bind(st, 4, bucket);
}

void reg_col(sqlite3_stmt *st, int i, char *dst, size_t cap)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    snprintf(dst, cap, "%s", s ? (const char *)s : "");
}

char *reg_col_dup(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return s ? xstrdup((const char *)s) : NULL;
}

const char *reg_col_str(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return s ? (const char *)s : "";
}

long long reg_count(reg *r, const char *table)
{
    char *sql = xstrfmt("SELECT count(*) FROM %s", table);
    sqlite3_stmt *st = reg_prep(r, sql);
    free(sql);
    long long n = -1;
    if (st && sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* ---- open ---- */

/* Switching to WAL needs a moment with no other connection on the file, and
** SQLite answers "locked" at once instead of waiting (the busy handler does
** not cover it): several processes opening a new registry together retry
** for as long as the busy timeout. */
static int enable_wal(reg *r)
{
    for (int waited_ms = 0;; waited_ms += 5) {
        int rc = sqlite3_exec(r->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
        if (rc == SQLITE_OK) return 0;
        if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || waited_ms >= REG_BUSY_MS)
            return reg_fail(r, "cannot enable WAL: %s", sqlite3_errmsg(r->db));
        sqlite3_sleep(5);
    }
}

/* db/schema.sql applied to a memory database, once per process (every
** reg_open compares its file's triggers with these). Its connection is
** used under ref_mu only. */
static sqlite3 *ref_db;
static pthread_mutex_t ref_mu = PTHREAD_MUTEX_INITIALIZER;

/* The objects of r's file, against the reference schema (dbguard_check). */
static int guard_schema(reg *r)
{
    char why[512];
    pthread_mutex_lock(&ref_mu);
    int rc = SQLITE_OK;
    if (!ref_db) {
        rc = sqlite3_open_v2(":memory:", &ref_db, SQLITE_OPEN_READWRITE, NULL);
        if (rc == SQLITE_OK) rc = sqlite3_exec(ref_db, reg_schema_sql, NULL, NULL, NULL);
        if (rc != SQLITE_OK) {
            sqlite3_close(ref_db);
            ref_db = NULL;
        }
    }
    if (rc == SQLITE_OK) rc = dbguard_check(r->db, ref_db, why, sizeof why) ? SQLITE_ERROR : SQLITE_OK;
    else snprintf(why, sizeof why, "cannot build the reference schema: %s", sqlite3_errstr(rc));
    pthread_mutex_unlock(&ref_mu);
    if (rc && r->budget.hit) return reg_dbfail(r, "cannot read its schema");
    return rc ? reg_fail(r, "%s", why) : 0;
}

static int schema_version(reg *r, int *version)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(r->db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL);
    if (rc != SQLITE_OK) return reg_dbfail(r, "cannot read");
    rc = sqlite3_step(st);
    int tables = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    sqlite3_finalize(st);
    if (tables < 0) return reg_dbfail(r, "cannot read");
    if (tables == 0) { *version = 0; return 0; }
    if (sqlite3_prepare_v2(r->db, REG_SCHEMA_VERSION_SQL, -1, &st, NULL) != SQLITE_OK)
        return reg_fail(r, "not an aitune registry (no meta table)");
    rc = sqlite3_step(st);
    *version = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    sqlite3_finalize(st);
    if (*version < 1) return reg_fail(r, "not an aitune registry (no schema version)");
    return 0;
}

/* A read-only open that works where the registry's folder is read-only: a
** WAL database then cannot get its -shm file, and SQLite refuses to read it.
** No writer can be active in such a folder, so the file is read as it is
** (immutable), as libaitune does. */
static int open_readonly(reg *r, const char *path)
{
    char *name = dbguard_name(path);
    int rc = sqlite3_open_v2(name, &r->db, SQLITE_OPEN_READONLY, NULL);
    free(name);
    if (rc != SQLITE_OK) return reg_dbfail(r, "cannot open");
    rc = sqlite3_exec(r->db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
    /* The -shm file cannot be made (CANTOPEN, or READONLY for a read-only
    ** folder): read as immutable. Other errors: schema_version says them. */
    if ((rc & 0xff) != SQLITE_CANTOPEN && (rc & 0xff) != SQLITE_READONLY) return 0;
    sqlite3_close(r->db);
    r->db = NULL;
    char *uri = dbguard_immutable_uri(path);
    if (!uri) return reg_fail(r, "cannot open: %s", strerror(errno));
    rc = sqlite3_open_v2(uri, &r->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
    free(uri);
    return rc == SQLITE_OK ? 0 : reg_dbfail(r, "cannot open");
}

/* Why a write open failed: the file or its folder is not writable (a tool
** failure, REG_NOTWRITABLE), or something else (-1). */
static int write_failure(reg *r, const char *what)
{
    int code = sqlite3_errcode(r->db);
    if (code == SQLITE_READONLY || code == SQLITE_CANTOPEN || code == SQLITE_PERM) {
        reg_fail(r, "%s: %s (compile and sweep write to the registry: pass --db with a writable path)", what,
             sqlite3_errmsg(r->db));
        return REG_NOTWRITABLE;
    }
    return reg_dbfail(r, what);
}

int reg_open(const char *path, int readonly, reg **out)
{
    reg *r = *out = xcalloc(1, sizeof *r);
    r->path = xstrdup(path);
    if (readonly && !file_exists(path)) return reg_fail(r, "no such file (run `aitune sweep` to create one, or pass --db)");
    /* SQLite would open a device or a FIFO too, and leave its journal
    ** beside it (in /dev for /dev/null). */
    if (check_regular_path(path))
        return reg_fail(r, "%s", errno == EINVAL ? "not a regular file" : strerror(errno));
    if (!readonly) {
        char *dir = xstrdup(path);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
            *slash = 0;
            if (mkdir_p(dir)) {
                free(dir);
                reg_fail(r, "cannot create its folder: %s", strerror(errno));
                return REG_NOTWRITABLE;
            }
        }
        free(dir);
    }
    char *name = dbguard_name(path);
    int orc = readonly ? SQLITE_OK : sqlite3_open_v2(name, &r->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    free(name);
    if (readonly) {
        if (open_readonly(r, path)) return -1;
    } else if (orc != SQLITE_OK) {
        return write_failure(r, "cannot open");
    } else if (sqlite3_db_readonly(r->db, "main") == 1) {
        /* SQLite falls back to reading a file it may not write. */
        reg_fail(r, "is read-only (compile and sweep write to the registry: pass --db with a writable path)");
        return REG_NOTWRITABLE;
    }
    sqlite3_busy_timeout(r->db, REG_BUSY_MS);
    /* Before anything reads a table: no query may run for ever, and a file
    ** whose schema is not a registry's is refused. */
    dbguard_bound(r->db, &r->budget, DBGUARD_TOOL_STEPS);
    if (guard_schema(r)) return -1;
    /* WAL with NORMAL sync: a commit survives the process being killed
    ** (what resume needs) without an fsync per measurement. */
    if (!readonly) sqlite3_exec(r->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL);
    int version = 0;
    if (schema_version(r, &version)) return -1;
    if (version > REG_SCHEMA_VERSION)
        return reg_fail(r, "written by a newer aitune (schema %d; this one knows %d): upgrade aitune", version, REG_SCHEMA_VERSION);
    if (version == 0) {
        if (readonly) return reg_fail(r, "empty file, not an aitune registry");
        /* Pages freed by dropping cubins go back to the file system
        ** (reg_cubin_trim): settable only before the file has a header. */
        sqlite3_exec(r->db, "PRAGMA auto_vacuum = INCREMENTAL", NULL, NULL, NULL);
        /* One transaction, so that another process opening the same new
        ** file waits and then sees the whole schema, never half of it.
        ** WAL first: the journal mode cannot change inside a transaction. */
        if (enable_wal(r)) return write_failure(r, "cannot enable WAL");
        if (reg_exec(r, "BEGIN IMMEDIATE", "cannot lock it to create the schema")) return write_failure(r, "cannot lock it");
        if (schema_version(r, &version)) return -1;    /* someone may have just made it */
        if (version == 0) {
            if (reg_exec(r, reg_schema_sql, "cannot create the schema")) return -1;
            char sql[128];
            snprintf(sql, sizeof sql, "INSERT OR REPLACE INTO meta VALUES ('schema_version', '%d')", REG_SCHEMA_VERSION);
            if (reg_exec(r, sql, "cannot write the schema version")) return -1;
        }
        if (reg_exec(r, "COMMIT", "cannot commit the schema")) return -1;
    } else if (!readonly && enable_wal(r)) {
        return write_failure(r, "cannot enable WAL");
    }
    /* An older schema is brought up to date, one step per migration, in one
    ** transaction with the version, so a concurrent opener sees either. A
    ** read-only open reads what is there (every reader copes with version 1). */
    if (version < REG_SCHEMA_VERSION && !readonly) {
        if (reg_exec(r, "BEGIN IMMEDIATE", "cannot lock it to migrate the schema")) return -1;
        if (schema_version(r, &version)) { reg_exec(r, "ROLLBACK", "rollback"); return -1; }
        for (int v = version + 1; v <= REG_SCHEMA_VERSION; v++) {
            char what[64], sql[128];
            snprintf(what, sizeof what, "cannot migrate it to schema %d", v);
            snprintf(sql, sizeof sql, "INSERT OR REPLACE INTO meta VALUES ('schema_version', '%d')", v);
            if (reg_exec(r, reg_migration_sql[v], what) || reg_exec(r, sql, what)) {
                sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
                return -1;
            }
        }
        if (reg_exec(r, "COMMIT", "cannot commit the migration")) return -1;
    }
    r->version = version > REG_SCHEMA_VERSION ? version : REG_SCHEMA_VERSION;
    if (readonly) r->version = version;
    return 0;
}

/* The locks this process holds (reg_sweep_lock): resolved lock paths. */
static struct { char *path; int fd; } *held;
static int nheld;
static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;

/* PATH.lock for the registry at path, with its links (or its folder's,
** for a registry not made yet) resolved, so every name of one file locks
** one lock. */
static char *lock_path(const char *path)
{
    char *real = realpath(path, NULL);
    if (real) {
        char *l = xstrfmt("%s.lock", real);
        free(real);
        return l;
    }
    char *dir = xstrdup(path), *slash = strrchr(dir, '/');
    const char *base = slash ? slash + 1 : path;
    if (slash) *slash = 0;
    char *rdir = realpath(slash ? (*dir ? dir : "/") : ".", NULL);
    char *l = rdir ? xstrfmt("%s/%s.lock", strcmp(rdir, "/") ? rdir : "", base) : xstrfmt("%s.lock", path);
    free(rdir);
    free(dir);
    return l;
}

int reg_sweep_lock(const char *path, const char *command)
{
    /* A new registry's folder, as reg_open would make it. */
    char *dir = xstrdup(path), *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = 0;
        mkdir_p(dir);
    }
    free(dir);
    char *lp = lock_path(path);
    pthread_mutex_lock(&held_mu);
    for (int i = 0; i < nheld; i++)
        if (!strcmp(held[i].path, lp)) {
            pthread_mutex_unlock(&held_mu);
            free(lp);
            return 0;
        }
    int code = 0;
    int fd = open(lp, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0666);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        error("cannot lock registry '%s': '%s': %s", path, lp, fd < 0 ? strerror(errno) : "not a regular file");
        code = EXIT_FAIL;
    } else if (flock(fd, LOCK_EX | LOCK_NB)) {
        if (errno == EWOULDBLOCK) {
            char who[256] = "";
            ssize_t n = pread(fd, who, sizeof who - 1, 0);
            who[n > 0 ? n : 0] = 0;
            who[strcspn(who, "\n")] = 0;
            error("registry '%s' is in use by another sweep (%s): wait for it to finish, or give this one another "
                  "--db (merge them later)", path, who[0] ? who : "its lock file names no process");
        } else {
            error("cannot lock registry '%s': %s", path, strerror(errno));
        }
        code = EXIT_FAIL;
    } else {
        char when[32], *line;
        iso_time(when);
        line = xstrfmt("pid %d since %s: %.160s\n", (int)getpid(), when, command ? command : "aitune sweep");
        if (ftruncate(fd, 0) || pwrite(fd, line, strlen(line), 0) < 0) {}   /* only the message needs it */
        free(line);
        held = xrealloc(held, sizeof *held * (size_t)(nheld + 1));
        held[nheld].path = lp;
        held[nheld++].fd = fd;
        lp = NULL;
        fd = -1;
    }
    if (fd >= 0) close(fd);
    pthread_mutex_unlock(&held_mu);
    free(lp);
    return code;
}

int reg_version(reg *r) { return r->version; }

void reg_bound(reg *r, long long steps)
{
    if (r->db) dbguard_bound(r->db, &r->budget, steps);
}

int reg_migrate_plans(reg *r, reg_signature_fn sig, void *ctx, int *converted, int *failed)
{
    *converted = *failed = 0;
    sqlite3_stmt *st = reg_prep(r, "SELECT rowid, op, dtype, launch FROM winners WHERE launch IS NOT NULL AND "
                               "launch NOT LIKE '{\"v\":%' AND launch <> '{}'");
    if (!st) return -1;
    typedef struct row { long long id; char *op, *dtype, *launch; } row;
    row *rows = NULL;
    int n = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        rows = xrealloc(rows, sizeof *rows * (size_t)(n + 1));
        rows[n].id = sqlite3_column_int64(st, 0);
        rows[n].op = reg_col_dup(st, 1);
        rows[n].dtype = reg_col_dup(st, 2);
        rows[n].launch = reg_col_dup(st, 3);
        n++;
    }
    sqlite3_finalize(st);
    int bad = rc != SQLITE_DONE ? reg_dbfail(r, "cannot read winners") : 0;
    for (int i = 0; i < n && !bad; i++) {
        int ndims = 0, nargs = 0;
        char dims[PLAN_MAXDIMS][PLAN_MAXNAME + 1];
        plan_arg args[PLAN_MAXARGS];
        plan *p = NULL;
        char err[512], *json = NULL;
        const char *dn[PLAN_MAXDIMS];
        if (rows[i].op && rows[i].dtype && !sig(ctx, rows[i].op, rows[i].dtype, &ndims, dims, &nargs, args)) {
            for (int d = 0; d < ndims; d++) dn[d] = dims[d];
            if (!plan_decode_v1(rows[i].launch, ndims, dn, nargs, args, &p, err, sizeof err))
                json = plan_encode(p, err, sizeof err);
        }
        plan_free(p);
        if (!json) { (*failed)++; continue; }
        sqlite3_stmt *up = reg_prep(r, "UPDATE winners SET launch = ? WHERE rowid = ?");
        if (!up) { free(json); bad = -1; break; }
        reg_bind(up, 1, json);
        sqlite3_bind_int64(up, 2, rows[i].id);
        free(json);
        if (reg_done(r, up, "cannot store a migrated launch plan")) bad = -1;
        else (*converted)++;
    }
    for (int i = 0; i < n; i++) {
        free(rows[i].op);
        free(rows[i].dtype);
        free(rows[i].launch);
    }
    free(rows);
    return bad ? -1 : 0;
}

void reg_close(reg *r)
{
    if (!r) return;
    sqlite3_close(r->db);
    free(r->path);
    free(r);
}

int reg_device(reg *r, const device *d, long long *id)
{
    char nvrtc[16];
    snprintf(nvrtc, sizeof nvrtc, "%s", d->nvrtc);
    sqlite3_stmt *st = reg_prep(r, "INSERT OR IGNORE INTO devices (name, uuid, cc, sms, mem_bytes, l2_bytes, smem_optin, "
                               "driver, cuda_driver, nvrtc) VALUES (?,?,?,?,?,?,?,?,?,?)");
    if (!st) return -1;
    reg_bind(st, 1, d->name);
    reg_bind(st, 2, d->uuid);
    sqlite3_bind_int(st, 3, d->cc);
    sqlite3_bind_int(st, 4, d->sms);
    sqlite3_bind_int64(st, 5, d->mem);
    sqlite3_bind_int64(st, 6, d->l2);
    sqlite3_bind_int(st, 7, d->smem_optin);
    reg_bind(st, 8, d->driver);
    sqlite3_bind_int(st, 9, d->cuda_driver);
    reg_bind(st, 10, nvrtc);
    if (reg_done(r, st, "cannot record the device")) return -1;
    st = reg_prep(r, "SELECT id FROM devices WHERE uuid = ? AND driver = ? AND cuda_driver = ? AND nvrtc = ?");
    if (!st) return -1;
    reg_bind(st, 1, d->uuid);
    reg_bind(st, 2, d->driver);
    sqlite3_bind_int(st, 3, d->cuda_driver);
    reg_bind(st, 4, nvrtc);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : reg_dbfail(r, "cannot read the device back");
}

int reg_run_begin(reg *r, const char *command, const char *spec_hash, unsigned long long seed,
                  long long device, const char *env_json, long long *id)
{
    char t[32];
    iso_time(t);
    sqlite3_stmt *st = reg_prep(r, "INSERT INTO runs (command, spec_hash, version, seed, device, env, started, outcome) "
                               "VALUES (?,?,?,?,?,?,?, 'running')");
    if (!st) return -1;
    reg_bind(st, 1, command);
    reg_bind(st, 2, spec_hash);
    reg_bind(st, 3, AITUNE_TOOL_VERSION);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)seed);
    reg_bind_id(st, 5, device);
    reg_bind(st, 6, env_json);
    reg_bind(st, 7, t);
    if (reg_done(r, st, "cannot record the run")) return -1;
    *id = sqlite3_last_insert_rowid(r->db);
    return 0;
}

int reg_run_end(reg *r, long long run, const char *outcome)
{
    char t[32];
    iso_time(t);
    sqlite3_stmt *st = reg_prep(r, "UPDATE runs SET ended = ?, outcome = ? WHERE id = ?");
    if (!st) return -1;
    reg_bind(st, 1, t);
    reg_bind(st, 2, outcome);
    sqlite3_bind_int64(st, 3, run);
    return reg_done(r, st, "cannot close the run");
}

int reg_check(reg *r)
{
    sqlite3_stmt *st = reg_prep(r, "PRAGMA integrity_check");
    if (!st) return -1;
    int rc = sqlite3_step(st);
    int ok = rc == SQLITE_ROW && !strcmp((const char *)sqlite3_column_text(st, 0), "ok");
    char msg[256] = "";
    if (!ok && rc == SQLITE_ROW) reg_col(st, 0, msg, sizeof msg);
    sqlite3_finalize(st);
    return ok ? 0 : reg_fail(r, "integrity check: %s", msg[0] ? msg : sqlite3_errmsg(r->db));
}

/* ---- Reading a registry back (why, export, gc). ---- */

int reg_knows(reg *r, const char *op, const char *dtype, int *op_known, int *dtype_known)
{
    static const char *const sql[2] = {
        "SELECT EXISTS (SELECT 1 FROM winners WHERE op = ?1) OR EXISTS (SELECT 1 FROM defaults WHERE op = ?1) "
        "OR EXISTS (SELECT 1 FROM measurements WHERE op = ?1)",
        "SELECT EXISTS (SELECT 1 FROM winners WHERE op = ?1 AND dtype = ?2) "
        "OR EXISTS (SELECT 1 FROM defaults WHERE op = ?1 AND dtype = ?2) "
        "OR EXISTS (SELECT 1 FROM measurements WHERE op = ?1 AND dtype = ?2)",
    };
    int *out[2] = { op_known, dtype_known };
    for (int i = 0; i < 2; i++) {
        sqlite3_stmt *st = reg_prep(r, sql[i]);
        if (!st) return -1;
        reg_bind(st, 1, op);
        if (i) reg_bind(st, 2, dtype);
        int rc = sqlite3_step(st);
        *out[i] = rc == SQLITE_ROW && sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        if (rc != SQLITE_ROW) return reg_dbfail(r, "cannot read");
    }
    return 0;
}

int reg_run_get(reg *r, long long run, reg_run *out)
{
    sqlite3_stmt *st = reg_prep(r, "SELECT r.command, r.version, r.started, r.ended, r.outcome, r.seed, r.env, d.id, d.name, "
                               "d.uuid, d.cc, d.sms, d.mem_bytes, d.l2_bytes, d.driver, d.cuda_driver, d.nvrtc "
                               "FROM runs r LEFT JOIN devices d ON d.id = r.device WHERE r.id = ?");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, run);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        memset(out, 0, sizeof *out);
        reg_col(st, 0, out->command, sizeof out->command);
        reg_col(st, 1, out->version, sizeof out->version);
        reg_col(st, 2, out->started, sizeof out->started);
        reg_col(st, 3, out->ended, sizeof out->ended);
        reg_col(st, 4, out->outcome, sizeof out->outcome);
        out->seed = (unsigned long long)sqlite3_column_int64(st, 5);
        reg_col(st, 6, out->env, sizeof out->env);
        out->device_id = sqlite3_column_int64(st, 7);
        reg_col(st, 8, out->dev.name, sizeof out->dev.name);
        reg_col(st, 9, out->dev.uuid, sizeof out->dev.uuid);
        out->dev.cc = sqlite3_column_int(st, 10);
        out->dev.sms = sqlite3_column_int(st, 11);
        out->dev.mem = sqlite3_column_int64(st, 12);
        out->dev.l2 = sqlite3_column_int64(st, 13);
        reg_col(st, 14, out->dev.driver, sizeof out->dev.driver);
        out->dev.cuda_driver = sqlite3_column_int(st, 15);
        reg_col(st, 16, out->dev.nvrtc, sizeof out->dev.nvrtc);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW) return 1;
    return rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot read runs");
}

long long reg_disk_bytes(reg *r, int settled)
{
    /* PASSIVE: another process writing the registry is not waited for. */
    if (settled) sqlite3_exec(r->db, "PRAGMA wal_checkpoint(PASSIVE)", NULL, NULL, NULL);
    long long total = 0;
    for (int i = 0; i < 2 - settled; i++) {
        char *p = i ? xstrfmt("%s-wal", r->path) : xstrdup(r->path);
        FILE *f = fopen(p, "rb");
        if (f && !fseek(f, 0, SEEK_END)) total += ftell(f);
        if (f) fclose(f);
        free(p);
    }
    return total;
}

/* ---- Identity, status and merge (issue 11). ---- */

int reg_run_sources(reg *r, long long run, const char *json)
{
    sqlite3_stmt *st = reg_prep(r, "UPDATE runs SET sources = ? WHERE id = ?");
    if (!st) return -1;
    reg_bind(st, 1, json);
    sqlite3_bind_int64(st, 2, run);
    return reg_done(r, st, "cannot record the run's template sources");
}

int reg_misses_by_op(reg *r, int (*cb)(const char *op, const char *arch, const char *dtype, long long shapes,
                                       long long calls, void *ctx), void *ctx)
{
    sqlite3_stmt *st = reg_prep(r, "SELECT op, arch, dtype, count(*), sum(count) FROM misses "
                               "GROUP BY op, arch, dtype ORDER BY op, arch, dtype");
    if (!st) return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (cb(reg_col_str(st, 0), reg_col_str(st, 1), reg_col_str(st, 2), sqlite3_column_int64(st, 3),
               sqlite3_column_int64(st, 4), ctx))
            break;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot read the misses");
}

/* One merge step: sql, then how many rows it changed into *n. */
static int merge_step(reg *r, const char *sql, const char *what, long long *n)
{
    int before = sqlite3_total_changes(r->db);
    if (reg_exec(r, sql, what)) return -1;
    if (n) *n += sqlite3_total_changes(r->db) - before;
    return 0;
}

/* ---- merge: each input checked before it is read ----
**
** An input is a shard someone else wrote: it is copied (read-only) into a
** temporary registry beside the output, migrated there if older, and
** checked there, whole, before one row of it is merged: integrity, schema
** (reg_open), one row per key, names and archs, finite positive times,
** bucket keys that fit their edges and shapes, and a split bucket's parts
** that partition it. */

/* A name as the spec allows (op, dtype, dim): [a-z0-9_], within cap. */
static int good_name(const char *s, size_t cap)
{
    if (!s || !*s || strlen(s) >= cap) return 0;
    for (; *s; s++)
        if (!(*s >= 'a' && *s <= 'z') && !(*s >= '0' && *s <= '9') && *s != '_') return 0;
    return 1;
}

/* "op/impl" of op. */
static int good_template(const char *t, const char *op)
{
    size_t n = strlen(op);
    return t && strlen(t) < 64 && !strncmp(t, op, n) && t[n] == '/' && good_name(t + n + 1, 64);
}

/* "64,4096" into v[0, n): exactly n decimal sizes >= 1. */
static int edge_list(const char *s, long long *v, int n)
{
    for (int i = 0; i < n; i++) {
        size_t len = strcspn(s, ",");
        if (parse_size(s, len, 1, 1LL << 62, &v[i])) return -1;
        s += len;
        if (i + 1 < n && *s++ != ',') return -1;
    }
    return *s ? -1 : 0;
}

/* The sizes of a shape object ({"n": 64}) for the key's dims, in order. */
static int shape_sizes(const char *shape, const bucket_parsed *k, long long *v)
{
    json *doc;
    char err[128];
    if (!shape || json_parse(shape, &doc, err, sizeof err)) return -1;
    int rc = doc->type == JSON_OBJ && doc->n == k->ndims ? 0 : -1;
    for (int d = 0; d < k->ndims && !rc; d++) {
        const json *x = json_get(doc, k->names[d]);
        if (!x || x->type != JSON_NUM || !x->is_int || x->i < 1) rc = -1;
        else v[d] = x->i;
    }
    json_free(doc);
    return rc;
}

typedef struct part_box {
    char *family;               /* op, arch, dtype, home, hw */
    int ndims;
    long long lo[SPEC_MAXDIMS], hi[SPEC_MAXDIMS], home_lo[SPEC_MAXDIMS];
} part_box;

/* A winner's key against its dims, edges and shape: 0, or -1 with why. A
** part's box is appended to parts. */
static int check_winner_key(const char *op, const char *arch, const char *dtype, const char *bucket, const char *hw,
                            const char *dims, const char *lo, const char *hi, const char *shape, char *why, int cap,
                            part_box **parts, int *nparts)
{
    bucket_parsed k;
    char kwhy[128];
    if (!bucket || strlen(bucket) >= 96 || bucket_key_parse(bucket, &k, kwhy, sizeof kwhy))
        return snprintf(why, (size_t)cap, "bucket key is not one aitune writes (%s)", bucket ? kwhy : "none"), -1;
    /* dims: the key's names, in its order. */
    char want[SPEC_MAXDIMS * 17] = "";
    for (int d = 0; d < k.ndims; d++) snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", d ? "," : "", k.names[d]);
    if (!dims || strcmp(dims, want)) return snprintf(why, (size_t)cap, "dims '%.40s' are not the key's", dims ? dims : ""), -1;
    long long l[SPEC_MAXDIMS], h[SPEC_MAXDIMS], rep[SPEC_MAXDIMS];
    if (!lo || !hi || edge_list(lo, l, k.ndims) || edge_list(hi, h, k.ndims))
        return snprintf(why, (size_t)cap, "edges '%.40s' to '%.40s' are not %d sizes each", lo ? lo : "", hi ? hi : "",
                        k.ndims), -1;
    if (shape_sizes(shape, &k, rep)) return snprintf(why, (size_t)cap, "shape is not a size per dim of the key"), -1;
    for (int d = 0; d < k.ndims; d++) {
        long long top = k.lo[d] * 2;
        if (!k.part && (l[d] != k.lo[d] || h[d] != top))
            return snprintf(why, (size_t)cap, "edges of dim %s are [%lld, %lld), the key's [%lld, %lld)", k.names[d], l[d],
                            h[d], k.lo[d], top), -1;
        if (k.part && (l[d] != k.corner[d] || l[d] < k.lo[d] || h[d] <= l[d] || h[d] > top))
            return snprintf(why, (size_t)cap, "part's dim %s [%lld, %lld) is not its corner's inside [%lld, %lld)",
                            k.names[d], l[d], h[d], k.lo[d], top), -1;
        if (rep[d] < l[d] || rep[d] >= h[d])
            return snprintf(why, (size_t)cap, "shape's %s = %lld is outside its edges", k.names[d], rep[d]), -1;
    }
    if (!k.part) {
        char key[96], names[SPEC_MAXDIMS][16];
        memcpy(names, k.names, sizeof names);
        if (bucket_key(k.ndims, names, k.lo, rep, key, sizeof key) || strcmp(key, bucket))
            return snprintf(why, (size_t)cap, "its shape's key is '%s'", key), -1;
        return 0;
    }
    *parts = xrealloc(*parts, sizeof **parts * (size_t)(*nparts + 1));
    part_box *b = &(*parts)[(*nparts)++];
    char home[96];
    bucket_home(bucket, home, sizeof home);
    b->family = xstrfmt("%s %s %s %s %s", op, arch, dtype, home, hw);
    b->ndims = k.ndims;
    memcpy(b->lo, l, sizeof l);
    memcpy(b->hi, h, sizeof h);
    memcpy(b->home_lo, k.lo, sizeof k.lo);
    return 0;
}

static int cmp_family(const void *a, const void *b)
{
    return strcmp(((const part_box *)a)->family, ((const part_box *)b)->family);
}

/* The parts of each split bucket tile it: two or more, disjoint, their
** volumes adding up to the bucket's (each lies inside it already). */
static int check_partitions(part_box *p, int n, char *why, int cap)
{
    if (n) qsort(p, (size_t)n, sizeof *p, cmp_family);   /* qsort(NULL, 0) is undefined */
    for (int a = 0, b; a < n; a = b) {
        for (b = a; b < n && !strcmp(p[a].family, p[b].family); b++) {}
        if (b - a > 4096) return snprintf(why, (size_t)cap, "%s is split in %d parts", p[a].family, b - a), -1;
        unsigned __int128 vol = 0, home = 1;
        for (int d = 0; d < p[a].ndims; d++) home *= (unsigned __int128)p[a].home_lo[d];
        for (int i = a; i < b; i++) {
            unsigned __int128 v = 1;
            for (int d = 0; d < p[i].ndims; d++) v *= (unsigned __int128)(p[i].hi[d] - p[i].lo[d]);
            vol += v;
            for (int j = a; j < i; j++) {
                int overlap = p[i].ndims == p[j].ndims;
                for (int d = 0; d < p[i].ndims && overlap; d++)
                    overlap = p[i].lo[d] < p[j].hi[d] && p[j].lo[d] < p[i].hi[d];
                if (overlap) return snprintf(why, (size_t)cap, "%s: two of its parts overlap", p[a].family), -1;
            }
        }
        if (b - a < 2 || vol != home)
            return snprintf(why, (size_t)cap, "%s: its %d part%s do not cover the bucket", p[a].family, b - a,
                            b - a == 1 ? "" : "s"), -1;
    }
    return 0;
}

/* Whether a time column's value is a finite positive number. */
#define POSITIVE(c) "(typeof(" c ") IN ('integer', 'real') AND " c " > 0 AND " c " < 1e300)"

/* Run sql on in; any row it returns is a problem, described by its first
** column. */
static int first_problem(reg *in, const char *sql, const char *what, char *why, int cap)
{
    sqlite3_stmt *st = reg_prep(in, sql);
    if (!st) return snprintf(why, (size_t)cap, "cannot check %s: %.300s", what, sqlite3_errmsg(in->db)), -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        snprintf(why, (size_t)cap, "%s: %s", what, (const char *)sqlite3_column_text(st, 0));
    else if (rc != SQLITE_DONE)
        snprintf(why, (size_t)cap, "cannot check %s: %s", what, sqlite3_errmsg(in->db));
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* A winner's template: "op/impl", or the vendor's for an op it serves. */
static int good_winner_template(const char *t, const char *op, const char *dtype)
{
    return good_template(t, op) || (t && vendor_is_template(t) && vendor_kind(op, dtype) >= 0);
}

/* One row per key, and each row's values in range, by SQL. */
static int check_keys_and_values(reg *in, char *why, int cap)
{
    /* One row per key: a table made without its primary key could hold two
    ** winners of one bucket, and which one a merge kept would depend on the
    ** order rows are read. */
    static const char *const keys[][2] = {
        { "winners", "op, arch, dtype, bucket, hw" }, { "defaults", "op, arch, dtype" }, { "cubins", "hash" },
        { "misses", "op, arch, dtype, shape" }, { "devices", "uuid, driver, cuda_driver, nvrtc" }, { "meta", "key" },
        { "vendor_times", "op, arch, dtype, bucket, shape, hw, timing" },
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char *sql = xstrfmt("SELECT printf('two rows of one key (%s)') FROM %s GROUP BY %s HAVING count(*) > 1 LIMIT 1",
                            keys[i][1], keys[i][0], keys[i][1]);
        int bad = first_problem(in, sql, keys[i][0], why, cap);
        free(sql);
        if (bad) return -1;
    }
    static const char *const rows[][2] = {
        { "winners", "SELECT printf('%s %s %s %s: median_us %s is not a finite positive time', op, arch, dtype, bucket, "
                     "quote(median_us)) FROM winners WHERE NOT " POSITIVE("median_us") " LIMIT 1" },
        { "winners", "SELECT printf('%s %s %s %s: default_us %s is not a finite positive time', op, arch, dtype, bucket, "
                     "quote(default_us)) FROM winners WHERE default_us IS NOT NULL AND NOT " POSITIVE("default_us")
                     " LIMIT 1" },
        { "winners", "SELECT printf('%s %s %s %s: a runner-up without a finite positive time', op, arch, dtype, bucket) "
                     "FROM winners w WHERE runners_up IS NOT NULL AND (NOT json_valid(runners_up) OR "
                     "json_type(runners_up) <> 'array' OR EXISTS (SELECT 1 FROM json_each(w.runners_up) f WHERE NOT "
                     POSITIVE("json_extract(f.value, '$.median_us')") ")) LIMIT 1" },
        { "winners", "SELECT printf('%s %s %s %s: its config is not a JSON object', op, arch, dtype, bucket) FROM winners "
                     "WHERE NOT json_valid(config) OR json_type(config) <> 'object' LIMIT 1" },
        { "measurements", "SELECT printf('row %d: status %s is not ok, constraint, compile, runtime, timeout or wrong', "
                          "id, quote(status)) FROM measurements WHERE status NOT IN ('ok', 'constraint', 'compile', "
                          "'runtime', 'timeout', 'wrong') LIMIT 1" },
        { "measurements", "SELECT printf('row %d: %s is not a finite positive time', id, quote(CASE WHEN NOT "
                          POSITIVE("median_us") " THEN median_us WHEN NOT " POSITIVE("min_us") " THEN min_us "
                          "ELSE max_us END)) FROM measurements WHERE status = 'ok' AND NOT (" POSITIVE("median_us")
                          " AND (min_us IS NULL OR " POSITIVE("min_us") ") AND (max_us IS NULL OR " POSITIVE("max_us")
                          ")) LIMIT 1" },
        { "measurements", "SELECT printf('row %d: a time of %s where status %s has none', id, quote(median_us), status) "
                          "FROM measurements WHERE status <> 'ok' AND median_us IS NOT NULL AND NOT "
                          POSITIVE("median_us") " LIMIT 1" },
        { "measurements", "SELECT printf('row %d: its config is not a JSON object', id) FROM measurements "
                          "WHERE NOT json_valid(config) OR json_type(config) <> 'object' LIMIT 1" },
        { "misses", "SELECT printf('%s %s %s: count %s is not a positive number', op, arch, dtype, quote(count)) "
                    "FROM misses WHERE typeof(count) <> 'integer' OR count < 1 LIMIT 1" },
        { "cubins", "SELECT printf('%s is not a hash of 16 hex digits', quote(hash)) FROM cubins WHERE length(hash) <> 16 "
                    "OR hash GLOB '*[^0-9a-f]*' LIMIT 1" },
        /* The vendor's times: a later merge keeps the first row of a key,
        ** so a row must be one the worker could have written. */
        { "vendor_times", "SELECT printf('%s %s %s %s: status %s is not ok, wrong or runtime', op, arch, dtype, bucket, "
                          "quote(status)) FROM vendor_times WHERE status IS NULL OR status NOT IN ('ok', 'wrong', "
                          "'runtime') LIMIT 1" },
        { "vendor_times", "SELECT printf('%s %s %s %s: timing %s is not flush or stream', op, arch, dtype, bucket, "
                          "quote(timing)) FROM vendor_times WHERE timing IS NULL OR timing NOT IN ('flush', 'stream') "
                          "LIMIT 1" },
        { "vendor_times", "SELECT printf('%s %s %s %s: %s is not a finite positive time', op, arch, dtype, bucket, "
                          "quote(CASE WHEN NOT " POSITIVE("median_us") " THEN median_us WHEN NOT " POSITIVE("min_us")
                          " THEN min_us ELSE max_us END)) FROM vendor_times WHERE status = 'ok' AND NOT ("
                          POSITIVE("median_us") " AND (min_us IS NULL OR " POSITIVE("min_us") ") AND (max_us IS NULL "
                          "OR " POSITIVE("max_us") ")) LIMIT 1" },
        { "vendor_times", "SELECT printf('%s %s %s %s: a time of %s where status %s has none', op, arch, dtype, bucket, "
                          "quote(median_us), status) FROM vendor_times WHERE status <> 'ok' AND median_us IS NOT NULL "
                          "AND NOT " POSITIVE("median_us") " LIMIT 1" },
        { "vendor_times", "SELECT printf('%s %s %s %s: no hardware or library', op, arch, dtype, bucket) FROM vendor_times "
                          "WHERE typeof(hw) <> 'text' OR hw = '' OR typeof(library) <> 'text' LIMIT 1" },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (first_problem(in, rows[i][1], rows[i][0], why, cap)) return -1;
    return 0;
}

/* Each winner's names and bucket key, and the parts of each split bucket
** tiling it. */
static int check_winner_rows(reg *in, char *why, int cap)
{
    part_box *parts = NULL;
    int nparts = 0, bad = 0;
    sqlite3_stmt *st = reg_prep(in, "SELECT op, arch, dtype, bucket, hw, dims, lo, hi, shape, template FROM winners");
    int rc = st ? SQLITE_ROW : SQLITE_ERROR;
    while (!bad && st && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *f[10];
        for (int i = 0; i < 10; i++) f[i] = (const char *)sqlite3_column_text(st, i);
        char kwhy[256];
        if (!good_name(f[0], 32) || !arch_known(f[1]) || !good_name(f[2], 16) || !good_winner_template(f[9], f[0], f[2]))
            bad = snprintf(why, (size_t)cap, "winners: %.32s %.16s %.16s: not an op, arch, dtype and template aitune "
                           "knows the form of", f[0] ? f[0] : "", f[1] ? f[1] : "", f[2] ? f[2] : "");
        else if (check_winner_key(f[0], f[1], f[2], f[3], f[4] ? f[4] : "", f[5], f[6], f[7], f[8], kwhy, sizeof kwhy,
                                  &parts, &nparts))
            bad = snprintf(why, (size_t)cap, "winners: %s %s %s %.96s: %s", f[0], f[1], f[2], f[3] ? f[3] : "", kwhy);
    }
    if (!bad && rc != SQLITE_DONE) bad = snprintf(why, (size_t)cap, "cannot read winners: %s", sqlite3_errmsg(in->db));
    sqlite3_finalize(st);
    if (!bad && check_partitions(parts, nparts, why, cap)) bad = 1;
    for (int i = 0; i < nparts; i++) free(parts[i].family);
    free(parts);
    /* A split bucket's winner beside its own parts, of one hardware. */
    if (!bad)
        bad = first_problem(in, "SELECT printf('%s %s %s %s: a winner beside its own parts', p.op, p.arch, p.dtype, "
                                "p.bucket) FROM winners p WHERE instr(p.bucket, '/') = 0 AND EXISTS (SELECT 1 FROM "
                                "winners c WHERE c.op = p.op AND c.arch = p.arch AND c.dtype = p.dtype AND c.hw = p.hw "
                                "AND substr(c.bucket, 1, length(p.bucket) + 1) = p.bucket || '/') LIMIT 1",
                            "winners", why, cap);
    return bad ? -1 : 0;
}

/* Rows of a table that name a bucket and a shape timed for it
** (measurements, vendor_times): names, arch, a bucket key aitune writes,
** a shape inside it. sql selects a label, op, arch, dtype, bucket, shape and
** template (NULL: none to check). */
static int check_shape_rows(reg *in, const char *table, const char *sql, char *why, int cap)
{
    int bad = 0;
    sqlite3_stmt *st = reg_prep(in, sql);
    int rc = st ? SQLITE_ROW : SQLITE_ERROR;
    while (!bad && st && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *f[7];
        for (int i = 0; i < 7; i++) f[i] = (const char *)sqlite3_column_text(st, i);
        const char *label = f[0] ? f[0] : "";
        bucket_parsed k;
        long long rep[SPEC_MAXDIMS];
        char kwhy[128] = "";
        if (!good_name(f[1], 32) || !arch_known(f[2]) || !good_name(f[3], 16) ||
            (sqlite3_column_type(st, 6) != SQLITE_NULL && !good_template(f[6], f[1])))
            bad = snprintf(why, (size_t)cap, "%s: %.64s: not an op, arch, dtype and template aitune knows the form of",
                           table, label);
        else if (!f[4] || strlen(f[4]) >= 96 || bucket_key_parse(f[4], &k, kwhy, sizeof kwhy) ||
                 shape_sizes(f[5], &k, rep))
            bad = snprintf(why, (size_t)cap, "%s: %.64s: bucket '%.96s' %s", table, label, f[4] ? f[4] : "",
                           kwhy[0] ? kwhy : "does not fit its shape");
        for (int d = 0; !bad && d < k.ndims; d++)
            if (rep[d] < k.lo[d] || rep[d] >= 2 * k.lo[d])
                bad = snprintf(why, (size_t)cap, "%s: %.64s: its shape is outside bucket '%s'", table, label, f[4]);
    }
    if (!bad && st && rc != SQLITE_DONE)
        bad = snprintf(why, (size_t)cap, "cannot read %s: %s", table, sqlite3_errmsg(in->db));
    sqlite3_finalize(st);
    return bad ? -1 : 0;
}

/* A cubin's bytes are the ones hashed with it (an older shard's have no
** hash: compile checks those before it uses one). */
static int check_cubin_rows(reg *in, char *why, int cap)
{
    int bad = 0;
    sqlite3_stmt *st = reg_prep(in, "SELECT hash, cubin, cubin_hash FROM cubins WHERE cubin_hash IS NOT NULL");
    int rc = st ? SQLITE_ROW : SQLITE_ERROR;
    while (!bad && st && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        char sum[17] = "";
        const void *blob = sqlite3_column_blob(st, 1);
        if (blob) jit_hash(blob, (size_t)sqlite3_column_bytes(st, 1), sum);
        if (!blob || strcmp(sum, (const char *)sqlite3_column_text(st, 2)))
            bad = snprintf(why, (size_t)cap, "cubins: %.16s: its bytes are not the ones hashed with it",
                           (const char *)sqlite3_column_text(st, 0));
    }
    if (!bad && st && rc != SQLITE_DONE) bad = snprintf(why, (size_t)cap, "cannot read cubins: %s", sqlite3_errmsg(in->db));
    sqlite3_finalize(st);
    return bad ? -1 : 0;
}

/* The names of defaults and misses. */
static int check_name_rows(reg *in, char *why, int cap)
{
    int bad = 0;
    sqlite3_stmt *st =
        reg_prep(in, "SELECT op, arch, dtype, template FROM defaults UNION ALL SELECT op, arch, dtype, NULL FROM misses");
    int rc = st ? SQLITE_ROW : SQLITE_ERROR;
    while (!bad && st && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *f[4];
        for (int i = 0; i < 4; i++) f[i] = (const char *)sqlite3_column_text(st, i);
        if (!good_name(f[0], 32) || !arch_known(f[1]) || !good_name(f[2], 16) ||
            (sqlite3_column_type(st, 3) != SQLITE_NULL && !good_template(f[3], f[0])))
            bad = snprintf(why, (size_t)cap, "%s: %.32s %.16s %.16s: not an op, arch, dtype and template aitune "
                           "knows the form of", sqlite3_column_type(st, 3) != SQLITE_NULL ? "defaults" : "misses",
                           f[0] ? f[0] : "", f[1] ? f[1] : "", f[2] ? f[2] : "");
    }
    if (!bad && st && rc != SQLITE_DONE) bad = snprintf(why, (size_t)cap, "cannot read: %s", sqlite3_errmsg(in->db));
    sqlite3_finalize(st);
    return bad ? -1 : 0;
}

/* The whole input, before a row of it is merged. (scans are not merged:
** what one GPU saw at each size is its own.) */
static int check_input(reg *in, char *why, int cap)
{
    return check_keys_and_values(in, why, cap) || check_winner_rows(in, why, cap) ||
                   check_shape_rows(in, "measurements",
                                    "SELECT 'row ' || id, op, arch, dtype, bucket, shape, template FROM measurements", why,
                                    cap) ||
                   check_shape_rows(in, "vendor_times",
                                    "SELECT op || ' ' || arch || ' ' || dtype || ' ' || bucket, op, arch, dtype, bucket, "
                                    "shape, NULL FROM vendor_times", why, cap) ||
                   check_cubin_rows(in, why, cap) || check_name_rows(in, why, cap)
               ? -1
               : 0;
}

/* The input at path, copied into a new registry beside r's file (the copy
** is ours: migrated and checked there, the input never written), its name
** into *copy. 0, or -1 with r's message saying why. */
static int merge_copy(reg *r, const char *path, char **copy)
{
    *copy = NULL;
    reg *in;
    if (reg_open(path, 1, &in)) {
        const char *e = strstr(reg_errmsg(in), "': ");
        reg_fail(r, "cannot merge '%s': %s", path, e ? e + 3 : reg_errmsg(in));
        reg_close(in);
        return -1;
    }
    /* A corrupt page would merge as whatever it happens to read as. */
    sqlite3_stmt *ic = reg_prep(in, "PRAGMA integrity_check(1)");
    int rc = ic ? sqlite3_step(ic) : SQLITE_ERROR;
    const char *res = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(ic, 0) : NULL;
    if (!res || strcmp(res, "ok")) {
        reg_fail(r, "cannot merge '%s': it is damaged (integrity_check: %.200s)", path, res ? res : sqlite3_errmsg(in->db));
        sqlite3_finalize(ic);
        reg_close(in);
        return -1;
    }
    sqlite3_finalize(ic);
    const char *slash = strrchr(r->path, '/');
    char *tmp = xstrfmt("%.*s.aitune-merge-XXXXXX", slash ? (int)(slash - r->path + 1) : 0, r->path);
    int fd = mkstemp(tmp);
    sqlite3 *out = NULL;
    char *name = fd >= 0 ? dbguard_name(tmp) : NULL;
    rc = fd < 0 ? SQLITE_CANTOPEN : sqlite3_open_v2(name, &out, SQLITE_OPEN_READWRITE, NULL);
    free(name);
    if (fd >= 0) close(fd);
    sqlite3_backup *b = rc == SQLITE_OK ? sqlite3_backup_init(out, "main", in->db, "main") : NULL;
    if (b) {
        sqlite3_backup_step(b, -1);
        sqlite3_backup_finish(b);
    }
    rc = out ? sqlite3_errcode(out) : rc;
    if (rc != SQLITE_OK) reg_fail(r, "cannot copy '%s' to check it: %s", path, out ? sqlite3_errmsg(out) : strerror(errno));
    sqlite3_close(out);
    reg_close(in);
    if (rc != SQLITE_OK) {
        if (fd >= 0) unlink(tmp);
        free(tmp);
        return -1;
    }
    *copy = tmp;
    return 0;
}

static void merge_drop(char *copy)
{
    if (!copy) return;
    char *side[] = { xstrfmt("%s-wal", copy), xstrfmt("%s-shm", copy) };
    unlink(copy);
    for (int i = 0; i < 2; i++) {
        unlink(side[i]);
        free(side[i]);
    }
    free(copy);
}

int reg_merge(reg *r, const char *path, reg_merge_stats *st)
{
    /* The input read once, into a copy: migrated to this schema and
    ** checked whole before anything of it reaches r. */
    char *copy;
    if (merge_copy(r, path, &copy)) return -1;
    reg *in;
    char why[768];
    int orc = reg_open(copy, 0, &in);
    if (orc) reg_fail(r, "cannot merge '%s': %s", path, strstr(reg_errmsg(in), "': ") ? strstr(reg_errmsg(in), "': ") + 3 : reg_errmsg(in));
    else if (check_input(in, why, sizeof why)) orc = reg_fail(r, "cannot merge '%s': %s", path, why);
    reg_close(in);
    if (orc) {
        merge_drop(copy);
        return -1;
    }
    char *attach = dbguard_name(copy);
    sqlite3_stmt *at = reg_prep(r, "ATTACH DATABASE ? AS src");
    if (at) reg_bind(at, 1, attach);
    free(attach);
    if (!at || reg_done(r, at, "cannot attach the input")) {
        merge_drop(copy);
        return -1;
    }
    /* Local ids map through content: a device by its fingerprint, a run by
    ** when it began, its command, seed and device. */
    static const char *const steps[][2] = {
        { "BEGIN IMMEDIATE", "cannot lock the output" },
        { "INSERT OR IGNORE INTO devices (name, uuid, cc, sms, mem_bytes, l2_bytes, smem_optin, driver, cuda_driver, nvrtc) "
          "SELECT name, uuid, cc, sms, mem_bytes, l2_bytes, smem_optin, driver, cuda_driver, nvrtc FROM src.devices",
          "devices" },
        { "CREATE TEMP TABLE devmap AS SELECT s.id AS src, m.id AS dst FROM src.devices s JOIN main.devices m "
          "ON m.uuid = s.uuid AND m.driver = s.driver AND m.cuda_driver = s.cuda_driver AND m.nvrtc = s.nvrtc",
          "devices" },
        { "INSERT INTO main.runs (command, spec_hash, version, seed, device, env, started, ended, outcome, sources) "
          "SELECT s.command, s.spec_hash, s.version, s.seed, dm.dst, s.env, s.started, s.ended, s.outcome, s.sources "
          "FROM src.runs s LEFT JOIN temp.devmap dm ON dm.src = s.device WHERE NOT EXISTS (SELECT 1 FROM main.runs m "
          "WHERE m.started = s.started AND m.command = s.command AND m.seed = s.seed AND m.device IS dm.dst)",
          "runs" },
        { "CREATE TEMP TABLE runmap AS SELECT s.id AS src, (SELECT min(m.id) FROM main.runs m WHERE m.started = s.started "
          "AND m.command = s.command AND m.seed = s.seed AND m.device IS dm.dst) AS dst "
          "FROM src.runs s LEFT JOIN temp.devmap dm ON dm.src = s.device",
          "runs" },
        { "INSERT OR IGNORE INTO main.cubins SELECT * FROM src.cubins", "cubins" },
        { "INSERT INTO main.measurements (" REG_MEASURE_COLS("") ", timing) "
          "SELECT " REG_MEASURE_DATA("s.") ", dm.dst, rm.dst, s.timing FROM src.measurements s LEFT JOIN temp.devmap dm ON dm.src = s.device "
          "LEFT JOIN temp.runmap rm ON rm.src = s.run WHERE NOT EXISTS (SELECT 1 FROM main.measurements m "
          "WHERE m.op = s.op AND m.arch = s.arch AND m.dtype = s.dtype AND m.bucket = s.bucket AND m.device IS dm.dst "
          "AND m.config_hash = s.config_hash AND m.template = s.template AND m.shape = s.shape AND m.status = s.status "
          "AND m.run IS rm.dst AND m.median_us IS s.median_us AND m.timing = s.timing) ORDER BY s.id",
          "measurements" },
        { "INSERT OR REPLACE INTO main.winners (op, arch, dtype, bucket, hw, dims, lo, hi, shape, template, config, "
          "median_us, gbps, tflops, default_us, margin, exhaustive, runners_up, cubin, launch, device, run) "
          "SELECT s.op, s.arch, s.dtype, s.bucket, s.hw, s.dims, s.lo, s.hi, s.shape, s.template, s.config, s.median_us, "
          "s.gbps, s.tflops, s.default_us, s.margin, s.exhaustive, s.runners_up, s.cubin, s.launch, dm.dst, rm.dst "
          "FROM src.winners s LEFT JOIN temp.devmap dm ON dm.src = s.device LEFT JOIN temp.runmap rm ON rm.src = s.run "
          "WHERE s.hw <> '' AND NOT EXISTS (SELECT 1 FROM main.winners m WHERE m.op = s.op AND m.arch = s.arch "
          "AND m.dtype = s.dtype AND m.bucket = s.bucket AND m.hw = s.hw AND (m.median_us < s.median_us "
          "OR (m.median_us = s.median_us AND m.config <= s.config)))",
          "winners" },
        /* A split bucket's parts beat its unsplit winner of the same
        ** hardware, whichever registry had which: never both. */
        { "DELETE FROM main.winners AS p WHERE instr(p.bucket, '/') = 0 AND EXISTS (SELECT 1 FROM main.winners c "
          "WHERE c.op = p.op AND c.arch = p.arch AND c.dtype = p.dtype AND c.hw = p.hw "
          "AND substr(c.bucket, 1, length(p.bucket) + 1) = p.bucket || '/')",
          "split buckets" },
        { "INSERT OR IGNORE INTO main.defaults (op, arch, dtype, template, config, cubin, launch) "
          "SELECT op, arch, dtype, template, config, cubin, launch FROM src.defaults", "defaults" },
        { "INSERT INTO main.misses (op, arch, dtype, shape, count) SELECT op, arch, dtype, shape, count FROM src.misses "
          "WHERE true ON CONFLICT (op, arch, dtype, shape) DO UPDATE SET count = max(count, excluded.count) "
          "WHERE excluded.count > count",
          "misses" },
        { reg_vendor_merge_sql, "vendor times" },
        { "DROP TABLE temp.devmap", "cleanup" },
        { "DROP TABLE temp.runmap", "cleanup" },
        { "COMMIT", "cannot commit the merge" },
    };
    /* Devices are counted by rows: their trigger's update counts as a change. */
    long long *counts[] = { NULL, NULL, NULL, &st->runs, NULL, &st->cubins, &st->measurements, &st->winners,
                            NULL, NULL, &st->misses, &st->vendor, NULL, NULL, NULL };
    long long ndev0 = reg_count(r, "main.devices");
    int rc = 0;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0] && !rc; i++) {
        char what[96];
        snprintf(what, sizeof what, "cannot merge '%s' (%s)", path, steps[i][1]);
        rc = merge_step(r, steps[i][0], what, counts[i]);
    }
    if (rc) {
        sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_exec(r->db, "DROP TABLE IF EXISTS temp.devmap; DROP TABLE IF EXISTS temp.runmap", NULL, NULL, NULL);
    } else {
        st->devices = reg_count(r, "main.devices") - ndev0;
    }
    sqlite3_exec(r->db, "DETACH DATABASE src", NULL, NULL, NULL);
    merge_drop(copy);
    return rc;
}

int reg_misses_each(reg *r, int (*cb)(const char *op, const char *arch, const char *dtype, const char *shape,
                                      long long calls, void *ctx), void *ctx)
{
    sqlite3_stmt *st = reg_prep(r, "SELECT op, arch, dtype, shape, count FROM misses ORDER BY count DESC, op, dtype, shape");
    if (!st) return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (cb(reg_col_str(st, 0), reg_col_str(st, 1), reg_col_str(st, 2), reg_col_str(st, 3), sqlite3_column_int64(st, 4), ctx)) break;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot read the misses");
}
