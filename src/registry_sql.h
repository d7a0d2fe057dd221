/* registry_sql.h: what the registry's modules (registry*.c) share to speak
** SQL to one registry, and its users need not see: preparing, running,
** binding and reading statements, with a failure said on the handle
** (registry.h: reg_errmsg), and the SQL that several modules spell. The
** commands use the modules' own headers (registry_measure.h, ...).
**
** Calls that return int return 0, or -1 with the message set: "registry
** 'PATH': what: SQLite's reason", or that the statement ran past its work
** bound (reg_bound). reg_prep returns NULL so. */
#ifndef REGISTRY_SQL_H
#define REGISTRY_SQL_H
#include "names.h"
#include "registry.h"
#include <sqlite3.h>

/* The handle's connection, and setting its message ("registry 'PATH': ...";
** returns -1). reg_dbfail: "what: " and SQLite's last error, or the bound. */
sqlite3 *reg_db(reg *r);
int reg_fail(reg *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int reg_dbfail(reg *r, const char *what);

/* Run sql (one or more statements, no rows wanted). */
int reg_exec(reg *r, const char *sql, const char *what);
sqlite3_stmt *reg_prep(reg *r, const char *sql);
/* Step a prepared write to its end and finalize it. */
int reg_done(reg *r, sqlite3_stmt *st, const char *what);
/* How many rows table has; -1 when it cannot be read. */
long long reg_count(reg *r, const char *table);

/* Parameter i: text s (NULL: SQL NULL); a row id (0 or less: NULL); a
** bucket's key as parameters 1 to 4 (op, arch, dtype, bucket). */
void reg_bind(sqlite3_stmt *st, int i, const char *s);
void reg_bind_id(sqlite3_stmt *st, int i, long long id);
void reg_bind_bucket(sqlite3_stmt *st, const char *op, const char *arch, const char *dtype, const char *bucket);

/* Column i as text: copied into dst (NULL: ""), malloc'd (NULL: NULL), or
** as SQLite holds it until the next step (NULL: ""). */
void reg_col(sqlite3_stmt *st, int i, char *dst, size_t cap);
char *reg_col_dup(sqlite3_stmt *st, int i);
const char *reg_col_str(sqlite3_stmt *st, int i);

/* The measurements' columns, each table's row as registry_measure.c reads
** it, every column named after prefix t ("" or "m."): what a candidate
** is and how it went (REG_MEASURE_DATA), then where and when (device, run).
** The timing column is apart: a registry older than schema 4 has none. */
#define REG_MEASURE_DATA(t) t "op, " t "template, " t "arch, " t "dtype, " t "bucket, " t "shape, " t "config, " \
    t "config_hash, " t "status, " t "median_us, " t "min_us, " t "max_us, " t "spread, " t "samples, " t "gbps, " \
    t "tflops, " t "registers, " t "spills, " t "smem, " t "compile_ms, " t "cubin, " t "error"
#define REG_MEASURE_COLS(t) REG_MEASURE_DATA(t) ", " t "device, " t "run"

/* The home of a bucket column in SQL (names.h: a part's key is its home's,
** BUCKET_PART and its lower corner): where a part's measurements are. */
#define REG_HOME(col) "CASE WHEN instr(" col ", " BUCKET_PART_SQL ") > 0 THEN substr(" col ", 1, instr(" col ", " \
                      BUCKET_PART_SQL ") - 1) ELSE " col " END"
/* Whether bucket column col is a part of home n (a parameter or a column),
** or home n or one of its parts. */
#define REG_PART_OF(col, n) "substr(" col ", 1, length(" n ") + 1) = " n " || " BUCKET_PART_SQL
#define REG_IN_HOME(col, n) "(" col " = " n " OR " REG_PART_OF(col, n) ")"

/* A winner w's runners-up (the other finalists of its race, JSON) as rows
** f (none when the column does not parse), and a row's template, config
** and time. */
#define REG_RUNNERS_UP "json_each(CASE WHEN json_valid(w.runners_up) THEN w.runners_up ELSE '[]' END) f"
#define REG_RUNNER_TEMPLATE "json_extract(f.value, '$.template')"
#define REG_RUNNER_CONFIG "json(json_extract(f.value, '$.config'))"
#define REG_RUNNER_US "json_extract(f.value, '$.median_us')"

/* A number column c as a JSON export takes it (with SQLite's json_object):
** SQLite writes an infinity as a bare Inf, which is not JSON, so one is
** NULL (null); NaN is stored as NULL already. */
#define REG_SQL_FIN(c) "(CASE WHEN typeof(" c ") = 'real' AND NOT (" c " BETWEEN -1.7976931348623157e308 AND " \
                       "1.7976931348623157e308) THEN NULL ELSE " c " END)"
/* A JSON column c embedded as JSON when it parses, else as a string. */
#define REG_SQL_JSON(c) "CASE WHEN json_valid(" c ") THEN json(" c ") ELSE " c " END"

#endif
