/* replay.c: see replay.h. */
#define _GNU_SOURCE
#include "replay.h"
#include "registry_measure.h"
#include "search.h"
#include "tmpl.h"
#include "cli.h"
#include "util.h"
#include <errno.h>
#include <lua.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the landscape file ---- */

enum { C_OP, C_TMPL, C_ARCH, C_DTYPE, C_BUCKET, C_STATUS, C_TIME, C_COMPILE, C_CONFIG,
       C_SPREAD, C_REGS, C_SPILLS, C_SMEM, NCOLS };
static const char *col_names[NCOLS] = { "op", "template", "arch", "dtype", "bucket", "status", "time_us",
                                        "compile_ms", "config", "spread", "registers", "spills", "smem" };
#define NREQUIRED 9

static const char *statuses[] = { "ok", "compile", "runtime", "timeout", "wrong", NULL };

static int status_known(const char *s)
{
    for (int i = 0; statuses[i]; i++)
        if (!strcmp(statuses[i], s)) return 1;
    return 0;
}

/* Split line at tabs into at most max fields (in place); returns the count. */
static int split_tabs(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    while (n < max) {
        f[n++] = p;
        char *t = strchr(p, '\t');
        if (!t) break;
        *t = 0;
        p = t + 1;
    }
    return n;
}

static int parse_num(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

/* An optional count column (registers, spills, smem): "" or absent is 0,
** else a whole number in [0, INT_MAX] (a cast of 1e300 to int would be
** undefined). */
static int parse_count(const char *s, int *out)
{
    double v;
    if (!*s) { *out = 0; return 0; }
    if (parse_num(s, &v) || v < 0 || v > INT_MAX || v != floor(v)) return -1;
    *out = (int)v;
    return 0;
}

/* Open-addressing sets over the file's landscapes and rows, so a file of
** n rows loads in O(n): a landscape's index by its key, and whether a
** config already appeared in its landscape. */
typedef struct slot { uint64_t h; int a, b; } slot;   /* a < 0: empty */
typedef struct table { slot *s; size_t n, cap; } table;

static void table_grow(table *t)
{
    size_t cap = t->cap ? 2 * t->cap : 1024;
    slot *s = xmalloc(sizeof *s * cap);
    for (size_t i = 0; i < cap; i++) s[i].a = -1;
    for (size_t i = 0; i < t->cap; i++)
        if (t->s[i].a >= 0) {
            size_t k = t->s[i].h & (cap - 1);
            while (s[k].a >= 0) k = (k + 1) & (cap - 1);
            s[k] = t->s[i];
        }
    free(t->s);
    t->s = s;
    t->cap = cap;
}

/* The slot of hash h for which same(a, b) holds, or the empty slot where it
** goes (its a < 0). */
static slot *table_find(table *t, uint64_t h, int (*same)(const slot *x, const void *key), const void *key)
{
    if (2 * (t->n + 1) > t->cap) table_grow(t);
    size_t k = h & (t->cap - 1);
    while (t->s[k].a >= 0 && !(t->s[k].h == h && same(&t->s[k], key))) k = (k + 1) & (t->cap - 1);
    return &t->s[k];
}

typedef struct land_key { char *const *f; const int *col; const landscape *ls; } land_key;
typedef struct row_key { int li; const char *config; const landscape *ls; } row_key;

static int same_land(const slot *x, const void *key)
{
    const land_key *k = key;
    const landscape *l = &k->ls[x->a];
    return !strcmp(l->op, k->f[k->col[C_OP]]) && !strcmp(l->tmpl, k->f[k->col[C_TMPL]]) &&
           !strcmp(l->arch, k->f[k->col[C_ARCH]]) && !strcmp(l->dtype, k->f[k->col[C_DTYPE]]) &&
           !strcmp(l->bucket, k->f[k->col[C_BUCKET]]);
}

static int same_row(const slot *x, const void *key)
{
    const row_key *k = key;
    return x->a == k->li && !strcmp(k->ls[x->a].rows[x->b].config, k->config);
}

/* One data line's fields (f, nf of them) read into *r through the header's
** columns: 0, 1 for a row to skip (a constraint: never run), or -1 with
** one line in err. r->config is left for the caller. */
static int row_fields(const char *path, int lineno, char **f, int nf, const int *col, land_row *r, char *err,
                      int errcap)
{
    int need = 0;
    for (int c = 0; c < NCOLS; c++)
        if (col[c] >= need) need = col[c] + 1;
    if (nf < need) {
        snprintf(err, (size_t)errcap, "%s line %d: %d fields, the header names %d", path, lineno, nf, need);
        return -1;
    }
    if (!strcmp(f[col[C_STATUS]], "constraint")) return 1;   /* never run: not part of the space */
    if (!status_known(f[col[C_STATUS]])) {
        snprintf(err, (size_t)errcap, "%s line %d: unknown status '%.40s'", path, lineno, f[col[C_STATUS]]);
        return -1;
    }
    memset(r, 0, sizeof *r);
    snprintf(r->status, sizeof r->status, "%s", f[col[C_STATUS]]);
    double v;
    /* Times past 10^12 (11 days) are no measurement, and the metric's
    ** sums over them could overflow. */
    if (parse_num(f[col[C_TIME]], &r->time_us) || parse_num(f[col[C_COMPILE]], &r->compile_ms) ||
        (!strcmp(r->status, "ok") && r->time_us <= 0) || r->compile_ms < 0 || fabs(r->time_us) > 1e12 ||
        r->compile_ms > 1e12) {
        snprintf(err, (size_t)errcap, "%s line %d: time_us '%.40s' or compile_ms '%.40s' is not a valid number", path,
                 lineno, f[col[C_TIME]], f[col[C_COMPILE]]);
        return -1;
    }
    if (col[C_SPREAD] >= 0 && !parse_num(f[col[C_SPREAD]], &v)) r->spread = v;
    static const int counts[] = { C_REGS, C_SPILLS, C_SMEM };
    int *dst[] = { &r->registers, &r->spills, &r->smem };
    for (int c = 0; c < 3; c++)
        if (col[counts[c]] >= 0 && parse_count(f[col[counts[c]]], dst[c])) {
            snprintf(err, (size_t)errcap, "%s line %d: %s '%.40s' is not a count", path, lineno,
                     col_names[counts[c]], f[col[counts[c]]]);
            return -1;
        }
    if (f[col[C_CONFIG]][0] != '{') {
        snprintf(err, (size_t)errcap, "%s line %d: config '%.40s' is not a JSON object", path, lineno, f[col[C_CONFIG]]);
        return -1;
    }
    /* The key's fields must fit the landscape's, never be cut. */
    const landscape *ls = NULL;   /* only for sizeof */
    static const struct { int c; size_t cap; } widths[] = {
        { C_OP, sizeof ls->op }, { C_TMPL, sizeof ls->tmpl }, { C_ARCH, sizeof ls->arch },
        { C_DTYPE, sizeof ls->dtype }, { C_BUCKET, sizeof ls->bucket },
    };
    (void)ls;
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++)
        if (strlen(f[col[widths[w].c]]) >= widths[w].cap) {
            snprintf(err, (size_t)errcap, "%s line %d: %s '%.40s...' is longer than %zu characters", path, lineno,
                     col_names[widths[w].c], f[col[widths[w].c]], widths[w].cap - 1);
            return -1;
        }
    return 0;
}

