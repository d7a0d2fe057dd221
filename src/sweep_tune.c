/* sweep_tune.c: see sweep_tune.h. */
#define _GNU_SOURCE
#include "sweep_tune.h"
#include "sweep_warm.h"
#include "names.h"
#include "identity.h"
#include "sweep_flow.h"
#include "sweep_hold.h"
#include "sweep_record.h"
#include "vendor.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tune_pick(final *f, int k, const char *keep_tmpl, const char *keep_config, double noise)
{
    qsort(f, (size_t)k, sizeof *f, final_cmp);
    /* Ties: within 0.5% of the fastest, the steadier (smaller spread) wins,
    ** then the lower canonical config, so the choice is repeatable. */
    int w = 0;
    for (int i = 1; i < k; i++) {
        if (f[i].median_us > f[0].median_us * 1.005) break;
        if (f[i].spread < f[w].spread || (f[i].spread == f[w].spread && strcmp(f[i].config, f[w].config) < 0)) w = i;
    }
    /* retune: the standing winner stays while it is within the noise margin
    ** of the fastest. */
    for (int i = 0; i < k && keep_config; i++)
        if (!strcmp(f[i].tmpl, keep_tmpl) && !strcmp(f[i].config, keep_config) && f[i].median_us <= f[0].median_us * (1 + noise))
            w = i;
    return w;
}

/* Finalist i into place k of the race (k <= i), by a swap. */
static void promote(bucket_state *bs, int i, int k)
{
    final f = bs->f[i];
    bs->f[i] = bs->f[k];
    bs->f[k] = f;
}

