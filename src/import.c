/* import.c: `aitune import`: Kernel Tuner T4 results into the registry, as
** measurements of one op's template (so `why`, `export` and the report see
** them beside aitune's own). The file is parsed by SQLite's JSON functions
** (reg_t4_parse); every result is checked before anything is written, so a
** corrupt file imports nothing. Imported rows have no device: they never
** join a race or stand in for a measurement a sweep must make. */
#define _GNU_SOURCE
#include "cli.h"
#include "registry_export.h"
#include "registry_measure.h"
#include "spec.h"
#include "tmpl.h"
#include <errno.h>
#include <lua.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char import_summary[] =
    "Import Kernel Tuner T4 results as measurements of an op's template. Each result's\n"
    "configuration must name exactly the template's parameters; its invalidity becomes the status\n"
    "(correct: ok, correctness: wrong, compile, runtime, timeout, constraints: constraint), its\n"
    "\"time\" measurement (or the mean of times.runtimes) the median time. A file aitune wrote\n"
    "(export --format t4) names op, template, dtype, arch and bucket itself; for another file give\n"
    "them. Each result is checked as a sweep would check it: the arch one NVRTC knows, every config\n"
    "value one of the template's, its bucket the one its shape falls in (or a part of it), no control\n"
    "characters, nothing longer than the registry keeps. Results already in the registry are\n"
    "skipped; a bad result imports nothing. A file of several buckets is reported bucket by bucket.\n\n"
    "  --op OP          the op (e.g. axpy)\n"
    "  --template T     its template (vec or axpy/vec; default: the op's only one)\n"
    "  --dtype T        the dtype the results were measured in\n"
    "  --arch A         the GPU's arch (sm_90)\n"
    "  --shape S        the problem size the results were measured at (its bucket is the key)\n"
    "  --db PATH        the registry\n\n"
    "Exit: 0, 1 when the registry cannot be written, 2 for a usage error or an unknown op, template\n"
    "or dtype, 3 for a file that is not T4 (or not a regular file of at most 256 MB), a result that\n"
    "does not fit the template, or a registry that does not open.";
const char import_usage[] =
    "aitune import FILE [--op OP] [--template T] [--dtype T] [--arch A] [--shape S] [--db PATH]";

typedef struct importer {
    const char *file;
    const char *op, *tmpl, *dtype, *arch, *shape;   /* flags, NULL when not given */
    tmpl *T;
    measurement *m;
    int n, cap;
    int code;                   /* exit code of the first error */
    char checked[32], checked_dtype[16];   /* the op and dtype last found known */
} importer;

static const struct { const char *t4, *status; } kinds[] = {
    { "correct", "ok" },         { "correctness", "wrong" }, { "compile", "compile" },
    { "runtime", "runtime" },    { "timeout", "timeout" },   { "constraints", "constraint" },
};

static int bad(importer *im, int code, int index, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int bad(importer *im, int code, int index, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    error("'%s' result %d: %s", cli_shown(im->file), index, cli_shown(msg));
    im->code = code;
    return 1;
}

/* "vec" or "axpy/vec" -> "axpy/vec", checked against the op's templates;
** NULL: the op's only one. */
static int find_template(importer *im, const char *op, const char *want, char *out, int cap, int index)
{
    char **tn;
    int ntn;
    if (tmpl_templates(im->T, op, &tn, &ntn)) return bad(im, EXIT_USAGE, index, "%s", tmpl_errmsg(im->T));
    int found = 0;
    strbuf have = STRBUF_INIT;
    for (int i = 0; i < ntn; i++) {
        sb_printf(&have, "%s%s", i ? ", " : "", tn[i]);
        const char *impl = strchr(tn[i], '/') + 1;
        if ((!want && ntn == 1) || (want && (!strcmp(want, tn[i]) || !strcmp(want, impl)))) {
            snprintf(out, (size_t)cap, "%s", tn[i]);
            found = 1;
        }
    }
    if (!found) {
        if (want) bad(im, EXIT_USAGE, index, "op '%s' has no template '%s' (it has %s)", op, want, sb_str(&have));
        else bad(im, EXIT_USAGE, index, "op '%s' has %d templates (%s): give --template", op, ntn, sb_str(&have));
    }
    for (int i = 0; i < ntn; i++) free(tn[i]);
    free(tn);
    sb_free(&have);
    return !found;
}

/* The configuration as canonical JSON, its keys exactly the params. */
static int canonical_config(importer *im, const char *tname, const char *config, strbuf *out, int index)
{
    lua_State *L = tmpl_lua(im->T);
    int top = lua_gettop(L), rc = 0;
    if (tmpl_push_template(im->T, tname)) return bad(im, EXIT_USAGE, index, "%s", tmpl_errmsg(im->T));
    if (tmpl_push_config(im->T, config)) {
        lua_settop(L, top);
        return bad(im, EXIT_INPUT, index, "%s", tmpl_errmsg(im->T));
    }
    int tpl = top + 1, cfg = top + 2;
    strbuf names = STRBUF_INIT;
    int nparams = 0;
    lua_getfield(L, tpl, "params");
    for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, -1) && !rc; i++) {
        lua_rawgeti(L, -1, i);
        lua_rawgeti(L, -1, 1);
        const char *name = lua_tostring(L, -1);
        sb_printf(&names, "%s%s", i > 1 ? ", " : "", name ? name : "?");
        nparams++;
        if (name && lua_getfield(L, cfg, name) == LUA_TNIL)
            rc = bad(im, EXIT_INPUT, index, "configuration lacks '%s', a parameter of %s", name, tname);
        lua_pop(L, 3);
    }
    int nkeys = 0;
    lua_pushnil(L);
    while (!rc && lua_next(L, cfg)) {
        lua_pop(L, 1);
        nkeys++;
    }
    if (!rc && nkeys != nparams)
        rc = bad(im, EXIT_INPUT, index, "configuration %s has keys that are not parameters of %s (%s)", config, tname,
                 sb_str(&names));
    if (!rc && tmpl_config_json(im->T, cfg, out)) rc = bad(im, EXIT_INPUT, index, "%s", tmpl_errmsg(im->T));
    sb_free(&names);
    lua_settop(L, top);
    return rc;
}

