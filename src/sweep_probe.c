/* sweep_probe.c: see sweep_probe.h. */
#define _GNU_SOURCE
#include "sweep_probe.h"
#include "align.h"
#include "sweep_task.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The probe at shape, or -1. */
int probe_find(const probes *P, const long long *shape, int ndims)
{
    for (int i = 0; i < P->n; i++)
        if (!memcmp(P->p[i].shape, shape, sizeof *shape * (size_t)ndims)) return i;
    return -1;
}

/* Race slots cs[0, P->m) (fi[i] == -1: out of the race) at shape, each
** verified there first, but at the task's own shape where the bucket's
** search verified it (every slot but a part's own finalist, PART_OWN: its
** search ran at another size); their times become a probe of P. Returns 1
** raced (or raced already), 0 skipped (no such task, too large for the
** GPU, none verified), -1 a tool failure. */
int probe_race(sw *S, const op_task *t, cand *const *cs, const int *fi, const long long *shape, probes *P)
{
    if (probe_find(P, shape, t->ndims) >= 0) return 1;
    if (P->n == PROBES_MAX) return 0;
    int rep = !memcmp(shape, t->shape, sizeof *shape * (size_t)t->ndims), m = P->m;
    op_task tp;
    if (task_at(S, t, shape, &tp)) return 0;
    if (!rep && S->dev.mem > 0 && tmpl_task_bytes(&tp) > S->dev.mem / 2) return 0;
    double ts[5];           /* the phases' times, for the trace */
    ts[0] = now_s();
    if (task_send(S, &tp)) return -1;
    ts[1] = now_s();
    int ok[PROBE_SLOTS];
    for (int i = 0; i < m; i++) {
        ok[i] = 0;
        if (fi[i] == -1 || !cand_load(S, cs[i], &tp, i)) continue;
        ok[i] = (rep && fi[i] != PART_OWN) || cand_verify(S, cs[i], i);
    }
    /* The race wants every slot loaded: a failed one is raced with a
    ** verified stand-in and its time ignored. */
    int stand = -1;
    for (int i = 0; i < m; i++) if (ok[i]) { stand = i; break; }
    if (stand < 0) return 0;
    for (int i = 0; i < m; i++) if (!ok[i]) cand_load(S, cs[stand], &tp, i);
    /* The vendor's bar, raced beside the slots where it loads and the race
    ** leaves its slot free (sweep_vendor.h). */
    int vb = m <= SWEEP_VENDOR_SLOT ? sweep_vendor_bar_load(&S->V, &tp, S->home) : 0;
    if (vb < 0) return -1;
    final pf[PROBE_SLOTS];
    stats vst;
    memset(pf, 0, sizeof pf);
    ts[2] = now_s();
    cand_race_beside(S, cs[0], m, vb ? SWEEP_VENDOR_SLOT : -1, pf, &vst);
    ts[3] = now_s();
    probe *p = &P->p[P->n++];
    memset(p, 0, sizeof *p);
    memcpy(p->shape, shape, sizeof *shape * (size_t)t->ndims);
    for (int i = 0; i < m; i++)
        if (ok[i] && pf[i].median_us > 0) {
            p->us[i] = pf[i].median_us;
            p->spread[i] = pf[i].spread;
        }
    /* The vendor's time there: its time in the race, else (not raced, or no
    ** time in it) the registry's or one measured alone (a failure is the
    ** vendor's row, said once, and leaves no bar). */
    int raced = vb ? sweep_vendor_bar_raced(&S->V, &vst, &p->vendor_us) : 0;
    if (raced < 0) return -1;
    int got = raced ? 1 : sweep_vendor_bar(&S->V, &tp, S->home, &p->vendor_us);
    if (got < 0) return -1;
    S->vendor_bars += got;
    ts[4] = now_s();
    if (sw_tracing()) {
        /* Each slot's kernel (its config's hash, as its name has it) and time there, the vendor's last. */
        char size[96], times[PROBE_SLOTS * 32 + 32] = "";
        size_t o = 0;
        task_shape_text(shape, t->ndims, size, sizeof size);
        for (int i = 0; i < m; i++)
            o += (size_t)snprintf(times + o, sizeof times - o, " %.8s=%.2f", cs[i]->config_hash, p->us[i]);
        snprintf(times + o, sizeof times - o, " vendor_us=%.2f", p->vendor_us);
        /* bar: the vendor's time raced beside the slots, taken apart (the registry's or timed alone), or none. */
        sw_trace(S, "probe %s %s %s slots=%d task=%.4f load=%.4f race=%.4f vendor=%.4f bar=%s us:%s", t->op, S->home, size,
                 m, ts[1] - ts[0], ts[2] - ts[1], ts[3] - ts[2], ts[4] - ts[3],
                 raced ? "raced" : p->vendor_us > 0 ? "apart" : "none", times);
    }
    return 1;
}