static int confirm(sw *S, const op_task *t, const bucket *b, bucket_state *bs)
{
    S->search_end = 0;      /* the rest of the share is the race's and hold's: parts' searches too */
    /* A standing vendor winner (retune) is no template finalist: the vendor
    ** races the template winner (record_winner, split_store). */
    for (int i = 0; i < bs->nf;)
        if (vendor_is_template(bs->f[i].tmpl)) {
            free(bs->f[i].config);
            memmove(&bs->f[i], &bs->f[i + 1], sizeof *bs->f * (size_t)(bs->nf - i - 1));
            bs->nf--;
        } else {
            i++;
        }
    if (!bs->nf) {
        int v = record_vendor_alone(S, t, b, bs->exhaustive);
        if (v < 0) return -1;
        if (!v && !bs->served && bs->unserved[0])
            sw_say(S, "%-10s %-9s %-18s no template serves this shape (%s)\n", t->op, t->dtype, b->key, bs->unserved);
        else if (!v)
            sw_say(S, "%-10s %-9s %-18s no correct candidate\n", t->op, t->dtype, b->key);
        return 0;
    }
    qsort(bs->f, (size_t)bs->nf, sizeof *bs->f, final_cmp);
    int k = bs->nf < S->sp.top_k ? bs->nf : S->sp.top_k;
    /* The default goes into the race too, so the comparison is same-run. */
    int def = -1;
    for (int i = 0; i < bs->nf; i++)
        if (bs->f[i].is_default) def = i;
    if (def >= k && k < 16) promote(bs, def, k++);
    /* Timed as a model's graph runs it (neighbour), the fastest of each
    ** template joins the race too: in a real model's step the families can
    ** rank otherwise than between neighbours (a Llama-3-8B batch-8 step ran
    ** swapab's finalists faster where gemv's won here: bench/RESULTS.md,
    ** sixth session), and aitune.racing.race chooses among the finalists
    ** there, so each family needs one among them: the fastest row of a
    ** template not yet in the race, until every template is. */
    while (k < 16 && t->stream == TIMING_NEIGHBOUR_ID) {
        int best = -1;
        for (int i = k; i < bs->nf; i++) {
            int have = 0;
            for (int j = 0; j < k && !have; j++) have = !strcmp(bs->f[j].tmpl, bs->f[i].tmpl);
            if (!have && (best < 0 || bs->f[i].median_us < bs->f[best].median_us)) best = i;
        }
        if (best < 0) break;
        promote(bs, best, k++);
    }
    cand cs[WIRE_SLOTS];
    memset(cs, 0, sizeof cs);
    int rc = 0;
    for (int i = 0; i < k;) {
        if (cand_build(S, &cs[i], bs->f[i].tmpl, bs->f[i].config, t) || !cand_load(S, &cs[i], t, i)) {
            /* A finalist that no longer builds (an earlier run's config of a
            ** template since changed) leaves the race; the next one moves up. */
            warning("%s %s %s: finalist %s %s dropped: %s", t->op, t->dtype, b->key, bs->f[i].tmpl, bs->f[i].config,
                    cs[i].error ? cs[i].error : cs[i].job.error ? cs[i].job.error : "it does not load");
            cand_free(&cs[i]);
            free(bs->f[i].config);
            memmove(&bs->f[i], &bs->f[i + 1], sizeof *bs->f * (size_t)(bs->nf - i - 1));
            bs->nf--;
            if (k > bs->nf) k = bs->nf;
            continue;
        }
        i++;
    }
    if (sw_interrupted()) {
        /* Ctrl-C while the finalists were built: a compile it gave up
        ** dropped a finalist that builds. The resume decides the bucket. */
        for (int i = 0; i < 16; i++) cand_free(&cs[i]);
        return 0;
    }
    if (!k) {
        sw_say(S, "%-10s %-9s %-18s no finalist builds\n", t->op, t->dtype, b->key);
        return 0;
    }
    if (k > 1) cand_race(S, cs, k, bs->f);
    for (int i = 0; i < k; i++) if (bs->f[i].is_default) bs->default_us = bs->f[i].median_us;
    int w = tune_pick(bs->f, k, bs->keep_tmpl, bs->keep_config, S->o->noise);
    split *sp = xcalloc(1, sizeof *sp);
    if (S->hold && k > 1) w = hold_probe(S, t, b, bs, cs, &k, w, sp);
    if (sp->rc) {
        /* A tool failed (said), or Ctrl-C cut a part's search: the resume
        ** decides the bucket, its measurements kept. */
        rc = sp->rc < 0 ? -1 : 0;
    } else if (sp->n) {
        rc = split_store(S, t, b, bs, sp);
    } else {
        rc = record_winner(S, t, b, bs, k, w, cs);
    }
    split_free(sp);
    for (int i = 0; i < 16; i++) cand_free(&cs[i]);
    return rc;
}

