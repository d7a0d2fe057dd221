/* sweep_warm.c: see sweep_warm.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "align.h"
#include "json.h"
#include "registry_winner.h"
#include "sweep_warm.h"
#include "util.h"

/* The distance of a config found at shape at[] to t's shape: per dim
** |log2 of their ratio|, plus 1 where their alignment classes differ (a
** peeled or unaligned kernel's best config is another one). */
static double distance_at(const op_task *t, const long long *at)
{
    double d = 0;
    for (int i = 0; i < t->ndims; i++)
        d += fabs(log2((double)at[i] / (double)t->shape[i])) + (align_class(at[i]) != align_class(t->shape[i]));
    return d;
}

/* A winner's shape (JSON {"m":8,...}) into at[]: 0, or -1 when it is not
** an object holding each of t's dims as a size >= 1. */
static int shape_at(const op_task *t, const char *shape, long long *at)
{
    json *doc;
    char err[128];
    if (json_parse(shape, &doc, err, sizeof err)) return -1;
    int rc = 0;
    for (int i = 0; i < t->ndims && !rc; i++) {
        const json *v = json_get(doc, t->dims[i]);
        if (!v || v->type != JSON_NUM || !v->is_int || v->i < 1 || t->shape[i] < 1) rc = -1;
        else at[i] = v->i;
    }
    json_free(doc);
    return rc;
}

typedef struct near {
    double d;
    int order;
    const char *config;
    long long at[TMPL_MAXDIMS];
} near;

static int by_distance(const void *a, const void *b)
{
    const near *x = a, *y = b;
    if (x->d != y->d) return x->d < y->d ? -1 : 1;
    return x->order - y->order;
}

/* c->config carried from c->at to t's shape (tmpl_carry), malloc'd; the
** config as it is when the template's carry fails (traced). */
static char *carried(sw *S, const op_task *t, const char *tname, const near *c)
{
    op_task from = *t;
    memcpy(from.shape, c->at, sizeof from.shape);
    char *out = NULL;
    if (tmpl_carry(S->T, tname, c->config, &from, t, &S->dev, &out)) {
        sw_trace(S, "warm-carry %s %s: %s (its config as it is)", t->op, tname, tmpl_errmsg(S->T));
        return xstrdup(c->config);
    }
    return out;
}

/* The configs (JSON texts, malloc'd) for tname at t's shape: at most k,
** the nearest first, no config twice: seen[0, nseen) of tname and the
** registry's winners of tname, carried to t's shape where carry is set.
** Returns how many (0 on a registry error, said as a warning; the search
** then starts cold). */
static int warm_configs(sw *S, const op_task *t, const char *tname, int k, int carry, const warm_seen *seen,
                        int nseen, char ***out)
{
    *out = NULL;
    if (k <= 0) return 0;
    winner *ws = NULL;
    int n = 0;
    if (reg_winners_of(S->R, t->op, S->arch, t->dtype, &ws, &n)) {
        warning("warm start of %s %s: %s (the search starts cold)", t->op, tname, reg_errmsg(S->R));
        return 0;
    }
    near *c = xcalloc((size_t)n + (size_t)nseen + 1, sizeof *c);
    int m = 0;
    for (int i = 0; i < nseen; i++) {
        if (strcmp(seen[i].tmpl, tname) || !seen[i].config) continue;
        c[m] = (near){ .order = i, .config = seen[i].config };
        memcpy(c[m].at, seen[i].at, sizeof c[m].at);
        c[m].d = distance_at(t, c[m].at);
        m++;
    }
    for (int i = 0; i < n; i++) {
        const winner *w = &ws[i];
        if (strcmp(w->tmpl, tname) || !w->config || w->config[0] != '{' || !json_valid(w->config)) continue;
        c[m] = (near){ .order = nseen + i, .config = w->config };
        if (shape_at(t, w->shape, c[m].at)) continue;
        c[m].d = distance_at(t, c[m].at);
        m++;
    }
    qsort(c, (size_t)m, sizeof *c, by_distance);
    char **w = xcalloc((size_t)k, sizeof *w);
    int got = 0;
    for (int i = 0; i < m && got < k; i++) {
        char *cfg = carry ? carried(S, t, tname, &c[i]) : xstrdup(c[i].config);
        int dup = 0;
        for (int j = 0; j < got && !dup; j++) dup = !strcmp(w[j], cfg);
        if (dup) free(cfg);
        else w[got++] = cfg;
    }
    free(c);
    for (int i = 0; i < n; i++) winner_free(&ws[i]);
    free(ws);
    if (!got) {
        free(w);
        return 0;
    }
    *out = w;
    return got;
}

void warm_free(char **w, int n)
{
    for (int i = 0; i < n; i++) free(w[i]);
    free(w);
}

/* How many neighbours' winners b's searches and races take: the spec's
** `warm`, else SPEC_WARM in a range. */
static int warm_count(const sw *S, const bucket *b)
{
    return S->sp.warm >= 0 ? S->sp.warm : b->ranged ? SPEC_WARM : 0;
}

int warm_neighbours(sw *S, const op_task *t, const bucket *b, const char *tname, char ***out)
{
    return warm_configs(S, t, tname, warm_count(S, b), 0, NULL, 0, out);
}

search *warm_search(sw *S, const op_task *t, const bucket *b, const char *tname, const char *strategy,
                    unsigned long long seed, int max_evals, const warm_seen *seen, int nseen)
{
    int k = !strcmp(strategy, "random") || !strcmp(strategy, "exhaustive") ? 0 : warm_count(S, b);
    char **warm = NULL;
    int nwarm = warm_configs(S, t, tname, k, 1, seen, nseen, &warm);
    if (nwarm) sw_trace(S, "warm %s %s %s: %d configs", t->op, b->key, tname, nwarm);
    for (int i = 0; i < nwarm; i++) sw_trace(S, "warm-start %s %s %s: %s", t->op, b->key, tname, warm[i]);
    search *se = search_new_warm(S->T, strategy, tname, t, &S->dev, seed, max_evals, warm, nwarm);
    warm_free(warm, nwarm);
    return se;
}
