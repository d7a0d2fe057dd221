/* sweep_split.c: see sweep_split.h. */
#define _GNU_SOURCE
#include "sweep_split.h"
#include "identity.h"
#include "sweep_flow.h"
#include "sweep_record.h"
#include "sweep_warm.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void part_clear(part *p)
{
    for (int j = 0; j < p->nown; j++) cand_free(&p->own[j]);
    free(p->own);
    free(p->q);
    memset(p, 0, sizeof *p);
}

void split_free(split *sp)
{
    for (int i = 0; i < SPLIT_MAXPARTS; i++) part_clear(&sp->p[i]);
    free(sp);
}

int split_out_of_budget(sw *S, split *sp)
{
    if (!sw_out_of_budget(S)) return 0;
    if (!sw_interrupted()) sp->cut = 1;
    return 1;
}

/* Whether a part that still loses more than split_at may get a search of
** its own (research_part): spec split_evals, and budget left. */
static int part_searched(sw *S, split *sp)
{
    return S->task && S->task->split_evals && !split_out_of_budget(S, sp);
}

/* Where a box split along one range dim alone is cut (cut[d], else 0: at
** bucket_split_point): where the probes say (probe_cut). */
static void split_cut(const sw *S, const bucket *box, const probes *Q, unsigned mask, long long *cut)
{
    int d = -1;
    for (int k = 0; k < box->ndims; k++)
        if ((mask >> k & 1) && !(box->exact >> k & 1)) {
            if (d >= 0) return;   /* more than one dim: each at its middle */
            d = k;
        }
    if (d >= 0 && (box->ranged >> d & 1)) cut[d] = probe_cut(Q, box, d, S->o->noise);
}

/* Whether the vendor takes a part whose winner is slot w of Q: the sweep
** lets it win (--vendor win) and it is faster than w at the part's size
** (split_store then makes it the part's winner when it wins their race
** too). */
static int vendor_takes(const sw *S, const probes *Q, const bucket *part, int w)
{
    int k = S->V.mode == SWEEP_VENDOR_WIN && Q ? probe_find(Q, part->rep, part->ndims) : -1;
    return k >= 0 && Q->p[k].vendor_us > 0 && Q->p[k].vendor_us < Q->p[k].us[w];
}

