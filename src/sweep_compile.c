/* sweep_compile.c: see sweep_compile.h. */
#define _GNU_SOURCE
#include "sweep_compile.h"
#include "sweep_record.h"
#include "sweep_space.h"
#include "sweep_task.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct compiled_row {
    cand c;
    char label[160];
    int stored;     /* its cubin is in the registry (or there is none to store) */
} compiled_row;

/* A compile streams its candidates: each is instantiated, deduplicated by
** its kernel's hash, set off, and reported and freed once it lands, with at
** most `window` of them in flight (sources, jobs), however large the spec.
** What stays for the whole run is 8 bytes per kernel set off (the hash set
** that keeps a kernel shared by buckets from compiling twice) and the
** defaults stored at the end. */
typedef struct compile_list {
    compiled_row **ring;        /* in flight, in the order set off */
    int head, n, window;
    uint64_t *keys;             /* open addressing; 0: empty */
    size_t nkeys, kcap;
    struct { op_task t; char tname[64]; char *config; } *defs;
    int ndefs;
    compile_tally tally;
    int failed, reported, compiled, cached, shared;   /* shared: configs whose kernel was set off already */
} compile_list;

/* Whether the kernel of hash key (16 hex digits) was set off already;
** if not, it is now. */
static int seen_key(compile_list *L, const char *key)
{
    uint64_t h = strtoull(key, NULL, 16);
    if (!h) h = 1;
    if (2 * (L->nkeys + 1) > L->kcap) {
        size_t cap = L->kcap ? 2 * L->kcap : 1024;
        uint64_t *k = xcalloc(cap, sizeof *k);
        for (size_t i = 0; i < L->kcap; i++)
            if (L->keys[i]) {
                size_t j = L->keys[i] & (cap - 1);
                while (k[j]) j = (j + 1) & (cap - 1);
                k[j] = L->keys[i];
            }
        free(L->keys);
        L->keys = k;
        L->kcap = cap;
    }
    size_t j = h & (L->kcap - 1);
    while (L->keys[j] && L->keys[j] != h) j = (j + 1) & (L->kcap - 1);
    if (L->keys[j]) return 1;
    L->keys[j] = h;
    L->nkeys++;
    return 0;
}

static compiled_row *ring_at(compile_list *L, int i) { return L->ring[(L->head + i) % L->window]; }

/* Store the cubins of the rows in flight whose compiles are done, as they
** land: a compile killed later keeps them. */
static int store_landed(sw *S, compile_list *L)
{
    for (int i = 0; i < L->n; i++) {
        compiled_row *row = ring_at(L, i);
        if (row->stored) continue;
        if (!row->c.error && !row->c.cached && !__atomic_load_n(&row->c.job.done, __ATOMIC_ACQUIRE)) continue;
        row->stored = 1;
        if (!row->c.error && !row->c.job.cancelled && cand_finish(S, &row->c)) return -1;
    }
    return 0;
}

/* The oldest row in flight, once it has landed: stored, counted, its line
** printed (every row with -v, a failure always), freed. *rc becomes -1
** when the registry refuses a cubin (the rest are waited for, not stored). */
static void report_head(sw *S, compile_list *L, int *rc)
{
    compiled_row *row = ring_at(L, 0);
    L->head = (L->head + 1) % L->window;
    L->n--;
    cand *c = &row->c;
    if (!c->error && !*rc && !row->stored) {
        if (cand_finish(S, c) && !c->job.cancelled) *rc = -1;
    } else if (!c->error && !row->stored) {
        jit_wait(S->pool, &c->job);
    }
    if (!c->job.cancelled) {   /* a Ctrl-C dropped it: neither compiled nor failed */
        int bad = c->error || !c->job.ok;
        const char *note = c->error ? c->error : bad ? c->job.error : "";
        char warn[160] = "", line[1024];
        if (c->job.ok && c->job.log) {
            const char *w = strstr(c->job.log, "warning");
            if (w) snprintf(warn, sizeof warn, "%.*s", (int)strcspn(w, "\n"), w);
        }
        L->reported++;
        L->failed += bad;
        L->cached += !c->error && c->cached;
        L->compiled += !c->error && !c->cached;
        snprintf(line, sizeof line, "%s %s", row->label, c->config);
        compile_tally_add(&L->tally, line, c->job.spills, c->job.ms, c->cached, bad, warn[0] != 0);
        progress_done(S->P, 0, 0);
        if (S->o->verbose || bad) {
            snprintf(line, sizeof line, "%-24s %-44s %5d %6d %6d %9.1f%s  %s%s", row->label, c->config,
                     c->job.registers, c->job.spills, c->job.smem, c->job.ms, c->cached ? "*" : " ", note, warn);
            progress_put(S->P, stdout, line);
        }
    }
    cand_free(c);
    free(row);
}