int replay_load(const char *path, landscape **out, int *nout, char *err, int errcap)
{
    *out = NULL;
    *nout = 0;
    char *text = read_regular_file(path, INPUT_MAXBYTES, NULL);
    if (!text) {
        snprintf(err, (size_t)errcap, "cannot read landscape '%s': %s", path, read_errstr(errno, INPUT_MAXBYTES));
        return -1;
    }
    landscape *ls = NULL;
    int *rows_cap = NULL;
    int nls = 0, cap = 0, lineno = 0, have_header = 0;
    table lands = { NULL, 0, 0 }, seen = { NULL, 0, 0 };
    int col[NCOLS];
    for (int i = 0; i < NCOLS; i++) col[i] = -1;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r') line[--len] = 0;
        if (lineno == 1 && strncmp(line, "# aitune landscape v1", 21)) {
            snprintf(err, (size_t)errcap, "%s line 1: not a landscape file (it starts with '# aitune landscape v1')", path);
            goto bad;
        }
        if (!len || line[0] == '#') continue;
        char *f[32];
        int nf = split_tabs(line, f, 32);
        if (!have_header) {
            for (int i = 0; i < nf; i++)
                for (int c = 0; c < NCOLS; c++)
                    if (!strcmp(f[i], col_names[c])) col[c] = i;
            for (int c = 0; c < NREQUIRED; c++)
                if (col[c] < 0) {
                    snprintf(err, (size_t)errcap, "%s line %d: the header has no column '%s'", path, lineno, col_names[c]);
                    goto bad;
                }
            have_header = 1;
            continue;
        }
        land_row r;
        int got = row_fields(path, lineno, f, nf, col, &r, err, errcap);
        if (got < 0) goto bad;
        if (got > 0) continue;
        const char *cfg = f[col[C_CONFIG]];
        /* Its landscape, by its key. */
        uint64_t h = HASH_INIT;
        for (int c = C_OP; c <= C_BUCKET; c++) h = hash_str(hash_bytes(h, "\t", 1), f[col[c]]);
        land_key lk = { f, col, ls };
        slot *ps = table_find(&lands, h, same_land, &lk);
        if (ps->a < 0) {
            if (nls == cap) {
                cap = cap ? 2 * cap : 8;
                ls = xrealloc(ls, sizeof *ls * (size_t)cap);
                rows_cap = xrealloc(rows_cap, sizeof *rows_cap * (size_t)cap);
            }
            landscape *l = &ls[nls];
            memset(l, 0, sizeof *l);
            rows_cap[nls] = 0;
            snprintf(l->op, sizeof l->op, "%s", f[col[C_OP]]);
            snprintf(l->tmpl, sizeof l->tmpl, "%s", f[col[C_TMPL]]);
            snprintf(l->arch, sizeof l->arch, "%s", f[col[C_ARCH]]);
            snprintf(l->dtype, sizeof l->dtype, "%s", f[col[C_DTYPE]]);
            snprintf(l->bucket, sizeof l->bucket, "%s", f[col[C_BUCKET]]);
            *ps = (slot){ h, nls++, 0 };
            lands.n++;
        }
        int li = ps->a;
        landscape *l = &ls[li];
        uint64_t rh = hash_str(hash_bytes(HASH_INIT, &li, sizeof li), cfg);
        row_key rk = { li, cfg, ls };
        slot *rs = table_find(&seen, rh, same_row, &rk);
        if (rs->a >= 0) {
            snprintf(err, (size_t)errcap, "%s line %d: config %.200s appears twice in %s %s %s", path, lineno, cfg,
                     l->op, l->tmpl, l->bucket);
            goto bad;
        }
        if (l->n == rows_cap[li]) {
            rows_cap[li] = rows_cap[li] ? 2 * rows_cap[li] : 16;
            l->rows = xrealloc(l->rows, sizeof *l->rows * (size_t)rows_cap[li]);
        }
        r.config = xstrdup(cfg);
        *rs = (slot){ rh, li, l->n };
        seen.n++;
        l->rows[l->n++] = r;
    }
    if (!have_header) {
        snprintf(err, (size_t)errcap, "%s: no header line (op, template, ... config)", path);
        goto bad;
    }
    free(text);
    free(rows_cap);
    free(lands.s);
    free(seen.s);
    *out = ls;
    *nout = nls;
    return 0;
