/* test_replay: the replay metric (replay.h) against cases whose answer is
** known in closed form, and the landscape reader. */
#define _GNU_SOURCE
#include "check.h"
#include "replay.h"
#include "util.h"
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

static int near(double a, double b, double tol) { return fabs(a - b) <= tol * (fabs(b) > 1 ? fabs(b) : 1); }

/* Draws without repeats from 1..n: E[min of k] = (n + 1) / (k + 1). */
static void test_random_expected(void)
{
    enum { N = 37 };
    double v[N], e[N];
    for (int i = 0; i < N; i++) v[i] = (double)((i * 11) % N + 1);   /* 1..N, shuffled */
    replay_random_expected(v, N, e);
    int bad = 0;
    for (int k = 1; k <= N; k++)
        if (!near(e[k - 1], (N + 1.0) / (k + 1), 1e-9)) bad = k;
    CHECK(!bad, "random best-so-far of 1..%d is (n+1)/(k+1) for every k (first wrong k: %d)", N, bad);
    /* Ties and one outlier: {5,5,5,1}: the 1 is among k draws with chance k/4. */
    double w[4] = { 5, 1, 5, 5 }, f[4];
    replay_random_expected(w, 4, f);
    CHECK(near(f[0], 4, 1e-12) && near(f[1], 3, 1e-12) && near(f[2], 2, 1e-12) && near(f[3], 1, 1e-12),
          "random best-so-far of {5,5,5,1}: 4 3 2 1 (got %g %g %g %g)", f[0], f[1], f[2], f[3]);
}

static void test_gap(void)
{
    CHECK(replay_gap_closed(5, 1, 1) == 1, "reaching the optimum closes the whole gap");
    CHECK(replay_gap_closed(5, 5, 1) == 0, "matching random closes none");
    CHECK(near(replay_gap_closed(5, 3, 1), 0.5, 1e-12), "half way closes 0.5");
    CHECK(near(replay_gap_closed(3, 5, 1), -1, 1e-12), "worse than random is negative (-1)");
    CHECK(replay_gap_closed(1, 1, 1) == 1 && replay_gap_closed(1, 2, 1) == 0,
          "when random is already optimal: 1 if optimal too, else 0");
}

static void test_ci(void)
{
    double x[5] = { 1, 2, 3, 4, 5 }, m, lo, hi;
    replay_mean_ci(x, 5, &m, &lo, &hi);
    /* sd = sqrt(2.5), t(4) = 2.776: half width 2.776 * 1.58114 / 2.23607 = 1.96295 */
    CHECK(near(m, 3, 1e-12) && near(hi - m, 1.96295, 1e-4) && near(m - lo, 1.96295, 1e-4),
          "mean and 95%% interval of 1..5: 3 [1.037, 4.963] (got %g [%g, %g])", m, lo, hi);
    double y[3] = { 1, NAN, 3 };
    replay_mean_ci(y, 3, &m, &lo, &hi);
    CHECK(near(m, 2, 1e-12) && near(hi - m, 12.706, 1e-4), "NaN (a budget not reached) is left out (got %g [%g, %g])", m,
          lo, hi);
    double z[1] = { 0.5 };
    replay_mean_ci(z, 1, &m, &lo, &hi);
    CHECK(m == 0.5 && lo == 0.5 && hi == 0.5, "one value: no interval");
}

/* A trace against values 1..100 (n = 100): budgets 1, 2, 5, 10, 20
** evaluations. */
static void test_score(void)
{
    enum { N = 100 };
    double v[N], e[N], cost[N], rt[REPLAY_NFRAC], total;
    for (int i = 0; i < N; i++) v[i] = (double)(N - i), cost[i] = 0.5;
    replay_random_expected(v, N, e);
    replay_random_by_time(v, cost, N, 4000, 7, rt, &total);
    CHECK(near(total, 50, 1e-12), "exhaustive wall time is the sum of costs (%g)", total);
    int bad = -1;
    for (int f = 0; f < REPLAY_NFRAC; f++) {
        int k = (int)lround(replay_frac[f] * N);
        if (!near(rt[f], e[k - 1], 0.04)) bad = f;
    }
    CHECK(bad < 0, "with equal costs, random by time matches random by evaluations within 4%% (budget %d off: %g vs %g)",
          bad, bad >= 0 ? rt[bad] : 0, bad >= 0 ? e[(int)lround(replay_frac[bad] * N) - 1] : 0);

    replay_trace t = { 20, calloc(20, sizeof(double)), calloc(20, sizeof(double)) };
    replay_score s;
    /* The optimum first: everything closed, within 3% and 1% at once. */
    for (int i = 0; i < 20; i++) t.best[i] = 1, t.wall[i] = 0.5 * (i + 1);
    replay_score_trace(&t, v, N, e, rt, total, &s);
    int all1 = 1;
    for (int f = 0; f < REPLAY_NFRAC; f++) all1 &= s.gap_evals[f] == 1;
    CHECK(all1 && s.evals_to3 == 1 && s.evals_to1 == 1 && s.wall_to3 == 0.5, "an oracle trace scores 1 and reaches at once");
    /* Exactly random's expectation: closes nothing. */
    for (int i = 0; i < 20; i++) t.best[i] = e[i];
    replay_score_trace(&t, v, N, e, rt, total, &s);
    int all0 = 1;
    for (int f = 0; f < REPLAY_NFRAC; f++) all0 &= near(s.gap_evals[f], 0, 1e-12);
    CHECK(all0, "a trace equal to random's expectation scores 0");
    /* 10 until eval 4, 1.02 (within 3%, not 1%) from 5, 1 from 12. */
    for (int i = 0; i < 20; i++) t.best[i] = i < 4 ? 10 : i < 11 ? 1.02 : 1;
    replay_score_trace(&t, v, N, e, rt, total, &s);
    double want5 = (e[4] - 1.02) / (e[4] - 1);
    CHECK(s.evals_to3 == 5 && s.evals_to1 == 12 && near(s.wall_to3, 2.5, 1e-12),
          "evaluations to 3%% and 1%%: 5 and 12 (got %d, %d; wall %g)", s.evals_to3, s.evals_to1, s.wall_to3);
    CHECK(near(s.gap_evals[2], want5, 1e-12) && near(s.gap_evals[0], (e[0] - 10) / (e[0] - 1), 1e-12),
          "gap at 5 evaluations is (R(5) - 1.02) / (R(5) - 1) = %.4f (got %.4f)", want5, s.gap_evals[2]);
    /* By time: 2.5 s is 5% of 50 s; evaluation 5 ends at 2.5 s. */
    CHECK(near(s.gap_time[2], (rt[2] - 1.02) / (rt[2] - 1), 1e-12), "gap by time at 5%% uses the best done by then");
    /* A run that stopped (budget) at 3 evaluations has no figure at 5. */
    t.n = 3;
    replay_score_trace(&t, v, N, e, rt, total, &s);
    CHECK(!isnan(s.gap_evals[1]) && isnan(s.gap_evals[2]) && isnan(s.gap_time[2]) && s.evals_to3 == 0,
          "budgets beyond a short run are NaN, not guessed; not reached is 0");
    replay_trace_free(&t);
}

