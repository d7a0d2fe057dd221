/*
** test_search: search.c's C interface with the strategies in search/: warm
** start (search_new_warm), everything a tell carries (search_tell_measured,
** seen through tests/fixtures/probe), spaces of given configs
** (search_of_configs), the budget, no repeats, determinism by seed.
**
**     build/tests/test_search [REPO_ROOT]
*/
#define _GNU_SOURCE
#include "check.h"
#include "device.h"
#include "registry.h"
#include "search.h"
#include "tmpl.h"
#include "util.h"

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

static void test_warm(tmpl *T)
{
    op_task t;
    long long n[] = { 1 << 20 };
    if (tmpl_task(T, "axpy", "f32", n, &t)) { CHECK(0, "setup: axpy task"); return; }
    /* Two valid configs of axpy/vec around one it does not hold. */
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
        CHECK(got >= 2 && !strcmp(cfgs[0], warm[0]) && !strcmp(cfgs[1], warm[2]),
              "%s asks the valid warm configs first, skipping the one not in the space (%s, %s)", *st,
              got > 0 ? cfgs[0] : "-", got > 1 ? cfgs[1] : "-");
        int again = 0;
        for (int i = 2; i < got; i++) again |= !strcmp(cfgs[i], warm[0]) || !strcmp(cfgs[i], warm[2]);
        CHECK(!again, "%s: and not again", *st);
        free_all(cfgs, got);
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
    test_warm(T);
    tmpl_close(T);
    test_tell();
    CHECK_DONE();
}