/* The fastest slot's time at p, INFINITY when none has one. */
static double probe_fastest(const probe *p, int m)
{
    double best = INFINITY;
    for (int j = 0; j < m; j++) if (p->us[j] > 0 && p->us[j] < best) best = p->us[j];
    return best;
}

/* Slot i's loss at probe p: its time over the fastest's (the vendor's
** too), minus one. */
double probe_loss(const probe *p, int i, int m)
{
    double best = probe_fastest(p, m);
    if (p->vendor_us > 0 && p->vendor_us < best) best = p->vendor_us;
    return p->us[i] > 0 && isfinite(best) ? p->us[i] / best - 1 : INFINITY;
}

int probe_vendor_ahead(const probe *p, int m)
{
    return p->vendor_us > 0 && p->vendor_us < probe_fastest(p, m);
}

void probe_where(const probes *P, int a, int ndims, const long long *rep, char *out, size_t cap)
{
    if (rep && !memcmp(P->p[a].shape, rep, sizeof *rep * (size_t)ndims)) snprintf(out, cap, "the representative");
    else task_shape_text(P->p[a].shape, ndims, out, cap);
    size_t at = strlen(out);
    if (probe_vendor_ahead(&P->p[a], P->m) && at < cap) snprintf(out + at, cap - at, ", behind the vendor");
}

int probe_in_box(const bucket *box, const long long *shape)
{
    for (int d = 0; d < box->ndims; d++)
        if (shape[d] < box->lo[d] || shape[d] >= box->hi[d]) return 0;
    return 1;
}

/* Slot i's worst loss over the probes inside box (0 with none), and the
** first probe where it is that (-1: none). */
double probe_worst(const probes *P, const bucket *box, int i, int *at)
{
    double worst = 0;
    *at = -1;
    for (int k = 0; k < P->n; k++) {
        if (!probe_in_box(box, P->p[k].shape)) continue;
        double loss = probe_loss(&P->p[k], i, P->m);
        if (*at < 0 || loss > worst) {
            *at = k;
            worst = loss;
        }
    }
    return worst;
}

int probe_behind_vendor(const probes *P, const bucket *box, int i)
{
    for (int k = 0; P && k < P->n; k++) {
        const probe *p = &P->p[k];
        if (probe_in_box(box, p->shape) && p->vendor_us > 0 && p->us[i] > p->vendor_us * (1 - VENDOR_TIE)) return 1;
    }
    return 0;
}

/* A size of b's dim d to probe near x: x rounded down to a multiple of 64
** (kernels' fast paths want aligned sizes, and so do real workloads), plus
** the bucket's alignment class where that is not 8 (align.h), so the probe
** keeps the class the bucket is tuned at: the upper edge of [4096, 8192)
** is 8129 in an odd bucket, whose winner must run odd sizes, 8128 in an
** aligned one. fallback where that leaves the bucket. */
long long probe_size(const bucket *b, int d, long long x, long long fallback)
{
    int c = bucket_align(b, d);
    long long v = x / 64 * 64 + (c < ALIGN_FULL ? c : 0);
    return v < b->lo[d] || v >= b->hi[d] || v < 1 ? fallback : v;
}

/* Whether size s is of the class a range bucket's dim d is tuned at: the
** class its key names (align_key_class against the bucket's lower edge). */
static int range_class_is(const bucket *b, int d, long long s)
{
    return align_key_class(s, b->lo[d]) == align_key_class(b->rep[d], b->lo[d]);
}

/* Whether range bucket b serves size s of its dim d: s is of b's key
** class or a higher one, and the range tunes no class apart above b's up
** to s's (such sizes go to a bucket of their own: spec_range_reps). Key
** class 0 (as aligned as the lower edge) counts as 8, as the spec's
** classes do. A range tuning class 1 alone serves every size from its
** class-1 buckets: 128 and 160 of [128, 256) too, aligned sizes where a
** vendor's kernels are at their fastest. */
static int range_serves(const bucket *b, int d, long long s)
{
    int own = align_key_class(b->rep[d], b->lo[d]), c = align_key_class(s, b->lo[d]);
    if (!own) own = ALIGN_FULL;
    if (!c) c = ALIGN_FULL;
    if (c < own || (!b->salign[d] && c != own)) return 0;   /* no classes known: its own alone */
    for (int x = own * 2; x <= c; x *= 2)
        if (b->salign[d] & x) return 0;
    return 1;
}

