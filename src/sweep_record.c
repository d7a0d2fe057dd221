/* sweep_record.c: see sweep_record.h. */
#define _GNU_SOURCE
#include "sweep_record.h"
#include "vendor.h"
#include "identity.h"
#include "json.h"
#include "align.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int record_trim(sw *S, const op_task *t)
{
    if (S->o->keep_cubins || !S->run_id) return 0;
    /* On several GPUs another lane may be using, from the cache, a kernel
    ** that lost in this lane's bucket of the same (op, dtype): trim only at
    ** the end of the run, when no lane is working. */
    if (t && S->nlanes > 1) return 0;
    if (reg_cubin_trim(S->R, S->run_id, t ? t->op : NULL, t ? t->dtype : NULL, &S->trimmed))
        return error("%s", reg_errmsg(S->R));
    return 0;
}

int record_row(sw *S, const op_task *t, const bucket *b, const final *f, int k, int w, double default_us,
                      int exhaustive, cand *cs, int ncs, winner *W)
{
    const final *win = &f[w];
    int rc = 0;
    memset(W, 0, sizeof *W);
    snprintf(W->op, sizeof W->op, "%s", t->op);
    snprintf(W->arch, sizeof W->arch, "%s", S->arch);
    snprintf(W->dtype, sizeof W->dtype, "%s", t->dtype);
    snprintf(W->bucket, sizeof W->bucket, "%s", b->key);
    int at = 0, al = 0, ah = 0;
    for (int d = 0; d < b->ndims; d++) {
        at += snprintf(W->dims + at, sizeof W->dims - (size_t)at, "%s%s", d ? "," : "", t->dims[d]);
        al += snprintf(W->lo + al, sizeof W->lo - (size_t)al, "%s%lld", d ? "," : "", b->lo[d]);
        ah += snprintf(W->hi + ah, sizeof W->hi - (size_t)ah, "%s%lld", d ? "," : "", b->hi[d]);
    }
    tmpl_shape_json(t, W->shape, sizeof W->shape);
    snprintf(W->tmpl, sizeof W->tmpl, "%s", win->tmpl);
    W->config = win->config;
    W->median_us = win->median_us;
    W->gbps = t->bytes / win->median_us / 1e3;
    W->tflops = t->flops / win->median_us / 1e6;
    W->default_us = default_us;
    double second = 0;
    for (int i = 0; i < k; i++)
        if (i != w && (!second || f[i].median_us < second)) second = f[i].median_us;
    W->margin = second > 0 ? second / win->median_us - 1 : -1;
    W->exhaustive = exhaustive;
    jw ru = { 0 };
    jw_arr(&ru);
    for (int i = 0; i < k; i++) {
        if (i == w) continue;
        jw_obj(&ru);
        jw_key(&ru, "template");
        jw_str(&ru, f[i].tmpl);
        jw_key(&ru, "config");
        jw_raw(&ru, f[i].config);
        jw_key(&ru, "median_us");
        jw_num(&ru, f[i].median_us, 3);
        jw_end(&ru);
    }
    jw_end(&ru);
    W->runners_up = xstrdup(jw_text(&ru));
    jw_free(&ru);
    /* The winner's kernel: find its candidate to get the cubin and launch. */
    cand *wc = NULL;
    for (int i = 0; i < ncs; i++)
        if (!strcmp(cs[i].tmpl, win->tmpl) && cs[i].config && !strcmp(cs[i].config, win->config)) wc = &cs[i];
    char *pj = NULL;
    if (wc) {
        char perr_[512];
        snprintf(W->cubin, sizeof W->cubin, "%s", wc->key);
        if (!(pj = cand_plan_json(&wc->k, perr_, sizeof perr_))) rc = error("%s %s %s: %s", t->op, t->dtype, b->key, perr_);
    }
    /* A winner with no plan is still a lookup answer; it cannot be launched. */
    W->launch = pj ? pj : xstrdup("{}");
    W->device = S->dev_id;
    W->run = S->run_id;
    return rc;
}

void record_row_free(winner *W)
{
    free(W->runners_up);
    free(W->launch);
    W->runners_up = W->launch = NULL;
}

