/* test_sweep: the sweep's choices as pure functions, on times the test
** makes up: the race's winner (tune_pick: ties, the spread, the canonical
** config, retune's standing winner), a slot's losses over probes and a
** box's winner (sweep_probe.h), the vendor as a bar there, where a range
** is cut (probe_cut), hold's choice (hold_choose), and the sizes a bucket
** is probed at (probe_size, probe_upper, probe_range_shapes). */
#define _GNU_SOURCE
#include "check.h"
#include "align.h"
#include "sweep_hold.h"
#include "sweep_lanes.h"
#include "sweep_tune.h"
#include <math.h>
#include <stdlib.h>

static final fin(const char *tmpl, const char *config, double us, double spread)
{
    final f = { .median_us = us, .spread = spread };
    snprintf(f.tmpl, sizeof f.tmpl, "%s", tmpl);
    f.config = (char *)config;
    return f;
}

static void test_pick(void)
{
    final f[4] = { fin("t/a", "{\"x\":1}", 12.0, 0.01), fin("t/a", "{\"x\":2}", 10.0, 0.02),
                   fin("t/b", "{\"x\":3}", 10.04, 0.01), fin("t/b", "{\"x\":4}", 20.0, 0.0) };
    int w = tune_pick(f, 4, NULL, NULL, 0.03);
    CHECK(f[0].median_us == 10.0 && f[1].median_us == 10.04 && f[3].median_us == 20.0, "the finalists come back fastest first");
    CHECK(w == 1 && !strcmp(f[w].config, "{\"x\":3}"),
          "within 0.5%% of the fastest the steadier wins (got %d: %s)", w, f[w].config);

    final g[3] = { fin("t/a", "{\"x\":2}", 10.0, 0.01), fin("t/a", "{\"x\":1}", 10.03, 0.01), fin("t/a", "{\"x\":0}", 10.2, 0.0) };
    w = tune_pick(g, 3, NULL, NULL, 0.03);
    CHECK(w == 1 && !strcmp(g[w].config, "{\"x\":1}"),
          "same spread: the lower canonical config; 2%% slower is no tie, however steady (got %s)", g[w].config);

    final h[3] = { fin("t/a", "{\"x\":1}", 10.0, 0.05), fin("t/b", "{\"x\":2}", 10.2, 0.05), fin("t/c", "{\"x\":3}", 10.6, 0.0) };
    w = tune_pick(h, 3, "t/b", "{\"x\":2}", 0.03);
    CHECK(w == 1, "retune: the standing winner 2%% behind stays within a 3%% margin (got %d)", w);
    w = tune_pick(h, 3, "t/c", "{\"x\":3}", 0.03);
    CHECK(w == 0, "retune: one 6%% behind does not (got %d)", w);
    w = tune_pick(h, 3, "t/a", "{\"x\":2}", 0.03);
    CHECK(w == 0, "retune: the standing winner is matched by template and config both (got %d)", w);
    final one[1] = { fin("t/a", "{}", 5.0, 0.0) };
    CHECK(tune_pick(one, 1, NULL, NULL, 0) == 0, "one finalist wins");
}

/* A bucket of one dim [lo, hi) tuned at rep. */
static bucket box1(long long lo, long long hi, long long rep)
{
    bucket b = { .ndims = 1 };
    b.lo[0] = lo;
    b.hi[0] = hi;
    b.rep[0] = rep;
    b.align[0] = align_class(rep);
    return b;
}

/* Probes at sizes x[0, n) of slots [0, m): us[k][i] slot i's time at x[k]. */
static void set_probes(probes *P, int m, int n, const long long *x, double us[][4])
{
    memset(P, 0, sizeof *P);
    P->m = m;
    P->n = n;
    for (int k = 0; k < n; k++) {
        P->p[k].shape[0] = x[k];
        for (int i = 0; i < m; i++) P->p[k].us[i] = us[k][i];
    }
}

