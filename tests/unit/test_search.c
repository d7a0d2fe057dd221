/*
** test_search: search.c's C interface with the strategies in search/: warm
** start (search_new_warm), everything a tell carries (search_tell_measured,
** seen through tests/fixtures/probe), spaces of given configs
** (search_of_configs), the budget, no repeats, determinism by seed; the
** lazy space: nothing enumerated up front, exhaustive covers exactly the
** valid set in order, rejected so far, joint spaces, priors, sampling.
**
**     build/tests/test_search [REPO_ROOT]
*/
#define _GNU_SOURCE
#include "check.h"
#include "device.h"
#include "registry_measure.h"
#include "search.h"
#include "tmpl.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char root[1024];
static device dev;
static const char *strategies[] = { "anneal", "genetic", "model", "local", "random", "exhaustive", NULL };
static const char *warm_first[] = { "anneal", "genetic", "model", "local", NULL };

static void free_all(char **v, int n)
{
    for (int i = 0; i < n; i++) free(v[i]);
    free(v);
}

/* Ask k at a time, telling each a time from its position in a fixed
** landscape-like function of the JSON text, until the strategy is done.
** Returns how many configs, all of them in *all (caller frees). */
static int drive(search *s, int k, char ***all)
{
    int total = 0;
    *all = NULL;
    for (int round = 0; round < 100000; round++) {
        char **cfgs;
        int got;
        if (search_ask(s, k, &cfgs, &got)) return -1;
        for (int i = 0; i < got; i++) {
            uint64_t h = hash_str(HASH_INIT, cfgs[i]);
            measurement m;
            memset(&m, 0, sizeof m);
            snprintf(m.status, sizeof m.status, "%s", h % 11 == 0 ? "compile" : "ok");
            m.median_us = 10 + (double)(h % 1000) / 10;
            if (search_tell_measured(s, cfgs[i], &m)) return -1;
            *all = realloc(*all, sizeof **all * (size_t)(total + 1));
            (*all)[total++] = cfgs[i];
        }
        free(cfgs);
        if (!got) break;
    }
    return total;
}

static int dups(char **v, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (!strcmp(v[i], v[j])) return 1;
    return 0;
}

/* A grid of configs as JSON: a in 0..9, b in 0..5, c in {"x","y"}. */
static int grid(char ***out)
{
    int n = 0;
    char **v = xcalloc(10 * 6 * 2, sizeof *v);
    for (int a = 0; a < 10; a++)
        for (int b = 0; b < 6; b++)
            for (int c = 0; c < 2; c++) v[n++] = xstrfmt("{\"a\":%d,\"b\":%d,\"c\":\"%s\"}", a, b, c ? "y" : "x");
    *out = v;
    return n;
}

static void test_of_configs(tmpl *T)
{
    char **g;
    int ng = grid(&g);
    for (const char **st = strategies; *st; st++) {
        search *s = search_of_configs(T, *st, g, ng, 3, 0, NULL, 0);
        CHECK(s != NULL, "search_of_configs %s (%s)", *st, s ? "ok" : tmpl_errmsg(T));
        if (!s) continue;
        CHECK(search_size(s) == ng, "%s: the space holds the %d given configs (%d)", *st, ng, search_size(s));
        char **all;
        int n = drive(s, 7, &all);
        CHECK(n == ng && !dups(all, n), "%s: every config once, then done (%d of %d)", *st, n, ng);
        int outside = 0;
        for (int i = 0; i < n; i++) {
            int in = 0;
            for (int j = 0; j < ng && !in; j++) in = !strcmp(all[i], g[j]);
            outside += !in;
        }
        CHECK(!outside, "%s: only configs of the space (%d outside)", *st, outside);
        free_all(all, n > 0 ? n : 0);
        search_free(s);

        /* The budget, and the same seed the same run. */
        search *a = search_of_configs(T, *st, g, ng, 5, 17, NULL, 0);
        search *b = search_of_configs(T, *st, g, ng, 5, 17, NULL, 0);
        char **x, **y;
        int nx = drive(a, 4, &x), ny = drive(b, 4, &y);
        int same = nx == ny;
        for (int i = 0; same && i < nx; i++) same = !strcmp(x[i], y[i]);
        CHECK(nx == 17 && same, "%s: max_evals 17 gives 17, the same for the same seed (%d, %d)", *st, nx, ny);
        free_all(x, nx > 0 ? nx : 0);
        free_all(y, ny > 0 ? ny : 0);
        search_free(a);
        search_free(b);
    }
    free_all(g, ng);
}

