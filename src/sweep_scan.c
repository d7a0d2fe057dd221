/* sweep_scan.c: see sweep_scan.h. */
#define _GNU_SOURCE
#include "sweep_scan.h"
#include "progress.h"
#include "aitune.h"
#include "identity.h"
#include "registry_scan.h"
#include "vendor.h"
#include "sweep_task.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* Sort out[0, n) and drop repeats: the new count. */
static int sort_unique(long long *out, int n)
{
    qsort(out, (size_t)n, sizeof *out, cmp_ll);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!k || out[k - 1] != out[i]) out[k++] = out[i];
    return k;
}

static int add(long long *out, int *n, int cap, long long v)
{
    if (*n >= cap) return -1;
    out[(*n)++] = v;
    return 0;
}

int scan_sizes(const spec_dim *d, const scan_pick *pick, long long *out, int cap)
{
    int n = 0;
    if (!d->range) {
        for (int i = 0; i < d->nvalues; i++)
            if (add(out, &n, cap, d->values[i])) return -1;
        return sort_unique(out, n);
    }
    long long lo = d->range_lo, hi = d->range_hi;
    if (pick && pick->step > 0) {
        for (long long s = lo; s <= hi; s += pick->step)
            if (add(out, &n, cap, s)) return -1;
        if (add(out, &n, cap, hi)) return -1;
        return sort_unique(out, n);
    }
    if (!pick || pick->sample <= 0) {
        if (hi - lo + 1 > cap) return -1;
        for (long long s = lo; s <= hi; s++) out[n++] = s;
        return n;
    }
    /* A sample: the ends, each log2 bucket's first and last sizes of the
    ** range (a config's tiling changes there), the sizes tuned, and sample
    ** sizes evenly spread. */
    if (add(out, &n, cap, lo) || add(out, &n, cap, hi)) return -1;
    for (long long b = 1; b <= hi && b > 0; b *= 2) {
        if (2 * b - 1 < lo) continue;
        if (add(out, &n, cap, b > lo ? b : lo) || add(out, &n, cap, 2 * b - 1 < hi ? 2 * b - 1 : hi)) return -1;
    }
    for (int i = 0; i < d->nvalues; i++)
        if (add(out, &n, cap, d->values[i])) return -1;
    for (int i = 0; i < pick->sample; i++) {
        long long s = pick->sample == 1 ? lo : lo + (long long)((double)(hi - lo) * i / (pick->sample - 1) + 0.5);
        if (add(out, &n, cap, s)) return -1;
    }
    return sort_unique(out, n);
}

/* One (task, dtype) of the scan: its sizes and what it found. */
typedef struct scan_set {
    const spec_task *st;
    const char *dtype;
    int nd;                         /* the op's dims, in its order */
    char dims[TMPL_MAXDIMS][16];
    int perm[TMPL_MAXDIMS];         /* op dim d is the task's dim perm[d] */
    long long *sizes[TMPL_MAXDIMS]; /* per op dim */
    int nsizes[TMPL_MAXDIMS];
    /* what it found */
    int n, holes, failed, nx;
    double log_x, worst_x;
    long long worst_at[TMPL_MAXDIMS];
} scan_set;

static void set_free(scan_set *c)
{
    for (int d = 0; d < TMPL_MAXDIMS; d++) free(c->sizes[d]);
}

