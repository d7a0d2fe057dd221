/* registry_export.c: see registry_export.h. */
#define _GNU_SOURCE
#include "registry_export.h"
#include "registry_sql.h"
#include <stdlib.h>
#include <string.h>

/* The tables a JSON or text export reads: each row as a JSON object, as
** text columns, in what order, and whether it has an op to select by. */
static const struct export_table {
    const char *name, *json, *text, *order;
    int has_op;
} export_tables[] = {
    { "measurements",
      "json_object('id', id, 'op', op, 'template', template, 'arch', arch, 'dtype', dtype, 'bucket', bucket, "
      "'shape', " REG_SQL_JSON("shape") ", 'config', " REG_SQL_JSON("config") ", 'config_hash', config_hash, 'status', status, "
      "'median_us', " REG_SQL_FIN("median_us") ", 'min_us', " REG_SQL_FIN("min_us") ", 'max_us', " REG_SQL_FIN("max_us") ", "
      "'spread', " REG_SQL_FIN("spread") ", 'samples', " REG_SQL_FIN("samples") ", 'gbps', " REG_SQL_FIN("gbps") ", "
      "'tflops', " REG_SQL_FIN("tflops") ", 'registers', " REG_SQL_FIN("registers") ", 'spills', " REG_SQL_FIN("spills") ", "
      "'smem', " REG_SQL_FIN("smem") ", 'compile_ms', " REG_SQL_FIN("compile_ms") ", 'cubin', cubin, 'error', error, "
      "'device', " REG_SQL_FIN("device") ", 'run', " REG_SQL_FIN("run") ")",
      "id, " REG_MEASURE_COLS(""),
      "id", 1 },
    { "winners",
      "json_object('op', op, 'arch', arch, 'dtype', dtype, 'bucket', bucket, 'dims', dims, 'lo', lo, 'hi', hi, "
      "'shape', " REG_SQL_JSON("shape") ", 'template', template, 'config', " REG_SQL_JSON("config") ", "
      "'median_us', " REG_SQL_FIN("median_us") ", 'gbps', " REG_SQL_FIN("gbps") ", 'tflops', " REG_SQL_FIN("tflops") ", "
      "'default_us', " REG_SQL_FIN("default_us") ", 'margin', " REG_SQL_FIN("margin") ", 'exhaustive', " REG_SQL_FIN("exhaustive") ", "
      "'runners_up', " REG_SQL_JSON("runners_up") ", 'cubin', cubin, 'launch', " REG_SQL_JSON("launch") ", "
      "'device', " REG_SQL_FIN("device") ", 'run', " REG_SQL_FIN("run") ")",
      REG_WINNER_COLS(""),
      "op, arch, dtype, rowid", 1 },
    { "runs",
      "json_object('id', id, 'command', command, 'spec_hash', spec_hash, 'version', version, 'seed', " REG_SQL_FIN("seed") ", "
      "'device', " REG_SQL_FIN("device") ", 'env', " REG_SQL_JSON("env") ", 'started', started, 'ended', ended, 'outcome', outcome)",
      "id, command, spec_hash, version, seed, device, env, started, ended, outcome", "id", 0 },
    { "devices",
      "json_object('id', id, 'name', name, 'uuid', uuid, 'cc', " REG_SQL_FIN("cc") ", 'sms', " REG_SQL_FIN("sms") ", "
      "'mem_bytes', " REG_SQL_FIN("mem_bytes") ", 'l2_bytes', " REG_SQL_FIN("l2_bytes") ", 'smem_optin', " REG_SQL_FIN("smem_optin") ", "
      "'driver', driver, 'cuda_driver', " REG_SQL_FIN("cuda_driver") ", 'nvrtc', nvrtc)",
      "id, name, uuid, cc, sms, mem_bytes, l2_bytes, smem_optin, driver, cuda_driver, nvrtc", "id", 0 },
};

static const struct export_table *export_table(reg *r, const char *name)
{
    for (size_t i = 0; i < sizeof export_tables / sizeof export_tables[0]; i++)
        if (!strcmp(export_tables[i].name, name)) return &export_tables[i];
    reg_fail(r, "no table '%s' to export", name);
    return NULL;
}

static sqlite3_stmt *export_stmt(reg *r, const struct export_table *t, const char *cols, const char *op)
{
    char *sql = xstrfmt("SELECT %s FROM %s%s ORDER BY %s", cols, t->name, t->has_op ? " WHERE ?1 IS NULL OR op = ?1" : "",
                        t->order);
    sqlite3_stmt *st = reg_prep(r, sql);
    free(sql);
    if (st && t->has_op) reg_bind(st, 1, op);
    return st;
}