/* local's combination: once the ring of neighbours around its base is told,
** the config that takes every move that paid at once is asked next. On the
** grid, from a 5, b 2, c x (100 us): a 4 saves 5, b 3 saves 7, c y saves 2,
** the other moves cost; together they save 14. */
static double separable_us(const char *cfg)
{
    int a = 0, b = 0;
    char c = 0;
    if (sscanf(cfg, "{\"a\":%d,\"b\":%d,\"c\":\"%c\"}", &a, &b, &c) != 3) return 1e9;
    return 100 + (a == 5 ? 0 : a == 4 ? -5 : 10) + (b == 2 ? 0 : b == 3 ? -7 : 10) + (c == 'y' ? -2 : 0);
}

static void test_local_combine(tmpl *T)
{
    char **g, *warm[] = { "{\"a\":5,\"b\":2,\"c\":\"x\"}" };
    int ng = grid(&g);
    search *s = search_of_configs(T, "local", g, ng, 3, 0, warm, 1);
    char *asked[8] = { 0 };
    int n = 0;
    while (s && n < 8) {
        char **cfgs;
        int got;
        if (search_ask(s, 1, &cfgs, &got) || !got) break;
        measurement m;
        memset(&m, 0, sizeof m);
        snprintf(m.status, sizeof m.status, "ok");
        m.median_us = separable_us(cfgs[0]);
        search_tell_measured(s, cfgs[0], &m);
        asked[n++] = cfgs[0];
        free(cfgs);
    }
    CHECK(n == 8 && !strcmp(asked[0], warm[0]), "local starts at its warm config (%s)", n ? asked[0] : "none");
    int ring = 0;
    for (int i = 1; i < 6 && i < n; i++) ring += fabs(separable_us(asked[i]) - 100) > 0;
    CHECK(ring == 5, "then the 5 neighbours one step away (%d)", ring);
    CHECK(n > 6 && !strcmp(asked[6], "{\"a\":4,\"b\":3,\"c\":\"y\"}"),
          "then the moves that paid, all three at once (%s)", n > 6 ? asked[6] : "none");
    for (int i = 0; i < n; i++) free(asked[i]);
    search_free(s);
    free_all(g, ng);
}

/* polish (search/polish.lua): the start, its ring asked at once, nothing
** while a reply is pending, then the combination of the moves that paid,
** then done. */
static void test_polish(tmpl *T)
{
    char **g, *warm[] = { "{\"a\":5,\"b\":2,\"c\":\"x\"}" };
    int ng = grid(&g);
    search *s = search_of_configs(T, "polish", g, ng, 3, 8, warm, 1);
    char **cfgs = NULL;
    int got = 0, rc = s ? search_ask(s, 8, &cfgs, &got) : -1;
    CHECK(!rc && got == 6 && !strcmp(cfgs[0], warm[0]), "polish asks its start and its 5 neighbours at once (%d)", got);
    for (int i = 0; !rc && i < got - 1; i++) {   /* the last neighbour's reply pending */
        measurement m;
        memset(&m, 0, sizeof m);
        snprintf(m.status, sizeof m.status, "ok");
        m.median_us = separable_us(cfgs[i]);
        search_tell_measured(s, cfgs[i], &m);
    }
    char **more = NULL, *last = got ? cfgs[got - 1] : NULL;
    int n2 = 0;
    rc = rc ? rc : search_ask(s, 8, &more, &n2);
    CHECK(!rc && n2 == 0, "nothing more while a neighbour's reply is pending (%d)", n2);
    if (!rc && n2 == 0) free(more);
    if (last) search_tell(s, last, "ok", separable_us(last));
    rc = rc ? rc : search_ask(s, 8, &more, &n2);
    CHECK(!rc && n2 == 1 && !strcmp(more[0], "{\"a\":4,\"b\":3,\"c\":\"y\"}"), "then the moves that paid, at once (%s)",
          !rc && n2 ? more[0] : "none");
    if (!rc) free_all(more, n2);
    rc = rc ? rc : search_ask(s, 8, &more, &n2);
    CHECK(!rc && n2 == 0, "then done (%d)", n2);
    if (!rc && n2 == 0) free(more);
    for (int i = 0; i < got; i++) free(cfgs[i]);
    free(cfgs);
    search_free(s);
    free_all(g, ng);
}