static void test_probes(void)
{
    probes P;
    long long x[3] = { 1024, 1536, 2047 };
    double us[3][4] = { { 10, 11, 12 }, { 20, 18, 19 }, { 40, 30, 0 } };   /* slot 2 fails at 2047 */
    set_probes(&P, 3, 3, x, us);
    CHECK(fabs(probe_loss(&P.p[0], 1, 3) - 0.1) < 1e-12, "a loss is the time over the fastest's, minus one");
    CHECK(isinf(probe_loss(&P.p[2], 2, 3)), "a slot with no time at a probe loses everything there");
    bucket b = box1(1024, 2048, 1024);
    int at;
    double wl = probe_worst(&P, &b, 0, &at);
    CHECK(fabs(wl - 40.0 / 30 + 1) < 1e-12 && at == 2, "slot 0's worst loss is at the upper edge (%.3f at %d)", wl, at);
    bucket lower = box1(1024, 1536, 1024);
    wl = probe_worst(&P, &lower, 0, &at);
    CHECK(wl == 0 && at == 0, "inside a box only its probes count (%.3f at %d)", wl, at);
    CHECK(probe_find(&P, &x[1], 1) == 1 && probe_find(&P, (long long[]){ 7 }, 1) == -1, "probe_find");

    double worst;
    int w = probe_winner(&P, &b, -1, 0.02, &worst, &at);
    CHECK(w == 1 && fabs(worst - 0.1) < 1e-12, "the box's winner has the smallest worst loss (slot %d, %.3f)", w, worst);
    w = probe_winner(&P, &b, 0, 0.5, &worst, &at);
    CHECK(w == 0, "the preferred slot stays within the noise margin (slot %d)", w);
    w = probe_winner(&P, &b, 0, 0.2, &worst, &at);
    CHECK(w == 1, "and not beyond it (slot %d)", w);
    probes *Q = probes_in(&P, &lower);
    CHECK(Q->n == 1 && Q->m == 3 && Q->p[0].shape[0] == 1024, "probes_in keeps the probes inside the box (%d)", Q->n);
    free(Q);

    /* The vendor's time is a bar beside the slots, never a slot. */
    P.p[0].vendor_us = 8;
    CHECK(fabs(probe_loss(&P.p[0], 0, 3) - 0.25) < 1e-12 && probe_vendor_ahead(&P.p[0], 3),
          "where the vendor is faster, a loss is against it (%.3f)", probe_loss(&P.p[0], 0, 3));
    P.p[1].vendor_us = 25;
    CHECK(fabs(probe_loss(&P.p[1], 1, 3)) < 1e-12 && !probe_vendor_ahead(&P.p[1], 3), "a slower vendor changes nothing");
    char where[96];
    probe_where(&P, 0, 1, NULL, where, sizeof where);
    CHECK(!strcmp(where, "1024, behind the vendor"), "the line says so: '%s'", where);
    w = probe_winner(&P, &b, -1, 0.02, &worst, &at);
    CHECK(w == 0 && fabs(worst - 40.0 / 30 + 1) < 1e-12,
          "the winner is a slot, the vendor counted in each loss: slot 0 now (worst 0.333 against slot 1's 11 / 8 - 1 = 0.375; got %d, %.3f)",
          w, worst);

    /* Worst losses within PROBE_TIE tie: the smaller mean loss wins. Every
    ** slot trails the vendor (40) at the upper edge: slot 0 by 14.0%, slot 1
    ** by 14.5% but level with it at the lower edge and the middle, where slot
    ** 0 loses 8-10%. */
    long long y[3] = { 1024, 1536, 2047 };
    double tie[3][4] = { { 11, 10 }, { 21.6, 20 }, { 45.6, 45.8 } };
    set_probes(&P, 2, 3, y, tie);
    P.p[2].vendor_us = 40;
    w = probe_winner(&P, &b, 0, 0, &worst, &at);
    CHECK(w == 1 && fabs(worst - 0.145) < 1e-9 && at == 2,
          "worst losses 14.0%% and 14.5%% tie: the slot level elsewhere wins, preferred or not (slot %d, %.4f at %d)", w, worst,
          at);
    w = probe_winner(&P, &b, 0, 0.03, &worst, &at);
    CHECK(w == 0, "retune's margin keeps the preferred slot within it (slot %d)", w);
    P.p[2].us[1] = 47.2;   /* 18% behind: beyond the tie */
    w = probe_winner(&P, &b, 1, 0, &worst, &at);
    CHECK(w == 0 && fabs(worst - 0.14) < 1e-9, "beyond PROBE_TIE the smaller worst loss wins (slot %d, %.4f)", w, worst);
    double same[3][4] = { { 10, 10 }, { 20, 20 }, { 40, 40 } };
    set_probes(&P, 2, 3, y, same);
    CHECK(probe_winner(&P, &b, 1, 0, &worst, &at) == 1 && probe_winner(&P, &b, 0, 0, &worst, &at) == 0,
          "equal slots: the preferred one");
}

