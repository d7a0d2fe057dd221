/* window.c: `aitune window SPEC --budget D`: one command for a cron job or a
** maintenance window. It looks at every bucket of SPEC on this GPU, orders
** the work by expected gain per second, and does it until the budget is
** spent; what is not reached waits for the next window, and a bucket cut
** short resumes (a sweep never repeats a measurement it has).
**
** The model, kept simple and stated in the plan it prints:
**   holes     a bucket where `aitune scan` found sizes its answer loses
**             (registry_scan.h): worth the most; the sweep races the
**             bucket's finalists at those sizes (sweep_hold.h) and splits
**             or replaces the winner where another does better
**   stale     a winner measured on other hardware or toolchain (status):
**             worth the most, cheap (its finalists are re-raced: retune)
**   misses    a bucket no GPU tuned that covers shapes applications asked
**             for, weighted by how often they asked
**   untuned   a bucket of SPEC with no winner and no misses
**   sampled   this GPU's fresh winner whose search was cut short
** Gain per second = weight / estimated seconds, the seconds from the
** registry's own history (wall time per measurement). */
#define _GNU_SOURCE
#include "window.h"
#include "cli.h"
#include "identity.h"
#include "jit.h"
#include "json.h"
#include "registry_cubin.h"
#include "registry_measure.h"
#include "registry_scan.h"
#include "registry_winner.h"
#include "util.h"
#include "worker.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char window_summary[] =
    "Spend a budget on the most valuable tuning work of SPEC on this GPU, then stop cleanly; run it\n"
    "again (cron, a maintenance window) and it goes on where it stopped. The buckets are ordered by\n"
    "expected gain per second: buckets with holes `aitune scan` found first (their finalists raced at\n"
    "the holes' sizes, the bucket split where another wins there), then stale winners (re-raced as\n"
    "`aitune retune` does: cheap), then\n"
    "buckets holding recorded misses, by how often applications asked, then untuned buckets, then\n"
    "winners whose search was cut short. Buckets with a fresh, complete winner are left alone.\n"
    "The kernels of candidates that lost are dropped when the window ends, as a sweep's end drops\n"
    "its own (until then, a later bucket of the same op takes them from the cache).\n\n"
    "  --budget D   the window (e.g. 30m, 2h); required\n"
    "  --plan       print the ordered work and its estimates; measure nothing (works without a GPU:\n"
    "               planned for the GPU of the registry's newest winner)\n"
    "  --gpu N      the GPU (default 0)\n"
    "  --db PATH    the registry\n"
    "  --quiet      no progress on stderr\n\n"
    "Exit: 0, 1 failure (e.g. no GPU), 2 usage, 3 bad spec or registry, 130 interrupted.";
const char window_usage[] = "aitune window SPEC --budget D [--plan] [--gpu N] [--db PATH] [--quiet]";

enum { W_HOLES, W_STALE, W_MISSES, W_UNTUNED, W_SAMPLED };
static const char *const kind_name[] = { "holes", "stale", "misses", "untuned", "sampled" };
static const double kind_weight[] = { 200 /* per hole */, 100, 0 /* the calls */, 1, 0.5 };
static const double kind_evals[] = { 10, 6, 50, 50, 50 };   /* candidates measured, estimated */

typedef struct wmiss {
    char op[32], arch[16], dtype[16];
    long long v[SPEC_MAXDIMS];
    int nv;
    long long calls;
} wmiss;

/* A hole `aitune scan` found: a size, on a GPU. */
typedef struct whole {
    char op[32], arch[16], dtype[16], hw[256];
    long long v[SPEC_MAXDIMS];
    int nv;
} whole;

typedef struct witem {
    char op[32], dtype[16];
    bucket b;
    int kind;
    long long calls;
    int holes;
    double est_s, score;
} witem;

typedef struct wctx {
    winner_stamps st;
    wmiss *m;
    int nm, capm;
    whole *h;
    int nh, caph;
    const char *root;
    double spm;                 /* seconds per measurement */
    witem *items;
    int ni, capi;
    const witem *target;        /* the run pass: only this bucket */
    device newest;              /* the GPU of the registry's newest winner (a plan without a GPU) */
    int have_newest;
} wctx;

