/* sweep_split.c: see sweep_split.h. */
#define _GNU_SOURCE
#include "sweep_split.h"
#include "sweep_part.h"
#include "sweep_record.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
** their searches decide (hold_probe for the bucket, split_settle for a part).
** The parts are added to sp->p after those there, at up's depth plus one,
** with the candidates and, each, the probes of Q inside it; a part whose
** winner still loses more than split_at is split again by split_settle.
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
        split_part_name(t, sp, &sp->p[i], 1, name, sizeof name);
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
    split_part_name(t, sp, p, 1, name, sizeof name);
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
** (part_research, sweep_part.h); when its winner still loses more than split_at after that
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
    if ((p->worst > S->split_at || probe_behind_vendor(p->q, &p->b, p->w)) && (rc = part_research(S, t, sp, p))) return rc;
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
        final f[PROBE_SLOTS];
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