/* The set's dims in the op's order and each one's sizes. -1: said. */
static int set_init(sw *S, const spec_task *st, const char *dtype, scan_set *c, long long *total)
{
    memset(c, 0, sizeof *c);
    c->st = st;
    c->dtype = dtype;
    int ndt;
    char dims[TMPL_MAXDIMS][16], dts[32][16];
    if (tmpl_op_info(S->T, st->op, &c->nd, dims, &ndt, dts, 32)) return error("%s", tmpl_errmsg(S->T));
    *total = 1;
    for (int d = 0; d < c->nd; d++) {
        snprintf(c->dims[d], sizeof c->dims[d], "%s", dims[d]);
        c->perm[d] = -1;
        for (int k = 0; k < st->ndims; k++)
            if (!strcmp(st->dims[k].name, dims[d])) c->perm[d] = k;
        if (c->perm[d] < 0) return error("spec '%s' line %d: op '%s' has a dim '%s' the task does not give", S->sp.path,
                                         st->line, st->op, dims[d]);
        c->sizes[d] = xcalloc(SCAN_MAXSIZES, sizeof *c->sizes[d]);
        c->nsizes[d] = scan_sizes(&st->dims[c->perm[d]], &S->o->scan_pick, c->sizes[d], SCAN_MAXSIZES);
        if (c->nsizes[d] < 0 || (*total *= c->nsizes[d]) > SCAN_MAXSIZES)
            return error("spec '%s' line %d: %s %s: more than %d shapes to scan (give --sample N or --step N)",
                         S->sp.path, st->line, st->op, dtype, SCAN_MAXSIZES);
    }
    return 0;
}

/* The best measurement the registry holds at the shape on this GPU's
** hardware, timed the task's way: 0 when none. */
static double best_at(sw *S, const op_task *t, const char *hw)
{
    char shape[256];
    tmpl_shape_json(t, shape, sizeof shape);
    double us = 0;
    if (reg_scan_best(S->R, t->op, S->arch, t->dtype, shape, hw, t->stream, &us)) return -1;
    return us;
}

/* The answer at shape timed, against the vendor where it serves the op:
** row r filled. 0, or -1 when a tool failed (said). */
static int scan_one(sw *S, aitune *h, const char *hw, scan_set *c, const long long *shape, reg_scan *r)
{
    const spec_task *st = c->st;
    op_task t;
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "%s", st->op);
    snprintf(r->arch, sizeof r->arch, "%s", S->arch);
    snprintf(r->dtype, sizeof r->dtype, "%s", c->dtype);
    snprintf(r->hw, sizeof r->hw, "%s", hw);
    r->stream = st->stream;
    r->device = S->dev_id;
    r->run = S->run_id;
    if (tmpl_task(S->T, st->op, c->dtype, shape, &t)) return error("%s", tmpl_errmsg(S->T));
    t.stream = st->stream;
    tmpl_shape_json(&t, r->shape, sizeof r->shape);
    aitune_choice ch;
    const char *on = NULL;
    int lrc = aitune_lookup_gpu(h, st->op, S->arch, c->dtype, shape, c->nd, hw, &ch, &on);
    if (lrc == AITUNE_NOTFOUND) {
        snprintf(r->status, sizeof r->status, "none");
        snprintf(r->error, sizeof r->error, "the registry has no answer for %s %s", st->op, c->dtype);
        return 0;
    }
    if (lrc) return error("scan: %s", aitune_errmsg(h));
    snprintf(r->level, sizeof r->level, "%s", aitune_level_name(ch.level));
    snprintf(r->bucket, sizeof r->bucket, "%s", ch.bucket ? ch.bucket : "");
    snprintf(r->tmpl, sizeof r->tmpl, "%s", ch.template_name);
    r->config = xstrdup(ch.config);
    if (task_send(S, &t)) return -1;
    char home[96];
    bucket_home(r->bucket, home, sizeof home);
    int vendor_answer = !strcmp(ch.template_name, VENDOR_TEMPLATE);
    if (vendor_answer) {
        reg_vendor v;
        int got = sweep_vendor_measure(&S->V, &t, home, &v);
        if (got < 0) return -1;
        snprintf(r->status, sizeof r->status, "%s", got ? "ok" : v.status);
        if (!got) snprintf(r->error, sizeof r->error, "%s", v.error);
        r->median_us = r->vendor_us = got ? v.median_us : 0;
    } else {
        cand k;
        memset(&k, 0, sizeof k);
        if (cand_build(S, &k, ch.template_name, ch.config, &t) && sw_interrupted()) {
            cand_free(&k);      /* Ctrl-C gave its compile up: no row (r's status stays empty) */
            return 0;
        } else if (k.error || !k.job.ok) {
            snprintf(r->status, sizeof r->status, "compile");
            snprintf(r->error, sizeof r->error, "%s", k.error ? k.error : k.job.error ? k.job.error : "did not compile");
        } else if (!cand_load(S, &k, &t, 0) || !cand_verify(S, &k, 0)) {
            snprintf(r->status, sizeof r->status, "%s", k.m.status);
            snprintf(r->error, sizeof r->error, "%s", k.m.error ? k.m.error : "");
        } else if (sweep_vendor_serves(&S->V, &t)) {
            int raced = sweep_vendor_race(&S->V, &t, home, 0, &r->median_us, &r->vendor_us);
            if (raced < 0) {
                cand_free(&k);
                return -1;
            }
            if (!raced) {   /* the vendor failed (recorded): the answer timed alone */
                final f[1] = { { .median_us = 0 } };
                cand_race(S, &k, 1, f);
                r->median_us = f[0].median_us;
            }
            snprintf(r->status, sizeof r->status, r->median_us > 0 ? "ok" : "runtime");
        } else {
            final f[1] = { { .median_us = 0 } };
            cand_race(S, &k, 1, f);
            r->median_us = f[0].median_us;
            snprintf(r->status, sizeof r->status, r->median_us > 0 ? "ok" : "runtime");
        }
        cand_free(&k);
    }
    r->best_us = best_at(S, &t, hw);
    if (r->best_us < 0) return error("%s", reg_errmsg(S->R));
    int ok = !strcmp(r->status, "ok");
    r->hole = !ok || (r->vendor_us > 0 && r->median_us > r->vendor_us) ||
              (r->best_us > 0 && r->median_us > r->best_us * (1 + SCAN_BEHIND));
    return 0;
}

