/* sweep_polish.c: see sweep_polish.h. */
#define _GNU_SOURCE
#include "sweep_polish.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slots c[0, m) raced at every size raced in part p (its probes), into a
** probes set of their own; NULL when the budget ran out (*rc 0) or a tool
** failed (*rc -1). */
static probes *polish_race(sw *S, const op_task *t, split *sp, const part *p, cand *const *c, const int *fi, int m,
                           int *rc)
{
    probes *Q = xcalloc(1, sizeof *Q);
    int cut = 0;
    Q->m = m;
    *rc = 0;
    for (int k = 0; k < p->q->n && !*rc && !cut; k++) *rc = split_race(S, t, sp, c, fi, p->q->p[k].shape, Q, &cut);
    if (*rc || cut) {
        free(Q);
        return NULL;
    }
    return Q;
}

/* Slot i's time over slot 0's at Q's probes inside box: their geometric
** mean (INFINITY where slot i has no time at a probe slot 0 has one at). */
static double polish_score(const probes *Q, const bucket *box, int i)
{
    double sum = 0;
    int n = 0;
    for (int k = 0; k < Q->n; k++) {
        const probe *q = &Q->p[k];
        if (!probe_in_box(box, q->shape) || !(q->us[0] > 0)) continue;
        if (!(q->us[i] > 0)) return INFINITY;
        sum += log(q->us[i] / q->us[0]);
        n++;
    }
    return n ? exp(sum / n) : INFINITY;
}

int part_polish(sw *S, const op_task *t, split *sp, part *p, const op_task *tp)
{
    int n = S->task->split_polish < PROBE_SLOTS - 2 ? S->task->split_polish : PROBE_SLOTS - 2;
    cand *w = p->w >= 0 && p->w < p->n ? p->c[p->w] : NULL;
    if (n <= 0 || !w || !w->config || !p->own || p->nown >= PART_OWN_MAX || S->o->retune || split_out_of_budget(S, sp))
        return 0;
    char *from = w->config, **cfgs = NULL;
    search *se = search_new_warm(S->T, SEARCH_POLISH, w->tmpl, tp, &S->dev, 1, n + 2, &from, 1);
    if (!se) return error("%s", tmpl_errmsg(S->T));
    cand *x = xcalloc(PROBE_SLOTS, sizeof *x), *c[PROBE_SLOTS];
    int fi[PROBE_SLOTS], m = 1, got = 0, rc = 0;
    c[0] = w;
    fi[0] = p->fi[p->w];
    probes *Q = NULL;
    double t0 = now_s();
    /* The ring, raced and told; then its combination, raced with it. Each
    ** round's configs compile side by side, then are waited for. */
    for (int round = 0; round < 2 && !rc; round++) {
        int first = m;
        if (search_ask(se, round ? 1 : n + 1, &cfgs, &got)) rc = error("%s", tmpl_errmsg(S->T));
        for (int i = 0; i < got; i++) {
            int built = 0;
            if (!rc && m < PROBE_SLOTS && strcmp(cfgs[i], w->config)) {
                cand *y = &x[m - 1];
                cand_instantiate(S, y, w->tmpl, cfgs[i], tp);
                if (y->error || cand_compile(S, y, S->sp.arch)) cand_free(y), memset(y, 0, sizeof *y);
                else c[m++] = y, built = 1;
            }
            /* One not built is told so: the combination waits for every neighbour's reply. */
            if (!built && strcmp(cfgs[i], w->config)) search_tell(se, cfgs[i], "fail", 0);
            free(cfgs[i]);
        }
        free(cfgs);
        for (int i = first; i < m && !rc; i++) {
            if (cand_finish(S, c[i])) rc = sw_interrupted() ? 1 : -1;
            fi[i] = c[i]->job.ok ? PART_OWN : -1;
        }
        if (rc || m == first) break;
        free(Q);
        if (!(Q = polish_race(S, t, sp, p, c, fi, m, &rc))) break;
        if (!round) {
            search_tell(se, w->config, "ok", 1);
            for (int i = 1; i < m; i++) {
                double r = polish_score(Q, &p->b, i);
                search_tell(se, c[i]->config, isfinite(r) ? "ok" : "fail", r);
            }
        }
    }
    double worst;
    int a, b = Q && !rc ? probe_winner(Q, &p->b, 0, S->o->noise, &worst, &a) : 0, k = Q ? probe_find(Q, p->b.rep, t->ndims) : -1;
    sw_trace(S, "polish %s %s %s: %d configs raced in %.4f s around %s", t->op, p->b.key, w->tmpl, m - 1, now_s() - t0,
             w->config);
    int won = b > 0 && k >= 0 && Q->p[k].us[b] > 0;
    if (m > 1 && Q) {
        char name[512];
        int at;
        split_part_name(t, sp, p, 0, name, sizeof name);
        if (won)
            sw_say(S, "polish     %s %s %s: %d configs one move or more from its winner raced over it: %s %s wins, "
                   "worst loss %.1f%% (its winner's %.1f%%)\n", t->op, t->dtype, name, m - 1, c[b]->tmpl, c[b]->config,
                   100 * worst, 100 * probe_worst(Q, &p->b, 0, &at));
        else
            sw_say(S, "polish     %s %s %s: %d configs one move or more from its winner raced over it: none better\n", t->op,
                   t->dtype, name, m - 1);
    }
    if (won) {   /* a new winner, timed at the part's own size */
        /* Its slot: a new one, else that of the candidate that loses most in the part. */
        int s = p->n, at;
        double most = -1;
        for (int j = 0; p->n == PROBE_SLOTS && j < p->n; j++) {
            double l = probe_worst(p->q, &p->b, j, &at);
            if (j != p->w && l > most) s = j, most = l;
        }
        if (s == p->n) p->n++;
        for (int j = 0; j < p->q->n; j++) {
            int q = probe_find(Q, p->q->p[j].shape, t->ndims);
            p->q->p[j].us[s] = q >= 0 ? Q->p[q].us[b] : 0;
            p->q->p[j].spread[s] = q >= 0 ? Q->p[q].spread[b] : 0;
        }
        if (p->q->m < p->n) p->q->m = p->n;
        p->own[p->nown] = *c[b];
        memset(c[b], 0, sizeof *c[b]);
        p->c[s] = &p->own[p->nown++];
        p->fi[s] = PART_OWN;
        p->us[s] = Q->p[k].us[b];
        p->w = s;
        p->worst = worst;
        p->where[0] = 0;
        if (a >= 0) probe_where(Q, a, t->ndims, NULL, p->where, sizeof p->where);
        sw_trace(S, "polish %s %s %s: %s wins, worst loss %.4f", t->op, p->b.key, p->c[s]->tmpl, p->c[s]->config, worst);
    }
    free(Q);
    cand *in[PROBE_SLOTS];
    for (int i = 0; i < m - 1; i++) in[i] = &x[i];
    cand_drain(S, in, m - 1);
    for (int i = 0; i < m - 1; i++) cand_free(&x[i]);
    free(x);
    search_free(se);
    return rc;
}
