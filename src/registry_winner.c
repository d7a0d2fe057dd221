/* registry_winner.c: see registry_winner.h. */
#define _GNU_SOURCE
#include "registry_winner.h"
#include "registry_sql.h"
#include <stdlib.h>
#include <string.h>

static int winner_insert(reg *r, const winner *w)
{
    sqlite3_stmt *st = reg_prep(r, "INSERT OR REPLACE INTO winners (" REG_WINNER_COLS("") ") "
                                   "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!st) return -1;
    reg_bind(st, 1, w->op);
    reg_bind(st, 2, w->arch);
    reg_bind(st, 3, w->dtype);
    reg_bind(st, 4, w->bucket);
    reg_bind(st, 5, w->dims);
    reg_bind(st, 6, w->lo);
    reg_bind(st, 7, w->hi);
    reg_bind(st, 8, w->shape);
    reg_bind(st, 9, w->tmpl);
    reg_bind(st, 10, w->config);
    sqlite3_bind_double(st, 11, w->median_us);
    sqlite3_bind_double(st, 12, w->gbps);
    sqlite3_bind_double(st, 13, w->tflops);
    if (w->default_us > 0) sqlite3_bind_double(st, 14, w->default_us);
    if (w->margin > -1) sqlite3_bind_double(st, 15, w->margin);   /* -1: none */
    sqlite3_bind_int(st, 16, w->exhaustive);
    reg_bind(st, 17, w->runners_up);
    reg_bind(st, 18, w->cubin[0] ? w->cubin : NULL);
    reg_bind(st, 19, w->launch);
    reg_bind_id(st, 20, w->device);
    reg_bind_id(st, 21, w->run);
    return reg_done(r, st, "cannot store a winner");
}

int reg_winners_put(reg *r, const char *home, const winner *w, int n)
{
    if (n < 1) return 0;
    /* Inside a caller's transaction (reg_begin), a savepoint of it. */
    int outer = !sqlite3_get_autocommit(reg_db(r));
    if (reg_exec(r, outer ? "SAVEPOINT winners_put" : "BEGIN IMMEDIATE", "cannot store winners")) return -1;
    sqlite3_stmt *st = reg_prep(r, "DELETE FROM winners WHERE op = ?1 AND arch = ?2 AND dtype = ?3 AND " REG_IN_HOME("bucket", "?4")
                               " AND hw = coalesce((SELECT hw FROM devices WHERE id = ?5), '')");
    int rc = -1;
    if (st) {
        reg_bind_bucket(st, w[0].op, w[0].arch, w[0].dtype, home);
        sqlite3_bind_int64(st, 5, w[0].device);
        rc = reg_done(r, st, "cannot replace a bucket's winners");
    }
    for (int i = 0; i < n && !rc; i++) rc = winner_insert(r, &w[i]);
    if (!rc) rc = reg_exec(r, outer ? "RELEASE winners_put" : "COMMIT", "cannot store winners");
    if (rc) sqlite3_exec(reg_db(r), outer ? "ROLLBACK TO winners_put; RELEASE winners_put" : "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

int reg_winner_put(reg *r, const winner *w)
{
    return reg_winners_put(r, w->bucket, w, 1);
}

/* A row of REG_WINNER_COLS at st into w; config, runners_up and launch
** malloc'd (winner_free). */
static void read_winner(sqlite3_stmt *st, winner *w)
{
    memset(w, 0, sizeof *w);
    reg_col(st, 0, w->op, sizeof w->op);
    reg_col(st, 1, w->arch, sizeof w->arch);
    reg_col(st, 2, w->dtype, sizeof w->dtype);
    reg_col(st, 3, w->bucket, sizeof w->bucket);
    reg_col(st, 4, w->dims, sizeof w->dims);
    reg_col(st, 5, w->lo, sizeof w->lo);
    reg_col(st, 6, w->hi, sizeof w->hi);
    reg_col(st, 7, w->shape, sizeof w->shape);
    reg_col(st, 8, w->tmpl, sizeof w->tmpl);
    w->config = reg_col_dup(st, 9);
    w->median_us = sqlite3_column_double(st, 10);
    w->gbps = sqlite3_column_double(st, 11);
    w->tflops = sqlite3_column_double(st, 12);
    w->default_us = sqlite3_column_double(st, 13);
    w->margin = sqlite3_column_type(st, 14) == SQLITE_NULL ? -1 : sqlite3_column_double(st, 14);
    w->exhaustive = sqlite3_column_int(st, 15);
    w->runners_up = reg_col_dup(st, 16);
    reg_col(st, 17, w->cubin, sizeof w->cubin);
    w->launch = reg_col_dup(st, 18);
    w->device = sqlite3_column_int64(st, 19);
    w->run = sqlite3_column_int64(st, 20);
}

int reg_winner_get(reg *r, const char *op, const char *arch, const char *dtype, const char *bucket, winner *w)
{
    return reg_winner_get_hw(r, op, arch, dtype, bucket, NULL, w);
}

/* hw NULL: no mention of the hw column, which a 0.1 registry read without
** migrating it lacks. */
int reg_winner_get_hw(reg *r, const char *op, const char *arch, const char *dtype, const char *bucket, const char *hw,
                      winner *w)
{
#define WINNER_OF_BUCKET REG_WINNERS_OF(REG_WINNER_COLS("")) " AND bucket = ?4"
    sqlite3_stmt *st = reg_prep(r, hw ? WINNER_OF_BUCKET " AND hw = ?5" : WINNER_OF_BUCKET);
#undef WINNER_OF_BUCKET
    if (!st) return -1;
    reg_bind_bucket(st, op, arch, dtype, bucket);
    if (hw) reg_bind(st, 5, hw);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) read_winner(st, w);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW) return 1;
    return rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot read winners");
}

int reg_winners(reg *r, int (*cb)(const winner *w, void *ctx), void *ctx)
{
    sqlite3_stmt *st = reg_prep(r, "SELECT " REG_WINNER_COLS("") " FROM winners ORDER BY op, arch, dtype, "
                               "CAST(lo AS INTEGER), lo");
    if (!st) return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        winner w;
        read_winner(st, &w);
        int stop = cb(&w, ctx);
        winner_free(&w);
        if (stop) break;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return reg_dbfail(r, "cannot read winners");
    return 0;
}

/* Every row of st (REG_WINNER_COLS) into *out, *n; st finalized. */
static int read_winners(reg *r, sqlite3_stmt *st, winner **out, int *n)
{
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        *out = xrealloc(*out, sizeof **out * (size_t)(*n + 1));
        read_winner(st, &(*out)[(*n)++]);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        for (int i = 0; i < *n; i++) winner_free(&(*out)[i]);
        free(*out);
        *out = NULL;
        *n = 0;
        return reg_dbfail(r, "cannot read winners");
    }
    return 0;
}