void record_say(sw *S, const op_task *t, const winner *W)
{
    /* Compute-bound ops (matrix products: well over 100 flops per byte that
    ** must move) are judged in TFLOP/s; the rest in GB/s against the copy
    ** ceiling. */
    char rate[48], pct[64] = "";
    if (t->flops > 100 * t->bytes) {
        snprintf(rate, sizeof rate, "%8.1f TFLOP/s", W->tflops);
    } else {
        snprintf(rate, sizeof rate, "%8.1f GB/s", W->gbps);
        if (S->copy_gbps > 0) snprintf(pct, sizeof pct, "%5.1f%%", 100 * W->gbps / S->copy_gbps);
    }
    char vs[48] = "   (default not timed)";
    if (W->default_us > 0) snprintf(vs, sizeof vs, "%6.2fx vs default %.1f us", W->default_us / W->median_us, W->default_us);
    /* A peer figure in the bucket (--peers): the ratio on the same metric. */
    int tf = t->flops > 100 * t->bytes;
    const peer *pr = peers_find(&S->peers, t->op, t->dtype, W->lo, W->hi, tf);
    if (pr) {
        size_t at = strlen(pct);
        snprintf(pct + at, sizeof pct - at, "%s%.3fx %s", at ? " " : "", (tf ? W->tflops : W->gbps) / pr->value, pr->name);
    }
    /* The vendor's time at the winner's shape (sweep_vendor.h), when timed. */
    double vus = 0;
    char xv[32] = "";
    if (vendor_is_template(W->tmpl)) {
        snprintf(xv, sizeof xv, "  the vendor's");
    } else if (reg_vendor_for_winner(S->R, W, &vus) == 1 && W->median_us > 0) {
        snprintf(xv, sizeof xv, "  %.2fx vendor", vus / W->median_us);
        sweep_vendor_count(&S->V, W->median_us, vus);
    }
    sw_say(S, "%-10s %-9s %-14s %10.2f us %s %s  %s%s  %s %s%s\n", t->op, t->dtype, W->bucket, W->median_us, rate, pct, vs,
           xv, W->tmpl, W->config, W->exhaustive ? "" : " (not exhaustive)");
}

int record_vendor_race(sw *S, const op_task *t, const bucket *b, const char *home, cand *c, double default_us, winner *W)
{
    double cu = 0, vu = 0;
    if (S->V.mode != SWEEP_VENDOR_WIN || !sweep_vendor_serves(&S->V, t) || !c) return 0;
    /* Its kernel into slot 0: hold's probes set other tasks up, which
    ** empties the slots. */
    if (!cand_load(S, c, t, 0)) return 0;
    int raced = sweep_vendor_race(&S->V, t, home, 0, &cu, &vu);
    if (raced <= 0 || !(vu < cu)) return raced < 0 ? -1 : 0;
    winner V;
    if (sweep_vendor_winner(&S->V, t, b, vu, W->tmpl, W->config, cu, default_us, W->exhaustive, &V))
        return error("%s %s %s: the vendor's winner row", t->op, t->dtype, b->key);
    record_row_free(W);
    *W = V;
    S->V.held++;
    return 0;
}

int record_vendor_alone(sw *S, const op_task *t, const bucket *b, int exhaustive)
{
    if (S->V.mode != SWEEP_VENDOR_WIN || !sweep_vendor_serves(&S->V, t)) return 0;
    reg_vendor v;
    char shape[128];
    tmpl_shape_json(t, shape, sizeof shape);
    int got = reg_vendor_get(S->R, t->op, S->arch, t->dtype, shape, t->stream, S->dev_id, &v);
    if (got < 0) return error("%s", reg_errmsg(S->R));
    if (!got || strcmp(v.status, "ok")) return 0;
    winner W;
    if (sweep_vendor_winner(&S->V, t, b, v.median_us, NULL, NULL, 0, 0, exhaustive, &W))
        return error("%s %s %s: the vendor's winner row", t->op, t->dtype, b->key);
    int rc = reg_winner_put(S->R, &W) ? error("%s", reg_errmsg(S->R)) : 1;
    if (rc > 0) {
        S->winners++;
        S->V.held++;
        record_say(S, t, &W);
    }
    record_row_free(&W);
    return rc;
}

/* A bucket holds one winner per hardware (and is tuned at one size per
** alignment class: spec.h, bucket_key; a registry written before classes
** were keyed may hold a winner tuned at an odd size under an aligned
** bucket's key). When W replaces this GPU's winner
** tuned at another shape of the bucket, and W's template refuses W's config at
** that shape (it needs another kernel there: rows TMA cannot read in place,
** say), that shape is left without a kernel that runs it: say so. The old
** shape comes from the registry: anything unexpected in it skips the check. */
static void record_warn_displaced(sw *S, const op_task *t, const bucket *b, const winner *W)
{
    winner old;
    char hw[256];
    identity_hw(&S->dev, hw, sizeof hw);
    if (reg_winner_get_hw(S->R, t->op, S->arch, t->dtype, b->key, hw, &old) != 1) return;
    bucket ob;
    op_task ot;
    char why[256] = "";
    int valid = 1;
    if (!record_part_of_row(&old, t, &ob) && memcmp(ob.rep, t->shape, sizeof *t->shape * (size_t)t->ndims) &&
        !task_at(S, t, ob.rep, &ot) && !tmpl_valid(S->T, W->tmpl, W->config, &ot, &S->dev, &valid, why, sizeof why) &&
        !valid) {
        char was[160], now[160];
        task_shape_text(ob.rep, t->ndims, was, sizeof was);
        task_shape_text(t->shape, t->ndims, now, sizeof now);
        warning("%s %s %s: the winner tuned at %s is replaced by one tuned at %s, which %s refuses at %s (%s); "
                "a bucket holds one winner per alignment class, so tune shapes of one class that need different kernels "
                "into separate registries (--db)",
                t->op, t->dtype, b->key, was, now, W->tmpl, was, why);
    }
    winner_free(&old);
}

