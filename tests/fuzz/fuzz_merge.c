/* fuzz_merge.c: libFuzzer harness for `aitune merge` (registry_merge.c:
** reg_merge), whose inputs are shards written on other machines: the
** fuzzer rewrites the shard, the output is a small registry of this aitune.
**
** Two kinds of input (rows as in fuzz_db.h):
** - a database file ("SQLite format 3" first): the shard is these bytes;
** - lines, each a row of a fresh shard whose tables lack NOT NULL (this schema):
**     w|op|arch|dtype|bucket|hw|dims|lo|hi|shape|template|config|median_us|runners_up|cubin|launch|device|run
**     m|op|template|arch|dtype|bucket|shape|config|config_hash|status|median_us|min_us|max_us|device|run|timing
**     c|hash|source|options|kernel|cubin|cubin_hash
**     d|op|arch|dtype|template|config|cubin|launch
**     x|op|arch|dtype|shape|count
**     v|id|name|uuid|cc|sms|mem_bytes|l2_bytes|smem_optin|driver|cuda_driver|nvrtc|hw|toolchain
**     r|id|command|version|seed|device|started|ended|outcome
**     k|key|value   (meta)
** What must hold:
** - reg_merge returns 0, or -1 with one line saying why; the shard file is
**   never written;
** - a refused shard leaves the output as it was;
** - a merged one leaves an output that passes integrity_check, whose
**   winners have finite positive times and bucket keys aitune writes, and
**   no winner beside its own parts of one hardware;
** - merging the same shard again succeeds and changes nothing. */
#define _GNU_SOURCE
#include "fuzz_db.h"
#include "registry_merge.h"
#include "spec.h"
#include "util.h"
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char out_path[128];
static unsigned char *base;     /* the output before each merge, as bytes */
static size_t base_len;

static void raw(const char *path, const char *sql)
{
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK || sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
        fprintf(stderr, "fuzz_merge: %s\n", sqlite3_errmsg(db));
        abort();
    }
    sqlite3_close(db);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fdb_setup("merge", REG_SCHEMA_VERSION);
    snprintf(out_path, sizeof out_path, "%s/out.db", fdb_dir());
    /* The output: a registry of this aitune with one device, run and
    ** winner, whose bucket a shard's parts could replace. */
    unlink(out_path);
    reg *r;
    if (reg_open(out_path, 0, &r)) abort();
    reg_close(r);
    raw(out_path,
        "INSERT INTO devices (id, name, uuid, cc, sms, mem_bytes, l2_bytes, smem_optin, driver, cuda_driver, nvrtc) "
        "VALUES (1, 'Fake GPU', 'GPU-0', 90, 132, 85899345920, 52428800, 232448, 'fake', 13000, '13.0');"
        "INSERT INTO runs (id, command, version, seed, device, started, ended, outcome) "
        "VALUES (1, 'aitune sweep s.yaml', '0.1.0', 1, 1, '2026-01-01T00:00:00Z', '2026-01-01T00:01:00Z', 'ok');"
        "INSERT INTO winners (op, arch, dtype, bucket, dims, lo, hi, shape, template, config, median_us, launch, "
        "device, run) VALUES ('axpy', 'sm_90', 'f32', 'n=2^6', 'n', '64', '128', '{\"n\":64}', 'axpy/vec', "
        "'{\"block\":64}', 9.5, '{}', 1, 1);"
        "INSERT INTO measurements (op, template, arch, dtype, bucket, shape, config, config_hash, status, median_us, "
        "device, run) VALUES ('axpy', 'axpy/vec', 'sm_90', 'f32', 'n=2^6', '{\"n\":64}', '{\"block\":64}', "
        "'0123456789abcdef', 'ok', 9.5, 1, 1);"
        "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;");
    base = (unsigned char *)read_regular_file(out_path, 1 << 24, &base_len);
    if (!base) abort();
    return 0;
}