/* A range bucket [128, 256) of one dim, serving all of it, tuned at 255. */
static bucket range128(void)
{
    bucket b = box1(128, 256, 255);
    b.ranged = 1;
    b.slo[0] = 128;
    b.shi[0] = 256;
    return b;
}

static void test_cut(void)
{
    probes P;
    bucket b = range128();
    long long x[6] = { 255, 128, 129, 160, 161, 192 };
    /* Slot 0 one pass at 128 only (10 us; 20 past it), slot 1 even (15). */
    double flip[6][4] = { { 20, 15 }, { 10, 15 }, { 20, 15 }, { 20, 15 }, { 20, 15 }, { 20, 15 } };
    set_probes(&P, 2, 6, x, flip);
    CHECK(probe_cut(&P, &b, 0, 0.02) == 129, "the ranking flips one past 128: cut at 129, not the middle (%lld)",
          probe_cut(&P, &b, 0, 0.02));
    /* Slot 0 fastest up to 160, slot 1 from 161 on. */
    double at161[6][4] = { { 20, 15 }, { 10, 15 }, { 10, 15 }, { 10, 15 }, { 20, 15 }, { 20, 15 } };
    set_probes(&P, 2, 6, x, at161);
    CHECK(probe_cut(&P, &b, 0, 0.02) == 161, "a flip at 161 cuts at 161 (%lld)", probe_cut(&P, &b, 0, 0.02));
    /* A flip the middle (192) separates as well: the middle. */
    double at192[6][4] = { { 20, 15 }, { 10, 15 }, { 10, 15 }, { 10, 15 }, { 10, 15 }, { 20, 15 } };
    set_probes(&P, 2, 6, x, at192);
    CHECK(probe_cut(&P, &b, 0, 0.02) == 0, "where the middle holds as well, it stays (%lld)", probe_cut(&P, &b, 0, 0.02));
    /* No flip: nothing to choose. */
    double flat[6][4] = { { 10, 15 }, { 10, 15 }, { 10, 15 }, { 10, 15 }, { 10, 15 }, { 10, 15 } };
    set_probes(&P, 2, 6, x, flat);
    CHECK(probe_cut(&P, &b, 0, 0.02) == 0, "one slot fastest everywhere: the middle");
    /* Slot 0 loses at the upper edge (255) alone, slot 1 everywhere else: a
    ** part of that one size would hold slot 1 and the rest slot 0, but it is
    ** no cut, and the middle stays. */
    double edge[6][4] = { { 30, 20 }, { 10, 15 }, { 10, 15 }, { 10, 15 }, { 10, 15 }, { 10, 15 } };
    set_probes(&P, 2, 6, x, edge);
    CHECK(probe_cut(&P, &b, 0, 0.02) == 0, "no part of the upper edge's size alone: the middle (%lld)", probe_cut(&P, &b, 0, 0.02));
    long long x2[7] = { 255, 128, 129, 160, 161, 192, 254 };
    double edge2[7][4] = { { 30, 20 }, { 10, 15 }, { 10, 15 }, { 10, 15 }, { 10, 15 }, { 10, 15 }, { 30, 20 } };
    set_probes(&P, 2, 7, x2, edge2);
    CHECK(probe_cut(&P, &b, 0, 0.02) == 254, "two sizes at the edge that lose may be cut off (%lld)", probe_cut(&P, &b, 0, 0.02));
    /* A cut that leaves a part without a probe is no cut: probes at 255 and 128 only. */
    set_probes(&P, 2, 2, x, flip);
    CHECK(probe_cut(&P, &b, 0, 0.02) == 0, "a cut needs probes on both sides (%lld)", probe_cut(&P, &b, 0, 0.02));
}