/* A miss's shape: the runtime writes the dims in the op's order, so the
** numbers are read in the order they appear. */
static int keep_miss(const char *op, const char *arch, const char *dtype, const char *shape, long long calls, void *vctx)
{
    wctx *c = vctx;
    if (c->nm == c->capm) c->m = xrealloc(c->m, (size_t)(c->capm = c->capm ? 2 * c->capm : 32) * sizeof *c->m);
    wmiss *m = &c->m[c->nm];
    memset(m, 0, sizeof *m);
    snprintf(m->op, sizeof m->op, "%s", op);
    snprintf(m->arch, sizeof m->arch, "%s", arch);
    snprintf(m->dtype, sizeof m->dtype, "%s", dtype);
    m->calls = calls;
    for (const char *p = shape; *p && m->nv < SPEC_MAXDIMS;) {
        if (*p == ':') {
            char *end;
            long long v = strtoll(p + 1, &end, 10);
            if (end == p + 1) return 0;     /* not a shape aitune wrote: ignored */
            m->v[m->nv++] = v;
            p = end;
        } else {
            p++;
        }
    }
    if (m->nv) c->nm++;
    return 0;
}

static long long calls_in(const wctx *c, const char *op, const char *arch, const char *dtype, const bucket *b)
{
    long long calls = 0;
    for (int i = 0; i < c->nm; i++) {
        const wmiss *m = &c->m[i];
        if (strcmp(m->op, op) || strcmp(m->arch, arch) || strcmp(m->dtype, dtype) || m->nv != b->ndims) continue;
        int in = 1;
        for (int d = 0; d < b->ndims && in; d++) in = m->v[d] >= b->lo[d] && m->v[d] < b->hi[d];
        if (in) calls += m->calls;
    }
    return calls;
}

/* A scan's hole: its sizes, in the op's order (the shape's keys' order). */
static int keep_hole(const reg_scan *sc, void *vctx)
{
    wctx *c = vctx;
    if (!sc->hole) return 0;
    json *sh = NULL;
    char err[64];
    if (json_parse(sc->shape, &sh, err, sizeof err) || sh->type != JSON_OBJ || sh->n < 1 || sh->n > SPEC_MAXDIMS) {
        json_free(sh);
        return 0;   /* not a shape scan wrote: ignored */
    }
    if (c->nh == c->caph) c->h = xrealloc(c->h, (size_t)(c->caph = c->caph ? 2 * c->caph : 32) * sizeof *c->h);
    whole *h = &c->h[c->nh];
    memset(h, 0, sizeof *h);
    snprintf(h->op, sizeof h->op, "%s", sc->op);
    snprintf(h->arch, sizeof h->arch, "%s", sc->arch);
    snprintf(h->dtype, sizeof h->dtype, "%s", sc->dtype);
    snprintf(h->hw, sizeof h->hw, "%s", sc->hw);
    int ok = 1;
    for (int d = 0; d < sh->n; d++) {
        ok &= sh->items[d].type == JSON_NUM && sh->items[d].is_int;
        h->v[d] = sh->items[d].i;
    }
    h->nv = sh->n;
    json_free(sh);
    if (ok) c->nh++;
    return 0;
}

static int holes_in(const wctx *c, const char *hw, const char *op, const char *arch, const char *dtype, const bucket *b)
{
    int n = 0;
    for (int i = 0; i < c->nh; i++) {
        const whole *h = &c->h[i];
        if (strcmp(h->op, op) || strcmp(h->arch, arch) || strcmp(h->dtype, dtype) || strcmp(h->hw, hw) || h->nv != b->ndims)
            continue;
        int in = 1;
        for (int d = 0; d < b->ndims && in; d++) in = h->v[d] >= b->lo[d] && h->v[d] < b->hi[d];
        n += in;
    }
    return n;
}