/* polish's ring with repair (search/space.lua's neighbors(cfg, true)): a
** step the space refuses as it stands comes in its nearest valid form, one
** other param moved the fewest steps, after the plain steps. The grid
** without b 3 at a >= 5: from a 5, b 2, c x the step to b 3 is refused, and
** comes as a 4, b 3, c x (a one step down; c y would not take it). */
static void test_polish_repair(tmpl *T)
{
    char **g = xcalloc(10 * 6 * 2, sizeof *g), *warm[] = { "{\"a\":5,\"b\":2,\"c\":\"x\"}" };
    int ng = 0;
    for (int a = 0; a < 10; a++)
        for (int b = 0; b < 6; b++)
            for (int c = 0; c < 2; c++)
                if (!(b == 3 && a >= 5)) g[ng++] = xstrfmt("{\"a\":%d,\"b\":%d,\"c\":\"%s\"}", a, b, c ? "y" : "x");
    search *s = search_of_configs(T, "polish", g, ng, 3, 8, warm, 1);
    char **cfgs = NULL;
    int got = 0, rc = s ? search_ask(s, 8, &cfgs, &got) : -1;
    CHECK(!rc && got == 6, "polish asks its start, its 4 plain neighbours and 1 repaired (%d)", got);
    CHECK(!rc && got == 6 && !strcmp(cfgs[5], "{\"a\":4,\"b\":3,\"c\":\"x\"}"),
          "the refused step to b 3 comes last, with a moved one step down (%s)", !rc && got ? cfgs[got - 1] : "none");
    for (int i = 0; !rc && i < got; i++) free(cfgs[i]);
    if (!rc) free(cfgs);
    search_free(s);
    /* local (no repair) keeps the plain ring: 4 neighbours after its start. */
    s = search_of_configs(T, "local", g, ng, 3, 8, warm, 1);
    int n = 0, plain = 1;
    while (s && n < 5) {
        char **one;
        int k;
        if (search_ask(s, 1, &one, &k) || !k) break;
        if (n > 0 && !strcmp(one[0], "{\"a\":4,\"b\":3,\"c\":\"x\"}")) plain = 0;
        search_tell(s, one[0], "ok", 100.0 + n);
        free(one[0]);
        free(one);
        n++;
    }
    CHECK(n == 5 && plain, "local's ring has no repaired step (%d asked)", n);
    search_free(s);
    free_all(g, ng);
}

/* The fit params of a real template (wgmma's stages): polish around a
** 128 x 128 tile of two consumers with 6 stages at 744 x 4096 x 4096 offers
** the step to bn 192 (refused with 6 stages: shared memory) with the most
** stages that fit, 4, not another tile (bm 64, the first param, is as near);
** on an H200 that config ran 37.5 us there against the 128 x 128's 45.7
** (bench/results/2026-11-30/s30/sk). */
static void test_polish_fit(tmpl *T)
{
    op_task t;
    long long sh[] = { 744, 4096, 4096 };
    if (tmpl_task(T, "gemm_nt", "bf16", sh, &t)) { CHECK(0, "setup: gemm_nt task"); return; }
    char *warm[] = { "{\"bm\":128,\"bn\":128,\"cluster\":\"1x1\",\"consumers\":2,\"epilogue\":\"tma\",\"group\":8,"
                     "\"inflight\":1,\"persistent\":1,\"producer_regs\":40,\"raster\":\"m\",\"schedule\":\"pingpong\","
                     "\"stage\":\"none\",\"stages\":6,\"streamk\":0}" };
    search *s = search_new_warm(T, "polish", "gemm_nt/wgmma", &t, &dev, 1, 0, warm, 1);
    char **cfgs = NULL;
    int got = 0, rc = s ? search_ask(s, 14, &cfgs, &got) : -1, wide = 0, other = 0;
    for (int i = 0; !rc && i < got; i++) {
        if (strstr(cfgs[i], "\"bn\":192") && strstr(cfgs[i], "\"bm\":128") && strstr(cfgs[i], "\"stages\":4") &&
            strstr(cfgs[i], "\"schedule\":\"pingpong\"") && strstr(cfgs[i], "\"epilogue\":\"tma\""))
            wide++;
        if (strstr(cfgs[i], "\"bn\":192") && strstr(cfgs[i], "\"bm\":64")) other++;
        free(cfgs[i]);
    }
    if (!rc) free(cfgs);
    CHECK(!rc && got > 1 && wide == 1 && other == 0,
          "polish of wgmma 128 x 128 x 6 stages at 744 x 4096 x 4096: bn 192 offered with 4 stages (%d), not as bm 64 (%d)",
          wide, other);
    search_free(s);
}