static void test_cost(void)
{
    replay_cost c = { 4, 20, 10, 40, 5000 };
    land_row ok = { NULL, "ok", 60, 400, 0, 0, 0, 0 }, hang = { NULL, "timeout", 0, 400, 0, 0, 0, 0 };
    land_row cc = { NULL, "compile", 0, 80, 0, 0, 0, 0 };
    CHECK(near(replay_cost_ms(&c, &ok), 100 + 20 + 10 * 0.1, 1e-12), "an ok candidate: compile/4 + verify + 10 x (60 + 40) us (%g)",
          replay_cost_ms(&c, &ok));
    CHECK(near(replay_cost_ms(&c, &hang), 100 + 5000, 1e-12), "a hang costs the watchdog");
    CHECK(near(replay_cost_ms(&c, &cc), 20, 1e-12), "a compile failure costs its compile only");
}

static const char *write_tmp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/aitune-land-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) return NULL;
    if (write(fd, text, strlen(text)) < 0) { close(fd); return NULL; }
    close(fd);
    return path;
}

static void test_load(void)
{
    const char *p = write_tmp("# aitune landscape v1\n# a comment\n"
                              "op\ttemplate\tarch\tdtype\tbucket\tstatus\ttime_us\tcompile_ms\tconfig\n"
                              "g\tg/a\tsm_90\tbf16\tm=1\tok\t10.5\t100\t{\"x\":1}\n"
                              "g\tg/a\tsm_90\tbf16\tm=1\tconstraint\t0\t0\t{\"x\":9}\n"
                              "g\tg/a\tsm_90\tbf16\tm=2\tok\t7\t90\t{\"x\":1}\n"
                              "g\tg/a\tsm_90\tbf16\tm=1\tcompile\t0\t120\t{\"x\":2}\n");
    landscape *ls;
    int n;
    char err[256] = "";
    int rc = replay_load(p, &ls, &n, err, sizeof err);
    CHECK(rc == 0 && n == 2 && ls[0].n == 2 && ls[1].n == 1 && !strcmp(ls[0].bucket, "m=1") &&
              !strcmp(ls[0].rows[1].status, "compile") && ls[0].rows[0].time_us == 10.5,
          "a landscape file: 2 buckets in order, constraint rows left out (%s)", err);
    if (!rc) replay_free(ls, n);
    unlink(p);
    struct { const char *text, *want; } bad[] = {
        { "op\ttemplate\n", "not a landscape file" },
        { "# aitune landscape v1\nop\ttemplate\tarch\tdtype\tbucket\tstatus\ttime_us\tconfig\n", "no column 'compile_ms'" },
        { "# aitune landscape v1\nop\ttemplate\tarch\tdtype\tbucket\tstatus\ttime_us\tcompile_ms\tconfig\n"
          "g\tg/a\tsm_90\tbf16\tm=1\tfast\t1\t1\t{}\n", "line 3: unknown status 'fast'" },
        { "# aitune landscape v1\nop\ttemplate\tarch\tdtype\tbucket\tstatus\ttime_us\tcompile_ms\tconfig\n"
          "g\tg/a\tsm_90\tbf16\tm=1\tok\t1\t1\t{\"x\":1}\ng\tg/a\tsm_90\tbf16\tm=1\tok\t2\t1\t{\"x\":1}\n", "appears twice" },
        { "# aitune landscape v1\nop\ttemplate\tarch\tdtype\tbucket\tstatus\ttime_us\tcompile_ms\tconfig\n"
          "g\tg/a\tsm_90\tbf16\tm=1\tok\tfast\t1\t{\"x\":1}\n", "not a valid number" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        p = write_tmp(bad[i].text);
        err[0] = 0;
        rc = replay_load(p, &ls, &n, err, sizeof err);
        CHECK(rc == -1 && strstr(err, bad[i].want) && strstr(err, p), "a bad landscape is refused: '%s'", err);
        unlink(p);
    }
}

int main(void)
{
    test_random_expected();
    test_gap();
    test_ci();
    test_score();
    test_cost();
    test_load();
    CHECK_DONE();
}
