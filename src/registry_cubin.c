/* registry_cubin.c: see registry_cubin.h. */
#define _GNU_SOURCE
#include "registry_cubin.h"
#include "registry_sql.h"
#include <stdlib.h>
#include <string.h>

int reg_cubin_get(reg *r, const char *hash, jit_job *j)
{
    if (reg_version(r) < 7) return 0;   /* read-only, older than 014-cubin-hash: no hashes to check */
    sqlite3_stmt *st = reg_prep(r, "SELECT source, kernel, cubin, registers, spills, smem, stack, log, compile_ms, "
                               "options, cubin_hash FROM cubins WHERE hash = ?");
    if (!st) return -1;
    reg_bind(st, 1, hash);
    int rc = sqlite3_step(st), found = 0;
    if (rc == SQLITE_ROW) {
        const char *src = (const char *)sqlite3_column_text(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const char *opts = (const char *)sqlite3_column_text(st, 9);
        const char *sum = (const char *)sqlite3_column_text(st, 10);
        const void *blob = sqlite3_column_blob(st, 2);
        size_t len = (size_t)sqlite3_column_bytes(st, 2);
        /* Same hash, different text: a collision; a row whose key is not its
        ** own text's, or whose bytes are not the ones stored with it: damaged
        ** or rewritten. Each is compiled rather than trusted. */
        char key[17] = "", bytes[17] = "";
        if (src && name && opts) jit_key_options(src, name, opts, key);
        if (blob) jit_hash(blob, len, bytes);
        if (src && name && !strcmp(src, j->source) && !strcmp(name, j->name) && !strcmp(key, hash) && sum && blob &&
            !strcmp(sum, bytes)) {
            j->cubin_len = len;
            j->cubin = xmalloc(j->cubin_len);
            memcpy(j->cubin, blob, j->cubin_len);
            j->registers = sqlite3_column_int(st, 3);
            j->spills = sqlite3_column_int(st, 4);
            j->smem = sqlite3_column_int(st, 5);
            j->stack = sqlite3_column_int(st, 6);
            j->log = reg_col_dup(st, 7);
            j->ms = sqlite3_column_double(st, 8);
            j->ok = 1;
            j->done = 1;
            found = 1;
        }
    } else if (rc != SQLITE_DONE) {
        sqlite3_finalize(st);
        return reg_dbfail(r, "cannot read the cubin cache");
    }
    sqlite3_finalize(st);
    return found;
}

int reg_cubin_put(reg *r, const char *hash, const jit_job *j)
{
    char sum[17];
    jit_hash(j->cubin, j->cubin_len, sum);
    sqlite3_stmt *st = reg_prep(r, "INSERT OR REPLACE INTO cubins (hash, source, options, kernel, cubin, registers, "
                               "spills, smem, stack, log, compile_ms, cubin_hash) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!st) return -1;
    reg_bind(st, 1, hash);
    reg_bind(st, 2, j->source);
    reg_bind(st, 3, jit_options(j->arch));
    reg_bind(st, 4, j->name);
    sqlite3_bind_blob(st, 5, j->cubin, (int)j->cubin_len, SQLITE_STATIC);
    sqlite3_bind_int(st, 6, j->registers);
    sqlite3_bind_int(st, 7, j->spills);
    sqlite3_bind_int(st, 8, j->smem);
    sqlite3_bind_int(st, 9, j->stack);
    reg_bind(st, 10, j->log);
    sqlite3_bind_double(st, 11, j->ms);
    reg_bind(st, 12, sum);
    return reg_done(r, st, "cannot store a cubin");
}

int reg_cubin_source(reg *r, const char *hash, char **source, char *name, int namecap)
{
    sqlite3_stmt *st = reg_prep(r, "SELECT source, kernel FROM cubins WHERE hash = ?");
    if (!st) return -1;
    reg_bind(st, 1, hash);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *source = reg_col_dup(st, 0);
        reg_col(st, 1, name, (size_t)namecap);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW) return 1;
    return rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot read the cubin cache");
}

/* A measurement m of winner w's bucket: the bucket's own, or a part's
** home's (spec.h, bucket_split), where a part's search measured. */
#define IN_WINNER_BUCKET "m.op = w.op AND m.arch = w.arch AND m.dtype = w.dtype AND (m.bucket = w.bucket OR " \
                         "m.bucket = " REG_HOME("w.bucket") ")"
/* The measurements m of each winner w's finalists (its runners_up). */
#define FINALISTS "winners w JOIN " REG_RUNNERS_UP " JOIN measurements m ON " IN_WINNER_BUCKET " " \
                  "AND m.template = " REG_RUNNER_TEMPLATE " AND m.config = " REG_RUNNER_CONFIG

/* The kernels a registry keeps whatever else goes: each winner's and each
** default's, and those of every winner's finalists, which retune races
** again without compiling. */
#define KEPT_CUBINS \
    "SELECT cubin FROM winners WHERE cubin IS NOT NULL " \
    "UNION SELECT cubin FROM defaults WHERE cubin IS NOT NULL " \
    "UNION SELECT m.cubin FROM " FINALISTS " WHERE m.cubin IS NOT NULL"

int reg_cubin_trim(reg *r, long long run, const char *except_op, const char *except_dtype, reg_trim_stats *st)
{
    /* One statement, so a kill leaves the cache as it was or trimmed. The
    ** kernels of buckets with no winner (one being tuned, here or by
    ** another process) are the resume's and stay; a split bucket's winners
    ** are its parts', and a part searched for a bucket that stayed whole
    ** (a split on trial: sweep_split.h) has its home's. */
#define DECIDES "(m.bucket = w.bucket OR m.bucket = " REG_HOME("w.bucket") " OR " REG_HOME("m.bucket") " = w.bucket)"
    sqlite3_stmt *s = reg_prep(r,
        "DELETE FROM cubins WHERE hash IN (SELECT m.cubin FROM measurements m JOIN winners w ON m.op = w.op "
        "  AND m.arch = w.arch AND m.dtype = w.dtype AND " DECIDES " "
        "  WHERE w.run = ?1 AND m.cubin IS NOT NULL AND (?2 IS NULL OR m.op <> ?2 OR m.dtype <> ?3)) "
        "AND hash NOT IN (" KEPT_CUBINS ") "
        "AND hash NOT IN (SELECT m.cubin FROM measurements m WHERE m.cubin IS NOT NULL AND NOT EXISTS "
        "  (SELECT 1 FROM winners w WHERE m.op = w.op AND m.arch = w.arch AND m.dtype = w.dtype AND " DECIDES ")) "
        "RETURNING length(cubin) + length(source) + coalesce(length(log), 0)");
#undef DECIDES
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, run);
    reg_bind(s, 2, except_op);
    reg_bind(s, 3, except_dtype);
    int rc;
    long long n = 0, bytes = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        n++;
        bytes += sqlite3_column_int64(s, 0);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return reg_dbfail(r, "cannot trim the cubin cache");
    st->cubins += n;
    st->bytes += bytes;
    /* The freed pages leave the file (a registry made before auto_vacuum
    ** keeps them for reuse until `aitune gc`). */
    if (n && reg_exec(r, "PRAGMA incremental_vacuum", "cannot shrink the file")) return -1;
    return 0;
}

