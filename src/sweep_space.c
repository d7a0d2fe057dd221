/* sweep_space.c: see sweep_space.h. */
#define _GNU_SOURCE
#include "sweep_space.h"
#include "search.h"
#include "sweep_task.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int space_cap(const sweep_opts *o, const spec_task *st)
{
    return o->max_evals > 0 ? o->max_evals : st->max_evals > 0 ? st->max_evals : 0;
}

/* Whether task st's search in a bucket tries the whole space: uncapped,
** and (compile has no strategy: it takes every config) exhaustive. */
static int tries_all(const sweep_opts *o, const spec_task *st)
{
    return !space_cap(o, st) && (o->compile_only || !strcmp(st->search, "exhaustive"));
}

int space_watch(void *ctx)
{
    sw *S = ctx;
    progress_tick(S->P);
    return sw_interrupted();
}

/* One bucket of a task, as the walk hands it over: its task at the
** bucket's size, and the templates the task uses that handle it. */
typedef struct space_bucket {
    const spec_task *st;
    op_task t;
    bucket ob;
    char **tn;              /* the op's templates */
    int ntn;
    int ok[64];             /* tn[i] is used and handles the task */
    char why[64][160];      /* why not, when the task uses it */
} space_bucket;

/* Template tname's space at task t: its exact count when above is < 0 or
** its bound (search_size) is over above, else that bound. -1: a template
** failed or Ctrl-C (tmpl_errmsg). */
static long long count_space(sw *S, const char *tname, const op_task *t, long long above)
{
    search *se = search_new(S->T, "exhaustive", tname, t, &S->dev, S->sp.seed, 0);
    if (!se) return -1;
    long long n = search_size(se);
    if (n >= 0 && (above < 0 || n > above)) n = search_tally(se);
    search_free(se);
    return n;
}

typedef int (*space_fn)(sw *S, space_bucket *b, void *ctx);

/* Every bucket of every task and dtype, in the spec's order, through fn
** (non-zero stops the walk and is returned). */
static int walk(sw *S, space_fn fn, void *ctx)
{
    int total = 0, rc = 0;
    for (int i = 0; i < S->sp.ntasks; i++) {
        bucket *bs;
        total += spec_buckets(&S->sp.tasks[i], &bs) * S->sp.tasks[i].ndtypes;
        free(bs);
    }
    progress_buckets(S->P, total);
    for (int i = 0; i < S->sp.ntasks && !rc; i++) {
        const spec_task *st = &S->sp.tasks[i];
        bucket *bs;
        int nb = spec_buckets(st, &bs);
        for (int d = 0; d < st->ndtypes && !rc; d++)
            for (int k = 0; k < nb && !rc; k++) {
                space_bucket b = { .st = st };
                long long shape[TMPL_MAXDIMS];
                if (task_bucket(S, st, &bs[k], shape, &b.ob) || tmpl_task(S->T, st->op, st->dtypes[d], shape, &b.t) ||
                    tmpl_templates(S->T, st->op, &b.tn, &b.ntn)) {
                    rc = sw_interrupted() ? 130 : (error("%s", tmpl_errmsg(S->T)), EXIT_FAIL);
                    break;
                }
                char label[160];
                snprintf(label, sizeof label, "%s %s %s", st->op, st->dtypes[d], b.ob.key);
                progress_bucket(S->P, label);
                for (int ti = 0; ti < b.ntn && ti < 64 && !rc; ti++) {
                    if (!spec_task_uses(st, b.tn[ti])) continue;
                    if (tmpl_supports(S->T, b.tn[ti], &b.t, &S->dev, &b.ok[ti], b.why[ti], sizeof b.why[ti]))
                        rc = sw_interrupted() ? 130 : (error("%s", tmpl_errmsg(S->T)), EXIT_FAIL);
                }
                if (!rc) rc = fn(S, &b, ctx);
                for (int ti = 0; ti < b.ntn; ti++) free(b.tn[ti]);
                free(b.tn);
            }
        free(bs);
    }
    return rc;
}

/* A failed count: Ctrl-C, or the template's error said. */
static int count_failed(sw *S)
{
    if (sw_interrupted()) return 130;
    error("%s", tmpl_errmsg(S->T));
    return EXIT_FAIL;
}

