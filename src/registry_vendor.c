/* registry_vendor.c: see registry_vendor.h. */
#define _GNU_SOURCE
#include "registry_vendor.h"
#include "registry_sql.h"
#include "plan.h"
#include "tmpl.h"
#include "vendor.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COLS "op, arch, dtype, bucket, shape, hw, timing, library, algo, status, median_us, min_us, max_us, spread, " \
             "samples, error, device, run"

const char reg_vendor_merge_sql[] =
    "INSERT OR IGNORE INTO main.vendor_times (" COLS ") "
    "SELECT s.op, s.arch, s.dtype, s.bucket, s.shape, s.hw, s.timing, s.library, s.algo, s.status, s.median_us, "
    "s.min_us, s.max_us, s.spread, s.samples, s.error, dm.dst, rm.dst FROM src.vendor_times s "
    "LEFT JOIN temp.devmap dm ON dm.src = s.device LEFT JOIN temp.runmap rm ON rm.src = s.run ORDER BY s.rowid";

/* Schema 5 has the table; an older registry opened read-only does not. */
static int has_table(reg *r) { return reg_version(r) >= 5; }

/* The columns of COLS into v. */
static void row(sqlite3_stmt *st, reg_vendor *v)
{
    memset(v, 0, sizeof *v);
    reg_col(st, 0, v->op, sizeof v->op);
    reg_col(st, 1, v->arch, sizeof v->arch);
    reg_col(st, 2, v->dtype, sizeof v->dtype);
    reg_col(st, 3, v->bucket, sizeof v->bucket);
    reg_col(st, 4, v->shape, sizeof v->shape);
    reg_col(st, 5, v->hw, sizeof v->hw);
    const unsigned char *t = sqlite3_column_text(st, 6);
    v->stream = timing_of((const char *)t);
    reg_col(st, 7, v->library, sizeof v->library);
    reg_col(st, 8, v->algo, sizeof v->algo);
    reg_col(st, 9, v->status, sizeof v->status);
    v->median_us = sqlite3_column_double(st, 10);
    v->min_us = sqlite3_column_double(st, 11);
    v->max_us = sqlite3_column_double(st, 12);
    v->spread = sqlite3_column_double(st, 13);
    v->samples = sqlite3_column_int(st, 14);
    reg_col(st, 15, v->error, sizeof v->error);
    v->device = sqlite3_column_int64(st, 16);
    v->run = sqlite3_column_int64(st, 17);
}

int reg_vendor_put(reg *r, const reg_vendor *v)
{
    if (!has_table(r)) return reg_fail(r, "has no vendor_times table (schema %d): open it for writing", reg_version(r));
    sqlite3_stmt *st = reg_prep(r, "INSERT OR REPLACE INTO vendor_times (" COLS ") VALUES (?1, ?2, ?3, ?4, ?5, "
                               "coalesce((SELECT hw FROM devices WHERE id = ?17), ''), ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
                               "?14, ?15, ?16, ?17, ?18)");
    if (!st) return -1;
    reg_bind(st, 1, v->op);
    reg_bind(st, 2, v->arch);
    reg_bind(st, 3, v->dtype);
    reg_bind(st, 4, v->bucket);
    reg_bind(st, 5, v->shape);
    reg_bind(st, 7, timing_name(v->stream));
    reg_bind(st, 8, v->library);
    reg_bind(st, 9, v->algo[0] ? v->algo : NULL);
    reg_bind(st, 10, v->status);
    int ok = !strcmp(v->status, "ok");
    double nums[] = { v->median_us, v->min_us, v->max_us, v->spread };
    for (int i = 0; i < 4; i++) {
        if (ok) sqlite3_bind_double(st, 11 + i, nums[i]);
        else sqlite3_bind_null(st, 11 + i);
    }
    if (ok) sqlite3_bind_int(st, 15, v->samples);
    else sqlite3_bind_null(st, 15);
    reg_bind(st, 16, v->error[0] ? v->error : NULL);
    reg_bind_id(st, 17, v->device);
    reg_bind_id(st, 18, v->run);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot store the vendor's time");
}