int reg_winners_of(reg *r, const char *op, const char *arch, const char *dtype, winner **out, int *n)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st = reg_prep(r, REG_WINNERS_OF(REG_WINNER_COLS("")) " ORDER BY bucket");
    if (!st) return -1;
    reg_bind(st, 1, op);
    reg_bind(st, 2, arch);
    reg_bind(st, 3, dtype);
    return read_winners(r, st, out, n);
}

int reg_winner_family(reg *r, const char *op, const char *arch, const char *dtype, const char *home, const char *hw,
                      winner **out, int *n)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st = reg_prep(r, "SELECT " REG_WINNER_COLS("") " FROM winners w WHERE op = ?1 AND arch = ?2 AND dtype = ?3 AND "
                               REG_IN_HOME("bucket", "?4") " AND (?5 IS NULL OR hw = ?5 OR NOT EXISTS (SELECT 1 FROM winners "
                               "WHERE op = ?1 AND arch = ?2 AND dtype = ?3 AND " REG_IN_HOME("bucket", "?4") " AND hw = ?5)) "
                               "ORDER BY hw, rowid");
    if (!st) return -1;
    reg_bind_bucket(st, op, arch, dtype, home);
    reg_bind(st, 5, hw);
    return read_winners(r, st, out, n);
}

void winner_free(winner *w)
{
    free(w->config);
    free(w->runners_up);
    free(w->launch);
    w->config = w->runners_up = w->launch = NULL;
}

/* A winner's runners-up, as rows: template, config and time. */
#define RUNNERS_UP "SELECT " REG_RUNNER_TEMPLATE ", " REG_RUNNER_CONFIG ", " REG_RUNNER_US