static void test_hold_choose(void)
{
    probes P;
    long long x[3] = { 4096, 5760, 8128 };
    /* The race's winner (slot 0) is fastest at its size and loses 50% at
    ** the upper edge; slot 1 loses 5% at most; slot 2 is out of the race. */
    double us[3][4] = { { 10, 10.5, 0 }, { 15, 14, 0 }, { 30, 20, 0 } };
    set_probes(&P, 3, 3, x, us);
    bucket b = box1(4096, 8192, 4096);
    int fi[3] = { 4, 2, -1 };     /* slots' finalists in bs->f */
    hold_choice c;
    int ok = hold_choose(&P, &b, fi, 4, 0.02, &c);
    CHECK(ok && c.cw == 0 && c.cb == 1, "the race's winner is slot 0, the smallest worst loss slot 1 (%d, %d)", c.cw, c.cb);
    CHECK(c.nw == 2, "another finalist, worst loss smaller, wins: bs->f[%d]", c.nw);
    CHECK(fabs(c.worst[0] - 0.5) < 1e-12 && c.at[0] == 2, "the race winner's worst loss is 50%% at the upper edge");
    CHECK(isinf(c.worst[2]) && c.at[2] == -1, "a slot out of the race loses everything");
    ok = hold_choose(&P, &b, fi, 4, 0.6, &c);
    CHECK(ok && c.nw == 4, "within the noise margin the race's winner stays (bs->f[%d])", c.nw);
    ok = hold_choose(&P, &b, fi, 7, 0.02, &c);
    CHECK(!ok && c.nw == 7 && c.cw == -1, "a race winner that is no slot: no choice");
    int out[3] = { -1, -1, -1 };
    ok = hold_choose(&P, &b, out, 4, 0.02, &c);
    CHECK(!ok && c.nw == 4, "no slot in the race: no choice");

    /* A sweep (noise 0): worst losses within 2% tie, the smaller mean wins.
    ** Slot 1 loses 9.5% at the upper edge and 9% elsewhere, the race's
    ** winner 10% there and nothing elsewhere: it stays. */
    double tie[3][4] = { { 10, 10.9, 0 }, { 14, 15.26, 0 }, { 22, 21.9, 0 } };
    set_probes(&P, 3, 3, x, tie);
    P.p[2].vendor_us = 20;
    ok = hold_choose(&P, &b, fi, 4, 0, &c);
    CHECK(ok && c.nw == 4 && c.cb == 0, "a worst loss 0.5%% smaller and a mean 6%% larger: the race's winner stays (bs->f[%d])",
          c.nw);
    P.p[0].us[1] = 10;
    P.p[1].us[1] = 14;
    ok = hold_choose(&P, &b, fi, 4, 0, &c);
    CHECK(ok && c.nw == 2 && c.cb == 1, "level elsewhere, 0.5%% better at the edge: the other finalist wins (bs->f[%d])", c.nw);
}