/* What kind of work a bucket is on dev, or -1 for none. */
static int classify(const wctx *c, const device *dev, const char *op, const char *arch, const char *dtype,
                    const bucket *b, long long *calls, int *holes)
{
    char hw[256];
    identity_hw(dev, hw, sizeof hw);
    int any;
    int mine = winner_stamps_find(&c->st, op, arch, dtype, b->key, hw, &any);
    *calls = calls_in(c, op, arch, dtype, b);
    *holes = holes_in(c, hw, op, arch, dtype, b);
    if (*holes && mine >= 0) return W_HOLES;
    if (any && mine < 0) return W_STALE;
    if (mine >= 0) {
        const winner_stamp *s = &c->st.w[mine];
        if (winner_stamp_stale(s, dev, c->root)) return W_STALE;
        return s->exhaustive ? -1 : W_SAMPLED;
    }
    return *calls > 0 ? W_MISSES : W_UNTUNED;
}

/* The plan pass: collect, measure nothing. */
static int plan_want(void *vctx, const device *dev, const char *op, const char *arch, const char *dtype, const bucket *b)
{
    wctx *c = vctx;
    long long calls;
    int holes;
    int kind = classify(c, dev, op, arch, dtype, b, &calls, &holes);
    if (kind < 0) return 0;
    if (c->ni == c->capi) c->items = xrealloc(c->items, (size_t)(c->capi = c->capi ? 2 * c->capi : 32) * sizeof *c->items);
    witem *it = &c->items[c->ni++];
    memset(it, 0, sizeof *it);
    snprintf(it->op, sizeof it->op, "%s", op);
    snprintf(it->dtype, sizeof it->dtype, "%s", dtype);
    it->b = *b;
    it->kind = kind;
    it->calls = calls;
    it->holes = holes;
    it->est_s = kind_evals[kind] * c->spm;
    it->score = (kind == W_MISSES ? (double)calls : kind == W_HOLES ? kind_weight[kind] * holes : kind_weight[kind]) /
                it->est_s;
    return 0;
}

static int run_want(void *vctx, const device *dev, const char *op, const char *arch, const char *dtype, const bucket *b)
{
    (void)dev;
    (void)arch;
    const wctx *c = vctx;
    return !strcmp(c->target->op, op) && !strcmp(c->target->dtype, dtype) && !strcmp(c->target->b.key, b->key);
}

/* Best first; equal scores keep the spec's order. */
static int cmp_item(const void *a, const void *b)
{
    const witem *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return 0;
}

static void wctx_free(wctx *c)
{
    winner_stamps_free(&c->st);
    free(c->m);
    free(c->h);
    free(c->items);
}

/* A reg_winners callback: the newest run that wrote a winner. */
static int newest_run(const winner *w, void *ctx)
{
    long long *run = ctx;
    if (w->run > *run) *run = w->run;
    return 0;
}

static int load(wctx *c, const char *db)
{
    reg *r;
    if (reg_open(db, 1, &r) || reg_winner_identities(r, winner_stamps_add, &c->st) || reg_misses_each(r, keep_miss, c) ||
        reg_scan_each(r, NULL, keep_hole, c)) {
        error("%s", reg_errmsg(r));
        reg_close(r);
        return EXIT_INPUT;
    }
    c->spm = reg_seconds_per_measurement(r);
    if (c->spm <= 0) c->spm = 1;    /* no history yet: a guess */
    long long run = 0;
    if (reg_winners(r, newest_run, &run) == 0 && run) {
        reg_run rr;
        if (reg_run_get(r, run, &rr) == 1) {
            c->newest = rr.dev;
            c->have_newest = 1;
        }
    }
    reg_close(r);
    return 0;
}