/* The upper edge of a bucket: each dim's last size rounded down to a
** multiple of 64 (in the bucket's class: probe_size), its representative
** where that leaves the bucket. A range dim's: the largest size of the
** range in the bucket, of its class (where a range bucket is tuned). */
void probe_upper(const bucket *b, long long *shape)
{
    for (int d = 0; d < b->ndims; d++) {
        shape[d] = probe_size(b, d, b->hi[d] - 1, b->rep[d]);
        if (!(b->ranged >> d & 1)) continue;
        for (long long s = b->shi[d] - 1; s >= b->slo[d] && s > b->shi[d] - 1 - 2 * ALIGN_FULL; s--)
            if (range_class_is(b, d, s)) {
                shape[d] = s;
                break;
            }
    }
}

/* Add size s of dim d (the other dims at rep) to the shapes, once. */
static int range_add(const bucket *b, int d, long long s, long long (*shapes)[TMPL_MAXDIMS], int n, int cap)
{
    long long x[TMPL_MAXDIMS];
    memcpy(x, b->rep, sizeof x);
    x[d] = s;
    for (int i = 0; i < n; i++)
        if (!memcmp(shapes[i], x, sizeof *x * (size_t)b->ndims)) return n;
    if (n < cap) memcpy(shapes[n++], x, sizeof x);
    return n;
}

int probe_range_shapes(const bucket *b, long long (*shapes)[TMPL_MAXDIMS], int cap)
{
    int n = range_add(b, 0, b->rep[0], shapes, 0, cap);
    for (int d = 0; d < b->ndims; d++) {
        if (!(b->ranged >> d & 1)) continue;
        long long lo = b->slo[d], hi = b->shi[d], few[PROBE_RANGE_ALL + 1], s = lo, first = 0;
        int count = 0;
        for (; s < hi && count <= PROBE_RANGE_ALL; s++)
            if (range_class_is(b, d, s)) few[count++] = s;
        for (s = lo; s < hi && !first; s++)
            if (range_serves(b, d, s)) first = s;
        if (count == 0) continue;
        if (first) n = range_add(b, d, first, shapes, n, cap);
        if (count <= PROBE_RANGE_ALL) {
            for (int i = 0; i < count; i++) n = range_add(b, d, few[i], shapes, n, cap);
            continue;
        }
        /* Too many to race each: the first of its class too, and at each
        ** boundary of tiles of t rows (t the largest power of two at most
        ** a quarter of the sizes, at least 8) the boundary itself where it
        ** serves it (a tiled kernel's last size of a pass) and the first
        ** size of its class past it, where such a kernel starts another
        ** pass; the last (the representative) is in already. */
        long long t = 8;
        while (t * 2 <= (hi - lo) / 4) t *= 2;
        n = range_add(b, d, few[0], shapes, n, cap);
        for (long long edge = (lo / t + 1) * t; edge < hi; edge += t) {
            if (range_serves(b, d, edge)) n = range_add(b, d, edge, shapes, n, cap);
            for (s = edge + 1; s < hi && s <= edge + ALIGN_FULL; s++)
                if (range_class_is(b, d, s)) {
                    n = range_add(b, d, s, shapes, n, cap);
                    break;
                }
        }
    }
    return n;
}

int probe_wave_shapes(const bucket *b, const plan *pl, int most, long long (*shapes)[TMPL_MAXDIMS], int n, int cap)
{
    int d = -1;
    for (int k = 0; k < b->ndims; k++)
        if (b->ranged >> k & 1) {
            if (d >= 0) return n;
            d = k;
        }
    if (d < 0 || !pl || !pl->waves || most < 1) return n;
    enum { STEPS = 64 };
    long long at[STEPS], x[TMPL_MAXDIMS], w, prev;
    double rise[STEPS];
    int ns = 0;
    char err[256];
    memcpy(x, b->rep, sizeof x);
    x[d] = b->slo[d];
    if (plan_waves(pl, x, &prev, err, sizeof err) != 1) return n;
    for (long long s = b->slo[d] + 1; s < b->shi[d]; s++) {
        x[d] = s;
        if (plan_waves(pl, x, &w, err, sizeof err) != 1) return n;
        if (w > prev) {
            long long c = s;
            while (c < b->shi[d] && !range_class_is(b, d, c)) c++;
            if (c < b->shi[d] && ns < STEPS) {
                at[ns] = c;
                rise[ns++] = (double)w / (double)prev;
            }
        }
        prev = w;
    }
    /* The largest steps first; at[] rises, so the first of equal steps is
    ** the smaller size. A step taken has its rise cleared. */
    for (int taken = 0; taken < most; taken++) {
        int best = -1;
        for (int i = 0; i < ns; i++)
            if (rise[i] > 0 && (best < 0 || rise[i] > rise[best] + 1e-9)) best = i;
        if (best < 0) break;
        n = range_add(b, d, at[best], shapes, n, cap);
        rise[best] = 0;
    }
    return n;
}

