/* registry_measure.c: see registry_measure.h. Every query reads its rows
** through one column list (registry_sql.h: REG_MEASURE_COLS) and one row
** reader (measure_row); a task's key is bound one way (bind_key). */
#define _GNU_SOURCE
#include "registry_measure.h"
#include "registry_sql.h"
#include <stdlib.h>
#include <string.h>

/* How a row was timed, the column after REG_MEASURE_COLS that measure_row
** reads (1: a stream). A registry older than schema 4 has no timing column
** (read-only, so not migrated): it timed everything after a flush. */
#define STREAM(t) TIMING_ID_SQL(t "timing")
#define STREAM_V3 "0"
#define ROW(t) REG_MEASURE_COLS(t) ", " STREAM(t)

/* The row of ROW (or REG_MEASURE_COLS and STREAM_V3) at st into m; config
** and error malloc'd. */
static void measure_row(sqlite3_stmt *st, measurement *m)
{
    memset(m, 0, sizeof *m);
    reg_col(st, 0, m->op, sizeof m->op);
    reg_col(st, 1, m->tmpl, sizeof m->tmpl);
    reg_col(st, 2, m->arch, sizeof m->arch);
    reg_col(st, 3, m->dtype, sizeof m->dtype);
    reg_col(st, 4, m->bucket, sizeof m->bucket);
    reg_col(st, 5, m->shape, sizeof m->shape);
    m->config = reg_col_dup(st, 6);
    reg_col(st, 7, m->config_hash, sizeof m->config_hash);
    reg_col(st, 8, m->status, sizeof m->status);
    m->median_us = sqlite3_column_double(st, 9);
    m->min_us = sqlite3_column_double(st, 10);
    m->max_us = sqlite3_column_double(st, 11);
    m->spread = sqlite3_column_double(st, 12);
    m->samples = sqlite3_column_int(st, 13);
    m->gbps = sqlite3_column_double(st, 14);
    m->tflops = sqlite3_column_double(st, 15);
    m->registers = sqlite3_column_int(st, 16);
    m->spills = sqlite3_column_int(st, 17);
    m->smem = sqlite3_column_int(st, 18);
    m->compile_ms = sqlite3_column_double(st, 19);
    reg_col(st, 20, m->cubin, sizeof m->cubin);
    m->error = reg_col_dup(st, 21);
    m->device = sqlite3_column_int64(st, 22);
    m->run = sqlite3_column_int64(st, 23);
    m->stream = sqlite3_column_int(st, 24);
}

void measurement_free(measurement *m)
{
    free(m->config);
    free(m->error);
    m->config = m->error = NULL;
}

