/* sweep_hold.c: see sweep_hold.h. hold_probe in named steps: the slots
** (hold_slots), their races at three sizes of the bucket (hold_race), the
** choice (hold_choose, pure), its lines (hold_say), the split where the
** winner still loses too much (hold_split), the bucket left whole after its
** parts' sizes were raced (hold_whole), and the counts (hold_tally). */
#define _GNU_SOURCE
#include "sweep_hold.h"
#include "sweep_task.h"
#include "align.h"
#include "identity.h"
#include "json.h"
#include "registry_scan.h"
#include "vendor.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One bucket's hold: the race's slots, the probes they were raced at, and
** what was chosen. */
typedef struct hold {
    sw *S;
    const op_task *t;
    const bucket *b;
    bucket_state *bs;
    cand *ps[PROBE_SLOTS];  /* the slots: ps[0, m) */
    int *fi;                /* ps[i]'s index in bs->f (-1: out of the race) */
    int m;
    probes *P;
    split *sp;              /* the split, and the budget's cut of hold (split.cut) */
    int ns;                 /* the sizes hold races at (hold_race) */
    int probed, failed;     /* raced beyond the representative; a tool failed */
    int w, nw;              /* the race's winner, and the winner now (in bs->f) */
    hold_choice c;
    double after;           /* the winner's worst loss after hold */
    int hw;                 /* the hold winner's slot */
    int nheld;              /* the probes hold raced; splitting adds the parts' */
} hold;

/* The slots: the race's cs[0, k), then the next finalists up to
** HOLD_FINALISTS, compiled. Returns how many. */
static int hold_slots(sw *S, const op_task *t, bucket_state *bs, cand *cs, int k, int *fi)
{
    int m = bs->nf < HOLD_FINALISTS ? bs->nf : HOLD_FINALISTS;
    if (m < k) m = k;
    /* retune: the stored parts' winners are slots, next after the race's:
    ** a part's winner may be slow at the bucket's size (a config fast only
    ** in its part, found by the part's own search), and a bucket raced
    ** without it would seem to hold, or its part would lose it. */
    for (int i = 0, at = k; i < bs->nparts && at < PROBE_SLOTS; i++)
        for (int j = at; j < bs->nf; j++)
            if (!strcmp(bs->f[j].tmpl, bs->parts[i].tmpl) && !strcmp(bs->f[j].config, bs->parts[i].config)) {
                final x = bs->f[j];
                memmove(&bs->f[at + 1], &bs->f[at], sizeof *bs->f * (size_t)(j - at));
                bs->f[at++] = x;
                if (m < at) m = at;
                break;
            }
    for (int i = 0; i < k; i++) {
        fi[i] = -1;
        for (int j = 0; j < k; j++)
            if (!strcmp(bs->f[j].tmpl, cs[i].tmpl) && cs[i].config && !strcmp(bs->f[j].config, cs[i].config)) fi[i] = j;
    }
    for (int i = k; i < m; i++) {
        fi[i] = i;
        if (cand_build(S, &cs[i], bs->f[i].tmpl, bs->f[i].config, t)) fi[i] = -1;
    }
    return m;
}

/* The shape of pass 0 (the representative), 1 (the geometric middle) or 2
** (the upper edge); 0 when it is the representative's again. An exact dim
** (spec_dim.exact) has one size: the representative's. */
static int hold_shape(const op_task *t, const bucket *b, int pass, long long *shape)
{
    int same = 1;
    for (int d = 0; d < b->ndims; d++) {
        long long x = pass == 1 ? (long long)sqrt((double)(b->lo[d] > 1 ? b->lo[d] : 1) * (double)b->hi[d]) : b->hi[d] - 1;
        long long v = pass == 0 || (b->exact >> d & 1) ? t->shape[d] : probe_size(b, d, x, t->shape[d]);
        shape[d] = v;
        same &= v == t->shape[d];
    }
    return pass == 0 || !same;
}

/* The shapes hold races the slots at, the representative first: three
** (hold_shape), or a range bucket's (probe_range_shapes). */
static int hold_shapes(const op_task *t, const bucket *b, long long (*shapes)[TMPL_MAXDIMS], int cap)
{
    if (b->ranged) return probe_range_shapes(b, shapes, cap);
    int n = 0;
    for (int pass = 0; pass < 3 && n < cap; pass++) n += hold_shape(t, b, pass, shapes[n]);
    return n;
}