static const struct { char tag; int ncols; const char *sql; } kinds[] = {
    { 'w', 17, "INSERT INTO winners (op, arch, dtype, bucket, hw, dims, lo, hi, shape, template, config, median_us, "
               "runners_up, cubin, launch, device, run) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)" },
    { 'm', 15, "INSERT INTO measurements (op, template, arch, dtype, bucket, shape, config, config_hash, status, "
               "median_us, min_us, max_us, device, run, timing) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)" },
    { 'c', 6, "INSERT INTO cubins (hash, source, options, kernel, cubin, cubin_hash) VALUES (?,?,?,?,?,?)" },
    { 'd', 7, "INSERT INTO defaults (op, arch, dtype, template, config, cubin, launch) VALUES (?,?,?,?,?,?,?)" },
    { 'x', 5, "INSERT INTO misses (op, arch, dtype, shape, count) VALUES (?,?,?,?,?)" },
    { 'v', 13, "INSERT INTO devices (id, name, uuid, cc, sms, mem_bytes, l2_bytes, smem_optin, driver, cuda_driver, "
               "nvrtc, hw, toolchain) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)" },
    { 'r', 8, "INSERT INTO runs (id, command, version, seed, device, started, ended, outcome) VALUES (?,?,?,?,?,?,?,?)" },
    { 'k', 2, "INSERT OR REPLACE INTO meta (key, value) VALUES (?,?)" },
};
#define NKINDS (int)(sizeof kinds / sizeof kinds[0])

static void load_rows(const char *text, size_t size)
{
    sqlite3 *db = fdb_begin();
    sqlite3_stmt *st[NKINDS];
    for (int k = 0; k < NKINDS; k++)
        if (sqlite3_prepare_v2(db, kinds[k].sql, -1, &st[k], NULL) != SQLITE_OK) {
            fprintf(stderr, "fuzz_merge: %s\n", sqlite3_errmsg(db));
            abort();
        }
    const char *end = text + size;
    for (const char *line = text; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *le = nl ? nl : end;
        for (int k = 0; k < NKINDS; k++) {
            if (le - line < 2 || line[0] != kinds[k].tag || line[1] != '|') continue;
            const char *f[FDB_MAXFIELDS];
            size_t n[FDB_MAXFIELDS];
            int nf = fdb_fields(line + 2, le, f, n, kinds[k].ncols);
            for (int i = 1; i <= kinds[k].ncols; i++) {
                if (i <= nf) fdb_bind(st[k], i, f[i - 1], n[i - 1]);
                else sqlite3_bind_null(st[k], i);
            }
            sqlite3_step(st[k]);
            sqlite3_reset(st[k]);
            sqlite3_clear_bindings(st[k]);
        }
        line = le + 1;
    }
    for (int k = 0; k < NKINDS; k++) sqlite3_finalize(st[k]);
    fdb_end(db);
}

/* The output's content, as one string (caller frees). */
static char *dump(void)
{
    sqlite3 *db;
    if (sqlite3_open_v2(out_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) abort();
    sqlite3_stmt *st;
    static const char sql[] =
        "SELECT coalesce((SELECT group_concat(x, ';') FROM (SELECT op || ',' || arch || ',' || dtype || ',' || bucket "
        "|| ',' || hw || ',' || template || ',' || config || ',' || quote(median_us) AS x FROM winners ORDER BY x)), '')"
        " || '|' || (SELECT count(*) FROM measurements) || '|' || (SELECT count(*) FROM cubins) || '|' || "
        "(SELECT count(*) FROM runs) || '|' || (SELECT count(*) FROM devices) || '|' || (SELECT count(*) FROM defaults)"
        " || '|' || coalesce((SELECT group_concat(x, ';') FROM (SELECT op || shape || count AS x FROM misses ORDER BY x)), '')";
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW) {
        fprintf(stderr, "fuzz_merge: cannot read the output: %s\n", sqlite3_errmsg(db));
        abort();
    }
    char *s = xstrdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return s;
}