static void test_warm(tmpl *T)
{
    op_task t;
    long long n[] = { 1 << 20 };
    if (tmpl_task(T, "axpy", "f32", n, &t)) { CHECK(0, "setup: axpy task"); return; }
    /* Two valid configs of axpy/vec around one it does not hold (block 100). */
    char *warm[] = { "{\"block\":128,\"grid_stride\":1,\"ilp\":2,\"vec\":2}", "{\"block\":100,\"grid_stride\":0,\"ilp\":1,\"vec\":1}",
                     "{\"block\":512,\"grid_stride\":0,\"ilp\":4,\"vec\":4}" };
    for (int i = 0; i < 3; i += 2) {
        int ok;
        char why[256];
        tmpl_valid(T, "axpy/vec", warm[i], &t, &dev, &ok, why, sizeof why);
        CHECK(ok, "setup: warm config %s is valid (%s)", warm[i], ok ? "yes" : why);
    }
    for (const char **st = warm_first; *st; st++) {
        search *s = search_new_warm(T, *st, "axpy/vec", &t, &dev, 9, 0, warm, 3);
        CHECK(s != NULL, "search_new_warm %s (%s)", *st, s ? "ok" : tmpl_errmsg(T));
        if (!s) continue;
        char **cfgs;
        int got;
        search_ask(s, 8, &cfgs, &got);
        /* block 100 is no value of the space: the nearest it lists, 128, stands in. */
        const char *stand_in = "{\"block\":128,\"grid_stride\":0,\"ilp\":1,\"vec\":1}";
        CHECK(got >= 3 && !strcmp(cfgs[0], warm[0]) && !strcmp(cfgs[1], stand_in) && !strcmp(cfgs[2], warm[2]),
              "%s asks the warm configs first, the nearest in the space for the one it lacks (%s, %s, %s)", *st,
              got > 0 ? cfgs[0] : "-", got > 1 ? cfgs[1] : "-", got > 2 ? cfgs[2] : "-");
        int again = 0;
        for (int i = 3; i < got; i++)
            again |= !strcmp(cfgs[i], warm[0]) || !strcmp(cfgs[i], warm[2]) || !strcmp(cfgs[i], stand_in);
        CHECK(!again, "%s: and not again", *st);
        free_all(cfgs, got);
        search_free(s);
    }
    /* A warm config the space lacks only by one param's value (vec 16 of f32 is
    ** wider than two 16-byte accesses) gives way to the nearest it holds: vec 8. */
    char *near[] = { "{\"block\":256,\"grid_stride\":0,\"ilp\":2,\"vec\":16}" };
    for (const char **st = warm_first; *st; st++) {
        search *s = search_new_warm(T, *st, "axpy/vec", &t, &dev, 9, 0, near, 1);
        char **cfgs;
        int got = 0;
        if (s) search_ask(s, 1, &cfgs, &got);
        CHECK(got == 1 && !strcmp(cfgs[0], "{\"block\":256,\"grid_stride\":0,\"ilp\":2,\"vec\":8}"),
              "%s asks the nearest config the space holds first (%s)", *st, got ? cfgs[0] : "-");
        if (got) free_all(cfgs, got);
        search_free(s);
    }
    /* Cold, the same strategy starts elsewhere (the seed's random configs). */
    search *s = search_new_warm(T, "model", "axpy/vec", &t, &dev, 9, 0, NULL, 0);
    char **cfgs;
    int got = 0;
    if (s) search_ask(s, 2, &cfgs, &got);
    CHECK(got == 2 && (strcmp(cfgs[0], warm[0]) || strcmp(cfgs[1], warm[2])), "without warm configs the start differs");
    if (got) free_all(cfgs, got);
    search_free(s);
}

/* ---- the lazy space (search/space.lua) ---- */

static int is_valid(tmpl *T, const char *tname, const char *cfg, const op_task *t)
{
    int ok = 0;
    char why[256];
    return !tmpl_valid(T, tname, cfg, t, &dev, &ok, why, sizeof why) && ok;
}

/* axpy/vec's 200 configs in its params' order (block slowest, grid_stride
** fastest) as canonical JSON, and which of them its constraints allow. */
static int axpy_product(tmpl *T, const op_task *t, char ***out, int **valid)
{
    static const int block[] = { 64, 128, 256, 512, 1024 }, vec[] = { 1, 2, 4, 8, 16 }, ilp[] = { 1, 2, 4, 8 };
    char **v = xcalloc(200, sizeof *v);
    int *ok = xcalloc(200, sizeof *ok), n = 0;
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++)
            for (int c = 0; c < 4; c++)
                for (int d = 0; d < 2; d++) {
                    v[n] = xstrfmt("{\"block\":%d,\"grid_stride\":%d,\"ilp\":%d,\"vec\":%d}", block[a], d, ilp[c], vec[b]);
                    ok[n] = is_valid(T, "axpy/vec", v[n], t);
                    n++;
                }
    *out = v;
    *valid = ok;
    return n;
}

/* A watch that says stop at its first call. */
static int stop_at_once(void *ctx)
{
    ++*(int *)ctx;
    return 1;
}