int reg_winner_race(reg *r, const char *op, const char *arch, const char *dtype, const char *bucket,
                    int (*cb)(const char *tmpl, const char *config, double median_us, void *ctx), void *ctx)
{
    sqlite3_stmt *st = reg_prep(r, RUNNERS_UP " FROM winners w, " REG_RUNNERS_UP " WHERE w.op = ? AND w.arch = ? "
                                   "AND w.dtype = ? AND w.bucket = ? AND json_type(f.value) = 'object' ORDER BY 3");
    if (!st) return -1;
    reg_bind_bucket(st, op, arch, dtype, bucket);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 0), *c = (const char *)sqlite3_column_text(st, 1);
        if (cb(t ? t : "?", c ? c : "?", sqlite3_column_double(st, 2), ctx)) break;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot read a winner's race");
}

int reg_winner_identities(reg *r, int (*cb)(const reg_winner_identity *w, void *ctx), void *ctx)
{
    /* Read-only, a registry older than schema 3 is read as it is: no
    ** hardware key, no template sources. */
    int v3 = reg_version(r) >= 3;
    char *sql = xstrfmt(
        "SELECT w.op, w.arch, w.dtype, w.bucket, %s, w.template, w.config, w.median_us, d.driver, d.cuda_driver, "
        "d.nvrtc, ru.version, %s, coalesce(ru.ended, ru.started), "
        "(julianday('now') - julianday(coalesce(ru.ended, ru.started))) * 86400.0, w.exhaustive "
        "FROM winners w LEFT JOIN devices d ON d.id = w.device LEFT JOIN runs ru ON ru.id = w.run "
        "ORDER BY w.op, w.arch, w.dtype, w.bucket%s", v3 ? "w.hw" : "''", v3 ? "ru.sources" : "NULL", v3 ? ", w.hw" : "");
    sqlite3_stmt *st = reg_prep(r, sql);
    free(sql);
    if (!st) return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        reg_winner_identity w = {
            .op = reg_col_str(st, 0), .arch = reg_col_str(st, 1), .dtype = reg_col_str(st, 2), .bucket = reg_col_str(st, 3),
            .hw = reg_col_str(st, 4), .tmpl = reg_col_str(st, 5), .config = reg_col_str(st, 6),
            .median_us = sqlite3_column_double(st, 7), .driver = reg_col_str(st, 8),
            .cuda_driver = sqlite3_column_int(st, 9), .nvrtc = reg_col_str(st, 10), .version = reg_col_str(st, 11),
            .sources = reg_col_str(st, 12), .when = reg_col_str(st, 13),
            .age_s = sqlite3_column_type(st, 14) == SQLITE_NULL ? -1 : sqlite3_column_double(st, 14),
            .exhaustive = sqlite3_column_int(st, 15),
        };
        if (cb(&w, ctx)) break;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot read the winners");
}

/* The winner row of a bucket, as w: hw's when there is one, else the
** fastest of any hardware. bind_winner binds its five parameters; a
** statement's own come after them. */
#define WINNER_W "WITH w AS (SELECT * FROM winners WHERE op = ? AND arch = ? AND dtype = ? AND bucket = ? " \
                 "ORDER BY hw = ? DESC, median_us LIMIT 1) "

static void bind_winner(sqlite3_stmt *st, const char *op, const char *arch, const char *dtype, const char *bucket,
                        const char *hw)
{
    reg_bind_bucket(st, op, arch, dtype, bucket);
    reg_bind(st, 5, hw);
}

int reg_winner_finalists(reg *r, const char *op, const char *arch, const char *dtype, const char *bucket,
                         const char *hw, int (*cb)(const char *tmpl, const char *config, double median_us, void *ctx),
                         void *ctx)
{
    sqlite3_stmt *st = reg_prep(r, WINNER_W
        "SELECT template, config, median_us, 0 FROM w UNION ALL "
        RUNNERS_UP ", 1 FROM w, " REG_RUNNERS_UP " WHERE json_type(f.value) = 'object' ORDER BY 4, 3");
    if (!st) return -1;
    bind_winner(st, op, arch, dtype, bucket, hw);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (cb(reg_col_str(st, 0), reg_col_str(st, 1), sqlite3_column_double(st, 2), ctx)) break;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot read a winner's finalists");
}

