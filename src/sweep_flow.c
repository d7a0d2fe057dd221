/* sweep_flow.c: see sweep_flow.h. */
#define _GNU_SOURCE
#include "sweep_flow.h"
#include "sweep_record.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How many candidates a search keeps on its way behind the one being
** timed: --ahead, else twice the pool's threads shared by the lanes (the
** pool stays busy while the GPU works through what it compiled), but no
** more than an eighth of the search's budget, and at least a batch. The
** cap: a model-guided strategy picks the configs asked ahead without their
** results, and on replayed GEMM landscapes (bench/archive/RESULTS-2026.md) it loses
** little at depths up to an eighth of its budget and much beyond (32 ahead
** of 68 evaluations: the gap it closes by the end, 0.61-0.98 -> 0.40-0.75). */
static int ahead_depth(sw *S, int batch, int evals)
{
    if (S->o->ahead < 0) return 0;
    if (S->o->ahead > 0) return S->o->ahead;
    int lanes = S->nlanes > 1 ? S->nlanes : 1;
    int d = 2 * jit_pool_threads(S->pool) / lanes;
    if (d > evals / 8) d = evals / 8;
    return d < batch ? batch : d;
}

/* Tell the search the result of c, which it asked for as form. */
static void tell_also(flow *f, const cand *c, const char *form)
{
    if (f->se) search_tell_measured(f->se, form, &c->m);
    progress_done(f->S->P, 0, 0);
}

/* Config of template tname sets off (config and joined are taken). A
** config on its way already (a default the search asks for) is measured
** once: the search is told its result as it lands, or now if it has. */
static int flow_put(flow *f, const char *tname, char *config, char *joined, int extra)
{
    char h[17];
    hash_hex(hash_str(hash_str(HASH_INIT, tname), config), h);
    const char *form = joined ? joined : config;
    cand *same = NULL;
    for (int i = 0; i < f->n && !same; i++) if (!strcmp(f->q[i]->config_hash, h)) same = f->q[i];
    for (int i = 0; i < f->nkept && !same; i++) if (!strcmp(f->kept[i]->config_hash, h)) same = f->kept[i];
    if (same) {
        if (same->m.status[0]) {
            tell_also(f, same, form);
        } else {
            same->also = xrealloc(same->also, sizeof *same->also * (size_t)(same->nalso + 1));
            same->also[same->nalso++] = xstrdup(form);
        }
        free(config);
        free(joined);
        return 0;
    }
    cand *c = xcalloc(1, sizeof *c);
    cand_instantiate(f->S, c, tname, config, f->t);
    free(config);
    c->joined = joined;
    c->extra = extra;
    c->batch = f->nasked + extra;
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 64;
        f->q = xrealloc(f->q, sizeof *f->q * (size_t)f->cap);
    }
    f->q[f->n++] = c;
    return cand_start(f->S, c, f->t, f->b);
}

/* One batch from the strategy, set off. */
static int flow_ask(flow *f)
{
    sw *S = f->S;
    char **cfgs = NULL;
    int got = 0, rc = 0;
    if (search_ask(f->se, f->batch, &cfgs, &got)) return error("%s", tmpl_errmsg(S->T));
    f->nasked++;
    f->done = !got;
    sw_trace(S, "ask search=%d batch=%d n=%d", f->id, f->nasked, got);
    for (int i = 0; i < got; i++) {
        char tname[64], *own;
        if (rc) {
            free(cfgs[i]);
        } else if (f->tname) {
            rc = flow_put(f, f->tname, cfgs[i], NULL, 0);
        } else if (search_split(S->T, cfgs[i], tname, sizeof tname, &own)) {
            rc = error("%s", tmpl_errmsg(S->T));
            free(cfgs[i]);
        } else {
            rc = flow_put(f, tname, own, cfgs[i], 0);
        }
    }
    free(cfgs);
    return rc;
}

/* The first candidate lands; the search learns it under every form it
** asked for it, and a default's kernel is stored once it has one. */
static int flow_land(flow *f)
{
    sw *S = f->S;
    cand *c = f->q[0];
    memmove(f->q, f->q + 1, sizeof *f->q * (size_t)--f->n);
    int rc = cand_land(S, c, f->t, f->b, f->se, f->bs, f->default_cfg, f->id);
    for (int i = 0; i < c->nalso && !rc && c->m.status[0]; i++) tell_also(f, c, c->also[i]);
    if (!rc && f->store_cfg && c->m.status[0] && c->job.cubin && !strcmp(c->tmpl, f->store_tmpl) &&
        !strcmp(c->config, f->store_cfg)) {
        rc = record_default(S, f->t, f->store_tmpl, f->store_cfg, c);
        f->store_cfg = NULL;
    }
    if (c->extra) {
        f->kept = xrealloc(f->kept, sizeof *f->kept * (size_t)(f->nkept + 1));
        f->kept[f->nkept++] = c;
    } else {
        cand_free(c);
        free(c);
    }
    return rc;
}