static void test_lazy(tmpl *T)
{
    op_task t;
    long long n[] = { 1 << 20 };
    if (tmpl_task(T, "axpy", "f32", n, &t)) { CHECK(0, "setup: axpy task"); return; }
    char **prod;
    int *ok, nvalid = 0;
    int np = axpy_product(T, &t, &prod, &ok);
    for (int i = 0; i < np; i++) nvalid += ok[i];
    CHECK(nvalid == 150, "setup: 150 of axpy/vec's 200 configs are valid at n = 2^20 (%d)", nvalid);

    /* Nothing is checked up front; the first ask checks only what it needs. */
    search *s = search_new(T, "exhaustive", "axpy/vec", &t, &dev, 1, 0);
    CHECK(s && search_size(s) == 200 && search_nrejected(s) == 0, "a new search: size 200 (the product, a bound), 0 rejected");
    if (!s) goto out;
    char **cfgs;
    int got, first_invalid = 0;
    while (ok[first_invalid]) first_invalid++;
    search_ask(s, 8, &cfgs, &got);
    int same = got == 8;
    for (int i = 0, j = 0; same && i < got; i++, j++) {
        while (!ok[j]) j++;
        same = !strcmp(cfgs[i], prod[j]);
    }
    CHECK(same, "exhaustive's first 8 are the first 8 valid configs in enumeration order");
    free_all(cfgs, got);
    CHECK(search_nrejected(s) <= 8 && search_size(s) == 200, "and they cost only the configs up to them: %d rejected so far, size %d",
          search_nrejected(s), search_size(s));

    /* The whole walk: exactly the valid set, in order; the rest rejected. */
    char **all;
    int total = drive(s, 7, &all);
    int k = 8, inorder = total == nvalid - 8;
    for (int i = 0; inorder && i < total; i++, k++) {
        int j = -1;
        for (int seen = -1; seen < k; ) if (ok[++j]) seen++;
        inorder = !strcmp(all[i], prod[j]);
    }
    CHECK(inorder, "exhaustive covers exactly the valid configs, in enumeration order (%d + 8 of %d)", total, nvalid);
    CHECK(search_size(s) == nvalid && search_nrejected(s) == np - nvalid, "after the walk: size %d = the valid count, %d rejected",
          search_size(s), search_nrejected(s));
    int bad = 0, inrej = 0;
    for (int i = 0; i < search_nrejected(s); i++) {
        char *cfg, why[256];
        int is_err;
        if (search_rejected(s, i, &cfg, why, sizeof why, &is_err)) { bad++; continue; }
        bad += is_valid(T, "axpy/vec", cfg, &t) || is_err || !why[0];
        for (int j = 0; j < np; j++) inrej += !strcmp(cfg, prod[j]) && !ok[j];
        free(cfg);
    }
    CHECK(!bad && inrej == np - nvalid, "each rejected config is invalid, with a reason (%d wrong, %d of %d matched)", bad, inrej,
          np - nvalid);
    if (total > 0) free_all(all, total);
    search_free(s);

    /* search_count walks what is left. */
    s = search_new(T, "model", "axpy/vec", &t, &dev, 1, 0);
    CHECK(s && search_count(s) == nvalid && search_size(s) == nvalid && search_nrejected(s) == np - nvalid,
          "search_count on a new search: %d valid, size then exact, %d rejected", nvalid, np - nvalid);
    search_free(s);
    /* search_tally counts the same and keeps nothing: the space stays lazy. */
    s = search_new(T, "exhaustive", "axpy/vec", &t, &dev, 1, 0);
    if (s) {
        search_ask(s, 8, &cfgs, &got);
        free_all(cfgs, got);
        int rej = search_nrejected(s);
        long long tally = search_tally(s);
        CHECK(tally == nvalid && search_size(s) == 200 && search_nrejected(s) == rej,
              "search_tally: %lld valid, the space still a bound (%d) with %d rejected as before", tally, search_size(s), rej);
        CHECK(search_count(s) == nvalid, "and search_count agrees after it");
        search_free(s);
    }

    /* A large space (wgmma: over 100,000 configs, a few % valid): every
    ** strategy's first batches are valid, reproducible, and meet a small
    ** part of it. */
    int wgmma_size = 0;
    op_task g;
    long long gs[] = { 2048, 2048, 2048 };
    if (tmpl_task(T, "gemm_nn", "bf16", gs, &g)) { CHECK(0, "setup: gemm_nn task"); goto out; }
    /* tmpl_watch: a watch that says stop ends the Lua work in progress
    ** with "interrupted", and every call after it, until it is removed. */
    static int calls;
    calls = 0;
    s = search_new(T, "exhaustive", "gemm_nn/wgmma", &g, &dev, 1, 0);     /* a count of millions of steps */
    tmpl_watch(T, stop_at_once, &calls);
    long long stopped = s ? search_tally(s) : 0;
    CHECK(stopped == -1 && calls == 1 && tmpl_stopped(T) && strstr(tmpl_errmsg(T), "interrupted"),
          "a watch that says stop: the count fails ('%s'), asked once", tmpl_errmsg(T));
    CHECK(search_ask(s, 8, &cfgs, &got) != 0, "and so does the next call");
    tmpl_watch(T, NULL, NULL);
    /* (Asked, not counted again: a whole count of this space is seconds.) */
    got = 0;
    int again = s && !tmpl_stopped(T) ? search_ask(s, 8, &cfgs, &got) : -1, valid = 0;
    for (int i = 0; !again && i < got; i++) valid += is_valid(T, "gemm_nn/wgmma", cfgs[i], &g);
    CHECK(!again && got == 8 && valid == 8, "removed, the same search asks again: %d configs, %d valid", got, valid);
    if (!again) free_all(cfgs, got);
    search_free(s);

    for (const char **st = strategies; *st; st++) {
        search *a = search_new(T, *st, "gemm_nn/wgmma", &g, &dev, 5, 24);
        search *b = search_new(T, *st, "gemm_nn/wgmma", &g, &dev, 5, 24);
        CHECK(a && b, "%s over wgmma (%s)", *st, a && b ? "ok" : tmpl_errmsg(T));
        if (!a || !b) { search_free(a); search_free(b); continue; }
        int bound = wgmma_size = search_size(a);
        char **x, **y;
        int nx = drive(a, 8, &x), ny = drive(b, 8, &y);
        int eq = nx == ny, invalid = 0;
        for (int i = 0; eq && i < nx; i++) eq = !strcmp(x[i], y[i]);
        for (int i = 0; i < nx; i++) invalid += !is_valid(T, "gemm_nn/wgmma", x[i], &g);
        CHECK(nx == 24 && eq && !invalid, "%s: 24 configs, all valid (%d not), the same for the same seed", *st, invalid);
        int met = search_nrejected(a);
        CHECK(bound > 100000 && met < bound / 4, "%s: the space was not enumerated: %d of %d rejected so far", *st, met, bound);
        free_all(x, nx > 0 ? nx : 0);
        free_all(y, ny > 0 ? ny : 0);
        search_free(a);
        search_free(b);
    }

    /* One search across templates (Space.union): lazy too. */
    char *tn[] = { "gemm_nn/mma", "gemm_nn/wgmma" };
    s = search_new_bucket(T, "random", tn, 2, &g, &dev, 3, 120, NULL, 0);
    CHECK(s != NULL, "search_new_bucket over mma and wgmma (%s)", s ? "ok" : tmpl_errmsg(T));
    if (s) {
        int bound = search_size(s);
        total = drive(s, 8, &all);
        int invalid = 0, fams = 0;
        for (int i = 0; i < total; i++) {
            char tname[64], *own;
            if (search_split(T, all[i], tname, sizeof tname, &own)) { invalid++; continue; }
            invalid += !is_valid(T, tname, own, &g);
            fams |= !strcmp(tname, tn[0]) ? 1 : 2;
            free(own);
        }
        CHECK(total == 120 && !invalid && fams == 3, "joint: 120 valid configs of both families (%d not valid, families %d)", invalid,
              fams);
        CHECK(bound > wgmma_size && search_nrejected(s) < bound / 4, "joint: size %d is both products, %d rejected so far", bound,
              search_nrejected(s));
        char *cfg, why[256], tname[64], *own;
        int is_err;
        if (search_nrejected(s) > 0 && !search_rejected(s, 0, &cfg, why, sizeof why, &is_err)) {
            int r = search_split(T, cfg, tname, sizeof tname, &own);
            CHECK(!r && !is_valid(T, tname, own, &g), "joint: a rejected config names its template and is invalid there: %s", cfg);
            if (!r) free(own);
            free(cfg);
        }
        free_all(all, total);
        search_free(s);
    }
out:
    free_all(prod, np);
    free(ok);
}

