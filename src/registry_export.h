/* registry_export.h: a registry's rows in the formats it leaves in and
** comes in by (`aitune export`, `aitune import`): a table's rows as JSON
** objects or as text columns, and measurements as Kernel Tuner T4 results,
** both ways. SQLite builds and parses the JSON (strings escaped there;
** JSON columns checked and embedded as JSON; an infinity, not JSON, is
** null). The vendor's times have their own (registry_vendor.h). Calls
** return 0 and -1 with reg_errmsg set; cb returning non-zero stops. */
#ifndef REGISTRY_EXPORT_H
#define REGISTRY_EXPORT_H
#include "registry.h"

/* Rows of a table as JSON objects built by SQLite: table is measurements,
** winners, runs or devices; op NULL: every op. A JSON column (shape,
** config, runners_up, launch, env) is embedded as JSON, or as a string
** where it does not parse. */
int reg_json_rows(reg *r, const char *table, const char *op, int (*cb)(const char *json, void *ctx), void *ctx);

/* Rows of a table as text: cb first with the column names and values NULL
** (a header, even for a table with no rows), then per row with the values
** (each NULL for SQL NULL; blobs are never returned). */
int reg_text_rows(reg *r, const char *table, const char *op,
                  int (*cb)(int ncols, const char *const *names, const char *const *values, void *ctx), void *ctx);

/* ---- Kernel Tuner T4 ---- */

/* Measurements of op (NULL: all) as Kernel Tuner T4 result objects (schema
** T4 1.0.0): configuration, times (ms), invalidity, correctness,
** measurements, objectives, plus aitune's key (op, arch, dtype, bucket,
** template). */
int reg_t4_rows(reg *r, const char *op, const char *dtype, int (*cb)(const char *json, void *ctx), void *ctx);

/* One result of a Kernel Tuner T4 file, parsed by SQLite's JSON functions.
** Strings are NULL when absent; times are < 0 when absent. */
typedef struct t4_result {
    int index;                  /* 0-based, in the file's order */
    int is_object;              /* the result is a JSON object */
    const char *configuration;  /* a JSON object's text, NULL if not an object */
    const char *invalidity;
    double time, min_time, max_time;   /* the "time" measurement, else runtimes' mean, min, max */
    const char *time_unit;      /* of the "time" measurement ("ms" if none) */
    double compile_ms;
    const char *timestamp;
    /* aitune's key when aitune wrote the file (export --format t4). */
    const char *op, *tmpl, *arch, *dtype, *bucket, *shape, *error;
} t4_result;
/* Parse text as T4: -1 with reg_errmsg saying why when it is not JSON or
** has no results array; else cb for each result (non-zero stops). */
int reg_t4_parse(reg *r, const char *text, int (*cb)(const t4_result *res, void *ctx), void *ctx);

#endif