int record_winner(sw *S, const op_task *t, const bucket *b, const bucket_state *bs, int k, int w, cand *cs)
{
    winner W;
    int rc = record_row(S, t, b, bs->f, k, w, bs->default_us, bs->exhaustive, cs, k, &W);
    /* Its kernel's candidate, raced against the vendor. */
    cand *wc = NULL;
    for (int i = 0; i < k && !wc; i++)
        if (!strcmp(cs[i].tmpl, W.tmpl) && cs[i].config && !strcmp(cs[i].config, W.config)) wc = &cs[i];
    if (!rc) rc = record_vendor_race(S, t, b, b->key, wc, bs->default_us, &W);
    if (!rc) record_warn_displaced(S, t, b, &W);
    if (!rc && reg_winner_put(S->R, &W)) rc = error("%s", reg_errmsg(S->R));
    else if (!rc) S->winners++;
    if (!rc) record_say(S, t, &W);
    record_row_free(&W);
    return rc;
}

int record_add_earlier(sw *S, const op_task *t, const bucket *b, bucket_state *bs)
{
    measurement key = { 0 }, best[WIRE_SLOTS];
    cand_bucket_fields(S, &key, t, b);
    int n = reg_measure_best(S->R, &key, S->sp.top_k < WIRE_SLOTS ? S->sp.top_k : WIRE_SLOTS, best);
    if (n < 0) return error("%s", reg_errmsg(S->R));
    for (int i = 0; i < n; i++) {
        cand c = { 0 };
        snprintf(c.tmpl, sizeof c.tmpl, "%s", best[i].tmpl);
        c.config = best[i].config;
        c.m = best[i];
        bucket_state_keep(bs, &c, 0);
        measurement_free(&best[i]);
    }
    return 0;
}

int record_default(sw *S, const op_task *t, const char *tname, const char *config, const cand *c)
{
    char *pj = NULL, err[512];
    if (c && !c->error && c->job.ok && c->job.cubin) pj = cand_plan_json(&c->k, err, sizeof err);
    int rc = 0;
    if (reg_default_put(S->R, t->op, S->arch, t->dtype, tname, config, pj ? c->key : NULL, pj)) rc = error("%s", reg_errmsg(S->R));
    free(pj);
    return rc;
}

int record_store_default(sw *S, const op_task *t, const char *tname, const char *config)
{
    cand c = { 0 };
    cand_instantiate(S, &c, tname, config, t);
    if (!c.error && (cand_compile(S, &c, S->sp.arch) || cand_finish(S, &c))) {
        cand_free(&c);
        return -1;
    }
    int rc = record_default(S, t, tname, config, &c);
    cand_free(&c);
    return rc;
}

int record_add_stored(const char *tmpl, const char *config, double median_us, void *ctx)
{
    retune_final *rf = ctx;
    if (rf->n == (int)(sizeof rf->f / sizeof rf->f[0])) return 0;
    for (int i = 0; i < rf->n; i++)      /* a split bucket's parts share their finalists */
        if (!strcmp(rf->f[i].tmpl, tmpl) && !strcmp(rf->f[i].config, config)) return 0;
    snprintf(rf->f[rf->n].tmpl, sizeof rf->f[rf->n].tmpl, "%s", tmpl);
    rf->f[rf->n].config = xstrdup(config);
    rf->f[rf->n].median_us = median_us;
    rf->n++;
    return 0;
}

int record_family(sw *S, const op_task *t, const bucket *b, const char *hw, winner **fam, int *n, int *split)
{
    if (reg_winner_family(S->R, t->op, S->arch, t->dtype, b->key, hw, fam, n)) return error("%s", reg_errmsg(S->R));
    *split = 0;
    for (int i = 0; i < *n; i++) *split |= strcmp((*fam)[i].bucket, b->key) != 0;
    return 0;
}

void record_family_free(winner *fam, int n)
{
    for (int i = 0; i < n; i++) winner_free(&fam[i]);
    free(fam);
}

int record_part_of_row(const winner *w, const op_task *t, bucket *pb)
{
    memset(pb, 0, sizeof *pb);
    pb->ndims = t->ndims;
    snprintf(pb->key, sizeof pb->key, "%s", w->bucket);
    const char *lo = w->lo, *hi = w->hi;
    json *sh = NULL;
    char err[128];
    if (json_parse(w->shape, &sh, err, sizeof err)) return -1;
    int bad = 0;
    for (int d = 0; d < t->ndims && !bad; d++) {
        char *e1, *e2;
        pb->lo[d] = strtoll(lo, &e1, 10);
        pb->hi[d] = strtoll(hi, &e2, 10);
        const json *v = json_get(sh, t->dims[d]);
        bad = e1 == lo || e2 == hi || !v || v->type != JSON_NUM || !v->is_int;
        if (!bad) pb->rep[d] = v->i;
        if (!bad && pb->rep[d] >= 1) pb->align[d] = align_class(pb->rep[d]);
        bad = bad || pb->rep[d] < pb->lo[d] || pb->rep[d] >= pb->hi[d] || pb->rep[d] < 1;
        lo = *e1 ? e1 + 1 : e1;
        hi = *e2 ? e2 + 1 : e2;
    }
    json_free(sh);
    return bad ? -1 : 0;
}