int reg_winner_stream(reg *r, const char *op, const char *arch, const char *dtype, const char *bucket,
                      const char *hw)
{
    if (reg_version(r) < 4) return 0;
    sqlite3_stmt *st = reg_prep(r, WINNER_W
        "SELECT " TIMING_ID_SQL("m.timing") " FROM measurements m, w WHERE m.op = w.op AND m.arch = w.arch AND m.dtype = w.dtype "
        "AND m.bucket = w.bucket AND m.template = w.template AND m.config = w.config AND m.status = 'ok' "
        "ORDER BY m.run IS w.run DESC, m.id DESC LIMIT 1");
    if (!st) return -2;
    bind_winner(st, op, arch, dtype, bucket, hw);
    int rc = sqlite3_step(st), v = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        reg_dbfail(r, "cannot read how a winner was timed");
        return -2;
    }
    return v;
}

/* ---- defaults ---- */

int reg_default_put(reg *r, const char *op, const char *arch, const char *dtype,
                    const char *tmpl, const char *config, const char *cubin, const char *launch)
{
    /* Without a kernel, one stored for the same template and config stays;
    ** and a default that has its kernel is not replaced by another that has
    ** none (a task restricted to a template whose default cannot run at its
    ** shapes would otherwise leave the runtime no default to launch). */
    sqlite3_stmt *st = reg_prep(r, "INSERT INTO defaults (op, arch, dtype, template, config, cubin, launch) VALUES (?,?,?,?,?,?,?) "
        "ON CONFLICT (op, arch, dtype) DO UPDATE SET "
        "cubin = CASE WHEN excluded.cubin IS NULL AND template = excluded.template AND config = excluded.config "
        "THEN cubin ELSE excluded.cubin END, "
        "launch = CASE WHEN excluded.cubin IS NULL AND template = excluded.template AND config = excluded.config "
        "THEN launch ELSE excluded.launch END, "
        "template = excluded.template, config = excluded.config "
        "WHERE excluded.cubin IS NOT NULL OR defaults.cubin IS NULL OR "
        "(defaults.template = excluded.template AND defaults.config = excluded.config)");
    if (!st) return -1;
    reg_bind(st, 1, op);
    reg_bind(st, 2, arch);
    reg_bind(st, 3, dtype);
    reg_bind(st, 4, tmpl);
    reg_bind(st, 5, config);
    reg_bind(st, 6, cubin && *cubin ? cubin : NULL);
    reg_bind(st, 7, launch);
    return reg_done(r, st, "cannot store a default");
}

int reg_archs_of(reg *r, const char *op, const char *dtype, char *out, int cap)
{
    sqlite3_stmt *st = reg_prep(r, "SELECT arch FROM winners WHERE op = ?1 AND dtype = ?2 UNION "
                               "SELECT arch FROM defaults WHERE op = ?1 AND dtype = ?2");
    if (!st) return -1;
    reg_bind(st, 1, op);
    reg_bind(st, 2, dtype);
    int n = 0, rc, at = 0;
    out[0] = 0;
    char seen[512] = ",";
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        char a[16], key[20];
        const unsigned char *s = sqlite3_column_text(st, 0);
        arch_base(s ? (const char *)s : "", a);
        snprintf(key, sizeof key, ",%s,", a);
        if (!a[0] || strstr(seen, key)) continue;
        snprintf(seen + strlen(seen), sizeof seen - strlen(seen), "%s,", a);
        at += snprintf(out + at, (size_t)(cap > at ? cap - at : 0), "%s%s", n ? "," : "", a);
        n++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return reg_dbfail(r, "cannot read winners");
    return n;
}

int reg_default_get(reg *r, const char *op, const char *arch, const char *dtype,
                    char *tmpl, int tmplcap, char **config)
{
    *config = NULL;
    sqlite3_stmt *st = reg_prep(r, "SELECT template, config FROM defaults WHERE op = ?1 AND " ARCH_IN_SQL("arch", "?2") " AND dtype = ?3");
    if (!st) return -1;
    reg_bind(st, 1, op);
    reg_bind(st, 2, arch);
    reg_bind(st, 3, dtype);
    int rc = sqlite3_step(st), found = 0;
    if (rc == SQLITE_ROW && sqlite3_column_text(st, 0) && sqlite3_column_text(st, 1)) {
        reg_col(st, 0, tmpl, (size_t)tmplcap);
        *config = reg_col_dup(st, 1);
        found = 1;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return reg_dbfail(r, "cannot read defaults");
    return found;
}