/* The plan's walk over SPEC where no GPU answers: every bucket of every
** task and dtype (a sweep's walk would leave out those the GPU cannot
** hold), judged against dev, the GPU the registry's newest winner was
** measured on, with its recorded driver: staleness by template sources,
** NVRTC and aitune version only. */
static int plan_without_gpu(wctx *c, const char *spec_path, const char *why)
{
    spec sp;
    char err[512];
    if (spec_load(spec_path, &sp, err, sizeof err)) {
        error("%s", err);
        return EXIT_INPUT;
    }
    char arch[16];
    arch_base(sp.arch, arch);
    device dev = c->newest;
    if (!c->have_newest) memset(&dev, 0, sizeof dev);
    snprintf(dev.nvrtc, sizeof dev.nvrtc, "%s", jit_nvrtc_version());
    if (c->have_newest)
        printf("window: no GPU here (%s): planned for %s, the GPU of the registry's newest winner; a driver change is "
               "not seen without one\n", why, dev.name);
    else
        printf("window: no GPU here (%s): planned for no GPU in particular (the registry has no winner)\n", why);
    for (int i = 0; i < sp.ntasks; i++) {
        const spec_task *t = &sp.tasks[i];
        bucket *bs;
        int nb = spec_buckets(t, &bs);
        for (int d = 0; d < t->ndtypes; d++)
            for (int k = 0; k < nb; k++) plan_want(c, &dev, t->op, arch, t->dtypes[d], &bs[k]);
        free(bs);
    }
    spec_free(&sp);
    return 0;
}

/* With last: *last = the registry's newest run id. Else drop the losers'
** kernels (reg_cubin_trim) of every run after `after`, the window's, and
** say how much went. 0, or an exit code (said). */
static int window_runs(const char *db, long long after, long long *last)
{
    reg *r;
    long long newest = 0;
    reg_trim_stats st = { 0, 0 };
    int rc = reg_open(db, last != NULL, &r) || reg_run_last(r, &newest);
    for (long long run = after + 1; !rc && !last && run <= newest; run++) rc = reg_cubin_trim(r, run, NULL, NULL, &st);
    if (rc) {
        error("%s", reg_errmsg(r));
        reg_close(r);
        return EXIT_FAIL;
    }
    if (last) *last = newest;
    else if (st.cubins)
        printf("window: dropped %lld cubins of candidates that lost (%.1f MB)\n", st.cubins, st.bytes / 1048576.0);
    reg_close(r);
    return 0;
}