/* A search from its defaults (defaults[i] of template names[i], measured
** first, those valid; NULL: none) to its end, a budget or Ctrl-C. */
int flow_run(flow *f, char *const *names, char *const *defaults, int nd)
{
    sw *S = f->S;
    int rc = 0;
    f->ahead = ahead_depth(S, f->batch, f->evals);
    f->id = ++S->searches;
    for (int i = 0; i < nd && !rc; i++) {
        int valid = 0;
        char why[256];
        if (defaults[i] && !tmpl_valid(S->T, names[i], defaults[i], f->t, &S->dev, &valid, why, sizeof why) && valid)
            rc = flow_put(f, names[i], xstrdup(defaults[i]), NULL, 1);
    }
    /* The defaults go with the first batch. */
    if (!rc) rc = flow_ask(f);
    while (!rc) {
        while (!rc && !f->done && (f->n == 0 || f->n - 1 < f->ahead) && !sw_search_over(S)) rc = flow_ask(f);
        /* The defaults land even past the search's part of a share (its
        ** share itself stops them): each template's default is its bucket's
        ** floor, and hold's race starts from the finalists. */
        if (rc || !f->n || sw_out_of_budget(S) || (sw_search_over(S) && !f->q[0]->extra)) break;
        rc = flow_land(f);
    }
    if (f->n) sw_trace(S, "stop search=%d on_their_way=%d", f->id, f->n);
    cand_drain(S, f->q, f->n);
    for (int i = 0; i < f->n; i++) {
        cand_free(f->q[i]);
        free(f->q[i]);
    }
    for (int i = 0; i < f->nkept; i++) {
        cand_free(f->kept[i]);
        free(f->kept[i]);
    }
    free(f->q);
    free(f->kept);
    return rc;
}

int flow_capped(search *se, int max_evals)
{
    return max_evals > 0 && max_evals < search_size(se);   /* size: a bound until the walk is complete */
}

int flow_budget(search *se, int max_evals)
{
    return flow_capped(se, max_evals) ? max_evals : search_count(se);
}

void flow_rejected(sw *S, search *se, const char *tname, const op_task *t, const bucket *b)
{
    for (int i = 0; i < search_nrejected(se) && !S->o->compile_only; i++) {
        char *cfg, whyr[512], tn[64];
        int is_err;
        if (search_rejected(se, i, &cfg, whyr, sizeof whyr, &is_err)) continue;
        if (!is_err) { free(cfg); continue; }
        if (!tname) {
            char *own;
            if (search_split(S->T, cfg, tn, sizeof tn, &own)) { free(cfg); continue; }
            free(cfg);
            cfg = own;
        } else {
            snprintf(tn, sizeof tn, "%s", tname);
        }
        cand c = { 0 };
        snprintf(c.tmpl, sizeof c.tmpl, "%s", tn);
        c.config = cfg;
        hash_hex(hash_str(hash_str(HASH_INIT, tn), cfg), c.config_hash);
        cand_key_fields(S, &c, t, b);
        cand_set_status(&c, "constraint", whyr);
        measurement old;
        if (reg_measure_find(S->R, &c.m, &old) == 0) {
            sw_count_status(S, "constraint");
            reg_measure_put(S->R, &c.m);
        } else {
            measurement_free(&old);
        }
        cand_free(&c);
    }
}

int flow_usable(sw *S, const spec_task *st, const char *tname, const op_task *t, bucket_state *bs)
{
    int ok;
    char why[256];
    if (!spec_task_uses(st, tname)) return 0;
    if (tmpl_supports(S->T, tname, t, &S->dev, &ok, why, sizeof why)) {
        warning("%s", tmpl_errmsg(S->T));
        S->by_status[2]++;
        return 0;
    }
    if (bs && ok) bs->served++;
    if (bs && !ok) snprintf(bs->unserved, sizeof bs->unserved, "%s: %s", tname, why);
    return ok;
}
