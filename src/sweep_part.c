/* sweep_part.c: see sweep_part.h. */
#define _GNU_SOURCE
#include "sweep_part.h"
#include "identity.h"
#include "sweep_flow.h"
#include "sweep_polish.h"
#include "sweep_record.h"
#include "sweep_warm.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int part_searched(sw *S, split *sp)
{
    return S->task && S->task->split_evals && !split_out_of_budget(S, sp);
}

/* The candidates a part's own search may take (spec split_evals; 0 there:
** none): by default a quarter of the bucket's cap, at least 8, and never
** more than that cap. 0: no cap (the bucket had none either). */
static int part_evals(const sw *S)
{
    int cap = S->o->max_evals > 0 ? S->o->max_evals : S->task->max_evals, n = S->task->split_evals;
    if (n < 0) n = cap / 4 > 8 ? cap / 4 : cap > 0 ? 8 : 0;
    return cap > 0 && (n == 0 || n > cap) ? cap : n;
}

/* A part's own search: the bucket's strategy over the bucket's templates
** (a search each, or one joint search), at the part's size tp, within
** part_evals. Its measurements are keyed by the part, not by the bucket:
** they are taken at another size (as check's of a part are), and a resumed
** sweep finds them there. It is seeded by seed (part_research: the spec's
** seed and the part's key), so it tries other configs than the bucket's
** search did. Its finalists land in pbs; *evals counts its candidates,
** *capped says whether a cap or the budget cut it. */
static int search_part(sw *S, const op_task *tp, const bucket *pb, unsigned long long seed, const warm_seen *seen,
                       int nseen, bucket_state *pbs, int *evals, int *capped)
{
    const spec_task *st = S->task;
    char **tn;
    int ntn, nuse = 0, rc = 0;
    if (tmpl_templates(S->T, tp->op, &tn, &ntn)) return error("%s", tmpl_errmsg(S->T));
    char **use = xcalloc((size_t)ntn + 1, sizeof *use);
    for (int i = 0; i < ntn; i++)
        if (flow_usable(S, st, tn[i], tp, NULL)) use[nuse++] = tn[i];
    int max_evals = part_evals(S);
    for (int s = 0; s < (st->joint ? nuse > 0 : nuse) && !rc && !sw_out_of_budget(S); s++) {
        const char *tname = st->joint ? NULL : use[s];
        /* Warm, as a bucket's: a part's neighbour was often won by a config
        ** that serves it too, which a few candidates of its own miss. */
        search *se = tname ? warm_search(S, tp, pb, tname, st->search, seed, max_evals, seen, nseen)
                           : search_new_bucket(S->T, st->search, use, nuse, tp, &S->dev, seed, max_evals, NULL, 0);
        if (!se) {
            rc = error("%s", tmpl_errmsg(S->T));
            break;
        }
        int before = S->evaluated + S->resumed;
        progress_plan(S->P, flow_budget(se, max_evals));
        flow f = { .S = S, .t = tp, .b = pb, .se = se, .bs = pbs, .tname = tname, .batch = 8,
                   .evals = flow_budget(se, max_evals) };
        rc = flow_run(&f, NULL, NULL, 0);
        *evals += S->evaluated + S->resumed - before;
        /* The space is lazy: what it rejected is known once the search ends. */
        flow_rejected(S, se, tname, tp, pb);
        *capped |= flow_capped(se, max_evals);
        search_free(se);
    }
    *capped |= S->budget_hit || S->share_hit || sw_interrupted();
    free(use);
    for (int i = 0; i < ntn; i++) free(tn[i]);
    free(tn);
    return rc;
}

/* retune: a part's search is not run again; the part's stored finalists
** (the winner and runners-up its sweep stored) stand in for it. */
static int stored_part(sw *S, const op_task *t, const bucket *pb, bucket_state *pbs)
{
    char hw[256];
    identity_hw(&S->dev, hw, sizeof hw);
    retune_final rf = { 0 };
    int rc = 0;
    if (reg_winner_finalists(S->R, t->op, S->arch, t->dtype, pb->key, hw, record_add_stored, &rf)) rc = error("%s", reg_errmsg(S->R));
    for (int i = 0; i < rf.n; i++) {
        cand c = { 0 };
        snprintf(c.tmpl, sizeof c.tmpl, "%s", rf.f[i].tmpl);
        c.config = rf.f[i].config;
        c.m.median_us = rf.f[i].median_us;
        snprintf(c.m.status, sizeof c.m.status, "ok");
        bucket_state_keep(pbs, &c, 0);
        free(rf.f[i].config);
    }
    return rc;
}

