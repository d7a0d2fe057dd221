/* sweep_warm.c: see sweep_warm.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "align.h"
#include "json.h"
#include "registry_winner.h"
#include "sweep_warm.h"
#include "util.h"

/* The distance of a winner tuned at shape (JSON {"m":8,...}) to t's shape:
** per dim |log2 of their ratio|, plus 1 where their alignment classes differ
** (a peeled or unaligned kernel's best config is another one); -1 when shape
** is not an object holding each of t's dims as a size >= 1. */
static double distance(const op_task *t, const char *shape)
{
    json *doc;
    char err[128];
    if (json_parse(shape, &doc, err, sizeof err)) return -1;
    double d = 0;
    for (int i = 0; i < t->ndims && d >= 0; i++) {
        const json *v = json_get(doc, t->dims[i]);
        if (!v || v->type != JSON_NUM || !v->is_int || v->i < 1 || t->shape[i] < 1) d = -1;
        else d += fabs(log2((double)v->i / (double)t->shape[i])) + (align_class(v->i) != align_class(t->shape[i]));
    }
    json_free(doc);
    return d;
}

typedef struct near {
    double d;
    int order;
    const char *config;
} near;

static int by_distance(const void *a, const void *b)
{
    const near *x = a, *y = b;
    if (x->d != y->d) return x->d < y->d ? -1 : 1;
    return x->order - y->order;
}

/* The configs (JSON texts, malloc'd) for tname's search at t's shape: at
** most k, the nearest first, no config twice. Returns how many (0 on a
** registry error, said as a warning; the search then starts cold). */
static int warm_configs(sw *S, const op_task *t, const char *tname, int k, char ***out)
{
    *out = NULL;
    if (k <= 0) return 0;
    winner *ws = NULL;
    int n = 0;
    if (reg_winners_of(S->R, t->op, S->arch, t->dtype, &ws, &n)) {
        warning("warm start of %s %s: %s (the search starts cold)", t->op, tname, reg_errmsg(S->R));
        return 0;
    }
    near *c = xcalloc((size_t)n + 1, sizeof *c);
    int m = 0;
    for (int i = 0; i < n; i++) {
        const winner *w = &ws[i];
        if (strcmp(w->tmpl, tname) || !w->config || w->config[0] != '{' || !json_valid(w->config)) continue;
        double d = distance(t, w->shape);
        if (d < 0) continue;
        c[m++] = (near){ d, i, w->config };
    }
    qsort(c, (size_t)m, sizeof *c, by_distance);
    char **w = xcalloc((size_t)k, sizeof *w);
    int got = 0;
    for (int i = 0; i < m && got < k; i++) {
        int dup = 0;
        for (int j = 0; j < got && !dup; j++) dup = !strcmp(w[j], c[i].config);
        if (!dup) w[got++] = xstrdup(c[i].config);
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
    return warm_configs(S, t, tname, warm_count(S, b), out);
}

search *warm_search(sw *S, const op_task *t, const bucket *b, const char *tname, const char *strategy,
                    unsigned long long seed, int max_evals)
{
    int k = !strcmp(strategy, "random") || !strcmp(strategy, "exhaustive") ? 0 : warm_count(S, b);
    char **warm = NULL;
    int nwarm = warm_configs(S, t, tname, k, &warm);
    if (nwarm) sw_trace(S, "warm %s %s %s: %d configs", t->op, b->key, tname, nwarm);
    search *se = search_new_warm(S->T, strategy, tname, t, &S->dev, seed, max_evals, warm, nwarm);
    warm_free(warm, nwarm);
    return se;
}