/* Split box (the bucket, or part up of sp; -1: the bucket) among the
** candidates cs[0, Q->m) (fi: their indices in bs->f, or -1, or PART_OWN)
** raced at the probes Q, whose winner cs[cw] loses more than the task's
** split_at there: its parts along every dim that can be split (cut at
** their middles, or a range dim split alone where the probes say:
** split_cut) are raced at their sizes and upper edges, and each part's winner chosen among the
** candidates as box_winner does. A dim whose halves keep the same winners
** in every part is joined again, until each split dim changes a winner
** somewhere; split along none, the box stays whole, unless a part may get a
** search of its own (part_searched): the winner still loses more than
** split_at somewhere, and only a config that is not a candidate can change
** that. Then the parts of the last split tried are kept on trial (*trial):
** their searches decide (hold_probe for the bucket, settle_part for a part).
** The parts are added to sp->p after those there, at up's depth plus one,
** with the candidates and, each, the probes of Q inside it; a part whose
** winner still loses more than split_at is split again by settle_part.
** Returns how many; 0 when not split, with the reason in *why. */
int split_box(sw *S, const op_task *t, const bucket *box, cand *const *cs, const int *fi, int cw, probes *Q,
                     split *sp, int up, int *trial, const char **why)
{
    *trial = 0;
    *why = "it cannot be split (one size per dim)";
    unsigned mask = 0;
    long long at, cut[SPEC_MAXDIMS] = { 0 };
    for (int d = 0; d < box->ndims; d++)
        if (!(box->exact >> d & 1) && bucket_split_point(box->lo[d], box->hi[d], &at)) mask |= 1u << d;   /* exact: one size */
    split_cut(S, box, Q, mask, cut);
    bucket parts[1 << SPEC_MAXDIMS];
    int n = mask ? bucket_split_at(box, mask, cut, parts) : 0;
    if (n <= 1) return 0;
    for (int i = 0; i < n; i++) {
        long long hi[TMPL_MAXDIMS];
        if (split_out_of_budget(S, sp)) {   /* the parts not raced yet: no choice among them */
            *why = "the budget ran out";   /* or Ctrl-C: then nothing is said nor stored (hold_probe) */
            return 0;
        }
        probe_upper(&parts[i], hi);
        if (probe_race(S, t, cs, fi, parts[i].rep, Q) < 0 || probe_race(S, t, cs, fi, hi, Q) < 0) {
            *why = "the worker could not take a part's size";
            return 0;
        }
    }
    *why = "no part would change it";
    int w[1 << SPEC_MAXDIMS], on_trial = 0;
    for (;;) {
        n = mask ? bucket_split_at(box, mask, cut, parts) : 0;
        if (n <= 1) return 0;
        for (int i = 0; i < n; i++) {
            double worst;
            int a;
            w[i] = probe_winner(Q, &parts[i], cw, S->o->noise, &worst, &a);
            if (vendor_takes(S, Q, &parts[i], w[i])) w[i] = -1;   /* the vendor's part: a winner of its own */
        }
        /* A dim is kept when some pair of parts that differ in it alone
        ** differ in their winners. */
        unsigned keep = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                int differ = -1, many = 0;
                for (int d = 0; d < box->ndims; d++)
                    if (parts[i].lo[d] != parts[j].lo[d]) many += differ >= 0, differ = d;
                if (differ >= 0 && !many && w[i] != w[j]) keep |= 1u << differ;
            }
        if (keep == mask) break;
        if (!keep) {
            if (!part_searched(S, sp)) {
                if (sp->cut) *why = "no part would change it, and the budget ran out before the parts' searches";
                return 0;
            }
            on_trial = 1;
            break;
        }
        mask = keep;
    }
    if (sp->n + n > SPLIT_MAXPARTS) {
        *why = "the bucket has too many parts already";
        return 0;
    }
    int depth = up < 0 ? 1 : sp->p[up].depth + 1;
    for (int i = 0; i < n; i++) {
        part *p = &sp->p[sp->n + i];
        memset(p, 0, sizeof *p);
        p->b = parts[i];
        p->depth = depth;
        p->up = up;
        p->capped = up >= 0 && sp->p[up].capped;   /* its candidates came from a capped search */
        int a, k = probe_find(Q, parts[i].rep, box->ndims);
        p->w = probe_winner(Q, &parts[i], cw, S->o->noise, &p->worst, &a);
        if (k < 0 || !(Q->p[k].us[p->w] > 0)) {   /* every part needs its winner's time at its size */
            *why = "a part's winner has no time at its size";
            return 0;
        }
        memcpy(p->us, Q->p[k].us, sizeof p->us);
        if (a >= 0) probe_where(Q, a, box->ndims, NULL, p->where, sizeof p->where);
        p->n = Q->m;
        for (int j = 0; j < Q->m; j++) {
            p->c[j] = cs[j];
            p->fi[j] = fi[j];
        }
    }
    for (int i = 0; i < n; i++) sp->p[sp->n + i].q = probes_in(Q, &parts[i]);
    sp->n += n;
    *trial = on_trial;
    return n;
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
** sweep finds them there. It is seeded by seed (research_part: the spec's
** seed and the part's key), so it tries other configs than the bucket's
** search did. Its finalists land in pbs; *evals counts its candidates,
** *capped says whether a cap or the budget cut it. */
static int search_part(sw *S, const op_task *tp, const bucket *pb, unsigned long long seed, bucket_state *pbs, int *evals,
                       int *capped)
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
        search *se = tname ? warm_search(S, tp, pb, tname, st->search, seed, max_evals)
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

/* Where part p is searched (research_part): the probe inside it where its
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

/* A box's edges on a line: "rows [1024, 1408), cols [5760, 8192)". */
static size_t box_text(const op_task *t, const bucket *b, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = 0;
    for (int d = 0; d < b->ndims && at < cap; d++)
        at += (size_t)snprintf(out + at, cap - at, "%s%s [%lld, %lld)", d ? ", " : "", t->dims[d], b->lo[d], b->hi[d]);
    return at < cap ? at : cap - 1;
}

/* A part's name on its lines: its key, with its edges where asked or
** where it is a part of a part (whose key it may share), and then its
** level and its parent's edges. */
static void part_name(const op_task *t, const split *sp, const part *p, int edges, char *out, size_t cap)
{
    size_t at = (size_t)snprintf(out, cap, "%s", p->b.key);
    if ((edges || p->depth > 1) && at + 2 < cap) {
        at += (size_t)snprintf(out + at, cap - at, ": ");
        at += box_text(t, &p->b, out + at, cap - at);
    }
    if (p->depth > 1 && at + 32 < cap) {
        at += (size_t)snprintf(out + at, cap - at, ", level %d in ", p->depth);
        box_text(t, &sp->p[p->up].b, out + at, cap - at);
    }
}

/* Part p's own finalists (own[0, nown), at most 8) gain the registry's
** winners nearest the part's search size tp for each template among its
** candidates (warm_neighbours), those not candidates or finalists already:
** the search took at most a quarter of its evaluations from them, and a
** neighbour's winner is what holds the next part. On an H200 (eighteenth
** session, call 9) the winner of 1024 x 4096's part [128, 129), bm 64 bn
** 128 csplit 4, ran m = 100..127 in 7.8-8.0 us, the part [97, 128)'s
** 8.7-8.8; its search at m = 97 (8 evaluations of swapab) had started
** from two nearer winners only. Returns how many were added. */
static int race_neighbours(sw *S, part *p, const op_task *tp)
{
    int added = 0;
    for (int j = 0; j < p->n && p->nown < 8; j++) {
        const char *tname = p->c[j]->tmpl;
        int seen = 0;
        for (int i = 0; i < j && !seen; i++) seen = !strcmp(p->c[i]->tmpl, tname);
        if (seen || !p->c[j]->config) continue;
        char **w = NULL;
        int nw = warm_neighbours(S, tp, &p->b, tname, &w);
        for (int x = 0; x < nw && p->nown < 8 && !sw_interrupted(); x++) {
            int have = 0;
            for (int i = 0; i < p->n && !have; i++)
                have = p->c[i]->config && !strcmp(p->c[i]->tmpl, tname) && !strcmp(p->c[i]->config, w[x]);
            for (int i = 0; i < p->nown && !have; i++) have = !strcmp(p->own[i].tmpl, tname) && !strcmp(p->own[i].config, w[x]);
            if (have) continue;
            cand *c = &p->own[p->nown];
            if (cand_build(S, c, tname, w[x], tp)) cand_free(c);
            else p->nown++, added++;
        }
        warm_free(w, nw);
    }
    return added;
}

/* A part whose winner among its candidates (the hold race's slots, or its
** parent's candidates) still loses more than split_at: its best config is
** not among them, all found by searches elsewhere (the bucket's at its
** size, its parents' where they lost). So it gets a search of its own
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
** the part, each verified there first (the search verified them at its
** size only; the candidates that lose most there make room when the
** worker's slots run short): the smallest worst loss wins, the candidates'
** winner when within the noise margin of that. The part's winner is stored
** with its time at the part's own size, wherever its search ran; the
** search's measurements are the part's, under its key, at the size they
** were taken (a resumed sweep finds them only there). The search is seeded
** by the part's key and, below the first level, its depth (a part's first
** part shares its key). Returns 1 when Ctrl-C cut the search (the part is
** not decided), -1 for a tool failure. */
static int research_part(sw *S, const op_task *t, split *sp, part *p)
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
    int evals = 0, rc = S->o->retune ? stored_part(S, t, &p->b, &pbs)
                                     : search_part(S, &tp, &p->b, S->sp.seed ^ seed, &pbs, &evals, &p->capped);
    if (!S->o->retune) {
        S->searched++;
        S->searched_evals += evals;
    }
    if (rc || sw_interrupted()) {
        bucket_state_free(&pbs);
        return rc ? -1 : 1;
    }
    qsort(pbs.f, (size_t)pbs.nf, sizeof *pbs.f, final_cmp);
    p->own = xcalloc(8, sizeof *p->own);
    /* The budget spent in (or by) the search: its finalists are not built
    ** nor raced, the part's winner among its candidates stays. */
    int late = split_out_of_budget(S, sp) && !sw_interrupted();
    for (int i = 0; i < pbs.nf && !late && p->nown < S->sp.top_k && p->nown < 8; i++) {
        int slot = 0;
        for (int j = 0; j < p->n && !slot; j++)
            slot = p->c[j]->config && !strcmp(p->c[j]->tmpl, pbs.f[i].tmpl) && !strcmp(p->c[j]->config, pbs.f[i].config);
        cand *c = &p->own[p->nown];
        if (slot) continue;
        if (cand_build(S, c, pbs.f[i].tmpl, pbs.f[i].config, &tp)) cand_free(c);
        else p->nown++;
    }
    bucket_state_free(&pbs);
    int nb = late || S->o->retune ? 0 : race_neighbours(S, p, &tp);
    if (sw_interrupted()) return 1;    /* a finalist's compile given up: the part is not decided */
    if (S->o->retune && !p->nown) return 0;
    char name[512], size[96], what[224];
    part_name(t, sp, p, 0, name, sizeof name);
    task_shape_text(P->p[at].shape, t->ndims, size, sizeof size);
    if (S->o->retune) snprintf(what, sizeof what, "%d of its stored finalists raced again", p->nown);
    else if (late) snprintf(what, sizeof what, "searched at %s, %d candidate%s; the budget ran out before its finalists raced",
                            size, evals, evals == 1 ? "" : "s");
    else if (p->nown && nb) snprintf(what, sizeof what, "searched at %s, %d candidate%s; %d new finalist%s and %d neighbours' winner%s raced",
                                     size, evals, evals == 1 ? "" : "s", p->nown - nb, p->nown - nb == 1 ? "" : "s", nb, nb == 1 ? "" : "s");
    else if (p->nown) snprintf(what, sizeof what, "searched at %s, %d candidate%s; %d new finalist%s raced", size, evals,
                               evals == 1 ? "" : "s", p->nown, p->nown == 1 ? "" : "s");
    else snprintf(what, sizeof what, "searched at %s, %d candidate%s; none new", size, evals, evals == 1 ? "" : "s");
    if (p->worst > S->split_at)
        sw_say(S, "split      %s %s %s: its winner loses %s%.1f%% (at %s): %s\n", t->op, t->dtype, name,
            isfinite(p->worst) ? "" : "everything ", isfinite(p->worst) ? 100 * p->worst : 100.0,
            p->where[0] ? p->where : "its size", what);
    else
        sw_say(S, "split      %s %s %s: its winner ties or trails the vendor (within %.0f%% of its time; worst loss %.1f%% at %s): %s\n",
            t->op, t->dtype, name, 100 * VENDOR_TIE, 100 * p->worst, p->where[0] ? p->where : "its size", what);
    if (!p->nown) return 0;
    /* The candidates that race beside the new ones: the winner, and the
    ** others but those that lose most in the part when the worker runs
    ** short. */
    int drop[16] = { 0 }, nslots = 0;
    double loss[16];
    for (int j = 0; j < p->n; j++) {
        int a;
        loss[j] = p->fi[j] != -1 ? probe_worst(P, &p->b, j, &a) : INFINITY;
        nslots += p->fi[j] != -1;
    }
    for (; nslots > 16 - p->nown; nslots--) {
        int x = -1;
        for (int j = 0; j < p->n; j++)
            if (p->fi[j] != -1 && !drop[j] && j != p->w && (x < 0 || loss[j] > loss[x])) x = j;
        drop[x] = 1;
    }
    cand *c[16];
    int fi[16], n = 0, w = 0;
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
    for (int k = 0; k < P->n && !rc && !cut; k++)
        if ((cut = split_out_of_budget(S, sp))) break;
        else if (probe_race(S, t, c, fi, P->p[k].shape, Q) < 0) rc = -1;
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
    return rc;
}

