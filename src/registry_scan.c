/* registry_scan.c: see registry_scan.h. */
#define _GNU_SOURCE
#include "registry_scan.h"
#include "registry_sql.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COLS "op, arch, dtype, shape, hw, timing, level, bucket, template, config, status, median_us, vendor_us, " \
             "best_us, hole, error, device, run"

/* Schema 6 has the table; an older registry opened read-only does not. */
static int has_table(reg *r) { return reg_version(r) >= 6; }

/* Text, or NULL for an empty string (a scan's row without an answer). */
static void text(sqlite3_stmt *st, int i, const char *s) { reg_bind(st, i, s && *s ? s : NULL); }

static void num(sqlite3_stmt *st, int i, double v)
{
    if (v > 0) sqlite3_bind_double(st, i, v);
    else sqlite3_bind_null(st, i);
}

int reg_scan_put(reg *r, const reg_scan *s)
{
    if (!has_table(r)) return reg_fail(r, "has no scans table (schema %d): open it for writing", reg_version(r));
    sqlite3_stmt *st = reg_prep(r, "INSERT OR REPLACE INTO scans (" COLS ") VALUES (?1, ?2, ?3, ?4, "
                               "coalesce((SELECT hw FROM devices WHERE id = ?17), ?5), ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
                               "?13, ?14, ?15, ?16, ?17, ?18)");
    if (!st) return -1;
    text(st, 1, s->op);
    text(st, 2, s->arch);
    text(st, 3, s->dtype);
    text(st, 4, s->shape);
    sqlite3_bind_text(st, 5, s->hw, -1, SQLITE_TRANSIENT);
    text(st, 6, timing_name(s->stream));
    text(st, 7, s->level);
    text(st, 8, s->bucket);
    text(st, 9, s->tmpl);
    text(st, 10, s->config);
    text(st, 11, s->status);
    num(st, 12, s->median_us);
    num(st, 13, s->vendor_us);
    num(st, 14, s->best_us);
    sqlite3_bind_int(st, 15, s->hole);
    text(st, 16, s->error);
    reg_bind_id(st, 17, s->device);
    reg_bind_id(st, 18, s->run);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot store a scan's row");
}

int reg_scan_best(reg *r, const char *op, const char *arch, const char *dtype, const char *shape, const char *hw,
                  int stream, double *us)
{
    *us = 0;
    sqlite3_stmt *st = reg_prep(r, "SELECT min(m.median_us) FROM measurements m JOIN devices d ON d.id = m.device "
                               "WHERE m.op = ?1 AND m.arch = ?2 AND m.dtype = ?3 AND m.shape = ?4 AND d.hw = ?5 "
                               "AND m.timing = ?6 AND m.status = 'ok' AND m.median_us > 0");
    if (!st) return -1;
    text(st, 1, op);
    text(st, 2, arch);
    text(st, 3, dtype);
    text(st, 4, shape);
    sqlite3_bind_text(st, 5, hw, -1, SQLITE_TRANSIENT);
    text(st, 6, timing_name(stream));
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) *us = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot read measurements");
}

int reg_scan_each(reg *r, const char *op, int (*cb)(const reg_scan *s, void *ctx), void *ctx)
{
    if (!has_table(r)) return 0;
    sqlite3_stmt *st = reg_prep(r, "SELECT " COLS " FROM scans WHERE ?1 IS NULL OR op = ?1 ORDER BY op, dtype, hw, timing, "
                               "shape");
    if (!st) return -1;
    text(st, 1, op);
    int rc, stop = 0;
    while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        reg_scan s;
        memset(&s, 0, sizeof s);
        reg_col(st, 0, s.op, sizeof s.op);
        reg_col(st, 1, s.arch, sizeof s.arch);
        reg_col(st, 2, s.dtype, sizeof s.dtype);
        reg_col(st, 3, s.shape, sizeof s.shape);
        reg_col(st, 4, s.hw, sizeof s.hw);
        const unsigned char *t = sqlite3_column_text(st, 5);
        s.stream = timing_of((const char *)t);
        reg_col(st, 6, s.level, sizeof s.level);
        reg_col(st, 7, s.bucket, sizeof s.bucket);
        reg_col(st, 8, s.tmpl, sizeof s.tmpl);
        const unsigned char *cfg = sqlite3_column_text(st, 9);
        s.config = (char *)(cfg ? (const char *)cfg : "");
        reg_col(st, 10, s.status, sizeof s.status);
        s.median_us = sqlite3_column_double(st, 11);
        s.vendor_us = sqlite3_column_double(st, 12);
        s.best_us = sqlite3_column_double(st, 13);
        s.hole = sqlite3_column_int(st, 14);
        reg_col(st, 15, s.error, sizeof s.error);
        s.device = sqlite3_column_int64(st, 16);
        s.run = sqlite3_column_int64(st, 17);
        stop = cb(&s, ctx);
    }
    int bad = !stop && rc != SQLITE_DONE;
    sqlite3_finalize(st);
    return bad ? reg_dbfail(r, "cannot read scans") : 0;
}