/* shape in the set's dims ("m=292,n=4096,k=4096") into out. */
static void shape_text(const scan_set *c, const long long *shape, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = 0;
    for (int d = 0; d < c->nd && at < cap; d++)
        at += (size_t)snprintf(out + at, cap - at, "%s%s=%lld", d ? "," : "", c->dims[d], shape[d]);
}

/* A scanned size, on one line of stdout. */
static void say_row(sw *S, const scan_set *c, const long long *shape, const reg_scan *r)
{
    char sh[128], vend[64] = "", best[48] = "";
    shape_text(c, shape, sh, sizeof sh);
    if (r->vendor_us > 0 && r->median_us > 0)
        snprintf(vend, sizeof vend, "  vendor %8.2f us  %5.2fx", r->vendor_us, r->vendor_us / r->median_us);
    if (r->best_us > 0 && r->median_us > r->best_us * (1 + SCAN_BEHIND))
        snprintf(best, sizeof best, "  %.1f%% behind the best measured", 100 * (r->median_us / r->best_us - 1));
    if (strcmp(r->status, "ok"))
        sw_say(S, "HOLE  %s %s %s: %s %s %s: %s%s%s\n", r->op, r->dtype, sh, r->level[0] ? r->level : "-",
               r->bucket[0] ? r->bucket : "-", r->tmpl[0] ? r->tmpl : "-", r->status, r->error[0] ? ": " : "", r->error);
    else
        sw_say(S, "%s  %s %s %s: %s %s %s  %8.2f us%s%s\n", r->hole ? "HOLE" : "scan", r->op, r->dtype, sh, r->level,
               r->bucket[0] ? r->bucket : "-", r->tmpl, r->median_us, vend, best);
}

static void tally(scan_set *c, const long long *shape, const reg_scan *r)
{
    c->n++;
    c->holes += r->hole;
    c->failed += !!strcmp(r->status, "ok");
    if (r->vendor_us > 0 && r->median_us > 0) {
        double x = r->vendor_us / r->median_us;
        c->log_x += log(x);
        if (!c->nx || x < c->worst_x) {
            c->worst_x = x;
            memcpy(c->worst_at, shape, sizeof c->worst_at);
        }
        c->nx++;
    }
}