/* Whether a search of the bucket (at its own size) or of one of part p's
** parents ran at shape: p's candidates hold its best configs already. */
static int searched_at(const op_task *t, const split *sp, const part *p, const long long *shape)
{
    size_t sz = sizeof *shape * (size_t)t->ndims;
    if (!memcmp(shape, t->shape, sz)) return 1;
    for (int u = p->up; u >= 0; u = sp->p[u].up)
        if (sp->p[u].searched && !memcmp(shape, sp->p[u].searched_at, sz)) return 1;
    return 0;
}

/* The winners of sp's parts but p that a search of their own found
** (searched; a bucket's finalist is among p's candidates already), with
** the size each was found at: p's search starts from them too
** (warm_search), as they are stored only when the bucket ends. On an H200
** (twenty-fifth session, s25-ranges/call3) 14336 x 4096's part [193, 216)
** started from other weights' winners only, and its winner ran 0.81x
** cuBLASLt. Returns how many, into seen (SPLIT_MAXPARTS). */
static int seen_parts(const op_task *t, const split *sp, const part *p, warm_seen *seen)
{
    int n = 0;
    for (int j = 0; j < sp->n; j++) {
        const part *q = &sp->p[j];
        if (q == p || !q->searched || q->n < 1 || q->w < 0 || q->w >= q->n || !q->c[q->w]->config) continue;
        seen[n].tmpl = q->c[q->w]->tmpl;
        seen[n].config = q->c[q->w]->config;
        memcpy(seen[n].at, q->fi[q->w] == PART_OWN ? q->searched_at : t->shape, sizeof seen[n].at);
        n++;
    }
    return n;
}

/* Where part p is searched (part_research): the probe inside it where its
** winner loses most, leaving out the sizes where a search ran already (the
** bucket's, its parents': searched_at). Ties go to the probe where the
** candidate fastest at the bucket's size loses most (the other side of the
** trade-off when the winner loses most at the bucket's size), then to the
** part's own size. -1: none (the part holds no other probe). */
static int search_probe(const op_task *t, const split *sp, const part *p)
{
    const probes *P = p->q;
    size_t sz = sizeof *t->shape * (size_t)t->ndims;
    int home = probe_in_box(&p->b, t->shape) ? probe_find(P, t->shape, t->ndims) : -1, f = -1, at = -1;
    for (int i = 0; home >= 0 && i < P->m; i++)
        if (P->p[home].us[i] > 0 && (f < 0 || P->p[home].us[i] < P->p[home].us[f])) f = i;
    double lw = 0, lf = 0;
    for (int k = 0; k < P->n; k++) {
        if (searched_at(t, sp, p, P->p[k].shape)) continue;
        double w = probe_loss(&P->p[k], p->w, P->m), x = f >= 0 ? probe_loss(&P->p[k], f, P->m) : 0;
        int own = !memcmp(P->p[k].shape, p->b.rep, sz);
        if (at < 0 || w > lw || (w == lw && (x > lf || (x == lf && own)))) {
            at = k;
            lw = w;
            lf = x;
        }
    }
    return at;
}

/* Whether part p races config of template tmpl already: a candidate, or
** one of its own finalists. */
static int part_holds(const part *p, const char *tmpl, const char *config)
{
    for (int i = 0; i < p->n; i++)
        if (p->c[i]->config && !strcmp(p->c[i]->tmpl, tmpl) && !strcmp(p->c[i]->config, config)) return 1;
    for (int i = 0; i < p->nown; i++)
        if (!strcmp(p->own[i].tmpl, tmpl) && !strcmp(p->own[i].config, config)) return 1;
    return 0;
}