int cmd_window(int argc, char **argv)
{
    opt opts[] = { { "--budget", 1, 0, 0 }, { "--plan", 0, 0, 0 }, { "--gpu", 1, 0, 0 }, { "--db", 1, 0, 0 },
                   { "--quiet", 0, 0, 0 }, { 0, 0, 0, 0 } };
    const char *pos[1];
    int np, rc = cli_parse("window", window_usage, window_summary, argc, argv, opts, pos, 1, &np);
    if (rc) return rc;
    if (np != 1) return cli_usage_error("window", window_usage, "which spec? (the buckets to look at)");
    double budget = 0;
    if (!opts[0].set) return cli_usage_error("window", window_usage, "how long is the window? (--budget 30m)");
    if ((rc = cli_duration("window", window_usage, "--budget", opts[0].value, "90s, 30m or 2h", &budget))) return rc;
    int gpu = 0;
    if (opts[2].set) {
        long long v;
        if ((rc = cli_count("window", window_usage, "--gpu", opts[2].value, 0, 63, &v))) return rc;
        gpu = (int)v;
    }
    const char *db = cli_db_path(opts[3].value);
    if (!file_exists(db)) {
        error("no registry at '%s' (give --db; `aitune sweep` makes one)", db);
        return EXIT_INPUT;
    }
    wctx c = { .root = cli_root() };
    if ((rc = load(&c, db))) { wctx_free(&c); return rc; }
    strbuf cmdline = STRBUF_INIT;
    cli_command_line(argc, argv, &cmdline);
    /* The plan pass runs the sweep's own walk over SPEC (the worker says
    ** which GPU this is) with a filter that only collects; --plan without a
    ** GPU walks SPEC itself (plan_without_gpu). */
    sweep_opts o = { .spec_path = pos[0], .db_path = db, .root = c.root, .command = sb_str(&cmdline),
                     .kernel_timeout = 10, .gpu = gpu, .quiet = 1, .want = plan_want, .want_ctx = &c,
                     .noise = 0.03, .plan_only = 1 };
    char nogpu[256] = "";
    if (opts[1].set) {
        worker *w = worker_new(gpu);
        device dev;
        strbuf env = STRBUF_INIT;
        if (worker_hello(w, &dev, &env)) snprintf(nogpu, sizeof nogpu, "%s", worker_errmsg(w));
        sb_free(&env);
        worker_free(w);
    }
    rc = nogpu[0] ? plan_without_gpu(&c, pos[0], nogpu) : sweep_run(&o);
    if (rc) { sb_free(&cmdline); wctx_free(&c); return rc; }
    if (c.ni > 1) qsort(c.items, (size_t)c.ni, sizeof *c.items, cmp_item);   /* none: items is NULL */
    printf("window: %d bucket%s to work on, %.2g s per measurement from history\n", c.ni, c.ni == 1 ? "" : "s", c.spm);
    for (int i = 0; i < c.ni; i++) {
        witem *it = &c.items[i];
        char calls[48] = "";
        if (it->calls) snprintf(calls, sizeof calls, ", %lld call%s missed", it->calls, it->calls == 1 ? "" : "s");
        if (it->holes) snprintf(calls, sizeof calls, ", %d hole%s scanned", it->holes, it->holes == 1 ? "" : "s");
        printf("%3d  %-8s %-12s %-6s %-18s ~%.2g s, %.3g gain/s%s\n", i + 1, kind_name[it->kind], it->op, it->dtype,
               it->b.key, it->est_s, it->score, calls);
    }
    fflush(stdout);
    if (opts[1].set) { sb_free(&cmdline); wctx_free(&c); return EXIT_OK; }
    /* Every item's sweep keeps the losers' kernels: the window's next bucket
    ** of the same op would compile them again. They are dropped at the end,
    ** for the runs this window made, as one sweep's end drops its own. */
    long long before = 0;
    if ((rc = window_runs(db, 0, &before))) { sb_free(&cmdline); wctx_free(&c); return rc; }
    double t0 = now_s();
    int done = 0;
    for (int i = 0; i < c.ni; i++) {
        double left = budget - (now_s() - t0);
        if (left <= 0) break;
        c.target = &c.items[i];
        sweep_opts so = { .spec_path = pos[0], .db_path = db, .root = c.root, .command = sb_str(&cmdline),
                          .kernel_timeout = 10, .gpu = gpu, .quiet = opts[4].set, .want = run_want, .want_ctx = &c,
                          .budget_s = left, .retune = c.items[i].kind == W_STALE, .noise = 0.03,
                          .keep_cubins = 1 };
        rc = sweep_run(&so);
        if (rc == 130 || rc == EXIT_FAIL || rc == EXIT_INPUT) break;
        done++;
    }
    printf("window: %d of %d done in %.0f s%s\n", done, c.ni, now_s() - t0,
           done < c.ni ? "; the rest waits for the next window" : "");
    /* Interrupted, they stay: the next window decides the cut bucket again. */
    if (rc != 130 && done) {
        int trc = window_runs(db, before, NULL);
        if (trc && !rc) rc = trc;
    }
    sb_free(&cmdline);
    wctx_free(&c);
    return rc == 130 || rc == EXIT_FAIL || rc == EXIT_INPUT ? rc : EXIT_OK;
}

/* ---- sweep --from-misses ---- */

static int misses_want(void *vctx, const device *dev, const char *op, const char *arch, const char *dtype, const bucket *b)
{
    (void)dev;
    return calls_in(vctx, op, arch, dtype, b) > 0;
}

int window_from_misses(sweep_opts *o, void **ctx)
{
    wctx *c = xcalloc(1, sizeof *c);
    *ctx = c;
    if (!file_exists(o->db_path)) {
        error("no registry at '%s': --from-misses reads the misses recorded there", o->db_path);
        return EXIT_INPUT;
    }
    int rc = load(c, o->db_path);
    if (rc) return rc;
    if (!c->nm) {
        error("no misses recorded in '%s' (libaitune records them: aitune_flush_misses)", o->db_path);
        return EXIT_INPUT;
    }
    o->want = misses_want;
    o->want_ctx = c;
    return 0;
}

void window_misses_free(void *ctx)
{
    if (!ctx) return;
    wctx_free(ctx);
    free(ctx);
}