int reg_json_rows(reg *r, const char *table, const char *op, int (*cb)(const char *json, void *ctx), void *ctx)
{
    const struct export_table *t = export_table(r, table);
    sqlite3_stmt *st = t ? export_stmt(r, t, t->json, op) : NULL;
    if (!st) return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (cb((const char *)sqlite3_column_text(st, 0), ctx)) break;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot read the registry");
}

int reg_text_rows(reg *r, const char *table, const char *op,
                  int (*cb)(int ncols, const char *const *names, const char *const *values, void *ctx), void *ctx)
{
    const struct export_table *t = export_table(r, table);
    sqlite3_stmt *st = t ? export_stmt(r, t, t->text, op) : NULL;
    if (!st) return -1;
    int n = sqlite3_column_count(st), rc;
    const char **names = xcalloc((size_t)n, sizeof *names), **values = xcalloc((size_t)n, sizeof *values);
    for (int i = 0; i < n; i++) names[i] = sqlite3_column_name(st, i);
    rc = cb(n, names, NULL, ctx) ? SQLITE_DONE : SQLITE_ROW;
    while (rc == SQLITE_ROW && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < n; i++) values[i] = (const char *)sqlite3_column_text(st, i);
        if (cb(n, names, values, ctx)) break;
    }
    sqlite3_finalize(st);
    free(names);
    free(values);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot read the registry");
}

int reg_t4_rows(reg *r, const char *op, const char *dtype, int (*cb)(const char *json, void *ctx), void *ctx)
{
    /* Kernel Tuner's units: milliseconds. A failure has no time. */
    sqlite3_stmt *st = reg_prep(r,
        "SELECT json_object('timestamp', coalesce(r.started, ''), "
        "'configuration', CASE WHEN json_valid(m.config) THEN json(m.config) ELSE json_object() END, "
        "'times', json_object('compilation_time', " REG_SQL_FIN("coalesce(m.compile_ms, 0)") ", 'runtimes', "
        "  CASE WHEN m.status = 'ok' THEN json_array(" REG_SQL_FIN("m.median_us / 1000.0") ") ELSE json_array() END), "
        "'invalidity', CASE m.status WHEN 'ok' THEN 'correct' WHEN 'compile' THEN 'compile' WHEN 'runtime' THEN 'runtime' "
        "  WHEN 'timeout' THEN 'timeout' WHEN 'wrong' THEN 'correctness' WHEN 'constraint' THEN 'constraints' "
        "  ELSE 'runtime' END, "
        "'correctness', CASE WHEN m.status = 'ok' THEN 1 ELSE 0 END, "
        "'measurements', CASE WHEN m.status = 'ok' THEN json_array("
        "  json_object('name', 'time', 'value', " REG_SQL_FIN("m.median_us / 1000.0") ", 'unit', 'ms'), "
        "  json_object('name', 'min_time', 'value', " REG_SQL_FIN("m.min_us / 1000.0") ", 'unit', 'ms'), "
        "  json_object('name', 'max_time', 'value', " REG_SQL_FIN("m.max_us / 1000.0") ", 'unit', 'ms'), "
        "  json_object('name', 'GB/s', 'value', " REG_SQL_FIN("coalesce(m.gbps, 0)") ", 'unit', 'GB/s'), "
        "  json_object('name', 'TFLOP/s', 'value', " REG_SQL_FIN("coalesce(m.tflops, 0)") ", 'unit', 'TFLOP/s')) ELSE json_array() END, "
        "'objectives', json_array('time'), "
        "'aitune', json_object('op', m.op, 'template', m.template, 'arch', m.arch, 'dtype', m.dtype, "
        "  'bucket', m.bucket, 'shape', " REG_SQL_JSON("m.shape") ", 'status', m.status, 'error', m.error, "
        "  'registers', " REG_SQL_FIN("m.registers") ", 'spills', " REG_SQL_FIN("m.spills") ", 'device', d.name)) "
        "FROM measurements m LEFT JOIN runs r ON r.id = m.run LEFT JOIN devices d ON d.id = m.device "
        "WHERE (?1 IS NULL OR m.op = ?1) AND (?2 IS NULL OR m.dtype = ?2) ORDER BY m.id");
    if (!st) return -1;
    reg_bind(st, 1, op);
    reg_bind(st, 2, dtype);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (cb((const char *)sqlite3_column_text(st, 0), ctx)) break;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot read measurements");
}