/* Part p's own finalists (own[0, nown), at most PART_OWN_MAX) gain the
** registry's winners nearest the part's search size tp for each template
** among its candidates (warm_neighbours), those it does not race already
** (part_holds): the search took at most a quarter of its evaluations from
** them, and a neighbour's winner is what holds the next part. On an H200
** (eighteenth session, call 9) the winner of 1024 x 4096's part [128, 129),
** bm 64 bn 128 csplit 4, ran m = 100..127 in 7.8-8.0 us, the part
** [97, 128)'s 8.7-8.8; its search at m = 97 (8 evaluations of swapab) had
** started from two nearer winners only. Returns how many were added. */
static int race_neighbours(sw *S, part *p, const op_task *tp)
{
    int added = 0;
    for (int j = 0; j < p->n && p->nown < PART_OWN_MAX; j++) {
        const char *tname = p->c[j]->tmpl;
        int seen = 0;
        for (int i = 0; i < j && !seen; i++) seen = !strcmp(p->c[i]->tmpl, tname);
        if (seen || !p->c[j]->config) continue;
        char **w = NULL;
        int nw = warm_neighbours(S, tp, &p->b, tname, &w);
        for (int x = 0; x < nw && p->nown < PART_OWN_MAX && !sw_interrupted(); x++) {
            /* The registry is untrusted, and a winner of another weight may
            ** not run here: only a config of the template's space that its
            ** constraints take at tp is built. */
            char why[256];
            int valid = 0;
            if (part_holds(p, tname, w[x]) || tmpl_valid(S->T, tname, w[x], tp, &S->dev, &valid, why, sizeof why) || !valid)
                continue;
            cand *c = &p->own[p->nown];
            if (cand_build(S, c, tname, w[x], tp)) cand_free(c);
            else p->nown++, added++;
        }
        warm_free(w, nw);
    }
    return added;
}

/* Part p's own finalists (own[0, nown), at most PART_OWN_MAX) gain the
** span of each of its search's finalists and of its winner among its
** candidates (tmpl_span: the config made to serve every size of the part's
** range dims at the width each wants), where that is another config of the
** space that its constraints take at tp and the part does not race already.
** A search runs at one size, where a config tiled for that size is the
** fastest, and the part's other sizes then run its tiles: on an H200
** (twenty-sixth session) swapab's 128 x 224 tiles ran 14336 x 4096 at
** m = 193 in 45.8 us, 200-wide ones in 39.2 (cuBLASLt 37.8). Returns how
** many were added. */
static int race_spans(sw *S, const op_task *t, part *p, const op_task *tp)
{
    long long lo[TMPL_MAXDIMS], hi[TMPL_MAXDIMS];
    for (int d = 0; d < t->ndims; d++) {
        int r = (int)(p->b.ranged >> d & 1);
        lo[d] = r ? p->b.slo[d] : tp->shape[d];
        hi[d] = r ? p->b.shi[d] - 1 : tp->shape[d];
    }
    op_task tlo, thi;
    if (task_at(S, t, lo, &tlo) || task_at(S, t, hi, &thi)) return 0;
    int added = 0, nfrom = p->nown;
    for (int i = -1; i < nfrom && p->nown < PART_OWN_MAX && !sw_interrupted(); i++) {
        const cand *from = i < 0 ? (p->w >= 0 && p->w < p->n ? p->c[p->w] : NULL) : &p->own[i];
        if (!from || !from->config) continue;
        char *sp = NULL, why[256];
        int valid = 0;
        if (tmpl_span(S->T, from->tmpl, from->config, &tlo, &thi, &S->dev, &sp)) {
            sw_trace(S, "span-fail %s %s: %s", from->tmpl, from->config, tmpl_errmsg(S->T));
            continue;
        }
        if (strcmp(sp, from->config) && !part_holds(p, from->tmpl, sp) &&
            !tmpl_valid(S->T, from->tmpl, sp, tp, &S->dev, &valid, why, sizeof why) && valid) {
            cand *c = &p->own[p->nown];
            sw_trace(S, "span %s %s %s: %s", t->op, p->b.key, from->tmpl, sp);
            if (cand_build(S, c, from->tmpl, sp, tp)) cand_free(c);
            else p->nown++, added++;
        }
        free(sp);
    }
    return added;
}

