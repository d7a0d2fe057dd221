/* sweep_compile.c: see sweep_compile.h. */
#define _GNU_SOURCE
#include "sweep_compile.h"
#include "sweep_record.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct compiled_row {
    cand c;
    char label[160];
    int stored;     /* its cubin is in the registry (or there is none to store) */
} compiled_row;

/* Store the cubins of rows[*next, n) whose compiles are done, as they land:
** a compile killed later keeps them. *next moves past the stored prefix. */
static int store_landed(sw *S, compiled_row **rows, int n, int *next)
{
    for (int r = *next; r < n; r++) {
        compiled_row *row = rows[r];
        if (row->stored) continue;
        if (!row->c.error && !row->c.cached && !__atomic_load_n(&row->c.job.done, __ATOMIC_ACQUIRE)) continue;
        row->stored = 1;
        if (!row->c.error && cand_finish(S, &row->c)) return -1;
    }
    while (*next < n && rows[*next]->stored) (*next)++;
    return 0;
}

/* What a compile has set off: its rows (one per unique kernel; pointers,
** as jobs in flight must not move), and the defaults to store at the end. */
typedef struct compile_list {
    compiled_row **rows;
    int n, landed;      /* rows; the prefix stored */
    struct { op_task t; char tname[64]; char *config; } *defs;
    int ndefs;
} compile_list;

/* One config of template tname at task t (bucket key) sets off, unless its
** kernel is in the list already: sources that do not depend on the shape
** are compiled once across every bucket and dtype. *rc: -1 once a tool
** failed (the row is still listed, its compile not submitted). */
static void add_config(sw *S, compile_list *L, const op_task *t, const char *tname, const char *config, const char *key,
                       int *rc)
{
    cand c = { 0 };
    cand_instantiate(S, &c, tname, config, t);
    plan_geom g;
    char gerr[512];
    if (!c.error && kernel_geometry(&c.k, t, &g, gerr, sizeof gerr))
        c.error = xstrfmt("template '%s' launch() at %s: %s", tname, key, gerr);
    char jkey[17] = "";
    if (!c.error) jit_key(c.k.source, c.k.name, S->sp.arch, jkey);
    for (int r = 0; r < L->n && jkey[0]; r++)
        if (!strcmp(L->rows[r]->c.key, jkey)) {
            cand_free(&c);
            return;
        }
    L->rows = xrealloc(L->rows, sizeof *L->rows * (size_t)(L->n + 1));
    compiled_row *row = L->rows[L->n++] = xcalloc(1, sizeof *row);
    row->c = c;
    snprintf(row->label, sizeof row->label, "%s %s", t->dtype, tname);
    if (!c.error && cand_compile(S, &row->c, S->sp.arch)) {
        *rc = -1;
        row->stored = 1;    /* never submitted: nothing to wait for */
    }
    if (!*rc && store_landed(S, L->rows, L->n, &L->landed)) *rc = -1;
    progress_plan(S->P, 1);
}

/* Template tname at task t: every config, or with --max-evals a seeded
** sample of its space; its default kept for the end when *want_default. */
static int add_template(sw *S, compile_list *L, const op_task *t, const char *tname, const char *key, int *want_default)
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
    search *se = S->o->max_evals > 0 ? search_new(S->T, "random", tname, t, &S->dev, S->sp.seed, S->o->max_evals)
                                     : search_new(S->T, "exhaustive", tname, t, &S->dev, S->sp.seed, 0);
    if (!se) return error("%s", tmpl_errmsg(S->T));
    char **cfgs;
    int got, rc = 0;
    while (!search_ask(se, 256, &cfgs, &got)) {
        if (!got) { free(cfgs); break; }
        for (int k = 0; k < got; k++) {
            add_config(S, L, t, tname, cfgs[k], key, &rc);
            free(cfgs[k]);
        }
        free(cfgs);
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
        return error("%s", tmpl_errmsg(S->T));
    sw_note(S, "instantiating %s %s %s", st->op, st->dtypes[d], b->key);
    char **tn;
    int ntn, rc = 0, want_default = first;
    if (tmpl_templates(S->T, t.op, &tn, &ntn)) return error("%s", tmpl_errmsg(S->T));
    for (int ti = 0; ti < ntn && !rc; ti++) {
        int ok;
        char why[256];
        if (!spec_task_uses(st, tn[ti])) continue;
        if (tmpl_supports(S->T, tn[ti], &t, &S->dev, &ok, why, sizeof why)) {
            warning("%s", tmpl_errmsg(S->T));
            continue;
        }
        if (ok) rc = add_template(S, L, &t, tn[ti], ob.key, &want_default);
    }
    for (int ti = 0; ti < ntn; ti++) free(tn[ti]);
    free(tn);
    return rc;
}