/* The line of a split: the bucket b (i < 0, its winner losing loss) or
** part i of sp, where it is split, and why. */
void split_say(sw *S, const op_task *t, const bucket *b, const split *sp, int i, double loss)
{
    const bucket *box = i < 0 ? b : &sp->p[i].b;
    int n = 0, last = -1;
    for (int j = i + 1; j < sp->n; j++)
        if (sp->p[j].up == i) n++, last = j;
    strbuf along = STRBUF_INIT;
    for (int d = 0; d < box->ndims; d++)
        if (sp->p[last].b.lo[d] != box->lo[d])
            sb_printf(&along, "%s%s at %lld", along.len ? ", " : "", t->dims[d], sp->p[last].b.lo[d]);
    if (i < 0) {
        sw_say(S, "split      %s %s %s: the winner loses %.1f%%, more than %.1f%%: %d parts, split along %s\n", t->op,
            t->dtype, b->key, 100 * loss, 100 * S->split_at, n, sb_str(&along));
    } else {
        char name[512];
        part_name(t, sp, &sp->p[i], 1, name, sizeof name);
        sw_say(S, "split      %s %s %s: its winner loses %.1f%%, more than %.1f%%: %d parts of level %d, split along %s\n",
            t->op, t->dtype, name, 100 * sp->p[i].worst, 100 * S->split_at, n, sp->p[i].depth + 1, sb_str(&along));
    }
    sb_free(&along);
}