/* A part whose winner among its candidates (the hold race's slots, or its
** parent's candidates) still loses more than split_at, or ties or trails
** the vendor (split_settle): its best config may not be among them, all
** found by searches elsewhere (the bucket's at its size, its parents' where
** they lost). So it gets a search of its own
** (search_part; retune races the part's stored finalists instead:
** stored_part) where it loses: at the probe inside the part where its
** winner loses most, among the sizes no search has covered (search_probe).
** A search finds the configs that are fast where it runs, and those are
** what the candidates lack where the part loses; often that is the part's
** own size, but a part may lose most at its upper edge or at the bucket's
** middle, and a search at its own size would look where it has no loss.
** The part that holds the bucket's own size is not searched there again
** (its best configs are slots already): it is searched at its worst probe
** elsewhere, and when its winner loses most at the bucket's size (a trade:
** the slots fastest there lose more at another probe), at the probe where
** the slot fastest at the bucket's size loses most, usually the part's
** upper edge. The fastest finalists of that search that are not candidates
** already (top_k of them) race with the candidates at every probe inside
** the part, and where their own waves step up in it (probe_wave_shapes),
** each verified there first (the search verified them at its
** size only; the candidates that lose most there make room when the
** worker's slots run short): the smallest worst loss wins, the candidates'
** winner when within the noise margin of that. The part's winner is stored
** with its time at the part's own size, wherever its search ran; the
** search's measurements are the part's, under its key, at the size they
** were taken (a resumed sweep finds them only there). The search is seeded
** by the part's key and, below the first level, its depth (a part's first
** part shares its key). Returns 1 when Ctrl-C cut the search (the part is
** not decided), -1 for a tool failure. */
int part_research(sw *S, const op_task *t, split *sp, part *p)
{
    op_task tp;
    const probes *P = p->q;
    int at = part_searched(S, sp) ? search_probe(t, sp, p) : -1;
    if (at < 0 || task_at(S, t, P->p[at].shape, &tp)) return 0;
    if (task_send(S, &tp)) return -1;
    p->searched = 1;
    memcpy(p->searched_at, P->p[at].shape, sizeof p->searched_at);
    unsigned long long seed = hash_str(HASH_INIT, p->b.key);
    if (p->depth > 1) {
        char level[16];
        snprintf(level, sizeof level, "/%d", p->depth);
        seed = hash_str(seed, level);
    }
    bucket_state pbs = { .exhaustive = 1 };
    double t_search = now_s();
    warm_seen seen[SPLIT_MAXPARTS];
    int nseen = seen_parts(t, sp, p, seen);
    int evals = 0, rc = S->o->retune ? stored_part(S, t, &p->b, &pbs)
                                     : search_part(S, &tp, &p->b, S->sp.seed ^ seed, seen, nseen, &pbs, &evals, &p->capped);
    if (!S->o->retune) {
        S->searched++;
        S->searched_evals += evals;
    }
    sw_trace(S, "part search %s %s %s evals=%d %.4f", t->op, S->home, p->b.key, evals, now_s() - t_search);
    if (rc || sw_interrupted()) {
        bucket_state_free(&pbs);
        return rc ? -1 : 1;
    }
    qsort(pbs.f, (size_t)pbs.nf, sizeof *pbs.f, final_cmp);
    p->own = xcalloc(PART_OWN_MAX, sizeof *p->own);
    /* The budget spent in (or by) the search: its finalists are not built
    ** nor raced, the part's winner among its candidates stays. */
    int late = split_out_of_budget(S, sp) && !sw_interrupted();
    for (int i = 0; i < pbs.nf && !late && p->nown < S->sp.top_k && p->nown < PART_OWN_MAX; i++) {
        cand *c = &p->own[p->nown];
        if (part_holds(p, pbs.f[i].tmpl, pbs.f[i].config)) continue;
        if (cand_build(S, c, pbs.f[i].tmpl, pbs.f[i].config, &tp)) cand_free(c);
        else p->nown++;
    }
    bucket_state_free(&pbs);
    int nb = late || S->o->retune ? 0 : race_neighbours(S, p, &tp);
    int ns = late || S->o->retune || sw_interrupted() ? 0 : race_spans(S, t, p, &tp);
    if (sw_interrupted()) return 1;    /* a finalist's compile given up: the part is not decided */
    if (S->o->retune && !p->nown) return 0;
    char name[512], size[96], searched[160], what[320];
    split_part_name(t, sp, p, 0, name, sizeof name);
    task_shape_text(P->p[at].shape, t->ndims, size, sizeof size);
    snprintf(searched, sizeof searched, "searched at %s, %d candidate%s", size, evals, evals == 1 ? "" : "s");
    if (S->o->retune) snprintf(what, sizeof what, "%d of its stored finalists raced again", p->nown);
    else if (late) snprintf(what, sizeof what, "%s; the budget ran out before its finalists raced", searched);
    else if (p->nown) {
        char nbs[48] = "", sps[32] = "";
        if (nb) snprintf(nbs, sizeof nbs, "%s %d neighbours' winner%s", ns ? "," : " and", nb, nb == 1 ? "" : "s");
        if (ns) snprintf(sps, sizeof sps, " and %d span%s", ns, ns == 1 ? "" : "s");
        snprintf(what, sizeof what, "%s; %d new finalist%s%s%s raced", searched, p->nown - nb - ns,
                 p->nown - nb - ns == 1 ? "" : "s", nbs, sps);
    }
    else snprintf(what, sizeof what, "%s; none new", searched);
    if (p->worst > S->split_at)
        sw_say(S, "split      %s %s %s: its winner loses %s%.1f%% (at %s): %s\n", t->op, t->dtype, name,
            isfinite(p->worst) ? "" : "everything ", isfinite(p->worst) ? 100 * p->worst : 100.0,
            p->where[0] ? p->where : "its size", what);
    else
        sw_say(S, "split      %s %s %s: its winner ties or trails the vendor (within %.0f%% of its time; worst loss %.1f%% at %s): %s\n",
            t->op, t->dtype, name, 100 * VENDOR_TIE, 100 * p->worst, p->where[0] ? p->where : "its size", what);
    if (!p->nown) return part_polish(S, t, sp, p, &tp);
    /* The candidates that race beside the new ones: the winner, and the
    ** others but those that lose most in the part when the worker runs
    ** short. */
    int drop[PROBE_SLOTS] = { 0 }, nslots = 0;
    double loss[PROBE_SLOTS];
    for (int j = 0; j < p->n; j++) {
        int a;
        loss[j] = p->fi[j] != -1 ? probe_worst(P, &p->b, j, &a) : INFINITY;
        nslots += p->fi[j] != -1;
    }
    for (; nslots > PROBE_SLOTS - p->nown; nslots--) {
        int x = -1;
        for (int j = 0; j < p->n; j++)
            if (p->fi[j] != -1 && !drop[j] && j != p->w && (x < 0 || loss[j] > loss[x])) x = j;
        drop[x] = 1;
    }
    cand *c[PROBE_SLOTS];
    int fi[PROBE_SLOTS], n = 0, w = 0;
    for (int j = 0; j < p->n; j++) {
        if (p->fi[j] == -1 || drop[j]) continue;
        if (j == p->w) w = n;
        c[n] = p->c[j];
        fi[n++] = p->fi[j];
    }
    for (int i = 0; i < p->nown; i++) {
        c[n] = &p->own[i];
        fi[n++] = PART_OWN;
    }
    probes *Q = xcalloc(1, sizeof *Q);
    Q->m = n;
    int cut = 0;     /* the budget ran out before every size was raced: the candidates' winner stays */
    for (int k = 0; k < P->n && !rc && !cut; k++) rc = split_race(S, t, sp, c, fi, P->p[k].shape, Q, &cut);
    /* And where the new finalists' own tiling steps up inside the part. */
    long long steps[PROBE_WAVES][TMPL_MAXDIMS];
    int nsteps = 0;
    for (int i = 0; i < p->nown; i++)
        nsteps = probe_wave_shapes(&p->b, p->own[i].k.plan, PROBE_WAVE_STEPS, steps, nsteps, PROBE_WAVES);
    if (nsteps) {
        char at[256];
        probe_sizes_text(&p->b, steps, 0, nsteps, at, sizeof at);
        sw_trace(S, "part %s %s %s: where its new finalists' waves step up:%s", t->op, t->dtype, p->b.key, at);
    }
    for (int k = 0; k < nsteps && !rc && !cut; k++) rc = split_race(S, t, sp, c, fi, steps[k], Q, &cut);
    int a, k = probe_find(Q, p->b.rep, t->ndims);
    double worst;
    w = probe_winner(Q, &p->b, w, S->o->noise, &worst, &a);
    if (!rc && !cut && k >= 0 && Q->p[k].us[w] > 0) {   /* else the candidates' winner stays */
        p->n = n;
        memcpy(p->c, c, sizeof c);
        memcpy(p->fi, fi, sizeof fi);
        memcpy(p->us, Q->p[k].us, sizeof p->us);
        p->w = w;
        p->worst = worst;
        p->where[0] = 0;
        if (a >= 0) probe_where(Q, a, t->ndims, NULL, p->where, sizeof p->where);
        free(p->q);
        p->q = Q;
    } else {
        free(Q);
    }
    return rc || cut ? rc : part_polish(S, t, sp, p, &tp);
}