int tune_bucket(sw *S, const spec_task *st, const op_task *t, const bucket *b)
{
    char **tn;
    int ntn;
    if (tmpl_templates(S->T, t->op, &tn, &ntn)) return error("%s", tmpl_errmsg(S->T));
    bucket_state bs = { .exhaustive = 1 };
    int rc = 0, stored_default = 0;
    char label[160];
    snprintf(label, sizeof label, "%s %s %s", t->op, t->dtype, b->key);
    progress_bucket(S->P, label);
    int batch = S->o->compile_only ? 64 : 8;
    for (int ti = 0; ti < ntn && !rc && !sw_out_of_budget(S); ti++) {
        if (!flow_usable(S, st, tn[ti], t, &bs)) continue;
        char *dflt = NULL;
        if (tmpl_default(S->T, tn[ti], t, &S->dev, &dflt)) warning("%s", tmpl_errmsg(S->T));
        /* The config now; its kernel once the first batch compiled it. */
        int default_kernel = 0;
        if (dflt && !stored_default && !S->o->compile_only) {
            rc = record_default(S, t, tn[ti], dflt, NULL);
            stored_default = default_kernel = 1;
        }
        const char *strategy = S->o->compile_only ? "exhaustive" : st->search;
        int max_evals = S->o->compile_only ? 0 : (S->o->max_evals > 0 ? S->o->max_evals : st->max_evals);
        search *se = warm_search(S, t, b, tn[ti], strategy, S->sp.seed, max_evals, NULL, 0);   /* compile: exhaustive, cold */
        if (!se) {
            rc = error("%s", tmpl_errmsg(S->T));
            free(dflt);
            break;
        }
        int evals = flow_budget(se, max_evals);
        progress_plan(S->P, evals + (dflt != NULL));
        /* The default first: every bucket reports how far tuning got from it. */
        flow f = { .S = S, .t = t, .b = b, .se = se, .bs = &bs, .tname = tn[ti], .default_cfg = dflt, .batch = batch,
                   .evals = evals };
        if (default_kernel) {
            f.store_tmpl = tn[ti];
            f.store_cfg = dflt;
        }
        if (!rc && !sw_out_of_budget(S)) rc = flow_run(&f, &tn[ti], &dflt, S->o->compile_only ? 0 : 1);
        /* The space is lazy: what it rejected, and whether the cap left some of it, are known now. */
        S->rejected += search_nrejected(se);
        flow_rejected(S, se, tn[ti], t, b);
        if (flow_capped(se, max_evals)) bs.exhaustive = 0;
        if (sw_bucket_cut(S)) bs.exhaustive = 0;
        search_free(se);
        free(dflt);
    }
    for (int i = 0; i < ntn; i++) free(tn[i]);
    free(tn);
    if (!rc && !S->o->compile_only && !sw_interrupted()) rc = record_add_earlier(S, t, b, &bs);
    if (!rc && !S->o->compile_only && !sw_interrupted()) rc = confirm(S, t, b, &bs);
    if (!rc) rc = record_trim(S, t);
    bucket_state_free(&bs);
    return rc;
}

/* A joint search (spec `joint: true`): one search over the union of the
** bucket's templates' spaces, so its budget (max_evals for the bucket, not
** per template) goes to the family that pays. Each template's default is
** measured first; the first template's is the bucket's default. The
** search learns the defaults' results when it asks for them, without a
** second run (flow_put). */
int tune_joint(sw *S, const spec_task *st, const op_task *t, const bucket *b)
{
    char **tn;
    int ntn;
    if (tmpl_templates(S->T, t->op, &tn, &ntn)) return error("%s", tmpl_errmsg(S->T));
    char **use = xcalloc((size_t)ntn + 1, sizeof *use), **dflt = xcalloc((size_t)ntn + 1, sizeof *dflt);
    int nuse = 0, rc = 0;
    bucket_state bs = { .exhaustive = 1 };
    for (int ti = 0; ti < ntn; ti++) {
        if (!flow_usable(S, st, tn[ti], t, &bs)) continue;
        if (tmpl_default(S->T, tn[ti], t, &S->dev, &dflt[nuse])) warning("%s", tmpl_errmsg(S->T));
        use[nuse++] = tn[ti];
    }
    char label[160];
    snprintf(label, sizeof label, "%s %s %s", t->op, t->dtype, b->key);
    progress_bucket(S->P, label);
    search *se = NULL;
    int max_evals = S->o->max_evals > 0 ? S->o->max_evals : st->max_evals;
    if (nuse) {
        bs.default_tmpl = use[0];
        se = search_new_bucket(S->T, st->search, use, nuse, t, &S->dev, S->sp.seed, max_evals, NULL, 0);
        if (!se) rc = error("%s", tmpl_errmsg(S->T));
        else {
            int ndefaults = 0;
            for (int i = 0; i < nuse; i++) ndefaults += dflt[i] != NULL;
            progress_plan(S->P, flow_budget(se, max_evals) + ndefaults);
        }
        if (!rc && dflt[0]) rc = record_default(S, t, use[0], dflt[0], NULL);
    }
    if (se && !rc && !sw_out_of_budget(S)) {
        flow f = { .S = S, .t = t, .b = b, .se = se, .bs = &bs, .default_cfg = dflt[0], .batch = 8,
                   .evals = flow_budget(se, max_evals), .store_tmpl = use[0], .store_cfg = dflt[0] };
        rc = flow_run(&f, use, dflt, nuse);
    }
    if (se) {   /* the space is lazy: see tune_bucket */
        S->rejected += search_nrejected(se);
        flow_rejected(S, se, NULL, t, b);
        if (flow_capped(se, max_evals)) bs.exhaustive = 0;
    }
    if (sw_bucket_cut(S)) bs.exhaustive = 0;
    search_free(se);
    for (int i = 0; i < nuse; i++) free(dflt[i]);
    free(dflt);
    free(use);
    for (int i = 0; i < ntn; i++) free(tn[i]);
    free(tn);
    if (!rc && !sw_interrupted()) rc = record_add_earlier(S, t, b, &bs);
    if (!rc && !sw_interrupted()) rc = confirm(S, t, b, &bs);
    if (!rc) rc = record_trim(S, t);
    bucket_state_free(&bs);
    return rc;
}

