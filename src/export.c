/* export.c: `aitune export`: a registry's measurements and winners as CSV,
** JSON or Kernel Tuner's T4 results format, for the tools people already
** use (spreadsheets, pandas, Kernel Tuner's analysis). The JSON is built by
** SQLite's JSON functions (registry_export.c), so strings are escaped and JSON
** columns embedded as JSON; CSV fields are quoted here (RFC 4180). */
#define _GNU_SOURCE
#include "cli.h"
#include "registry_export.h"
#include "registry_vendor.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char export_summary[] =
    "Export the registry as CSV, JSON or Kernel Tuner T4. csv: one table (--what measurements,\n"
    "the default, or winners), a header line then one line per row. json: {\"winners\": [...],\n"
    "\"measurements\": [...], \"runs\": [...], \"devices\": [...], \"vendor\": [...]} (or one table's\n"
    "array with --what; vendor: the vendor library's times, cuBLASLt at the shapes a sweep timed).\n"
    "t4: Kernel Tuner's T4 results (schema 1.0.0): one result per measurement, times in ms, its\n"
    "invalidity (correct, compile, runtime, timeout, correctness, constraints), plus an \"aitune\"\n"
    "object with the op, template, arch, dtype and bucket.\n\n"
    "  --format F     csv, json or t4 (required)\n"
    "  --what T       measurements, winners, runs, devices or vendor (csv: default measurements)\n"
    "  --op OP        only this op's rows\n"
    "  --dtype T      t4: only this dtype's measurements\n"
    "  -o FILE        write FILE (replaced whole, atomically; never through a link) instead of\n"
    "                 standard output\n"
    "  --db PATH      the registry\n\n"
    "Exit: 0, 1 when the output cannot be written, 2 for a usage error or an unknown op,\n"
    "3 for a registry that does not open.";
const char export_usage[] = "aitune export --format csv|json|t4 [--what TABLE] [--op OP] [--dtype T] [-o FILE] [--db PATH]";

/* One CSV field: quoted when it holds a comma, quote or line break. A
** field a spreadsheet would take for a formula (its first byte = + - @, a
** tab or a carriage return) gets a leading apostrophe, so opening an export
** never runs what a registry string holds; numbers (a negative time, 1e-3)
** are left as they are. */
static void csv_field(FILE *f, const char *s)
{
    if (!s) return;
    int formula = strchr("=+-@\t\r", s[0]) && s[0];
    if (formula && (s[0] == '-' || s[0] == '+')) {
        char *end;
        strtod(s, &end);
        formula = end == s || *end;   /* "-1.5" is a number; "-1+cmd" is not */
    }
    if (!formula && !strpbrk(s, ",\"\r\n")) { fputs(s, f); return; }
    fputc('"', f);
    if (formula) fputc('\'', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

typedef struct out { FILE *f; long long n; } out;

static int csv_row(int ncols, const char *const *names, const char *const *values, void *ctx)
{
    out *o = ctx;
    const char *const *cells = values ? values : names;
    for (int i = 0; i < ncols; i++) {
        csv_field(o->f, cells[i]);
        fputs(i + 1 < ncols ? "," : "\n", o->f);
    }
    o->n += values != NULL;
    return 0;
}

static int json_row(const char *json, void *ctx)
{
    out *o = ctx;
    fprintf(o->f, "%s\n  %s", o->n++ ? "," : "", json);
    return 0;
}

/* One table as a JSON array. */
static int json_table(reg *r, const char *table, const char *op, FILE *f)
{
    out o = { f, 0 };
    fputs("[", f);
    if (!strcmp(table, "vendor") ? reg_vendor_json_rows(r, op, json_row, &o) : reg_json_rows(r, table, op, json_row, &o))
        return -1;
    fputs(o.n ? "\n]" : "]", f);
    return 0;
}

int cmd_export(int argc, char **argv)
{
    opt opts[] = { { "--format", 1, 0, 0 }, { "--what", 1, 0, 0 }, { "--op", 1, 0, 0 }, { "--dtype", 1, 0, 0 },
                   { "-o", 1, 0, 0 },       { "--db", 1, 0, 0 },   { 0, 0, 0, 0 } };
    const char *pos[1];
    int np, rc = cli_parse("export", export_usage, export_summary, argc, argv, opts, pos, 0, &np);
    if (rc) return rc;
    const char *fmt = opts[0].value, *what = opts[1].value, *op = opts[2].value;
    if (!fmt) return cli_usage_error("export", export_usage, "--format is required (csv, json or t4)");
    if (strcmp(fmt, "csv") && strcmp(fmt, "json") && strcmp(fmt, "t4"))
        return cli_usage_error("export", export_usage, "unknown format '%s' (formats: csv, json, t4)", fmt);
    static const char *const tables[] = { "measurements", "winners", "runs", "devices", "vendor", NULL };
    if (what) {
        int k = 0;
        while (tables[k] && strcmp(tables[k], what)) k++;
        if (!tables[k])
            return cli_usage_error("export", export_usage, "unknown table '%s' (measurements, winners, runs, devices, vendor)", what);
        if (!strcmp(fmt, "t4") && strcmp(what, "measurements"))
            return cli_usage_error("export", export_usage, "t4 holds measurements only, not %s", what);
    }
    if (opts[3].value && strcmp(fmt, "t4"))
        return cli_usage_error("export", export_usage, "--dtype filters t4 exports only");
    const char *db = cli_db_path(opts[5].value);
    if (!file_exists(db)) {
        error("no registry at '%s' (run `aitune sweep SPEC`, or give --db)", db);
        return EXIT_INPUT;
    }
    if (op && (rc = cli_check_op(cli_root(), db, op, opts[3].value))) return rc;
    reg *r;
    if (reg_open(db, 1, &r)) {
        error("%s", reg_errmsg(r));
        reg_close(r);
        return EXIT_INPUT;
    }
    outfile s;
    if (out_open(&s, opts[4].value)) {
        error("cannot write '%s': %s", cli_shown(opts[4].value), s.why);
        out_close(&s, 0);
        reg_close(r);
        return EXIT_FAIL;
    }
    int bad = 0;
    if (!strcmp(fmt, "csv")) {
        out o = { s.f, 0 };
        bad = what && !strcmp(what, "vendor") ? reg_vendor_text_rows(r, op, csv_row, &o)
                                              : reg_text_rows(r, what ? what : "measurements", op, csv_row, &o);
    } else if (!strcmp(fmt, "t4")) {
        out o = { s.f, 0 };
        fputs("{\"schema_version\": \"1.0.0\", \"results\": [", s.f);
        bad = reg_t4_rows(r, op, opts[3].value, json_row, &o);
        fputs(o.n ? "\n]}\n" : "]}\n", s.f);
    } else if (what) {
        bad = json_table(r, what, op, s.f);
        fputs("\n", s.f);
    } else {
        fputs("{", s.f);
        for (int k = 0; tables[k] && !bad; k++) {
            fprintf(s.f, "%s\"%s\": ", k ? ",\n" : "", tables[k]);
            bad = json_table(r, tables[k], op, s.f);
        }
        fputs("}\n", s.f);
    }
    if (bad) error("%s", reg_errmsg(r));
    reg_close(r);
    if (out_close(&s, !bad) && !bad) {
        error("cannot write '%s': %s", cli_shown(opts[4].value ? opts[4].value : "-"), s.why);
        return EXIT_FAIL;
    }
    return bad ? EXIT_INPUT : EXIT_OK;
}
