/* registry.c: see registry.h. */
#define _GNU_SOURCE
#include "registry_sql.h"
#include "dbguard.h"
#include "plan.h"
#include <errno.h>
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
    /* Messages quote what a registry holds (a shard's values, SQLite's
    ** report of a damaged schema, which spans lines): a refusal stays one
    ** line, without a terminal escape. */
    printable_inplace(r->err, sizeof r->err);
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

/* Write the schema version v into meta. */
static int set_version(reg *r, int v, const char *what)
{
    char sql[128];
    snprintf(sql, sizeof sql, "INSERT OR REPLACE INTO meta VALUES ('schema_version', '%d')", v);
    return reg_exec(r, sql, what);
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
            if (reg_exec(r, reg_schema_sql, "cannot create the schema") ||
                set_version(r, REG_SCHEMA_VERSION, "cannot write the schema version"))
                return -1;
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
            char what[64];
            snprintf(what, sizeof what, "cannot migrate it to schema %d", v);
            if (reg_exec(r, reg_migration_sql[v], what) || set_version(r, v, what)) {
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

/* ---- devices and runs ---- */

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

int reg_begin(reg *r) { return reg_exec(r, "BEGIN IMMEDIATE", "cannot lock it to write"); }
int reg_commit(reg *r) { return reg_exec(r, "COMMIT", "cannot commit"); }
void reg_rollback(reg *r) { sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL); }

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

int reg_run_last(reg *r, long long *id)
{
    sqlite3_stmt *st = reg_prep(r, "SELECT coalesce(max(id), 0) FROM runs");
    if (!st) return -1;
    int rc = sqlite3_step(st);
    *id = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : reg_dbfail(r, "read the newest run");
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

int reg_run_sources(reg *r, long long run, const char *json)
{
    sqlite3_stmt *st = reg_prep(r, "UPDATE runs SET sources = ? WHERE id = ?");
    if (!st) return -1;
    reg_bind(st, 1, json);
    sqlite3_bind_int64(st, 2, run);
    return reg_done(r, st, "cannot record the run's template sources");
}

/* ---- what a registry holds ---- */

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