/* The lines of part i of sp: a stored part's edges, its winner and the
** winner's worst loss (and why it was not split again where that is more
** than split_at); a part split again, its split's line, then its parts'. */
void split_say_part(sw *S, const op_task *t, const split *sp, int i)
{
    const part *p = &sp->p[i];
    if (p->nkids) {
        split_say(S, t, NULL, sp, i, p->worst);
        for (int j = i + 1; j < sp->n; j++)
            if (sp->p[j].up == i) split_say_part(S, t, sp, j);
        return;
    }
    char name[512];
    part_name(t, sp, p, 1, name, sizeof name);
    sw_say(S, "split      %s %s %s: %s %s, worst loss %s%.1f%% (at %s)%s%s\n", t->op, t->dtype, name, p->c[p->w]->tmpl,
        p->c[p->w]->config, isfinite(p->worst) ? "" : "everything ", isfinite(p->worst) ? 100 * p->worst : 100.0,
        p->where[0] ? p->where : "its size", p->whole[0] ? "; not split again: " : "", p->whole);
}

/* Whether a split on trial is kept: a stored part of it, sp->p[first, n)
** (the parts of the split, and theirs), has a winner other than x, the
** winner all of the split's parts had among their candidates; or, where
** the vendor may win, the vendor is faster than the winner at some
** stored part's size and not at another's (a vendor part beside a
** template's, where the whole would be the vendor's or the template's). */
int split_trial_kept(const sw *S, const split *sp, int first, const cand *x)
{
    int vendors = 0, stored = 0;
    for (int j = first; j < sp->n; j++) {
        if (sp->p[j].nkids) continue;
        if (sp->p[j].c[sp->p[j].w] != x) return 1;
        vendors += vendor_takes(S, sp->p[j].q, &sp->p[j].b, sp->p[j].w);
        stored++;
    }
    return vendors > 0 && vendors < stored;
}