int reg_t4_parse(reg *r, const char *text, int (*cb)(const t4_result *res, void *ctx), void *ctx)
{
    sqlite3_stmt *st = reg_prep(r, "SELECT json_valid(?1), CASE WHEN json_valid(?1) THEN json_type(?1, '$.results') END");
    if (!st) return -1;
    sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    int valid = rc == SQLITE_ROW && sqlite3_column_int(st, 0);
    const char *type = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 1) : NULL;
    int arr = type && !strcmp(type, "array");
    sqlite3_finalize(st);
    if (!valid) return reg_fail(r, "not JSON");
    if (!arr) return reg_fail(r, "no \"results\" array (not a T4 results file)");
    /* Each field read where T4 puts it; a missing one is NULL. */
    st = reg_prep(r,
        "SELECT f.key, json_type(f.value) = 'object', "
        "CASE WHEN json_type(f.value, '$.configuration') = 'object' THEN json(json_extract(f.value, '$.configuration')) END, "
        "CASE WHEN json_type(f.value, '$.invalidity') = 'text' THEN json_extract(f.value, '$.invalidity') END, "
        "(SELECT json_extract(m.value, '$.value') FROM json_each(f.value, '$.measurements') m "
        "  WHERE json_type(m.value) = 'object' AND json_extract(m.value, '$.name') = 'time' "
        "  AND json_type(m.value, '$.value') IN ('real', 'integer') LIMIT 1), "
        "(SELECT json_extract(m.value, '$.unit') FROM json_each(f.value, '$.measurements') m "
        "  WHERE json_type(m.value) = 'object' AND json_extract(m.value, '$.name') = 'time' LIMIT 1), "
        "(SELECT avg(t.value) FROM json_each(f.value, '$.times.runtimes') t WHERE t.type IN ('real', 'integer')), "
        "(SELECT min(t.value) FROM json_each(f.value, '$.times.runtimes') t WHERE t.type IN ('real', 'integer')), "
        "(SELECT max(t.value) FROM json_each(f.value, '$.times.runtimes') t WHERE t.type IN ('real', 'integer')), "
        "CASE WHEN json_type(f.value, '$.times.compilation_time') IN ('real', 'integer') "
        "  THEN json_extract(f.value, '$.times.compilation_time') END, "
        "json_extract(f.value, '$.timestamp'), "
        "json_extract(f.value, '$.aitune.op'), json_extract(f.value, '$.aitune.template'), "
        "json_extract(f.value, '$.aitune.arch'), json_extract(f.value, '$.aitune.dtype'), "
        "json_extract(f.value, '$.aitune.bucket'), "
        "CASE WHEN json_type(f.value, '$.aitune.shape') = 'object' THEN json(json_extract(f.value, '$.aitune.shape')) END, "
        "json_extract(f.value, '$.aitune.error') "
        "FROM json_each(?1, '$.results') f WHERE json_type(f.value) IS NOT NULL ORDER BY f.key");
    if (!st) return -1;
    sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        t4_result t;
        memset(&t, 0, sizeof t);
        const char *s5 = (const char *)sqlite3_column_text(st, 5);
        t.index = sqlite3_column_int(st, 0);
        t.is_object = sqlite3_column_int(st, 1);
        t.configuration = (const char *)sqlite3_column_text(st, 2);
        t.invalidity = (const char *)sqlite3_column_text(st, 3);
        t.time = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_double(st, 4);
        t.time_unit = s5 ? s5 : "ms";
        if (t.time < 0 && sqlite3_column_type(st, 6) != SQLITE_NULL) t.time = sqlite3_column_double(st, 6);
        t.min_time = sqlite3_column_type(st, 7) == SQLITE_NULL ? t.time : sqlite3_column_double(st, 7);
        t.max_time = sqlite3_column_type(st, 8) == SQLITE_NULL ? t.time : sqlite3_column_double(st, 8);
        t.compile_ms = sqlite3_column_type(st, 9) == SQLITE_NULL ? -1 : sqlite3_column_double(st, 9);
        t.timestamp = (const char *)sqlite3_column_text(st, 10);
        t.op = (const char *)sqlite3_column_text(st, 11);
        t.tmpl = (const char *)sqlite3_column_text(st, 12);
        t.arch = (const char *)sqlite3_column_text(st, 13);
        t.dtype = (const char *)sqlite3_column_text(st, 14);
        t.bucket = (const char *)sqlite3_column_text(st, 15);
        t.shape = (const char *)sqlite3_column_text(st, 16);
        t.error = (const char *)sqlite3_column_text(st, 17);
        if (cb(&t, ctx)) break;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : reg_dbfail(r, "cannot read the T4 results");
}