/* retune: the stored finalists of a stale bucket (its winner and runners-up,
** as the registry has them) are measured again on this GPU and toolchain,
** each verified and timed, then raced. The winner stays when it is still
** the fastest within the noise margin; when another finalist now beats it by
** more, or a finalist fails (compile, verify, fault), the bucket is searched
** again as a sweep would. A split bucket (its parts' winners stored, spec.h:
** bucket_split) races its parts' finalists, each once, at its own size and,
** when they all still pass, holds and splits again as a sweep with hold
** would (retune_split); a finalist that fails sends it to a search. */
/* retune: the stored finalists rf, measured again at b's size into bs;
** *failed counts those that no longer pass. */
static int remeasure(sw *S, const op_task *t, const bucket *b, const retune_final *rf, bucket_state *bs, int *failed)
{
    char label[160];
    snprintf(label, sizeof label, "%s %s %s", t->op, t->dtype, b->key);
    progress_bucket(S->P, label);
    progress_plan(S->P, rf->n);
    cand cs[WIRE_SLOTS];
    memset(cs, 0, sizeof cs);
    for (int i = 0; i < rf->n; i++) cand_instantiate(S, &cs[i], rf->f[i].tmpl, rf->f[i].config, t);
    int rc = cand_run_batch(S, cs, rf->n, t, b, NULL, bs, NULL);
    /* Ctrl-C: the finalists not measured decide nothing; the run stops
    ** (its end says interrupted). */
    if (!rc && sw_interrupted()) rc = -1;
    *failed = 0;
    for (int i = 0; i < rf->n; i++) *failed += strcmp(cs[i].m.status, "ok") != 0;
    for (int i = 0; i < rf->n; i++) cand_free(&cs[i]);
    return rc;
}

/* Take the vendor out of stored finalists (a bucket or part it holds): it
** is no template to measure, and confirm races it against the template
** winner anyway. Returns whether f[0] was it. */
static int drop_vendor(retune_final *rf)
{
    int first = rf->n && vendor_is_template(rf->f[0].tmpl);
    for (int i = 0; i < rf->n;)
        if (vendor_is_template(rf->f[i].tmpl)) {
            free(rf->f[i].config);
            memmove(&rf->f[i], &rf->f[i + 1], sizeof rf->f[0] * (size_t)(rf->n - i - 1));
            rf->n--;
        } else {
            i++;
        }
    return first;
}