int reg_measure_put(reg *r, const measurement *m)
{
    sqlite3_stmt *st = reg_prep(r, "INSERT INTO measurements (" REG_MEASURE_COLS("") ", timing) "
                                   "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!st) return -1;
    int ok = !strcmp(m->status, "ok");
    reg_bind(st, 1, m->op);
    reg_bind(st, 2, m->tmpl);
    reg_bind(st, 3, m->arch);
    reg_bind(st, 4, m->dtype);
    reg_bind(st, 5, m->bucket);
    reg_bind(st, 6, m->shape);
    reg_bind(st, 7, m->config);
    reg_bind(st, 8, m->config_hash);
    reg_bind(st, 9, m->status);
    if (ok) {
        sqlite3_bind_double(st, 10, m->median_us);
        sqlite3_bind_double(st, 11, m->min_us);
        sqlite3_bind_double(st, 12, m->max_us);
        sqlite3_bind_double(st, 13, m->spread);
        sqlite3_bind_int(st, 14, m->samples);
        sqlite3_bind_double(st, 15, m->gbps);
        sqlite3_bind_double(st, 16, m->tflops);
    }
    if (m->cubin[0]) {
        sqlite3_bind_int(st, 17, m->registers);
        sqlite3_bind_int(st, 18, m->spills);
        sqlite3_bind_int(st, 19, m->smem);
        sqlite3_bind_double(st, 20, m->compile_ms);
        reg_bind(st, 21, m->cubin);
    }
    reg_bind(st, 22, m->error);
    reg_bind_id(st, 23, m->device);
    reg_bind_id(st, 24, m->run);
    reg_bind(st, 25, timing_name(m->stream));
    return reg_done(r, st, "cannot store a measurement");
}

/* The measurements a sweep on device row p may take as its own: that row's,
** and those of every GPU with the same hardware and toolchain identity (the
** other H200s of the host, a sweep on several GPUs: a bucket a killed run
** measured on GPU 0 resumes on GPU 1). */
#define SAME_GPU(p) "(device IS " p " OR device IN (SELECT o.id FROM devices o JOIN devices d ON o.hw = d.hw " \
                    "AND o.toolchain = d.toolchain WHERE d.id = " p "))"
/* A task's rows: parameters 1 to 7 (bind_key). */
#define KEY_ROWS "op = ?1 AND arch = ?2 AND dtype = ?3 AND bucket = ?4 AND shape = ?5 AND " SAME_GPU("?6") \
                 " AND timing = ?7"

static void bind_key(sqlite3_stmt *st, const measurement *k)
{
    reg_bind_bucket(st, k->op, k->arch, k->dtype, k->bucket);
    reg_bind(st, 5, k->shape);
    reg_bind_id(st, 6, k->device);
    reg_bind(st, 7, timing_name(k->stream));
}

int reg_measure_find(reg *r, const measurement *k, measurement *m)
{
    sqlite3_stmt *st = reg_prep(r, "SELECT " ROW("") " FROM measurements WHERE " KEY_ROWS " AND config_hash = ?8 "
                                   "AND template = ?9 ORDER BY id DESC LIMIT 1");
    if (!st) return -1;
    bind_key(st, k);
    reg_bind(st, 8, k->config_hash);
    reg_bind(st, 9, k->tmpl);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        /* The key's identity stays: the config as the caller spells it,
        ** and the device and run it measures in now (the row's may be a
        ** twin's and an earlier run's). */
        measure_row(st, m);
        free(m->config);
        m->config = xstrdup(k->config);
        m->device = k->device;
        m->run = k->run;
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW) return 1;
    return rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot read measurements");
}

int reg_measure_best(reg *r, const measurement *key, int n, measurement *out)
{
    /* With one min() in the query, SQLite takes a group's bare columns from
    ** the row that holds the minimum: each config's fastest row. */
    sqlite3_stmt *st = reg_prep(r, "SELECT " ROW("") " FROM measurements WHERE " KEY_ROWS " AND status = 'ok' "
                                   "AND median_us > 0 GROUP BY template, config_hash ORDER BY MIN(median_us) LIMIT ?8");
    if (!st) return -1;
    bind_key(st, key);
    sqlite3_bind_int(st, 8, n);
    int k = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && k < n) measure_row(st, &out[k++]);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        for (int i = 0; i < k; i++) measurement_free(&out[i]);
        return reg_dbfail(r, "cannot read measurements");
    }
    return k;
}

/* Each row of st (ROW) to cb, freed after; returns 0 or cb's stop. */
static int each_row(reg *r, sqlite3_stmt *st, int (*cb)(const measurement *m, void *ctx), void *ctx)
{
    int rc, stop = 0;
    while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        measurement m;
        measure_row(st, &m);
        if (!m.config) m.config = xstrdup("");
        stop = cb(&m, ctx);
        measurement_free(&m);
    }
    sqlite3_finalize(st);
    return stop || rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot read measurements");
}