bad:
    free(text);
    free(rows_cap);
    free(lands.s);
    free(seen.s);
    replay_free(ls, nls);
    return -1;
}

void replay_free(landscape *ls, int n)
{
    if (!ls) return;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < ls[i].n; j++) free(ls[i].rows[j].config);
        free(ls[i].rows);
    }
    free(ls);
}

int replay_join(tmpl *T, landscape **lsp, int *np, char *err, int errcap)
{
    landscape *ls = *lsp, *out = xcalloc((size_t)*np + 1, sizeof *out);
    int nout = 0;
    char *done = xcalloc((size_t)*np + 1, 1);
    for (int a = 0; a < *np; a++) {
        if (done[a]) continue;
        /* The group of a: every later landscape of its (op, arch, dtype, bucket). */
        int n = 0;
        for (int b = a; b < *np; b++)
            if (!done[b] && !strcmp(ls[b].op, ls[a].op) && !strcmp(ls[b].arch, ls[a].arch) &&
                !strcmp(ls[b].dtype, ls[a].dtype) && !strcmp(ls[b].bucket, ls[a].bucket))
                n += ls[b].n;
        char **tn = xcalloc((size_t)n + 1, sizeof *tn), **cf = xcalloc((size_t)n + 1, sizeof *cf), **joined = NULL;
        landscape *o = &out[nout++];
        *o = ls[a];
        snprintf(o->tmpl, sizeof o->tmpl, "%s/*", ls[a].op);
        o->rows = xcalloc((size_t)n + 1, sizeof *o->rows);
        o->n = 0;
        for (int b = a; b < *np; b++)
            if (!done[b] && !strcmp(ls[b].op, ls[a].op) && !strcmp(ls[b].arch, ls[a].arch) &&
                !strcmp(ls[b].dtype, ls[a].dtype) && !strcmp(ls[b].bucket, ls[a].bucket)) {
                done[b] = 1;
                for (int i = 0; i < ls[b].n; i++) {
                    tn[o->n] = ls[b].tmpl;
                    cf[o->n] = ls[b].rows[i].config;
                    o->rows[o->n++] = ls[b].rows[i];
                }
            }
        int rc = search_join(T, tn, cf, n, &joined);
        for (int i = 0; i < n; i++) {
            free(o->rows[i].config);   /* the landscape's own copy */
            o->rows[i].config = rc ? xstrdup("{}") : joined[i];
        }
        free(joined);
        free(tn);
        free(cf);
        if (rc) {
            snprintf(err, (size_t)errcap, "joining the templates of %s %s %s: %s", o->op, o->dtype, o->bucket, tmpl_errmsg(T));
            /* Leave one list the caller frees: the groups so far, then the
            ** landscapes not reached (they keep their rows). */
            for (int i = 0; i < *np; i++) {
                if (done[i]) free(ls[i].rows);
                else out[nout++] = ls[i];
            }
            free(ls);
            free(done);
            *lsp = out;
            *np = nout;
            return -1;
        }
    }
    for (int i = 0; i < *np; i++) free(ls[i].rows);   /* the rows moved; their configs are freed */
    free(ls);
    free(done);
    *lsp = out;
    *np = nout;
    return 0;
}

/* ---- costs ---- */

/* Batches of 8 compile in parallel; verification (reference run, compare on
** the host) and worker round trips ~25 ms; ~50 timed launches, each after a
** flush that reads twice the L2 (100 MB at ~3 TB/s: ~35 us); a hung kernel
** is cut at the default 10 s. */
const replay_cost replay_default_cost = { 8, 25, 50, 35, 10000 };

double replay_cost_ms(const replay_cost *c, const land_row *r)
{
    double ms = r->compile_ms / (c->compile_par > 1 ? c->compile_par : 1);
    if (!strcmp(r->status, "ok") || !strcmp(r->status, "wrong"))
        ms += c->overhead_ms + (!strcmp(r->status, "ok") ? c->samples * (r->time_us + c->flush_us) / 1000 : 0);
    else if (!strcmp(r->status, "runtime"))
        ms += c->overhead_ms;
    else if (!strcmp(r->status, "timeout"))
        ms += c->timeout_ms;
    return ms;
}

/* ---- the metric ---- */

const double replay_frac[REPLAY_NFRAC] = { 0.01, 0.02, 0.05, 0.10, 0.20 };

double replay_values(const landscape *l, double *value)
{
    double worst = 0;
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->rows[i].status, "ok") && l->rows[i].time_us > worst) worst = l->rows[i].time_us;
    double best = worst;
    for (int i = 0; i < l->n; i++) {
        int ok = !strcmp(l->rows[i].status, "ok");
        value[i] = ok ? l->rows[i].time_us : worst;
        if (ok && value[i] < best) best = value[i];
    }
    return best;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void replay_random_expected(const double *value, int n, double *expect)
{
    double *a = xmalloc(sizeof *a * (size_t)(n ? n : 1));
    memcpy(a, value, sizeof *a * (size_t)n);
    qsort(a, (size_t)n, sizeof *a, cmp_double);
    /* P(the best of k draws is a[r] or later) = C(n - r, k) / C(n, k), r
    ** 0-based; consecutive ratios give it without big numbers. */
    for (int k = 1; k <= n; k++) {
        double q = 1, e = 0;
        for (int r = 0; r < n && q > 0; r++) {
            int m = n - r;
            double next = m - k > 0 ? q * (double)(m - k) / m : 0;
            e += a[r] * (q - next);
            q = next;
        }
        expect[k - 1] = e;
    }
    free(a);
}