/* A template's narrow(shape) cuts the domain a search samples to the values
** its constraints leave the task (search/space.lua; the valid configs stay
** those of the whole domain: tests/cli/space_narrow.sh). The domain's
** product is the search's size until a walk completes. */
static void test_narrow(tmpl *T)
{
    struct { const char *op, *tname; long long shape[3]; int size; const char *what; } cases[] = {
        /* bn 8 alone, no mid-size mc, nvar or wstep: 6289920 / 13 / 48 */
        { "gemm_nt", "gemm_nt/swapab", { 8, 4096, 4096 }, 10080, "swapab at m = 8: bn 8, mc 0, nvar 1, wstep 0" },
        { "gemm_nt", "gemm_nt/swapab", { 40, 4096, 4096 }, 30240, "swapab at m = 40: bn 40, 48, 64" },
        /* bn 128 .. 256 (tiles of rows above 64), mc, nvar and wstep kept */
        { "gemm_nt", "gemm_nt/swapab", { 200, 4096, 4096 }, 2419200, "swapab at m = 200: five bn, every mc, nvar and wstep" },
        /* evict 0 only: its 4-D boxes take no hint */
        { "gemm_swiglu", "gemm_swiglu/swapab", { 40, 14336, 4096 }, 15120, "the gated product's swapab at m = 40" },
        /* mt 1 of 4 */
        { "gemm_nt", "gemm_nt/gemv", { 8, 4096, 4096 }, 552960, "gemv nt at m = 8: mt 1" },
        /* stage none of nt's 3, epilogue direct or tma of 4; six bn */
        { "gemm_nt", "gemm_nt/wgmma", { 2048, 4096, 4096 }, 387072, "wgmma nt aligned: stage none, direct or tma" },
        /* stage ab and ab_overlap; direct, rows, tma_ws */
        { "gemm_nt", "gemm_nt/wgmma", { 2048, 4097, 4100 }, 1161216, "wgmma nt, k and n unaligned: ab, ab_overlap" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        op_task t;
        if (tmpl_task(T, cases[i].op, "bf16", cases[i].shape, &t)) {
            CHECK(0, "setup: %s task (%s)", cases[i].op, tmpl_errmsg(T));
            continue;
        }
        search *s = search_new(T, "random", cases[i].tname, &t, &dev, 1, 8);
        CHECK(s && search_size(s) == cases[i].size, "%s: a domain of %d (%d)", cases[i].what, cases[i].size,
              s ? search_size(s) : -1);
        search_free(s);
    }
}

/* Priors and the sampling fallback, on fixture templates of the op "bad"
** (tests/fixtures/broken/templates/bad, seen from the probe fixture). */
static void test_prior(void)
{
    char probe[1100];
    snprintf(probe, sizeof probe, "%s/tests/fixtures/probe", root);
    tmpl *T = tmpl_open(probe);
    op_task t;
    long long n[] = { 1 << 16 };
    if (tmpl_task(T, "bad", "f32", n, &t)) { CHECK(0, "setup: the fixture op bad (%s)", tmpl_errmsg(T)); tmpl_close(T); return; }
    /* Exhaustive: the configs of weight 1 in order, then the light ones. */
    search *s = search_new(T, "exhaustive", "bad/weighted", &t, &dev, 1, 0);
    char **all;
    int total = s ? drive(s, 3, &all) : -1;
    const char *want[] = {
        "{\"block\":64,\"ilp\":1,\"vec\":2}", "{\"block\":64,\"ilp\":2,\"vec\":2}", "{\"block\":64,\"ilp\":1,\"vec\":4}",
        "{\"block\":128,\"ilp\":1,\"vec\":2}", "{\"block\":128,\"ilp\":2,\"vec\":2}", "{\"block\":128,\"ilp\":1,\"vec\":4}",
        "{\"block\":64,\"ilp\":1,\"vec\":1}", "{\"block\":64,\"ilp\":2,\"vec\":1}", "{\"block\":128,\"ilp\":1,\"vec\":1}",
        "{\"block\":128,\"ilp\":2,\"vec\":1}",
    };
    int same = total == 10;
    for (int i = 0; same && i < total; i++) same = !strcmp(all[i], want[i]);
    CHECK(same, "a prior keeps its configs: exhaustive gives all 10 valid, weight 1 first, the light ones last (%d; %s)", total,
          total > 0 ? all[0] : tmpl_errmsg(T));
    CHECK(s && search_nrejected(s) == 2, "the 2 illegal ones are rejected, the light ones are not");
    if (total > 0) free_all(all, total);
    search_free(s);

    /* Sampling draws in proportion to the weight: vec 1 is 4 of the 10
    ** configs but 4 x 0.25 / (4 x 0.25 + 6) = 1/7 of the draws. */
    s = search_new(T, "sampler", "bad/weighted", &t, &dev, 11, 0);
    int light = 0, draws = 0;
    for (int r = 0; s && r < 10; r++) {
        char **cfgs;
        int got;
        if (search_ask(s, 400, &cfgs, &got)) break;
        for (int i = 0; i < got; i++) light += strstr(cfgs[i], "\"vec\":1") != NULL;
        draws += got;
        free_all(cfgs, got);
    }
    double share = draws ? (double)light / draws : 0;
    CHECK(draws == 4000 && share > 0.11 && share < 0.18, "sample draws the light configs %.3f of the time (1/7 expected, 0.4 uniform)",
          share);
    search_free(s);

    /* Model reads the weight as one more param of its fit. */
    s = search_new(T, "model", "bad/weighted", &t, &dev, 4, 0);
    total = s ? drive(s, 4, &all) : -1;
    CHECK(total == 10 && !dups(all, total), "model over a space with a prior: all 10 once (%d; %s)", total,
          total >= 0 ? "ok" : tmpl_errmsg(T));
    if (total > 0) free_all(all, total);
    search_free(s);

    s = search_new(T, "exhaustive", "bad/overweight", &t, &dev, 1, 0);
    char **cfgs;
    int got = 0;
    int rc = s ? search_ask(s, 4, &cfgs, &got) : -1;
    CHECK(rc == -1 && strstr(tmpl_errmsg(T), "prior() gave 2, not a weight in (0, 1]"), "a weight out of (0, 1] is an error: '%s'",
          tmpl_errmsg(T));
    search_free(s);

    /* One legal config in 4096: the draws miss it, the fallback checks
    ** every config once and finds it; the space is then known exactly. */
    s = search_new(T, "sampler", "bad/needle", &t, &dev, 2, 0);
    rc = s ? search_ask(s, 3, &cfgs, &got) : -1;
    int found = !rc && got == 3;
    for (int i = 0; found && i < got; i++) found = !strcmp(cfgs[i], "{\"a\":11,\"b\":5,\"c\":7}");
    CHECK(found && search_size(s) == 1 && search_nrejected(s) == 4095,
          "a needle in 4096: sampling falls back to one full walk and finds it (size %d, %d rejected)", s ? search_size(s) : -1,
          s ? search_nrejected(s) : -1);
    if (!rc) free_all(cfgs, got);
    search_free(s);
    tmpl_close(T);
}

static void test_tell(void)
{
    char probe[1100];
    snprintf(probe, sizeof probe, "%s/tests/fixtures/probe", root);
    tmpl *T = tmpl_open(probe);
    char *cfg[] = { "{\"a\":1}", "{\"a\":2}" };
    search *s = search_of_configs(T, "probe", cfg, 2, 1, 0, NULL, 0);
    CHECK(s != NULL, "the probe strategy (%s)", s ? "ok" : tmpl_errmsg(T));
    if (!s) { tmpl_close(T); return; }
    measurement m;
    memset(&m, 0, sizeof m);
    snprintf(m.status, sizeof m.status, "ok");
    m.median_us = 12.5, m.min_us = 12, m.max_us = 14, m.spread = 0.02;
    m.registers = 40, m.spills = 0, m.smem = 4096, m.compile_ms = 310;
    int rc = search_tell_measured(s, cfg[0], &m);
    CHECK(rc == -1 && strstr(tmpl_errmsg(T), "told compile_ms=310.0 max=14.0 min=12.0 registers=40 smem=4096 spills=0 "
                                              "spread=0.02 status=ok time=12.5"),
          "tell carries status, time, min, max, spread, registers, spills, smem, compile ms: '%s'", tmpl_errmsg(T));
    memset(&m, 0, sizeof m);
    snprintf(m.status, sizeof m.status, "compile");
    m.compile_ms = 80;
    search_tell_measured(s, cfg[1], &m);
    CHECK(strstr(tmpl_errmsg(T), "told compile_ms=80.0 status=compile") != NULL,
          "a compile failure carries no time and no ptxas report: '%s'", tmpl_errmsg(T));
    search_tell(s, cfg[1], "timeout", 0);
    CHECK(strstr(tmpl_errmsg(T), "told status=timeout") != NULL, "search_tell (status and time only) still works: '%s'",
          tmpl_errmsg(T));
    search_free(s);
    tmpl_close(T);
}

int main(int argc, char **argv)
{
    const char *r = argc > 1 ? argv[1] : getenv("AITUNE_ROOT") ? getenv("AITUNE_ROOT") : AITUNE_SOURCE_DIR;
    snprintf(root, sizeof root, "%s", r);
    if (device_assume("sm_90", &dev)) {
        printf("FAIL setup: device_assume sm_90\n");
        return 1;
    }
    tmpl *T = tmpl_open(root);
    test_of_configs(T);
    test_local_combine(T);
    test_polish(T);
    test_polish_repair(T);
    test_polish_fit(T);
    test_warm(T);
    test_lazy(T);
    test_narrow(T);
    tmpl_close(T);
    test_tell();
    test_prior();
    CHECK_DONE();
}