int reg_gc(reg *r, int keep_finalists, reg_gc_stats *s)
{
    memset(s, 0, sizeof *s);
    s->measurements[0] = reg_count(r, "measurements");
    s->cubins[0] = reg_count(r, "cubins");
    s->bytes[0] = reg_disk_bytes(r, 0);
    /* A measurement is kept when it is a winner's config in the winner's
    ** bucket, a part's home or the part (or, with keep_finalists, one named
    ** in its runners_up); a cubin when a winner, a default or a kept
    ** measurement names it. */
    char *keep = xstrfmt("CREATE TEMP TABLE gc_keep AS SELECT m.id AS id FROM measurements m JOIN winners w ON "
                         IN_WINNER_BUCKET " AND m.template = w.template AND m.config = w.config%s",
                         keep_finalists ? " UNION SELECT m.id FROM " FINALISTS : "");
    int rc = reg_exec(r, "BEGIN IMMEDIATE", "gc") || reg_exec(r, "DROP TABLE IF EXISTS temp.gc_keep", "gc") ||
             reg_exec(r, keep, "gc: choosing what to keep") ||
             reg_exec(r, "DELETE FROM measurements WHERE id NOT IN (SELECT id FROM temp.gc_keep)", "gc: measurements") ||
             reg_exec(r, "DELETE FROM cubins WHERE hash NOT IN (SELECT cubin FROM winners WHERE cubin IS NOT NULL) "
                     "AND hash NOT IN (SELECT cubin FROM defaults WHERE cubin IS NOT NULL) "
                     "AND hash NOT IN (SELECT cubin FROM measurements WHERE cubin IS NOT NULL)", "gc: cubins") ||
             reg_exec(r, "DROP TABLE temp.gc_keep", "gc") || reg_exec(r, "COMMIT", "gc");
    free(keep);
    if (rc) {
        sqlite3_exec(reg_db(r), "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    /* VACUUM also turns on incremental auto-vacuum in a registry made
    ** before it, so later sweeps give back the pages they free. */
    if (reg_exec(r, "PRAGMA auto_vacuum = INCREMENTAL", "gc") || reg_exec(r, "VACUUM", "gc: vacuum") ||
        reg_exec(r, "PRAGMA wal_checkpoint(TRUNCATE)", "gc: checkpoint"))
        return -1;
    s->measurements[1] = reg_count(r, "measurements");
    s->cubins[1] = reg_count(r, "cubins");
    s->bytes[1] = reg_disk_bytes(r, 0);
    return 0;
}