double replay_gap_closed(double r, double b, double opt)
{
    double gap = r - opt;
    if (gap <= 1e-12 * fabs(opt)) return b <= opt * (1 + 1e-12) ? 1 : 0;
    return (r - b) / gap;
}

/* Student's t, two-sided 95%, by degrees of freedom. */
static double t975(int df)
{
    static const double t[] = { 0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042 };
    if (df < 1) return NAN;
    if (df <= 30) return t[df];
    if (df <= 60) return 2.042 - (df - 30) * (2.042 - 2.000) / 30;
    return 1.96;
}

void replay_mean_ci(const double *x, int n, double *mean, double *lo, double *hi)
{
    double s = 0;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(x[i])) { s += x[i]; k++; }
    if (!k) { *mean = *lo = *hi = NAN; return; }
    double m = s / k, ss = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(x[i])) ss += (x[i] - m) * (x[i] - m);
    *mean = m;
    if (k < 2) { *lo = *hi = m; return; }
    double h = t975(k - 1) * sqrt(ss / (k - 1)) / sqrt((double)k);
    *lo = m - h;
    *hi = m + h;
}

void replay_trace_free(replay_trace *t)
{
    free(t->best);
    free(t->wall);
    memset(t, 0, sizeof *t);
}

static int budget_evals(double frac, int n)
{
    int k = (int)lround(frac * n);
    return k < 1 ? 1 : k;
}

void replay_score_trace(const replay_trace *t, const double *value, int n, const double *expect,
                        const double *rand_t, double total_s, replay_score *out)
{
    double opt = HUGE_VAL, worst = 0;
    for (int i = 0; i < n; i++) {
        if (value[i] < opt) opt = value[i];
        if (value[i] > worst) worst = value[i];
    }
    memset(out, 0, sizeof *out);
    for (int f = 0; f < REPLAY_NFRAC; f++) {
        int k = budget_evals(replay_frac[f], n);
        /* A run that stopped early (it tried everything it would) keeps its best. */
        int stopped_short = t->n < k && t->n < n;
        out->gap_evals[f] = stopped_short || !t->n ? NAN : replay_gap_closed(expect[k - 1], t->best[(k < t->n ? k : t->n) - 1], opt);
        double at = replay_frac[f] * total_s, b = worst;
        int i = 0;
        while (i < t->n && t->wall[i] <= at) b = t->best[i++];
        out->gap_time[f] = (t->n && i == t->n && t->n < n && t->wall[t->n - 1] < at) ? NAN : replay_gap_closed(rand_t[f], b, opt);
    }
    for (int i = 0; i < t->n; i++) {
        if (!out->evals_to3 && t->best[i] <= opt * 1.03) {
            out->evals_to3 = i + 1;
            out->wall_to3 = t->wall[i];
        }
        if (!out->evals_to1 && t->best[i] <= opt * 1.01) out->evals_to1 = i + 1;
    }
}

/* splitmix64, as search/space.lua's generator. */
static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void replay_random_by_time(const double *value, const double *cost, int n, int rounds, unsigned long long seed,
                           double *rand_t, double *total_s)
{
    double total = 0, worst = 0;
    for (int i = 0; i < n; i++) {
        total += cost[i];
        if (value[i] > worst) worst = value[i];
    }
    *total_s = total;
    int *order = xmalloc(sizeof *order * (size_t)(n ? n : 1));
    uint64_t s = seed;
    for (int f = 0; f < REPLAY_NFRAC; f++) rand_t[f] = 0;
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < n; i++) order[i] = i;
        for (int i = n - 1; i > 0; i--) {
            int j = (int)(mix(&s) % (uint64_t)(i + 1));
            int tmp = order[i];
            order[i] = order[j];
            order[j] = tmp;
        }
        double wall = 0, b = worst;
        int i = 0;
        for (int f = 0; f < REPLAY_NFRAC; f++) {
            double at = replay_frac[f] * total;
            while (i < n && wall + cost[order[i]] <= at) {
                wall += cost[order[i]];
                if (value[order[i]] < b) b = value[order[i]];
                i++;
            }
            rand_t[f] += b;
        }
    }
    for (int f = 0; f < REPLAY_NFRAC; f++) rand_t[f] /= rounds > 0 ? rounds : 1;
    free(order);
}

/* ---- one run ---- */

typedef struct run_opts {
    const replay_cost *cost;
    int budget;             /* evaluations */
    int batch;
    int ahead;              /* configs asked and untold behind the one evaluated (the sweep's --ahead) */
    char **warm;
    int nwarm;
    int trace;              /* print each evaluation */
    const char *strategy;
    unsigned long long seed;
} run_opts;

/* The row of config (linear: landscapes are a few thousand rows, asked once each). */
static int find_row(const landscape *l, const char *config)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->rows[i].config, config)) return i;
    return -1;
}