/* The holes `aitune scan` found in bucket b on this GPU (registry_scan.h),
** timed t's way, at sizes of classes b's winner must run (align.h): more
** shapes for hold to race at, so a winner that lost there to another
** finalist is replaced, or the bucket split. */
typedef struct hole_ctx {
    const sw *S;
    const op_task *t;
    const bucket *b;
    char hw[256];
    long long (*shapes)[TMPL_MAXDIMS];
    int n, cap;
} hole_ctx;

static int keep_hole(const reg_scan *sc, void *vctx)
{
    hole_ctx *h = vctx;
    const op_task *t = h->t;
    if (!sc->hole || sc->stream != t->stream || strcmp(sc->arch, h->S->arch) || strcmp(sc->dtype, t->dtype) ||
        strcmp(sc->hw, h->hw) || h->n == h->cap)
        return 0;
    json *sh = NULL;
    char err[64];
    long long x[TMPL_MAXDIMS] = { 0 };
    int ok = !json_parse(sc->shape, &sh, err, sizeof err) && sh->type == JSON_OBJ;
    for (int d = 0; ok && d < t->ndims; d++) {
        const json *v = json_get(sh, t->dims[d]);
        ok = v && v->type == JSON_NUM && v->is_int && v->i >= h->b->lo[d] && v->i < h->b->hi[d] &&
             align_log2(v->i) >= align_log2(h->b->rep[d] > 0 ? h->b->rep[d] : 1);
        if (ok) x[d] = v->i;
    }
    json_free(sh);
    for (int i = 0; ok && i < h->n; i++) ok = memcmp(h->shapes[i], x, sizeof *x * (size_t)t->ndims) != 0;
    if (ok) memcpy(h->shapes[h->n++], x, sizeof x);
    return 0;
}

int hold_holes(sw *S, reg *R, const op_task *t, const bucket *b, long long (*shapes)[TMPL_MAXDIMS], int n, int cap)
{
    hole_ctx h = { .S = S, .t = t, .b = b, .shapes = shapes, .n = n, .cap = cap };
    identity_hw(&S->dev, h.hw, sizeof h.hw);
    if (reg_scan_each(R, t->op, keep_hole, &h)) warning("%s", reg_errmsg(R));   /* the holes are a hint */
    return h.n;
}

/* Every size hold races at: its own (hold_shapes), then the scan's holes. */
static int hold_sizes(sw *S, const op_task *t, const bucket *b, long long (*shapes)[TMPL_MAXDIMS])
{
    int ns = hold_shapes(t, b, shapes, PROBES_MAX / 2);
    return hold_holes(S, S->R, t, b, shapes, ns, PROBES_MAX / 2);
}

/* Hold's defaults (sweep_hold.h): slots cs[m, ...) after the finalists',
** each template's default at a size of shapes[1, ns) (the representative's
** is shapes[0]), built at that size, fi PART_OWN. Returns the slots now. */
static int hold_fresh(sw *S, const op_task *t, const bucket_state *bs, long long (*shapes)[TMPL_MAXDIMS], int ns,
                      cand *cs, int *fi, int m)
{
    int m0 = m;
    for (int j = 0; j < bs->nf && m < HOLD_SLOTS && !sw_interrupted(); j++) {
        int seen = vendor_is_template(bs->f[j].tmpl);
        for (int i = 0; i < j && !seen; i++) seen = !strcmp(bs->f[i].tmpl, bs->f[j].tmpl);
        for (int s = 1; s < ns && m < HOLD_SLOTS && !seen && !sw_interrupted(); s++) {
            op_task tp;
            char *cfg = NULL;
            int have = 0;
            if (task_at(S, t, shapes[s], &tp) || tmpl_default(S->T, bs->f[j].tmpl, &tp, &S->dev, &cfg) || !cfg) {
                free(cfg);
                continue;
            }
            for (int i = 0; i < bs->nf && !have; i++) have = !strcmp(bs->f[i].tmpl, bs->f[j].tmpl) && !strcmp(bs->f[i].config, cfg);
            for (int i = m0; i < m && !have; i++) have = !strcmp(cs[i].tmpl, bs->f[j].tmpl) && !strcmp(cs[i].config, cfg);
            if (!have) {
                cand_free(&cs[m]);
                memset(&cs[m], 0, sizeof cs[m]);
                fi[m] = PART_OWN;
                if (!cand_build(S, &cs[m], bs->f[j].tmpl, cfg, &tp)) m++;
            }
            free(cfg);
        }
    }
    if (m > m0) sw_trace(S, "hold %s %s: %d templates' defaults at its other sizes raced", t->op, t->dtype, m - m0);
    return m;
}