int reg_vendor_get(reg *r, const char *op, const char *arch, const char *dtype, const char *shape, int stream,
                   long long device, reg_vendor *out)
{
    if (!has_table(r)) return 0;
    sqlite3_stmt *st = reg_prep(r, "SELECT " COLS " FROM vendor_times WHERE op = ?1 AND arch = ?2 AND dtype = ?3 "
                               "AND shape = ?4 AND timing = ?5 AND hw = coalesce((SELECT hw FROM devices WHERE id = ?6), '') "
                               "ORDER BY rowid DESC LIMIT 1");
    if (!st) return -1;
    reg_bind(st, 1, op);
    reg_bind(st, 2, arch);
    reg_bind(st, 3, dtype);
    reg_bind(st, 4, shape);
    reg_bind(st, 5, timing_name(stream));
    sqlite3_bind_int64(st, 6, device);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) row(st, out);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW) return 1;
    return rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot read the vendor's times");
}

int reg_vendor_for_winner(reg *r, const winner *w, double *us)
{
    if (!has_table(r)) return 0;
    /* The winner's timing: its newest ok measurement's (its own run's
    ** first), as reg_winner_stream reads it; a vendor winner's is its row's. */
    sqlite3_stmt *st = reg_prep(r,
        "WITH t AS (SELECT m.timing FROM measurements m WHERE m.op = ?1 AND m.arch = ?2 AND m.dtype = ?3 "
        "AND m.bucket = " REG_HOME("?4") " AND m.template = ?6 AND m.config = ?7 AND m.status = 'ok' "
        "ORDER BY m.run IS ?8 DESC, m.id DESC LIMIT 1) "
        "SELECT v.median_us FROM vendor_times v WHERE v.op = ?1 AND v.arch = ?2 AND v.dtype = ?3 AND v.shape = ?5 "
        "AND v.status = 'ok' AND v.median_us > 0 AND (?9 IS NULL OR v.hw = (SELECT hw FROM devices WHERE id = ?9)) "
        "ORDER BY v.timing IS (SELECT timing FROM t) DESC, v.rowid DESC LIMIT 1");
    if (!st) return -1;
    reg_bind(st, 1, w->op);
    reg_bind(st, 2, w->arch);
    reg_bind(st, 3, w->dtype);
    reg_bind(st, 4, w->bucket);
    reg_bind(st, 5, w->shape);
    reg_bind(st, 6, w->tmpl);
    reg_bind(st, 7, w->config);
    reg_bind_id(st, 8, w->run);
    reg_bind_id(st, 9, w->device);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *us = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW) return 1;
    return rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot read the vendor's times");
}

int reg_vendor_each(reg *r, const char *op, const char *arch, const char *dtype, const char *home,
                    int (*cb)(const reg_vendor *v, void *ctx), void *ctx)
{
    if (!has_table(r)) return 0;
    sqlite3_stmt *st = reg_prep(r, "SELECT " COLS " FROM vendor_times WHERE op = ?1 AND arch = ?2 AND dtype = ?3 "
                               "AND (?4 IS NULL OR " REG_IN_HOME("bucket", "?4") ") "
                               "ORDER BY bucket, shape, timing, hw");
    if (!st) return -1;
    reg_bind(st, 1, op);
    reg_bind(st, 2, arch);
    reg_bind(st, 3, dtype);
    reg_bind(st, 4, home);
    int rc;
    reg_vendor v;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        row(st, &v);
        if (cb(&v, ctx)) break;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot read the vendor's times");
}

int reg_vendor_winners(reg *r, const char *op, long long *n)
{
    *n = 0;
    sqlite3_stmt *st = reg_prep(r, "SELECT count(*) FROM winners WHERE template = ?1 AND (?2 IS NULL OR op = ?2)");
    if (!st) return -1;
    reg_bind(st, 1, VENDOR_TEMPLATE);
    reg_bind(st, 2, op);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : reg_dbfail(r, "cannot count the vendor's winners");
}