static int run_one(tmpl *T, const landscape *l, const double *value, const run_opts *o, replay_trace *tr)
{
    memset(tr, 0, sizeof *tr);
    char **configs = xmalloc(sizeof *configs * (size_t)l->n);
    for (int i = 0; i < l->n; i++) configs[i] = l->rows[i].config;
    search *s = search_of_configs(T, o->strategy, configs, l->n, o->seed, o->budget, o->warm, o->nwarm);
    free(configs);
    if (!s) return error("%s", tmpl_errmsg(T));
    tr->best = xmalloc(sizeof *tr->best * (size_t)o->budget);
    tr->wall = xmalloc(sizeof *tr->wall * (size_t)o->budget);
    char *asked = xcalloc((size_t)l->n, 1);
    double best = HUGE_VAL, wall = 0;
    int rc = 0;
    best = 0;   /* nothing found yet: the slowest */
    for (int i = 0; i < l->n; i++)
        if (value[i] > best) best = value[i];
    /* Asked and not yet told, in order: as a sweep, a batch is asked
    ** whenever fewer than o->ahead wait behind the one evaluated next. */
    int *pend = xmalloc(sizeof *pend * (size_t)l->n), np = 0, done = 0;
    while (!rc && tr->n < o->budget) {
        while (!rc && !done && (np == 0 || np - 1 < o->ahead)) {
            char **cfgs;
            int got;
            if (search_ask(s, o->batch, &cfgs, &got)) { rc = error("%s", tmpl_errmsg(T)); break; }
            done = !got;
            for (int j = 0; j < got; j++) {
                int i = rc ? -1 : find_row(l, cfgs[j]);
                if (!rc && i < 0) rc = error("strategy '%s' asked for %s, which is not in the space", o->strategy, cfgs[j]);
                else if (!rc && asked[i]) rc = error("strategy '%s' asked for %s twice", o->strategy, cfgs[j]);
                if (!rc) {
                    asked[i] = 1;
                    pend[np++] = i;
                }
                free(cfgs[j]);
            }
            free(cfgs);
        }
        if (rc || !np) break;
        int i = pend[0];
        memmove(pend, pend + 1, sizeof *pend * (size_t)--np);
        const land_row *r = &l->rows[i];
        wall += replay_cost_ms(o->cost, r) / 1000;
        if (value[i] < best && !strcmp(r->status, "ok")) best = value[i];
        tr->best[tr->n] = best;
        tr->wall[tr->n] = wall;
        tr->n++;
        if (o->trace)
            printf("trace\t%s\t%llu\t%s %s %s %s\t%d\t%s\t%.3f\t%.3f\t%.3f\t%s\n", o->strategy, o->seed, l->op,
                   l->tmpl, l->dtype, l->bucket, tr->n, r->status, r->time_us, best, wall, r->config);
        measurement m;
        memset(&m, 0, sizeof m);
        snprintf(m.status, sizeof m.status, "%s", r->status);
        m.median_us = r->time_us;
        m.spread = r->spread;
        m.registers = r->registers;
        m.spills = r->spills;
        m.smem = r->smem;
        m.compile_ms = r->compile_ms;
        if (search_tell_measured(s, r->config, &m)) rc = error("%s", tmpl_errmsg(T));
    }
    free(pend);
    free(asked);
    search_free(s);
    return rc;
}

/* ---- the command ---- */

typedef struct export_ctx {
    FILE *f;
    long long rows;
} export_ctx;

static int export_row(const measurement *m, void *ctx)
{
    export_ctx *x = ctx;
    if (!strcmp(m->status, "constraint")) return 0;
    fprintf(x->f, "%s\t%s\t%s\t%s\t%s\t%s\t%.4f\t%.1f\t%.5f\t%d\t%d\t%d\t%s\n", m->op, m->tmpl, m->arch, m->dtype,
            m->bucket, m->status, !strcmp(m->status, "ok") ? m->median_us : 0, m->compile_ms, m->spread, m->registers,
            m->spills, m->smem, m->config);
    x->rows++;
    return 0;
}

static int replay_export(int argc, char **argv)
{
    opt opts[] = { { "--db", 1, 0, 0 }, { "--op", 1, 0, 0 }, { "-o", 1, 0, 0 }, { 0, 0, 0, 0 } };
    const char *pos[1];
    int np, rc = cli_parse("replay", REPLAY_USAGE, REPLAY_SUMMARY, argc, argv, opts, pos, 0, &np);
    if (rc) return rc;
    const char *db = cli_db_path(opts[0].value), *op = opts[1].value, *outp = opts[2].value;
    if (!file_exists(db)) {
        error("no registry at '%s'", db);
        return EXIT_INPUT;
    }
    reg *R;
    if (reg_open(db, 1, &R)) {
        error("%s", reg_errmsg(R));
        reg_close(R);
        return EXIT_INPUT;
    }
    outfile o;
    if (out_open(&o, outp)) {
        error("cannot write '%s': %s", outp, o.why);
        out_close(&o, 0);
        reg_close(R);
        return EXIT_FAIL;
    }
    FILE *f = o.f;
    char when[32];
    iso_time(when);
    fprintf(f, "# aitune landscape v1\n"
               "# measured: exported from the registry %s by aitune %s at %s%s%s.\n"
               "# The newest measurement of each config; one landscape per (op, template, arch, dtype, bucket),\n"
               "# timed the way its newest measurement was (flush, stream or neighbour).\n"
               "op\ttemplate\tarch\tdtype\tbucket\tstatus\ttime_us\tcompile_ms\tspread\tregisters\tspills\tsmem\tconfig\n",
            db, AITUNE_TOOL_VERSION, when, op ? ", op " : "", op ? op : "");
    export_ctx x = { f, 0 };
    rc = reg_measure_each(R, op, export_row, &x) ? EXIT_INPUT : EXIT_OK;
    if (rc) error("%s", reg_errmsg(R));
    reg_close(R);
    if (out_close(&o, !rc) && !rc) {
        error("cannot write '%s': %s", outp ? outp : "-", o.why);
        rc = EXIT_FAIL;
    }
    if (!rc && !x.rows) warning("no measurements%s%s in '%s'", op ? " of " : "", op ? op : "", db);
    if (!rc) fprintf(stderr, "replay export: %lld rows\n", x.rows);
    return rc;
}