/* The shape from --shape (the op's dim order) or from aitune's {"n": 64}. */
static int read_shape(importer *im, const op_task *info, const char *flag, const char *json, long long *shape, int index)
{
    if (flag) {
        int n = 0;
        for (const char *p = flag; *p;) {
            long long v;
            size_t len = strcspn(p, ",");
            const char *end = p + len;
            if (parse_size(p, len, 1, SPEC_MAXELEMS, &v) || (*end && !end[1]) || n == info->ndims) {
                im->code = cli_usage_error("import", import_usage, "--shape '%s' is not one size per dim of '%s'", flag,
                                           info->op);
                return 1;
            }
            shape[n++] = v;
            p = *end ? end + 1 : end;
        }
        if (n != info->ndims) {
            im->code = cli_usage_error("import", import_usage, "op '%s' has %d dims; --shape gives %d", info->op,
                                       info->ndims, n);
            return 1;
        }
        return 0;
    }
    if (!json) return bad(im, EXIT_USAGE, index, "no shape: give --shape (the size the results were measured at)");
    lua_State *L = tmpl_lua(im->T);
    int top = lua_gettop(L), rc = 0;
    if (tmpl_push_config(im->T, json)) return bad(im, EXIT_INPUT, index, "shape: %s", tmpl_errmsg(im->T));
    for (int d = 0; d < info->ndims && !rc; d++) {
        lua_getfield(L, -1, info->dims[d]);
        if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1)
            rc = bad(im, EXIT_INPUT, index, "shape %s has no size for dim '%s'", json, info->dims[d]);
        else shape[d] = lua_tointeger(L, -1);
        lua_pop(L, 1);
    }
    lua_settop(L, top);
    return rc;
}