/* The sizes where the finalists' own tiling steps (sweep_probe.h:
** probe_wave_shapes): the race's winner's first, then each other
** finalist's, PROBE_WAVE_STEPS a slot and PROBE_WAVES in all, after shapes[0,
** ns). Returns the sizes now. */
static int hold_wave_sizes(const bucket *b, const cand *cs, const int *fi, int m, int w,
                           long long (*shapes)[TMPL_MAXDIMS], int ns)
{
    int cap = ns + PROBE_WAVES < PROBES_MAX / 2 ? ns + PROBE_WAVES : PROBES_MAX / 2;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < m; i++)
            if (fi[i] >= 0 && (fi[i] == w) == (pass == 0))
                ns = probe_wave_shapes(b, cs[i].k.plan, PROBE_WAVE_STEPS, shapes, ns, cap);
    return ns;
}

/* The slots raced at the hold's sizes; the finalists' stored times become
** those of the race at the representative. The budget stops it before a
** size (split_out_of_budget): then there is no choice (hold_probe). */
static void hold_race(hold *H, long long (*shapes)[TMPL_MAXDIMS], int ns)
{
    for (int pass = 0; pass < ns && !H->failed && !split_out_of_budget(H->S, H->sp); pass++) {
        const long long *shape = shapes[pass];
        int n0 = H->P->n, rc = probe_race(H->S, H->t, H->ps, H->fi, shape, H->P);
        if (rc < 0) H->failed = 1;
        if (rc <= 0 || H->P->n == n0) continue;
        for (int i = 0; i < H->m && pass == 0; i++)
            if (H->fi[i] >= 0 && H->P->p[n0].us[i] > 0) {   /* hold's defaults (PART_OWN) are no finalist */
                H->bs->f[H->fi[i]].median_us = H->P->p[n0].us[i];
                H->bs->f[H->fi[i]].spread = H->P->p[n0].spread[i];
            }
        H->probed |= pass > 0;
    }
}

int hold_choose(const probes *P, const bucket *b, const int *fi, int w, double noise, hold_choice *c)
{
    c->cw = -1;
    c->cb = 0;
    for (int i = 0; i < P->m; i++) {
        c->at[i] = -1;
        c->worst[i] = fi[i] >= 0 ? probe_worst(P, b, i, &c->at[i]) : INFINITY;
        if (fi[i] == w) c->cw = i;
        if (c->worst[i] < c->worst[c->cb]) c->cb = i;
    }
    if (c->cw < 0 || fi[c->cb] < 0) {
        c->nw = w;
        return 0;
    }
    double worst;
    int a, won = probe_winner(P, b, c->cw, noise, &worst, &a);
    if (fi[won] >= 0) c->cb = won;
    c->nw = fi[c->cb] >= 0 && c->cb != c->cw ? fi[c->cb] : w;
    return 1;
}

/* Where slot i loses most, on a line. */
static void hold_where(const hold *H, int i, char *out, size_t cap)
{
    int a = H->c.at[i];
    if (H->fi[i] < 0 || a < 0)
        snprintf(out, cap, "the representative");
    else
        probe_where(H->P, a, H->b->ndims, H->t->shape, out, cap);
}