static void test_sizes(void)
{
    bucket b = box1(4096, 8192, 4096);
    CHECK(probe_size(&b, 0, 8191, 4096) == 8128, "an aligned bucket is probed at multiples of 64 (%lld)", probe_size(&b, 0, 8191, 4096));
    bucket odd = box1(4096, 8192, 4097);
    CHECK(probe_size(&odd, 0, 8191, 4097) == 8129, "an odd bucket keeps its class: 8129 (%lld)", probe_size(&odd, 0, 8191, 4097));
    bucket small = box1(100, 120, 100);
    CHECK(probe_size(&small, 0, 119, 100) == 100, "a size that rounds out of the bucket falls back (%lld)",
          probe_size(&small, 0, 119, 100));
    long long up[TMPL_MAXDIMS];
    probe_upper(&b, up);
    CHECK(up[0] == 8128, "the upper edge (%lld)", up[0]);
}

/* A range bucket of one dim [lo, hi) serving [slo, shi), tuned at rep. */
static bucket range1(long long lo, long long hi, long long slo, long long shi, long long rep)
{
    bucket b = box1(lo, hi, rep);
    b.ranged = 1;
    b.slo[0] = slo;
    b.shi[0] = shi;
    return b;
}

static void shapes_are(const char *what, const bucket *b, const long long *want, int nwant)
{
    long long sh[PROBES_MAX][TMPL_MAXDIMS];
    int n = probe_range_shapes(b, sh, PROBES_MAX), same = n == nwant;
    char text[256] = "";
    for (int i = 0, at = 0; i < n && at < 200; i++) {
        same &= i < nwant && sh[i][0] == want[i];
        at += snprintf(text + at, sizeof text - (size_t)at, " %lld", sh[i][0]);
    }
    CHECK(same, "%s: raced at%s", what, text);
}

static void test_range_shapes(void)
{
    bucket b = range1(16, 32, 16, 32, 31);
    static const long long odd[] = { 31, 17, 25 };
    shapes_are("[16, 32) of class 1: the representative, the first odd size, the first past 24", &b, odd, 3);
    b = range1(16, 32, 16, 32, 24);
    static const long long eight[] = { 24, 16 };
    shapes_are("[16, 32) of class 8: 24 and 16, every size of its class", &b, eight, 2);
    b = range1(128, 256, 128, 256, 255);
    static const long long wide[] = { 255, 129, 161, 193, 225 };
    shapes_are("[128, 256) of class 1: past each boundary of tiles of 32", &b, wide, 5);
    b.salign[0] = 1 | 8;
    shapes_are("[128, 256) of class 1, the range tuning 8 apart: the same", &b, wide, 5);
    b.salign[0] = 1;
    static const long long all[] = { 255, 128, 129, 160, 161, 192, 193, 224, 225 };
    shapes_are("[128, 256) of class 1, the range tuning class 1 alone: each boundary too", &b, all, 9);
    b = range1(8, 16, 8, 16, 15);
    b.salign[0] = 1;
    static const long long eightup[] = { 15, 8, 9, 11, 13 };
    shapes_are("[8, 16) of class 1 serving every size: 8, the first it serves, and each of its class", &b, eightup, 5);
    b = range1(4, 8, 4, 8, 7);
    b.salign[0] = 1;
    static const long long four[] = { 7, 4, 5 };
    shapes_are("[4, 8) of class 1 serving every size: 4, the first it serves, and each of its class", &b, four, 3);
    b.salign[0] = 1 | 2;
    static const long long no2[] = { 7, 5 };
    shapes_are("[4, 8) of class 1, the range tuning 2 apart: 6 and 4 are another bucket's", &b, no2, 2);
    b = range1(16, 32, 17, 21, 19);
    static const long long few[] = { 19, 17 };
    shapes_are("[16, 32) serving 17..20 of class 1: 19 and 17", &b, few, 2);
    b = range1(256, 512, 256, 257, 256);
    static const long long one[] = { 256 };
    shapes_are("[256, 512) serving 256 alone: only 256", &b, one, 1);
    /* Two dims, one a range: the other stays at its representative. */
    bucket two = { .ndims = 2, .lo = { 4, 4096 }, .hi = { 8, 8192 }, .rep = { 7, 4096 }, .align = { 1, 8 } };
    two.ranged = 1;
    two.slo[0] = 4;
    two.shi[0] = 8;
    long long sh[PROBES_MAX][TMPL_MAXDIMS];
    int n = probe_range_shapes(&two, sh, PROBES_MAX);
    CHECK(n == 2 && sh[0][0] == 7 && sh[1][0] == 5 && sh[0][1] == 4096 && sh[1][1] == 4096,
          "[4, 8) x 4096 of class 1: 7 and 5, n at 4096 (%d shapes)", n);
    bucket up = range1(128, 256, 128, 200, 199);
    long long u[TMPL_MAXDIMS];
    probe_upper(&up, u);
    CHECK(u[0] == 199, "a range part's upper edge is its largest size of its class, not a multiple of 64 (%lld)", u[0]);
}