/* The rows as their compiles land: the table with -v, by default a summary
** (progress.h); each row freed. Returns how many failed; *rc becomes -1
** when the registry refuses a cubin (the rest are waited for, not stored,
** and not reported again). */
static int report(sw *S, compile_list *L, int *rc)
{
    char line[1024];
    compile_tally tally = { 0 };
    progress_note(S->P, "compiling");
    progress_clear(S->P);
    if (S->o->verbose) {
        snprintf(line, sizeof line, "%-24s %-44s %5s %6s %6s %9s  %s", "kernel", "config", "regs", "spills", "smem", "ms",
                 "ptxas warnings / errors");
        progress_put_line(stdout, line);
    }
    int failed = 0;
    for (int r = 0; r < L->n; r++) {
        cand *c = &L->rows[r]->c;
        if (sw_interrupted()) jit_pool_cancel(S->pool);   /* Ctrl-C: the queue is dropped */
        if (!c->error && !*rc && !L->rows[r]->stored) {
            if (cand_finish(S, c)) *rc = -1;
        } else if (!c->error && !L->rows[r]->stored) {
            jit_wait(S->pool, &c->job);
        }
        const char *note = c->error ? c->error : !c->job.ok ? c->job.error : "";
        char warn[160] = "";
        if (c->job.ok && c->job.log) {
            const char *w = strstr(c->job.log, "warning");
            if (w) snprintf(warn, sizeof warn, "%.*s", (int)strcspn(w, "\n"), w);
        }
        if (!(sw_interrupted() && c->job.error && !strcmp(c->job.error, "cancelled"))) {
            failed += c->error || !c->job.ok;
            snprintf(line, sizeof line, "%s %s", L->rows[r]->label, c->config);
            compile_tally_add(&tally, line, c->job.spills, c->job.ms, c->cached, c->error || !c->job.ok, warn[0] != 0);
            progress_done(S->P, 0, 0);
            if (S->o->verbose || c->error || !c->job.ok) {
                progress_clear(S->P);
                snprintf(line, sizeof line, "%-24s %-44s %5d %6d %6d %9.1f%s  %s%s", L->rows[r]->label, c->config,
                         c->job.registers, c->job.spills, c->job.smem, c->job.ms, c->cached ? "*" : " ", note, warn);
                progress_put_line(stdout, line);
            }
        }
        cand_free(c);
        free(L->rows[r]);
    }
    free(L->rows);
    progress_clear(S->P);
    if (S->o->verbose) printf("(* from the cubin cache)\n");
    else compile_tally_print(&tally, stdout);
    return failed;
}

int compile_run(sw *S)
{
    compile_list L = { 0 };
    int rc = 0;
    for (int i = 0; i < S->sp.ntasks && !rc && !sw_interrupted(); i++) {
        spec_task *st = &S->sp.tasks[i];
        bucket *bs;
        int nb = spec_buckets(st, &bs);
        for (int d = 0; d < st->ndtypes && !rc; d++)
            for (int bi = 0; bi < nb && !rc; bi++) rc = add_bucket(S, &L, st, d, &bs[bi], bi == 0);
        free(bs);
    }
    int failed = report(S, &L, &rc);
    S->evaluated = L.n;
    /* Defaults last: their kernels are in the cache by now (not counted again). */
    int compiled = S->compiled, hits = S->cache_hits;
    for (int i = 0; i < L.ndefs; i++) {
        if (!rc && !sw_interrupted()) rc = record_store_default(S, &L.defs[i].t, L.defs[i].tname, L.defs[i].config);
        free(L.defs[i].config);
    }
    free(L.defs);
    S->compiled = compiled;
    S->cache_hits = hits;
    if (failed) {
        fprintf(stderr, "aitune: %d of %d kernels failed to compile\n", failed, L.n);
        return rc ? rc : 1;
    }
    return rc;
}