/* m's bucket and shape JSON from the shape, as a sweep keys them (a file's
** own bucket must be the shape's or one of its parts): 0, or 1 after bad(). */
static int key_shape(importer *im, const t4_result *t, op_task *task, const long long *shape, measurement *m,
                     int i)
{
    /* The bucket is the shape's, as a sweep would key it. A file that names
    ** one (aitune's export) must name that bucket or one of its parts; the
    ** dims its key names exactly (spec.h: spec_dim.exact) are keyed so. */
    bucket_parsed k;
    char kwhy[128];
    int parsed = t->bucket && strlen(t->bucket) < sizeof m->bucket && !bucket_key_parse(t->bucket, &k, kwhy, sizeof kwhy);
    unsigned exact = parsed ? k.exact : 0;
    long long lo[TMPL_MAXDIMS], hi;
    for (int d = 0; d < task->ndims; d++) {
        bucket_of(shape[d], &lo[d], &hi);
        if (exact >> d & 1) lo[d] = shape[d];
    }
    if (bucket_key_exact(task->ndims, task->dims, lo, shape, exact, m->bucket, sizeof m->bucket))
        return bad(im, EXIT_INPUT, i, "the bucket key of its shape is longer than %d characters", (int)sizeof m->bucket - 1);
    if (t->bucket && strcmp(t->bucket, m->bucket)) {
        if (!parsed || !bucket_in_home(t->bucket, m->bucket)) {
            char want[96];
            snprintf(want, sizeof want, "%s", m->bucket);
            return bad(im, EXIT_INPUT, i, "bucket '%s' is not its shape's (%s)", t->bucket, want);
        }
        snprintf(m->bucket, sizeof m->bucket, "%s", t->bucket);   /* a part of the shape's bucket */
    }
    int at = snprintf(m->shape, sizeof m->shape, "{");
    for (int d = 0; d < task->ndims && at < (int)sizeof m->shape; d++)
        at += snprintf(m->shape + at, sizeof m->shape - (size_t)at, "%s\"%s\":%lld", d ? "," : "", task->dims[d], shape[d]);
    if (at + 2 > (int)sizeof m->shape)
        return bad(im, EXIT_INPUT, i, "its shape is longer than %d characters", (int)sizeof m->shape - 1);
    snprintf(m->shape + at, sizeof m->shape - (size_t)at, "}");
    return 0;
}