/* The warm-start configs of landscape li: the k fastest ok configs of the
** landscapes before and after it of the same op, template, arch, dtype. */
static int neighbour_warm(const landscape *ls, int nls, int li, int k, char ***out)
{
    char **w = xcalloc((size_t)(2 * k + 1), sizeof *w);
    int n = 0;
    for (int d = -1; d <= 1; d += 2) {
        int j = li + d;
        if (j < 0 || j >= nls) continue;
        const landscape *a = &ls[li], *b = &ls[j];
        if (strcmp(a->op, b->op) || strcmp(a->tmpl, b->tmpl) || strcmp(a->arch, b->arch) || strcmp(a->dtype, b->dtype))
            continue;
        char *used = xcalloc((size_t)b->n, 1);
        for (int t = 0; t < k; t++) {
            int bi = -1;
            for (int i = 0; i < b->n; i++)
                if (!used[i] && !strcmp(b->rows[i].status, "ok") && (bi < 0 || b->rows[i].time_us < b->rows[bi].time_us))
                    bi = i;
            if (bi < 0) break;
            used[bi] = 1;
            w[n++] = b->rows[bi].config;
        }
        free(used);
    }
    *out = w;
    return n;
}

/* Figures of one (landscape, strategy) over its seeds. */
typedef struct tally {
    double gap_e[REPLAY_NFRAC][3], gap_t[REPLAY_NFRAC][3];
    double to3[3], to1[3];      /* evaluations, as a share of the space, reached seeds only */
    int reached3, reached1, within3_at10;
} tally;

static void fmt_ci(char *out, size_t cap, const double v[3])
{
    if (isnan(v[0])) snprintf(out, cap, "-");
    else snprintf(out, cap, "%.2f [%.2f,%.2f]", v[0], v[1], v[2]);
}

/* What `aitune replay` was asked. */
typedef struct replay_args {
    const char **files;
    int nfiles;
    const char *strategies, *only;
    long long seeds, seed0, batch, warmk, ahead;
    double budget;
    int tsv, trace, joint;
} replay_args;

static int replay_parse(int argc, char **argv, replay_args *a)
{
    opt opts[] = { { "--strategy", 1, 0, 0 }, { "--only", 1, 0, 0 }, { "--budget", 1, 0, 0 }, { "--seeds", 1, 0, 0 },
                   { "--seed", 1, 0, 0 },     { "--batch", 1, 0, 0 }, { "--warm", 1, 0, 0 },   { "--ahead", 1, 0, 0 },
                   { "--tsv", 0, 0, 0 },      { "--trace", 0, 0, 0 }, { "--joint", 0, 0, 0 },  { 0, 0, 0, 0 } };
    *a = (replay_args){ .strategies = "anneal,genetic,model,local,random", .seeds = 20, .seed0 = 1, .batch = 8,
                        .budget = 0.2 };
    a->files = xcalloc((size_t)argc + 1, sizeof *a->files);
    int rc = cli_parse("replay", REPLAY_USAGE, REPLAY_SUMMARY, argc, argv, opts, a->files, argc, &a->nfiles);
    if (rc) return rc;
    if (opts[0].set) a->strategies = opts[0].value;
    a->only = opts[1].value;
    if (opts[2].set) {
        char *end;
        a->budget = strtod(opts[2].value, &end);
        if (!*opts[2].value || *end || !(a->budget > 0 && a->budget <= 1))
            return cli_usage_error("replay", REPLAY_USAGE, "--budget '%s' must be a share of the space in (0, 1]", opts[2].value);
    }
    /* Counts: seeds and batch at least 1; the first seed, warm and ahead may be 0. */
    long long *dst[] = { &a->seeds, &a->seed0, &a->batch, &a->warmk, &a->ahead };
    for (int i = 0; i < 5 && !rc; i++)
        if (opts[3 + i].set)
            rc = cli_count("replay", REPLAY_USAGE, opts[3 + i].name, opts[3 + i].value, i == 0 || i == 2 ? 1 : 0, 1000000, dst[i]);
    a->tsv = opts[8].set;
    a->trace = opts[9].set;
    a->joint = opts[10].set;
    if (!rc && !a->nfiles) rc = cli_usage_error("replay", REPLAY_USAGE, "no landscape file");
    return rc;
}

/* The landscapes of every file, their configs as the strategies give them
** back (canonical JSON), joined per bucket with --joint. EXIT_INPUT (said)
** when a file or a config is bad. */
static int replay_landscapes(tmpl *T, const replay_args *a, landscape **out, int *nout)
{
    landscape *ls = NULL;
    int nls = 0;
    char err[512];
    for (int fi = 0; fi < a->nfiles; fi++) {
        landscape *one;
        int n;
        if (replay_load(a->files[fi], &one, &n, err, sizeof err)) {
            error("%s", err);
            replay_free(ls, nls);
            return EXIT_INPUT;
        }
        ls = xrealloc(ls, sizeof *ls * (size_t)(nls + n + 1));
        if (n) memcpy(ls + nls, one, sizeof *ls * (size_t)n);
        nls += n;
        free(one);
    }
    for (int li = 0; li < nls; li++)
        for (int i = 0; i < ls[li].n; i++) {
            land_row *r = &ls[li].rows[i];
            strbuf sb = STRBUF_INIT;
            if (tmpl_push_config(T, r->config) || tmpl_config_json(T, -1, &sb)) {
                error("landscape %s %s %s: config %s: %s", ls[li].op, ls[li].tmpl, ls[li].bucket, r->config, tmpl_errmsg(T));
                sb_free(&sb);
                replay_free(ls, nls);
                return EXIT_INPUT;
            }
            lua_pop(tmpl_lua(T), 1);
            free(r->config);
            r->config = sb.buf;
        }
    if (a->joint && replay_join(T, &ls, &nls, err, sizeof err)) {
        error("%s", err);
        replay_free(ls, nls);
        return EXIT_INPUT;
    }
    *out = ls;
    *nout = nls;
    return 0;
}