int reg_measure_each(reg *r, const char *op, int (*cb)(const measurement *m, void *ctx), void *ctx)
{
    /* The newest row per config; tasks in the order the sweep first met them.
    ** From schema 4 on, a task's rows are those timed the way its newest
    ** measurement was (flush, stream or neighbour): one landscape never mixes methods. */
    /* KEY: more of a config's identity; NEWEST, JOIN: keep a task's rows
    ** of its newest measurement's method only. */
#define EACH_ROWS(COLS, KEY, NEWEST, JOIN) \
    "SELECT " COLS " FROM measurements m " \
    "JOIN (SELECT MAX(id) AS last FROM measurements WHERE ?1 IS NULL OR op = ?1 " \
    "      GROUP BY op, template, arch, dtype, bucket, config_hash" KEY ") k ON m.id = k.last " \
    "JOIN (SELECT op, template, arch, dtype, bucket, MIN(id) AS first" NEWEST " FROM measurements " \
    "      GROUP BY op, template, arch, dtype, bucket) t " \
    "  ON t.op = m.op AND t.template = m.template AND t.arch = m.arch AND t.dtype = m.dtype " \
    "  AND t.bucket = m.bucket " JOIN \
    "ORDER BY m.op, m.arch, m.dtype, m.template, t.first, m.id"
    sqlite3_stmt *st = reg_prep(r, reg_version(r) >= 4
        ? EACH_ROWS(ROW("m."), ", timing", ", MAX(id) AS newest",
                    "JOIN measurements n ON n.id = t.newest AND n.timing = m.timing ")
        : EACH_ROWS(REG_MEASURE_COLS("m.") ", " STREAM_V3, "", "", ""));
#undef EACH_ROWS
    if (!st) return -1;
    reg_bind(st, 1, op);
    return each_row(r, st, cb, ctx);
}

int reg_buckets(reg *r, const char *op, const char *arch, const char *dtype,
                int (*cb)(const char *arch, const char *bucket, void *ctx), void *ctx)
{
    /* In the order the sweep visited them: their first measurement. */
    sqlite3_stmt *st = reg_prep(r, "SELECT arch, bucket FROM (SELECT arch, bucket, min(rowid) AS first FROM measurements "
                               "WHERE op = ?1 AND dtype = ?2 AND (?3 IS NULL OR arch = ?3) GROUP BY arch, bucket "
                               "UNION ALL SELECT arch, bucket, 1e18 FROM winners WHERE op = ?1 AND dtype = ?2 "
                               "AND (?3 IS NULL OR arch = ?3)) GROUP BY arch, bucket ORDER BY arch, min(first)");
    if (!st) return -1;
    reg_bind(st, 1, op);
    reg_bind(st, 2, dtype);
    reg_bind(st, 3, arch);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (cb((const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1), ctx)) break;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot read measurements");
}

int reg_bucket_measurements(reg *r, const char *op, const char *arch, const char *dtype, const char *bucket,
                            int (*cb)(const measurement *m, void *ctx), void *ctx)
{
#define BUCKET_ROWS(COLS) \
    "SELECT " COLS " FROM measurements WHERE op = ?1 AND arch = ?2 AND dtype = ?3 AND bucket = " REG_HOME("?4") \
    " ORDER BY status <> 'ok', CASE WHEN status = 'ok' THEN median_us END, status, id"
    sqlite3_stmt *st = reg_prep(r, reg_version(r) >= 4 ? BUCKET_ROWS(ROW("")) :
                                   BUCKET_ROWS(REG_MEASURE_COLS("") ", " STREAM_V3));
#undef BUCKET_ROWS
    if (!st) return -1;
    reg_bind_bucket(st, op, arch, dtype, bucket);
    return each_row(r, st, cb, ctx);
}

int reg_bucket_history(reg *r, const char *op, const char *arch, const char *dtype, const char *bucket,
                       int (*cb)(const char *status, double median_us, void *ctx), void *ctx)
{
    sqlite3_stmt *st = reg_prep(r, "SELECT status, median_us FROM measurements WHERE op = ?1 AND arch = ?2 AND dtype = ?3 "
                               "AND bucket = " REG_HOME("?4") " ORDER BY id");
    if (!st) return -1;
    reg_bind_bucket(st, op, arch, dtype, bucket);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *s = (const char *)sqlite3_column_text(st, 0);
        if (cb(s ? s : "", sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_double(st, 1), ctx)) break;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot read measurements");
}

double reg_seconds_per_measurement(reg *r)
{
    sqlite3_stmt *st = reg_prep(r, "SELECT sum((julianday(ended) - julianday(started)) * 86400.0), "
                               "(SELECT count(*) FROM measurements WHERE run IN (SELECT id FROM runs WHERE ended IS NOT NULL)) "
                               "FROM runs WHERE ended IS NOT NULL");
    if (!st) return 0;
    double s = 0;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 1) > 0)
        s = sqlite3_column_double(st, 0) / (double)sqlite3_column_int64(st, 1);
    sqlite3_finalize(st);
    return s;
}