/* The set's line of the summary, on stderr. */
static void say_set(const scan_set *c)
{
    fprintf(stderr, "scan: %s %s: %d size%s, %d hole%s", c->st->op, c->dtype, c->n, c->n == 1 ? "" : "s", c->holes,
            c->holes == 1 ? "" : "s");
    if (c->failed) fprintf(stderr, " (%d without a time)", c->failed);
    if (c->nx) {
        char at[128];
        shape_text(c, c->worst_at, at, sizeof at);
        fprintf(stderr, "; x vendor: geomean %.3f, worst %.3f at %s", exp(c->log_x / c->nx), c->worst_x, at);
    }
    fputc('\n', stderr);
}

/* Every shape of the set, in order (the last op dim fastest). 0, -1 said. */
static int scan_set_run(sw *S, aitune *h, const char *hw, scan_set *c, long long total)
{
    for (long long i = 0; i < total && !sw_interrupted(); i++) {
        long long shape[TMPL_MAXDIMS], rest = i;
        for (int d = c->nd - 1; d >= 0; d--) {
            shape[d] = c->sizes[d][rest % c->nsizes[d]];
            rest /= c->nsizes[d];
        }
        char sh[128], label[192];
        shape_text(c, shape, sh, sizeof sh);
        snprintf(label, sizeof label, "%s %s %s", c->st->op, c->dtype, sh);
        progress_bucket(S->P, label);
        reg_scan r;
        int rc = scan_one(S, h, hw, c, shape, &r);
        progress_done(S->P, !rc && r.status[0] ? r.median_us : 0, 0);
        if (!rc && r.status[0]) {
            say_row(S, c, shape, &r);
            tally(c, shape, &r);
            if (reg_scan_put(S->R, &r)) rc = error("%s", reg_errmsg(S->R));
        }
        free(r.config);
        if (rc) return -1;
    }
    return 0;
}

int scan_run(sw *S)
{
    aitune *h = NULL;
    if (aitune_open(S->o->db_path, &h) != AITUNE_OK) {
        error("scan: %s", aitune_errmsg(h));
        aitune_close(h);
        return EXIT_INPUT;
    }
    char hw[256];
    identity_hw(&S->dev, hw, sizeof hw);
    sweep_vendor_bind(&S->V, S->o->vendor, S->W, S->R, S->dev_id, S->run_id, S->arch, S->o->kernel_timeout);
    /* Every (task, dtype)'s sizes first: progress counts them all ("scan (sizes):
    ** 37/264, ...; gemm_nt bf16 m=292,..."). */
    int nsets = 0, code = EXIT_OK;
    for (int ti = 0; ti < S->sp.ntasks; ti++) nsets += S->sp.tasks[ti].ndtypes;
    scan_set *sets = xcalloc((size_t)(nsets ? nsets : 1), sizeof *sets);
    long long *totals = xcalloc((size_t)(nsets ? nsets : 1), sizeof *totals), all = 0;
    nsets = 0;
    for (int ti = 0; ti < S->sp.ntasks && !code; ti++)
        for (int di = 0; di < S->sp.tasks[ti].ndtypes && !code; di++, nsets++) {
            if (set_init(S, &S->sp.tasks[ti], S->sp.tasks[ti].dtypes[di], &sets[nsets], &totals[nsets])) code = EXIT_INPUT;
            all += totals[nsets];
        }
    progress_buckets(S->P, 0);
    progress_phase(S->P, "sizes");
    progress_plan(S->P, all);
    for (int i = 0; i < nsets && !code && !sw_interrupted(); i++) {
        if (scan_set_run(S, h, hw, &sets[i], totals[i])) code = EXIT_FAIL;
        if (sets[i].n) {
            progress_clear(S->P);
            say_set(&sets[i]);
        }
    }
    for (int i = 0; i < nsets; i++) set_free(&sets[i]);
    free(sets);
    free(totals);
    aitune_close(h);
    return code;
}