/* One landscape's figures for one strategy over the seeds; *pass when most
** seeds (80%) are within 3% by 10% of the space. */
static int replay_tally(tmpl *T, const landscape *l, const double *value, const double *rexp, const double *rand_t,
                        double total_s, const run_opts *base, const replay_args *a, tally *t, int *pass)
{
    long long seeds = a->seeds;
    replay_score *sc = xcalloc((size_t)seeds, sizeof *sc);
    int rc = 0;
    for (long long k = 0; k < seeds && !rc; k++) {
        run_opts o = *base;
        o.seed = (unsigned long long)(a->seed0 + k);
        replay_trace tr;
        if (run_one(T, l, value, &o, &tr)) rc = EXIT_FAIL;
        else replay_score_trace(&tr, value, l->n, rexp, rand_t, total_s, &sc[k]);
        replay_trace_free(&tr);
    }
    if (rc) {
        free(sc);
        return rc;
    }
    memset(t, 0, sizeof *t);
    double *x = xmalloc(sizeof *x * (size_t)seeds);
    for (int f = 0; f < REPLAY_NFRAC; f++) {
        for (int k = 0; k < seeds; k++) x[k] = sc[k].gap_evals[f];
        replay_mean_ci(x, (int)seeds, &t->gap_e[f][0], &t->gap_e[f][1], &t->gap_e[f][2]);
        for (int k = 0; k < seeds; k++) x[k] = sc[k].gap_time[f];
        replay_mean_ci(x, (int)seeds, &t->gap_t[f][0], &t->gap_t[f][1], &t->gap_t[f][2]);
    }
    int m3 = 0, m1 = 0;
    for (int k = 0; k < seeds; k++) {
        if (sc[k].evals_to3) x[m3++] = (double)sc[k].evals_to3 / l->n;
        if (sc[k].evals_to3 && sc[k].evals_to3 <= budget_evals(0.10, l->n)) t->within3_at10++;
    }
    replay_mean_ci(x, m3, &t->to3[0], &t->to3[1], &t->to3[2]);
    for (int k = 0; k < seeds; k++)
        if (sc[k].evals_to1) x[m1++] = (double)sc[k].evals_to1 / l->n;
    replay_mean_ci(x, m1, &t->to1[0], &t->to1[1], &t->to1[2]);
    t->reached3 = m3;
    t->reached1 = m1;
    *pass = t->within3_at10 * 5 >= seeds * 4;
    free(x);
    free(sc);
    return 0;
}

/* A tally's lines: the TSV rows, or the table's row. */
static void replay_print(const char *name, const char *strategy, const tally *t, const replay_args *a)
{
    long long seeds = a->seeds;
    if (a->tsv) {
        for (int f = 0; f < REPLAY_NFRAC; f++) {
            printf("%s\t%s\tgap_evals\t%g\t%.4f\t%.4f\t%.4f\n", name, strategy, replay_frac[f], t->gap_e[f][0],
                   t->gap_e[f][1], t->gap_e[f][2]);
            printf("%s\t%s\tgap_time\t%g\t%.4f\t%.4f\t%.4f\n", name, strategy, replay_frac[f], t->gap_t[f][0],
                   t->gap_t[f][1], t->gap_t[f][2]);
        }
        printf("%s\t%s\tevals_to3\t%d/%lld\t%.4f\t%.4f\t%.4f\n", name, strategy, t->reached3, seeds, t->to3[0],
               t->to3[1], t->to3[2]);
        printf("%s\t%s\tevals_to1\t%d/%lld\t%.4f\t%.4f\t%.4f\n", name, strategy, t->reached1, seeds, t->to1[0],
               t->to1[1], t->to1[2]);
        printf("%s\t%s\twithin3_at10\t%lld\t%.4f\t%.4f\t%.4f\n", name, strategy, seeds, (double)t->within3_at10 / seeds,
               0.0, 0.0);
    } else {
        char c[4][40], b3[40], b1[40];
        fmt_ci(c[0], sizeof c[0], t->gap_e[1]);
        fmt_ci(c[1], sizeof c[1], t->gap_e[2]);
        fmt_ci(c[2], sizeof c[2], t->gap_e[3]);
        fmt_ci(c[3], sizeof c[3], t->gap_t[2]);
        if (t->reached3) snprintf(b3, sizeof b3, "%.1f%% (%d/%lld)", 100 * t->to3[0], t->reached3, seeds);
        else snprintf(b3, sizeof b3, "- (0/%lld)", seeds);
        if (t->reached1) snprintf(b1, sizeof b1, "%.1f%% (%d/%lld)", 100 * t->to1[0], t->reached1, seeds);
        else snprintf(b1, sizeof b1, "- (0/%lld)", seeds);
        printf("  %-9s %-19s %-19s %-19s %-19s %-14s %-14s %d/%lld\n", strategy, c[0], c[1], c[2], c[3], b3, b1,
               t->within3_at10, seeds);
    }
    fflush(stdout);
}