/* A budget's shares (sweep_lanes.c: share_of): equal until a bucket
** finished; then the time left less a reserve (the finished buckets'
** mean, at least half an equal share and at most one) for each bucket
** after it; never below half an equal share; all that is left for the
** last. */
static void test_shares(void)
{
    CHECK(fabs(sweep_share(400, 36, 1, 0, 0) - 400.0 / 36) < 1e-9, "no bucket finished: an equal share (%.2f)",
          sweep_share(400, 36, 1, 0, 0));
    /* Every bucket so far took its equal share: the next gets an equal share too. */
    double left = 400 - 400.0 / 36, s = sweep_share(left, 35, 1, 400.0 / 36, 1);
    CHECK(fabs(s - left / 35) < 1e-9, "hungry buckets split the budget evenly (%.3f, want %.3f)", s, left / 35);
    /* The ranges suite's: 16 buckets done in 70 s of 400, 20 left. */
    s = sweep_share(330, 20, 1, 70, 16);
    CHECK(fabs(s - (330 - 19 * 8.25)) < 1e-9 && s > 10 * 330.0 / 20,
          "fast buckets before: the one in hand gets what they left, less half an equal share for each after it (%.2f)", s);
    /* Slow buckets before (each took more than an equal share): the reserve
    ** is at most an equal share, so the one in hand still gets its equal
    ** share of what is left, and those after it theirs. */
    s = sweep_share(100, 10, 1, 200, 4);
    CHECK(fabs(s - 10) < 1e-9, "slow buckets before: an equal share of what is left (%.2f)", s);
    /* The prefill range's at 14336 x 4096: 300 s over 6 buckets, the first two took 46.6 and 67 s. */
    s = sweep_share(300 - 46.6 - 67.0, 4, 1, 46.6 + 67.0, 2);
    CHECK(fabs(s - (300 - 46.6 - 67.0) / 4) < 1e-9, "the third of six after two hungry ones: an equal share of what is left (%.2f)", s);
    /* Between the bounds the reserve is the mean. */
    s = sweep_share(100, 10, 1, 28, 4);
    CHECK(fabs(s - (100 - 9 * 7.0)) < 1e-9, "buckets before took 7 s each: 7 s reserved for each after (%.2f)", s);
    CHECK(sweep_share(50, 1, 1, 10, 3) == 50 && sweep_share(50, 2, 2, 10, 3) == 50, "the last bucket of a lane: all that is left");
    CHECK(sweep_share(-1, 5, 1, 1, 1) == 0, "no time left: no share");
    /* Two lanes: the buckets after it are spread over both, so this lane
    ** has the one in hand and 4.5 of the 9 after it: an equal share is
    ** 200 / 5.5, and half of it is reserved for each of its 4.5. */
    s = sweep_share(200, 10, 2, 2, 4);
    CHECK(fabs(s - (200 - 200 / 5.5 / 2 * 4.5)) < 1e-9, "two lanes: half an equal share reserved for each of this lane's buckets after it (%.2f)", s);
    /* Two lanes, none finished: an equal share of this lane's time over its
    ** 1 + 35 / 2 buckets (before, half of that: the reserve counted every
    ** bucket after it against this lane alone). */
    s = sweep_share(400, 36, 2, 0, 0);
    CHECK(fabs(s - 400 / 18.5) < 1e-9, "two lanes, none finished: an equal share of this lane's buckets (%.2f, want %.2f)", s, 400 / 18.5);
    s = sweep_share(400 - 400 / 18.5, 34, 2, 400 / 18.5, 1);
    CHECK(fabs(s - (400 - 400 / 18.5) / (1 + 33 / 2.0)) < 1e-9, "two lanes, hungry buckets: equal shares still (%.2f)", s);
}