/* The choice counted and said. */
static void hold_say(hold *H)
{
    sw *S = H->S;
    const op_task *t = H->t;
    int cw = H->c.cw, cb = H->c.cb, moved = H->nw != H->w;
    double wc = H->c.worst[cw];
    S->held++;
    S->moved += moved;
    H->after = moved ? H->c.worst[cb] : wc;
    if (isfinite(wc) && wc > S->hold_before) S->hold_before = wc;
    if (isfinite(H->after) && H->after > S->hold_after) S->hold_after = H->after;
    S->broken_before += !isfinite(wc);
    char where[96];
    hold_where(H, cw, where, sizeof where);
    sw_say(S, "hold       %s %s %s: the race's winner loses %s%.1f%% (at %s); %s\n", t->op, t->dtype, H->b->key,
           isfinite(wc) ? "" : "everything ", isfinite(wc) ? 100 * wc : 100.0, where,
           !moved ? "it stays"
           : H->c.worst[cb] < wc ? "another finalist, worst loss smaller, wins"
                                  : "another finalist, worst loss within 2% and mean loss smaller, wins");
    if (moved) {
        hold_where(H, cb, where, sizeof where);
        sw_say(S, "hold       %s %s %s: %s %s, worst loss %.1f%% (at %s)\n", t->op, t->dtype, H->b->key,
               H->bs->f[H->nw].tmpl, H->bs->f[H->nw].config, 100 * H->c.worst[cb], where);
    }
    H->hw = moved ? cb : cw;
    H->nheld = H->P->n;
}

/* The winner still loses more than split_at: the bucket split, its parts
** decided (each part's own search, split again), a split on trial kept only
** where a part's own search changed a winner. */
static void hold_split(hold *H, split *sp)
{
    sw *S = H->S;
    const op_task *t = H->t;
    const bucket *b = H->b;
    if (S->split_at > 0 && H->after > S->split_at && !H->failed) {
        const char *why;
        if (!split_box(S, t, b, H->ps, H->fi, H->hw, H->P, sp, -1, &sp->trial, &why) && !sw_interrupted())
            sw_say(S, "split      %s %s %s: the winner loses %.1f%%, more than %.1f%%, but %s; not split\n", t->op,
                   t->dtype, b->key, 100 * H->after, 100 * S->split_at, why);
    }
    int n1 = sp->n;   /* the bucket's own parts: p[0, n1) */
    const cand *x = n1 ? sp->p[0].c[sp->p[0].w] : NULL;
    if (sp->n && !sp->trial) split_say(S, t, b, sp, -1, H->after);
    for (int i = 0; i < n1 && !sp->rc; i++) {
        sp->rc = split_settle(S, t, sp, i);
        if (!sp->rc && !sp->trial) split_say_part(S, t, sp, i);
    }
    if (!sp->n || !sp->trial || sp->rc) return;
    if (split_trial_kept(S, sp, 0, x)) {
        split_say(S, t, b, sp, -1, H->after);
        for (int i = 0; i < n1; i++) split_say_part(S, t, sp, i);
    } else {
        sw_say(S, "split      %s %s %s: the winner loses %.1f%%, more than %.1f%%, but no part would change it, "
               "nor did a part's own search%s; not split\n", t->op, t->dtype, b->key, 100 * H->after, 100 * S->split_at,
               sp->cut ? " before the budget ran out" : "");
        sp->n = 0;
    }
}

/* Whole after its parts' sizes were raced too: its winner is the slot with
** the smallest worst loss over all of them (the parts all agree on one,
** which may not be hold's: hold saw three sizes), and the line gives that
** loss. Returns that loss. */
static double hold_whole(hold *H)
{
    sw *S = H->S;
    const op_task *t = H->t;
    double worst;
    int a, bw = probe_winner(H->P, H->b, H->hw, S->o->noise, &worst, &a);
    if (bw != H->hw && H->fi[bw] >= 0) {
        S->moved += (H->fi[bw] != H->w) - (H->nw != H->w);
        H->nw = H->fi[bw];
    }
    char at[96] = "the representative";
    if (a >= 0) probe_where(H->P, a, H->b->ndims, t->shape, at, sizeof at);
    sw_say(S, "hold       %s %s %s: %s %s, worst loss %s%.1f%% (at %s), the parts' sizes raced too\n", t->op, t->dtype,
           H->b->key, H->bs->f[H->nw].tmpl, H->bs->f[H->nw].config, isfinite(worst) ? "" : "everything ",
           isfinite(worst) ? 100 * worst : 100.0, at);
    return worst;
}