void probe_sizes_text(const bucket *b, long long (*shapes)[TMPL_MAXDIMS], int from, int n, char *out, size_t cap)
{
    size_t o = 0;
    if (cap) out[0] = 0;
    for (int i = from; i < n; i++)
        for (int d = 0; d < b->ndims; d++)
            if ((b->ranged >> d & 1) && o + 24 < cap) o += (size_t)snprintf(out + o, cap - o, " %lld", shapes[i][d]);
}

/* Slot i's mean loss over the probes inside box: the geometric mean of its
** times over the fastest's there, minus one (0 with none; INFINITY where it
** failed at one). */
static double probe_mean(const probes *P, const bucket *box, int i)
{
    double sum = 0;
    int n = 0;
    for (int k = 0; k < P->n; k++) {
        if (!probe_in_box(box, P->p[k].shape)) continue;
        double loss = probe_loss(&P->p[k], i, P->m);
        if (!isfinite(loss)) return INFINITY;
        sum += log1p(loss);
        n++;
    }
    return n ? expm1(sum / n) : 0;
}

int probe_winner(const probes *P, const bucket *box, int prefer, double noise, double *worst, int *at)
{
    double x[PROBE_SLOTS] = { 0 }, wb = INFINITY;
    int a[PROBE_SLOTS];
    for (int i = 0; i < P->m; i++) {
        x[i] = probe_worst(P, box, i, &a[i]);
        if (x[i] < wb) wb = x[i];
    }
    int best = -1, stays = prefer >= 0 && prefer < P->m && noise > 0 && x[prefer] <= wb + noise;
    double mb = INFINITY;
    if (stays) best = prefer;
    for (int i = 0; i < P->m && !stays; i++) {
        if (!(x[i] <= wb + PROBE_TIE)) continue;
        double m = probe_mean(P, box, i);
        if (best < 0 || m < mb || (m == mb && i == prefer)) {
            best = i;
            mb = m;
        }
    }
    if (best < 0) best = prefer >= 0 && prefer < P->m ? prefer : 0;   /* every slot failed somewhere */
    *worst = P->m ? x[best] : 0;
    *at = P->m ? a[best] : -1;
    return best;
}

/* The probes of Q inside box, as a probes set of their own (the same
** candidates): a part's parts are raced into it, not into its parent's. */
probes *probes_in(const probes *Q, const bucket *box)
{
    probes *R = xcalloc(1, sizeof *R);
    R->m = Q->m;
    for (int k = 0; k < Q->n; k++)
        if (probe_in_box(box, Q->p[k].shape)) R->p[R->n++] = Q->p[k];
    return R;
}

/* The smallest worst loss of any slot over the probes of Q inside part,
** and how many probes lie in it. */
static double part_cost(const probes *Q, const bucket *part, int *inside)
{
    double best = INFINITY;
    *inside = 0;
    for (int k = 0; k < Q->n; k++) *inside += probe_in_box(part, Q->p[k].shape);
    for (int i = 0; i < Q->m; i++) {
        int a;
        double x = probe_worst(Q, part, i, &a);
        if (x < best) best = x;
    }
    return best;
}

/* The cost of cutting box's dim d at c: the larger of its two parts'
** (part_cost); INFINITY when a part holds no probe. */
static double cut_cost(const probes *Q, const bucket *box, int d, long long c)
{
    bucket lo = *box, hi = *box;
    lo.hi[d] = lo.shi[d] = c;
    hi.lo[d] = hi.slo[d] = c;
    int nl, nh;
    double a = part_cost(Q, &lo, &nl), b = part_cost(Q, &hi, &nh);
    return !nl || !nh ? INFINITY : a > b ? a : b;
}

long long probe_cut(const probes *Q, const bucket *box, int d, double noise)
{
    long long geo;
    if (!bucket_split_point(box->lo[d], box->hi[d], &geo)) return 0;
    double at_geo = cut_cost(Q, box, d, geo), best = INFINITY;
    long long at = 0;
    for (int k = 0; k < Q->n; k++) {
        long long c = Q->p[k].shape[d];
        /* c == shi - 1 would leave the upper edge's size alone above it. */
        if (c <= box->slo[d] || c >= box->shi[d] - 1 || !probe_in_box(box, Q->p[k].shape)) continue;
        double x = cut_cost(Q, box, d, c);
        if (x < best) {
            best = x;
            at = c;
        }
    }
    return at && best < at_geo - noise ? at : 0;
}