/* Where a config's waves step up (probe_wave_shapes): the first size of
** the bucket's class past each step, the largest steps first, after the
** shapes there already and never twice. */
static void waves_are(const char *what, const bucket *b, const char *waves, int most, long long first,
                      const long long *want, int nwant)
{
    plan *pl = plan_new();
    pl->ndims = 1;
    snprintf(pl->dims[0], sizeof pl->dims[0], "m");
    if (waves) plan_set(&pl->waves, waves);
    long long sh[PROBES_MAX][TMPL_MAXDIMS] = { { first } };
    int n = probe_wave_shapes(b, pl, most, sh, 1, PROBES_MAX), same = n == nwant + 1 && sh[0][0] == first;
    char text[256] = "";
    for (int i = 1, at = 0; i < n && at < 200; i++) {
        same &= i - 1 < nwant && sh[i][0] == want[i - 1];
        at += snprintf(text + at, sizeof text - (size_t)at, " %lld", sh[i][0]);
    }
    CHECK(same, "%s: added%s", what, n > 1 ? text : " nothing");
    plan_free(pl);
}

static void test_wave_shapes(void)
{
    bucket b = range1(1024, 2048, 1024, 2048, 2047);
    /* A swapped 192 x 224 config at 4096^2: 22 rows of tiles, a column of
    ** them every 224 of m, 132 SMs: one round up to m = 1344, two from 1345. */
    static const long long swap[] = { 1345 };
    waves_are("22 x cdiv(m, 224) tiles on 132 SMs: one step, at 1345", &b, "cdiv(22 * cdiv(m, 224), 132)", 2, 2047, swap, 1);
    /* Rounds of 256 rows: 5 from 1025 (x 1.25), 6 from 1281 (x 1.2), 7 from 1537, 8 from 1793. */
    static const long long two[] = { 1025, 1281 };
    waves_are("rounds of 256 rows, two of them: the largest steps, 1025 and 1281", &b, "cdiv(m, 256)", 2, 2047, two, 2);
    static const long long all4[] = { 1025, 1281, 1537, 1793 };
    waves_are("rounds of 256 rows, all of them", &b, "cdiv(m, 256)", 8, 2047, all4, 4);
    static const long long dup[] = { 1281 };
    waves_are("a size raced already is not added again", &b, "cdiv(m, 256)", 2, 1025, dup, 1);
    waves_are("no waves in the plan: nothing", &b, NULL, 2, 2047, NULL, 0);
    waves_are("waves that never step: nothing", &b, "1", 2, 2047, NULL, 0);
    bucket pt = box1(1024, 2048, 2047);
    waves_are("a bucket with no range dim: nothing", &pt, "cdiv(m, 256)", 2, 2047, NULL, 0);
}

int main(void)
{
    test_shares();
    test_pick();
    test_probes();
    test_cut();
    test_hold_choose();
    test_sizes();
    test_range_shapes();
    test_wave_shapes();
    CHECK_DONE();
}