static int retune_split(sw *S, const spec_task *st, const op_task *t, const bucket *b, const char *hw, winner *fam, int nfam)
{
    retune_final rf = { 0 };
    int rc = 0;
    for (int i = 0; i < nfam && !rc; i++)
        if (reg_winner_finalists(S->R, t->op, S->arch, t->dtype, fam[i].bucket, hw, record_add_stored, &rf))
            rc = error("%s", reg_errmsg(S->R));
    bucket_state bs = { .exhaustive = 1, .parts = fam, .nparts = nfam };
    int failed = 0;
    drop_vendor(&rf);
    if (!rc) rc = remeasure(S, t, b, &rf, &bs, &failed);
    /* Held and split as the sweep did, whatever retune does elsewhere. */
    int hold = S->hold;
    S->hold = 1;
    if (!rc && !failed) rc = confirm(S, t, b, &bs);
    winner *now = NULL;
    int nnow = 0, kept = 0, split;
    if (!rc && !failed && !record_family(S, t, b, hw, &now, &nnow, &split))
        for (int i = 0; i < nnow; i++)
            for (int j = 0; j < nfam; j++)
                kept += !strcmp(now[i].bucket, fam[j].bucket) && !strcmp(now[i].tmpl, fam[j].tmpl) &&
                        !strcmp(now[i].config, fam[j].config);
    sw_note(S, "%s", "");
    if (!rc && !failed)
        printf("retune %s %s %s: split in %d parts, %d finalists raced again: now %d part%s, %d winner%s kept\n", t->op,
               t->dtype, b->key, nfam, rf.n, nnow, nnow == 1 ? "" : "s", kept, kept == 1 ? "" : "s");
    else if (!rc)
        printf("retune %s %s %s: split in %d parts: a finalist failed; searching the bucket again\n", t->op, t->dtype, b->key,
               nfam);
    fflush(stdout);
    S->retuned++;
    if (!rc && failed) {
        S->escalated++;
        rc = tune_bucket(S, st, t, b);
    }
    S->hold = hold;
    record_family_free(now, nnow);
    bucket_state_free(&bs);
    for (int i = 0; i < rf.n; i++) free(rf.f[i].config);
    return rc;
}

int retune_bucket(sw *S, const spec_task *st, const op_task *t, const bucket *b)
{
    retune_final rf = { 0 };
    char hw[256];
    identity_hw(&S->dev, hw, sizeof hw);
    winner *fam;
    int nfam, split;
    if (record_family(S, t, b, hw, &fam, &nfam, &split)) return -1;
    if (split) {
        int rc = retune_split(S, st, t, b, hw, fam, nfam);
        record_family_free(fam, nfam);
        return rc;
    }
    record_family_free(fam, nfam);
    if (reg_winner_finalists(S->R, t->op, S->arch, t->dtype, b->key, hw, record_add_stored, &rf))
        return error("%s", reg_errmsg(S->R));
    /* The vendor's bucket: the templates it beat race again, then the best
    ** of them the vendor (confirm); nothing to search again. */
    if (drop_vendor(&rf)) {
        bucket_state bs = { .exhaustive = 1 };
        int failed = 0, rc = 0;
        if (rf.n) rc = remeasure(S, t, b, &rf, &bs, &failed);
        if (!rc) rc = confirm(S, t, b, &bs);
        winner now;
        int got = rc ? 0 : reg_winner_get_hw(S->R, t->op, S->arch, t->dtype, b->key, hw, &now);
        sw_note(S, "%s", "");
        if (got == 1) {
            printf("retune %s %s %s: the vendor's bucket, %d template finalist%s raced again: %s\n", t->op, t->dtype,
                   b->key, rf.n, rf.n == 1 ? "" : "s", vendor_is_template(now.tmpl) ? "the vendor kept" : "a template wins now");
            winner_free(&now);
        }
        fflush(stdout);
        S->retuned++;
        bucket_state_free(&bs);
        for (int i = 0; i < rf.n; i++) free(rf.f[i].config);
        return rc;
    }
    if (!rf.n) return 0;
    bucket_state bs = { .exhaustive = 1 };
    int failed;
    int rc = remeasure(S, t, b, &rf, &bs, &failed);
    double old_us = rf.f[0].median_us;     /* the stored winner comes first */
    bs.keep_tmpl = rf.f[0].tmpl;
    bs.keep_config = rf.f[0].config;
    if (!rc && !failed) rc = confirm(S, t, b, &bs);
    /* The old winner's new time against the new fastest. */
    double now_old = -1, best = bs.nf ? bs.f[0].median_us : -1;
    for (int i = 0; i < bs.nf; i++)
        if (!strcmp(bs.f[i].tmpl, rf.f[0].tmpl) && !strcmp(bs.f[i].config, rf.f[0].config)) now_old = bs.f[i].median_us;
    int moved = !failed && (now_old < 0 || now_old > best * (1 + S->o->noise));
    sw_note(S, "%s", "");
    if (!rc && !failed && !moved)
        printf("retune %s %s %s: %.2f us -> %.2f us, winner kept (%s %s)\n", t->op, t->dtype, b->key, old_us, now_old,
               rf.f[0].tmpl, rf.f[0].config);
    else if (!rc)
        printf("retune %s %s %s: %.2f us -> %s; searching the bucket again\n", t->op, t->dtype, b->key, old_us,
               failed ? "a finalist failed" : "the ranking changed beyond the noise margin");
    fflush(stdout);
    S->retuned++;
    if (!rc && (failed || moved)) {
        S->escalated++;
        rc = tune_bucket(S, st, t, b);
    }
    bucket_state_free(&bs);
    for (int i = 0; i < rf.n; i++) free(rf.f[i].config);
    return rc;
}