static sqlite3_stmt *export_stmt(reg *r, const char *cols, const char *op)
{
    char *sql = xstrfmt("SELECT %s FROM vendor_times WHERE ?1 IS NULL OR op = ?1 ORDER BY rowid", cols);
    sqlite3_stmt *st = reg_prep(r, sql);
    free(sql);
    if (st) reg_bind(st, 1, op);
    return st;
}

int reg_vendor_json_rows(reg *r, const char *op, int (*cb)(const char *json, void *ctx), void *ctx)
{
    if (!has_table(r)) return 0;
    sqlite3_stmt *st = export_stmt(r,
        "json_object('op', op, 'arch', arch, 'dtype', dtype, 'bucket', bucket, 'shape', " REG_SQL_JSON("shape") ", "
        "'hw', hw, 'timing', timing, 'library', library, "
        "'algo', algo, 'status', status, 'median_us', " REG_SQL_FIN("median_us") ", 'min_us', " REG_SQL_FIN("min_us")
        ", 'max_us', " REG_SQL_FIN("max_us") ", 'spread', " REG_SQL_FIN("spread") ", "
        "'samples', samples, 'error', error, 'device', device, 'run', run)", op);
    if (!st) return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (cb((const char *)sqlite3_column_text(st, 0), ctx)) break;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot read the vendor's times");
}

int reg_vendor_text_rows(reg *r, const char *op,
                         int (*cb)(int ncols, const char *const *names, const char *const *values, void *ctx), void *ctx)
{
    static const char *const names[] = { "op", "arch", "dtype", "bucket", "shape", "hw", "timing", "library", "algo",
                                         "status", "median_us", "min_us", "max_us", "spread", "samples", "error",
                                         "device", "run" };
    enum { N = sizeof names / sizeof names[0] };
    /* The header first, as reg_text_rows: an empty export still says what
    ** its columns are. */
    if (cb(N, names, NULL, ctx) || !has_table(r)) return 0;
    sqlite3_stmt *st = export_stmt(r, COLS, op);
    if (!st) return -1;
    const char *values[N];
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < N; i++) values[i] = (const char *)sqlite3_column_text(st, i);
        if (cb(N, names, values, ctx)) break;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot read the vendor's times");
}

char *reg_vendor_plan(const op_task *t, char *err, int errcap)
{
    if (vendor_kind(t->op, t->dtype) < 0) {
        snprintf(err, (size_t)errcap, "the vendor serves no %s %s", t->op, t->dtype);
        return NULL;
    }
    plan *p = plan_new();
    char *json = NULL;
    if (!p) {
        snprintf(err, (size_t)errcap, "out of memory");
        return NULL;
    }
    snprintf(p->kernel, sizeof p->kernel, "%s", VENDOR_KERNEL);
    p->ndims = t->ndims;
    for (int i = 0; i < t->ndims; i++) snprintf(p->dims[i], sizeof p->dims[i], "%s", t->dims[i]);
    p->nargs = t->nargs;
    for (int i = 0; i < t->nargs; i++) {
        plan_arg *a = &p->args[i];
        snprintf(a->name, sizeof a->name, "%s", t->args[i].name);
        a->role = t->args[i].role;   /* enum arg_role and enum plan_role agree */
        if (a->role <= ROLE_INOUT) {
            snprintf(a->dtype, sizeof a->dtype, "%s", t->args[i].dtype);
            a->esize = t->args[i].esize;
        }
    }
    char ws[32];
    snprintf(ws, sizeof ws, "%llu", (unsigned long long)VENDOR_WORKSPACE);
    int bad = 0;
    for (int i = 0; i < 3 && !bad; i++)
        bad = plan_set(&p->grid[i], "1") || plan_set(&p->block[i], "1") || plan_set(&p->cluster[i], "1");
    if (bad || plan_set(&p->smem, "0")) snprintf(err, (size_t)errcap, "out of memory"), bad = 1;
    if (!bad && plan_default_params(p, ws, err, errcap)) bad = 1;
    if (!bad && plan_set(&p->params[p->nparams - 1].zero, "0")) snprintf(err, (size_t)errcap, "out of memory"), bad = 1;
    if (!bad) json = plan_encode(p, err, errcap);
    plan_free(p);
    return json;
}