/* The bucket's worst loss after hold and splitting, into the counts. A
** bucket whose split a tool failure or Ctrl-C cut stores nothing (the
** resume decides it again: sweep_resume.h): no split, parts or loss after
** of it are counted. */
static void hold_tally(hold *H, const split *sp)
{
    sw *S = H->S;
    if (sp->rc) return;
    double final_worst = H->after;
    if (!sp->n && H->P->n > H->nheld) final_worst = hold_whole(H);
    int broken = !isfinite(final_worst);
    if (sp->n) {
        final_worst = 0;
        broken = 0;
        for (int i = 0; i < sp->n; i++) {
            if (sp->p[i].nkids) {
                S->resplit++;
                continue;
            }
            if (sp->p[i].worst > final_worst) final_worst = sp->p[i].worst;
            broken += !isfinite(sp->p[i].worst);
            S->parts++;
        }
        S->split++;
    }
    S->broken_after += broken;
    if (isfinite(final_worst) && final_worst > S->hold_final) S->hold_final = final_worst;
}

/* The budget ran out before hold raced every size: the race's winner
** stays, whatever the sizes raced so far say (a choice over some of the
** sizes is no promise over the bucket), and the line says how far it got. */
static void hold_cut_say(const hold *H)
{
    sw_say(H->S, "hold       %s %s %s: the budget ran out after %d of %d sizes; the race's winner stays, not exhaustive\n",
           H->t->op, H->t->dtype, H->b->key, H->P->n, H->ns);
}

int hold_probe(sw *S, const op_task *t, const bucket *b, bucket_state *bs, cand *cs, int *kp, int w, split *sp)
{
    hold H = { .S = S, .t = t, .b = b, .bs = bs, .fi = sp->fi, .w = w, .nw = w, .sp = sp };
    sp->n = 0;
    sp->cut = 0;
    /* Spent before hold began (the search took the bucket's share): no
    ** slot is built, the race's winner stays. */
    if (!split_out_of_budget(S, sp)) {
        int k = *kp;
        long long shapes[PROBES_MAX / 2][TMPL_MAXDIMS];
        H.ns = hold_sizes(S, t, b, shapes);
        *kp = hold_slots(S, t, bs, cs, k, sp->fi);
        H.m = hold_fresh(S, t, bs, shapes, H.ns, cs, sp->fi, *kp);
        int ns0 = H.ns;
        H.ns = hold_wave_sizes(b, cs, sp->fi, H.m, w, shapes, H.ns);
        if (H.ns > ns0) {
            char at[256];
            probe_sizes_text(b, shapes, ns0, H.ns, at, sizeof at);
            sw_trace(S, "hold %s %s: where the finalists' waves step up:%s", t->op, t->dtype, at);
        }
        if (sw_interrupted()) {     /* a slot's compile given up: the resume decides the bucket */
            sp->rc = 1;
            return w;
        }
        for (int i = 0; i < PROBE_SLOTS; i++) H.ps[i] = &cs[i];
        H.P = xcalloc(1, sizeof *H.P);
        H.P->m = H.m;
        hold_race(&H, shapes, H.ns);
        if (sp->cut) {
            hold_cut_say(&H);
            if (!H.P->n) *kp = k;   /* the slots beyond the race's have no race time: the race's are stored */
        } else if (H.probed && hold_choose(H.P, b, H.fi, w, S->o->noise, &H.c)) {
            H.nw = H.c.nw;
            hold_say(&H);
            hold_split(&H, sp);
            hold_tally(&H, sp);
        }
        /* The worker's task goes back to the bucket's own shape. */
        task_send(S, t);
        free(H.P);
    } else if (sp->cut) {
        sw_say(S, "hold       %s %s %s: the budget ran out before its probes; the race's winner stays, not exhaustive\n",
               t->op, t->dtype, b->key);
    }
    /* Ctrl-C in a race or search of hold's: nothing is stored, the resume
    ** decides the bucket. The budget: what was decided before it ran out
    ** is stored, not exhaustive, and not recorded decided (the share or
    ** budget it hit says so: sweep_resume.h). */
    if (sw_interrupted() && !sp->rc) sp->rc = 1;
    if (sp->cut && !sp->rc) {
        bs->exhaustive = 0;
        S->holds_cut++;
    }
    return H.nw;
}