/* One config of template tname at task t (bucket key) is set off, unless
** its kernel was already: sources that do not depend on the shape compile
** once across every bucket and dtype. *rc: -1 once a tool failed (the row
** is still reported, its compile not submitted). */
static void add_config(sw *S, compile_list *L, const op_task *t, const char *tname, const char *config, const char *key,
                       int *rc)
{
    cand c = { 0 };
    cand_instantiate(S, &c, tname, config, t);
    if (sw_interrupted()) {     /* the watch stopped the template: not a result */
        cand_free(&c);
        return;
    }
    plan_geom g;
    char gerr[512];
    if (!c.error && kernel_geometry(&c.k, t, &g, gerr, sizeof gerr))
        c.error = xstrfmt("template '%s' launch() at %s: %s", tname, key, gerr);
    char jkey[17] = "";
    if (!c.error) jit_key(c.k.source, c.k.name, S->sp.arch, jkey);
    if (jkey[0] && seen_key(L, jkey)) {
        L->shared++;
        progress_done(S->P, 0, 0);
        cand_free(&c);
        return;
    }
    while (L->n == L->window) report_head(S, L, rc);
    if (sw_interrupted()) {     /* while it waited for room */
        cand_free(&c);
        return;
    }
    compiled_row *row = xcalloc(1, sizeof *row);
    L->ring[(L->head + L->n++) % L->window] = row;
    row->c = c;
    snprintf(row->label, sizeof row->label, "%s %s", t->dtype, tname);
    sw_trace(S, "compile set off %s %s (%d in flight)", tname, row->c.config, L->n);
    if (!c.error && cand_compile(S, &row->c, S->sp.arch)) {
        *rc = -1;
        row->stored = 1;    /* never submitted: nothing to wait for */
    }
    if (!*rc && store_landed(S, L)) *rc = -1;
}

/* Template tname at task t: every config, or a seeded sample of cap of
** them; its default kept for the end when *want_default. */
static int add_template(sw *S, compile_list *L, const op_task *t, const char *tname, const char *key, int cap,
                        int *want_default)
{
    /* The default, so lookup and emit answer without a sweep: stored once
    ** its kernel is compiled, after the table. */
    char *dflt = NULL;
    if (*want_default && !tmpl_default(S->T, tname, t, &S->dev, &dflt) && dflt) {
        L->defs = xrealloc(L->defs, sizeof *L->defs * (size_t)(L->ndefs + 1));
        L->defs[L->ndefs].t = *t;
        snprintf(L->defs[L->ndefs].tname, sizeof L->defs[L->ndefs].tname, "%s", tname);
        L->defs[L->ndefs++].config = dflt;
        *want_default = 0;
    } else {
        free(dflt);
    }
    search *se = search_new(S->T, cap > 0 ? "random" : "exhaustive", tname, t, &S->dev, S->sp.seed, cap);
    if (!se) return sw_interrupted() ? 0 : error("%s", tmpl_errmsg(S->T));
    /* What the progress line counts on: the sample, or the whole space
    ** (space_check let only a small one through uncapped). */
    int size = search_size(se);
    progress_plan(S->P, cap > 0 ? (cap < size ? cap : size) : search_count(se));
    char **cfgs;
    int got, rc = 0;
    while (!rc && !sw_interrupted() && !search_ask(se, 64, &cfgs, &got)) {
        for (int k = 0; k < got; k++) {
            if (!rc && !sw_interrupted()) add_config(S, L, t, tname, cfgs[k], key, &rc);
            free(cfgs[k]);
        }
        free(cfgs);
        if (!got) break;
    }
    S->rejected += search_nrejected(se);
    search_free(se);
    return rc;
}