static int take(const t4_result *t, void *ctx)
{
    importer *im = ctx;
    int i = t->index;
    if (!t->is_object) return bad(im, EXIT_INPUT, i, "not a JSON object");
    if (!t->configuration) return bad(im, EXIT_INPUT, i, "no configuration object");
    const char *status = NULL;
    for (size_t k = 0; t->invalidity && k < sizeof kinds / sizeof kinds[0]; k++)
        if (!strcmp(kinds[k].t4, t->invalidity)) status = kinds[k].status;
    if (!status)
        return bad(im, EXIT_INPUT, i, "invalidity '%s' is not a T4 kind (correct, correctness, compile, runtime, timeout, "
                   "constraints)", t->invalidity ? t->invalidity : "(missing)");
    const char *op = im->op ? im->op : t->op, *dtype = im->dtype ? im->dtype : t->dtype;
    const char *arch = im->arch ? im->arch : t->arch;
    if (!op) return bad(im, EXIT_USAGE, i, "which op? give --op (a Kernel Tuner file does not name aitune's op)");
    if (!dtype) return bad(im, EXIT_USAGE, i, "which dtype? give --dtype");
    if (!arch) return bad(im, EXIT_USAGE, i, "which arch? give --arch (e.g. sm_90)");
    /* What the file names is checked as a sweep checks a spec: an arch
    ** NVRTC knows, names that fit the registry's fields whole. */
    if (!arch_known(arch))
        return bad(im, im->arch ? EXIT_USAGE : EXIT_INPUT, i, "arch '%s' is not one aitune knows (%s)", arch, arch_list());
    if (strlen(op) >= sizeof im->checked || strlen(dtype) >= sizeof im->checked_dtype)
        return bad(im, im->op && im->dtype ? EXIT_USAGE : EXIT_INPUT, i, "op '%.40s' or dtype '%.40s' is too long", op,
                   dtype);
    const char *texts[][2] = { { "error", t->error }, { "template", t->tmpl }, { "bucket", t->bucket },
                               { "shape", t->shape } };
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++)
        for (const unsigned char *c = (const unsigned char *)texts[k][1]; c && *c; c++)
            if (*c < 0x20 || *c == 0x7f)
                return bad(im, EXIT_INPUT, i, "its %s holds a control character (0x%02x)", texts[k][0], *c);
    if (strcmp(im->checked, op) || strcmp(im->checked_dtype, dtype)) {
        int code = cli_check_op(tmpl_root(im->T), "", op, dtype);
        if (code) { im->code = code; return 1; }
        snprintf(im->checked, sizeof im->checked, "%s", op);
        snprintf(im->checked_dtype, sizeof im->checked_dtype, "%s", dtype);
    }
    char tname[64];
    if (find_template(im, op, im->tmpl ? im->tmpl : t->tmpl, tname, sizeof tname, i)) return 1;
    /* The op resolved at the shape: dims, and bytes and flops for GB/s. */
    op_task info = { .ndims = 0 };
    long long shape[TMPL_MAXDIMS];
    int ndt;
    char dts[32][16];
    snprintf(info.op, sizeof info.op, "%s", op);
    if (tmpl_op_info(im->T, op, &info.ndims, info.dims, &ndt, dts, 32))
        return bad(im, EXIT_INPUT, i, "%s", tmpl_errmsg(im->T));
    if (read_shape(im, &info, im->shape, t->shape, shape, i)) return 1;
    op_task task;
    if (tmpl_task(im->T, op, dtype, shape, &task)) return bad(im, EXIT_INPUT, i, "%s", tmpl_errmsg(im->T));
    strbuf cfg = STRBUF_INIT;
    if (canonical_config(im, tname, t->configuration, &cfg, i)) { sb_free(&cfg); return 1; }
    /* Every value one of the template's: a config outside its domain would
    ** be instantiated as it is by emit and retune. */
    int known = 0;
    char why[256];
    if (tmpl_config_known(im->T, tname, sb_str(&cfg), &known, why, sizeof why) || !known) {
        sb_free(&cfg);
        return bad(im, EXIT_INPUT, i, "configuration %s: %s", t->configuration, known ? tmpl_errmsg(im->T) : why);
    }
    double scale = !strcmp(t->time_unit, "ms") ? 1e3 : !strcmp(t->time_unit, "s") ? 1e6
                 : !strcmp(t->time_unit, "us") ? 1 : !strcmp(t->time_unit, "ns") ? 1e-3 : -1;
    if (scale < 0) { sb_free(&cfg); return bad(im, EXIT_INPUT, i, "time unit '%s' is not s, ms, us or ns", t->time_unit); }
    if (!strcmp(status, "ok") && !(t->time > 0 && isfinite(t->time * scale))) {
        sb_free(&cfg);
        return bad(im, EXIT_INPUT, i, "a correct result without a time (a finite positive one)");
    }
    if (im->n == im->cap) {
        im->cap = im->cap ? 2 * im->cap : 64;
        im->m = xrealloc(im->m, sizeof *im->m * (size_t)im->cap);
    }
    measurement *m = &im->m[im->n++];
    memset(m, 0, sizeof *m);
    snprintf(m->op, sizeof m->op, "%s", op);
    snprintf(m->tmpl, sizeof m->tmpl, "%s", tname);
    arch_base(arch, m->arch);
    snprintf(m->dtype, sizeof m->dtype, "%s", dtype);
    if (key_shape(im, t, &task, shape, m, i)) {
        sb_free(&cfg);
        im->n--;
        return 1;   /* bad() said why */
    }
    m->config = xstrdup(sb_str(&cfg));
    sb_free(&cfg);
    hash_hex(hash_str(hash_str(HASH_INIT, tname), m->config), m->config_hash);
    snprintf(m->status, sizeof m->status, "%s", status);
    if (!strcmp(status, "ok")) {
        m->median_us = t->time * scale;
        m->min_us = t->min_time > 0 && isfinite(t->min_time * scale) ? t->min_time * scale : m->median_us;
        m->max_us = t->max_time > 0 && isfinite(t->max_time * scale) ? t->max_time * scale : m->median_us;
        m->spread = (m->max_us - m->min_us) / m->median_us;
        m->gbps = task.bytes / (m->median_us * 1e3);
        m->tflops = task.flops / (m->median_us * 1e6);
    }
    m->compile_ms = t->compile_ms > 0 && isfinite(t->compile_ms) ? t->compile_ms : 0;
    m->error = t->error ? xstrdup(t->error)
             : strcmp(status, "ok") ? xstrfmt("imported from Kernel Tuner T4: invalidity '%s'", t->invalidity) : NULL;
    return 0;
}