static int check_bucket(sw *S, space_bucket *b, void *ctx)
{
    (void)ctx;
    const spec_task *st = b->st;
    if (!tries_all(S->o, st)) return 0;
    long long sum = 0;
    for (int ti = 0; ti < b->ntn && ti < 64; ti++) {
        if (!b->ok[ti]) continue;
        /* A joint search tries the union: its templates' counts add up. */
        long long n = count_space(S, b->tn[ti], &b->t, st->joint ? -1 : SPACE_MAX);
        if (n < 0) return count_failed(S);
        sum += n;
        if ((st->joint ? sum : n) <= SPACE_MAX) continue;
        char what[96];
        snprintf(what, sizeof what, st->joint ? "its templates (joint) have" : "template %s has", b->tn[ti]);
        error("spec '%s' line %d: %s %s %s: %s %lld candidates, more than the %d a search may try in full: "
              "set max_evals%s (or pass --max-evals N)", S->sp.path, st->line, st->op, b->t.dtype, b->ob.key, what,
              st->joint ? sum : n, SPACE_MAX,
              S->o->compile_only ? "" : " and a search that picks (e.g. search: random, or local, with max_evals: 200)");
        return EXIT_INPUT;
    }
    return 0;
}

int space_check(sw *S)
{
    int need = 0;
    for (int i = 0; i < S->sp.ntasks; i++) need |= tries_all(S->o, &S->sp.tasks[i]);
    if (!need) return 0;    /* every search is capped: nothing to count */
    progress_phase(S->P, "counting candidates");
    tmpl_watch(S->T, space_watch, S);
    int rc = walk(S, check_bucket, NULL);
    tmpl_watch(S->T, NULL, NULL);
    progress_phase(S->P, "");
    return rc;
}

typedef struct plan_totals {
    long long buckets, candidates, taken, refused;
} plan_totals;

static int plan_bucket(sw *S, space_bucket *b, void *ctx)
{
    plan_totals *tot = ctx;
    const spec_task *st = b->st;
    int cap = space_cap(S->o, st), all = tries_all(S->o, st);
    strbuf out = STRBUF_INIT;
    sb_printf(&out, "%s %s %s (line %d)\n", st->op, b->t.dtype, b->ob.key, st->line);
    long long sum = 0;
    int over = 0;
    for (int ti = 0; ti < b->ntn && ti < 64; ti++) {
        if (!spec_task_uses(st, b->tn[ti])) continue;
        if (!b->ok[ti]) {
            sb_printf(&out, "  %-24s %9s  not for this bucket: %s\n", b->tn[ti], "-", b->why[ti]);
            continue;
        }
        long long n = count_space(S, b->tn[ti], &b->t, -1);
        if (n < 0) {
            sb_free(&out);
            return count_failed(S);
        }
        sum += n;
        long long take = cap > 0 && cap < n ? cap : n;
        tot->candidates += n;
        tot->taken += take;
        if (all && !st->joint && n > SPACE_MAX) {
            over = 1;
            sb_printf(&out, "  %-24s %9lld  over %d without max_evals: compile refuses it\n", b->tn[ti], n, SPACE_MAX);
        } else if (take < n) {
            sb_printf(&out, "  %-24s %9lld  %lld of them (max_evals)\n", b->tn[ti], n, take);
        } else {
            sb_printf(&out, "  %-24s %9lld  all\n", b->tn[ti], n);
        }
    }
    if (all && st->joint && sum > SPACE_MAX) {
        over = 1;
        sb_printf(&out, "  (joint: %lld candidates over its templates, over %d without max_evals: compile refuses it)\n",
                  sum, SPACE_MAX);
    }
    tot->buckets++;
    tot->refused += over;
    progress_print(S->P, stdout, sb_str(&out));
    sb_free(&out);
    return 0;
}

int space_plan(sw *S)
{
    plan_totals tot = { 0 };
    progress_phase(S->P, "counting candidates");
    tmpl_watch(S->T, space_watch, S);
    int rc = walk(S, plan_bucket, &tot);
    tmpl_watch(S->T, NULL, NULL);
    progress_end(S->P);
    if (rc) return rc;
    printf("compile --plan: %lld bucket%s, %lld candidates; compile would take %lld of them (a kernel that does not "
           "depend on the shape compiles once)\n",
           tot.buckets, tot.buckets == 1 ? "" : "s", tot.candidates, tot.taken);
    if (tot.refused)
        printf("compile --plan: %lld bucket%s over %d candidates without max_evals: compile refuses the spec until "
               "max_evals is set (or --max-evals N)\n",
               tot.refused, tot.refused == 1 ? "" : "s", SPACE_MAX);
    return 0;
}