/* Bucket b of spec task st in dtype d: each template the task uses that
** handles it. The (op, dtype)'s default comes from its first bucket. */
static int add_bucket(sw *S, compile_list *L, const spec_task *st, int d, const bucket *b, int first)
{
    long long shape[TMPL_MAXDIMS];
    op_task t;
    bucket ob;
    if (task_bucket(S, st, b, shape, &ob) || tmpl_task(S->T, st->op, st->dtypes[d], shape, &t))
        return sw_interrupted() ? 0 : error("%s", tmpl_errmsg(S->T));
    char label[160];
    snprintf(label, sizeof label, "%s %s %s", st->op, st->dtypes[d], ob.key);
    progress_bucket(S->P, label);
    char **tn;
    int ntn, rc = 0, want_default = first;
    if (tmpl_templates(S->T, t.op, &tn, &ntn)) return sw_interrupted() ? 0 : error("%s", tmpl_errmsg(S->T));
    for (int ti = 0; ti < ntn && !rc && !sw_interrupted(); ti++) {
        int ok;
        char why[256];
        if (!spec_task_uses(st, tn[ti])) continue;
        if (tmpl_supports(S->T, tn[ti], &t, &S->dev, &ok, why, sizeof why)) {
            if (!sw_interrupted()) warning("%s", tmpl_errmsg(S->T));
            continue;
        }
        if (ok) rc = add_template(S, L, &t, tn[ti], ob.key, space_cap(S->o, st), &want_default);
    }
    for (int ti = 0; ti < ntn; ti++) free(tn[ti]);
    free(tn);
    return rc;
}

/* The defaults, last: their kernels are in the cache by now (not counted
** again). */
static int store_defaults(sw *S, compile_list *L, int rc)
{
    int compiled = S->compiled, hits = S->cache_hits;
    for (int i = 0; i < L->ndefs; i++) {
        if (!rc && !sw_interrupted()) rc = record_store_default(S, &L->defs[i].t, L->defs[i].tname, L->defs[i].config);
        free(L->defs[i].config);
    }
    free(L->defs);
    S->compiled = compiled;
    S->cache_hits = hits;
    return rc;
}

int compile_run(sw *S)
{
    int threads = jit_pool_threads(S->pool);
    compile_list L = { .window = threads * 4 > 64 ? threads * 4 : 64 };
    L.ring = xcalloc((size_t)L.window, sizeof *L.ring);
    int rc = 0, nbuckets = 0;
    for (int i = 0; i < S->sp.ntasks; i++) {
        bucket *bs;
        nbuckets += spec_buckets(&S->sp.tasks[i], &bs) * S->sp.tasks[i].ndtypes;
        free(bs);
    }
    progress_buckets(S->P, nbuckets);
    if (S->o->verbose) {
        char line[1024];
        snprintf(line, sizeof line, "%-24s %-44s %5s %6s %6s %9s  %s", "kernel", "config", "regs", "spills", "smem", "ms",
                 "ptxas warnings / errors");
        progress_put(S->P, stdout, line);
    }
    /* Ctrl-C stops the Lua work (a batch of a large space, a template) and
    ** the compiles in flight at once, wherever the run waits. */
    tmpl_watch(S->T, space_watch, S);
    jit_pool_stop_when(S->pool, sw_interrupted);
    for (int i = 0; i < S->sp.ntasks && !rc && !sw_interrupted(); i++) {
        spec_task *st = &S->sp.tasks[i];
        bucket *bs;
        int nb = spec_buckets(st, &bs);
        for (int d = 0; d < st->ndtypes && !rc && !sw_interrupted(); d++)
            for (int bi = 0; bi < nb && !rc && !sw_interrupted(); bi++) rc = add_bucket(S, &L, st, d, &bs[bi], bi == 0);
        free(bs);
    }
    tmpl_watch(S->T, NULL, NULL);
    /* Ctrl-C: what is queued or compiling is given up, not waited for. */
    if (sw_interrupted()) jit_pool_abort(S->pool);
    while (L.n) report_head(S, &L, &rc);
    free(L.ring);
    free(L.keys);
    progress_end(S->P);     /* the table's end and the summary follow */
    if (S->o->verbose) printf("(* from the cubin cache)\n");
    else compile_tally_print(&L.tally, stdout);
    /* The counts are the kernels that landed: a Ctrl-C's dropped ones are none. */
    S->evaluated = L.reported;
    S->compiled = L.compiled;
    S->cache_hits = L.cached;
    rc = store_defaults(S, &L, rc);
    if (L.failed) {
        fprintf(stderr, "aitune: %d of %d kernels failed to compile\n", L.failed, L.reported);
        return rc ? rc : 1;
    }
    return rc;
}