/* What a merged output must be. */
static void check_output(void)
{
    sqlite3 *db;
    if (sqlite3_open_v2(out_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) abort();
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW ||
        strcmp((const char *)sqlite3_column_text(st, 0), "ok")) {
        fprintf(stderr, "fuzz_merge: the output fails integrity_check\n");
        abort();
    }
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(db, "SELECT bucket, median_us, typeof(median_us) FROM winners", -1, &st, NULL) != SQLITE_OK)
        abort();
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *b = (const char *)sqlite3_column_text(st, 0);
        double t = sqlite3_column_double(st, 1);
        bucket_parsed k;
        char why[128];
        if (!b || bucket_key_parse(b, &k, why, sizeof why) || !(t > 0) || !isfinite(t) ||
            strcmp((const char *)sqlite3_column_text(st, 2), "real") && strcmp((const char *)sqlite3_column_text(st, 2), "integer")) {
            fprintf(stderr, "fuzz_merge: merged a winner %s at %g\n", b ? b : "(null)", t);
            abort();
        }
    }
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM winners p WHERE instr(p.bucket, '/') = 0 AND EXISTS (SELECT 1 FROM "
                               "winners c WHERE c.op = p.op AND c.arch = p.arch AND c.dtype = p.dtype AND c.hw = p.hw "
                               "AND substr(c.bucket, 1, length(p.bucket) + 1) = p.bucket || '/')", -1, &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) == SQLITE_ROW) {
        fprintf(stderr, "fuzz_merge: a winner beside its own parts\n");
        abort();
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static int merge_once(char **msg)
{
    reg *r;
    if (reg_open(out_path, 0, &r)) {
        fprintf(stderr, "fuzz_merge: the output does not open: %s\n", reg_errmsg(r));
        abort();
    }
    reg_merge_stats st = { 0 };
    int rc = reg_merge(r, fdb_path(), &st);
    *msg = xstrdup(reg_errmsg(r));
    reg_close(r);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fdb_is_file(data, size)) fdb_put(data, size);
    else load_rows((const char *)data, size);
    size_t shard_len;
    char *shard = read_regular_file(fdb_path(), 1 << 26, &shard_len);
    if (!shard) abort();
    /* The output afresh, and nothing of the last one's WAL beside it. */
    char side[160];
    snprintf(side, sizeof side, "%s-wal", out_path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", out_path);
    unlink(side);
    FILE *f = fopen(out_path, "wb");
    if (!f || fwrite(base, 1, base_len, f) != base_len) abort();
    fclose(f);
    char *before = dump(), *msg;
    int rc = merge_once(&msg);
    if (rc) {
        if (rc != -1 && rc != REG_NOTWRITABLE) abort();
        if (!msg[0] || strchr(msg, '\n')) { fprintf(stderr, "fuzz_merge: a refusal without one line: [%s]\n", msg); abort(); }
        char *after = dump();
        if (strcmp(before, after)) { fprintf(stderr, "fuzz_merge: a refused shard changed the output\n"); abort(); }
        free(after);
    } else {
        check_output();
        char *once = dump(), *msg2;
        int rc2 = merge_once(&msg2);
        char *twice = dump();
        if (rc2 || strcmp(once, twice)) {
            fprintf(stderr, "fuzz_merge: merging again: %d %s\n  %s\n  %s\n", rc2, msg2, once, twice);
            abort();
        }
        free(once);
        free(twice);
        free(msg2);
    }
    size_t now_len;
    char *now = read_regular_file(fdb_path(), 1 << 26, &now_len);
    if (!now || now_len != shard_len || memcmp(now, shard, shard_len)) {
        fprintf(stderr, "fuzz_merge: the shard was written\n");
        abort();
    }
    free(now);
    free(shard);
    free(before);
    free(msg);
    return 0;
}