/* Part i of sp decided: when its winner loses more than split_at, or ties
** or trails the vendor somewhere in it (probe_behind_vendor: a part behind
** the vendor by less than split_at is a hole all the same, and its
** candidates came from searches elsewhere), it gets a search of its own
** (research_part); when its winner still loses more than split_at after that
** (or no search could run), it is split again among its candidates
** (split_box, its new finalists included), and its parts are decided the
** same way, down to the task's split_depth. A split on trial (its parts'
** winners among the candidates all the same) is kept only where a search
** below it changed a winner; else its parts are dropped, and the part's
** winner is chosen again over every size raced in it, its parts' included,
** as a bucket left whole is (hold_probe). A part that still loses more than
** split_at says why it was not split again (p->whole). Returns 0, 1 when
** Ctrl-C cut a search in it or came before it was split again (the bucket
** is not decided), -1 when a tool failed. */
int split_settle(sw *S, const op_task *t, split *sp, int i)
{
    part *p = &sp->p[i];
    int rc = 0;
    int behind = probe_behind_vendor(p->q, &p->b, p->w);
    if ((p->worst > S->split_at || behind) && (rc = research_part(S, t, sp, p))) return rc;
    if (!(p->worst > S->split_at)) return 0;
    if (sp->cut) {   /* the budget ran out: the part keeps its winner among its candidates */
        snprintf(p->whole, sizeof p->whole, "the budget ran out");
        return 0;
    }
    if (p->depth >= S->split_depth) {
        snprintf(p->whole, sizeof p->whole, "split_depth %d reached", S->split_depth);
        return 0;
    }
    if (sw_interrupted()) return 1;   /* Ctrl-C: no more races; the resume splits it */
    const char *why;
    int trial, first = sp->n, n = split_box(S, t, &p->b, p->c, p->fi, p->w, p->q, sp, i, &trial, &why);
    if (!n) {
        snprintf(p->whole, sizeof p->whole, "%s", why);
        return 0;
    }
    p->nkids = n;
    const cand *x = sp->p[first].c[sp->p[first].w];
    for (int j = first; j < first + n && !rc; j++) rc = split_settle(S, t, sp, j);
    if (rc || !trial || split_trial_kept(S, sp, first, x)) return rc;
    for (int j = first; j < sp->n; j++) part_clear(&sp->p[j]);
    sp->n = first;
    p->nkids = 0;
    snprintf(p->whole, sizeof p->whole, "no part would change its winner, nor did a part's own search%s",
             sp->cut ? " before the budget ran out" : "");
    int a, k = probe_find(p->q, p->b.rep, t->ndims);
    double worst;
    int w = probe_winner(p->q, &p->b, p->w, S->o->noise, &worst, &a);
    if (k < 0 || !(p->q->p[k].us[w] > 0)) worst = probe_worst(p->q, &p->b, w = p->w, &a);
    p->w = w;
    p->worst = worst;
    p->where[0] = 0;
    if (a >= 0) probe_where(p->q, a, t->ndims, NULL, p->where, sizeof p->where);
    return 0;
}