/* What was imported, truthfully: one (template, dtype, arch, bucket) in
** one line, else a line per bucket (a file exported from a whole registry
** holds many). */
static void summary(importer *im, int added, int nok)
{
    typedef struct group { const measurement *m; int n, ok; } group;
    group *g = xcalloc((size_t)im->n, sizeof *g);
    int ng = 0;
    for (int i = 0; i < im->n; i++) {
        const measurement *m = &im->m[i];
        int k = ng - 1;     /* rows of one bucket come together in an export */
        if (k < 0 || strcmp(g[k].m->tmpl, m->tmpl) || strcmp(g[k].m->dtype, m->dtype) ||
            strcmp(g[k].m->arch, m->arch) || strcmp(g[k].m->bucket, m->bucket))
            for (k = 0; k < ng && (strcmp(g[k].m->tmpl, m->tmpl) || strcmp(g[k].m->dtype, m->dtype) ||
                                   strcmp(g[k].m->arch, m->arch) || strcmp(g[k].m->bucket, m->bucket)); k++) {}
        if (k == ng) g[ng++].m = m;
        g[k].n++;
        g[k].ok += !strcmp(m->status, "ok");
    }
    strbuf line = STRBUF_INIT;
    if (ng == 1) {
        sb_printf(&line, "imported %d results (%d correct) from %s as %s %s %s %s", added, nok, im->file, g[0].m->tmpl,
                  g[0].m->dtype, g[0].m->arch, g[0].m->bucket);
    } else {
        sb_printf(&line, "imported %d results (%d correct) from %s into %d buckets:", added, nok, im->file, ng);
        for (int k = 0; k < ng && k < 20; k++)
            sb_printf(&line, "\n  %s %s %s %s: %d results (%d correct)", g[k].m->tmpl, g[k].m->dtype, g[k].m->arch,
                      g[k].m->bucket, g[k].n, g[k].ok);
        if (ng > 20) sb_printf(&line, "\n  ... and %d buckets more", ng - 20);
    }
    /* The names came from a file: printed without its control bytes. */
    strbuf shown = STRBUF_INIT;
    for (const char *p = sb_str(&line), *nl; *p; p = nl + (*nl != 0)) {
        nl = p + strcspn(p, "\n");
        char *one = xstrfmt("%.*s", (int)(nl - p), p);
        sb_printable(&shown, one);
        sb_puts(&shown, "\n");
        free(one);
    }
    fputs(sb_str(&shown), stdout);
    sb_free(&shown);
    sb_free(&line);
    free(g);
}

int cmd_import(int argc, char **argv)
{
    opt opts[] = { { "--op", 1, 0, 0 },   { "--template", 1, 0, 0 }, { "--dtype", 1, 0, 0 }, { "--arch", 1, 0, 0 },
                   { "--shape", 1, 0, 0 }, { "--db", 1, 0, 0 },      { 0, 0, 0, 0 } };
    const char *pos[1];
    int np, rc = cli_parse("import", import_usage, import_summary, argc, argv, opts, pos, 1, &np);
    if (rc) return rc;
    if (np != 1) return cli_usage_error("import", import_usage, "which file? (a Kernel Tuner T4 results JSON file)");
    importer im = { .file = pos[0], .op = opts[0].value, .tmpl = opts[1].value, .dtype = opts[2].value,
                    .arch = opts[3].value, .shape = opts[4].value };
    char *text = read_regular_file(im.file, INPUT_MAXBYTES, NULL);
    if (!text) {
        error("cannot read '%s': %s", cli_shown(im.file), read_errstr(errno, INPUT_MAXBYTES));
        return EXIT_INPUT;
    }
    if (im.op && (rc = cli_check_op(cli_root(), "", im.op, im.dtype))) { free(text); return rc; }
    reg *r;
    if (reg_open(cli_db_path(opts[5].value), 0, &r)) {
        error("%s", reg_errmsg(r));
        reg_close(r);
        free(text);
        return EXIT_INPUT;
    }
    im.T = tmpl_open(cli_root());
    if (reg_t4_parse(r, text, take, &im)) {
        /* reg_errmsg names the registry; the problem is the file's. */
        const char *e = strstr(reg_errmsg(r), "': ");
        error("'%s': %s", im.file, e ? e + 3 : reg_errmsg(r));
        im.code = EXIT_INPUT;
    }
    free(text);
    int added = 0, skipped = 0, nok = 0;
    if (!im.code && !im.n) {
        error("'%s': no results", im.file);
        im.code = EXIT_INPUT;
    }
    long long run = 0;
    if (!im.code) {
        char *cmd = xstrfmt("aitune import %s", im.file);
        if (reg_run_begin(r, cmd, NULL, 0, 0, "{}", &run)) im.code = error("%s", reg_errmsg(r)) ? EXIT_FAIL : 0;
        free(cmd);
    }
    for (int i = 0; i < im.n && !im.code; i++) {
        measurement old;
        im.m[i].run = run;
        int found = reg_measure_find(r, &im.m[i], &old);
        if (found > 0) { measurement_free(&old); skipped++; continue; }
        if (found < 0 || reg_measure_put(r, &im.m[i])) { error("%s", reg_errmsg(r)); im.code = EXIT_FAIL; break; }
        added++;
        nok += !strcmp(im.m[i].status, "ok");
    }
    if (run) reg_run_end(r, run, im.code ? "failed" : "ok");
    if (!im.code) summary(&im, added, nok);
    if (!im.code && skipped) printf("%d already in the registry, skipped\n", skipped);
    for (int i = 0; i < im.n; i++) measurement_free(&im.m[i]);
    free(im.m);
    tmpl_close(im.T);
    reg_close(r);
    return im.code;
}