/* check: the winner of this GPU, verified and timed again, against the time
** it was recorded with. Nothing is stored but the measurement. A split
** bucket's parts are checked each at its own size (check_bucket). */
static int check_winner(sw *S, const op_task *t0, const bucket *b, const char *hw)
{
    /* Compared with the time it was recorded with, so timed the way it was
    ** recorded: a spec whose timing changed since the sweep would otherwise
    ** compare a stream time with a flush time (that change is retune's). */
    int was_stream = reg_winner_stream(S->R, t0->op, S->arch, t0->dtype, b->key, hw);
    if (was_stream == -2) return error("%s", reg_errmsg(S->R));
    op_task tt = *t0;
    const op_task *t = t0;
    char how[96] = "";
    if (was_stream >= 0 && was_stream != t0->stream) {
        tt.stream = was_stream;
        t = &tt;
        snprintf(how, sizeof how, " [timed %s as recorded; the spec says %s]", timing_name(was_stream),
                 timing_name(t0->stream));
        if (task_send(S, t)) return -1;
    }
    retune_final rf = { 0 };
    if (reg_winner_finalists(S->R, t->op, S->arch, t->dtype, b->key, hw, record_add_stored, &rf))
        return error("%s", reg_errmsg(S->R));
    if (!rf.n) return 0;
    if (vendor_is_template(rf.f[0].tmpl)) {
        /* The vendor's bucket: cuBLASLt timed again at the winner's shape. */
        char home[96];
        bucket_home(b->key, home, sizeof home);
        reg_vendor v;
        memset(&v, 0, sizeof v);
        int got = sweep_vendor_measure(&S->V, t, home, &v);
        double was = rf.f[0].median_us;
        S->checked++;
        sw_note(S, "%s", "");
        if (got < 0) {
            /* a tool failure, said already */
        } else if (!got) {
            S->regressed++;
            printf("FAILED     %s %s %s: %s: %s%s%s\n", t->op, t->dtype, b->key, VENDOR_TEMPLATE,
                   sweep_vendor_serves(&S->V, t) ? v.status : "not timed (--vendor off)", v.error[0] ? ": " : "", v.error);
        } else if (v.median_us > was * (1 + S->o->noise)) {
            S->regressed++;
            printf("REGRESSED  %s %s %s: %.2f us -> %.2f us (+%.1f%%, margin %.1f%%; the vendor)%s\n", t->op, t->dtype,
                   b->key, was, v.median_us, 100 * (v.median_us / was - 1), 100 * S->o->noise, how);
        } else {
            printf("ok         %s %s %s: %.2f us -> %.2f us (%+.1f%%; the vendor)%s\n", t->op, t->dtype, b->key, was,
                   v.median_us, 100 * (v.median_us / was - 1), how);
        }
        fflush(stdout);
        for (int i = 0; i < rf.n; i++) free(rf.f[i].config);
        return got < 0 ? -1 : 0;
    }
    cand c;
    memset(&c, 0, sizeof c);
    cand_instantiate(S, &c, rf.f[0].tmpl, rf.f[0].config, t);
    bucket_state bs = { .exhaustive = 1 };
    int rc = cand_run_batch(S, &c, 1, t, b, NULL, &bs, NULL);
    if (!rc && sw_interrupted() && !c.m.status[0]) rc = -1;   /* Ctrl-C came first, or gave its compile up: nothing checked */
    double was = rf.f[0].median_us, now = c.m.median_us;
    /* The recorded time is the winner's in the race of its bucket's
    ** finalists (confirm): a kernel timed alone may run a few percent off
    ** it (clocks, the caches' state between samples). So the verified
    ** winner is timed again in the same race, against its stored
    ** finalists, and that time is the one compared. */
    if (!rc && !strcmp(c.m.status, "ok") && rf.n > 1 && !S->o->compile_only) {
        cand fs[WIRE_SLOTS];
        final ff[WIRE_SLOTS];
        int k = 0;
        memset(fs, 0, sizeof fs);
        memset(ff, 0, sizeof ff);
        for (int i = 0; i < rf.n && i < 16; i++) {
            if (cand_build(S, &fs[k], rf.f[i].tmpl, rf.f[i].config, t) || !cand_load(S, &fs[k], t, k)) {
                if (i == 0) k = -1;   /* the winner must be in the race */
                cand_free(&fs[k < 0 ? 0 : k]);
                if (k < 0) break;
                continue;
            }
            k++;
        }
        int cut = sw_interrupted();    /* a finalist's compile given up: no race, nothing checked */
        if (cut) rc = -1;
        if (k > 1 && !cut) {
            ff[0].median_us = -1;
            cand_race(S, fs, k, ff);
            if (ff[0].median_us > 0) now = ff[0].median_us;
        }
        for (int i = 0; i < (k > 0 ? k : 0); i++) cand_free(&fs[i]);
    }
    sw_note(S, "%s", "");
    S->checked += !rc;   /* a tool failure (said already) checked nothing */
    if (rc) {
        /* a tool failure, said already */
    } else if (strcmp(c.m.status, "ok")) {
        S->regressed++;
        printf("FAILED     %s %s %s: %s %s: %s%s%s\n", t->op, t->dtype, b->key, rf.f[0].tmpl, rf.f[0].config, c.m.status,
               c.m.error ? ": " : "", c.m.error ? c.m.error : "");
    } else if (now > was * (1 + S->o->noise)) {
        S->regressed++;
        printf("REGRESSED  %s %s %s: %.2f us -> %.2f us (+%.1f%%, margin %.1f%%)%s\n", t->op, t->dtype, b->key, was, now,
               100 * (now / was - 1), 100 * S->o->noise, how);
    } else {
        printf("ok         %s %s %s: %.2f us -> %.2f us (%+.1f%%)%s\n", t->op, t->dtype, b->key, was, now, 100 * (now / was - 1),
               how);
    }
    fflush(stdout);
    cand_free(&c);
    bucket_state_free(&bs);
    for (int i = 0; i < rf.n; i++) free(rf.f[i].config);
    return rc;
}

int check_bucket(sw *S, const op_task *t, const bucket *b)
{
    char hw[256];
    identity_hw(&S->dev, hw, sizeof hw);
    winner *fam;
    int nfam, split, rc = 0;
    if (record_family(S, t, b, hw, &fam, &nfam, &split)) return -1;
    if (!split) rc = check_winner(S, t, b, hw);
    for (int i = 0; i < nfam && split && !rc; i++) {
        bucket pb;
        op_task tp;
        if (record_part_of_row(&fam[i], t, &pb)) {
            warning("%s %s %s: the stored part's edges or size do not parse; not checked", t->op, t->dtype, fam[i].bucket);
            continue;
        }
        if (task_at(S, t, pb.rep, &tp)) rc = error("%s", tmpl_errmsg(S->T));
        else if (!(rc = task_send(S, &tp))) rc = check_winner(S, &tp, &pb, hw);
    }
    record_family_free(fam, nfam);
    return rc;
}