/* The strategies' figures summed over the landscapes scored. */
typedef struct replay_sums {
    int nstrat, scored;
    char *strat[32];
    double (*e)[REPLAY_NFRAC], (*t)[REPLAY_NFRAC];
    int *pass3;
} replay_sums;

/* Landscape li scored by every strategy. */
static int replay_landscape(tmpl *T, const landscape *ls, int nls, int li, const replay_cost *cost, const replay_args *a,
                            replay_sums *S)
{
    const landscape *l = &ls[li];
    char name[256];
    snprintf(name, sizeof name, "%s %s %s %s %s", l->op, l->tmpl, l->arch, l->dtype, l->bucket);
    if (a->only && !strstr(name, a->only)) return 0;
    double *value = xmalloc(sizeof *value * (size_t)l->n), *rexp = xmalloc(sizeof *rexp * (size_t)l->n);
    double *cs = xmalloc(sizeof *cs * (size_t)l->n), rand_t[REPLAY_NFRAC], total_s;
    double opt = replay_values(l, value);
    int nok = 0, rc = 0;
    for (int i = 0; i < l->n; i++) {
        cs[i] = replay_cost_ms(cost, &l->rows[i]) / 1000;
        nok += !strcmp(l->rows[i].status, "ok");
    }
    if (!nok) {
        warning("landscape %s: no ok config, nothing to score", name);
        free(value), free(rexp), free(cs);
        return 0;
    }
    replay_random_expected(value, l->n, rexp);
    replay_random_by_time(value, cs, l->n, 400, 0x5eed, rand_t, &total_s);
    char **warm = NULL;
    int nwarm = a->warmk > 0 ? neighbour_warm(ls, nls, li, (int)a->warmk, &warm) : 0;
    int bud = (int)ceil(a->budget * l->n);
    if (!a->tsv) {
        printf("%s: %d configs (%d ok), best %.2f us, exhaustive sweep %.0f s; budget %d evaluations%s\n", name, l->n, nok,
               opt, total_s, bud, nwarm ? ", warm-started" : "");
        printf("  %-9s %-19s %-19s %-19s %-19s %-14s %-14s %s\n", "strategy", "gap@2% evals", "gap@5% evals",
               "gap@10% evals", "gap@5% time", "evals to 3%", "evals to 1%", "3% by 10%");
    }
    S->scored++;
    for (int si = 0; si < S->nstrat && !rc; si++) {
        run_opts base = { cost, bud, (int)a->batch, (int)a->ahead, warm, nwarm, a->trace, S->strat[si], 0 };
        tally t;
        int pass;
        if ((rc = replay_tally(T, l, value, rexp, rand_t, total_s, &base, a, &t, &pass))) break;
        for (int f = 0; f < REPLAY_NFRAC; f++) {
            S->e[si][f] += t.gap_e[f][0];
            S->t[si][f] += t.gap_t[f][0];
        }
        S->pass3[si] += pass;
        replay_print(name, S->strat[si], &t, a);
    }
    free(warm);
    free(value), free(rexp), free(cs);
    return rc;
}

int replay_main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "export")) return replay_export(argc - 1, argv + 1);
    replay_args a;
    int rc = replay_parse(argc, argv, &a);
    if (rc) {
        free(a.files);
        return rc;
    }
    tmpl *T = tmpl_open(cli_root());
    landscape *ls = NULL;
    int nls = 0;
    rc = replay_landscapes(T, &a, &ls, &nls);
    free(a.files);
    if (rc) {
        tmpl_close(T);
        return rc;
    }
    replay_sums S = { 0 };
    char *list = xstrdup(a.strategies);
    for (char *sv = NULL, *p = strtok_r(list, ",", &sv); p && S.nstrat < 32; p = strtok_r(NULL, ",", &sv))
        S.strat[S.nstrat++] = p;
    for (int i = 0; i < S.nstrat && !rc; i++)
        if (!search_exists(T, S.strat[i])) {
            error("%s", tmpl_errmsg(T));
            rc = EXIT_USAGE;
        }
    replay_cost cost = replay_default_cost;
    cost.compile_par = (double)a.batch;
    /* Per strategy, over landscapes: the mean figures, and the bar's counts. */
    S.e = xcalloc((size_t)S.nstrat + 1, sizeof *S.e);
    S.t = xcalloc((size_t)S.nstrat + 1, sizeof *S.t);
    S.pass3 = xcalloc((size_t)S.nstrat + 1, sizeof *S.pass3);
    if (a.tsv && !rc) printf("landscape\tstrategy\tfigure\tbudget\tmean\tlo\thi\n");
    for (int li = 0; li < nls && !rc; li++) rc = replay_landscape(T, ls, nls, li, &cost, &a, &S);
    if (!rc && S.scored > 1 && !a.tsv) {
        printf("over %d landscapes (mean of each one's mean):\n", S.scored);
        printf("  %-9s %7s %7s %7s %7s %7s | %7s %7s %7s  buckets within 3%% by 10%%\n", "strategy", "1%", "2%", "5%", "10%",
               "20%", "t2%", "t5%", "t10%");
        for (int si = 0; si < S.nstrat; si++) {
            printf("  %-9s", S.strat[si]);
            for (int f = 0; f < REPLAY_NFRAC; f++) printf(" %7.2f", S.e[si][f] / S.scored);
            printf(" |");
            for (int f = 1; f < 4; f++) printf(" %7.2f", S.t[si][f] / S.scored);
            printf("  %d/%d\n", S.pass3[si], S.scored);
        }
    }
    free(S.e), free(S.t), free(S.pass3);
    free(list);
    tmpl_close(T);
    replay_free(ls, nls);
    return rc;
}