/* The parts of a split bucket as winner rows, stored in one transaction in
** place of the bucket's: those not split again, at every level (they
** partition the bucket). Each part's finalists are the candidates raced in
** it (the hold race's slots, its parents' searches' and its own search's)
** that ran at its size, timed there. */
int split_store(sw *S, const op_task *t, const bucket *b, const bucket_state *bs, const split *sp)
{
    winner *W = xcalloc(SPLIT_MAXPARTS, sizeof *W);
    op_task *tp = xcalloc(SPLIT_MAXPARTS, sizeof *tp);
    int rc = 0, n = 0, raced = 0;
    for (int i = 0; i < sp->n && !rc; i++) {
        const part *p = &sp->p[i];
        if (p->nkids) continue;
        if (task_at(S, t, p->b.rep, &tp[n])) { rc = error("%s", tmpl_errmsg(S->T)); break; }
        final f[16];
        int k = 0, w = -1;
        double default_us = 0;
        for (int j = 0; j < p->n; j++) {
            if (p->fi[j] == -1 || !(p->us[j] > 0)) continue;
            if (p->fi[j] >= 0) {
                f[k] = bs->f[p->fi[j]];
            } else {
                memset(&f[k], 0, sizeof f[k]);
                snprintf(f[k].tmpl, sizeof f[k].tmpl, "%s", p->c[j]->tmpl);
                f[k].config = p->c[j]->config;
            }
            f[k].median_us = p->us[j];
            if (f[k].is_default) default_us = p->us[j];
            if (j == p->w) w = k;
            k++;
        }
        if (w < 0) { rc = error("%s %s %s: its winner has no time there", t->op, t->dtype, p->b.key); break; }
        for (int x = 1; x < k; x++)     /* fastest first, as a race leaves them */
            for (int y = x; y > 0 && f[y].median_us < f[y - 1].median_us; y--) {
                final tmp = f[y];
                f[y] = f[y - 1];
                f[y - 1] = tmp;
                w = w == y ? y - 1 : w == y - 1 ? y : w;
            }
        rc = record_row(S, &tp[n], &p->b, f, k, w, default_us, bs->exhaustive && !p->capped, p->c[p->w], 1, &W[n]);
        n++;
        /* The part's winner against the vendor at the part's size. */
        if (!rc && S->V.mode == SWEEP_VENDOR_WIN && sweep_vendor_serves(&S->V, &tp[n - 1])) {
            raced = 1;
            rc = task_send(S, &tp[n - 1]);
            if (!rc) rc = record_vendor_race(S, &tp[n - 1], &p->b, b->key, p->c[p->w], default_us, &W[n - 1]);
        }
    }
    if (raced && task_send(S, t)) rc = -1;   /* the bucket's task again, as the caller left it */
    if (!rc && reg_winners_put(S->R, b->key, W, n)) rc = error("%s", reg_errmsg(S->R));
    for (int i = 0; i < n; i++) {
        if (!rc) {
            S->winners++;
            record_say(S, &tp[i], &W[i]);
        }
        record_row_free(&W[i]);
    }
    free(W);
    free(tp);
    return rc;
}
